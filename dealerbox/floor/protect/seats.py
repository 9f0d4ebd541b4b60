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
  with recorded seats, and when the caller says the rotation broke (:meth:`SeatTracker.restart`).

What recovery cannot see (FLOOR.md, "Which seat"): a player leaving and another
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

__all__ = ["SeatKey", "SeatTracker"]


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

    ``runs``: table -> ``[run's first hand id, players, hands into the run]`` (None:
    the last hand had recorded seats); JSON-able, so that a restarted floor goes on.
    """

    runs: dict = field(default_factory=dict)

    def keys(self, hand: DealtHand) -> tuple[SeatKey, ...]:
        """The seat of each deal position of *hand* (the next hand of its table)."""
        if hand.seats is not None and len(hand.seats) == hand.players:
            self.runs[hand.table] = None
            return tuple(SeatKey(None, s) for s in hand.seats)
        run = self.runs.get(hand.table)
        if run is None or run[1] != hand.players:
            run = [hand.hand_id if hand.hand_id is not None else 0, hand.players, 0]
        else:
            run = [run[0], run[1], run[2] + 1]
        self.runs[hand.table] = run
        first, players, t = run
        return tuple(SeatKey(first, (j + t) % players + 1) for j in range(players))

    def restart(self, table: str) -> None:
        """The rotation broke at *table* (a dead button, the table closed a while): the next hand
        starts a new run, whose seats are not the old run's."""
        self.runs.pop(table, None)
