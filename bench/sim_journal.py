"""Simulated hands written as a table's journal lines, so that the floor reads them as any.

The bench and the tests deal hands with :class:`~dealerbox.floor.protect.simulate.TableSim`
and need them where the floor takes its record from: chained journal lines
(the format of dealerbox/service/journal: ``{"seq", "prev", "wall", "event"|"decision"}``,
compact JSON, ``prev`` the :func:`~dealerbox.link.chain.line_hash` of the line before).
:class:`JournalWriter` writes, per hand: a ``dealer`` event when the dealer changes,
``new_hand`` (players, hole cards, and the physical seats when the hand records them), a
``shoe`` event per card drawn (with its ``deck``), the board's ``round_done`` and
``board_on`` events as the hand lays them (as far as it went),
an irregularity's decision when the hand had one, and ``hand_over``.
"""

from __future__ import annotations

import datetime as _dt
import json

from dealerbox.floor.protect.hand import DealtHand
from dealerbox.link.chain import GENESIS, line_hash

__all__ = ["JournalWriter"]

#: Positions after the deal of the cards a hand to the river lays on the board.
_BOARD_AT = (1, 2, 3, 5, 7)


def _utc(seconds: float) -> str:
    return _dt.datetime.fromtimestamp(seconds, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class JournalWriter:
    """One table's journal, written from simulated hands; ``lines`` grows as hands are written."""

    def __init__(self, t0: float, *, hand_s: float = 120.0):
        self.t0 = t0
        self.hand_s = hand_s
        self.lines: list[str] = []
        self._prev = GENESIS
        self._dealer: object = ()   # no dealer event written yet
        self._t = 0.0
        self.hand_seqs: list[int] = []   # each hand's new_hand seq, in order

    def _add(self, kind: str, body: dict) -> int:
        seq = len(self.lines) + 1
        line = json.dumps({"seq": seq, "prev": self._prev, "wall": _utc(self.t0 + self._t), kind: body},
                          separators=(",", ":"), ensure_ascii=True)
        self.lines.append(line)
        self._prev = line_hash(line)
        return seq

    def _event(self, ev: str, **kw) -> int:
        self._t += 0.5
        return self._add("event", {"t": round(self._t, 3), "ev": ev, **kw})

    def hand(self, hand: DealtHand, *, irregularity: str | None = None) -> int:
        """Write *hand* (dealt to the river, as TableSim deals); returns its ``new_hand`` seq.
        *irregularity*: an error the dealer made in it (a ``correct`` decision naming it)."""
        start = self.t0 + self._t
        if hand.dealer != self._dealer:
            self._event("dealer", dealer=hand.dealer)
            self._dealer = hand.dealer
        seats = {"seats": list(hand.seats)} if hand.seats is not None else {}
        seq = self._event("new_hand", players=hand.players, hole_cards=hand.hole_cards, **seats)
        self.hand_seqs.append(seq)
        dealt = hand.dealt
        for i, card in enumerate(hand.draw):
            if i == dealt or (i > dealt and (i - dealt) in (4, 6)):
                self._event("button", name="round_done")
            self._event("shoe", card=card, deck=hand.deck)
            if i >= dealt and (i - dealt) in _BOARD_AT:
                self._event("board_on", card=card, deck=hand.deck)
        if irregularity is not None:
            self._add("decision", {"t": round(self._t, 3), "verdict": "correct", "irregularity": irregularity,
                                   "cards": [], "rule": "", "steps": [], "step": 0, "phase": "preflop"})
        self._event("button", name="hand_over")
        # The next hand starts hand_s after this one did: the floor's windows are wall time.
        self._t = max(self._t, start - self.t0 + self.hand_s)
        return seq
