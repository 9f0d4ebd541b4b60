"""The rule book: what each CONTRACT.md event does in each phase, as data.

Every event is a *trigger* (buttons are ``button.NAME``; the waits that
run out are ``grace.extra``, ``grace.seats``, ``grace.held`` and ``grace.double_burn``). :data:`RULE_BOOK` lists,
per trigger, rules in the order they are tried: the phases a rule applies in,
its named guards (all must hold; ``not NAME`` negates one) and the named
outcome it leads to. The first rule that applies decides, unless it ``goes_on``
(bookkeeping that every later rule relies on).

The book is data and two registries, and imports none of the modules that fill
them: the guards register themselves in :data:`GUARDS` (module :mod:`.guards`),
the outcomes in :data:`OUTCOMES` (modules :mod:`.dealing`, :mod:`.board`,
:mod:`.buttons`, :mod:`.sensing`, :mod:`.procedures` and the engine's own); the
engine imports them all before it compiles the book. An irregularity's correction is the profile's
procedure (:mod:`.procedures`).

A row guarded by ``answers_open_step`` takes the answer of a correction's step (a question answered
by MISDEAL, by ACK or ROUND DONE saying a burn went unread, or by the play): which steps, the open-steps table says
(:mod:`.open_steps`, ``answered_in_book``), and the row applies only while one of them is open.

:func:`~dealerbox.rules.book_markdown.render_markdown` prints the book beside the
profiles' choices; the rendering is committed as ``docs/RULEBOOK.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from dealerbox.rules.open_steps import answers_an_open_step, steps_answered_by

PHASES = ("idle", "deal", "preflop", "flop", "turn", "river", "showdown", "over", "halted")
ANY = PHASES
PLAYING = ("deal", "preflop", "flop", "turn", "river", "showdown")
STREET_PHASES = ("flop", "turn", "river")
NOT_PLAYING = ("idle", "over", "halted")

Guard = Callable[..., bool]
Outcome = Callable[..., None]
#: Guard name -> predicate ``(engine, seen) -> bool``.
GUARDS: dict[str, Guard] = {}
#: Outcome name -> action ``(engine, seen) -> None``.
OUTCOMES: dict[str, Outcome] = {}


#: The guard of a row whose outcome takes the answer of an open step: which steps, the open-steps
#: table says (:attr:`~dealerbox.rules.open_steps.StepContract.answered_in_book`).
ANSWERS_OPEN_STEP = "answers_open_step"
#: Guard name -> what it asks, for the rendered book.
GUARD_DOCS: dict[str, str] = {}


def guard(name: str, doc: str | None = None):
    """Register the decorated predicate as guard *name* (*doc* defaults to its docstring)."""
    def register(fn: Guard) -> Guard:
        GUARDS[name] = fn
        GUARD_DOCS[name] = doc or (fn.__doc__ or "").strip().rstrip(".")
        return fn
    return register


def outcome(name: str):
    """Register the decorated function as outcome *name*."""
    def register(fn: Outcome) -> Outcome:
        OUTCOMES[name] = fn
        return fn
    return register


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of the rule book."""

    trigger: str
    phases: tuple[str, ...]
    guards: tuple[str, ...]
    outcome: str
    #: RULES.md ids this outcome may raise (its correction is the profile's procedure).
    raises: tuple[str, ...] = ()
    #: Bookkeeping: the later rules are tried too.
    goes_on: bool = False


def _r(trigger, phases, guards, outcome, *raises, goes_on=False) -> Rule:
    return Rule(trigger, tuple(phases), tuple(guards), outcome, tuple(raises), goes_on)


_BOARD_RULINGS = ("MISSED_BURN", "DOUBLE_BURN", "FOUR_CARD_FLOP", "PREMATURE_FLOP", "PREMATURE_TURN",
                  "PREMATURE_RIVER", "WRONG_CORRECTION")
_AFTER_DEAL = tuple(p for p in PLAYING if p != "preflop")

