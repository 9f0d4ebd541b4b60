"""Open steps overtaken by the hand: written from RULES.md before the engine ran the open-steps
table as its own (``dealerbox/rules/open_steps.py``).

RULES.md ("How the box tells cases apart"): no correction stays open silently while the hand moves
on; an action no answer of the open step allows is WRONG_CORRECTION at once, amber while the hand
can be put right, floor once it cannot. ("Sensing faults"): a sensing fault never explains a step
left undone: a card both readers still see was read, and a burn of another street is no second burn.
("How the box tells cases apart", EXTRA_CARDS): the grace period belongs to the cards; ROUND DONE
inside it withdraws nothing the cards call for."""

import pytest

from tests.rules.test_fidelity import Table

FLOP = ("8c", "4d", "Qd", "9s")       # burn, then the three flop cards


def _joker_on_the_turn(mouth_sensor=False):
    """Four players, the flop, then the turn's burn and a joker laid as the turn card."""
    t = Table()
    t.new_hand(4, mouth_sensor=mouth_sensor)
    t.press("round_done")
    t.street(*FLOP)
    t.press("round_done")
    t.shoe("6s")                                  # the turn's burn
    t.shoe("joker")
    t.board("joker")
    return t


def _joker_left_on_the_turn(mouth_sensor):
    """Hand 1: the turn card is a joker, left on the board; ROUND DONE, the river's burn and card."""
    t = _joker_on_the_turn(mouth_sensor)
    assert t.now.irregularity == "JOKER" and t.now.verdict == "correct"
    t.press("round_done")                         # the joker still lies on the board
    after_round_done = t.now
    t.shoe("2h")                                  # the river's burn
    after_burn = t.now
    t.shoe("9c")
    t.board("9c")
    return t, after_round_done, after_burn


@pytest.mark.parametrize("mouth_sensor", [False, True], ids=["no-mouth-sensor", "mouth-sensor"])
def test_joker_left_on_the_board_while_the_hand_goes_on_is_a_wrong_correction(mouth_sensor):
    t, after_round_done, after_burn = _joker_left_on_the_turn(mouth_sensor)
    # ROUND DONE with the joker on the board: the step "replace it" can no longer be done before the
    # turn is bet on: no answer allows it, and it is never read as a dead tag.
    assert after_round_done.irregularity == "WRONG_CORRECTION", after_round_done
    assert after_round_done.verdict == "floor", after_round_done
    steps = {s.key for d in t.decisions for s in d.steps}
    assert "unread.street_card_there" not in steps
    raised = set(t.raised())
    assert "DOUBLE_BURN" not in raised, t.decisions
    # No sensing fault names the joker, which both readers still see.
    assert not [d for d in t.decisions if d.irregularity == "UNREAD_CARD"], t.decisions
    # The box never tells the dealer to move a good card: the river's burn stays a burn.
    assert t.engine.where["2h"] == "burn"
    assert t.engine.where["9c"] == "board"
    assert raised <= {"JOKER", "WRONG_CORRECTION"}, raised


def test_joker_replaced_on_the_turn_is_no_wrong_correction():
    """The answer the table allows: the joker comes off, the next card is the turn; play on."""
    for mouth_sensor in (False, True):
        t = _joker_on_the_turn(mouth_sensor)
        t.off("joker")
        t.shoe("7d")
        t.board("7d")
        assert t.now.verdict == "ok", t.now
        t.press("round_done")
        t.street("2h", "9c")
        t.press("round_done")
        t.press("hand_over")
        assert set(t.raised()) == {"JOKER"} and t.left_open() == []


def _two_extra_cards_then_round_done(profile="tda-2019", mouth_sensor=False):
    """Hand 2: heads-up, two cards after the deal, ROUND DONE inside the grace period."""
    t = Table(profile)
    t.new_hand(2, mouth_sensor=mouth_sensor)
    t.shoe("Tc")
    assert t.now.irregularity == "EXTRA_CARD"
    t.shoe("8s")
    t.press("round_done", dt=1.0)                 # 1 s after the second card: inside the grace
    return t


@pytest.mark.parametrize("mouth_sensor", [False, True], ids=["no-mouth-sensor", "mouth-sensor"])
def test_two_extra_cards_round_done_inside_the_grace_then_a_card_after_it(mouth_sensor):
    t = _two_extra_cards_then_round_done(mouth_sensor=mouth_sensor)
    t.shoe("7s", dt=3.0)                          # past the grace period, no card on the board
    assert t.now.irregularity == "EXTRA_CARDS" and t.now.verdict == "misdeal", t.now


def test_two_extra_cards_round_done_inside_the_grace_then_the_closing_tick():
    t = _two_extra_cards_then_round_done()
    t.feed("tick", dt=3.0)
    assert t.now.irregularity == "EXTRA_CARDS" and t.now.verdict == "misdeal", t.now


