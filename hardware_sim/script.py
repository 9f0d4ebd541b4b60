"""A scripted dealer at the event level: writes CONTRACT.md events for a hand.

Scenario files, the demo session, the property tests and the benchmark are made
with it, so each reads like what the dealer did::

    s = HandScript(seed=1)
    s.new_hand(6).deal().round_done().flop().round_done().turn().round_done().river()
    s.hand_over()

Cards come from a seeded shuffle of deck A; :meth:`draw` can force a card.
"""

from __future__ import annotations

import json
import random

from dealerbox.rules.cards import DECK_52


class HandScript:
    """Builds a list of event dicts. Every method returns ``self`` for chaining."""

    def __init__(self, seed: int = 0, step_s: float = 0.5, t0: float = 0.0):
        self.rng = random.Random(seed)
        self.step_s = step_s
        self.t = t0
        self.events: list[dict] = []
        self.stub: list[str] = []
        self.players = 0
        self.hole = 2
        self.last: list[str] = []

    # -- low level ------------------------------------------------------------
    def emit(self, ev: str, dt: float | None = None, **fields) -> "HandScript":
        self.t = round(self.t + (self.step_s if dt is None else dt), 3)
        self.events.append({"t": self.t, "ev": ev, **fields})
        return self

    def expect(self, **fields) -> "HandScript":
        """A scenario check on the latest decision (scenario files only)."""
        self.events.append({"expect": fields})
        return self

    def draw(self, card: str | None = None, **extra) -> str:
        """One card leaves the shoe; returns it."""
        if card is None:
            card = self.stub.pop(0)
        elif card in self.stub:
            self.stub.remove(card)
        self.emit("shoe", card=card, **extra)
        self.last = [card]
        return card

    def take(self, card: str | None = None, **extra) -> "HandScript":
        """Like :meth:`draw`, for chaining."""
        self.draw(card, **extra)
        return self

    def put_back(self, card: str, top: bool = True) -> "HandScript":
        """The dealer puts *card* back into the stub (no event: the box cannot see it)."""
        if top:
            self.stub.insert(0, card)
        else:
            self.stub.append(card)
        return self

    def reshuffle_stub(self) -> "HandScript":
        self.rng.shuffle(self.stub)
        return self.button("reshuffled")

    def on(self, card: str, **extra) -> "HandScript":
        return self.emit("board_on", card=card, **extra)

    def off(self, card: str) -> "HandScript":
        return self.emit("board_off", card=card)

    def button(self, name: str) -> "HandScript":
        return self.emit("button", name=name)

    def tick(self, dt: float = 0.25) -> "HandScript":
        return self.emit("tick", dt=dt)

    # -- a hand -----------------------------------------------------------------
    def new_hand(self, players: int = 6, hole: int = 2, **extra) -> "HandScript":
        self.players, self.hole = players, hole
        self.stub = list(DECK_52)
        self.rng.shuffle(self.stub)
        fields = {"players": players}
        if hole != 2:
            fields["hole_cards"] = hole
        fields.update(extra)
        return self.emit("new_hand", **fields)

    def deal(self, count: int | None = None) -> "HandScript":
        """Deal hole cards (all of them unless *count* says how many)."""
        for _ in range(self.players * self.hole if count is None else count):
            self.draw()
        return self

    def round_done(self) -> "HandScript":
        return self.button("round_done")

    def street(self, n: int, *, burn: bool = True, spread: bool = False, cards=None) -> list[str]:
        """Burn (unless told not to) and put *n* cards on the board; return the board cards."""
        if burn:
            self.draw()
        if cards is None:
            cards = [self.stub[i] for i in range(n)]
        if spread:
            for c in cards:
                self.draw(c)
            order = list(cards)
            self.rng.shuffle(order)
            for c in order:
                self.on(c)
        else:
            for c in cards:
                self.draw(c)
                self.on(c)
        self.last = list(cards)
        return list(cards)

    def flop(self, **kw) -> "HandScript":
        self.street(3, **kw)
        return self

    def turn(self, **kw) -> "HandScript":
        self.street(1, **kw)
        return self

    def river(self, **kw) -> "HandScript":
        self.street(1, **kw)
        return self

    def hand_over(self) -> "HandScript":
        return self.button("hand_over")

    def full_hand(self, players: int = 6, hole: int = 2, spread: bool = False, **extra) -> "HandScript":
        """A clean hand to the river."""
        self.new_hand(players, hole, **extra).deal().round_done()
        self.flop(spread=spread).round_done().turn().round_done().river().round_done()
        return self.hand_over()

    # -- output -----------------------------------------------------------------
    def jsonl(self, header: dict | None = None) -> str:
        lines = [json.dumps(header)] if header else []
        lines += [json.dumps(e) for e in self.events]
        return "\n".join(lines) + "\n"
