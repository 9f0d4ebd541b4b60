"""Corrections in progress: their steps, what the box must observe to count a step done,
and the typed state a correction carries while it is open."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from dealerbox.domain.decisions import Step
from dealerbox.domain.events import Event

#: What the box must observe to count a step done: ``(engine, event) -> bool``. The
#: engine stays unnamed here: it builds on the corrections, not the other way round.
Check = Callable[..., bool]
#: What a step does to the tracking once it is done: ``(engine) -> None``.
OnDone = Callable[..., None]


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
    on_done: OnDone | None = None
    done: bool = False

    @property
    def blocking(self) -> bool:
        """A step the box can see done blocks the steps after it from being ticked by ``ack``."""
        return self.check is not None


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


# --------------------------------------------------------------------------
# What the box must observe to count a step done
# --------------------------------------------------------------------------

def drew(card: str) -> Check:
    """The next shoe card is *card* (for a card that left the stub unread: the card it turned out to be)."""
    return lambda eng, e: e.ev == "shoe" and eng.hand.last_shoe == eng.hand.known_as(card)


def drew_other_than(card: str) -> Check:
    """A shoe card other than *card* came out."""
    return lambda eng, e: e.ev == "shoe" and eng.hand.last_shoe != card


def off_board(card: str) -> Check:
    """*card* left the board."""
    return lambda eng, e: e.ev == "board_off" and eng.hand.where.get(card) != "board"


def back_on_board(card: str) -> Check:
    """*card* is on the board again."""
    return lambda eng, e: e.ev == "board_on" and eng.hand.where.get(card) == "board"


def all_off_board(cards: list) -> Check:
    """Every card of *cards* left the board; *cards* may grow while the step is open
    (a late card of the same premature deal)."""
    return lambda eng, e: e.ev == "board_off" and all(eng.hand.where.get(c) != "board" for c in cards)


def picked_one_of(cards) -> Check:
    """The floor took exactly one of *cards* off the board: it becomes the next burn."""
    cards = tuple(cards)

    def check(eng, e: Event) -> bool:
        if e.ev != "board_off":
            return False
        off = [c for c in cards if eng.hand.where.get(c) != "board"]
        if len(off) != 1:
            return False
        # The floor's pick is the turn's burn; the other three stay as the flop.
        flop = eng.hand.streets["flop"]
        flop.board = [c for c in flop.board if c != off[0]]
        flop.burns.append(off[0])
        for corr in eng.corrections:
            for c in cards:
                corr.off_board.pop(c, None)
        return True
    return check


def street_complete(name: str) -> Check:
    """Street *name* has all its cards on the board."""
    return lambda eng, e: eng.hand.streets[name].complete


def round_done_into(phase: str) -> Check:
    """``round_done`` moved the hand into *phase*."""
    return lambda eng, e: e.ev == "button" and e.name == "round_done" and eng.phase == phase


def deal_drawn(n: int) -> Check:
    """At least *n* hole cards are out."""
    return lambda eng, e: len(eng.hand.deal_cards) >= n


def deal_complete(eng, e: Event) -> bool:
    """The deal phase is over."""
    return eng.phase != "deal"


def answered(eng, e: Event) -> bool:
    """The skipped player's answer: ``ack`` (folds) or ``round_done`` (acts)."""
    return e.ev == "button" and e.name in ("ack", "round_done")


def closed_done(eng, e: Event) -> bool:
    """The later streets were dealt face down aside (C40)."""
    return eng.hand.closed is None


# --------------------------------------------------------------------------
# What a step does to the tracking once it is done
# --------------------------------------------------------------------------

def mark_returning(card: str):
    """*card* went back into the stub: it may come out again."""
    def done(eng) -> None:
        eng.hand.returning.add(card)
    return done


def snapshot_reshuffle(eng) -> None:
    """The stub was reshuffled: remember what must not come out of it."""
    eng.hand.reshuffled()


def return_aside(cards):
    """The set-aside *cards* are reshuffled into the stub."""
    def done(eng) -> None:
        hand = eng.hand
        for c in cards:
            if hand.where.get(c) == "aside":
                hand.where[c] = "stub"
                hand.returning.add(c)
        hand.reshuffled()
    return done
