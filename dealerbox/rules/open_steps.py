"""What answers each step a correction shows, what is a wrong correction, and what ends it.

RULES.md ("What the box must tell apart"): a correction never stays open silently while the
hand moves past it. Each step the panel can show has a contract here, as data beside the
procedures (:mod:`.procedures`, :mod:`.premature_streets`, :mod:`.sensing`), rendered into
``docs/RULEBOOK.md``:

- ``answers``: the dealer's actions that settle it, in any order of the buttons;
- ``wrong``: the actions no answer allows (the rule book's rows raise ``WRONG_CORRECTION`` for them);
- ``ends``: what ends the step;
- ``past``: the moments past which the step can no longer be done, and the ruling then
  (:data:`RULINGS`);
- ``moves``: the step tells the dealer to move a card (:data:`MOVES_A_CARD`);
- ``follows``: the step only says how the hand goes on (:data:`FOLLOW_ON`);
- ``buttons``: the panel buttons among its answers, which the engine ticks the step done by
  (:data:`ANSWER_BUTTONS`; ACK ticks any step the box cannot see done);
- ``waits``: the actions that leave the step open, still to be done, without moving the hand past
  it (:data:`WAITS`): ROUND DONE before the card the step waits for, or with the cards it takes back
  still on a street not yet dealt. RULES.md: the LED is never amber through a street on which the
  step can no longer be done; where it still can, the step stays shown.

The engine runs this table after every event (:func:`judge`), one open step at a time: the
event is checked against the step's answers first (the checks its procedure gave it, and the
rule book's rows that answer it), then against its wrong corrections (the moments of ``past``),
then against its ends (a finished correction leaves the panel; HAND OVER puts one left open on
record). A button among the step's ``buttons`` ticks it done. An event that opens a correction which moves a card, while another correction's step
must still be done (not a ``follows`` step), overtook that step: neither stays, and the floor
decides (RULES.md, sensing faults: a reading the open step leaves in doubt moves no card). No
other code judges a step the hand has moved past.

The moments (:data:`MOMENTS`): ``later_card`` (a card of a later street than the correction's
reaches the board), ``round_done_in_deal`` (the first round called done with a seat still owed
its card, no SHORT_DEAL question asking), ``round_done_card_on_board`` (ROUND DONE while a card
the step takes off the board still lies there: the street was bet on with it). Past a moment the
box follows the board as it lies and rules as :data:`RULINGS` says: ``WRONG_CORRECTION`` with
verdict floor, the hand can no longer be put right. (An action the hand can still be put right
from is a row of the rule book that raises ``WRONG_CORRECTION`` amber with the step that puts it
right.)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from dealerbox.rules.board import street_progress
from dealerbox.rules.buttons import next_round
from dealerbox.rules.procedures import correct
from dealerbox.rules.tracker import STREETS, Seen

#: Moment -> what it means, for the rendered book.
MOMENTS = {
    "later_card": "a card of a later street reaches the board",
    "round_done_in_deal": "ROUND DONE while the deal still owes a seat its card, and no SHORT_DEAL question "
                          "asks to count (with a mouth sensor the box knows the count)",
    "round_done_card_on_board": "ROUND DONE while a card the step takes off the board still lies there, seen "
                                "by the board reader (the street was bet on with it; never a dead tag)",
    "round_done_card_off_board": "ROUND DONE while a card the step puts back on the board is still off it (the "
                                 "street was bet on without it)",
}
#: Ruling -> what the box does, for the rendered book.
RULINGS = {
    "floor": "WRONG_CORRECTION, floor: the hand can no longer be put right (step `wrong.step_overtaken`)",
    "floor_bet_on": "WRONG_CORRECTION, floor: the street was bet on with the card still there (step "
                    "`wrong.missed_burn_bet_on`)",
}
#: Ruling -> the put-right case of ``WRONG_CORRECTION`` it opens (:mod:`.procedures`).
_CASES = {"floor": "step_overtaken", "floor_bet_on": "missed_burn_bet_on"}


@dataclass(frozen=True, slots=True)
class StepContract:
    """The answers, wrong corrections and end of one step the panel shows."""

    answers: str
    wrong: str
    ends: str
    #: (moment, ruling) pairs: past the moment, the step can no longer be done.
    past: tuple[tuple[str, str], ...] = ()
    #: The step tells the dealer to move a card (off the board, back on top, into the stub).
    moves: bool = False
    #: The step only says how the hand goes on (the next street as usual, with or without a burn):
    #: the hand going on answers it, and an irregularity met on the way is judged as its own.
    follows: bool = False
    #: Panel buttons that answer the step (ticked done by :func:`judge`).
    buttons: tuple[str, ...] = ()
    #: Actions that leave the step open without moving the hand past it (its answer still to come).
    waits: tuple[str, ...] = ()


def _c(answers: str, wrong: str = "-", ends: str = "seen done, or the hand ends (on record if not done)",
       **past: str) -> StepContract:
    return StepContract(answers, wrong, ends, tuple(past.items()))


_ACK = "ACK"
_PREMATURE_PAST = {"later_card": "floor"}
_DEAL_PAST = {"round_done_in_deal": "floor"}
_BET_ON_PAST = {"round_done_card_on_board": "floor"}
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
    "joker.show_and_burn": _c("ACK, or the next step seen done; the joker off the board",
                              "ROUND DONE with the joker on the board (WRONG_CORRECTION, floor)", **_BET_ON_PAST),
    "joker.replace_seat": _c("another card drawn for the seat", **_DEAL_PAST),
    "joker.replace_next": _c("another card drawn", "ROUND DONE with the joker on the board (WRONG_CORRECTION, "
                             "floor)", **_BET_ON_PAST),
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
                               "the card off the board, or ROUND DONE", round_done_card_on_board="floor_bet_on"),
    "missed_burn.next_card": _c("the street's cards all on the board"),
    "double_burn.return_on_top": _c("ACK, or the card drawn again"),
    "double_burn.burn_it": _c("the card drawn again", "another card drawn (WRONG_CORRECTION: put it back)"),
    "double_burn.river_recorded": _INFO,
    # -- too many board cards
    "four_flop.scramble_pick": _c("exactly one of the cards off the board"),
    "four_flop.rest_is_flop": _c("ACK, or the next step seen done"),
    "four_flop.turn_no_burn": _c("the turn laid with no burn drawn", "a burn drawn (WRONG_CORRECTION, floor)"),
    "redeal.cards_back": _c("the cards off the board", "a card off the board that must stay out (put it back)",
                            **_PREMATURE_PAST, **_BET_ON_PAST),
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
    "wrong.keep_on_board": _c("the card back on the board", later_card="floor",
                              round_done_card_off_board="floor"),
    # -- sensing faults and notices
    "unread.street_card_there": _c("ACK (the card is there, its tag dead: UNREAD_CARD); the street's missing "
                                   "card laid (it was still to come); a burn and a card laid (it was there: "
                                   "the next street)", ends="an answer, or the hand ends"),
    "unread.board_card": _INFO, "unread.burn": _INFO, "unread.card": _INFO, "unread.hole_card": _INFO,
    "unread.some_hole_card": _INFO, "unread.check_deck": _INFO, "unread.check_tags": _INFO,
    "reader.faults_often": _INFO, "reader.misses_reads": _INFO, "over.left_open": _INFO,
}


#: Steps that tell the dealer to move a card.
MOVES_A_CARD = frozenset({
    "missed_burn.take_off", "double_burn.return_on_top", "four_flop.scramble_pick", "redeal.cards_back",
    "premature.cards_back", "premature.set_aside", "extra.return_on_top", "wrong.put_back_and_draw",
    "wrong.keep_on_board",
})
#: Steps the hand going on answers (:attr:`StepContract.follows`).
FOLLOW_ON = frozenset({
    "exposed.is_burn", "exposed.flop_no_burn", "missed_burn.next_card", "four_flop.rest_is_flop",
    "four_flop.turn_no_burn", "redeal.deal_again", "premature.burn_stays", "premature.finish_round",
    "premature.burn_and_turn", "premature.new_street", "premature.new_street_no_burn", "skipped.deal_closed",
    "boxed.replace_next", "joker.replace_seat", "boxed.replace",
})
#: Steps a panel button answers, besides ACK (:attr:`StepContract.buttons`): the extra card's "stop"
#: and "put it back on top" are answered by ROUND DONE as by ACK (the card comes out next as the burn).
ANSWER_BUTTONS = {"extra.stop": ("round_done",), "extra.return_on_top": ("round_done",)}
#: Steps ROUND DONE leaves open without moving the hand past them (:attr:`StepContract.waits`): their
#: answer is the next card out of the shoe, which comes after the press (a card drawn again, a
#: replacement, the count of a short deal the flop settles), or cards taken back from a street not yet
#: bet on (a premature street's cards; ROUND DONE ends the round before it). A card of a later street
#: on the board (``later_card``) or ROUND DONE on a card the step moves (``round_done_card_on_board``)
#: still overtakes them.
WAITS = {key: ("round_done",) for key in (
    "extra.burn_it", "double_burn.return_on_top", "double_burn.burn_it", "wrong.expected_card",
    "wrong.expected_card_or_unread", "wrong.put_back_and_draw", "joker.show_and_burn", "joker.replace_next",
    "boxed.show_and_burn", "short_deal.count", "premature.cards_back", "premature.set_aside",
    # ROUND DONE before the river shows a card is a round called ahead: the reshuffle still comes first.
    "premature.reshuffle_with",
)}
STEP_CONTRACTS = {key: replace(c, moves=key in MOVES_A_CARD, follows=key in FOLLOW_ON,
                               buttons=ANSWER_BUTTONS.get(key, ()), waits=WAITS.get(key, ()))
                  for key, c in STEP_CONTRACTS.items()}


def must_be_done(corr) -> bool:
    """*corr* shows a step the dealer must still do (amber or floor), not one the hand going on
    answers, a notice or a stop."""
    if corr.halting or corr.verdict not in ("correct", "floor") or corr.current >= len(corr.todos):
        return False
    contract = STEP_CONTRACTS.get(corr.todos[corr.current].step.key)
    return contract is None or not contract.follows


def _moves_a_card(corr) -> bool:
    return any(todo.step.key in MOVES_A_CARD for todo in corr.todos if not todo.done)


def _second_irregularity(eng) -> None:
    """A correction that moves a card opened by this event while another's step must still be done:
    the open step was overtaken. The box moves no card on tracking the open step leaves in doubt:
    neither correction stays, the board is followed as it lies, and the floor decides."""
    new = [c for c in eng.corrections if c.born == eng.seq and not c.halting
           and c.irregularity not in (None, "WRONG_CORRECTION") and _moves_a_card(c)]
    old = [c for c in eng.corrections if c.born != eng.seq and must_be_done(c)] if new else []
    if not old:
        return
    hand = eng.hand
    for corr in new + old:
        eng.corrections.remove(corr)
        _as_it_lies(eng, corr)
    for corr in new:
        hand.expect_next = [k for k in hand.expect_next if k not in corr.cards]
        hand.returning.difference_update(c for c in corr.cards if hand.where.get(c) in ("burn", "board"))
    correct(eng, "WRONG_CORRECTION", new[0].cards[:1], case="step_overtaken")


#: The betting rounds in order, by the phase the hand is in once each is done.
_ROUND_ORDER = {"flop": 1, "turn": 2, "river": 3, "showdown": 4}


def _answered_by_button(eng, event) -> None:
    """Tick off the open steps whose contract names *event*'s button among their answers."""
    if event.ev != "button":
        return
    for corr in eng.corrections:
        if corr.halting or corr.born == eng.seq:
            continue
        while corr.current < len(corr.todos):
            todo = corr.todos[corr.current]
            contract = STEP_CONTRACTS.get(todo.step.key)
            if contract is None or event.name not in contract.buttons:
                break
            eng.tick(todo)
    eng.corrections = [c for c in eng.corrections if not c.finished]


