"""Corrections by name: each procedure a profile may choose, and what it tells the dealer.

A profile row (``firmware_config/rules/*.toml``) names a procedure for each
RULES.md id; :func:`correct` looks the name up in :data:`BUILDERS` and the
builder registered under it opens the correction: its steps, each with what it
is about (its card, its street). How the box sees each step done, and what the
step does then, is the open-steps table's (:mod:`.open_steps`). A card room that
edits a profile's procedure therefore changes what the box says.

Most builders are here; a few register from the modules they build on, which
this one never imports: the premature streets' (:mod:`.premature_streets`) and
the short deal's count (:mod:`.sensing`). The engine imports them all.
"""

from __future__ import annotations

from typing import Callable

from dealerbox.rules.book import outcome
from dealerbox.rules.corrections import Correction, Todo
from dealerbox.domain.decisions import Step
from dealerbox.rules.profiles import ANY_IRREGULARITY, PROCEDURES
from dealerbox.rules.tracker import NEXT_STREET, Street

Builder = Callable[..., "Correction | None"]
#: Procedure name (as profiles spell it) -> the function that opens the correction.
BUILDERS: dict[str, Builder] = {}


def procedure(name: str):
    """Register the decorated function as the builder of procedure *name*."""
    def register(fn: Builder) -> Builder:
        BUILDERS[name] = fn
        return fn
    return register


def correct(eng, rid: str, cards, **situation) -> "Correction | None":
    """Open the correction the profile chose for irregularity *rid*.

    *situation* is what the id's own procedure needs (the seat, the street...); a procedure
    any irregularity may take (``misdeal``, ``void``, ``call_floor``) uses what it can of it.
    Once the hand is stopped nothing else is raised: the stop is all the panel shows until
    the next hand (a house misdeal met halfway through judging a card).
    """
    if eng.is_halted:
        return None
    corr = BUILDERS[eng.profile[rid].procedure](eng, rid, list(cards), **situation)
    street = situation.get("street")
    if corr is not None and street is not None and corr.street is None:
        corr.street = street.name      # the street whose later cards the correction must come before
    return corr


def missing_builders() -> list[str]:
    """Procedure names profiles may choose that no builder implements (should be none once
    :mod:`dealerbox.rules.engine` is imported: it loads every module that registers one)."""
    return sorted(({p for names in PROCEDURES.values() for p in names} | set(ANY_IRREGULARITY)) - set(BUILDERS))


def _card(card) -> tuple:
    return (("card", card),)


# ---------------------------------------------------------------- stop the hand
# ``misdeal``, ``void`` and ``call_floor`` are procedures any irregularity of a hand may
# take (profiles.ANY_IRREGULARITY): they take the situation the id's own procedure would
# have had and use only what they can say of it.

@procedure("misdeal")
def misdeal(eng, rid, cards, *, first: Step | None = None, **situation):
    """Stop: redeal (002 r35C). *first* says what the box saw, when it helps."""
    todos = [Todo(first), Todo(Step("halt.misdeal"))] if first is not None else []
    return eng.open_correction(rid, cards, todos)


_VOID_STEP = {"FOREIGN_CARD": "halt.void_foreign", "DUPLICATE_CARD": "halt.void_duplicate"}


@procedure("void")
def void(eng, rid, cards, **situation):
    """Stop: the hand is void, chips go back."""
    if rid in _VOID_STEP and cards:
        return eng.open_correction(rid, cards, [Todo(Step(_VOID_STEP[rid], _card(cards[0])))])
    return eng.open_correction(rid, cards, [])  # the verdict's own step: every bet goes back


# ---------------------------------------------------------------- floor
_FLOOR_FIRST = {
    "RABBIT_HUNT": lambda cards: Step("rabbit.not_allowed"),
    "STUB_CONTAMINATION": lambda cards: Step("contamination.call_floor", _card(cards[0])),
    "BOARD_NOT_FROM_SHOE": lambda cards: Step("notfromshoe.call_floor", _card(cards[0])),
}
#: Where the floor's ruling can send a card the box saw out of the stub.
_OUT_OF_STUB = frozenset({"hand", "board", "burn", "aside", "muck"})


@procedure("call_floor")
def call_floor(eng, rid, cards, *, first: Step | None = None, **situation):
    """Say what the box saw, then the floor decides."""
    if rid in _FLOOR_FIRST:
        return eng.open_correction(rid, cards, [Todo(_FLOOR_FIRST[rid](cards)), Todo(Step("floor.decides"))])
    # A house's floor call where the id has a correction of its own. The box cannot know the
    # ruling: a card of the irregularity may go back into the stub and come out again (no
    # duplicate), and one the floor has taken off the board leaves its street
    # (``taken_off_as_ruled``). No card is expected next any more.
    hand = eng.hand
    hand.returning.update(c for c in cards if hand.where.get(c) in _OUT_OF_STUB)
    hand.expect_next = []
    return eng.open_correction(rid, cards, [Todo(first or Step("floor.house_rule")), Todo(Step("floor.decides"))])


