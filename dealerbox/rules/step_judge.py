"""The engine's one judge of open steps: it runs the open-steps table (:mod:`.open_steps`).

After every event (:func:`judge`), one open step at a time. What the rule book's outcomes
announced the event to be (:meth:`~dealerbox.rules.engine.HandEngine.announce`) may first show a
step to rest on a reading the cards explained otherwise (``superseded_at``). Then the event is
checked against the step's answers (:func:`answer`: the table's ``seen_by`` answer observed, or its
``pressed`` button), then against its wrong corrections (an announced action it names in
``wrong_at``, the moments of its ``past``, and a second irregularity that would move a card while
the step must still be done), then against its ends (a finished correction leaves the panel; HAND
OVER puts one left open on record). No other code judges a step the hand has moved past.
"""

from __future__ import annotations

from dealerbox.rules.board import street_progress
from dealerbox.rules.buttons import next_round
from dealerbox.rules.corrections import ANSWERS, EFFECTS
from dealerbox.rules.open_steps import MOVES_A_CARD, contract_of, must_be_done, wrong_case
from dealerbox.rules.procedures import correct
from dealerbox.rules.tracker import STREETS, Seen

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


def answer(eng, event) -> None:
    """Tick off the open steps *event* answers, by the table: a step's ``seen_by`` answer observed,
    or its ``pressed`` button; the steps before it that the box cannot see count done with it
    (dealers forget buttons). ACK ticks the newest correction's step the box can neither see nor
    have pressed. Finished corrections leave the panel."""
    for corr in list(eng.corrections):
        if corr.born == eng.seq:
            continue
        for i, todo in enumerate(corr.todos):
            if todo.done:
                continue
            contract = contract_of(todo)
            if contract.seen_by is not None:
                hit = ANSWERS[contract.seen_by](eng, event, todo, corr)
            else:
                hit = contract.pressed is not None and event.ev == "button" and event.name == contract.pressed
            if hit:
                for prev in corr.todos[:i]:
                    if not prev.done and contract_of(prev).seen_by is None:
                        _done(eng, event, prev, corr)
                _done(eng, event, todo, corr)
    if event.ev == "button" and event.name == "ack" and eng.corrections:
        top = eng.corrections[-1]
        cur = top.current
        if top.born != eng.seq and cur < len(top.todos):
            contract = contract_of(top.todos[cur])
            if contract.seen_by is None and contract.pressed is None:
                _done(eng, event, top.todos[cur], top)
    eng.corrections = [c for c in eng.corrections if not c.finished]


def _done(eng, event, todo, corr) -> None:
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
    _superseded(eng)
    answer(eng, event)
    _answered_by_button(eng, event)
    _announced_wrong(eng)
    _second_irregularity(eng)
    for corr in list(eng.corrections):
        if corr.halting or corr.irregularity is None or corr.born == eng.seq or corr.current >= len(corr.todos):
            continue
        contract = contract_of(corr.todos[corr.current])
        if not contract.past or corr not in eng.corrections:
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


__all__ = ["answer", "judge"]