def _moments(eng, event, key: str, corr) -> set[str]:
    """The moments *event* (naming card *key*) is for *corr*."""
    hand = eng.hand
    if event.ev == "button" and event.name == "round_done":
        found = set()
        if eng.phase == "deal" and hand.cards_owed() and not any(
                c.irregularity == "SHORT_DEAL" for c in eng.corrections):
            found.add("round_done_in_deal")
        # A premature street's cards lie there while the round before it ends: they still go back.
        # Only the round of their own street (or a later one) bets on them.
        own_round = corr.voided is None or (corr.street in STREETS and _ROUND_ORDER.get(eng.phase, 0)
                                            > _ROUND_ORDER[corr.street])
        if own_round and any(hand.where.get(c) == "board" for c in corr.off_board):
            found.add("round_done_card_on_board")
        if corr.keep_on_board is not None and hand.where.get(corr.keep_on_board) != "board":
            found.add("round_done_card_off_board")
        return found
    if event.ev != "board_on" or corr.street not in STREETS or hand.where.get(key) != "board":
        return set()
    # A card dealt face down aside (C40) belongs to its street as much as one drawn for it.
    st = hand.street_of(key) or next((s for s in hand.streets.values() if key in s.from_aside), None)
    if st is not None and STREETS.index(st.name) > STREETS.index(corr.street):
        return {"later_card"}
    return set()


