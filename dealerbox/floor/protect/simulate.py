"""A simulated table: hands dealt from decks shuffled by a declared model, or by a cheat.

Pure and small, so it lives beside the checks: the shuffle check computes its
reference distribution by dealing hands here under the declared model, and the
bench deals fair and cheating hands here to measure false alarms and detection.

By default every hand is dealt to the river (players x hole cards, then burn, flop,
burn, turn, burn, river): a real hand that ended early drew fewer cards and could
only show fewer kept pairs, so a reference from full hands is conservative for it.
With ``endings`` each hand ends as a real one does, at random: before the flop, on
the flop, the turn or the river (:data:`REAL_ENDINGS`).

With ``button`` the table has physical seats (``table_seats``, the occupied ones in
``occupied``) and a button that moves one occupied seat a hand; the deal starts left
of the button, so the deal positions rotate by one each hand. The hand records its
physical seats (``seats`` in deal order) only when ``record_seats``, as a box with
seat antennas or a dealer's seat entry would; :attr:`TableSim.seats_dealt` keeps the
truth either way. :meth:`TableSim.seat` moves players in and out between hands.
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

__all__ = ["BOARD_DRAW", "REAL_ENDINGS", "no_shuffle", "FalseRiffle", "Stack", "TableSim"]

#: Cards drawn after the deal of a hand played to the river: three burns and five on the board.
BOARD_DRAW = 8
#: How often a hold'em hand ends where, as cards drawn after the deal: over before the
#: flop (0), on the flop (4), the turn (6), or at the river (8). A full ring game's
#: shape (about a third of the pots won before the flop, a fifth shown down at the
#: river); an assumption for the simulator and the references, which a house's own
#: hands (``floor protect fit --house``) replace.
REAL_ENDINGS = {0: 0.35, 4: 0.30, 6: 0.15, 8: 0.20}


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
    """A stacked deck: deal position ``seat`` gets ``cards`` once in every ``every`` hands.

    With ``physical`` the seat is a physical seat of a table with a button (the cheat
    feeds his accomplice wherever the deal puts him; no hand when the seat is empty);
    ``others``: more starting hands the cheat picks from at random (AA or KK)."""

    seat: int
    cards: tuple[str, ...]
    every: int
    physical: bool = False
    others: tuple = ()


class TableSim:
    """Deals hands at one table, decks in turn, through *shuffle* and *gathering*.

    *shuffle* is any ``(deck, rng) -> deck`` (a declared
    :class:`~dealerbox.floor.protect.shuffles.Shuffle` or a cheat); *rng* is the only
    source of randomness.
    """

    def __init__(self, shuffle, rng: random.Random, *, players: int = 9, hole_cards: int = 2,
                 gathering: Gathering = Gathering(), decks: tuple[str, ...] = ("A",),
                 stack: Stack | None = None, table: str = "T1", dealer: str | None = "D1",
                 endings: dict | None = None, button: bool = False, table_seats: int = 10,
                 occupied: tuple | None = None, record_seats: bool = False):
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
        self.endings = endings
        self.button = button
        self.table_seats = table_seats
        self.record_seats = record_seats
        self.occupied: tuple = tuple(occupied) if occupied is not None else tuple(range(1, players + 1))
        self.button_seat = self.occupied[-1]
        self.seats_dealt: tuple = tuple(range(1, players + 1))   # the last hand's physical seats, deal order
        if button:
            self.players = len(self.occupied)

    def seat(self, occupied) -> None:
        """Players joined or left: *occupied* physical seats from the next hand on (the button
        goes on from where it was, to the next occupied seat)."""
        self.occupied = tuple(sorted(occupied))
        self.players = len(self.occupied)

    def _deal_order(self) -> tuple:
        """Move the button one occupied seat; the physical seats in deal order (left of it first)."""
        seats = self.occupied
        after = [s for s in seats if s > self.button_seat]
        self.button_seat = after[0] if after else seats[0]
        i = seats.index(self.button_seat)
        return seats[i + 1:] + seats[:i + 1]

    def deal(self) -> DealtHand:
        """The next hand: gather the deck's last hand, shuffle, stack if due, deal to the river."""
        deck = self.decks[self.hands % len(self.decks)]
        order = self._order[deck]
        if deck in self._last:
            last, stub = self._last[deck]
            order = self.gathering(last.holes(), last.laid_board(), last.burns(), stub, self.rng)
        order = self.shuffle(order, self.rng)
        self.seats_dealt = self._deal_order() if self.button else tuple(range(1, self.players + 1))
        if self.stack and self.hands % self.stack.every == self._stack_phase:
            position = self.stack.seat
            if self.stack.physical:
                position = self.seats_dealt.index(self.stack.seat) if self.stack.seat in self.seats_dealt else None
            if position is not None:
                order = self._stacked(order, position)
                self.stacked.append(self.hands)
        after = BOARD_DRAW
        if self.endings:
            after = self.rng.choices(list(self.endings), weights=list(self.endings.values()))[0]
        m = self.players * self.hole_cards + after
        hand = DealtHand(deck, tuple(order[:m]), self.players, self.hole_cards, table=self.table,
                         dealer=self.dealer, hand_id=self.hands,
                         seats=self.seats_dealt if self.button and self.record_seats else None)
        self._order[deck] = order
        self._last[deck] = (hand, order[m:])
        self.hands += 1
        return hand

    def _stacked(self, order: list, position: int) -> list:
        order = list(order)
        cards = self.stack.cards
        if self.stack.others:
            cards = self.rng.choice((cards,) + tuple(self.stack.others))
        for r, card in enumerate(cards):
            target = position + r * self.players
            here = order.index(card)
            order[target], order[here] = order[here], order[target]
        return order
