"""The hand engine: CONTRACT.md events in, decisions out.

Pure by design: no clock (time is the events' ``t``), no I/O, no threads. The
daemon, replay, crash recovery, the scenario tests and the benchmark all drive
this one class, so a hand recorded on a table replays anywhere with the same
decisions.

The hand's phases are a ``transitions`` state machine declared as data
(:data:`PHASES`, :data:`PHASE_TRANSITIONS`); the judgments follow RULES.md,
section "What the box must tell apart". The engine knows where every card of
the active deck is (:attr:`HandEngine.where`): ``stub``, ``seatN`` (deal order,
1 = left of the button), ``hand`` (drawn, not yet placed), ``burn``, ``board``,
``aside`` or ``muck``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from transitions import Machine

from .cards import DECK_52, JOKER
from .events import Event
from .profiles import Profile, load_profile
from .registry import DeckRegistry, simulation_registry

PHASES = ["idle", "deal", "preflop", "flop", "turn", "river", "showdown", "over", "halted"]
STREETS = ("flop", "turn", "river")
STREET_CARDS = {"flop": 3, "turn": 1, "river": 1}
#: The betting round that must be done before a street may be dealt.
ROUND_BEFORE = {"flop": "preflop", "turn": "flop", "river": "turn"}
NEXT_STREET = {"preflop": "flop", "flop": "turn", "turn": "river"}

#: ``next_round`` is the dealer's ``round_done``; ``take_back`` undoes one pressed
#: by mistake (``premature``); ``reopen_deal`` lets a seat be owed a card after
#: the deal looked complete (an exposed or boxed last card).
PHASE_TRANSITIONS = [
    {"trigger": "start_hand", "source": "*", "dest": "deal"},
    {"trigger": "deal_done", "source": "deal", "dest": "preflop"},
    {"trigger": "reopen_deal", "source": "preflop", "dest": "deal"},
    {"trigger": "next_round", "source": "preflop", "dest": "flop"},
    {"trigger": "next_round", "source": "flop", "dest": "turn"},
    {"trigger": "next_round", "source": "turn", "dest": "river"},
    {"trigger": "next_round", "source": "river", "dest": "showdown"},
    {"trigger": "take_back", "source": "flop", "dest": "preflop"},
    {"trigger": "take_back", "source": "turn", "dest": "flop"},
    {"trigger": "take_back", "source": "river", "dest": "turn"},
    {"trigger": "end_hand", "source": "*", "dest": "over"},
    {"trigger": "halt", "source": "*", "dest": "halted"},
]
_PLAYING = frozenset({"deal", "preflop", "flop", "turn", "river", "showdown"})


# --------------------------------------------------------------------------
# Decisions, steps and corrections
# --------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Step:
    """One instruction to the dealer: a message key and the values that fill it in."""

    key: str
    params: tuple = ()

    def param(self, name, default=None):
        for k, v in self.params:
            if k == name:
                return v
        return default


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision as CONTRACT.md defines it. ``steps`` are rendered by :mod:`dealerbox.rules.messages`."""

    t: float
    verdict: str
    irregularity: str | None
    cards: tuple[str, ...]
    rule: str
    steps: tuple[Step, ...]
    step: int
    phase: str

    def same_as(self, other: "Decision | None") -> bool:
        return (other is not None and self.verdict == other.verdict and self.irregularity == other.irregularity
                and self.step == other.step and self.cards == other.cards and self.steps == other.steps)


Check = Callable[["HandEngine", Event], bool]


@dataclass(slots=True)
class Todo:
    """A step of a correction and how the box sees it done.

    ``check`` is None for a step the box cannot see: it waits for ``ack``, or
    counts as done once a later step is seen done. ``button`` names the panel
    button that completes a step; such steps never block either, because
    dealers forget buttons.
    """

    step: Step
    check: Check | None = None
    button: str | None = None
    on_done: Callable[["HandEngine"], None] | None = None
    done: bool = False

    @property
    def blocking(self) -> bool:
        return self.check is not None


@dataclass(slots=True)
class Correction:
    """An irregularity being handled: what the panel shows and the steps still open."""

    irregularity: str | None
    verdict: str
    cards: tuple[str, ...]
    rule: str
    todos: list[Todo]
    halting: bool = False
    born: int = 0
    #: Where a card taken off the board goes, for the cards this correction moves.
    off_board: dict = field(default_factory=dict)
    context: dict = field(default_factory=dict)

    @property
    def current(self) -> int:
        for i, todo in enumerate(self.todos):
            if not todo.done:
                return i
        return len(self.todos)

    @property
    def finished(self) -> bool:
        return not self.halting and all(t.done for t in self.todos)


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
        return STREET_CARDS[self.name]


# --------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------

