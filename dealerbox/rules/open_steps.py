"""What answers each step a correction shows, what is a wrong correction, and what ends it.

RULES.md ("What the box must tell apart"): a correction never stays open silently while the
hand moves past it. Each step the panel can show has a contract here, as data beside the
procedures (:mod:`.procedures`, :mod:`.premature_streets`, :mod:`.sensing`), rendered into
``docs/RULEBOOK.md``:

- ``answers``: the dealer's actions that settle it, in any order of the buttons;
- ``wrong``: the actions no answer allows (the rule book's rows raise ``WRONG_CORRECTION`` for them);
- ``ends``: what ends the step;
- ``past``: the moments past which the step can no longer be done, and the ruling then
  (:data:`RULINGS`). The engine applies them after every event (:func:`overtaken`).

The moments (:data:`MOMENTS`): ``later_card`` (a card of a later street than the correction's
reaches the board), ``round_done_in_deal`` (the first round called done with a seat still owed
its card, no SHORT_DEAL question asking).
The ruling past a moment (:data:`RULINGS`) is ``floor``: ``WRONG_CORRECTION`` with verdict floor, the
hand can no longer be put right. (An action the hand can still be put right from is a row of the
rule book that raises ``WRONG_CORRECTION`` amber with the step that puts it right.)
"""

from __future__ import annotations

from dataclasses import dataclass

from dealerbox.rules.board import street_progress
from dealerbox.rules.buttons import next_round
from dealerbox.rules.procedures import correct
from dealerbox.rules.tracker import STREETS, Seen

#: Moment -> what it means, for the rendered book.
MOMENTS = {
    "later_card": "a card of a later street reaches the board",
    "round_done_in_deal": "ROUND DONE while the deal still owes a seat its card, and no SHORT_DEAL question "
                          "asks to count (with a mouth sensor the box knows the count)",
}
#: Ruling -> what the box does, for the rendered book.
RULINGS = {
    "floor": "WRONG_CORRECTION, floor: the hand can no longer be put right",
}


@dataclass(frozen=True, slots=True)
class StepContract:
    """The answers, wrong corrections and end of one step the panel shows."""

    answers: str
    wrong: str
    ends: str
    #: (moment, ruling) pairs: past the moment, the step can no longer be done.
    past: tuple[tuple[str, str], ...] = ()


def _c(answers: str, wrong: str = "-", ends: str = "seen done, or the hand ends (on record if not done)",
       **past: str) -> StepContract:
    return StepContract(answers, wrong, ends, tuple(past.items()))


_ACK = "ACK"
_PREMATURE_PAST = {"later_card": "floor"}
_DEAL_PAST = {"round_done_in_deal": "floor"}
_INFO = _c("ACK, or anything the dealer does next", ends="the next hand; information only")
_HALT = _c("new_hand (the hand is stopped)", "any card drawn (flagged after the stop)", "the next new_hand")
_FLOOR = _c("ACK once the floor has ruled", ends="ACK, or the hand ends")

