"""Corrections in progress: their steps, what the box must observe to count a step done,
and the typed state a correction carries while it is open."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from dealerbox.domain.decisions import Step
from dealerbox.domain.events import Event

#: What the box must observe to count a step done: ``(engine, event, todo, correction) -> bool``.
#: The engine stays unnamed here: it builds on the corrections, not the other way round.
Answer = Callable[..., bool]
#: What a step does to the tracking once it is done: ``(engine, event, todo, correction) -> None``.
Effect = Callable[..., None]
#: Answer name (as the open-steps table spells it) -> what the box must observe.
ANSWERS: dict[str, Answer] = {}
#: Effect name (as the open-steps table spells it) -> what the step does once done.
EFFECTS: dict[str, Effect] = {}


def _registers_into(registry: dict, what: str):
    def named(name: str):
        def register(fn):
            registry[name] = fn
            return fn
        return register
    named.__doc__ = f"Register the decorated function as {what} *name* of the open-steps table."
    return named


seen_done = _registers_into(ANSWERS, "answer")
when_done = _registers_into(EFFECTS, "effect")


@dataclass(slots=True)
class Todo:
    """A step of a correction, and whether the box counts it done.

    How the box sees the step done, and what it does then, is the open-steps table's
    (:mod:`dealerbox.rules.open_steps`), by the step's key. ``about`` is what the procedure
    binds the table's answer to when the step's own values do not say it (the hole-card count
    the deal must reach, the round the hand must be moved into, a card other than which must
    come out).
    """

    step: Step
    about: object = None
    done: bool = False


@dataclass(slots=True)
class VoidedDeal:
    """The cards of a premature deal: where they go when taken off the board."""

    street: str
    dest: str
    back: list


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
    #: The time of the event that opened it.
    opened_t: float = 0.0
    #: The street the correction is about (its procedure's), or None.
    street: str | None = None
    #: Where a card taken off the board goes, for the cards this correction moves.
    off_board: dict = field(default_factory=dict)
    #: A premature deal this correction voids.
    voided: VoidedDeal | None = None
    #: The street whose skipped player has not answered yet (C40).
    skipped: str | None = None
    #: C40: the skipped player's ROUND DONE was taken as "acts"; the street's burn_due before it,
    #: so that an ACK coming next ("folds", the buttons the other way round) can still be taken.
    acted_burn_due: bool | None = None
    #: The unknown tag the floor is asked about.
    unknown: str | None = None
    #: A card that must go back on the board (it left it while a reshuffle was due).
    keep_on_board: str | None = None
    #: The question this correction asks when a missed read explains what the box saw as
    #: well as a dealing error does (``exposed_position``, ``burn_returned``, ``expected_unread``,
    #: ``burn_unread``, ``hole_card_again``).
    asks: str | None = None
    #: What the dealer's ACK to the question (``asks``) means for the tracking: ``(engine) -> None``.
    on_ack: Callable[..., None] | None = None
    #: A WRONG_CORRECTION that shows another correction's step again (a button that step does not take,
    #: its cards drawn before its button, a card laid over the card it takes off): that correction and
    #: the step. It ends when the step is done, or when that correction leaves the panel.
    again: "tuple[Correction, Todo] | None" = None

    @property
    def current(self) -> int:
        """Index of the first step not done (``len(todos)`` when all are)."""
        for i, todo in enumerate(self.todos):
            if not todo.done:
                return i
        return len(self.todos)

    @property
    def finished(self) -> bool:
        """All steps done, and not a halt (a halt lasts until the next hand)."""
        return not self.halting and all(t.done for t in self.todos)


def on_panel(corrections: list[Correction]) -> Correction | None:
    """The correction the panel shows: the newest the dealer must act on (not verdict ok), else the
    newest. A notice (a tag not read, a river's double burn recorded) never hides an amber or a floor
    call: RULES.md, green is a promise about the cards on the table."""
    acting = [c for c in corrections if c.verdict != "ok"]
    return (acting or corrections or [None])[-1]


# --------------------------------------------------------------------------
# What the box must observe to count a step done (the open-steps table's answers)
# --------------------------------------------------------------------------

def _card_of(todo: Todo):
    return todo.about if todo.about is not None else todo.step.param("card")


def _cards_of(todo: Todo, corr: Correction):
    # A premature deal's cards may grow while the step is open (a late card of the same deal).
    return corr.voided.back if corr.voided is not None else todo.step.param("cards", ())


def _pressed(e: Event, *names: str) -> bool:
    return e.ev == "button" and e.name in names


@seen_done("card_drawn")
def card_drawn(eng, e: Event, todo: Todo, corr: Correction) -> bool:
    """The next shoe card is the step's card (for a card that left the stub unread: the card it turned
    out to be)."""
    return e.ev == "shoe" and eng.hand.last_shoe == eng.hand.known_as(_card_of(todo))


@seen_done("other_card_drawn")
def other_card_drawn(eng, e: Event, todo: Todo, corr: Correction) -> bool:
    """A shoe card other than the one the step replaces came out."""
    return e.ev == "shoe" and eng.hand.last_shoe != todo.about


@seen_done("replacement_laid")
def replacement_laid(eng, e: Event, todo: Todo, corr: Correction) -> bool:
    """The street the card was met on has all its cards on the board: the replacement was laid (a card
    drawn and kept off the board is not it). Met outside a street: another card came out of the shoe."""
    st = eng.hand.streets.get(corr.street or "")
    if st is None:
        return other_card_drawn(eng, e, todo, corr)
    return st.complete


@seen_done("card_off_board")
def card_off_board(eng, e: Event, todo: Todo, corr: Correction) -> bool:
    """The step's card left the board."""
    return e.ev == "board_off" and eng.hand.where.get(_card_of(todo)) != "board"