def judge(eng, event, key: str = "") -> None:
    """Judge every open step by *event* (naming card *key*, if any), from the table: its answers
    first (the steps the event shows done are ticked off, finished corrections leave), then its
    wrong corrections (the moments past which it can no longer be done: the ruling of its
    contract's ``past``), and a second irregularity that would move a card while the step must still
    be done. Its ends are the answers' and the hand's (HAND OVER records it)."""
    eng.advance(event)
    _answered_by_button(eng, event)
    _second_irregularity(eng)
    for corr in list(eng.corrections):
        if corr.halting or corr.irregularity is None or corr.born == eng.seq or corr.current >= len(corr.todos):
            continue
        contract = STEP_CONTRACTS.get(corr.todos[corr.current].step.key)
        if contract is None or not contract.past or corr not in eng.corrections:
            continue
        moments = _moments(eng, event, key, corr)
        ruling = next((r for m, r in contract.past if m in moments), None)
        if ruling is None:
            continue
        moment = next(m for m, r in contract.past if m in moments)
        eng.corrections.remove(corr)
        _as_it_lies(eng, corr)
        if moment == "round_done_in_deal":
            _deal_as_it_lies(eng, event)
        correct(eng, "WRONG_CORRECTION", corr.cards[:1], case=_CASES[ruling])


def _as_it_lies(eng, corr) -> None:
    """The hand went on past *corr*'s step: the box follows the board as it lies. A premature
    street's cards stand as the street; a card the step was to take off the board holds its place
    on its street (an unburned first card, a joker bet on as the street's card)."""
    hand = eng.hand
    if corr.voided is not None:
        _voided_as_it_lies(eng, corr)
        return
    for card in corr.off_board:
        st = hand.street_of(card) or hand.streets.get(corr.street or "")
        if st is None or hand.where.get(card) != "board":
            continue
        for kept_out in (st.burns, st.blanks):
            if card in kept_out:
                kept_out.remove(card)
        if card not in st.drawn:
            st.drawn.append(card)
        if card not in st.board:
            st.board.append(card)
        street_progress(eng, st)


def _voided_as_it_lies(eng, corr) -> None:
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


__all__ = ["ANSWER_BUTTONS", "FOLLOW_ON", "WAITS", "MOMENTS", "MOVES_A_CARD", "RULINGS", "STEP_CONTRACTS", "StepContract", "judge",
           "missing_contracts", "must_be_done"]
