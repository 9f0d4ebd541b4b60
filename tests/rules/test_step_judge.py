"""The step judge runs the open-steps table and nothing else: change a step's row and the box
answers otherwise. Each test plays a hand with the shipped table, then with one row changed,
and checks that the change, and only the table, made the difference."""

from dataclasses import replace

import pytest

from dealerbox.rules import open_steps
from tests.rules.test_fidelity import Table

FLOP = ("8c", "4d", "Qd", "9s")       # burn, then the three flop cards


def _edit(monkeypatch, key, **changes):
    monkeypatch.setitem(open_steps.STEP_CONTRACTS, key, replace(open_steps.STEP_CONTRACTS[key], **changes))


def _extra_card_then_another(t):
    """An extra card after the deal, put back (ACK, ACK), the round done, and another card drawn as
    the flop's burn instead of it (a mouth sensor: no unread card can explain it)."""
    t.new_hand(3, mouth_sensor=True)
    t.shoe("8c")                                  # the extra card
    assert t.now.irregularity == "EXTRA_CARD"
    t.press("ack")
    t.press("ack")
    t.press("round_done")
    assert t.now.steps[t.now.step].key == "extra.burn_it"
    t.shoe("2h")                                  # not the card put back on top


def test_a_card_other_than_the_one_put_back_is_the_wrong_correction_the_table_names(monkeypatch):
    t = Table()
    _extra_card_then_another(t)
    assert t.now.irregularity == "WRONG_CORRECTION" and t.now.verdict == "correct"
    assert [s.key for s in t.now.steps] == ["wrong.expected_card", "wrong.put_back_and_draw"]

    _edit(monkeypatch, "extra.burn_it", wrong_at=())
    t = Table()
    _extra_card_then_another(t)
    assert "WRONG_CORRECTION" not in t.raised()
    assert t.now.irregularity == "EXTRA_CARD" and t.now.steps[t.now.step].key == "extra.burn_it"


def test_the_step_is_ticked_by_the_answer_the_table_names(monkeypatch):
    """The extra card drawn again is the burn (``card_drawn``); told another answer, the box waits."""
    def play():
        t = Table()
        t.new_hand(3)
        t.shoe("8c")
        t.press("ack")
        t.press("ack")
        t.press("round_done")
        t.shoe("8c")                              # drawn again: the flop's burn
        return t

    assert play().now.verdict == "ok"
    _edit(monkeypatch, "extra.burn_it", seen_by="card_off_board")
    t = play()
    assert t.now.irregularity == "EXTRA_CARD" and t.now.steps[t.now.step].key == "extra.burn_it"


def test_the_reshuffle_is_answered_by_its_own_button_and_its_effect_is_the_tables(monkeypatch):
    """C40 redeal: RESHUFFLED answers ``reshuffle.now`` and snapshots the stub (``then``); a burn
    drawn from it afterwards is then a card reshuffled in. Without the effect, the stub is as it was."""
    def play():
        t = Table("cz-c40")
        t.new_hand(4)
        t.press("round_done")
        t.street(*FLOP)
        t.shoe("5h")
        t.board("5h")                             # a fourth flop card: the street is dealt again
        assert t.now.steps[0].key == "redeal.cards_back", t.now
        for card in ("4d", "Qd", "9s", "5h"):
            t.off(card)
        t.press("reshuffled")
        return t

    t = play()
    assert t.now.steps[t.now.step].key == "redeal.deal_again"
    assert "8c" in t.engine.hand.excluded         # the burn stays out of the reshuffled stub

    _edit(monkeypatch, "reshuffle.now", then=None)
    t = play()
    assert t.now.steps[t.now.step].key == "redeal.deal_again"
    assert "8c" not in t.engine.hand.excluded


@pytest.mark.parametrize("superseded", [True, False], ids=["shipped", "row-without-superseded_at"])
def test_an_extra_card_that_turned_out_the_flops_burn_leaves_by_the_table(monkeypatch, superseded):
    """Heads-up: an extra card, then the flop drawn early and shown before ROUND DONE: a premature flop.
    The EXTRA_CARD steps name the moment (``flop_drawn_early``) that shows the extra card was the flop's
    burn; without it, the premature flop's correction would overtake them."""
    if not superseded:
        for key in ("extra.stop", "extra.return_on_top", "extra.burn_it"):
            _edit(monkeypatch, key, superseded_at=())
    t = Table()
    t.new_hand(2)
    t.shoe("8c")
    assert t.now.irregularity == "EXTRA_CARD"
    for card in FLOP[1:]:
        t.shoe(card, dt=0.2)
    t.board("4d", dt=0.2)
    if superseded:
        assert t.now.irregularity == "PREMATURE_FLOP", t.now
    else:
        assert t.now.irregularity == "WRONG_CORRECTION" and t.now.verdict == "floor", t.now



