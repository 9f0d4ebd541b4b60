"""Which physical seat each deal position was: recorded by the table, or recovered from the deal.

Seat luck asks whether one *physical* seat (where a cheat's partner sits) is fed
strong hands. The deal does not go to physical seats in a fixed order: it starts
left of the button, and the button moves one occupied seat a hand, so the player
dealt first this hand is dealt last the next, and every other player moves up one
place. A fed seat scored by deal position spreads over all of them and vanishes.

- **Recorded**: ``new_hand`` carries ``seats``, the physical seat of each deal
  position (CONTRACT.md). Such a hand is scored by its physical seats.
- **Recovered**: without ``seats``, while the player count stays the same from one
  hand to the next, the player at deal position ``j`` (0 first) was at position
  ``j + 1`` the hand before. Following that rotation, the player at position ``j`` in
  the ``t``-th hand of a run (0 first) sits in the run's slot ``(j + t) mod players``:
  one physical seat for as long as the run lasts, known by the deal position it had
  in the run's first hand. A run ends, and a new one starts, whenever the count
  changes (a player joined or left: where, the record does not say), after a hand
  with recorded seats, after a pause of ``TABLE_BREAK_S`` or more between two hands' starts
  (a table closed overnight and opened again with as many players, who need not sit where
  the last ones sat), and when the caller says the rotation broke (:meth:`SeatTracker.restart`).

What recovery cannot see (docs/floor/surveillance.md, "Which seat"): a player leaving and another
joining between the same two hands (the count stays, the slots no longer match the
seats), a dead button or a button moved by hand, a hand that was dealt but never
recorded. Each mixes a fed seat with its neighbours, which lowers the power to find
it; it never raises a false alarm, because a fair deal gives every deal position a
strong hand with the same chance whatever seat it is called.

Pure: hands in, keys out; the state per table is plain data (:attr:`SeatTracker.runs`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dealerbox.floor.protect.hand import DealtHand

__all__ = ["SeatKey", "SeatTracker", "TABLE_BREAK_S"]

#: A pause between two hands' starts after which the rotation is not followed on: far longer
#: than anything within a game (a hand takes 2-5 minutes, a dealer's push or a deck change a
#: few more, a short break 15), as short as a table that closed and opened again can be. A
#: new run after a pause the players sat through costs the seats' charts their evidence so
#: far (found later); a run carried over a closing mixes every seat with another, for good.
TABLE_BREAK_S = 30 * 60.0


@dataclass(frozen=True, slots=True, order=True)
class SeatKey:
    """One seat as seat luck follows it.

    ``run`` None: a physical seat the table recorded, ``seat`` its number. Otherwise a
    recovered seat: ``run`` is the hand (its id) where the run of a steady player count
    began and ``seat`` the 1-based deal position its player had in that hand.
    """

    run: int | None
    seat: int

    @property
    def recorded(self) -> bool:
        return self.run is None

    def __str__(self) -> str:
        if self.run is None:
            return f"seat {self.seat}"
        return f"the seat dealt {_ordinal(self.seat)} at hand {self.run}, followed round as the button moved"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass
class SeatTracker:
    """Follows each table's hands, in order, and names the seat of each deal position.

    ``runs``: table -> ``[run's first hand id, players, hands into the run, the last hand's
    start]`` (None: the last hand had recorded seats; a run kept before the start was, three
    long); JSON-able, so that a restarted floor goes on. ``break_s``: the pause that ends a run.
    """

    runs: dict = field(default_factory=dict)
    break_s: float = TABLE_BREAK_S

    def keys(self, hand: DealtHand, started: float | None = None) -> tuple[SeatKey, ...]:
        """The seat of each deal position of *hand* (the next hand of its table), which started
        at *started* (epoch seconds; None: unknown, no pause is seen)."""
        if hand.seats is not None and len(hand.seats) == hand.players:
            self.runs[hand.table] = None
            return tuple(SeatKey(None, s) for s in hand.seats)
        run = self.runs.get(hand.table)
        last = run[3] if run is not None and len(run) > 3 else None
        if started is not None and last is not None and started - last >= self.break_s:
            self.restart(hand.table)
            run = None
        if run is None or run[1] != hand.players:
            run = [hand.hand_id if hand.hand_id is not None else 0, hand.players, 0, started]
        else:
            run = [run[0], run[1], run[2] + 1, started if started is not None else last]
        self.runs[hand.table] = run
        first, players, t, _ = run
        return tuple(SeatKey(first, (j + t) % players + 1) for j in range(players))

    def restart(self, table: str) -> None:
        """The rotation broke at *table* (a dead button, the table closed a while: :meth:`keys`
        calls it after a pause of ``break_s``): the next hand starts a new run, whose seats are
        not the old run's."""
        self.runs.pop(table, None)
