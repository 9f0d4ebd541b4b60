"""Corrections of a street dealt before its betting round was done (PREMATURE_FLOP,
PREMATURE_TURN, PREMATURE_RIVER): the procedures a profile may choose for them.

They register in :data:`dealerbox.rules.procedures.BUILDERS` like every procedure; they
live apart because the skipped player's answer (C40) moves the hand on to the next
street, which is the board's to judge (:func:`dealerbox.rules.board.street_progress`),
and the board builds on the procedures.
"""

from __future__ import annotations

from dealerbox.rules.board import street_progress
from dealerbox.rules.book import outcome
from dealerbox.rules.corrections import Correction, Todo, VoidedDeal, when_done
from dealerbox.domain.decisions import Step
from dealerbox.rules.guards import acted_answer_untouched
from dealerbox.rules.procedures import procedure
from dealerbox.rules.tracker import STREETS, ClosedDeal, Street


def _void_to(eng, corr: Correction, st: Street, back: list, dest: str) -> Correction:
    corr.off_board.update(dict.fromkeys(back, dest))
    corr.voided = VoidedDeal(st.name, dest, back)
    st.episode = corr
    if dest == "stub":
        eng.hand.returning.update(back)
    return corr


@procedure("new_flop_no_burn")
def new_flop_no_burn(eng, rid, cards, *, street: Street, back: list, burns: list):
    """002 OP5-A: the burn stays, the flop goes back, reshuffle, a new flop after the round."""
    street.burn_due = not burns
    todos = [
        Todo(Step("premature.cards_back", (("cards", tuple(back)),))),
        Todo(Step("premature.burn_stays", (("card", burns[0]),))) if burns else None,
        Todo(Step("reshuffle.now")),
        Todo(Step("premature.finish_round"), about="flop"),
        Todo(Step("premature.new_street_no_burn" if burns else "premature.new_street", (("street", "flop"),))),
    ]
    corr = eng.open_correction(rid, cards, [t for t in todos if t is not None])
    return _void_to(eng, corr, street, back, "stub")


@procedure("set_aside_then_reshuffle_for_river")
def set_aside_then_reshuffle_for_river(eng, rid, cards, *, street: Street, back: list, burns: list):
    """002 OP5-B: the turn is set aside; burn and turn after the round; the river from a reshuffle."""
    street.burn_due = True
    eng.hand.streets["river"].burn_due = False
    corr = eng.open_correction(rid, cards, [
        Todo(Step("premature.set_aside", (("cards", tuple(back)),))),
        Todo(Step("premature.finish_round"), about="turn"),
        Todo(Step("premature.burn_and_turn"), about="turn"),
        Todo(Step("premature.finish_round"), about="river"),
        Todo(Step("premature.reshuffle_with", (("cards", tuple(back)),))),
        Todo(Step("premature.new_street_no_burn", (("street", "river"),))),
    ])
    return _void_to(eng, corr, street, back, "aside")


@procedure("new_river_no_burn")
def new_river_no_burn(eng, rid, cards, *, street: Street, back: list, burns: list):
    """002 OP5-C: the river goes back into the stub; after the round, reshuffle, a new river."""
    street.burn_due = False
    corr = eng.open_correction(rid, cards, [
        Todo(Step("premature.cards_back", (("cards", tuple(back)),))),
        Todo(Step("premature.finish_round"), about="river"),
        Todo(Step("reshuffle.now")),
        Todo(Step("premature.new_street_no_burn", (("street", "river"),))),
    ])
    return _void_to(eng, corr, street, back, "stub")


@procedure("skipped_player_decides")
def skipped_player_decides(eng, rid, cards, *, street: Street, back: list, burns: list):
    """C40: the skipped player decides. Folds: ``ack``, the cards stand. Acts: ``round_done``."""
    corr = eng.open_correction(rid, cards, [
        Todo(Step("skipped.ask", (("street", street.name),))),
    ])
    corr.voided = VoidedDeal(street.name, "stub", list(back))
    corr.skipped = street.name
    street.episode = corr
    return corr


@when_done("skipped_answered")
def skipped_answered(eng, e, todo, corr: Correction) -> None:
    """C40: the skipped player answered: ACK, folds (the street stands); ROUND DONE, acts (the later
    streets face down aside, then the street again)."""
    street = todo.step.param("street")
    if corr.skipped != street:
        return
    corr.skipped = None
    if e.name == "ack":
        _skipped_folded(eng, street)
    else:
        _skipped_acted(eng, street, corr)


def _skipped_folded(eng, street: str) -> None:
    hand = eng.hand
    st = hand.streets[street]
    st.drawn = st.burns + st.voided
    st.board = hand.on_board(st.voided)
    st.voided = []
    hand.rounds_done += 1
    eng.next_round()
    street_progress(eng, st)


def _skipped_acted(eng, street: str, corr: Correction) -> None:
    """The round is done; deal the later streets face down aside, then redeal this street."""
    hand = eng.hand
    st = hand.streets[street]
    hand.rounds_done += 1
    eng.next_round()
    back = corr.voided.back
    later = list(STREETS[STREETS.index(street) + 1:])
    todos = []
    if later:
        hand.closed = ClosedDeal(later)
        todos.append(Todo(Step("skipped.deal_closed", (("streets", tuple(later)),))))
    todos += [
        Todo(Step("redeal.cards_back", (("cards", tuple(back)),))),
        Todo(Step("reshuffle.now")),
        Todo(Step("redeal.deal_again", (("street", street),))),
    ]
    corr.todos.extend(todos)
    corr.acted_burn_due = st.burn_due
    st.burn_due = False
    _void_to(eng, corr, st, back, "stub")


@outcome("skipped_folds_after_round")
def skipped_folds_after_round(eng, seen) -> None:
    """C40: ACK right after the ROUND DONE that was taken as "acts": the skipped player folded and
    the street stands. The buttons came the other way round; the answer is the same (RULES.md)."""
    corr = acted_answer_untouched(eng)
    hand = eng.hand
    st = hand.streets[corr.voided.street]
    back = corr.voided.back
    del corr.todos[1:]
    hand.closed = None
    hand.returning.difference_update(back)
    for c in back:
        corr.off_board.pop(c, None)
    st.burn_due = corr.acted_burn_due
    corr.acted_burn_due = None
    st.drawn = st.burns + st.voided
    st.board = hand.on_board(st.voided)
    st.voided = []
    street_progress(eng, st)
    eng.corrections = [c for c in eng.corrections if c is not corr]