@seen_done("card_back_on_board")
def card_back_on_board(eng, e: Event, todo: Todo, corr: Correction) -> bool:
    """The step's card is on the board again."""
    return e.ev == "board_on" and eng.hand.where.get(_card_of(todo)) == "board"


@seen_done("cards_off_board")
def cards_off_board(eng, e: Event, todo: Todo, corr: Correction) -> bool:
    """Every card the step names left the board (a premature deal's, however many it grew to)."""
    return e.ev == "board_off" and all(eng.hand.where.get(c) != "board" for c in _cards_of(todo, corr))


@seen_done("one_card_off_board")
def one_card_off_board(eng, e: Event, todo: Todo, corr: Correction) -> bool:
    """Exactly one of the step's cards left the board (the floor's pick)."""
    return e.ev == "board_off" and len(_picked(eng, todo)) == 1


def _picked(eng, todo: Todo) -> list:
    return [c for c in todo.step.param("cards", ()) if eng.hand.where.get(c) != "board"]


@seen_done("street_complete")
def street_complete(eng, e: Event, todo: Todo, corr: Correction) -> bool:
    """The step's street (``about``, or the step's own) has all its cards on the board."""
    return eng.hand.streets[todo.about or todo.step.param("street")].complete


@seen_done("round_done_into")
def round_done_into(eng, e: Event, todo: Todo, corr: Correction) -> bool:
    """ROUND DONE moved the hand into the phase ``about`` names."""
    return _pressed(e, "round_done") and eng.phase == todo.about


@seen_done("deal_drawn")
def deal_drawn(eng, e: Event, todo: Todo, corr: Correction) -> bool:
    """As many hole cards are out as ``about`` says."""
    return len(eng.hand.deal_cards) >= todo.about


@seen_done("deal_complete")
def deal_complete(eng, e: Event, todo: Todo, corr: Correction) -> bool:
    """The deal phase is over."""
    return eng.phase != "deal"


@seen_done("acked")
def acked(eng, e: Event, todo: Todo, corr: Correction) -> bool:
    """The dealer pressed ACK."""
    return _pressed(e, "ack")


@seen_done("acked_or_round_done")
def acked_or_round_done(eng, e: Event, todo: Todo, corr: Correction) -> bool:
    """The skipped player's answer: ACK (folds) or ROUND DONE (acts)."""
    return _pressed(e, "ack", "round_done")


@seen_done("acked_or_card_drawn")
def acked_or_card_drawn(eng, e: Event, todo: Todo, corr: Correction) -> bool:
    """ACK, or the step's card came out of the shoe next."""
    return _pressed(e, "ack") or (e.ev == "shoe" and eng.hand.last_shoe == _card_of(todo))


@seen_done("closed_deal_done")
def closed_deal_done(eng, e: Event, todo: Todo, corr: Correction) -> bool:
    """The later streets were dealt face down aside (C40)."""
    return eng.hand.closed is None


# --------------------------------------------------------------------------
# What a step does to the tracking once it is done (the open-steps table's effects)
# --------------------------------------------------------------------------

@when_done("card_may_return")
def card_may_return(eng, e: Event, todo: Todo, corr: Correction) -> None:
    """The step's card went back into the stub: it may come out again."""
    eng.hand.returning.add(_card_of(todo))


@when_done("stub_reshuffled")
def stub_reshuffled(eng, e: Event, todo: Todo, corr: Correction) -> None:
    """The stub was reshuffled: remember what must not come out of it."""
    eng.hand.reshuffled()


@when_done("aside_reshuffled_in")
def aside_reshuffled_in(eng, e: Event, todo: Todo, corr: Correction) -> None:
    """The set-aside cards are reshuffled into the stub."""
    hand = eng.hand
    for c in _cards_of(todo, corr):
        if hand.where.get(c) == "aside":
            hand.where[c] = "stub"
            hand.returning.add(c)
    hand.reshuffled()


@when_done("picked_is_burn")
def picked_is_burn(eng, e: Event, todo: Todo, corr: Correction) -> None:
    """The floor's pick is the turn's burn; the other three stay as the flop."""
    picked = _picked(eng, todo)[0]
    flop = eng.hand.streets["flop"]
    flop.board = [c for c in flop.board if c != picked]
    flop.burns.append(picked)
    for other in eng.corrections:
        for c in todo.step.param("cards", ()):
            other.off_board.pop(c, None)


@when_done("question_answered")
def question_answered(eng, e: Event, todo: Todo, corr: Correction) -> None:
    """The question was answered: ACK runs what the correction says it means (``on_ack``)."""
    if _pressed(e, "ack") and corr.on_ack is not None:
        corr.on_ack(eng)
