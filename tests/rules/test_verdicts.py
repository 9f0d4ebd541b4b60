"""Verdicts: what the box's count says, whatever the table's sensors (issue 19 point 2),
and the misdeal, void and floor call a house may rule for any irregularity (point 4)."""

import copy
import json
import tomllib
from pathlib import Path

import pytest
import tomli_w

from dealerbox.errors import ConfigError
from dealerbox.rules.engine import HandEngine
from dealerbox.domain.events import Event
from dealerbox.domain.messages import LANGUAGES, load_messages
from dealerbox.rules.profiles import (
    ANY_IRREGULARITY,
    OWN_PROCEDURES_ONLY,
    PROCEDURES,
    RULES_DIR,
    load_profile,
    procedures_for,
)
from hardware_sim.script import HandScript

PROFILES = ("tda-2019", "cz-c40")
SCENARIOS = sorted((Path(__file__).parents[1] / "scenarios").glob("*.jsonl"))


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


# ================================================================ point 4: houses rule any irregularity

@pytest.fixture()
def tda_data():
    return tomllib.loads((RULES_DIR / "tda-2019.toml").read_text(encoding="utf-8"))


def house_file(tmp_path, data, **rules):
    """A copy of *data* with the rows given as ``RID=(verdict, procedure)``, written to tmp."""
    data = copy.deepcopy(data)
    data["name"] = "house"
    for rid, (verdict, procedure) in rules.items():
        data["rules"][rid].update(verdict=verdict, procedure=procedure)
    path = tmp_path / "house.toml"
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    return path


def test_a_house_profile_can_rule_an_exposed_deal_card_a_misdeal_and_a_missed_burn_a_floor_call(tmp_path, tda_data):
    house = load_profile(house_file(tmp_path, tda_data, EXPOSED_DEAL=("misdeal", "misdeal"),
                                    MISSED_BURN=("floor", "call_floor")))
    assert (house["EXPOSED_DEAL"].verdict, house["EXPOSED_DEAL"].procedure) == ("misdeal", "misdeal")
    assert (house["MISSED_BURN"].verdict, house["MISSED_BURN"].procedure) == ("floor", "call_floor")
    assert house["EXPOSED_DEAL"].sources == load_profile("tda-2019")["EXPOSED_DEAL"].sources


def test_a_house_misdeal_on_an_exposed_deal_card_stops_the_hand_until_new_hand(tmp_path, tda_data):
    house = load_profile(house_file(tmp_path, tda_data, EXPOSED_DEAL=("misdeal", "misdeal")))
    s = HandScript(seed=21)
    s.new_hand(6).deal(5)
    exposed = s.last[0]
    s.button("exposed")
    judged = len(s.events)
    s.deal(1).round_done()
    engine = HandEngine(house)
    d = engine.feed_all(Event.from_dict(e) for e in s.events[:judged])[-1]
    assert (d.verdict, d.irregularity, d.cards) == ("misdeal", "EXPOSED_DEAL", (exposed,))
    # The misdeal's steps where it is native (EXPOSED_EARLY, EXPOSED_TWICE...): gather and redeal.
    assert [st.key for st in d.steps] == ["halt.misdeal"] and engine.phase == "halted"
    assert d.rule == house["EXPOSED_DEAL"].sources
    # The dealer goes on anyway: the box stays stopped and says so.
    engine.feed_all(Event.from_dict(e) for e in s.events[judged:])
    assert engine.phase == "halted" and engine.decision.verdict == "misdeal"
    assert step_key(engine.decision) == "halt.card_after_stop"
    # NEW HAND: the redeal is a clean hand.
    redeal = HandScript(seed=27, t0=s.t).full_hand(6)
    assert all(x.verdict == "ok" for x in engine.feed_all(Event.from_dict(e) for e in redeal.events))
    assert engine.phase == "over"


def test_the_tda_exposed_deal_card_is_still_a_correction(tda_data):
    s = HandScript(seed=21)
    s.new_hand(6).deal(5).button("exposed")
    engine, out = play("tda-2019", s.events)
    assert (out[-1].verdict, step_key(out[-1])) == ("correct", "exposed.finish_deal")


