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

- ``ended_by``: the reader or button whose report ends the step (RULES.md: a step is done when what
  the readers see says so); ``board_state``: for a step that moves a card the board reader sees, the
  board state that ends it (the card gone from the board, the flop back in the stub). Only the steps
  no reader can see (:data:`UNSEEN_STEPS`) count done once a later step is seen done;
- ``again_at``: the moments at which the step, still to be done, is ``WRONG_CORRECTION`` amber with
  the step shown again (:data:`AGAIN`): a button it does not take (a button answers only the step
  that names it, at that step), its cards drawn before its button, a card laid over the card it takes off;

- ``seen_by``, ``pressed``, ``then``: how the box sees the step done (an answer of
  :data:`~dealerbox.rules.corrections.ANSWERS`), its own panel button, and what it does to the
  tracking once done (an effect of :data:`~dealerbox.rules.corrections.EFFECTS`). A procedure
  names only the step and what it is about (its card, its street).

The engine runs this table after every event (:mod:`.step_judge`), one open step at a time: the
event is checked against the step's answers first, then against its wrong corrections (the
moments of ``past``), then against its ends (a finished correction leaves the panel; HAND OVER
puts one left open on record). A button among the step's ``buttons`` ticks it done. An event that
opens a correction which moves a card, while another correction's step must still be done (not a
``follows`` step), overtook that step: neither stays, and the floor decides (RULES.md, sensing
faults: a reading the open step leaves in doubt moves no card). No other code judges a step the
hand has moved past.

Two wrong corrections belong to the street and the stub rather than to a step, and stay rows of the
rule book: a burn drawn for a street whose burn is not due (``burn_not_due``: however the hand came
to owe no burn, even with the step that said so overtaken and the floor called), and a card that had
to stay out coming out of a reshuffled stub while any correction runs (``reshuffled_in``). The
questions a sensing fault leaves (``asks``) are answered by the rule book's rows too where the answer
is a button other than ACK or the play itself: the outcome that takes the answer moves the cards.

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

from dealerbox.rules.corrections import ANSWERS, EFFECTS

