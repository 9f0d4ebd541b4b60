"""The hand engine: CONTRACT.md events in, decisions out.

Pure by design: no clock (time is the events' ``t``), no I/O, no threads. The
daemon, replay, crash recovery, the scenario tests and the benchmark all drive
this one class, so a hand recorded on a table replays anywhere with the same
decisions.

The engine is three parts: the hand's phases, a ``transitions`` state machine
declared as data (:data:`PHASES`, :data:`PHASE_TRANSITIONS`); the tracker
(:class:`~dealerbox.rules.tracker.HandTracker`), which knows where every card
is; and the rule book (:mod:`dealerbox.rules.book`), which says what each event
does in each phase, following RULES.md "What the box must tell apart". The
corrections are the procedures the profile names (:mod:`dealerbox.rules.procedures`).
"""

from __future__ import annotations

from transitions import Machine

# Imported for what they register, before the book is compiled below: the guards, the
# outcomes and the procedures (the book and the procedures never import them back).
from dealerbox.rules import board, buttons, dealing, guards, premature_streets, sensing  # noqa: F401
from dealerbox.rules.book import NOT_PLAYING, PHASES, compile_book, outcome, run
from dealerbox.domain.cards import JOKER
from dealerbox.rules.corrections import Correction, Todo, on_panel
from dealerbox.rules.step_judge import answer as answer_open_steps, judge as judge_open_steps, snapshot
from dealerbox.domain.decisions import Decision, Step, decision_to_dict
from dealerbox.domain.events import Event
from dealerbox.domain.events import REGISTRY_EVENTS
from dealerbox.rules.reader_health import ReaderHealth
from dealerbox.rules.profiles import Profile, load_profile
from dealerbox.domain.decks import DeckRegistry, simulation_registry
from dealerbox.rules.tracker import STREETS, HandTracker, Seen, Street, identify, shown

__all__ = ["PHASES", "PHASE_TRANSITIONS", "STREETS", "Correction", "Decision", "HandEngine", "Step", "Street",
           "Todo", "decision_to_dict"]

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
_CARD_EVENTS = frozenset({"shoe", "board_on", "board_off", "zone_on", "zone_off"})
_NO_CHANGE = object()   # no dealer event waits for the hand to end


