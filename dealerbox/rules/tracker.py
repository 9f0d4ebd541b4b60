"""Where every card of the active deck is, and which street it belongs to.

The tracker is the engine's memory of one hand; it judges nothing. The rules
(:mod:`dealerbox.rules.book`) read it through guards and move cards in it
through their outcomes. Places: ``stub``, ``seatN`` (deal order, 1 = left of
the button), ``hand`` (drawn, not yet placed), ``burn``, ``board``, ``aside``
or ``muck``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .cards import DECK_52, JOKER
from .events import Event

STREETS = ("flop", "turn", "river")
STREET_CARDS = {"flop": 3, "turn": 1, "river": 1}
#: The betting round that must be done before a street may be dealt.
ROUND_BEFORE = {"flop": "preflop", "turn": "flop", "river": "turn"}
NEXT_STREET = {"preflop": "flop", "flop": "turn", "turn": "river"}


@dataclass(slots=True)
class Street:
    """What the shoe gave for one street, in draw order."""

    name: str
    burn_due: bool = True
    from_aside: list = field(default_factory=list)  # dealt earlier face down aside (C40)
    drawn: list = field(default_factory=list)
    board: list = field(default_factory=list)
    burns: list = field(default_factory=list)
    complete: bool = False
    #: Cards of a premature deal of this street: they go back (or aside), not to the board count.
    voided: list = field(default_factory=list)
    settled: bool = False   # a premature judgment was made; later cards are the corrected deal
    episode: object = None  # the correction of the premature deal, while it is open

    @property
    def n(self) -> int:
        """How many board cards the street has."""
        return STREET_CARDS[self.name]


@dataclass(slots=True)
class ClosedDeal:
    """C40: later streets dealt face down aside, a burn before each."""

    streets: list
    draws: list = field(default_factory=list)


class HandTracker:
    """The state of one hand: card places, the deal, the streets and the open timers.

    :param joker_keys: keys of the active deck's joker tags (``joker:UID``).
    """

    def __init__(self, players: int, hole: int, seats=None, joker_keys=()):
        self.where: dict[str, str] = dict.fromkeys(DECK_52, "stub")
        for key in joker_keys:
            self.where[key] = "stub"
        self.players = players
        self.hole = hole
        self.deal_cards: list[str] = []        # hole cards in deal order, boxed cards left out
        self.deal_target = players * hole
        self.owed: list[int] = []              # seats owed a card after the deal
        self.exposed_count = 0
        self.boxed_count = 0
        self.last_shoe: str | None = None
        self.streets = {name: Street(name) for name in STREETS}
        self.extra: str | None = None          # the first card after the deal (EXTRA_CARD)
        self.extra_deadline: float | None = None
        self.returning: set[str] = set()       # sent back into the stub: may rightly come out again
        self.expect_next: list[str] = []       # the next shoe read must be this card
        self.excluded: set[str] = set()        # burned/mucked/board when the stub was reshuffled
        self.rounds_done = 0
        self.closed: ClosedDeal | None = None  # C40: turn/river being dealt face down aside
        self.seats = seats
        self.seat_cards: dict[int, set[str]] = {}
        self.seat_deadline: float | None = None
        self.unknown: set[str] = set()

    # ------------------------------------------------------------ the deal
    def seat_for(self, index: int) -> int:
        """The seat (deal order) that hole card number *index* (0-based) goes to."""
        return index % self.players + 1

    def next_deal_seat(self) -> int | None:
        """The seat the next hole card goes to, or None when the deal is complete."""
        i = len(self.deal_cards)
        if i < self.deal_target:
            return self.seat_for(i)
        return self.owed[0] if self.owed else None

    def seat_of(self, key: str) -> int:
        """The deal-order seat holding *key* (the card must be at a seat)."""
        return int(self.where[key][4:])

    # ------------------------------------------------------------ streets
    def drawing_street(self, phase: str) -> Street | None:
        """The street a card drawn now belongs to: the one being dealt, or the next one early."""
        if phase == "preflop":
            return self.streets["flop"]
        if phase in STREETS:
            cur = self.streets[phase]
            if not cur.complete:
                return cur
            nxt = NEXT_STREET.get(phase)
            return self.streets[nxt] if nxt else None
        return None

    def street_of(self, key: str) -> Street | None:
        """The street *key* was drawn for (or voided from)."""
        for st in self.streets.values():
            if key in st.drawn or key in st.voided:
                return st
        return None

    def on_board(self, cards) -> list:
        """Those of *cards* that lie on the board now."""
        return [c for c in cards if self.where.get(c) == "board"]

    def forget(self, key: str) -> None:
        """A card back in the stub comes out again: it no longer belongs to the street it left."""
        for st in self.streets.values():
            for lst in (st.drawn, st.voided, st.board, st.burns):
                if key in lst:
                    lst.remove(key)

    def reshuffled(self) -> None:
        """The stub was reshuffled with the returning cards; what lies out must stay out."""
        for c in self.returning:
            if self.where.get(c) in ("hand", "aside"):
                self.where[c] = "stub"
        self.excluded = {c for c, p in self.where.items() if p in ("burn", "muck", "board", "aside")}


@dataclass(slots=True)
class Seen:
    """An event as the rules see it: which card it names (``kind`` is card, joker,
    foreign or unknown; None for events without a card)."""

    event: Event
    kind: str | None = None
    key: str = ""

    @property
    def shown(self) -> str:
        """The card as decisions spell it (jokers are all ``joker``)."""
        return shown(self.key)


def shown(key: str) -> str:
    """A card key as decisions spell it (jokers are all ``joker``)."""
    return JOKER if key.startswith("joker:") else key


def identify(e: Event, registry, active: str, joker_keys, where) -> tuple[str, str]:
    """(kind, key) of a card event: kind is card, joker, foreign or unknown; key names the card."""
    if e.uid is not None:
        tag = registry.lookup(e.uid)
        if tag is None:
            return "unknown", f"uid:{e.uid}"
        if tag.deck != active:
            return "foreign", tag.card
        if tag.card == JOKER:
            return "joker", f"joker:{e.uid}"
        return "card", tag.card
    deck = e.deck or active
    if deck != active:
        return ("foreign" if registry.has_deck(deck) else "unknown"), e.card
    if e.card == JOKER:
        for key in joker_keys:
            if where.get(key) == "stub":
                return "joker", key
        return "joker", joker_keys[0] if joker_keys else "joker:?"
    return "card", e.card