#: Moment -> what it means, for the rendered book.
MOMENTS = {
    "later_card": "a card of a later street reaches the board",
    "round_done_in_deal": "ROUND DONE while the deal still owes a seat its card, and no SHORT_DEAL question "
                          "asks to count (with a mouth sensor the box knows the count)",
    "round_done_card_on_board": "ROUND DONE while a card the step takes off the board still lies there, seen "
                                "by the board reader (the street was bet on with it; never a dead tag)",
    "round_done_card_off_board": "ROUND DONE while a card the step puts back on the board is still off it (the "
                                 "street was bet on without it)",
    "round_done_street_short": "ROUND DONE while the street the step replaces a card of lacks a card on the "
                               "board (the street was bet on short)",
}
#: Moment the rule book's outcomes announce (:meth:`~dealerbox.rules.engine.HandEngine.announce`) ->
#: what it means, for the rendered book.
ANNOUNCED = {
    "other_card_drawn": "a card other than the one the correction said comes out next left the shoe",
    "kept_out_card_off_board": "a card that must stay out of the stub left the board while the stub is to be "
                               "reshuffled",
    "flop_drawn_early": "burn and flop cards drawn before the first round was done, while an extra card's "
                        "correction ran: the extra card was the flop's burn drawn early (the grace period "
                        "or the board judges the cards: EXTRA_CARDS, or a premature flop)",
    "board_card_lifted": "a board card no step moves left the board while a step the dealer must do is shown "
                         "(the board reader saw it go: no missed read explains it)",
    "second_burn_on_board": "the card taken for a street's second burn reached the board, drawn straight before "
                            "the street's card: the two were laid at once (the extra board card), no double burn",
    "deal_shown_complete": "a card on the board shows the cards drawn after SHORT_DEAL's question were the burn "
                           "and the flop: the deal was complete, each card it lacked an unread tag (recorded)",
}
#: Ruling -> what the box does, for the rendered book.
RULINGS = {
    "floor": "WRONG_CORRECTION, floor: the hand can no longer be put right (step `wrong.step_overtaken`)",
    "floor_bet_on": "WRONG_CORRECTION, floor: the street was bet on with the card still there (step "
                    "`wrong.missed_burn_bet_on`)",
}


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
    #: Panel buttons that answer the step when it is the one shown (:mod:`.step_judge` ticks it done).
    buttons: tuple[str, ...] = ()
    #: Actions that leave the step open without moving the hand past it (its answer still to come).
    waits: tuple[str, ...] = ()
    #: The answer the box sees the step done by (a name of :data:`~dealerbox.rules.corrections.ANSWERS`),
    #: or None for a step it cannot see. A step seen done holds back ACK and the dealer's going on
    #: from ticking the steps after it.
    seen_by: str | None = None
    #: The panel button that is the step's own answer (RESHUFFLED): ACK does not tick it, and a later
    #: step seen done counts it done (dealers forget buttons).
    pressed: str | None = None
    #: What the step does to the tracking once done (a name of
    #: :data:`~dealerbox.rules.corrections.EFFECTS`), or None.
    then: str | None = None
    #: (announced moment, put-right case) pairs: the rule book's outcome announced an action no answer
    #: allows (:data:`ANNOUNCED`); while the step is still to be done, it is ``WRONG_CORRECTION`` with
    #: that case (:mod:`.procedures`, ``put_right``).
    wrong_at: tuple[tuple[str, str], ...] = ()
    #: Announced moments that show the step rested on a reading the cards have since explained
    #: otherwise: its correction leaves the panel with no ruling, and the cards are judged as what they
    #: turned out to be.
    superseded_at: tuple[str, ...] = ()
    #: The rule book's outcomes that take an answer of the step which moves cards as it is taken (a
    #: question answered by MISDEAL, by ROUND DONE, or by the play): the book's rows leading to them
    #: apply only while the step is open (:func:`answers_an_open_step`).
    answered_in_book: tuple[str, ...] = ()
    #: Which reader or button ends the step (:data:`ENDED_BY`, from ``seen_by`` and ``pressed``), in words.
    ended_by: str = ""
    #: For a step that moves a card the board reader sees: the board state that ends it (the card gone
    #: from the board, the flop back in the stub). A step the box cannot otherwise see (``seen_by``
    #: None) with a board state is done only once its card is off the board (:data:`OFF_BOARD_FIRST`).
    board_state: str | None = None
    #: Moments at which the step, still to be done, is ``WRONG_CORRECTION`` amber with the step shown
    #: again (:data:`AGAIN`): a button it does not take, its cards drawn before its button, the rest of
    #: the street laid over the card it takes off.
    again_at: tuple[str, ...] = ()


def _c(answers: str, wrong: str = "-", ends: str = "seen done, or the hand ends (on record if not done)",
       **past: str) -> StepContract:
    return StepContract(answers, wrong, ends, tuple(past.items()))


_ACK = "ACK"
_PREMATURE_PAST = {"later_card": "floor"}
_DEAL_PAST = {"round_done_in_deal": "floor"}
_BET_ON_PAST = {"round_done_card_on_board": "floor"}
_SHORT_PAST = {"round_done_street_short": "floor"}
_INFO = _c("ACK, or anything the dealer does next", ends="the next hand; information only")
_HALT = _c("new_hand (the hand is stopped)", "any card drawn (flagged after the stop)", "the next new_hand")
_FLOOR = _c("ACK once the floor has ruled", ends="ACK, or the hand ends")
_SAID_FIRST = _c("ACK, or the next step seen done")

