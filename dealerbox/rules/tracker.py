"""Where every card of the active deck is, and which street it belongs to.

The tracker is the engine's memory of one hand; it judges nothing. The rules
(:mod:`dealerbox.rules.book`) read it through guards and move cards in it
through their outcomes. Places: ``stub``, ``seatN`` (deal order, 1 = left of
the button), ``hand`` (drawn, not yet placed), ``burn``, ``board``, ``aside``
or ``muck``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dealerbox.domain.cards import DECK_52, JOKER
from dealerbox.domain.events import Event

STREETS = ("flop", "turn", "river")
STREET_CARDS = {"flop": 3, "turn": 1, "river": 1}
#: The betting round that must be done before a street may be dealt.
ROUND_BEFORE = {"flop": "preflop", "turn": "flop", "river": "turn"}
NEXT_STREET = {"preflop": "flop", "flop": "turn", "turn": "river"}
#: Seconds a card seen on the board before the shoe reported it waits for that
#: late read (timing noise) before the box judges it a card the shoe never gave.
LATE_READ_S = 1.0
#: A card slides through the shoe's field in 30-100 ms (docs/NOISE.md): two draws reported
#: closer than that were in the field together, and which was read first says nothing
#: about which came out first (``fast_pair``).
FAST_PAIR_S = 0.1
#: Key prefix of a card that left the stub unread: it holds the card's place.
UNREAD_PREFIX = "unread:"


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
    #: How many cards were drawn for the street when its first board card was laid down.
    drawn_at_first_card: int | None = None
    #: (board card, card taken for the burn) when a fast pair's read order was swapped.
    fast_pair: tuple | None = None
    #: Cards that lie on the board for this street but hold no place of it (a joker a correction
    #: replaces): the board reader sees them, so no dead tag can explain the street's missing card.
    blanks: list = field(default_factory=list)

    @property
    def n(self) -> int:
        """How many board cards the street has."""
        return STREET_CARDS[self.name]


@dataclass(slots=True)
class UnreadCard:
    """A card that left the stub unread: its key (``unread:N`` until the card is known),
    the step that named its place, and the information shown for it."""

    key: str
    step: object
    correction: object = None


@dataclass(slots=True)
class ClosedDeal:
    """C40: later streets dealt face down aside, a burn before each."""

    streets: list
    draws: list = field(default_factory=list)


class HandTracker:
    """The state of one hand: card places, the deal, the streets and the open timers.

    :param joker_keys: keys of the active deck's joker tags (``joker:UID``).
    """

    def __init__(self, players: int, hole: int, seats=None, joker_keys=(), mouth_sensor: bool = False):
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
        self.drawn_t: dict[str, float] = {}      # key -> when the shoe reported its draw
        self.streets = {name: Street(name) for name in STREETS}
        self.extra: str | None = None          # the first card after the deal (EXTRA_CARD)
        self.extra_deadline: float | None = None
        #: The cards after the deal that ROUND DONE took for the flop's early draws (the burn
        #: and a flop card drawn before the press, none shown yet): the flop must show them.
        self.early_flop: tuple[str, ...] = ()
        self.returning: set[str] = set()       # sent back into the stub: may rightly come out again
        self.expect_next: list[str] = []       # the next shoe read must be this card
        self.excluded: set[str] = set()        # burned/mucked/board when the stub was reshuffled
        self.rounds_done = 0
        #: Rounds called done ahead: ROUND DONE pressed again while the street it opened showed
        #: no card (a repeat, or an all-in hand whose later rounds will not be played). Each
        #: is used up by the next round that ends, by a press or by the next street's card.
        self.rounds_ahead = 0
        self.closed: ClosedDeal | None = None  # C40: turn/river being dealt face down aside
        self.seats = seats
        self.seat_cards: dict[int, set[str]] = {}
        self.seat_deadline: float | None = None
        self.unknown: set[str] = set()
        #: The table counts every card at the shoe's mouth: a missed read always shows.
        self.mouth_sensor = mouth_sensor
        #: SHORT_DEAL: how many hole cards were out when the box asked to count them.
        self.short_deal_from: int | None = None
        #: SHORT_DEAL settled by the cards drawn after it (the short seats got them): those cards,
        #: until the flop says whether they were hole cards or the burn and the flop.
        self.short_fill: list[str] = []
        #: Cards that left the stub unread, in the order the box learned of them.
        self.unread: list[UnreadCard] = []
        #: Cards seen on the board while still in the stub, waiting for a late shoe read:
        #: key -> (deadline, the street that wanted a board card then).
        self.held: dict[str, tuple[float, str]] = {}
        #: A double burn judged only once a spread street's last card had time to land: (street, deadline).
        self.double_burn_wait: tuple[str, float] | None = None
        #: The floor was called because the stub cannot give what the hand still needs.
        self.stub_short_called = False
        #: Unread cards the box has since learned: placeholder -> the card it turned out to be.
        self.learned: dict[str, str] = {}

    def new_unread(self) -> str:
        """A key for a card that left the stub unread; it is in the stub until drawn."""
        key = f"{UNREAD_PREFIX}{sum(1 for k in self.where if k.startswith(UNREAD_PREFIX)) + 1}"
        self.where[key] = "stub"
        return key

    def learn(self, placeholder: str, key: str) -> None:
        """The unread card *placeholder* turns out to be *key* (still in the stub by tracking)."""
        self.where[key] = self.where.pop(placeholder)
        self.learned[placeholder] = key
        for lst in [self.deal_cards, self.expect_next] + [getattr(st, name) for st in self.streets.values()
                                                          for name in ("drawn", "voided", "board", "burns",
                                                                       "from_aside")]:
            if placeholder in lst:
                lst[lst.index(placeholder)] = key
        if self.closed is not None and placeholder in self.closed.draws:
            self.closed.draws[self.closed.draws.index(placeholder)] = key
        for group in (self.returning, self.excluded):
            if placeholder in group:
                group.discard(placeholder)
                group.add(key)
        for record in self.unread:
            if record.key == placeholder:
                record.key = key
                if record.correction is not None:
                    record.correction.cards = (key,)

    def known_as(self, key: str) -> str:
        """*key*, or the card an unread placeholder turned out to be."""
        return self.learned.get(key, key)

    def cards_left(self) -> int:
        """The cards the box knows are still in the stub: the deck's, less those out of it (a card that
        left unread is one of them, its face unknown), with the cards sent back counted in."""
        left = sum(1 for c in DECK_52 if self.where.get(c) == "stub" or c in self.returning)
        return left - sum(1 for k, p in self.where.items() if k.startswith(UNREAD_PREFIX) and p != "stub")

    def cards_needed(self) -> int:
        """The cards the hand still needs from the stub: the hole cards owed, and each street's burn and
        cards not yet out (a card drawn and not yet placed counts as out)."""
        need = self.cards_owed()
        for st in self.streets.values():
            if st.complete or st.from_aside:
                continue
            pending = sum(1 for c in st.drawn if self.where.get(c) == "hand")
            need += max(0, st.n + int(st.burn_due) - len(self.on_board(st.board)) - len(st.burns) - pending)
        return need

    def cards_deciding(self) -> tuple[str, ...]:
        """The cards whose judgment waits for a grace period to end (the cards drawn after the deal, a
        spread street's second burn), or () when none does. A board card waiting for its late read is
        a sensing matter, not one of them."""
        if self.extra_deadline is not None:
            return tuple(self.streets["flop"].drawn)
        if self.double_burn_wait is not None:
            return tuple(self.streets[self.double_burn_wait[0]].burns)
        return ()

    def deadline(self) -> float | None:
        """The earliest time at which a waiting judgment is due, or None."""
        times = [t for t in (self.extra_deadline, self.seat_deadline) if t is not None]
        times += [due for due, _ in self.held.values()]
        if self.double_burn_wait is not None:
            times.append(self.double_burn_wait[1])
        return min(times) if times else None

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

    def cards_owed(self) -> int:
        """How many hole cards the deal still owes."""
        return max(0, self.deal_target - len(self.deal_cards)) + len(self.owed)

    def deal_a_few_short(self) -> bool:
        """The deal is short by fewer hole cards than there are seats: with no mouth sensor, tags
        not read (a whole lap missing is a deal not finished)."""
        return 1 <= self.cards_owed() < max(2, self.players)

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
            # A card waiting on the board for its late read counts: the next card drawn
            # after the street's last one is the next street's.
            held = sum(1 for _, name in self.held.values() if name == phase)
            if not cur.complete and (not held or len(self.on_board(cur.board)) + held < cur.n):
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

    def unread_aside(self) -> str | None:
        """The first card dealt face down aside (C40) that left the stub unread and is still aside, or None."""
        return next((k for st in self.streets.values() for k in st.from_aside
                     if k.startswith(UNREAD_PREFIX) and self.where.get(k) == "aside"), None)

    def unread_board_draw(self, st: Street | None) -> str | None:
        """The unread draw of *st*, still in hand, that must be a board card (after the burn, if one was due)."""
        if st is None:
            return None
        unread = [k for k in st.drawn + st.voided if k.startswith(UNREAD_PREFIX) and self.where.get(k) == "hand"]
        burn = st.drawn[:1] if st.burn_due and not st.burns else []
        rest = [k for k in unread if k not in burn]
        return (rest or unread or [None])[0]

    def board_card_due(self, phase: str) -> bool:
        """A card of the street being dealt is due on the board: its round is done, or a card was
        already drawn for it (a premature street)."""
        st = self.drawing_street(phase)
        return (st is not None and not st.complete and len(self.on_board(st.board)) < st.n
                and (phase == st.name or bool(st.drawn)))

    def street_shows_nothing(self, name: str) -> bool:
        """No card of street *name* is out but its burn: none drawn past the burn, none dealt
        aside for it, none on the board or waiting there for its late read.

        A card drawn counts although its ``board_on`` may not have come yet: the board antenna
        reports a card only once it has lain there for the settle time, so a quick ROUND DONE
        after the street was laid arrives first. A card a correction took off the street's count
        while it still lies there (a missed burn) counts too. A street being dealt again (C40) whose
        cards went back shows nothing either: its burn stands, and no burn is due for the redeal."""
        st = self.streets[name]
        past_burn = [c for c in st.drawn if c not in st.burns]
        return (len(past_burn) <= (1 if st.burn_due and not st.burns else 0) and not st.from_aside
                and not self.on_board(st.drawn + st.board + st.voided + st.blanks)
                and not any(s == name for _, s in self.held.values()))

    def street_one_card_unseen(self, name: str) -> bool:
        """Street *name* lacks exactly one card and nothing explains it but a dead tag: its burn was
        drawn (and is not on the board), every card drawn after it lies on the board, they are one
        fewer than the street has (none for the turn or river, two for the flop), none was dealt
        aside, none of a voided deal lies there, no blank the board reader sees lies there (a card
        a reader still sees is never a dead tag), and no card waits on the board for its late read."""
        if name not in self.streets:
            return False
        st = self.streets[name]
        after_burn = st.drawn[1:]
        return (st.burn_due and not st.complete and len(st.drawn) == st.n and not st.from_aside
                and not self.on_board(st.drawn[:1])
                and len(self.on_board(after_burn)) == len(after_burn) == st.n - 1
                and not self.on_board(st.voided + st.blanks)
                and not any(s == name for _, s in self.held.values()))

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
    #: The card left the stub unread (its key may be learned: the card a correction expected).
    unread: bool = False

    @property
    def shown(self) -> str:
        """The card as decisions spell it (jokers are all ``joker``)."""
        return shown(self.key)


def shown(key: str) -> str:
    """A card key as decisions spell it (jokers are all ``joker``, unread cards ``?``)."""
    if key.startswith("joker:"):
        return JOKER
    return "?" if key.startswith(UNREAD_PREFIX) else key


def identify(e: Event, registry, active: str, joker_keys, where, drawn_t=None) -> tuple[str, str]:
    """(kind, key) of a card event: kind is card, joker, foreign or unknown; key names the card.

    *drawn_t* (key -> when the shoe reported it) tells apart the jokers named without a UID."""
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
        # A joker named without its uid: out of the shoe, one still in the stub; on or off the
        # board, one already out of it (the one the board reader sees).
        wanted = ("stub",) if e.ev == "shoe" else ("board",) if e.ev == "board_off" else ("hand", "burn", "board")
        found = [key for key in joker_keys if where.get(key) in wanted]
        if e.ev in ("board_on", "board_off") and drawn_t:
            # The joker reaching the board is the one drawn last: one shown and burned earlier in
            # the hand lies with the burns (taking it would leave the new one open on the board).
            # The one leaving it is the one drawn last too: the correction open is about it, and one
            # left on the board earlier was ruled on then (taking that one would leave the new one
            # on the board, bet on, in the box's eyes).
            found.sort(key=lambda k: drawn_t.get(k, float("-inf")), reverse=True)
        if found:
            return "joker", found[0]
        return "joker", joker_keys[0] if joker_keys else "joker:?"
    return "card", e.card