def _missed_burn_flop(s: HandScript) -> str:
    """The flop dealt with no burn: its first card lands where the burn should have gone."""
    s.new_hand(4).deal().round_done()
    first = s.stub[0]
    s.take(first).on(first)
    return first


def test_a_house_floor_call_on_a_missed_burn_has_the_native_floor_steps(tmp_path, tda_data):
    house = load_profile(house_file(tmp_path, tda_data, MISSED_BURN=("floor", "call_floor")))
    s = HandScript(seed=22)
    first = _missed_burn_flop(s)
    engine, out = play(house, s.events)
    d = out[-1]
    assert (d.verdict, d.irregularity, d.cards) == ("floor", "MISSED_BURN", (first,))
    # As where call_floor is native (BOARD_NOT_FROM_SHOE...): what the box saw, then the floor decides.
    assert [st.key for st in d.steps] == ["floor.house_rule", "floor.decides"]
    assert engine.phase == "flop"


@pytest.mark.parametrize("ruling", ["tda", "stands"])
def test_after_a_house_floor_call_the_hand_plays_on_whatever_the_floor_ruled(tmp_path, tda_data, ruling):
    house = load_profile(house_file(tmp_path, tda_data, MISSED_BURN=("floor", "call_floor")))
    s = HandScript(seed=23)
    first = _missed_burn_flop(s)
    if ruling == "tda":
        # The floor rules as TDA does: the card comes off as an open burn, two flop cards follow...
        s.button("ack").button("ack").off(first)
        s.street(3, burn=False)
    else:
        # ...or lets the flop stand: two more cards.
        s.button("ack").button("ack")
        s.street(2, burn=False)
    s.round_done().turn().round_done().river().round_done().hand_over()
    engine, out = play(house, s.events)
    raised = [(d.verdict, d.irregularity) for d in out if d.verdict != "ok"]
    assert raised[0] == ("floor", "MISSED_BURN")
    assert set(raised) == {("floor", "MISSED_BURN")}, raised
    assert engine.phase == "over" and engine.decision.verdict == "ok"


def test_a_card_the_floor_sent_back_into_the_stub_is_no_duplicate(tmp_path, tda_data):
    house = load_profile(house_file(tmp_path, tda_data, EXTRA_CARD=("floor", "call_floor")))
    s = HandScript(seed=24)
    s.new_hand(4).deal()
    extra = s.draw()
    s.button("ack").button("ack").put_back(extra).round_done()
    s.take(extra)   # the floor had it put back on top: it is the flop's burn
    s.flop(burn=False).round_done().turn().round_done().river().round_done().hand_over()
    engine, out = play(house, s.events)
    raised = {(d.verdict, d.irregularity) for d in out if d.verdict != "ok"}
    assert raised == {("floor", "EXTRA_CARD")}, raised
    assert engine.where[extra] == "muck" and engine.phase == "over"


def test_a_house_void_has_the_void_step(tmp_path, tda_data):
    house = load_profile(house_file(tmp_path, tda_data, BOXED_CARD=("void", "void")))
    s = HandScript(seed=25)
    s.new_hand(4).deal(3).button("boxed")
    engine, out = play(house, s.events)
    assert (out[-1].verdict, out[-1].irregularity, engine.phase) == ("void", "BOXED_CARD", "halted")
    assert [st.key for st in out[-1].steps] == ["halt.void"]


def test_a_house_may_rule_a_late_deal_error_a_misdeal(tmp_path, tda_data):
    house = load_profile(house_file(tmp_path, tda_data, LATE_ERROR=("misdeal", "misdeal")))
    s = HandScript(seed=26)
    s.new_hand(4).deal().round_done().button("exposed")
    engine, out = play(house, s.events)
    assert (out[-1].verdict, engine.phase, step_key(out[-1])) == ("misdeal", "halted", "halt.misdeal")
    _, tda = play("tda-2019", s.events)
    assert (tda[-1].verdict, step_key(tda[-1])) == ("floor", "late.substantial_action")


def test_every_irregularity_of_a_hand_may_take_misdeal_void_and_floor_and_keeps_its_own():
    for rid, own in PROCEDURES.items():
        allowed = procedures_for(rid)
        assert allowed[:len(own)] == own, rid
        if rid in OWN_PROCEDURES_ONLY:
            assert allowed == own
        else:
            assert set(ANY_IRREGULARITY) <= set(allowed), rid
    assert procedures_for("FOUR_CARD_FLOP") == ("scramble_pick_burn", "redeal_street", "misdeal", "void",
                                                "call_floor")