STEP_CONTRACTS: dict[str, StepContract] = {
    # -- stops and the floor
    "halt.misdeal": _HALT, "halt.misdeal_called": _HALT, "halt.void": _HALT, "halt.void_duplicate": _HALT,
    "halt.void_foreign": _HALT, "halt.card_after_stop": _HALT,
    "floor.decides": _FLOOR, "floor.called": _FLOOR, "floor.house_rule": _FLOOR,
    "late.substantial_action": _FLOOR, "rabbit.not_allowed": _FLOOR, "contamination.call_floor": _FLOOR,
    "notfromshoe.call_floor": _FLOOR, "four_flop.call_floor": _FLOOR,
    # What the box saw, said before the ruling (SEAT_ERROR's misdeal, or a house's floor call).
    "seat.wrong_seat": _SAID_FIRST, "seat.not_dealt_in": _SAID_FIRST, "seat.wrong_count": _SAID_FIRST,
    "unknown.call_floor": _c("ACK (the floor is called); MISDEAL (the floor confirms: foreign, void)"),
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
    "boxed.replace_next": _c("the street's cards all on the board (the replacement laid; a card drawn and kept "
                             "off the board is not it)", "ROUND DONE with the street short (WRONG_CORRECTION, floor)",
                             **_SHORT_PAST),
    "joker.show_and_burn": _c("ACK, or the next step seen done; the joker off the board",
                              "ROUND DONE with the joker on the board (WRONG_CORRECTION, floor)", **_BET_ON_PAST),
    "joker.replace_seat": _c("another card drawn for the seat", **_DEAL_PAST),
    "joker.replace_next": _c("the street's cards all on the board (the replacement laid; a card drawn and kept "
                             "off the board is not it)", "ROUND DONE with the joker on the board, or with the street "
                             "short (WRONG_CORRECTION, floor)", **_BET_ON_PAST, **_SHORT_PAST),
    "extra.stop": _c("ACK, ROUND DONE, or the card drawn again"),
    "extra.return_on_top": _c("ACK, ROUND DONE, or the card drawn again"),
    "extra.burn_it": _c("the card drawn again (an unread card: any card not yet seen in the hand)",
                        "another card drawn (WRONG_CORRECTION: put it back, draw the card)"),
    "short_deal.count": _c("ACK (every seat has its cards); the short seat's card drawn; a card to the board "
                           "(the deal was complete)"),
    "short_deal.deal_seat": _c("the short seat's card drawn (the next card out of the shoe goes to it)",
                               "a card to the board first"),
    "duplicate.hole_card_again": _c("ACK (it was put back); MISDEAL (two cards carry the tag: void)"),
    "duplicate.returned_burn": _c("ACK (put back as a second burn); MISDEAL is not an answer: play goes on"),
    # -- burns
    "missed_burn.take_off": _c("the card off the board; ACK without a mouth sensor (a burn went unread); "
                               "ROUND DONE without a mouth sensor (the play says so: UNREAD_CARD); ROUND DONE "
                               "with a mouth sensor when a card of the street counted with no read never reached "
                               "the board (it was the burn, its read late)",
                               "ROUND DONE with a mouth sensor otherwise (WRONG_CORRECTION, floor: the street was "
                               "bet on)",
                               "the card off the board, or ROUND DONE", round_done_card_on_board="floor_bet_on"),
    "missed_burn.next_card": _c("the street's cards all on the board"),
    "double_burn.return_on_top": _c("ACK, or the card drawn again"),
    "double_burn.burn_it": _c("the card drawn again", "another card drawn (WRONG_CORRECTION: put it back)"),
    "double_burn.river_recorded": _INFO,
    # -- too many board cards
    "four_flop.scramble_pick": _c("exactly one of the cards off the board"),
    "extra_board.floor_decides": _FLOOR,
    # What the box says before a step it shows again (WRONG_CORRECTION, amber): done as it is said.
    "wrong.button_not_the_answer": _SAID_FIRST, "wrong.drawn_before_button": _SAID_FIRST,
    "wrong.laid_over": _SAID_FIRST,
    # The panel through a grace period (no correction's step: the cards decide when it ends).
    "grace.cards_decide": _c("the grace period's end: a card on the board, or none (the cards decide)",
                             ends="the grace period's end"),
    "floor.cannot_place": _FLOOR, "stub.runs_out": _FLOOR,
    "four_flop.rest_is_flop": _c("ACK, or the next step seen done"),
    "four_flop.turn_no_burn": _c("the turn laid with no burn drawn", "a burn drawn (WRONG_CORRECTION, floor)"),
    "redeal.cards_back": _c("the cards off the board", "a card off the board that must stay out (put it back)",
                            **_PREMATURE_PAST, **_BET_ON_PAST),
    "redeal.deal_again": _c("the street's cards on the board"),
    "reshuffle.now": _c("RESHUFFLED", "a card that must stay out taken off the board first (WRONG_CORRECTION: "
                        "put it back); a burn or board card reshuffled in (WRONG_CORRECTION, floor, once drawn)",
                        **_PREMATURE_PAST),
    # -- premature streets
    "premature.cards_back": _c("the cards off the board", "ROUND DONE of their own street with them still on the "
                               "board (WRONG_CORRECTION, floor: bet on)", ends="the cards off the board",
                               **_PREMATURE_PAST, **_BET_ON_PAST),
    "premature.set_aside": _c("the card off the board", "ROUND DONE of its own street with it still on the board "
                              "(WRONG_CORRECTION, floor: bet on)", ends="the card off the board",
                              **_PREMATURE_PAST, **_BET_ON_PAST),
    "premature.burn_stays": _c("ACK, or the next step seen done", **_PREMATURE_PAST),
    "premature.finish_round": _c("ROUND DONE", **_PREMATURE_PAST),
    "premature.burn_and_turn": _c("a burn and the turn laid"),
    "premature.reshuffle_with": _c("RESHUFFLED", "a card that must stay out taken off the board first "
                                   "(WRONG_CORRECTION: put it back)", **_PREMATURE_PAST),
    "premature.new_street": _c("the street's cards on the board"),
    "premature.new_street_no_burn": _c("the street's cards on the board, no burn drawn",
                                       "a burn drawn (WRONG_CORRECTION: burn not due, floor)"),
    "skipped.ask": _c("ACK (folds: the street stands), in either order with ROUND DONE; ROUND DONE alone "
                      "(acts)", ends="ACK or ROUND DONE; an ACK right after the ROUND DONE is still the fold"),
    "skipped.deal_closed": _c("the later streets drawn face down aside", **_PREMATURE_PAST),
    # -- the dealer strayed from a correction
    "wrong.expected_card": _c("ACK, or the next step seen done"),
    "wrong.put_back_and_draw": _c("the expected card drawn", "another card drawn (WRONG_CORRECTION: put it back)"),
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
    "wrong.expected_card_or_unread", "wrong.put_back_and_draw", "joker.show_and_burn", "boxed.show_and_burn",
    # A replacement still to be laid on a street that shows nothing: the round was called done ahead.
    "joker.replace_next", "boxed.replace_next",
    # ROUND DONE again while the short seat waits for its card: a repeat of the press that asked.
    "short_deal.deal_seat", "short_deal.count", "premature.cards_back", "premature.set_aside",
    # ROUND DONE before the river shows a card is a round called ahead: the reshuffle still comes first.
    "premature.reshuffle_with",
    # The same on a street being dealt again (C40): its cards back, it shows nothing, and a round called
    # done on it is called ahead (all in, or a repeat); the reshuffle and the redeal still come.
    "reshuffle.now",
)}
#: Step -> the answer the box sees it done by (:attr:`StepContract.seen_by`).
SEEN_BY = {
    "exposed.finish_deal": "deal_drawn", "exposed.replace": "deal_complete",
    "exposed.flop_no_burn": "street_complete",
    "boxed.replace": "other_card_drawn", "boxed.replace_next": "replacement_laid",
    "joker.replace_seat": "other_card_drawn", "joker.replace_next": "replacement_laid",
    "extra.burn_it": "card_drawn", "double_burn.burn_it": "card_drawn", "wrong.put_back_and_draw": "card_drawn",
    "missed_burn.take_off": "card_off_board", "missed_burn.next_card": "street_complete",
    "four_flop.scramble_pick": "one_card_off_board", "four_flop.turn_no_burn": "street_complete",
    "redeal.cards_back": "cards_off_board", "redeal.deal_again": "street_complete",
    "premature.cards_back": "cards_off_board", "premature.set_aside": "cards_off_board",
    "premature.finish_round": "round_done_into", "premature.burn_and_turn": "street_complete",
    "premature.new_street": "street_complete", "premature.new_street_no_burn": "street_complete",
    "skipped.ask": "acked_or_round_done", "skipped.deal_closed": "closed_deal_done",
    "wrong.keep_on_board": "card_back_on_board",
    "short_deal.count": "deal_counted", "short_deal.deal_seat": "deal_complete", "unread.street_card_there": "acked",
    "duplicate.hole_card_again": "acked", "exposed.second_or_later": "acked", "duplicate.returned_burn": "acked",
    "wrong.expected_card_or_unread": "acked_or_card_drawn",
}
#: Step -> its own panel button (:attr:`StepContract.pressed`).
PRESSED = {"reshuffle.now": "reshuffled", "premature.reshuffle_with": "reshuffled"}
#: Step -> what it does to the tracking once done (:attr:`StepContract.then`).
THEN = {
    "extra.return_on_top": "card_may_return", "reshuffle.now": "stub_reshuffled",
    "premature.reshuffle_with": "aside_reshuffled_in", "four_flop.scramble_pick": "picked_is_burn",
    "skipped.ask": "skipped_answered", "short_deal.count": "deal_count_settled", "short_deal.deal_seat": "short_seat_dealt",
    "unread.street_card_there": "street_card_there", "duplicate.hole_card_again": "question_answered",
    "exposed.second_or_later": "question_answered", "duplicate.returned_burn": "question_answered",
    "wrong.expected_card_or_unread": "question_answered",
}
#: Step -> its wrong corrections the rule book announces (:attr:`StepContract.wrong_at`).
WRONG_AT = {
    **dict.fromkeys(("extra.burn_it", "double_burn.burn_it", "wrong.put_back_and_draw"),
                    (("other_card_drawn", "expected_card"),)),
    **dict.fromkeys(("reshuffle.now", "premature.reshuffle_with"), (("kept_out_card_off_board", "keep_on_board"),)),
}
#: A board card no step moves, lifted while a step that moves board cards or must take its card off the
#: board is shown: put it back (the put-right case ``keep_on_board``). Steps about the stub (a card back
#: on top) leave the board alone.
BOARD_STEPS = ("missed_burn.take_off", "four_flop.scramble_pick", "redeal.cards_back", "premature.cards_back",
               "premature.set_aside", "joker.show_and_burn", "boxed.show_and_burn")