STEP_CONTRACTS: dict[str, StepContract] = {
    # -- stops and the floor
    "halt.misdeal": _HALT, "halt.misdeal_called": _HALT, "halt.void": _HALT, "halt.void_duplicate": _HALT,
    "halt.void_foreign": _HALT, "halt.card_after_stop": _HALT,
    "floor.decides": _FLOOR, "floor.called": _FLOOR, "floor.house_rule": _FLOOR,
    "late.substantial_action": _FLOOR, "rabbit.not_allowed": _FLOOR, "contamination.call_floor": _FLOOR,
    "notfromshoe.call_floor": _FLOOR, "four_flop.call_floor": _FLOOR,
    "unknown.call_floor": _c("ACK (the floor is called)"),
    "unknown.floor_confirms": _c("MISDEAL (the floor confirms: foreign, void); ACK (play on)"),
    # -- the deal
    "exposed.finish_deal": _c("the rest of the deal drawn", "a card to the board before the deal is done",
                              **_DEAL_PAST),
    "exposed.replace": _c("the seat's card drawn, the deal over", **_DEAL_PAST),
    "exposed.is_burn": _c("ACK, or the next step seen done"),
    "exposed.flop_no_burn": _c("the flop's cards laid with no burn drawn", "a burn drawn for the flop "
                               "(WRONG_CORRECTION: burn not due, floor)"),
    "exposed.second_or_later": _c("ACK (a read was missed: the third card or later); MISDEAL (the second)"),
    "boxed.show_and_burn": _c("ACK, or the next step seen done"),
    "boxed.replace": _c("another card drawn for the seat", **_DEAL_PAST),
    "boxed.replace_next": _c("another card drawn"),
    "joker.show_and_burn": _c("ACK, or the next step seen done"),
    "joker.replace_seat": _c("another card drawn for the seat", **_DEAL_PAST),
    "joker.replace_next": _c("another card drawn"),
    "extra.stop": _c("ACK, ROUND DONE, or the card drawn again"),
    "extra.return_on_top": _c("ACK, ROUND DONE, or the card drawn again"),
    "extra.burn_it": _c("the card drawn again (an unread card: any card not yet seen in the hand)",
                        "another card drawn (WRONG_CORRECTION: put it back, draw the card)"),
    "short_deal.count": _c("ACK (every seat has its cards); the short seat's card drawn; a card to the board "
                           "(the deal was complete)"),
    "duplicate.hole_card_again": _c("ACK (it was put back); MISDEAL (two cards carry the tag: void)"),
    "duplicate.returned_burn": _c("ACK (put back as a second burn); MISDEAL is not an answer: play goes on"),
    # -- burns
    "missed_burn.take_off": _c("the card off the board; ACK without a mouth sensor (a burn went unread); "
                               "ROUND DONE without a mouth sensor (the play says so: UNREAD_CARD)",
                               "ROUND DONE with a mouth sensor (WRONG_CORRECTION, floor: the street was bet on)",
                               "the card off the board, or ROUND DONE"),
    "missed_burn.next_card": _c("the street's cards all on the board"),
    "double_burn.return_on_top": _c("ACK, or the card drawn again"),
    "double_burn.burn_it": _c("the card drawn again", "another card drawn (WRONG_CORRECTION: put it back)"),
    "double_burn.river_recorded": _INFO,
    # -- too many board cards
    "four_flop.scramble_pick": _c("exactly one of the cards off the board"),
    "four_flop.rest_is_flop": _c("ACK, or the next step seen done"),
    "four_flop.turn_no_burn": _c("the turn laid with no burn drawn", "a burn drawn (WRONG_CORRECTION, floor)"),
    "redeal.cards_back": _c("the cards off the board", "a card off the board that must stay out (put it back)",
                            **_PREMATURE_PAST),
    "redeal.deal_again": _c("the street's cards on the board"),
    "reshuffle.now": _c("RESHUFFLED", "a burn or board card reshuffled in (WRONG_CORRECTION, floor)",
                        **_PREMATURE_PAST),
    # -- premature streets
    "premature.cards_back": _c("the cards off the board", ends="the cards off the board", **_PREMATURE_PAST),
    "premature.set_aside": _c("the card off the board", ends="the card off the board", **_PREMATURE_PAST),
    "premature.burn_stays": _c("ACK, or the next step seen done", **_PREMATURE_PAST),
    "premature.finish_round": _c("ROUND DONE", **_PREMATURE_PAST),
    "premature.burn_and_turn": _c("a burn and the turn laid"),
    "premature.reshuffle_with": _c("RESHUFFLED", **_PREMATURE_PAST),
    "premature.new_street": _c("the street's cards on the board"),
    "premature.new_street_no_burn": _c("the street's cards on the board, no burn drawn",
                                       "a burn drawn (WRONG_CORRECTION: burn not due, floor)"),
    "skipped.ask": _c("ACK (folds: the street stands), in either order with ROUND DONE; ROUND DONE alone "
                      "(acts)", ends="ACK or ROUND DONE; an ACK right after the ROUND DONE is still the fold"),
    "skipped.deal_closed": _c("the later streets drawn face down aside", **_PREMATURE_PAST),
    # -- the dealer strayed from a correction
    "wrong.expected_card": _c("ACK, or the next step seen done"),
    "wrong.put_back_and_draw": _c("the expected card drawn"),
    "wrong.expected_card_or_unread": _c("ACK (the expected card came out unread first); the expected card drawn"),
    "wrong.reshuffled_in": _FLOOR, "wrong.burn_not_due": _FLOOR, "wrong.missed_burn_bet_on": _FLOOR,
    "wrong.step_overtaken": _FLOOR,
    "wrong.keep_on_board": _c("the card back on the board"),
    # -- sensing faults and notices
    "unread.street_card_there": _c("ACK (the card is there, its tag dead: UNREAD_CARD); the street's missing "
                                   "card laid (it was still to come); a burn and a card laid (it was there: "
                                   "the next street)", ends="an answer, or the hand ends"),
    "unread.board_card": _INFO, "unread.burn": _INFO, "unread.card": _INFO, "unread.hole_card": _INFO,
    "unread.some_hole_card": _INFO, "unread.check_deck": _INFO, "unread.check_tags": _INFO,
    "reader.faults_often": _INFO, "reader.misses_reads": _INFO, "over.left_open": _INFO,
}


