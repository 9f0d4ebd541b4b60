"""The engine's one judge of open steps: it runs the open-steps table (:mod:`.open_steps`).

After every event (:func:`judge`), one open step at a time. What the rule book's outcomes
announced the event to be (:meth:`~dealerbox.rules.engine.HandEngine.announce`) may first show a
step to rest on a reading the cards explained otherwise (``superseded_at``). Then the event is
checked against the step's answers (:func:`answer`: the table's ``seen_by`` answer observed, or its
``pressed`` button), then against its wrong corrections (an announced action it names in
``wrong_at``, a second irregularity that would move a card while the step must still be done, its
``again_at`` moments, which show it again, and the moments of its ``past``), then against its ends (a finished correction leaves the panel; HAND
OVER puts one left open on record). No other code judges a step the hand has moved past.
"""

from __future__ import annotations

from dealerbox.rules.board import street_progress
from dealerbox.rules.buttons import next_round
from dealerbox.rules.corrections import ANSWERS, EFFECTS, on_panel
from dealerbox.rules.open_steps import MOVES_A_CARD, OFF_BOARD_FIRST, contract_of, must_be_done, wrong_case
from dealerbox.rules.procedures import correct
from dealerbox.rules.tracker import STREETS, UNREAD_PREFIX, Seen

#: Ruling -> the put-right case of ``WRONG_CORRECTION`` it opens (:mod:`.procedures`).
_CASES = {"floor": "step_overtaken", "floor_bet_on": "missed_burn_bet_on"}


def _superseded(eng) -> None:
    """The event showed the reading a correction rested on to be something else (its steps'
    ``superseded_at``): the correction leaves the panel, and the cards are judged as they turned out.
    One this event opened too (a grace period's): the announcement came after it."""
    moments = {m for m, _ in eng.moments}
    for corr in list(eng.corrections):
        if not corr.halting and any(moments.intersection(contract_of(t).superseded_at)
                                    for t in corr.todos if not t.done):
            eng.corrections.remove(corr)


def _announced_wrong(eng) -> None:
    """An action the rule book announced that a step still to be done names among its wrong
    corrections (``wrong_at``): WRONG_CORRECTION, with the case the step names (once per moment). The
    book's rows announce one only while such a step is open (:func:`~.open_steps.wrong_case`)."""
    for moment, cards in eng.moments:
        case = wrong_case(eng, moment)
        if case is not None:
            correct(eng, "WRONG_CORRECTION", cards, case=case)


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
    for corr in new + old:
        # No card is expected back for a correction the hand went past.
        hand.expect_next = [k for k in hand.expect_next if k not in corr.cards]
    for corr in new:
        hand.returning.difference_update(c for c in corr.cards if hand.where.get(c) in ("burn", "board"))
    correct(eng, "WRONG_CORRECTION", new[0].cards[:1], case="step_overtaken")


#: The betting rounds in order, by the phase the hand is in once each is done.
_ROUND_ORDER = {"flop": 1, "turn": 2, "river": 3, "showdown": 4}


def _card_lies_on_board(eng, todo) -> bool:
    """The card of a step that must take it off the board (:data:`~.open_steps.OFF_BOARD_FIRST`) is
    still there: a reader sees the step undone."""
    if todo.step.key not in OFF_BOARD_FIRST:
        return False
    card = todo.about if todo.about is not None else todo.step.param("card")
    return eng.hand.where.get(card) == "board"


def _unseen(eng, todo) -> bool:
    """*todo* is a step no reader sees, and nothing a reader sees says it is undone: ACK ticks it, and
    a later step seen done counts it done (dealers forget buttons)."""
    contract = contract_of(todo)
    return contract.seen_by is None and contract.pressed is None and not _card_lies_on_board(eng, todo)


def _hit(eng, event, i: int, todo, corr) -> bool:
    contract = contract_of(todo)
    if contract.seen_by is not None:
        return ANSWERS[contract.seen_by](eng, event, todo, corr)
    if contract.pressed is not None:
        # A button answers its own step only at that step: every step before it done, or one no
        # reader sees (RULES.md: it never counts for a later step, nor a later step for it).
        return (event.ev == "button" and event.name == contract.pressed
                and all(prev.done or _unseen(eng, prev) for prev in corr.todos[:i]))
    # A step about a card on the board is done when the board reader sees the card leave.
    return todo.step.key in OFF_BOARD_FIRST and event.ev == "board_off" and not _card_lies_on_board(eng, todo)