def test_two_extra_cards_round_done_inside_the_grace_then_a_flop_is_ruled_at_its_burn():
    """The dealer lays a flop after the grace period: the ruling comes at the first event past it,
    not at the second flop card."""
    t = _two_extra_cards_then_round_done()
    out = t.shoe("7s", dt=2.5)                    # past the grace period
    assert any(d.irregularity == "EXTRA_CARDS" for d in out), t.now
    assert t.now.verdict == "misdeal"


def test_two_extra_cards_without_round_done_still_rule_after_the_grace():
    t = Table()
    t.new_hand(2)
    t.shoe("Tc")
    t.shoe("8s")
    t.feed("tick", dt=3.5)
    assert t.now.irregularity == "EXTRA_CARDS" and t.now.verdict == "misdeal"


def _joker_burned_on_the_flop_then_one_left_on_the_turn(mouth_sensor):
    """Hand 1 with the deck's other joker met first: the flop's first card is a joker, shown and
    burned as the correction says; the turn card is the second joker, left on the board. Both are
    named without their UIDs, so the box must tell them apart by the order they came out."""
    t = Table()
    t.new_hand(4, mouth_sensor=mouth_sensor)
    t.press("round_done")
    t.shoe("8c")                                  # the flop's burn
    t.shoe("joker")                               # the flop's first card: a joker
    assert t.now.irregularity == "JOKER"
    t.press("ack")                                # shown, set with the burns
    for card in FLOP[1:]:
        t.shoe(card)
        t.board(card)
    assert t.now.verdict == "ok", t.now
    t.press("round_done")
    t.shoe("6s")                                  # the turn's burn
    t.shoe("joker")                               # the turn card: the other joker
    t.board("joker")
    assert t.now.irregularity == "JOKER" and t.now.verdict == "correct", t.now
    t.press("round_done")                         # the turn's joker still lies on the board
    after_round_done = t.now
    t.shoe("2h")                                  # the river's burn
    t.shoe("9c")
    t.board("9c")
    return t, after_round_done


@pytest.mark.parametrize("mouth_sensor", [False, True], ids=["no-mouth-sensor", "mouth-sensor"])
def test_the_joker_left_on_the_board_is_the_one_drawn_last_not_one_burned_earlier(mouth_sensor):
    t, after_round_done = _joker_burned_on_the_flop_then_one_left_on_the_turn(mouth_sensor)
    assert after_round_done.irregularity == "WRONG_CORRECTION", after_round_done
    assert after_round_done.verdict == "floor", after_round_done
    raised = set(t.raised())
    assert "DOUBLE_BURN" not in raised, t.decisions
    assert not [d for d in t.decisions if d.irregularity == "UNREAD_CARD"], t.decisions
    assert raised <= {"JOKER", "WRONG_CORRECTION"}, raised
    jokers = sorted(p for k, p in t.engine.where.items() if k.startswith("joker:"))
    assert jokers == ["board", "burn"], jokers    # the flop's joker stays with the burns
    assert t.engine.where["2h"] == "burn" and t.engine.where["9c"] == "board"


def _turn_card_taken_off_with_a_premature_river(mouth_sensor):
    """The turn's card and a premature river card laid together; the dealer takes the turn's card off
    too, though it must stay: WRONG_CORRECTION, amber, "put it back on the board"."""
    t = Table()
    t.new_hand(4, mouth_sensor=mouth_sensor)
    t.press("round_done")
    t.street("Jh", "7c", "5h", "As")
    t.press("round_done")
    t.shoe("6s")                                  # the turn's burn
    t.shoe("4d")
    t.board("4d")
    t.shoe("8h")                                  # the river's burn, before the turn's round is done
    t.shoe("Qd")
    t.board("Qd")
    assert t.now.irregularity == "PREMATURE_RIVER", t.now
    t.off("4d")
    assert t.now.irregularity == "WRONG_CORRECTION" and t.now.verdict == "correct", t.now
    assert t.now.steps[t.now.step].key == "wrong.keep_on_board"
    return t


@pytest.mark.parametrize("mouth_sensor", [False, True], ids=["no-mouth-sensor", "mouth-sensor"])
@pytest.mark.parametrize("goes_on", ["river laid", "round done"])
def test_a_card_that_must_stay_on_the_board_left_off_while_the_hand_goes_on(mouth_sensor, goes_on):
    """The turn bet on without its card, or a river laid while it is off: the step can no longer be
    done, so the box rules WRONG_CORRECTION floor at once instead of staying amber."""
    t = _turn_card_taken_off_with_a_premature_river(mouth_sensor)
    if goes_on == "river laid":
        t.shoe("8c")
        t.shoe("7s")
        t.board("7s")
    else:
        t.press("round_done")
    assert t.now.irregularity == "WRONG_CORRECTION" and t.now.verdict == "floor", t.now
    assert "DOUBLE_BURN" not in t.raised() and "UNREAD_CARD" not in t.raised()