RULE_BOOK: tuple[Rule, ...] = (
    _r("new_hand", ANY, (), "start_hand"),
    _r("reader_fault", ANY, (), "reader_down"),
    _r("reader_ok", ANY, (), "reader_up"),
    # -- a card leaves the shoe
    _r("shoe", ANY, (), "remember_draw", goes_on=True),
    _r("shoe", ANY, (), "count_draw", "READER_DEGRADED", goes_on=True),
    _r("shoe", ("halted",), (), "flag_after_halt"),
    _r("shoe", ("idle",), (), "draw_between_hands"),
    _r("shoe", ("over",), (), "rabbit_hunt", "RABBIT_HUNT"),
    _r("shoe", PLAYING, ("is_foreign",), "void_foreign", "FOREIGN_CARD"),
    _r("shoe", PLAYING, ("is_unknown",), "ask_floor_unknown", "UNKNOWN_TAG", goes_on=True),
    _r("shoe", PLAYING, ("held_on_board",), "late_read", *_BOARD_RULINGS),
    _r("shoe", PLAYING, ("is_unread", "card_expected"), "unread_is_expected_card", goes_on=True),
    _r("shoe", PLAYING, ("unread_card_expected", "is_card", "in_stub"), "unread_card_read", goes_on=True),
    _r("shoe", ("flop",), ("not mouth_sensor", "last_hole_card_again"), "ask_hole_card_again", "DUPLICATE_CARD",
       "UNREAD_CARD", goes_on=True),
    _r("shoe", PLAYING, ("not_from_stub", "reshuffled_out", "correction_open"), "reshuffled_in_by_mistake",
       "WRONG_CORRECTION"),
    _r("shoe", PLAYING, ("not_from_stub", "reshuffled_out"), "stub_contaminated", "STUB_CONTAMINATION"),
    _r("shoe", PLAYING, ("not mouth_sensor", "not_from_stub", "burn_may_have_come_back"), "ask_burn_returned",
       "DUPLICATE_CARD", goes_on=True),
    _r("shoe", PLAYING, ("not_from_stub",), "duplicate", "DUPLICATE_CARD"),
    _r("shoe", _AFTER_DEAL, ("not mouth_sensor", "other_card_expected", "expected_card_in_stub"),
       "ask_expected_card_unread", "WRONG_CORRECTION", "UNREAD_CARD"),
    _r("shoe", _AFTER_DEAL, ("other_card_expected",), "wrong_card_drawn", "WRONG_CORRECTION"),
    _r("shoe", PLAYING, (), "take_from_stub", goes_on=True),
    _r("shoe", PLAYING, ("is_unread",), "note_unread", "UNREAD_CARD", goes_on=True),
    _r("shoe", PLAYING, ("is_joker",), "joker_drawn", "JOKER"),
    _r("shoe", PLAYING, ("closed_deal_open",), "closed_draw"),
    _r("shoe", ("deal",), (), "deal_card"),
    _r("shoe", ("preflop",), ("first_round_open",), "extra_or_early_burn", "EXTRA_CARD"),
    _r("shoe", ("flop",), ("early_flop_passed_over",), "extra_cards_found_late", "EXTRA_CARDS"),
    _r("shoe", PLAYING, (), "street_draw"),
    # -- a card reaches the board
    _r("board_on", NOT_PLAYING, ("is_card", "not in_stub"), "to_board"),
    _r("board_on", PLAYING, ("is_foreign",), "void_foreign", "FOREIGN_CARD"),
    _r("board_on", PLAYING, ("is_unknown",), "ask_floor_unknown", "UNKNOWN_TAG"),
    _r("board_on", PLAYING, ("is_joker", "in_hand"), "joker_drawn", "JOKER"),
    _r("board_on", PLAYING, ("is_joker",), "to_board"),
    _r("board_on", PLAYING, ("on_board",), "nothing"),
    _r("board_on", PLAYING, ("asked_back_on_board",), "to_board"),
    _r("board_on", PLAYING, ("in_stub", "not returning", "unread_card_set_aside"), "unread_aside_shown",
       "WRONG_CORRECTION"),
    _r("board_on", PLAYING, ("in_stub", "not returning", "unread_draw_open"), "unread_card_shown", *_BOARD_RULINGS),
    _r("board_on", PLAYING, ("in_stub", "not returning", "board_card_due"), "hold_for_late_read"),
    _r("board_on", PLAYING, ("in_stub", "not returning", "premature_deal_goes_on"), "hold_for_late_read"),
    _r("board_on", PLAYING, ("in_stub", "not returning"), "not_from_shoe", "BOARD_NOT_FROM_SHOE"),
    _r("board_on", PLAYING, ("short_deal_answered_by_the_flop",), "short_deal_was_complete", "UNREAD_CARD",
       *_BOARD_RULINGS),
    _r("board_on", PLAYING, ("set_aside",), "aside_to_board"),
    _r("board_on", PLAYING, ("answers_open_step", "in_hand"), "street_card_answered_by_play", "UNREAD_CARD",
       *_BOARD_RULINGS),
    _r("board_on", PLAYING, ("is_card", "second_burn_laid_with_its_street"), "second_burn_on_board",
       "FOUR_CARD_FLOP"),
    _r("board_on", PLAYING, ("in_hand",), "board_card", *_BOARD_RULINGS),
    _r("board_on", PLAYING, ("taken_for_a_fast_pair_burn",), "board_card", "MISSED_BURN"),
    _r("board_on", PLAYING, ("at_a_seat",), "not_from_shoe", "BOARD_NOT_FROM_SHOE"),
    # -- a card leaves the board
    _r("board_off", ANY, ("is_card", "on_board", "correction_moves_it"), "take_off_as_told"),
    _r("board_off", PLAYING, ("is_card", "on_board", "reshuffle_pending"), "must_stay_out", "WRONG_CORRECTION"),
    _r("board_off", PLAYING, ("is_card", "on_board", "returning"), "taken_off_as_ruled"),
    _r("board_off", PLAYING, ("is_card", "on_board", "lifting_is_wrong"), "lifted_during_step", "WRONG_CORRECTION"),
    _r("board_off", PLAYING, ("is_joker", "on_board"), "to_burn"),
    _r("board_off", PLAYING, ("is_card", "held"), "forget_held"),
    # -- side zones
    _r("zone_on", PLAYING, ("is_card", "in_muck_zone", "not in_stub"), "to_muck"),
    _r("zone_on", PLAYING, ("is_card", "in_burn_zone", "in_hand"), "to_burn"),
    _r("zone_on", PLAYING, ("is_card", "in_seat_zone", "in_stub", "unread_card_at_that_seat"), "unread_seen_at_seat",
       goes_on=True),
    _r("zone_on", ("deal",), ("is_card", "in_seat_zone", "in_stub", "not mouth_sensor", "seat_is_next_in_deal"),
       "unread_hole_card_at_seat", "UNREAD_CARD", goes_on=True),
    _r("zone_on", PLAYING, ("is_card", "in_seat_zone"), "seat_zone", "SEAT_ERROR"),
    # -- buttons
    _r("button.hand_over", PLAYING, (), "end_hand"),
    _r("button.round_done", ("deal",), ("short_deal_open",), "nothing"),
    _r("button.round_done", ("deal",), ("not mouth_sensor", "deal_a_few_short"), "short_deal", "SHORT_DEAL"),
    _r("button.round_done", ("deal",), ("mouth_sensor", "deal_a_few_short"), "seat_short", "SHORT_DEAL"),
    _r("button.round_done", ("deal", "showdown"), (), "nothing"),
    _r("button.round_done", STREET_PHASES, ("answers_open_step", "not mouth_sensor", "burn_question_bet_on"),
       "burn_was_unread", "UNREAD_CARD", goes_on=True),
    _r("button.round_done", STREET_PHASES, ("answers_open_step", "mouth_sensor", "missed_burn_street_has_unread_draw"),
       "missed_burn_read_late", goes_on=True),
    _r("button.round_done", PLAYING, ("skipped_question_open",), "nothing"),
    _r("button.round_done", STREET_PHASES,
       ("not mouth_sensor", "street_one_card_unseen", "not street_card_question_open"), "ask_street_card_there",
       "UNREAD_CARD"),
    _r("button.round_done", STREET_PHASES, ("street_shows_nothing",), "round_called_ahead"),
    _r("button.round_done", PLAYING, (), "next_round", "SEAT_ERROR", "WRONG_CORRECTION", "DOUBLE_BURN"),
    _r("button.ack", STREET_PHASES, ("acted_answer_untouched",), "skipped_folds_after_round"),
    _r("button.ack", PLAYING, ("answers_open_step", "not mouth_sensor", "burn_question_open"), "burn_was_unread",
       "UNREAD_CARD"),
    _r("button.ack", STREET_PHASES, ("answers_open_step", "mouth_sensor", "missed_burn_street_has_unread_draw"),
       "missed_burn_read_late"),
    _r("button.exposed", PLAYING, ("last_draw_dealt", "after_first_round"), "late_error", "LATE_ERROR"),
    _r("button.exposed", PLAYING, ("last_draw_dealt", "exposed_before"), "misdeal_exposed_twice", "EXPOSED_TWICE"),
    _r("button.exposed", PLAYING, ("last_draw_dealt", "not mouth_sensor", "second_card_dealt"),
       "ask_exposed_position", "EXPOSED_EARLY"),
    _r("button.exposed", PLAYING, ("last_draw_dealt", "among_first_two"), "misdeal_exposed_early",
       "EXPOSED_EARLY"),
    _r("button.exposed", PLAYING, ("last_draw_dealt",), "exposed_is_burn", "EXPOSED_DEAL"),
    _r("button.boxed", PLAYING, ("last_draw_out", "last_draw_dealt", "after_first_round"), "late_error",
       "LATE_ERROR"),
    _r("button.boxed", PLAYING, ("last_draw_out", "last_draw_dealt", "boxed_before"), "misdeal_boxed_twice",
       "BOXED_TWICE"),
    _r("button.boxed", PLAYING, ("last_draw_out", "last_draw_dealt"), "boxed_hole_card", "BOXED_CARD"),
    _r("button.boxed", PLAYING, ("last_draw_out", "drawn_for_a_street", "not last_draw_on_board"),
       "boxed_street_card", "BOXED_CARD"),
    _r("button.premature", STREET_PHASES, (), "take_round_back", "PREMATURE_FLOP", "PREMATURE_TURN",
       "PREMATURE_RIVER"),
    _r("button.misdeal", PLAYING, ("answers_open_step",), "unknown_is_foreign", "FOREIGN_CARD"),
    _r("button.misdeal", PLAYING, ("answers_open_step",), "exposed_second_card_confirmed", "EXPOSED_EARLY"),
    _r("button.misdeal", PLAYING, ("answers_open_step",), "hole_card_again_confirmed", "DUPLICATE_CARD"),
    _r("button.misdeal", PLAYING, ("late_misdeal_asked",), "misdeal_called"),
    _r("button.misdeal", PLAYING, ("after_first_round",), "late_misdeal", "LATE_ERROR"),
    _r("button.misdeal", PLAYING, (), "misdeal_called"),
    _r("button.floor", PLAYING, (), "floor_called"),
    # -- grace periods run out (checked on every event's time)
    _r("grace.extra", ("preflop", "flop"), ("not flop_card_on_board",), "extra_cards_misdeal", "EXTRA_CARDS"),
    _r("grace.seats", ANY, (), "check_seat_counts", "SEAT_ERROR"),
    _r("grace.held", PLAYING, ("mouth_sensor",), "held_not_from_shoe", "BOARD_NOT_FROM_SHOE"),
    _r("grace.held", PLAYING, (), "held_is_unread_card", "UNREAD_CARD", *_BOARD_RULINGS),
    _r("grace.held", NOT_PLAYING, (), "forget_held"),
    _r("grace.double_burn", PLAYING, (), "double_burn_after_spread", "DOUBLE_BURN"),
)