@outcome("taken_off_as_ruled")
def taken_off_as_ruled(eng, seen) -> None:
    """A card that may go back into the stub left the board, no correction saying where: out of play.

    The floor ruled what the box cannot know (a house's floor call): the card counts as back in
    the stub, and its street is short of it until another card takes its place."""
    hand, key = eng.hand, seen.key
    st = hand.street_of(key)
    hand.where[key] = "stub"
    hand.forget(key)
    if st is not None and len(hand.on_board(st.board)) < st.n:
        st.complete = False


def late(eng, rid, cards):
    """A deal error reported after the first betting round: substantial action decides (002 r36);
    a house may rule it a misdeal or a void hand all the same."""
    if eng.is_halted:
        return None
    choice = eng.profile["LATE_ERROR"]
    rule = f"{eng.profile[rid].sources}; {choice.sources}"
    if choice.procedure in ("misdeal", "void"):  # the verdict's own step: redeal, or every bet back
        return eng.open_correction(rid, cards, [], verdict=choice.verdict, rule=rule)
    return eng.open_correction(rid, cards, [Todo(Step("late.substantial_action")), Todo(Step("floor.decides"))],
                               verdict=choice.verdict, rule=rule)


@procedure("floor_confirms")
def floor_confirms(eng, rid, cards):
    """An unknown tag: call the floor; it is foreign once the floor confirms (``misdeal``)."""
    corr = eng.open_correction(rid, cards, [Todo(Step("unknown.call_floor", _card(cards[0]))),
                                            Todo(Step("unknown.floor_confirms"))])
    corr.unknown = cards[0]
    return corr


@procedure("inform")
def inform(eng, rid, cards, *, step: Step):
    """Information only: one step the dealer acknowledges; the hand goes on."""
    return eng.open_correction(rid, cards, [Todo(step)])


# ---------------------------------------------------------------- the deal
@procedure("exposed_card_is_first_burn")
def exposed_card_is_first_burn(eng, rid, cards, *, seat: int):
    """Finish the deal, the seat gets the top card, the exposed card is the first burn (001 r11)."""
    hand = eng.hand
    shown = cards[0]
    corr = eng.open_correction(rid, cards, [
        Todo(Step("exposed.finish_deal"), about=hand.deal_target),
        Todo(Step("exposed.replace", (("seat", seat), ("card", shown)))),
        Todo(Step("exposed.is_burn", _card(shown))),
        Todo(Step("exposed.flop_no_burn"), about="flop"),
    ])
    corr.todos[0].done = len(hand.deal_cards) >= hand.deal_target
    return corr


@procedure("show_and_replace")
def show_and_replace(eng, rid, cards, *, key: str, seat: int | None = None):
    """Show the card, set it with the burns; the next card takes its place (001 r6, r7)."""
    if rid == "JOKER":
        replace = Step("joker.replace_seat", (("seat", seat),)) if seat else Step("joker.replace_next")
        first = Step("joker.show_and_burn")
    else:
        replace = Step("boxed.replace", (("seat", seat),)) if seat else Step("boxed.replace_next")
        first = Step("boxed.show_and_burn", _card(cards[0]))
    # The first step is about the card itself: done only once it is off the board (open_steps.OFF_BOARD_FIRST).
    return eng.open_correction(rid, cards, [Todo(first, about=key), Todo(replace, about=key)])


@procedure("return_as_first_burn")
def return_as_first_burn(eng, rid, cards):
    """The extra card goes back on top and comes out again as the first burn (001 r10)."""
    key = cards[0]
    eng.hand.expect_next = [key]
    corr = eng.open_correction(rid, cards, [
        Todo(Step("extra.stop", _card(key))),
        Todo(Step("extra.return_on_top", _card(key))),
        Todo(Step("extra.burn_it", _card(key))),
    ])
    eng.hand.returning.add(key)
    return corr


# ---------------------------------------------------------------- burns
@procedure("open_burn_next_card_replaces")
def open_burn_next_card_replaces(eng, rid, cards, *, street: Street):
    """001 r13: the card comes off as an open burn; the next card from the stub takes its place."""
    key = cards[0]
    street.board.remove(key)
    street.burns.append(key)
    corr = eng.open_correction(rid, cards, [
        Todo(Step("missed_burn.take_off", _card(key))),
        Todo(Step("missed_burn.next_card", (("street", street.name),))),
    ])
    corr.off_board[key] = "burn"
    corr.asks = "burn_unread"  # without a mouth sensor, ACK: a card was burned, its tag not read
    return corr