@pytest.mark.parametrize("rid", sorted(OWN_PROCEDURES_ONLY))
def test_a_sensing_fault_may_not_stop_the_hand_or_call_the_floor(tmp_path, tda_data, rid):
    path = house_file(tmp_path, tda_data, **{rid: ("floor", "call_floor")})
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert err.value.key == f"rules.{rid}.procedure" and str(path) in str(err.value)
    assert "call_floor" not in err.value.expected


def test_an_unknown_procedure_is_still_refused_with_file_key_and_expected_list(tmp_path, tda_data):
    path = house_file(tmp_path, tda_data, EXPOSED_DEAL=("misdeal", "redeal_everything"))
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    exc = err.value
    assert exc.file == str(path) and exc.key == "rules.EXPOSED_DEAL.procedure"
    assert exc.expected == "one of ['exposed_card_is_first_burn', 'misdeal', 'void', 'call_floor']"
    assert str(path) in str(exc) and "redeal_everything" in str(exc)


def test_a_misdeal_procedure_still_wants_a_stopping_verdict(tmp_path, tda_data):
    path = house_file(tmp_path, tda_data, EXPOSED_DEAL=("correct", "misdeal"))
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert err.value.key == "rules.EXPOSED_DEAL.verdict" and "for procedure 'misdeal'" in err.value.expected


def _scenario_cases():
    for path in SCENARIOS:
        lines = path.read_text(encoding="utf-8").splitlines()
        header = json.loads(lines[0])
        events = [json.loads(x) for x in lines[1:] if x.strip() and "expect" not in x]
        for rid in header["raises"]:
            if rid not in OWN_PROCEDURES_ONLY:
                yield pytest.param(header.get("profile", "tda-2019"), rid, events, id=f"{path.stem}-{rid}")


NATIVE_STEPS = {"misdeal": {"halt.misdeal"}, "void": {"halt.void", "halt.void_duplicate", "halt.void_foreign"},
                "call_floor": {"floor.decides"}}


@pytest.mark.parametrize("base, rid, events", list(_scenario_cases()))
def test_every_scenario_irregularity_ruled_misdeal_void_or_floor_by_a_house(base, rid, events):
    """Each irregularity every scenario raises, under a house that rules it each way: the
    decision carries the house's verdict with the procedure's own steps; a stop stops."""
    p = load_profile(base)
    for procedure, verdict in (("misdeal", "misdeal"), ("void", "void"), ("call_floor", "floor")):
        rules = dict(p.rules)
        rules[rid] = type(p[rid])(verdict, procedure, p[rid].sources)
        house = type(p)("house", rules)
        engine = HandEngine(house)
        ruled = None
        for e in events:
            for d in engine.feed(Event.from_dict(e)):
                question = engine.corrections and engine.corrections[-1].asks
                if ruled is None and d.irregularity == rid and d.verdict == verdict and not question:
                    ruled = d
                    if verdict != "floor":
                        assert engine.phase == "halted", (procedure, d)
        if ruled is None:
            continue   # raised only through a path that is not the id's procedure (a question, LATE_ERROR)
        assert {st.key for st in ruled.steps} & NATIVE_STEPS[procedure], (procedure, ruled.steps)


def test_the_documented_house_profile_example_loads_and_rules_as_it_says(tmp_path, tda_data):
    readme = (Path(__file__).resolve().parents[2] / "docs" / "RULES.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Profiles"):]
    example = tomllib.loads(section[section.index("```toml") + 7:section.index("```", section.index("```toml") + 7)])
    data = copy.deepcopy(tda_data)
    for rid, row in example["rules"].items():
        data["rules"][rid] = row
    path = tmp_path / "house.toml"
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    house = load_profile(path)
    assert (house["EXPOSED_DEAL"].verdict, house["EXPOSED_DEAL"].procedure) == ("misdeal", "misdeal")
    assert (house["MISSED_BURN"].verdict, house["MISSED_BURN"].procedure) == ("floor", "call_floor")
