"""Verdicts: what the box's count says, whatever the table's sensors (issue 19 point 2)."""

import pytest

from dealerbox.rules.engine import HandEngine
from dealerbox.rules.events import Event
from dealerbox.rules.messages import LANGUAGES, load_messages
from dealerbox.rules.profiles import load_profile
from hardware_sim.script import HandScript

PROFILES = ("tda-2019", "cz-c40")


def play(profile, events):
    """Feed *events* to a fresh engine; return it and every decision."""
    engine = HandEngine(profile)
    out = []
    for e in events:
        out += engine.feed(Event.from_dict(e))
    return engine, out


def step_key(decision):
    return decision.steps[decision.step].key if decision.step < len(decision.steps) else None


def unseen(s: HandScript) -> str:
    """A card leaves the stub unread and no mouth sensor counts it: no event at all."""
    return s.stub.pop(0)


# ================================================================ point 2: the count decides the verdict

@pytest.mark.parametrize("profile", PROFILES)
def test_an_exposed_second_card_without_a_sensor_is_a_misdeal_as_with_one(profile):
    rulings = {}
    for mouth in (False, True):
        s = HandScript(seed=5)
        s.new_hand(4, mouth_sensor=mouth).deal(2).button("exposed")
        engine, out = play(profile, s.events)
        rulings[mouth] = (out[-1].verdict, out[-1].irregularity)
    assert rulings[False] == rulings[True] == ("misdeal", "EXPOSED_EARLY")


@pytest.mark.parametrize("profile", PROFILES)
def test_the_exposed_second_card_question_keeps_the_unread_tag_escape_in_its_steps(profile):
    s = HandScript(seed=6)
    s.new_hand(4).deal(2)
    exposed = s.last[0]
    s.button("exposed")
    engine, out = play(profile, s.events)
    d = out[-1]
    assert (d.verdict, d.irregularity, step_key(d)) == ("misdeal", "EXPOSED_EARLY", "exposed.second_or_later")
    # Not stopped yet: the dealer who knows a tag was missed answers ACK.
    assert engine.phase == "deal"
    for lang in LANGUAGES:
        assert "ACK" in load_messages(lang).text(d.steps[d.step])
    (d,) = engine.feed(Event.from_dict({"t": s.t + 1, "ev": "button", "name": "ack"}))
    assert (d.verdict, d.irregularity, step_key(d)) == ("correct", "EXPOSED_DEAL", "exposed.finish_deal")
    assert engine.where[exposed] == "burn"


@pytest.mark.parametrize("profile", PROFILES)
def test_misdeal_confirms_the_exposed_second_card_and_the_hand_waits_for_new_hand(profile):
    s = HandScript(seed=7)
    s.new_hand(4).deal(2).button("exposed").button("misdeal")
    engine, out = play(profile, s.events)
    assert (out[-1].verdict, out[-1].irregularity, engine.phase) == ("misdeal", "EXPOSED_EARLY", "halted")
    assert step_key(out[-1]) == "halt.misdeal"


@pytest.mark.parametrize("profile", PROFILES)
def test_an_exposed_first_card_without_a_sensor_is_a_misdeal_at_once(profile):
    s = HandScript(seed=8)
    s.new_hand(4).deal(1).button("exposed")
    engine, out = play(profile, s.events)
    assert (out[-1].verdict, out[-1].irregularity, engine.phase) == ("misdeal", "EXPOSED_EARLY", "halted")


def _burn_out_again(mouth: bool) -> HandScript:
    """The flop's burn comes out of the shoe again as the turn's burn, nothing having put it back."""
    s = HandScript(seed=9)
    s.new_hand(4, mouth_sensor=mouth).deal().round_done()
    burn = s.draw()
    s.flop(burn=False).round_done()
    s.take(burn)
    return s


@pytest.mark.parametrize("profile", PROFILES)
def test_a_burn_drawn_again_without_a_sensor_is_void_as_with_one(profile):
    rulings = {}
    for mouth in (False, True):
        engine, out = play(profile, _burn_out_again(mouth).events)
        rulings[mouth] = (out[-1].verdict, out[-1].irregularity)
    assert rulings[False] == rulings[True] == ("void", "DUPLICATE_CARD")


@pytest.mark.parametrize("profile", PROFILES)
def test_the_burn_drawn_again_question_keeps_the_put_back_escape_in_its_steps(profile):
    s = _burn_out_again(False)
    engine, out = play(profile, s.events)
    assert step_key(out[-1]) == "duplicate.returned_burn" and engine.phase == "turn"
    for lang in LANGUAGES:
        assert "ACK" in load_messages(lang).text(out[-1].steps[0])
    (d,) = engine.feed(Event.from_dict({"t": s.t + 1, "ev": "button", "name": "ack"}))
    assert (d.verdict, d.irregularity, step_key(d)) == ("ok", "UNREAD_CARD", "unread.burn")


@pytest.mark.parametrize("profile", PROFILES)
def test_every_question_without_a_sensor_shows_the_verdict_of_its_irregularity(profile):
    """The questions the box asks where an unread tag explains a sight as well as a dealing
    error (sensing.py ``_ask``) carry the profile's verdict for the irregularity asked about."""
    p = load_profile(profile)
    hands = {"EXPOSED_EARLY": HandScript(seed=11).new_hand(3).deal(2).button("exposed").events,
             "DUPLICATE_CARD": _burn_out_again(False).events}
    s = HandScript(seed=12)
    s.new_hand(4).deal()
    extra = s.draw()
    s.put_back(extra).button("ack").button("ack").round_done()
    s.stub.remove(extra)   # it comes out again as the burn, unread: the next card read is another
    s.take()
    hands["WRONG_CORRECTION"] = s.events
    for rid, events in hands.items():
        engine, out = play(p, events)
        d = out[-1]
        assert d.irregularity == rid and engine.corrections[-1].asks, (rid, d)
        assert d.verdict == p[rid].verdict, rid
        assert engine.phase != "halted"