def answer(eng, event) -> None:
    """Tick off the open steps *event* answers, by the table: a step's ``seen_by`` answer observed,
    its ``pressed`` button at that step, or a card it must take off the board seen leaving; the steps
    before it that no reader sees count done with it (dealers forget buttons). ACK ticks the step the
    panel shows when no reader can see it done. Finished corrections leave the panel; a step shown
    again (``again``) leaves with the step it shows."""
    for corr in list(eng.corrections):
        if corr.born == eng.seq or corr.again is not None:
            continue
        for i, todo in enumerate(corr.todos):
            if not todo.done and _hit(eng, event, i, todo, corr):
                for prev in corr.todos[:i]:
                    if not prev.done and _unseen(eng, prev):
                        _done(eng, event, prev, corr)
                _done(eng, event, todo, corr)
    top = on_panel(eng.corrections)
    if event.ev == "button" and event.name == "ack" and top is not None and top.born != eng.seq:
        if top.again is not None:
            top = top.again[0]
        cur = top.current
        if cur < len(top.todos) and _unseen(eng, top.todos[cur]):
            _done(eng, event, top.todos[cur], top)
    _again_settled(eng)


def _again_settled(eng) -> None:
    """A step shown again leaves the panel once that step is done, or its correction has left."""
    for corr in eng.corrections:
        if corr.again is not None:
            target, todo = corr.again
            if todo.done or target not in eng.corrections:
                for t in corr.todos:
                    t.done = True
    eng.corrections = [c for c in eng.corrections if not c.finished]


def _done(eng, event, todo, corr) -> None:
    if corr.current < len(corr.todos) and corr.todos[corr.current] is todo:
        eng.step_done_at = eng.seq       # the step shown was seen done: an ACK next confirms it
    todo.done = True
    then = contract_of(todo).then
    if then is not None:
        EFFECTS[then](eng, event, todo, corr)


def _answered_by_button(eng, event) -> None:
    """Tick off the open steps whose contract names *event*'s button among their answers."""
    if event.ev != "button":
        return
    for corr in eng.corrections:
        if corr.halting or corr.born == eng.seq:
            continue
        while corr.current < len(corr.todos):
            todo = corr.todos[corr.current]
            if event.name not in contract_of(todo).buttons:
                break
            _done(eng, event, todo, corr)
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
        st = hand.streets.get(corr.street or "")
        if st is not None and not st.complete and eng.phase != corr.street:
            # The round of the street was played with a card of it missing (a replacement never laid).
            found.add("round_done_street_short")
        return found
    if event.ev != "board_on" or corr.street not in STREETS or hand.where.get(key) != "board":
        return set()
    # A card dealt face down aside (C40) belongs to its street as much as one drawn for it.
    st = hand.street_of(key) or next((s for s in hand.streets.values() if key in s.from_aside), None)
    if st is not None and STREETS.index(st.name) > STREETS.index(corr.street):
        return {"later_card"}
    return set()


def snapshot(eng) -> tuple:
    """What the open steps are now, to tell whether an event answered any (:func:`judge`)."""
    return tuple((id(c), tuple(t.done for t in c.todos)) for c in eng.corrections)


