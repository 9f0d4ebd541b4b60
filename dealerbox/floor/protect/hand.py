"""One dealt hand as the protection checks read it: its deck and its cards in draw order.

The journal tells a hand as ``shoe`` events (the cards in the order they left the
stub), ``board_on`` events (the board as laid) and the ``new_hand`` event (players,
hole cards, seats in deal order). Hole cards go round the table one at a time
(RULES.md), so the card drawn at position ``j`` of the deal goes to the seat at
deal position ``j % players``; after the deal every drawn card that never reached
the board is a burn. That is all a shuffle check needs to know of what the hand
left together; reading stored journal lines into this record is the floor's job.
"""

from __future__ import annotations

from dataclasses import dataclass

from dealerbox.domain.cards import DECK_52

__all__ = ["DealtHand", "together_pairs", "pair"]


def pair(a: str, b: str) -> tuple[str, str]:
    """The unordered pair {a, b}, as one key (a pair adjacent in either order is the same pair)."""
    return (a, b) if a <= b else (b, a)


@dataclass(frozen=True, slots=True)
class DealtHand:
    """A hand's cards as they came out of one deck.

    ``draw``: every card in the order it left the shoe; ``board``: the board as laid
    (None: the standard burn-and-turn order of the draw, ``burn, flop x3, burn,
    turn, burn, river``); ``seats``: the physical seats in deal order (None: 1..players).
    ``hand_id`` names the hand for a finding (the floor uses its ``new_hand`` seq).
    """

    deck: str
    draw: tuple[str, ...]
    players: int
    hole_cards: int = 2
    board: tuple[str, ...] | None = None
    seats: tuple[int, ...] | None = None
    table: str = ""
    dealer: str | None = None
    hand_id: int | None = None

    @property
    def dealt(self) -> int:
        """How many cards the deal itself takes: players x hole cards."""
        return self.players * self.hole_cards

    def holes(self) -> list[tuple[str, ...]]:
        """Each deal position's hole cards, in the order dealt (short when the deal was)."""
        deal = self.draw[:self.dealt]
        return [tuple(deal[i::self.players]) for i in range(self.players)]

    def seat_numbers(self) -> tuple[int, ...]:
        """The physical seat of each deal position."""
        return self.seats if self.seats is not None else tuple(range(1, self.players + 1))

    def laid_board(self) -> tuple[str, ...]:
        """The board in the order it was laid."""
        if self.board is not None:
            return self.board
        rest = self.draw[self.dealt:]
        return tuple(rest[i] for i in (1, 2, 3, 5, 7) if i < len(rest))

    def burns(self) -> tuple[str, ...]:
        """The cards drawn after the deal that never reached the board, in draw order."""
        board = set(self.laid_board())
        return tuple(c for c in self.draw[self.dealt:] if c not in board)


def together_pairs(hand: DealtHand) -> frozenset[tuple[str, str]]:
    """The pairs of cards *hand* left side by side for the next gathering.

    A seat's hole cards lie in one small pile whose order the player may change,
    so every two of them are a pair; the board lies in a row in the order laid and
    the burns in a pile in draw order, so only neighbours there are pairs.
    A card the record does not name (unread, a tag of no deck, a joker) pairs with
    nothing: two unread cards are not known to be the same two next time.
    """
    out: set[tuple[str, str]] = set()
    for cards in hand.holes():
        for i, a in enumerate(cards):
            for b in cards[i + 1:]:
                out.add(pair(a, b))
    for row in (hand.laid_board(), hand.burns()):
        for a, b in zip(row, row[1:]):
            out.add(pair(a, b))
    return frozenset(p for p in out if p[0] in _NAMED and p[1] in _NAMED)


_NAMED = frozenset(DECK_52)