for _key in BOARD_STEPS:
    WRONG_AT[_key] = WRONG_AT.get(_key, ()) + (("board_card_lifted", "keep_on_board"),)
#: Step -> the announced moments that supersede it (:attr:`StepContract.superseded_at`).
SUPERSEDED_AT = {**dict.fromkeys(("extra.stop", "extra.return_on_top", "extra.burn_it"), ("flop_drawn_early",)),
                 "short_deal.count": ("deal_shown_complete",),
                 **dict.fromkeys(("double_burn.return_on_top", "double_burn.burn_it", "double_burn.river_recorded"),
                                 ("second_burn_on_board",))}
#: Step -> the rule book's outcomes that take its answer (:attr:`StepContract.answered_in_book`).
ANSWERED_IN_BOOK = {
    # Without a mouth sensor, ACK or ROUND DONE says a burn went unread; with one, ROUND DONE and a
    # count with no read that never reached the board say the burn's read came late.
    "missed_burn.take_off": ("burn_was_unread", "missed_burn_read_late"),
    # The play answers "is the street's card there?" (the next card laid: after a burn, or not).
    "unread.street_card_there": ("street_card_answered_by_play",),
    # MISDEAL answers the questions a dealing error and a missed read both explain, and the floor's.
    "exposed.second_or_later": ("exposed_second_card_confirmed",),
    "duplicate.hole_card_again": ("hole_card_again_confirmed",),
    "unknown.call_floor": ("unknown_is_foreign",), "unknown.floor_confirms": ("unknown_is_foreign",),
}
#: Answer (``seen_by``) -> the reader or button whose report ends the step, for the table's ``ended_by``.
ANSWER_READERS = {
    "card_drawn": "the shoe reader", "other_card_drawn": "the shoe reader", "deal_drawn": "the shoe reader",
    "deal_complete": "the shoe reader", "closed_deal_done": "the shoe reader",
    "card_off_board": "the board reader", "cards_off_board": "the board reader",
    "one_card_off_board": "the board reader", "card_back_on_board": "the board reader",
    "street_complete": "the board reader", "replacement_laid": "the board reader",
    "round_done_into": "ROUND DONE", "acked": "ACK", "acked_or_round_done": "ACK or ROUND DONE",
    "acked_or_card_drawn": "ACK, or the shoe reader", "deal_counted": "ACK, the shoe reader or the board reader",
}
#: Step -> the board state that ends it, for each step that moves a card the board reader sees
#: (:attr:`StepContract.board_state`).
BOARD_STATES = {
    "joker.show_and_burn": "the joker off the board (if it was ever laid there)",
    "boxed.show_and_burn": "the boxed card off the board (if it was ever laid there)",
    "missed_burn.take_off": "the card off the board",
    "four_flop.scramble_pick": "exactly one of the four cards off the board",
    "redeal.cards_back": "every card of the street off the board, back in the stub",
    "premature.cards_back": "every premature card off the board, back in the stub",
    "premature.set_aside": "the premature card off the board, set aside",
    "wrong.keep_on_board": "the card back on the board",
    "joker.replace_next": "the street's cards all on the board, the replacement among them",
    "boxed.replace_next": "the street's cards all on the board, the replacement among them",
}
#: Steps the box cannot see done but for the board: ACK, or a later step seen done, ticks them only
#: once the step's card is off the board (RULES.md: a joker still on the board is not put with the burns).
OFF_BOARD_FIRST = frozenset({"joker.show_and_burn", "boxed.show_and_burn"})
#: Moment -> what it means, for the rendered book: while the step is still to be done, the moment is
#: ``WRONG_CORRECTION`` amber, and the panel shows the step again until it is done.
AGAIN = {
    "other_button": "ACK or RESHUFFLED pressed and the step does not take it (a button answers only the "
                    "step that names it, at that step; it never counts for a later one)",
    "card_drawn_first": "a card drawn before the button the step waits for",
    "card_laid_over": "another card laid on the board over the card the step takes off, where no missed read "
                      "can explain the step (a mouth sensor counts every card)",
}
#: Step -> its again moments (:attr:`StepContract.again_at`): every step the dealer must do takes
#: ``other_button``; the steps a button answers take ``card_drawn_first`` too.
AGAIN_AT = {"missed_burn.take_off": ("other_button", "card_laid_over"),
            **dict.fromkeys(PRESSED, ("other_button", "card_drawn_first"))}