# --------------------------------------------------------------------------
# Dispatch
# --------------------------------------------------------------------------

Compiled = tuple[tuple[tuple[Guard, ...], Outcome, bool], ...]


def _compile_guard(name: str) -> Guard:
    if name.startswith("not "):
        fn = GUARDS[name[4:]]
        return lambda eng, seen: not fn(eng, seen)
    return GUARDS[name]


def compile_book(book=RULE_BOOK) -> dict[tuple[str, str], Compiled]:
    """(trigger, phase) -> the rules to try, in order, as (guards, outcome, goes_on)."""
    index: dict[tuple[str, str], list] = {}
    for rule in book:
        # ``answers_open_step``: the open-steps table says which steps' answer the outcome takes; the
        # row applies only while one is open (never, should the table name none).
        guards = tuple(answers_an_open_step(steps_answered_by(rule.outcome)) if g == ANSWERS_OPEN_STEP
                       else _compile_guard(g) for g in rule.guards)
        row = (guards, OUTCOMES[rule.outcome], rule.goes_on)
        for phase in rule.phases:
            index.setdefault((rule.trigger, phase), []).append(row)
    return {k: tuple(v) for k, v in index.items()}


def run(index, trigger: str, eng, seen) -> None:
    """Apply the first rule of *trigger* whose phase and guards hold (and the ``goes_on`` ones before it)."""
    for guards, act, goes_on in index.get((trigger, eng.phase), ()):
        for g in guards:
            if not g(eng, seen):
                break
        else:
            act(eng, seen)
            if not goes_on:
                return


@outcome("nothing")
def _nothing(eng, seen) -> None:
    """Nothing the rules judge."""