def _misdeal_after_the_exposed_question(index=None, monkeypatch=None):
    """No mouth sensor: the second card dealt is exposed; the box asks whether it was the third (a read
    missed); the dealer answers MISDEAL."""
    from dealerbox.rules import engine

    if index is not None:
        monkeypatch.setattr(engine, "_INDEX", index)
    t = Table()
    t.feed("new_hand", players=3, mouth_sensor=False)
    t.shoe("Qs")
    t.shoe("Jc")
    t.press("exposed")
    assert t.now.steps[0].key == "exposed.second_or_later", t.now
    t.press("misdeal")
    return t


def test_a_question_the_book_answers_is_answered_only_while_the_table_says_it_is_open(monkeypatch):
    """MISDEAL answers "was the exposed card the second?" through the rule book's outcome the table names
    (``answered_in_book``): EXPOSED_EARLY, a misdeal. Without the name, the row applies to no step,
    and the press is the dealer's own misdeal call."""
    from dealerbox.rules.book import compile_book

    t = _misdeal_after_the_exposed_question()
    assert (t.now.verdict, t.now.irregularity) == ("misdeal", "EXPOSED_EARLY")

    _edit(monkeypatch, "exposed.second_or_later", answered_in_book=())
    t = _misdeal_after_the_exposed_question(compile_book(), monkeypatch)
    assert (t.now.verdict, t.now.irregularity) == ("misdeal", None), t.now
    assert t.now.steps[0].key == "halt.misdeal_called"


def test_a_correction_the_hand_went_past_expects_no_card_back():
    """A double burn on the turn (its second burn to go back on top), then PREMATURE: the step is
    overtaken and the floor called. The card it expected back is expected no longer: the cards drawn
    next are judged as they come (a river laid early), never swallowed as "another card than expected"
    with the panel green."""
    t = Table()
    t.new_hand(3, mouth_sensor=True)
    t.press("round_done")
    t.street(*FLOP)
    t.press("round_done")
    for card in ("6s", "2h", "9c"):
        t.shoe(card)
    t.board("9c")
    t.feed("tick", dt=3)
    assert t.now.irregularity == "DOUBLE_BURN"
    t.press("premature")
    assert (t.now.irregularity, t.now.verdict) == ("WRONG_CORRECTION", "floor")
    assert t.engine.hand.expect_next == []
    t.press("ack")
    t.press("ack")
    t.press("round_done")
    t.shoe("3c")
    t.shoe("5c")
    t.board("5c")
    assert t.now.irregularity == "PREMATURE_RIVER", t.now
    assert t.engine.where["5c"] == "board"


def test_a_wrong_correction_of_a_step_opened_by_the_same_event_is_ruled():
    """A spread flop with a second burn: the next card out ends the double burn's wait, and the
    correction it opens (the second burn back on top) is already what that card is judged against."""
    t = Table()
    t.new_hand(3, mouth_sensor=True)
    t.press("round_done")
    for card in ("7d", "Ks", "Ad", "5s", "4s"):
        t.shoe(card, dt=0.2)
    for card in ("Ad", "5s", "4s"):
        t.board(card, dt=0.2)
    t.shoe("2c")
    assert t.now.irregularity == "WRONG_CORRECTION", t.now
    assert [s.key for s in t.now.steps] == ["wrong.expected_card", "wrong.put_back_and_draw"]
    t.shoe("Ks")                                   # put right: the second burn drawn
    assert t.now.verdict == "ok"


def test_a_card_kept_out_taken_off_in_the_event_a_grace_period_opens_its_correction():
    """No mouth sensor: the turn laid before the flop's round was done, its read missed. The grace
    period that makes it a premature turn runs out at the next event, a flop card taken off the board:
    that card must stay out of the stub (the turn goes aside, the river comes from a reshuffle)."""
    t = Table()
    t.new_hand(3)
    t.press("round_done")
    t.street(*FLOP)
    t.shoe("6s")
    t.board("9c")                                  # held, waiting for its read
    t.off("4d", dt=3)
    assert (t.now.irregularity, t.now.steps[t.now.step].key) == ("WRONG_CORRECTION", "wrong.keep_on_board"), t.now
