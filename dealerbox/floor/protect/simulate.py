"""A simulated table: hands dealt from decks shuffled by a declared model, or by a cheat.

Pure and small, so it lives beside the checks: the shuffle check computes its
reference distribution by dealing hands here under the declared model, and the
bench deals fair and cheating hands here to measure false alarms and detection.

Every hand is dealt to the river (players x hole cards, then burn, flop, burn,
turn, burn, river): a real hand that ended early drew fewer cards and could only
show fewer kept pairs, so a reference from full hands is conservative for it.
Between two hands of one deck the dealer gathers the last hand's cards
(:class:`~dealerbox.floor.protect.shuffles.Gathering`) and shuffles; decks named in
``decks`` are dealt in turn, each gathered and shuffled with its own last hand.

The cheats the issue names, each a shuffle-shaped callable ``(deck, rng) -> deck``:
:func:`no_shuffle`, :class:`FalseRiffle` (a top slug of k cards kept in order),
``Shuffle(("cut",))`` (a machine that only cuts), and :class:`Stack` (a chosen
starting hand placed at one seat once in every so many hands).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from dealerbox.domain.cards import DECK_52
from dealerbox.floor.protect.hand import DealtHand
from dealerbox.floor.protect.shuffles import Gathering

__all__ = ["BOARD_DRAW", "no_shuffle", "FalseRiffle", "Stack", "TableSim"]

#: Cards drawn after the deal of a hand played to the river: three burns and five on the board.
BOARD_DRAW = 8


def no_shuffle(deck: list, rng: random.Random) -> list:
    """The cheat of no shuffle at all: the gathered deck is dealt as it lies."""
    return list(deck)


@dataclass(frozen=True, slots=True)
class FalseRiffle:
    """A false riffle: the top ``k`` cards stay on top in their order, the rest is shuffled by ``rest``."""

    k: int
    rest: object

    def __call__(self, deck: list, rng: random.Random) -> list:
        return list(deck[:self.k]) + self.rest(list(deck[self.k:]), rng)


@dataclass(frozen=True, slots=True)
class Stack:
    """A stacked deck: deal position ``seat`` gets ``cards`` once in every ``every`` hands."""

    seat: int
    cards: tuple[str, ...]
    every: int


class TableSim:
    """Deals hands at one table, decks in turn, through *shuffle* and *gathering*.

    *shuffle* is any ``(deck, rng) -> deck`` (a declared
    :class:`~dealerbox.floor.protect.shuffles.Shuffle` or a cheat); *rng* is the only
    source of randomness.
    """

    def __init__(self, shuffle, rng: random.Random, *, players: int = 9, hole_cards: int = 2,
                 gathering: Gathering = Gathering(), decks: tuple[str, ...] = ("A",),
                 stack: Stack | None = None, table: str = "T1", dealer: str | None = "D1"):
        self.shuffle = shuffle
        self.rng = rng
        self.players = players
        self.hole_cards = hole_cards
        self.gathering = gathering
        self.decks = decks
        self.stack = stack
        self.table = table
        self.dealer = dealer
        self.hands = 0
        # Each deck starts in a random order: its first hand has no history to compare with.
        self._order = {d: rng.sample(DECK_52, len(DECK_52)) for d in decks}
        self._last: dict[str, tuple[DealtHand, list]] = {}
        self._stack_phase = rng.randrange(stack.every) if stack else 0
        self.stacked: list[int] = []   # hand numbers the cheat stacked

    def deal(self) -> DealtHand:
        """The next hand: gather the deck's last hand, shuffle, stack if due, deal to the river."""
        deck = self.decks[self.hands % len(self.decks)]
        order = self._order[deck]
        if deck in self._last:
            last, stub = self._last[deck]
            order = self.gathering(last.holes(), last.laid_board(), last.burns(), stub, self.rng)
        order = self.shuffle(order, self.rng)
        if self.stack and self.hands % self.stack.every == self._stack_phase:
            order = self._stacked(order)
            self.stacked.append(self.hands)
        m = self.players * self.hole_cards + BOARD_DRAW
        hand = DealtHand(deck, tuple(order[:m]), self.players, self.hole_cards, table=self.table,
                         dealer=self.dealer, hand_id=self.hands)
        self._order[deck] = order
        self._last[deck] = (hand, order[m:])
        self.hands += 1
        return hand

    def _stacked(self, order: list) -> list:
        order = list(order)
        for r, card in enumerate(self.stack.cards):
            target = self.stack.seat + r * self.players
            here = order.index(card)
            order[target], order[here] = order[here], order[target]
        return order