class HandEngine:
    """Follows one table's hands and answers each event with the decisions it causes.

    :param profile: a :class:`~dealerbox.rules.profiles.Profile`, or a shipped profile's name.
    :param registry: resolves ``uid`` events and deck names (default: the
        built-in simulation registry, deck ``A`` active).
    """

    def __init__(self, profile: Profile | str = "tda-2019", registry: DeckRegistry | None = None):
        self.profile = load_profile(profile) if isinstance(profile, str) else profile
        self.registry = registry if registry is not None else simulation_registry()
        self.active = self.registry.active
        self.machine = Machine(model=self, states=PHASES, transitions=PHASE_TRANSITIONS, initial="idle",
                               auto_transitions=False, model_attribute="phase")
        self._joker_keys = [f"joker:{u}" for u in self.registry.uids_of(self.active, JOKER)]
        self.decision = Decision(0.0, "ok", None, (), "", (), 0, "idle")
        self.faulted_readers: set[str] = set()
        self._seq = 0
        self._t = 0.0
        self._last_button: str | None = None
        self._reset_hand(players=0, hole=2)

    def _reset_hand(self, players: int, hole: int, seats=None) -> None:
        self.where: dict[str, str] = dict.fromkeys(DECK_52, "stub")
        for key in self._joker_keys:
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
        self.corrections: list[Correction] = []
        self.rounds_done = 0
        self.closed: dict | None = None        # C40: turn/river being dealt face down aside
        self.seats = seats
        self.seat_cards: dict[int, set[str]] = {}
        self.seat_deadline: float | None = None
        self.unknown: set[str] = set()

    # ------------------------------------------------------------ interface
    def feed(self, event: Event) -> list[Decision]:
        """Apply one event; return the decisions it caused (usually none or one)."""
        self._seq += 1
        self._t = event.t
        self._check_deadlines(event.t)
        if event.ev == "button":
            self._last_button = event.name
        getattr(self, "_on_" + event.ev)(event)
        if self.corrections:
            self._advance(event)
        return self._emit(event.t)

    def feed_all(self, events) -> list[Decision]:
        out: list[Decision] = []
        for e in events:
            out.extend(self.feed(e))
        return out

    @property
    def is_halted(self) -> bool:
        return self.phase == "halted"

    @property
    def has_deadline(self) -> bool:
        """True while a grace period runs, i.e. while a ``tick`` can change a judgment."""
        return self.extra_deadline is not None or self.seat_deadline is not None

    # ---------------------------------------------------------- decisions
    def _emit(self, t: float) -> list[Decision]:
        if self.corrections:
            top = self.corrections[-1]
            new = Decision(t, top.verdict, top.irregularity, top.cards, top.rule,
                           tuple(todo.step for todo in top.todos), top.current, self.phase)
        else:
            new = Decision(t, "ok", None, (), "", (), 0, self.phase)
        if new.same_as(self.decision):
            return []
        self.decision = new
        return [new]

    def _raise(self, rid: str, cards, todos: list[Todo], *, verdict: str | None = None,
               rule: str | None = None) -> Correction:
        choice = self.profile[rid]
        verdict = verdict or choice.verdict
        halting = verdict in ("misdeal", "void")
        corr = Correction(rid, verdict, tuple(cards), rule or choice.sources,
                          todos or [Todo(Step(f"halt.{verdict}"))], halting=halting, born=self._seq)
        if halting:
            self.corrections = [corr]
            self.extra_deadline = self.seat_deadline = None
            self.halt()
        else:
            self.corrections.append(corr)
        return corr

    def _halt_misdeal(self, rid: str, cards) -> None:
        """A misdeal row; the step follows the profile's verdict (a room may rule ``void``)."""
        self._raise(rid, cards, [])

    def _late(self, rid: str, cards) -> None:
        """A deal error reported after the first betting round: substantial action decides (002 r36)."""
        late = self.profile["LATE_ERROR"]
        self._raise(rid, cards, [Todo(Step("late.substantial_action")), Todo(Step("floor.decides"))],
                    verdict=late.verdict, rule=f"{self.profile[rid].sources}; {late.sources}")

    def _advance(self, event: Event) -> None:
        """Tick off the steps this event shows done; drop finished corrections."""
        for corr in list(self.corrections):
            if corr.born == self._seq:
                continue
            todos = corr.todos
            for i, todo in enumerate(todos):
                if todo.done:
                    continue
                if todo.check is not None:
                    hit = todo.check(self, event)
                else:
                    hit = todo.button is not None and event.ev == "button" and event.name == todo.button
                if hit:
                    for prev in todos[:i]:
                        if not prev.done and not prev.blocking:
                            self._complete(prev)
                    self._complete(todo)
        if event.ev == "button" and event.name == "ack" and self.corrections:
            top = self.corrections[-1]
            cur = top.current
            if top.born != self._seq and cur < len(top.todos):
                todo = top.todos[cur]
                if todo.check is None and todo.button is None:
                    self._complete(todo)
        self.corrections = [c for c in self.corrections if not c.finished]

    def _complete(self, todo: Todo) -> None:
        todo.done = True
        if todo.on_done is not None:
            todo.on_done(self)

    def _check_deadlines(self, t: float) -> None:
        if self.extra_deadline is not None and t >= self.extra_deadline:
            self.extra_deadline = None
            drawn = self.streets["flop"].drawn
            if self.phase == "preflop" and not any(self.where.get(c) == "board" for c in drawn):
                self._halt_misdeal("EXTRA_CARDS", [self.extra] + [c for c in drawn if c != self.extra])
        if self.seat_deadline is not None and t >= self.seat_deadline:
            self.seat_deadline = None
            self._check_seat_counts()

    # ------------------------------------------------------------ identity
    def _identify(self, e: Event) -> tuple[str, str]:
        """(kind, key): kind is card, joker, foreign or unknown; key names the card."""
        if e.uid is not None:
            tag = self.registry.lookup(e.uid)
            if tag is None:
                return "unknown", f"uid:{e.uid}"
            if tag.deck != self.active:
                return "foreign", tag.card
            if tag.card == JOKER:
                return "joker", f"joker:{e.uid}"
            return "card", tag.card
        deck = e.deck or self.active
        if deck != self.active:
            return ("foreign" if self.registry.has_deck(deck) else "unknown"), e.card
        if e.card == JOKER:
            for key in self._joker_keys:
                if self.where.get(key) == "stub":
                    return "joker", key
            return "joker", self._joker_keys[0] if self._joker_keys else "joker:?"
        return "card", e.card

    @staticmethod
    def shown(key: str) -> str:
        """A card key as decisions spell it (jokers are all ``joker``)."""
        return JOKER if key.startswith("joker:") else key

    # -------------------------------------------------------------- events
    def _on_tick(self, e: Event) -> None:
        """Time passes: the deadlines were checked in :meth:`feed`."""

    def _on_reader_fault(self, e: Event) -> None:
        self.faulted_readers.add(e.reader)

    def _on_reader_ok(self, e: Event) -> None:
        self.faulted_readers.discard(e.reader)

    def _on_new_hand(self, e: Event) -> None:
        self._reset_hand(e.players, e.hole_cards or 2, e.seats)
        self.start_hand()

    def _on_zone_off(self, e: Event) -> None:
        """Leaving a side zone changes nothing the rules judge."""

    def _on_zone_on(self, e: Event) -> None:
        kind, key = self._identify(e)
        if kind != "card" or self.phase not in _PLAYING:
            return
        place = self.where.get(key)
        if e.zone == "muck":
            if place not in ("stub", None):
                self.where[key] = "muck"
        elif e.zone == "burn":
            if place == "hand":
                self.where[key] = "burn"
        else:
            self._seat_zone(int(e.zone[4:]), key)

    # -- shoe ----------------------------------------------------------------
    def _on_shoe(self, e: Event) -> None:
        kind, key = self._identify(e)
        shown = self.shown(key)
        self.last_shoe = key
        if self.phase == "halted":
            self._flag_after_halt(shown)
            return
        if self.phase == "idle":
            self.where[key] = "hand"
            return
        if self.phase == "over":
            if kind == "card":
                self.where[key] = "muck"
            self._raise("RABBIT_HUNT", [shown], [Todo(Step("rabbit.not_allowed")), Todo(Step("floor.decides"))])
            return
        if kind == "foreign":
            self._raise("FOREIGN_CARD", [shown], [Todo(Step("halt.void_foreign", (("card", shown),)))])
            return
        if kind == "unknown":
            self._unknown_tag(key)
        elif not self._may_leave_stub(key, shown):
            return
        if self.expect_next and key != self.expect_next[0] and self.phase != "preflop":
            self._wrong_card_drawn(key, self.expect_next[0])
            return
        if self.expect_next and key == self.expect_next[0]:
            self.expect_next.pop(0)
        if key in self.returning:
            self.returning.discard(key)
            self._forget(key)
        self.where[key] = "hand"
        if kind == "joker":
            self._joker_drawn(key)
        elif self.closed is not None:
            self._closed_draw(key)
        elif self.phase == "deal":
            self._deal_card(key)
        elif self.phase == "preflop" and self.rounds_done == 0 and not self.streets["flop"].settled:
            self._preflop_draw(key)
        else:
            self._street_draw(key)

    def _forget(self, key: str) -> None:
        """A card back in the stub comes out again: it no longer belongs to the street it left."""
        for st in self.streets.values():
            for lst in (st.drawn, st.voided, st.board, st.burns):
                if key in lst:
                    lst.remove(key)

    def _unknown_tag(self, key: str) -> None:
        if key in self.unknown:
            return
        self.unknown.add(key)
        corr = self._raise("UNKNOWN_TAG", [key], [Todo(Step("unknown.call_floor", (("card", key),))),
                                                  Todo(Step("unknown.floor_confirms"))])
        corr.context["unknown"] = key

    def _may_leave_stub(self, key: str, shown: str) -> bool:
        """A card out of the shoe must have been in the stub: else a clone or a contaminated stub."""
        if self.where.get(key) == "stub" or key in self.returning:
            return True
        if key in self.excluded:
            self.excluded.discard(key)
            if any(not c.halting and c.irregularity not in (None, "UNKNOWN_TAG", "WRONG_CORRECTION")
                   for c in self.corrections):
                self._raise("WRONG_CORRECTION", [shown], [Todo(Step("wrong.reshuffled_in", (("card", shown),))),
                                                          Todo(Step("floor.decides"))], verdict="floor")
            else:
                self._raise("STUB_CONTAMINATION", [shown], [
                    Todo(Step("contamination.call_floor", (("card", shown),))), Todo(Step("floor.decides"))])
            return False
        self._raise("DUPLICATE_CARD", [shown], [Todo(Step("halt.void_duplicate", (("card", shown),)))])
        return False

    def _flag_after_halt(self, shown: str) -> None:
        top = self.corrections[-1] if self.corrections else None
        if top is None:
            return
        top.cards = top.cards + (shown,)
        if not any(t.step.key == "halt.card_after_stop" for t in top.todos):
            for todo in top.todos:
                todo.done = True
            top.todos.append(Todo(Step("halt.card_after_stop")))

    # -- deal ------------------------------------------------------------------
    def _seat_for(self, index: int) -> int:
        return index % self.players + 1

    def _next_deal_seat(self) -> int | None:
        i = len(self.deal_cards)
        if i < self.deal_target:
            return self._seat_for(i)
        return self.owed[0] if self.owed else None

    def _deal_card(self, key: str) -> None:
        seat = self._next_deal_seat()
        if len(self.deal_cards) >= self.deal_target:
            self.owed.pop(0)
        self.deal_cards.append(key)
        self.where[key] = f"seat{seat}"
        if len(self.deal_cards) >= self.deal_target and not self.owed:
            self.deal_done()
            if self.seats is not None:
                self.seat_deadline = self._t + self.profile.board_grace_s

    # -- after the deal, before the first round is done ---------------------
    def _preflop_draw(self, key: str) -> None:
        """RULES.md: an extra card dealt to a player, or the burn of a premature flop."""
        flop = self.streets["flop"]
        if self.extra is None:
            self.extra = key
            flop.drawn.append(key)
            self.expect_next = [key]
            self._raise("EXTRA_CARD", [key], [
                Todo(Step("extra.stop", (("card", key),))),
                Todo(Step("extra.return_on_top", (("card", key),)), on_done=_mark_returning(key)),
                Todo(Step("extra.burn_it", (("card", key),)), check=_drew(key)),
            ])
            self.returning.add(key)
            return
        if key == self.extra:
            # The extra card came back out: it is the flop's burn, drawn early.
            flop.drawn.append(key)
            return
        flop.drawn.append(key)
        self.expect_next = []
        if self.extra_deadline is None:
            self.extra_deadline = self._t + self.profile.board_grace_s

    # -- streets ---------------------------------------------------------------
    def _drawing_street(self) -> Street | None:
        """The street a card drawn now belongs to: the one being dealt, or the next one early."""
        if self.phase == "preflop":
            return self.streets["flop"]
        if self.phase in STREETS:
            cur = self.streets[self.phase]
            if not cur.complete:
                return cur
            nxt = NEXT_STREET.get(self.phase)
            return self.streets[nxt] if nxt else None
        return None

    def _street_draw(self, key: str) -> None:
        st = self._drawing_street()
        if st is None:
            return
        if st.voided and self.phase == ROUND_BEFORE[st.name] and self._episode_open(st):
            # The dealer goes on dealing the premature street before reading the panel:
            # this card belongs to the premature deal, not to the corrected one.
            st.voided.append(key)
            return
        st.drawn.append(key)

    def _episode_open(self, st: Street) -> bool:
        corr = st.episode
        return corr is not None and corr in self.corrections and not corr.todos[0].done

    def _closed_draw(self, key: str) -> None:
        """C40: burn and a face-down card for each later street, set aside."""
        plan = self.closed
        plan["draws"].append(key)
        n = len(plan["draws"])
        if n % 2 == 1:
            self.where[key] = "burn"
        else:
            self.where[key] = "aside"
            street = plan["streets"][n // 2 - 1]
            st = self.streets[street]
            st.from_aside.append(key)
            st.burn_due = False
        if n >= 2 * len(plan["streets"]):
            self.closed = None

    def _joker_drawn(self, key: str) -> None:
        """A joker is a blank: shown, set with the burns, replaced like a boxed card (001 r7)."""
        self.where[key] = "burn"
        seat = self._next_deal_seat() if self.phase == "deal" else None
        self._raise("JOKER", [JOKER], [
            Todo(Step("joker.show_and_burn")),
            Todo(Step("joker.replace_seat", (("seat", seat),)) if seat else Step("joker.replace_next"),
                 check=_drew_other_than(key)),
        ])

    # -- board -----------------------------------------------------------------
    def _on_board_on(self, e: Event) -> None:
        kind, key = self._identify(e)
        shown = self.shown(key)
        if self.phase not in _PLAYING:
            if kind == "card" and self.where.get(key) != "stub":
                self.where[key] = "board"
            return
        if kind == "foreign":
            self._raise("FOREIGN_CARD", [shown], [Todo(Step("halt.void_foreign", (("card", shown),)))])
            return
        if kind == "unknown":
            self._unknown_tag(key)
            return
        place = self.where.get(key)
        if kind == "joker":
            if place == "hand":
                self._joker_drawn(key)
            return
        if place == "board":
            return
        if any(c.context.get("keep_on_board") == key for c in self.corrections):
            self.where[key] = "board"
            return
        if place == "stub" and key not in self.returning:
            self.where[key] = "board"
            self._raise("BOARD_NOT_FROM_SHOE", [key], [
                Todo(Step("notfromshoe.call_floor", (("card", key),))), Todo(Step("floor.decides"))])
            return
        if place == "aside":
            for st in self.streets.values():
                if key in st.from_aside:
                    self.where[key] = "board"
                    st.board.append(key)
                    self._street_progress(st)
            return
        if place == "hand":
            self.where[key] = "board"
            self._board_card(key)
            return
        # A card from a seat, the burns or the muck put on the board is no
        # street card, and no RULES.md row judges it.

    def _on_board_off(self, e: Event) -> None:
        kind, key = self._identify(e)
        if kind != "card" or self.where.get(key) != "board":
            return
        for corr in reversed(self.corrections):
            dest = corr.off_board.get(key)
            if dest:
                self.where[key] = dest
                if dest == "stub":
                    self.returning.add(key)
                return
        if self.phase in _PLAYING and self._reshuffle_pending():
            # A card that must stay out of the stub left the board while the stub is to be reshuffled.
            corr = self._raise("WRONG_CORRECTION", [key], [
                Todo(Step("wrong.keep_on_board", (("card", key),)), check=_back_on_board(key))])
            corr.context["keep_on_board"] = key
            self.where[key] = "hand"

    def _reshuffle_pending(self) -> bool:
        return any(t.button == "reshuffled" and not t.done for c in self.corrections for t in c.todos)

    def _street_of(self, key: str) -> Street | None:
        for st in self.streets.values():
            if key in st.drawn or key in st.voided:
                return st
        return None

    def _board_card(self, key: str) -> None:
        """A drawn card reached the board: judge it against the street it was drawn for."""
        st = self._street_of(key)
        if st is None:
            return
        if key in st.voided:
            return self._joins_voided(st, key)
        i = STREETS.index(st.name)
        prev = self.streets[STREETS[i - 1]] if i > 0 else None
        # A card drawn straight after the previous street's cards, with no burn
        # between, belongs to that street: a fourth flop card (RULES.md).
        if (prev is not None and prev.complete and st.drawn[0] == key and not st.board
                and self.phase == ROUND_BEFORE[st.name] and not st.settled):
            st.drawn.remove(key)
            prev.drawn.append(key)
            prev.board.append(key)
            return self._extra_board_card(prev, key)
        st.board.append(key)
        if not st.settled and self.phase == ROUND_BEFORE[st.name]:
            return self._premature(st)
        if st.complete and len([c for c in st.board if self.where.get(c) == "board"]) > st.n:
            return self._extra_board_card(st, key)
        if st.burn_due and not st.burns and st.drawn[0] == key:
            self._missed_burn(st, key)
        self._street_progress(st)

    def _joins_voided(self, st: Street, key: str) -> None:
        """A card of a premature deal placed after the judgment goes back with the others."""
        corr = st.episode
        if corr is None:
            return
        corr.off_board[key] = corr.context["voided_to"]
        back = corr.context["back"]
        if key not in back:
            back.append(key)
        if key not in corr.cards:
            corr.cards = corr.cards + (key,)

    def _street_progress(self, st: Street) -> None:
        if st.complete:
            return
        on_board = [c for c in st.board if self.where.get(c) == "board"]
        if len(on_board) < st.n:
            return
        st.complete = True
        if st.from_aside:
            return
        firsts = [st.drawn.index(c) for c in on_board if c in st.drawn]
        first = min(firsts) if firsts else len(st.drawn)
        burns = [c for c in st.drawn[:first] if c not in st.board and c not in st.burns]
        for c in burns:
            if self.where.get(c) == "hand":
                self.where[c] = "burn"
            st.burns.append(c)
        if not st.burn_due and burns:
            self._raise("WRONG_CORRECTION", burns, [
                Todo(Step("wrong.burn_not_due", (("card", burns[0]),))), Todo(Step("floor.decides"))],
                verdict="floor")
        elif st.burn_due and len(st.burns) >= 2:
            self._double_burn(st)

    # -- corrections on the board ----------------------------------------------
    def _missed_burn(self, st: Street, key: str) -> None:
        """001 r13: the card comes off as an open burn; the next card from the stub takes its place."""
        st.board.remove(key)
        st.burns.append(key)
        corr = self._raise("MISSED_BURN", [key], [
            Todo(Step("missed_burn.take_off", (("card", key),)), check=_off_board(key)),
            Todo(Step("missed_burn.next_card", (("street", st.name),)), check=_street_complete(st.name)),
        ])
        corr.off_board[key] = "burn"

    def _double_burn(self, st: Street) -> None:
        """001 r13: the second burn goes back on top and is the next street's burn."""
        first, second = st.burns[0], st.burns[1]
        if st.name == "river":
            self._raise("DOUBLE_BURN", [first, second], [Todo(Step("double_burn.river_recorded"))], verdict="ok")
            return
        nxt = NEXT_STREET[st.name]
        st.burns.remove(second)
        self.returning.add(second)
        self.expect_next = [second]
        self._raise("DOUBLE_BURN", [first, second], [
            Todo(Step("double_burn.return_on_top", (("card", second),))),
            Todo(Step("double_burn.burn_it", (("card", second), ("street", nxt))), check=_drew(second)),
        ])

    def _extra_board_card(self, st: Street, key: str) -> None:
        """A card too many on the board for its street (RULES.md FOUR_CARD_FLOP)."""
        procedure = self.profile["FOUR_CARD_FLOP"].procedure
        cards = [c for c in st.board if self.where.get(c) == "board"]
        if st.name == "river":
            return
        if st.name == "turn" and procedure == "scramble_pick_burn":
            # TDA's four-card rule is the flop's; a second card on the turn is the river come early.
            st.board.remove(key)
            st.drawn.remove(key)
            river = self.streets["river"]
            river.drawn.insert(0, key)
            river.board.append(key)
            river.burn_due = False
            return self._premature(river)
        st.complete = True
        if procedure == "scramble_pick_burn":
            self.streets[NEXT_STREET[st.name]].burn_due = False
            corr = self._raise("FOUR_CARD_FLOP", cards, [
                Todo(Step("four_flop.call_floor")),
                Todo(Step("four_flop.scramble_pick", (("cards", tuple(cards)),)), check=_picked_one_of(cards)),
                Todo(Step("four_flop.rest_is_flop")),
                Todo(Step("four_flop.turn_no_burn"), check=_street_complete("turn")),
            ])
            corr.off_board.update(dict.fromkeys(cards, "burn"))
            return
        # C40: the street's cards go back, reshuffle without the burns, deal the street again.
        for c in cards:
            st.board.remove(c)
            st.drawn.remove(c)
        st.complete = False
        st.burn_due = False
        corr = self._raise("FOUR_CARD_FLOP", cards, [
            Todo(Step("redeal.cards_back", (("cards", tuple(cards)),)), check=_all_off_board(cards)),
            Todo(Step("reshuffle.now"), button="reshuffled", on_done=_snapshot_reshuffle),
            Todo(Step("redeal.deal_again", (("street", st.name),)), check=_street_complete(st.name)),
        ])
        corr.off_board.update(dict.fromkeys(cards, "stub"))
        self.returning.update(cards)

    def _premature(self, st: Street) -> None:
        """A street's card reached the board before the betting round before it was done."""
        st.settled = True
        on_board = [c for c in st.board if self.where.get(c) == "board" and c in st.drawn]
        if not on_board:
            return
        # The burn is the street's first draw, if one was due and it is not on the
        # board. Not "whatever came before the first card placed": a spread flop is
        # placed in any order, so its first card placed may be its last drawn.
        due = 1 if st.burn_due and st.drawn[0] not in on_board else 0
        burns = st.drawn[:due]
        rest = [c for c in st.drawn[due:] if self.where.get(c) in ("hand", "board")]
        for c in burns:
            self.where[c] = "burn"
            self.returning.discard(c)
        if st.name == "flop":
            self.extra_deadline = None
            self.expect_next = []
            self.corrections = [c for c in self.corrections if c.irregularity != "EXTRA_CARD"]
        rid = f"PREMATURE_{st.name.upper()}"
        choice = self.profile[rid]
        # The premature cards leave the street; the corrected deal starts afresh.
        st.voided = list(rest)
        st.board = []
        st.drawn = []
        st.burns = []
        st.complete = False
        if choice.procedure == "skipped_player_decides":
            return self._ask_skipped_player(st, rest, burns)
        back = list(rest)
        if st.name == "flop":
            st.burn_due = not burns
            todos = [
                Todo(Step("premature.cards_back", (("cards", tuple(back)),)), check=_all_off_board(back)),
                Todo(Step("premature.burn_stays", (("card", burns[0]),))) if burns else None,
                Todo(Step("reshuffle.now"), button="reshuffled", on_done=_snapshot_reshuffle),
                Todo(Step("premature.finish_round"), check=_round_done_into("flop")),
                Todo(Step("premature.new_street_no_burn" if burns else "premature.new_street",
                          (("street", "flop"),)), check=_street_complete("flop")),
            ]
            dest = "stub"
        elif st.name == "turn":
            st.burn_due = True
            self.streets["river"].burn_due = False
            todos = [
                Todo(Step("premature.set_aside", (("cards", tuple(back)),)), check=_all_off_board(back)),
                Todo(Step("premature.finish_round"), check=_round_done_into("turn")),
                Todo(Step("premature.burn_and_turn"), check=_street_complete("turn")),
                Todo(Step("premature.finish_round"), check=_round_done_into("river")),
                Todo(Step("premature.reshuffle_with", (("cards", tuple(back)),)), button="reshuffled",
                     on_done=_return_aside(back)),
                Todo(Step("premature.new_street_no_burn", (("street", "river"),)), check=_street_complete("river")),
            ]
            dest = "aside"
        else:
            st.burn_due = False
            todos = [
                Todo(Step("premature.cards_back", (("cards", tuple(back)),)), check=_all_off_board(back)),
                Todo(Step("premature.finish_round"), check=_round_done_into("river")),
                Todo(Step("reshuffle.now"), button="reshuffled", on_done=_snapshot_reshuffle),
                Todo(Step("premature.new_street_no_burn", (("street", "river"),)), check=_street_complete("river")),
            ]
            dest = "stub"
        corr = self._raise(rid, back + burns, [t for t in todos if t is not None])
        self._void_to(corr, st, back, dest)

    def _void_to(self, corr: Correction, st: Street, back: list, dest: str) -> None:
        corr.off_board.update(dict.fromkeys(back, dest))
        corr.context.update(voided_to=dest, back=back)
        st.episode = corr
        if dest == "stub":
            self.returning.update(back)

    def _ask_skipped_player(self, st: Street, cards: list, burns: list) -> None:
        """C40: the skipped player decides. Folds: ``ack``, the cards stand. Acts: ``round_done``."""
        corr = self._raise(f"PREMATURE_{st.name.upper()}", cards + burns, [
            Todo(Step("skipped.ask", (("street", st.name),)), check=_answered, on_done=_skipped_answer(st.name)),
        ])
        corr.context.update(voided_to="stub", back=list(cards), skipped=st.name)
        st.episode = corr

    def _skipped_folded(self, street: str) -> None:
        st = self.streets[street]
        st.drawn = st.burns + st.voided
        st.board = [c for c in st.voided if self.where.get(c) == "board"]
        st.voided = []
        self.rounds_done += 1
        self.next_round()
        self._street_progress(st)

    def _skipped_acted(self, street: str, corr: Correction) -> None:
        """The round is done; deal the later streets face down aside, then redeal this street."""
        st = self.streets[street]
        self.rounds_done += 1
        self.next_round()
        back = corr.context["back"]
        later = list(STREETS[STREETS.index(street) + 1:])
        todos = []
        if later:
            self.closed = {"streets": later, "draws": []}
            todos.append(Todo(Step("skipped.deal_closed", (("streets", tuple(later)),)), check=_closed_done))
        todos += [
            Todo(Step("redeal.cards_back", (("cards", tuple(back)),)), check=_all_off_board(back)),
            Todo(Step("reshuffle.now"), button="reshuffled", on_done=_snapshot_reshuffle),
            Todo(Step("redeal.deal_again", (("street", street),)), check=_street_complete(street)),
        ]
        corr.todos.extend(todos)
        st.burn_due = False
        self._void_to(corr, st, back, "stub")

    def _wrong_card_drawn(self, key: str, want: str) -> None:
        """The correction said the next card out must be *want* (a returned card)."""
        self.where[key] = "hand"
        self.returning.add(key)
        self._raise("WRONG_CORRECTION", [key, want], [
            Todo(Step("wrong.expected_card", (("card", want), ("got", key)))),
            Todo(Step("wrong.put_back_and_draw", (("card", want), ("got", key))), check=_drew(want)),
        ])

    # -- buttons -------------------------------------------------------------
    def _on_button(self, e: Event) -> None:
        name = e.name
        if name == "hand_over":
            if self.phase in _PLAYING:
                for c, p in self.where.items():
                    if p != "stub":
                        self.where[c] = "muck"
                self.corrections = []
                self.closed = None
                self.extra_deadline = self.seat_deadline = None
                self.end_hand()
            return
        if self.phase not in _PLAYING:
            return
        handler = _BUTTONS.get(name)
        if handler is not None:
            handler(self)

    def _round_done(self) -> None:
        if self.phase in ("deal", "showdown"):
            return
        if any(c.context.get("skipped") for c in self.corrections):
            return  # the answer to the skipped-player question; the step handles it
        if self.seat_deadline is not None:
            self.seat_deadline = None
            self._check_seat_counts()
            if self.phase == "halted":
                return
        if self.phase == "preflop" and self.rounds_done == 0:
            flop = self.streets["flop"]
            others = [c for c in flop.drawn if c != self.extra]
            if others and not any(self.where.get(c) == "board" for c in flop.drawn):
                # Burn and flop drawn early but not shown: they stand as the flop's draws.
                self.extra_deadline = None
                if self.extra is not None:
                    self.corrections = [c for c in self.corrections if c.irregularity != "EXTRA_CARD"]
                    self.expect_next = []
                    self.returning.discard(self.extra)
            elif self.extra is not None and flop.drawn.count(self.extra) == 1 and self.extra in self.returning:
                # Not yet redrawn: it goes back on top and comes out again as the burn.
                flop.drawn.remove(self.extra)
        self.rounds_done += 1
        self.next_round()
        if self.phase in STREETS:
            self._street_progress(self.streets[self.phase])

    def _exposed(self) -> None:
        key = self.last_shoe
        if key is None or key not in self.deal_cards:
            return
        shown = self.shown(key)
        idx = self.deal_cards.index(key)
        if self.rounds_done > 0:
            return self._late("EXPOSED_DEAL", [shown])
        self.exposed_count += 1
        if self.exposed_count >= 2:
            return self._halt_misdeal("EXPOSED_TWICE", [shown])
        if idx < 2:
            return self._halt_misdeal("EXPOSED_EARLY", [shown])
        seat = int(self.where[key][4:])
        self.owed.append(seat)
        if self.phase == "preflop":
            self.reopen_deal()
        self.streets["flop"].burn_due = False
        self.where[key] = "burn"
        corr = self._raise("EXPOSED_DEAL", [shown], [
            Todo(Step("exposed.finish_deal"), check=_deal_drawn(self.deal_target)),
            Todo(Step("exposed.replace", (("seat", seat), ("card", shown))), check=_deal_complete),
            Todo(Step("exposed.is_burn", (("card", shown),))),
            Todo(Step("exposed.flop_no_burn"), check=_street_complete("flop")),
        ])
        corr.todos[0].done = len(self.deal_cards) >= self.deal_target

    def _boxed(self) -> None:
        key = self.last_shoe
        if key is None or self.where.get(key) in ("stub", "burn", None):
            return
        shown = self.shown(key)
        if key in self.deal_cards:
            if self.rounds_done > 0:
                return self._late("BOXED_CARD", [shown])
            self.boxed_count += 1
            if self.boxed_count >= 2:
                return self._halt_misdeal("BOXED_TWICE", [shown])
            idx = self.deal_cards.index(key)
            seat = int(self.where[key][4:])
            del self.deal_cards[idx]
            self.where[key] = "burn"
            if self.phase == "preflop":
                self.reopen_deal()
            for j in range(idx, len(self.deal_cards)):
                self.where[self.deal_cards[j]] = f"seat{self._seat_for(j)}"
            self._raise("BOXED_CARD", [shown], [
                Todo(Step("boxed.show_and_burn", (("card", shown),))),
                Todo(Step("boxed.replace", (("seat", seat),)), check=_drew_other_than(key)),
            ])
            return
        st = self._street_of(key)
        if st is not None and key not in st.board:
            # A face-up card met while dealing a street: set with the burns, the next card plays its role.
            st.drawn.remove(key)
            self.where[key] = "burn"
            self._raise("BOXED_CARD", [shown], [
                Todo(Step("boxed.show_and_burn", (("card", shown),))),
                Todo(Step("boxed.replace_next"), check=_drew_other_than(key)),
            ])

    def _premature_button(self) -> None:
        """round_done was pressed by mistake: the last street came out before its round was done."""
        if self.phase not in STREETS:
            return
        st = self.streets[self.phase]
        on_board = [c for c in st.board if self.where.get(c) == "board"]
        self.rounds_done -= 1
        self.take_back()
        if on_board and not st.settled:
            st.complete = False
            self._premature(st)

    def _misdeal_button(self) -> None:
        unknown = next((c for c in self.corrections if c.irregularity == "UNKNOWN_TAG"), None)
        if unknown is not None:
            card = unknown.context["unknown"]
            self._raise("FOREIGN_CARD", [card], [Todo(Step("halt.void_foreign", (("card", card),)))])
            return
        self.corrections = [Correction(None, "misdeal", (), "002 r35C", [Todo(Step("halt.misdeal_called"))],
                                       halting=True, born=self._seq)]
        self.extra_deadline = self.seat_deadline = None
        self.halt()

    def _floor_button(self) -> None:
        self.corrections.append(Correction(None, "floor", (), "", [Todo(Step("floor.called"))], born=self._seq))

    # -- seat antennas (only when new_hand names the seats in deal order) -----
    def _seat_zone(self, seat: int, key: str) -> None:
        if self.seats is None:
            return
        place = self.where.get(key, "")
        if not place.startswith("seat"):
            return
        expected = self.seats[int(place[4:]) - 1]
        self.seat_cards.setdefault(seat, set()).add(key)
        if seat != expected:
            self._seat_error([key], "seat.wrong_seat" if seat in self.seats else "seat.not_dealt_in", seat)

    def _check_seat_counts(self) -> None:
        for seat in self.seats or ():
            if len(self.seat_cards.get(seat, ())) != self.hole:
                return self._seat_error([], "seat.wrong_count", seat)

    def _seat_error(self, cards, key: str, seat: int) -> None:
        if self.rounds_done > 0:
            return self._late("SEAT_ERROR", cards)
        self._raise("SEAT_ERROR", cards, [Todo(Step(key, (("seat", seat),))), Todo(Step("halt.misdeal"))])


_BUTTONS = {
    "round_done": HandEngine._round_done,
    "exposed": HandEngine._exposed,
    "boxed": HandEngine._boxed,
    "premature": HandEngine._premature_button,
    "misdeal": HandEngine._misdeal_button,
    "floor": HandEngine._floor_button,
}


# --------------------------------------------------------------------------
# What the box must observe to count a step done
# --------------------------------------------------------------------------

def _drew(card: str) -> Check:
    return lambda eng, e: e.ev == "shoe" and eng.last_shoe == card


def _drew_other_than(card: str) -> Check:
    return lambda eng, e: e.ev == "shoe" and eng.last_shoe != card


def _off_board(card: str) -> Check:
    return lambda eng, e: e.ev == "board_off" and eng.where.get(card) != "board"


def _back_on_board(card: str) -> Check:
    return lambda eng, e: e.ev == "board_on" and eng.where.get(card) == "board"


def _all_off_board(cards: list) -> Check:
    # *cards* may grow while the step is open (a late card of the same premature deal).
    return lambda eng, e: e.ev == "board_off" and all(eng.where.get(c) != "board" for c in cards)


def _picked_one_of(cards) -> Check:
    cards = tuple(cards)

    def check(eng: HandEngine, e: Event) -> bool:
        if e.ev != "board_off":
            return False
        off = [c for c in cards if eng.where.get(c) != "board"]
        if len(off) != 1:
            return False
        # The floor's pick is the turn's burn; the other three stay as the flop.
        flop = eng.streets["flop"]
        flop.board = [c for c in flop.board if c != off[0]]
        flop.burns.append(off[0])
        for corr in eng.corrections:
            for c in cards:
                corr.off_board.pop(c, None)
        return True
    return check


def _street_complete(name: str) -> Check:
    return lambda eng, e: eng.streets[name].complete


def _round_done_into(phase: str) -> Check:
    return lambda eng, e: e.ev == "button" and e.name == "round_done" and eng.phase == phase


def _deal_drawn(n: int) -> Check:
    return lambda eng, e: len(eng.deal_cards) >= n


def _deal_complete(eng: HandEngine, e: Event) -> bool:
    return eng.phase != "deal"


def _answered(eng: HandEngine, e: Event) -> bool:
    return e.ev == "button" and e.name in ("ack", "round_done")


def _closed_done(eng: HandEngine, e: Event) -> bool:
    return eng.closed is None


def _mark_returning(card: str):
    def done(eng: HandEngine) -> None:
        eng.returning.add(card)
    return done


def _snapshot_reshuffle(eng: HandEngine) -> None:
    for c in eng.returning:
        if eng.where.get(c) in ("hand", "aside"):
            eng.where[c] = "stub"
    eng.excluded = {c for c, p in eng.where.items() if p in ("burn", "muck", "board", "aside")}


def _return_aside(cards):
    def done(eng: HandEngine) -> None:
        for c in cards:
            if eng.where.get(c) == "aside":
                eng.where[c] = "stub"
                eng.returning.add(c)
        _snapshot_reshuffle(eng)
    return done


def _skipped_answer(street: str):
    def done(eng: HandEngine) -> None:
        corr = next((c for c in eng.corrections if c.context.get("skipped") == street), None)
        if corr is None:
            return
        corr.context["skipped"] = None
        if eng._last_button == "ack":
            eng._skipped_folded(street)
        else:
            eng._skipped_acted(street, corr)
    return done


def decision_to_dict(decision: Decision, messages) -> dict:
    """A decision as CONTRACT.md's JSON object, steps in the display language."""
    return {
        "t": decision.t,
        "verdict": decision.verdict,
        "irregularity": decision.irregularity,
        "cards": list(decision.cards),
        "rule": decision.rule,
        "steps": [messages.text(s) for s in decision.steps],
        "step": decision.step,
        "phase": decision.phase,
    }