@procedure("return_second_burn")
def return_second_burn(eng, rid, cards, *, street: Street):
    """001 r13: the second burn goes back on top and is the next street's burn; on the river, recorded."""
    first, second = cards
    if street.name == "river":
        return eng.open_correction(rid, cards, [Todo(Step("double_burn.river_recorded"))], verdict="ok")
    nxt = NEXT_STREET[street.name]
    street.burns.remove(second)
    eng.hand.returning.add(second)
    eng.hand.expect_next = [second]
    return eng.open_correction(rid, cards, [
        Todo(Step("double_burn.return_on_top", _card(second))),
        Todo(Step("double_burn.burn_it", (("card", second), ("street", nxt)))),
    ])


# ---------------------------------------------------------------- too many board cards
@procedure("scramble_pick_burn")
def scramble_pick_burn(eng, rid, cards, *, street: Street):
    """TDA 002 r39: scramble the four, the floor picks the next burn, the rest is the flop; a card too
    many on the turn or the river: the floor decides which one plays (the dealer does not choose)."""
    if street.name != "flop":
        corr = eng.open_correction(rid, cards, [Todo(Step("extra_board.floor_decides", (("cards", tuple(cards)),))),
                                                Todo(Step("floor.decides"))])
        # The one the floor takes off the board is out of play, back with the stub.
        corr.off_board.update(dict.fromkeys(cards, "stub"))
        return corr
    street.complete = True
    eng.hand.streets[NEXT_STREET[street.name]].burn_due = False
    corr = eng.open_correction(rid, cards, [
        Todo(Step("four_flop.call_floor")),
        Todo(Step("four_flop.scramble_pick", (("cards", tuple(cards)),))),
        Todo(Step("four_flop.rest_is_flop")),
        Todo(Step("four_flop.turn_no_burn"), about="turn"),
    ])
    corr.off_board.update(dict.fromkeys(cards, "burn"))
    return corr


@procedure("redeal_street")
def redeal_street(eng, rid, cards, *, street: Street):
    """C40: the street's cards go back, reshuffle without the burns, deal the street again."""
    for c in cards:
        # A card laid for the street that the box had placed elsewhere (a later street drawn early, a card
        # dealt aside) goes back all the same: it is on the board now.
        for placed in (street.board, street.drawn):
            if c in placed:
                placed.remove(c)
    street.complete = False
    street.burn_due = False
    corr = eng.open_correction(rid, cards, [
        Todo(Step("redeal.cards_back", (("cards", tuple(cards)),))),
        Todo(Step("reshuffle.now")),
        Todo(Step("redeal.deal_again", (("street", street.name),))),
    ])
    corr.off_board.update(dict.fromkeys(cards, "stub"))
    eng.hand.returning.update(cards)
    return corr


# ---------------------------------------------------------------- the dealer strayed from a correction
_PUT_RIGHT = {
    "expected_card": lambda cards: [
        Todo(Step("wrong.expected_card", (("card", cards[1]), ("got", cards[0])))),
        Todo(Step("wrong.put_back_and_draw", (("card", cards[1]), ("got", cards[0])))),
    ],
    "reshuffled_in": lambda cards: [Todo(Step("wrong.reshuffled_in", _card(cards[0]))), Todo(Step("floor.decides"))],
    "burn_not_due": lambda cards: [Todo(Step("wrong.burn_not_due", _card(cards[0]))), Todo(Step("floor.decides"))],
    "step_overtaken": lambda cards: [Todo(Step("wrong.step_overtaken")), Todo(Step("floor.decides"))],
    "missed_burn_bet_on": lambda cards: [Todo(Step("wrong.missed_burn_bet_on", _card(cards[0]))),
                                         Todo(Step("floor.decides"))],
    "keep_on_board": lambda cards: [Todo(Step("wrong.keep_on_board", _card(cards[0])))],
}
#: The cases the dealer cannot put right alone: the floor decides.
_FLOOR_CASES = {"reshuffled_in", "burn_not_due", "missed_burn_bet_on", "step_overtaken"}


#: Moment (open_steps.AGAIN) -> the step that says why the step is shown again.
_AGAIN_STEPS = {"other_button": "wrong.button_not_the_answer", "card_drawn_first": "wrong.drawn_before_button",
                "card_laid_over": "wrong.laid_over"}


@procedure("put_right")
def put_right(eng, rid, cards, *, case: str, again=None, moment: str = ""):
    """Tell the dealer how to put the correction right; the floor when it cannot be. ``step_again``:
    the step *again* names (a correction and its step) is shown again, after why (*moment*)."""
    if case == "step_again":
        corr, todo = again
        why = Todo(Step(_AGAIN_STEPS[moment]), done=True)
        wrong = eng.open_correction(rid, cards, [why, Todo(todo.step, about=todo.about)])
        wrong.again = (corr, todo)
        wrong.street = corr.street
        return wrong
    corr = eng.open_correction(rid, cards, _PUT_RIGHT[case](cards),
                               verdict="floor" if case in _FLOOR_CASES else None)
    if case == "keep_on_board":
        corr.keep_on_board = cards[0]
        # The street whose card it is: a card of a later street laid while it is off overtakes the step.
        st = eng.hand.street_of(cards[0])
        corr.street = st.name if st is not None else None
    return corr