def _ended_by(key: str, c: StepContract) -> str:
    if c.pressed is not None:
        return f"{c.pressed.upper()} pressed at this step"
    if c.seen_by is not None:
        return ANSWER_READERS.get(c.seen_by, c.seen_by)
    if key in OFF_BOARD_FIRST:
        return "the board reader (the card off the board); ACK, or a later step seen done, once it is off"
    return "ACK, or a later step seen done (no reader can see it)"


STEP_CONTRACTS = {key: replace(c, moves=key in MOVES_A_CARD, follows=key in FOLLOW_ON,
                               buttons=ANSWER_BUTTONS.get(key, ()), waits=WAITS.get(key, ()),
                               seen_by=SEEN_BY.get(key), pressed=PRESSED.get(key), then=THEN.get(key),
                               wrong_at=WRONG_AT.get(key, ()), superseded_at=SUPERSEDED_AT.get(key, ()),
                               answered_in_book=ANSWERED_IN_BOOK.get(key, ()),
                               board_state=BOARD_STATES.get(key),
                               again_at=AGAIN_AT.get(key, ("other_button",)))
                  for key, c in STEP_CONTRACTS.items()}
STEP_CONTRACTS = {key: replace(c, ended_by=_ended_by(key, c)) for key, c in STEP_CONTRACTS.items()}
#: The steps no reader can see: ACK ticks them, or a later step seen done counts them done.
UNSEEN_STEPS = frozenset(key for key, c in STEP_CONTRACTS.items()
                         if c.seen_by is None and c.pressed is None and key not in OFF_BOARD_FIRST)