def test_the_card_put_back_answers_the_step():
    """The answer the table allows: the card back on the board; no WRONG_CORRECTION floor."""
    t = _turn_card_taken_off_with_a_premature_river(False)
    t.board("4d")
    assert not [d for d in t.decisions if d.verdict == "floor"], t.decisions


@pytest.mark.parametrize("mouth_sensor", [False, True], ids=["no-mouth-sensor", "mouth-sensor"])
def test_a_four_card_flop_bet_on_before_it_is_redealt_is_a_wrong_correction(mouth_sensor):
    """cz-c40 redeals a four-card flop. ROUND DONE with the four cards still on the board: the flop
    was bet on as it lies, and it can no longer be redealt: WRONG_CORRECTION floor, not amber on the turn."""
    t = Table("cz-c40")
    t.new_hand(8, mouth_sensor=mouth_sensor)
    t.press("round_done")
    for card in ("Ts", "Td", "3s", "2s", "Ac"):
        t.shoe(card)
    for card in ("Td", "3s", "2s", "Ac"):
        t.board(card)
    assert t.now.irregularity == "FOUR_CARD_FLOP" and t.now.steps[t.now.step].key == "redeal.cards_back"
    t.press("round_done")
    assert t.now.irregularity == "WRONG_CORRECTION" and t.now.verdict == "floor", t.now


@pytest.mark.parametrize("mouth_sensor", [False, True], ids=["no-mouth-sensor", "mouth-sensor"])
def test_round_done_answers_the_extra_card_put_back(mouth_sensor):
    """The table: ROUND DONE answers "stop" and "put it back on top" as ACK does; the card then comes
    out as the flop's burn, and the hand plays on green."""
    t = Table()
    t.new_hand(4, mouth_sensor=mouth_sensor)
    t.shoe("Jh")                                  # a card too many
    assert t.now.irregularity == "EXTRA_CARD" and t.now.steps[t.now.step].key == "extra.stop"
    t.press("round_done")
    assert t.now.irregularity == "EXTRA_CARD" and t.now.steps[t.now.step].key == "extra.burn_it", t.now
    t.street("Jh", "7c", "5h", "As")
    assert t.now.verdict == "ok", t.now
    assert t.engine.where["Jh"] == "burn"


def test_round_done_on_a_street_being_dealt_again_is_a_round_called_ahead():
    """cz-c40, a four-card flop dealt again: its cards back, ROUND DONE before RESHUFFLED. No round
    can be bet on a flop that shows nothing: the press is called ahead (RULES.md), the reshuffle and
    the redeal stay to be done on the flop, and the turn may come without another press."""
    t = Table("cz-c40")
    t.new_hand(4)
    t.press("round_done")
    t.street(*FLOP)
    t.shoe("5h")
    t.board("5h")
    for card in ("4d", "Qd", "9s", "5h"):
        t.off(card)
    t.press("round_done")
    assert t.engine.phase == "flop" and t.now.steps[t.now.step].key == "reshuffle.now", t.now
    t.press("reshuffled")
    for card in ("2d", "3d", "6d"):
        t.shoe(card)
        t.board(card)
    assert t.now.verdict == "ok" and t.engine.phase == "flop"
    t.street("7d", "Td")                          # the turn, the round already called done
    assert t.now.verdict == "ok" and t.engine.phase == "turn"
    assert set(t.raised()) == {"FOUR_CARD_FLOP"}


def test_the_joker_taken_off_is_the_one_the_open_correction_is_about():
    """Two jokers on the board, named without their UIDs: the turn's, left there and ruled on, and the
    river's, shown now. The one taken off is the newest (the one JOKER's correction is about): ROUND
    DONE then is no bet on a joker, and the replacement is still to come."""
    t = _joker_on_the_turn()
    t.press("round_done")                         # the turn's joker left on the board: ruled
    assert t.now.irregularity == "WRONG_CORRECTION" and t.now.verdict == "floor"
    t.press("ack")
    t.press("ack")
    t.shoe("2h")
    t.shoe("joker")
    t.board("joker")
    assert t.now.irregularity == "JOKER"
    shown = len(t.decisions)
    t.off("joker")
    t.press("ack")
    t.press("round_done")
    assert t.now.irregularity == "JOKER" and t.now.steps[t.now.step].key == "joker.replace_next", t.now
    jokers = sorted(t.engine.hand.drawn_t, key=t.engine.hand.drawn_t.get)
    jokers = [k for k in jokers if k.startswith("joker:")]
    assert [t.engine.where[k] for k in jokers] == ["board", "burn"]
    t.shoe("9c")
    t.board("9c")
    assert t.now.verdict == "ok", t.now
    assert [d for d in t.decisions[shown:] if d.irregularity == "WRONG_CORRECTION"] == []
