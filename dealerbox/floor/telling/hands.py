"""Hands from a table's journal lines: who dealt, how long, what went wrong.

The floor's figures (hands per hour, irregularity rates, corrections done
right) are all counts over hands, and every hand is told by the journal lines
the table sent: its ``new_hand`` event opens it, ``hand_over`` (or the next
``new_hand``) closes it, and the decisions in between say what the box raised.
:class:`HandFollower` reads one table's lines in ``seq`` order and gives back
each hand as a :class:`HandSummary` when it closes. It is pure (lines in,
summaries out), so the collector can run it as lines are stored (the
incremental aggregate the figures are read from) and a test can run it over
the same lines again to recompute every figure from the record.

Counting rules, each a choice a pit boss can check against the journal:

- **Dealer.** A ``dealer`` event between hands changes who deals from the next
  hand on; one inside a hand takes effect when that hand closes (CONTRACT.md).
  A hand is that of the dealer signed in when it started (None: nobody was).
- **Irregularity.** One per episode: a decision whose irregularity (or, for a
  manual misdeal or floor call, whose verdict) differs from the previous
  decision's. The steps advancing within one episode are the same irregularity.
- **Correction.** An episode with verdict ``correct``, other than
  ``WRONG_CORRECTION`` itself; a ``WRONG_CORRECTION`` episode counts against the
  correction before it.
- **Sensing.** ``UNREAD_CARD`` and ``READER_DEGRADED`` episodes, and
  ``reader_fault`` events by reader name.
- **Time.** From the wall time of the ``new_hand`` line to that of the line
  that closed the hand (``hand_over``, else the hand's last line).
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field

__all__ = ["HandSummary", "HandFollower", "wall_seconds", "hands_of_lines"]

#: Verdicts that end the deal: the hand is over for the rules, a new one follows.
HALTING = frozenset({"misdeal", "void"})
SENSING = frozenset({"UNREAD_CARD", "READER_DEGRADED"})


def wall_seconds(wall) -> float | None:
    """POSIX seconds of a journal line's ``wall`` (``2026-11-24T15:39:11.477269Z``)."""
    if not isinstance(wall, str):
        return None
    try:
        return _dt.datetime.fromisoformat(wall.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@dataclass(slots=True)
class HandSummary:
    """One hand at one table, as counted for the floor's figures."""

    table: str
    start_seq: int
    started: float | None
    players: int | None
    hole_cards: int
    dealer: str | None
    end_seq: int = 0
    ended: float | None = None
    ended_by: str = "open"
    irregularities: list[tuple[str, str, int]] = field(default_factory=list)
    reader_faults: dict[str, int] = field(default_factory=dict)

    @property
    def seconds(self) -> float | None:
        if self.started is None or self.ended is None:
            return None
        return max(0.0, self.ended - self.started)

    @property
    def corrections(self) -> int:
        return sum(1 for irr, verdict, _ in self.irregularities
                   if verdict == "correct" and irr != "WRONG_CORRECTION")

    @property
    def wrong_corrections(self) -> int:
        return sum(1 for irr, _, _ in self.irregularities if irr == "WRONG_CORRECTION")

    def count_verdict(self, verdict: str) -> int:
        return sum(1 for _, v, _ in self.irregularities if v == verdict)

    def to_dict(self) -> dict:
        return {"table": self.table, "start_seq": self.start_seq, "end_seq": self.end_seq,
                "started": self.started, "ended": self.ended, "ended_by": self.ended_by,
                "dealer": self.dealer, "players": self.players, "hole_cards": self.hole_cards,
                "seconds": self.seconds,
                "irregularities": [{"id": i, "verdict": v, "seq": s}
                                   for i, v, s in self.irregularities],
                "reader_faults": dict(self.reader_faults)}


class HandFollower:
    """Follows one table's journal lines and yields each hand when it closes.

    Feed lines in ``seq`` order with :meth:`feed` (a stored line's text, or its
    parsed dict); it returns the hands that line closed (none, or one).
    :attr:`open_hand` is the hand in progress; :attr:`dealer` who deals now.
    """

    def __init__(self, table: str, *, dealer: str | None = None):
        self.table = table
        self.dealer = dealer
        self.open_hand: HandSummary | None = None
        self._pending_dealer: tuple[bool, str | None] = (False, None)
        self._episode: tuple[str | None, str] | None = None
        self._last_seq = 0

    def feed(self, line) -> list[HandSummary]:
        record = json.loads(line) if isinstance(line, (str, bytes)) else line
        if not isinstance(record, dict):
            return []
        seq = record.get("seq")
        if isinstance(seq, bool) or not isinstance(seq, int) or seq <= self._last_seq:
            return []
        self._last_seq = seq
        wall = wall_seconds(record.get("wall"))
        event, decision = record.get("event"), record.get("decision")
        hand = self.open_hand
        if hand is not None and not (isinstance(event, dict) and event.get("ev") == "new_hand"):
            hand.end_seq = seq
            if wall is not None:
                hand.ended = wall
        if isinstance(event, dict):
            return self._event(event, seq, wall)
        if isinstance(decision, dict) and hand is not None:
            self._decision(decision, seq)
        return []

    def _event(self, event: dict, seq: int, wall: float | None) -> list[HandSummary]:
        kind = event.get("ev")
        closed: list[HandSummary] = []
        hand = self.open_hand
        if kind == "new_hand":
            if hand is not None:
                closed.append(self._finish("new_hand"))
            self._apply_pending_dealer()
            players = event.get("players")
            self.open_hand = HandSummary(
                self.table, seq, wall, players if isinstance(players, int) else None,
                event.get("hole_cards") if event.get("hole_cards") in (2, 4) else 2,
                self.dealer, end_seq=seq, ended=wall)
            self._episode = None
        elif kind == "dealer":
            dealer = event.get("dealer")
            dealer = dealer if isinstance(dealer, str) or dealer is None else None
            if hand is None:
                self.dealer = dealer
            else:
                self._pending_dealer = (True, dealer)
        elif kind == "button" and event.get("name") == "hand_over" and hand is not None:
            closed.append(self._finish("hand_over"))
        elif kind == "reader_fault" and hand is not None:
            reader = str(event.get("reader"))
            hand.reader_faults[reader] = hand.reader_faults.get(reader, 0) + 1
        return closed

    def _decision(self, decision: dict, seq: int) -> None:
        verdict = decision.get("verdict")
        irregularity = decision.get("irregularity")
        if not isinstance(verdict, str):
            return
        if irregularity is None and verdict == "ok":
            self._episode = None
            return
        name = irregularity if isinstance(irregularity, str) else None
        episode = (name, verdict if name is None else "")
        if episode == self._episode:
            return
        self._episode = episode
        self.open_hand.irregularities.append((name or f"({verdict})", verdict, seq))

    def _finish(self, ended_by: str) -> HandSummary:
        hand = self.open_hand
        hand.ended_by = ended_by
        self.open_hand = None
        self._episode = None
        self._apply_pending_dealer()
        return hand

    def _apply_pending_dealer(self) -> None:
        pending, dealer = self._pending_dealer
        if pending:
            self.dealer = dealer
            self._pending_dealer = (False, None)


def hands_of_lines(table: str, lines, *, include_open: bool = False) -> list[HandSummary]:
    """Every hand in one table's *lines* (in ``seq`` order), closed ones first to last."""
    follower = HandFollower(table)
    hands: list[HandSummary] = []
    for line in lines:
        hands.extend(follower.feed(line))
    if include_open and follower.open_hand is not None:
        hands.append(follower.open_hand)
    return hands
