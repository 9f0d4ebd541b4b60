"""What a scripted dealer does, told in words: one line per move.

``dealerbox run --demo`` prints the line of the move that caused a decision
right before the box it caused ("dealer: turns seat 4's first card (J♦) face up
and presses EXPOSED"), so an EXPOSED CARD never appears with no cause. The
narrator follows the hand as a person watching would (who gets which card of
the deal, how many cards lie on the board, which betting round is done); it
judges nothing: the box does.
"""

from __future__ import annotations

from dealerbox.domain.cards import GLYPH_SYMBOL, lcd_card

__all__ = ["DealerNarrator", "card_text"]

ORDINAL = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
#: The street whose cards the board holds after so many ROUND DONE presses, and how many cards it then holds.
STREETS = {1: ("flop", 3), 2: ("turn", 4), 3: ("river", 5)}


def card_text(card: str | None) -> str:
    """A card as the glass and the floor write it: ``T♦``; an unread card as ``a card``."""
    if not card:
        return "a card"
    return "".join(GLYPH_SYMBOL.get(ch, ch) for ch in lcd_card(card))


def _ordinal(n: int) -> str:
    return ORDINAL[n - 1] if 0 < n <= len(ORDINAL) else f"{n}th"


class DealerNarrator:
    """Turns each CONTRACT.md event a scripted dealer acts out into a line of words."""

    def __init__(self):
        self.players = 0
        self.hole = 2
        self.dealt: list[str] = []        # the hole cards, in the order they were dealt
        self.rounds = 0                   # ROUND DONE presses this hand
        self.board: list[str] = []
        self.drawn_since_round = 0
        self.owed: list[tuple[str, str]] = []   # (seat, card) of each exposed hole card, owed a new one

    def tell(self, event: dict) -> str:
        """What the dealer does with *event*, in words (and the hand followed on)."""
        ev = event.get("ev")
        if ev == "new_hand":
            self.players, self.hole = event["players"], event.get("hole_cards", 2)
            self.dealt, self.rounds, self.board, self.drawn_since_round, self.owed = [], 0, [], 0, []
            return f"presses NEW HAND for {self.players} players"
        if ev == "shoe":
            return self._draw(event)
        if ev == "board_on":
            return self._board_on(event.get("card"))
        if ev == "board_off":
            card = event.get("card")
            if card in self.board:
                self.board.remove(card)
            return f"takes {card_text(card)} back off the board"
        if ev == "button":
            return self._button(event["name"])
        if ev == "dealer":
            return (f"holds badge {event['dealer']} to the shoe: dealer {event['dealer']} deals now"
                    if event.get("dealer") else "holds their badge to the shoe again: signs out")
        return f"makes a {ev} event"

    def _draw(self, event: dict) -> str:
        card = event.get("card")
        self.drawn_since_round += 1
        deck = event.get("deck")
        if deck and deck != "A":
            return f"draws {card_text(card)} from the shoe: a card of deck {deck}, another back than the table's"
        if self.rounds == 0 and len(self.dealt) < self.players * self.hole:
            self.dealt.append(card)
            return f"deals seat {self._seat(len(self.dealt))}, {card_text(card)}"
        if self.rounds == 0 and self.owed:
            seat, exposed = self.owed.pop(0)
            return f"deals {card_text(card)} to seat {seat} in place of the exposed {card_text(exposed)}"
        if self.rounds == 0:
            return f"draws {card_text(card)} from the shoe with every hole card dealt and the round not done"
        street, _ = STREETS.get(self.rounds, ("board", 5))
        return f"draws {card_text(card)} from the shoe for the {street}"

    def _seat(self, n: int) -> str:
        """Seat and round of the *n*-th card dealt: "3's second card"."""
        seat = (n - 1) % max(self.players, 1) + 1
        return f"{seat}'s {_ordinal((n - 1) // max(self.players, 1) + 1)} card"

    def _board_on(self, card: str | None) -> str:
        self.board.append(card)
        n = len(self.board)
        if self.rounds == 0:
            return f"puts {card_text(card)} on the board before the betting round is done"
        street, holds = STREETS.get(self.rounds, ("board", 5))
        text = f"puts {card_text(card)} on the board ({n} card{'s' if n > 1 else ''})"
        if n > holds:
            return text + f": one more than the {street} has"
        size = 3 if street == "flop" else 1
        if n == holds - size + 1 and self.drawn_since_round in (1, size):
            return text + f": the {street} without a burn"
        return text

    def _button(self, name: str) -> str:
        if name == "exposed" and self.dealt:
            self.owed.append((str((len(self.dealt) - 1) % max(self.players, 1) + 1), self.dealt[-1]))
            return (f"turns seat {self._seat(len(self.dealt))} ({card_text(self.dealt[-1])}) face up "
                    "and presses EXPOSED")
        if name == "round_done":
            self.rounds += 1
            self.drawn_since_round = 0
        return f"presses {name.replace('_', ' ').upper()}"
