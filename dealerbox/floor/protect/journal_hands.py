"""Stored journal lines read into the hands the protection checks score.

The floor already follows each table's lines into hands for its figures
(:class:`~dealerbox.floor.telling.hands.HandFollower`: who dealt, what went wrong);
:class:`CardFollower` rides along the same lines and adds what those hands
leave out, the cards:

- the ``shoe`` events, in order, are the draw; the ``board_on`` events the board as
  laid (a ``board_off`` takes a card back off); ``new_hand`` gives the players, the
  hole cards per player and the seats in deal order;
- a card names its deck with ``deck`` (CONTRACT.md; none: the table's active deck,
  ``A`` in every shipped registry); a card journaled by its tag (``uid``) is named
  through *card_of_uid* (a deck registry, :func:`~dealerbox.floor.telling.deck_names.registry_decks`'s
  kind of lookup, returning ``(card, deck)``), else it stays unnamed;
- **the draw order is cut** where the deck's order changed inside a hand: at a
  ``reshuffled`` button (the stub scrambled after premature cards, RULES.md) and
  at a misdeal (the ``misdeal`` button, or a decision with verdict ``misdeal``):
  the cards are gathered and shuffled again, so the redeal is a draw of its own.

Each piece is a :class:`Draw`: the cards drawn since the last cut, with the board
cards laid from them. A hand's first draw and a redeal after a misdeal start
from a freshly shuffled deck and are scored; a draw after a ``reshuffled`` comes
from a scrambled remainder of the deck, not a shuffled whole one, so the checks
leave it out (``scored`` false) and say so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from dealerbox.floor.telling.hands import HandFollower, HandSummary
from dealerbox.floor.protect.hand import DealtHand

__all__ = ["ACTIVE_DECK", "Draw", "CardHand", "CardFollower", "card_hands_of_lines"]

#: The deck a card with no ``deck`` belongs to: the table's active deck (CONTRACT.md).
ACTIVE_DECK = "A"
#: Unread or unnamed cards: kept in the draw (they took a place), never paired.
UNNAMED = "?"


@dataclass(slots=True)
class Draw:
    """Cards drawn between two cuts of one hand, and the board laid from them."""

    cause: str                  # "deal", "redeal" (after a misdeal), "reshuffled"
    start_seq: int
    cards: list = field(default_factory=list)
    decks: list = field(default_factory=list)
    board: list = field(default_factory=list)

    @property
    def scored(self) -> bool:
        """A draw from a freshly shuffled whole deck: the hand's first, or a misdeal's redeal."""
        return self.cause in ("deal", "redeal")

    @property
    def deck(self) -> str:
        """The deck most of the draw's named cards came from (the active one when none is named)."""
        named = [d for d in self.decks if d is not None]
        return max(set(named), key=named.count) if named else ACTIVE_DECK


@dataclass(slots=True)
class CardHand:
    """One closed hand: the figures' summary and its draws."""

    summary: HandSummary
    draws: list
    seats: tuple | None = None

    def dealt_hands(self) -> list[DealtHand]:
        """The scored draws as :class:`DealtHand` records (``hand_id``: the draw's first seq;
        the first draw's is the hand's ``new_hand`` seq)."""
        s = self.summary
        out = []
        for draw in self.draws:
            if not draw.scored or s.players is None or not draw.cards:
                continue
            seats = self.seats if self.seats is not None and len(self.seats) == s.players else None
            out.append(DealtHand(draw.deck, tuple(draw.cards), s.players, s.hole_cards,
                                 board=tuple(draw.board), seats=seats, table=s.table, dealer=s.dealer,
                                 hand_id=draw.start_seq))
        return out


class CardFollower:
    """Follows one table's lines (in ``seq`` order) into :class:`CardHand` records.

    :meth:`feed` takes a stored line (text or parsed) and returns the hands it closed;
    the hand boundaries and the dealer are :class:`HandFollower`'s, so the two agree.
    """

    def __init__(self, table: str, *, dealer: str | None = None, card_of_uid=None):
        self.hands = HandFollower(table, dealer=dealer)
        self.card_of_uid = card_of_uid
        self._draws: list[Draw] | None = None
        self._seats: tuple | None = None

    @property
    def dealer(self) -> str | None:
        return self.hands.dealer

    def feed(self, line) -> list[CardHand]:
        record = json.loads(line) if isinstance(line, (str, bytes)) else line
        if not isinstance(record, dict):
            return []
        before = self.hands.open_hand
        draws, seats = self._draws, self._seats
        closed = self.hands.feed(record)
        out = []
        if closed and draws is not None:
            out.append(CardHand(closed[0], draws, seats))
        if self.hands.open_hand is not before:   # a hand closed, or one opened
            self._draws, self._seats = None, None
            if self.hands.open_hand is not None:
                self._open(record)
                return out
        if self._draws is not None and self.hands.open_hand is not None:
            self._line(record)
        return out

    def _open(self, record: dict) -> None:
        event = record.get("event")
        seats = event.get("seats") if isinstance(event, dict) else None
        self._seats = tuple(seats) if isinstance(seats, list) and all(
            isinstance(x, int) and not isinstance(x, bool) for x in seats) else None
        self._draws = [Draw("deal", record["seq"])]

    def _line(self, record: dict) -> None:
        seq = record["seq"]
        event, decision = record.get("event"), record.get("decision")
        draw = self._draws[-1]
        if isinstance(decision, dict):
            if decision.get("verdict") == "misdeal" and draw.cards:
                self._draws.append(Draw("redeal", seq))
            return
        if not isinstance(event, dict):
            return
        kind = event.get("ev")
        if kind == "shoe":
            card, deck = self._card(event)
            draw.cards.append(card)
            draw.decks.append(deck)
        elif kind == "board_on":
            card, _ = self._card(event)
            if card != UNNAMED and card in draw.cards and card not in draw.board:
                draw.board.append(card)
        elif kind == "board_off":
            card, _ = self._card(event)
            if card in draw.board:
                draw.board.remove(card)
        elif kind == "button" and event.get("name") in ("reshuffled", "misdeal") and draw.cards:
            self._draws.append(Draw("reshuffled" if event["name"] == "reshuffled" else "redeal", seq))

    def _card(self, event: dict) -> tuple[str, str | None]:
        """The card an event names and its deck (None: not named)."""
        if event.get("unread"):
            return UNNAMED, None
        card = event.get("card")
        if isinstance(card, str) and card != "joker":
            deck = event.get("deck")
            return card, deck if isinstance(deck, str) and deck else ACTIVE_DECK
        uid = event.get("uid")
        if isinstance(uid, str) and self.card_of_uid is not None:
            found = self.card_of_uid(uid)
            if found is not None and found[0] != "joker":
                return found
        return UNNAMED, None


def card_hands_of_lines(table: str, lines, *, card_of_uid=None) -> list[CardHand]:
    """Every closed hand of one table's *lines* (in ``seq`` order) with its draws."""
    follower = CardFollower(table, card_of_uid=card_of_uid)
    out: list[CardHand] = []
    for line in lines:
        out.extend(follower.feed(line))
    return out
