"""A poker table as the cards lie on it: the stub in order, the seats, the burns, the board.

The physical truth the box is judged against (RULES.md: "green is a promise about the
cards on the table"). Every physical move a dealer makes is a method here; the moves
the table's readers can see write their CONTRACT.md event to :attr:`PhysicalTable.events`
and hand it to the listener (the engine, in the tests), with perfect reads: every card
that leaves the stub is read at the mouth (``shoe``), every card that lands on or
leaves the board is seen by the board antenna (``board_on`` / ``board_off``). The
moves no reader sees (a card to a seat, to the burns, back on top of the stub, a
reshuffle) change only the table.

Nothing here knows the rules. :meth:`PhysicalTable.board_faults` says what is wrong
with the board for a street, from the cards alone: its count, a joker, a card of
another deck, two cards of one face, a street dealt with no burn before it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable

from dealerbox.domain.cards import DECK_52, JOKER

#: Board cards on the street of each betting round: before the flop, the flop, the turn, the river.
BOARD_AFTER_ROUND = (0, 3, 4, 5)
STREET_CARDS = {"flop": 3, "turn": 1, "river": 1}
STREET_ORDER = ("flop", "turn", "river")
#: The table's deck (the active one) and the registered deck with another back.
HOME_DECK, FOREIGN_DECK = "A", "B"


@dataclass(eq=False)
class Card:
    """One physical card: its face, the deck whose back it has, and whether it lies face up in the stub."""

    face: str
    deck: str = HOME_DECK
    face_up: bool = False

    @property
    def is_joker(self) -> bool:
        return self.face == JOKER

    @property
    def is_foreign(self) -> bool:
        return self.deck != HOME_DECK

    def fields(self) -> dict:
        """The card as an event names it."""
        return {"card": self.face} if self.deck == HOME_DECK else {"card": self.face, "deck": self.deck}

    def __repr__(self) -> str:
        return self.face + ("" if self.deck == HOME_DECK else f"/{self.deck}") + ("^" if self.face_up else "")


@dataclass
class PhysicalTable:
    """One table's cards, and the events its readers send.

    :param listener: called with each event dict as it happens (the engine's feed); its
        return value is ignored.
    """

    seed: int = 0
    listener: Callable[[dict], object] | None = None
    step_s: float = 0.5
    t: float = 0.0
    events: list = field(default_factory=list)

    def __post_init__(self):
        self.rng = random.Random(self.seed)
        self.stub: list[Card] = []
        self.seats: dict[int, list[Card]] = {}
        self.burns: list[Card] = []          # face down: the streets' burns
        self.shown: list[Card] = []          # set with the burns face up: boxed cards, jokers, shown cards
        self.board: list[Card] = []          # as the board antenna sees it, in the order laid
        self.aside: list[Card] = []          # set aside face down (a premature turn; C40's closed streets)
        self.muck: list[Card] = []
        self.in_hand: list[Card] = []        # drawn, not yet put anywhere
        self.burn_for: dict[int, str] = {}   # id(card) -> the street a burn is that street's burn for
        self.drawn: list[Card] = []          # every card out of the stub this hand, in order

    # ------------------------------------------------------------------ time and events
    def emit(self, ev: str, dt: float | None = None, **fields) -> dict:
        self.t = round(self.t + (self.step_s if dt is None else dt), 3)
        e = {"t": self.t, "ev": ev, **fields}
        self.events.append(e)
        if self.listener is not None:
            self.listener(e)
        return e

    def wait(self, seconds: float, tick_s: float = 0.25) -> None:
        """Time passes (a betting round, the floor walking over): the daemon's ticks."""
        n = max(1, int(seconds / tick_s))
        for _ in range(n):
            self.emit("tick", dt=tick_s)

    def press(self, name: str) -> dict:
        return self.emit("button", name=name)

    # ------------------------------------------------------------------ a new hand
    def new_hand(self, players: int, hole: int, mouth_sensor: bool, extra: list | None = None) -> None:
        """Gather every card, shuffle the 52 (and any card the test slips in), start the hand."""
        self.stub = [Card(face) for face in DECK_52]
        self.rng.shuffle(self.stub)
        for pos, card in extra or ():
            self.stub.insert(min(pos, len(self.stub)), card)
        self.seats = {}
        self.burns, self.shown, self.board, self.aside, self.muck, self.drawn = [], [], [], [], [], []
        self.in_hand = []
        self.burn_for = {}
        fields = {"players": players}
        if hole != 2:
            fields["hole_cards"] = hole
        if mouth_sensor:
            fields["mouth_sensor"] = True
        self.emit("new_hand", **fields)

    # ------------------------------------------------------------------ the dealer's hands
    def draw(self) -> Card:
        """The top card leaves the stub: the mouth sensor counts it and the shoe reader reads it."""
        if not self.stub:
            raise StubEmpty("the stub is empty")
        card = self.stub.pop(0)
        self.drawn.append(card)
        self.in_hand.append(card)
        self.emit("shoe", **card.fields())
        return card

    def pull(self, card: Card) -> Card:
        """Take *card* out of the stub wherever it is (a card the box asks for by name) and draw it."""
        self.stub.remove(card)
        self.stub.insert(0, card)
        return self.draw()

    def _take(self, card: Card) -> None:
        """Lift *card* from wherever it lies (no event unless it was on the board)."""
        for pile in (self.in_hand, self.burns, self.shown, self.aside, self.muck, *self.seats.values(), self.stub):
            if card in pile:
                pile.remove(card)
                self.burn_for.pop(id(card), None)
                return
        if card in self.board:
            self.board.remove(card)
            self.emit("board_off", **card.fields())
            return
        raise ValueError(f"{card!r} is nowhere on the table")

    def to_seat(self, card: Card, seat: int) -> None:
        self._take(card)
        self.seats.setdefault(seat, []).append(card)

    def to_burns(self, card: Card, street: str) -> None:
        """Put *card* with the burns face down, as the burn of *street* (as the dealer means it)."""
        self._take(card)
        self.burns.append(card)
        self.burn_for[id(card)] = street

    def to_shown(self, card: Card) -> None:
        self._take(card)
        self.shown.append(card)

    def to_aside(self, card: Card) -> None:
        self._take(card)
        self.aside.append(card)

    def to_board(self, card: Card) -> None:
        """Lay *card* on the board: the board antenna sees it arrive."""
        self._take(card)
        self.board.append(card)
        self.emit("board_on", **card.fields())

    def on_top(self, card: Card) -> None:
        """Put *card* back on top of the stub, face down."""
        self._take(card)
        self.stub.insert(0, card)

    def into_stub(self, card: Card) -> None:
        """Put *card* back into the stub (somewhere: it is reshuffled after)."""
        self._take(card)
        self.stub.insert(self.rng.randrange(len(self.stub) + 1), card)

    def shuffle_stub(self) -> None:
        self.rng.shuffle(self.stub)

    def gather(self) -> None:
        """The hand is over: the board is swept (the antenna sees every card leave)."""
        for card in list(self.board):
            self._take(card)
            self.muck.append(card)

    # ------------------------------------------------------------------ what the board holds
    def board_faults(self, rounds_over: int, exempt: frozenset = frozenset()) -> list[str]:
        """What is wrong with the board once *rounds_over* betting rounds are over (1: the preflop
        round), from the cards alone. *exempt* names the streets dealt with no burn by a procedure's
        exception. An empty list: the board holds exactly what the street requires."""
        faults = []
        streets = max(0, min(rounds_over, 4) - 1)      # the streets bet on: none after the preflop round
        want = BOARD_AFTER_ROUND[streets]
        if len(self.board) != want:
            faults.append(f"{len(self.board)} board cards, the street requires {want}")
        faces = [c.face for c in self.board]
        if any(c.is_joker for c in self.board):
            faults.append("a joker on the board")
        if any(c.is_foreign for c in self.board):
            faults.append("a card of another deck on the board: " + ", ".join(repr(c) for c in self.board
                                                                               if c.is_foreign))
        dups = sorted({f for f in faces if faces.count(f) > 1 and f != JOKER})
        if dups:
            faults.append("two cards of one face on the board: " + ", ".join(dups))
        # Each street after its burn: the burn pile holds a burn for every street on the board (the
        # dealer says which street each burn is for: an exposed card made the first burn, a card
        # the floor picked from a four-card flop, the closed deal's burns), but for the streets
        # *exempt* (a procedure that deals one with no burn of its own).
        for name in STREET_ORDER[:streets]:
            if name not in exempt and not any(self.burn_for.get(id(c)) == name for c in self.burns):
                faults.append(f"the {name} was dealt with no burn of its own")
        return faults

    def describe(self) -> str:
        """The table in one line, for a finding's report."""
        return (f"board {self.board}, burns {self.burns}, shown {self.shown}, aside {self.aside}, "
                f"top of stub {self.stub[:3]}")


class StubEmpty(IndexError):
    """The dealer reached for a card and the stub had none left."""


__all__ = ["BOARD_AFTER_ROUND", "Card", "FOREIGN_DECK", "HOME_DECK", "PhysicalTable", "STREET_CARDS",
           "STREET_ORDER", "StubEmpty"]