def _shown_again(eng, event, key: str, before) -> None:
    """The step the panel shows, still to be done, met one of its ``again_at`` moments: a button it
    does not take (the event answered no step at all), a card drawn before the button it waits for, a
    card laid over the card it takes off where no missed read explains the step. WRONG_CORRECTION,
    amber, the step shown again until it is done (RULES.md: never consumed by a later step, never
    silent). A fact about a card this event raised (a joker, a duplicate) is judged as its own."""
    top = on_panel(eng.corrections)
    if top is None or top.halting or top.verdict != "correct" or top.born == eng.seq:
        return
    corr, todo = top.again if top.again is not None else (top, None)
    if corr.current >= len(corr.todos):
        return
    todo = todo if todo is not None else corr.todos[corr.current]
    contract = contract_of(todo)
    if todo.done or not (must_be_done(corr) or contract.follows):
        return
    moments = set()
    # A step that says how the hand goes on by the cards takes an ACK as read; one a button answers (ROUND
    # DONE finishing the round) does not, and RESHUFFLED anywhere but its own step is a later step's.
    by_button = contract.pressed is not None or contract.seen_by == "round_done_into"
    buttons = ("ack", "reshuffled") if must_be_done(corr) or by_button else ("reshuffled",)
    # An ACK right after a reader saw a step done confirms that step: the dealer did what was shown. Not
    # where the step shown now waits for a button (RESHUFFLED, ROUND DONE): ACK there is no answer.
    confirms = event.name == "ack" and eng.step_done_at == eng.seq - 1 and not by_button
    if event.ev == "button" and event.name in buttons and snapshot(eng) == before and not confirms:
        moments.add("other_button")
    hand = eng.hand
    # A card out of the shoe: read, counted with no read (the notice it opens is no ruling of its own), or
    # seen on the board with no read at all (held for a late read: it left the stub before the press).
    drawn = event.ev == "shoe" or (event.ev == "board_on" and key in hand.held)
    if drawn and contract.pressed is not None and not any(c.born == eng.seq and c.verdict != "ok"
                                                          for c in eng.corrections):
        moments.add("card_drawn_first")
    card = todo.about if todo.about is not None else todo.step.param("card")
    # Laid over it: a card drawn after the step was shown (one already in the dealer's hand, a spread
    # flop's, was drawn before the box spoke).
    if (event.ev == "board_on" and hand.mouth_sensor and key and card and key != card
            and hand.where.get(card) == "board" and hand.where.get(key) == "board"
            and hand.drawn_t.get(key, corr.opened_t) > corr.opened_t and not _unread_burn(hand, card)):
        moments.add("card_laid_over")
    moment = next((m for m in contract.again_at if m in moments), None)
    if moment is None or top.again is not None:
        return      # nothing new, or the step is shown again already
    correct(eng, "WRONG_CORRECTION", corr.cards[:1], case="step_again", again=(corr, todo), moment=moment)


def _unread_burn(hand, card: str) -> bool:
    """A card of *card*'s street left the stub counted with no read and never reached the board: the
    burn, its count reported after the first card's read (a missed read explains the step)."""
    st = hand.street_of(card)
    return st is not None and any(k.startswith(UNREAD_PREFIX) and hand.where.get(k) == "hand" for k in st.drawn)


def judge(eng, event, key: str = "", before: tuple = ()) -> None:
    """Judge every open step by *event* (naming card *key*, if any), from the table: its answers
    first (the steps the event shows done are ticked off, finished corrections leave), then its
    wrong corrections (the moments past which it can no longer be done: the ruling of its
    contract's ``past``), and a second irregularity that would move a card while the step must still
    be done. Its ends are the answers' and the hand's (HAND OVER records it)."""
    _superseded(eng)
    answer(eng, event)
    _answered_by_button(eng, event)
    _announced_wrong(eng)
    _second_irregularity(eng)
    _shown_again(eng, event, key, before)
    for corr in list(eng.corrections):
        if (corr.halting or corr.irregularity is None or corr.born == eng.seq or corr.again is not None
                or corr.current >= len(corr.todos)):
            continue
        past = _past_of_shown(corr)
        if not past or corr not in eng.corrections:
            continue
        moments = _moments(eng, event, key, corr)
        ruling = next((r for m, r in past if m in moments), None)
        if ruling is None:
            continue
        moment = next(m for m, r in past if m in moments)
        eng.corrections.remove(corr)
        _as_it_lies(eng, corr)
        if moment == "round_done_in_deal":
            _deal_as_it_lies(eng, event)
        correct(eng, "WRONG_CORRECTION", corr.cards[:1], case=_CASES[ruling])


def _past_of_shown(corr) -> tuple:
    """The moments past which the step shown can no longer be done: its own, and those of the steps
    after it up to the first a reader sees, which wait behind it (a replacement never laid while "put the
    joker with the burns", which no reader sees, is shown)."""
    past = []
    for todo in corr.todos[corr.current:]:
        if todo.done:
            continue
        contract = contract_of(todo)
        past += contract.past
        if contract.seen_by is not None or contract.pressed is not None:
            break
    return tuple(past)


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


__all__ = ["answer", "judge", "snapshot"]