class HandEngine:
    """Follows one table's hands and answers each event with the decisions it causes.

    :param profile: a :class:`~dealerbox.rules.profiles.Profile`, or a shipped profile's name.
    :param registry: resolves ``uid`` events and deck names (default: the
        built-in simulation registry, deck ``A`` active).

    Public state, for display and history (read it, never change it):
    :attr:`phase`, :attr:`decision`, :attr:`where` (card -> place),
    :attr:`streets`, :attr:`deal_cards`, :attr:`players`, :attr:`corrections`
    (the open ones, newest last), :attr:`faulted_readers` and :attr:`dealer`.
    """

    #: Raise what the engine's model of the table could not place, instead of calling the floor with
    #: what it knows (:meth:`_cannot_place`). Tests set it, to find the drift; a table never does.
    strict = False

    def __init__(self, profile: Profile | str = "tda-2019", registry: DeckRegistry | None = None):
        self.profile = load_profile(profile) if isinstance(profile, str) else profile
        self.registry = registry if registry is not None else simulation_registry()
        self.active = self.registry.active
        self.machine = Machine(model=self, states=list(PHASES), transitions=PHASE_TRANSITIONS, initial="idle",
                               auto_transitions=False, model_attribute="phase")
        self.joker_keys = [f"joker:{u}" for u in self.registry.uids_of(self.active, JOKER)]
        self.decision = Decision(0.0, "ok", None, (), "", (), 0, "idle")
        self.faulted_readers: set[str] = set()
        #: Number of events fed so far; a correction ignores the event that opened it.
        self.seq = 0
        #: The time of the event being applied.
        self.t = 0.0
        #: The event (``seq``) that last ticked a step done: an ACK right after it confirms that step.
        self.step_done_at = 0
        #: The last panel button pressed.
        self.last_button: str | None = None
        self.corrections: list[Correction] = []
        self.hand = HandTracker(0, 2, joker_keys=self.joker_keys)
        #: Evidence for READER_DEGRADED, kept across hands.
        self.health = ReaderHealth()
        #: Technician notices that came while the hand was stopped: shown at the next hand.
        self.pending_notices: list[Step] = []
        #: Decisions for the record, made by the event being applied: journaled before the panel's.
        self.records: list[Decision] = []
        #: What the event being applied showed, as the rule book's outcomes announce it (moment, cards):
        #: the open-steps table says what each means for the steps open (:meth:`announce`).
        self.moments: list[tuple[str, tuple[str, ...]]] = []
        #: The id of the dealer who deals at this table (``dealer`` events), or None.
        self.dealer: str | None = None
        self._dealer_next = _NO_CHANGE

    # ------------------------------------------------------------ public state
    @property
    def where(self) -> dict[str, str]:
        """Card key -> place (``stub``, ``seatN``, ``hand``, ``burn``, ``board``, ``aside``, ``muck``)."""
        return self.hand.where

    @property
    def streets(self) -> dict[str, Street]:
        """The flop, turn and river as the shoe gave them."""
        return self.hand.streets

    @property
    def deal_cards(self) -> list[str]:
        """The hole cards in deal order (boxed cards left out)."""
        return self.hand.deal_cards

    @property
    def players(self) -> int:
        """Players dealt in this hand (0 before the first hand)."""
        return self.hand.players

    shown = staticmethod(shown)

    @property
    def is_halted(self) -> bool:
        """The hand is stopped (misdeal, void) until the next ``new_hand``."""
        return self.phase == "halted"

    @property
    def dealer_after_hand(self) -> str | None:
        """Who deals once the hand in play is over: a ``dealer`` event read during it takes effect then."""
        return self.dealer if self._dealer_next is _NO_CHANGE else self._dealer_next

    @property
    def has_deadline(self) -> bool:
        """True while a grace period runs, i.e. while a ``tick`` can change a judgment."""
        return self.hand.deadline() is not None

    # ------------------------------------------------------------ feeding
    def feed(self, event: Event) -> list[Decision]:
        """Apply one event; return the decisions it caused (usually none or one)."""
        if event.ev == "dealer":
            # Who deals is no card and no step: it touches neither the hand, nor its time, nor
            # the decision. During a hand it waits for the hand to be over (CONTRACT.md).
            self._dealer_next = event.dealer
            self._dealer_takes_over(event)
            return []
        if event.ev in REGISTRY_EVENTS:
            # On record for the floor (a deck registered, the registry in use): no card, no step, no time.
            return []
        self.seq += 1
        self.moments = []
        self.t = event.t
        try:
            self._apply(event)
        except Exception:  # noqa: BLE001 -- CONTRACT.md: no event the contract allows stops the engine
            if self.strict:
                raise
            self._cannot_place(event)
        if self._dealer_next is not _NO_CHANGE:
            self._dealer_takes_over(event)
        return self._emit(event.t)

    def _apply(self, event: Event) -> None:
        """Judge *event*: the grace periods it ends, the rule book's row, then the open steps."""
        self._check_deadlines(event)
        ev = event.ev
        if ev == "button":
            self.last_button = event.name
            trigger = "button." + event.name
            # A button speaks of the last card out of the shoe (``exposed``, ``boxed``).
            seen = Seen(event, None, self.hand.last_shoe or "")
        elif event.unread:
            trigger, seen = ev, Seen(event, "unread", self.hand.new_unread(), unread=True)
        elif ev in _CARD_EVENTS:
            trigger = ev
            kind, key = identify(event, self.registry, self.active, self.joker_keys, self.hand.where,
                                 self.hand.drawn_t)
            seen = Seen(event, kind, key)
        else:
            trigger, seen = ev, Seen(event)
        before = snapshot(self)
        run(_INDEX, trigger, self, seen)
        if self.corrections:
            judge_open_steps(self, event, seen.key, before)
        self._stub_enough()

    def use_registry(self, registry: DeckRegistry) -> None:
        """Judge cards with *registry* from now on (the box hands it a new one between hands only)."""
        self.registry = registry
        self.active = registry.active
        self.joker_keys = [f"joker:{u}" for u in registry.uids_of(self.active, JOKER)]

    def feed_all(self, events) -> list[Decision]:
        """Feed every event; return all the decisions, in order."""
        out: list[Decision] = []
        for e in events:
            out.extend(self.feed(e))
        return out

    def _dealer_takes_over(self, event: Event) -> None:
        """The dealer waiting takes over once no hand is in play (a new hand ends the last one too)."""
        if self.phase in NOT_PLAYING or event.ev == "new_hand":
            self.dealer, self._dealer_next = self._dealer_next, _NO_CHANGE

    def _check_deadlines(self, event: Event) -> None:
        hand, t = self.hand, event.t
        if hand.extra_deadline is not None and t >= hand.extra_deadline:
            hand.extra_deadline = None
            run(_INDEX, "grace.extra", self, None)
        if hand.seat_deadline is not None and t >= hand.seat_deadline:
            hand.seat_deadline = None
            run(_INDEX, "grace.seats", self, None)
        # A round called done or a hand over settles the cards still waiting for their read.
        settle = event.ev == "button" and event.name in ("round_done", "premature", "hand_over")
        for key, (due, _) in list(hand.held.items()):
            if (settle or t >= due) and self.hand is hand and key in hand.held:
                run(_INDEX, "grace.held", self, Seen(event, "card", key))
        # The hand ending (HAND OVER, or the next hand) decides what still waits, on what was seen.
        ending = event.ev == "new_hand" or (event.ev == "button" and event.name == "hand_over")
        wait = hand.double_burn_wait
        if wait is not None and (t >= wait[1] or ending or event.ev == "shoe" or event.name == "round_done"):
            hand.double_burn_wait = None
            run(_INDEX, "grace.double_burn", self, Seen(event, None, wait[0]))

    def _cannot_place(self, event: Event) -> None:
        """The box's model of the table cannot place the event: the floor decides, with what the box
        knows (the card, the step shown). Once per hand: later events are judged as well as they can be."""
        if self.is_halted or any(t.step.key == "floor.cannot_place" for c in self.corrections for t in c.todos):
            return
        card = event.card or ""
        step = Step("floor.cannot_place", (("card", card),) if card else ())
        self.corrections.append(Correction(None, "floor", (card,) if card else (), "",
                                           [Todo(step), Todo(Step("floor.decides"))], born=self.seq))

    def _stub_enough(self) -> None:
        """RULES.md, the stub's end: when the hand needs more cards than the stub holds, the floor is
        called at once rather than a step shown that cannot be done (the house decides, 002 OP10)."""
        hand = self.hand
        if hand.stub_short_called or self.phase not in ("deal", "preflop", "flop", "turn", "river"):
            return
        if hand.cards_needed() > hand.cards_left():
            hand.stub_short_called = True
            self.corrections.append(Correction(None, "floor", (), "002 OP10", [Todo(Step("stub.runs_out")),
                                                                             Todo(Step("floor.decides"))],
                                               born=self.seq))

    # ------------------------------------------------------------ corrections
    def open_correction(self, rid: str, cards, todos: list[Todo], *, verdict: str | None = None,
                        rule: str | None = None, halting: bool | None = None) -> Correction:
        """Show irregularity *rid* with *todos* (a halt when the verdict is misdeal or void, unless
        *halting* is False: a question the dealer answers before the hand stops)."""
        choice = self.profile[rid]
        verdict = verdict or choice.verdict
        halting = verdict in ("misdeal", "void") if halting is None else halting
        corr = Correction(rid, verdict, tuple(cards), rule or choice.sources,
                          todos or [Todo(Step(f"halt.{verdict}"))], halting=halting, born=self.seq,
                          opened_t=self.t)
        if halting:
            self.stop(corr)
        else:
            self.corrections.append(corr)
        return corr

    def stop(self, corr: Correction) -> None:
        """Halt the hand: *corr* is all the panel shows until the next hand."""
        self.corrections = [corr]
        self.hand.extra_deadline = self.hand.seat_deadline = None
        self.halt()

    def advance(self, event: Event) -> None:
        """Tick off the steps *event* shows done, for an event the box learns of only later
        (a draw whose read was missed, once the dealer says so)."""
        answer_open_steps(self, event)

    def announce(self, moment: str, cards=()) -> None:
        """Say that the event being applied is *moment* (a name of the open-steps table's
        ``ANNOUNCED``), about *cards*: what it means for a step left open is the table's to say."""
        self.moments.append((moment, tuple(cards)))

    def record(self, irregularity: str, cards, rule: str, steps) -> None:
        """Put a notice on record (verdict ok) that the panel need not keep showing: it is
        decided with the event being applied, before what the panel shows next."""
        self.records.append(Decision(self.t, "ok", irregularity, tuple(cards), rule, tuple(steps), 0, self.phase))

    def record_left_open(self, corr: Correction) -> None:
        """Put *corr* on record as left open when its hand ended, with the steps never seen done."""
        undone = tuple(todo.step for todo in corr.todos if not todo.done)
        self.record(corr.irregularity, corr.cards, corr.rule, (Step("over.left_open"),) + undone)

    def _emit(self, t: float) -> list[Decision]:
        top = on_panel(self.corrections)
        for corr in self.corrections:
            if (corr is not top and corr.born == self.seq != top.born and corr.verdict == "ok"
                    and corr.irregularity):
                # A notice under a step the dealer must still do: on record now, shown once it is done.
                self.record(corr.irregularity, corr.cards, corr.rule, [todo.step for todo in corr.todos])
        records, self.records = self.records, []
        if top is not None and (top.verdict != "ok" or not self.hand.cards_deciding()):
            new = Decision(t, top.verdict, top.irregularity, top.cards, top.rule,
                           tuple(todo.step for todo in top.todos), top.current, self.phase)
        elif self.hand.cards_deciding():
            # RULES.md: the LED stays amber through a grace period; a button inside it changes nothing
            # on the panel until the cards have decided.
            new = Decision(t, "correct", None, self.hand.cards_deciding(), "", (Step("grace.cards_decide"),), 0,
                           self.phase)
        else:
            new = Decision(t, "ok", None, (), "", (), 0, self.phase)
        if new.same_as(self.decision) and not records:
            return []
        self.decision = new
        # After a record the panel's decision follows, even unchanged: it is what stays shown.
        return records + [new]


# ---------------------------------------------------------------- the engine's own outcomes
@outcome("start_hand")
def _start_hand(eng: HandEngine, seen: Seen) -> None:
    """A new hand: every card back in the stub, the deal begins."""
    e = seen.event
    for corr in eng.corrections:
        if corr.born == eng.seq and corr.irregularity is not None:
            # Decided by this event, the hand before ending unannounced: on record, not lost.
            eng.record_left_open(corr)
    eng.hand = HandTracker(e.players, e.hole_cards or 2, e.seats, eng.joker_keys, bool(e.mouth_sensor))
    eng.corrections = []
    eng.start_hand()
    notices, eng.pending_notices = eng.pending_notices, []
    for step in notices:
        eng.open_correction("READER_DEGRADED", [], [Todo(step)])


@outcome("reader_up")
def _reader_up(eng: HandEngine, seen: Seen) -> None:
    """The reader answers again."""
    eng.faulted_readers.discard(seen.event.reader)


_INDEX = compile_book()