def _moment(eng, event, key: str, corr) -> str | None:
    """The moment *event* (naming card *key*) is for *corr*, or None."""
    if event.ev == "button" and event.name == "round_done":
        if eng.phase == "deal" and eng.hand.cards_owed() and not any(
                c.irregularity == "SHORT_DEAL" for c in eng.corrections):
            return "round_done_in_deal"
        return None
    if event.ev != "board_on" or corr.street not in STREETS or eng.hand.where.get(key) != "board":
        return None
    hand = eng.hand
    # A card dealt face down aside (C40) belongs to its street as much as one drawn for it.
    st = hand.street_of(key) or next((s for s in hand.streets.values() if key in s.from_aside), None)
    if st is not None and STREETS.index(st.name) > STREETS.index(corr.street):
        return "later_card"
    return None


def overtaken(eng, event, key: str = "") -> None:
    """Judge the open steps *event* (naming card *key*, if any) has carried the hand past (their
    contract's ``past``)."""
    for corr in list(eng.corrections):
        if corr.halting or corr.irregularity is None or corr.born == eng.seq or corr.current >= len(corr.todos):
            continue
        contract = STEP_CONTRACTS.get(corr.todos[corr.current].step.key)
        moment = _moment(eng, event, key, corr) if contract is not None and contract.past else None
        ruling = dict(contract.past).get(moment) if moment else None
        if ruling is None:
            continue
        eng.corrections.remove(corr)
        _as_it_lies(eng, corr)
        if moment == "round_done_in_deal":
            _deal_as_it_lies(eng, event)
        correct(eng, "WRONG_CORRECTION", corr.cards[:1], case="step_overtaken")


def _as_it_lies(eng, corr) -> None:
    """The hand went on past a premature street's correction: the box follows the board as it lies."""
    if corr.voided is None:
        return
    hand = eng.hand
    st = hand.streets[corr.voided.street]
    back = [c for c in corr.voided.back if hand.where.get(c) == "board"]
    if not back:
        return
    hand.closed = None
    hand.returning.difference_update(back)
    burns = [c for c in corr.cards if c not in corr.voided.back and hand.where.get(c) == "burn"]
    st.voided = [c for c in st.voided if c not in back]
    st.drawn = burns + back
    st.burns = burns
    st.board = back
    st.burn_due = bool(burns) or st.burn_due
    st.complete = False
    street_progress(eng, st)


def _deal_as_it_lies(eng, event) -> None:
    """The first round was called done with a seat still owed its card: the deal stands as it lies
    (the floor rules on the short seat), and the round is done."""
    hand = eng.hand
    hand.owed.clear()
    hand.deal_target = min(hand.deal_target, len(hand.deal_cards))
    eng.deal_done()
    next_round(eng, Seen(event))


def missing_contracts(keys) -> list[str]:
    """Step keys among *keys* that have no contract (should be none)."""
    return sorted(set(keys) - set(STEP_CONTRACTS))


__all__ = ["MOMENTS", "RULINGS", "STEP_CONTRACTS", "StepContract", "missing_contracts", "overtaken"]