def must_be_done(corr) -> bool:
    """*corr* shows a step the dealer must still do (amber or floor), not one the hand going on
    answers, a notice or a stop."""
    if corr.halting or corr.verdict not in ("correct", "floor") or corr.current >= len(corr.todos):
        return False
    return not contract_of(corr.todos[corr.current]).follows


#: The contract of a step the table does not know (none should be): the box cannot see it done.
_UNKNOWN_STEP = StepContract("ACK", "-", "ACK, or the hand ends")


def contract_of(todo) -> StepContract:
    """The contract of *todo*'s step."""
    return STEP_CONTRACTS.get(todo.step.key, _UNKNOWN_STEP)


def steps_answered_by(outcome: str) -> frozenset[str]:
    """The steps whose answer the rule book's *outcome* takes (none for most outcomes)."""
    return frozenset(key for key, c in STEP_CONTRACTS.items() if outcome in c.answered_in_book)


def answers_an_open_step(steps: frozenset[str]):
    """A guard ``(engine, seen) -> bool``: one of *steps* is open, in a correction an earlier event opened."""
    def gate(eng, seen) -> bool:
        return any(not todo.done and todo.step.key in steps
                   for c in eng.corrections if c.born != eng.seq and not c.halting for todo in c.todos)
    return gate


def wrong_case(eng, moment: str, shown_before: bool = False) -> str | None:
    """The put-right case a step still to be done names for the announced *moment* (``wrong_at``), in
    any open correction, one this very event opened too (a grace period's) unless *shown_before* asks
    for a step the dealer could have read before the event; None if no step names it."""
    return next((case for c in eng.corrections if not c.halting and not (shown_before and c.born == eng.seq)
                 for todo in c.todos if not todo.done for m, case in contract_of(todo).wrong_at if m == moment),
                None)


def missing_contracts(keys) -> list[str]:
    """Step keys among *keys* that have no contract (should be none)."""
    return sorted(set(keys) - set(STEP_CONTRACTS))


def missing_answers() -> list[str]:
    """Answers and effects the table names that nothing registers (should be none once
    :mod:`dealerbox.rules.engine` is imported: it loads every module that registers one)."""
    answers = {c.seen_by for c in STEP_CONTRACTS.values()} - {None} - set(ANSWERS)
    effects = {c.then for c in STEP_CONTRACTS.values()} - {None} - set(EFFECTS)
    return sorted(answers | effects)


__all__ = ["AGAIN", "AGAIN_AT", "ANNOUNCED", "ANSWERED_IN_BOOK", "ANSWER_BUTTONS", "ANSWER_READERS", "BOARD_STATES",
           "FOLLOW_ON", "MOMENTS", "MOVES_A_CARD", "OFF_BOARD_FIRST", "PRESSED", "RULINGS", "UNSEEN_STEPS", "SEEN_BY", "STEP_CONTRACTS", "SUPERSEDED_AT", "THEN", "WAITS", "WRONG_AT", "StepContract", "contract_of",
           "answers_an_open_step", "missing_answers", "missing_contracts", "must_be_done", "steps_answered_by",
           "wrong_case"]
