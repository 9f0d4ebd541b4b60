"""The engine: its shape, and property tests over random hands and random streams."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dealerbox.domain.cards import DECK_52, JOKER
from dealerbox.rules.engine import PHASE_TRANSITIONS, PHASES, HandEngine
from dealerbox.errors import EventError
from dealerbox.domain.events import BUTTONS, Event
from dealerbox.domain.decks import simulated_uid
from hardware_sim.script import HandScript

PLACES = {"stub", "hand", "burn", "board", "aside", "muck"} | {f"seat{i}" for i in range(1, 11)}


def feed(engine, script):
    out = []
    for e in script.events:
        if "expect" not in e:
            out += engine.feed(Event.from_dict(e))
    return out


def assert_every_card_in_one_place(engine):
    deck_keys = [k for k in engine.where if not k.startswith("uid:")]
    assert sorted(k for k in deck_keys if len(k) == 2) == sorted(DECK_52)
    assert len([k for k in deck_keys if k.startswith("joker:")]) == 2
    for card, place in engine.where.items():
        assert place in PLACES, (card, place)


def test_phases_are_a_transitions_table():
    engine = HandEngine()
    assert engine.phase == "idle"
    assert {t["dest"] for t in PHASE_TRANSITIONS} <= set(PHASES)
    assert set(engine.machine.states) == set(PHASES)


def test_a_decision_only_when_something_changes():
    engine = HandEngine()
    s = HandScript(seed=3).full_hand(6)
    assert feed(engine, s) == []
    assert engine.decision.verdict == "ok"


def test_uid_events_resolve_through_the_registry():
    engine = HandEngine()
    engine.feed(Event.from_dict({"t": 0, "ev": "new_hand", "players": 2}))
    engine.feed(Event.from_dict({"t": 1, "ev": "shoe", "uid": simulated_uid("A", "Ah")}))
    assert engine.where["Ah"] == "seat1"
    out = engine.feed(Event.from_dict({"t": 2, "ev": "shoe", "uid": simulated_uid("B", "Kd")}))
    assert out[-1].irregularity == "FOREIGN_CARD" and out[-1].verdict == "void"


def test_reader_fault_is_remembered_and_cleared():
    engine = HandEngine()
    engine.feed(Event.from_dict({"t": 0, "ev": "reader_fault", "reader": "shoe"}))
    assert engine.faulted_readers == {"shoe"}
    engine.feed(Event.from_dict({"t": 1, "ev": "reader_ok", "reader": "shoe"}))
    assert engine.faulted_readers == set()


# -- random legal hands raise nothing ---------------------------------------------------
@st.composite
def legal_hands(draw):
    seed = draw(st.integers(0, 10_000))
    s = HandScript(seed=seed, step_s=draw(st.sampled_from([0.05, 0.3, 1.0])))
    for _ in range(draw(st.integers(1, 3))):
        players = draw(st.integers(2, 10))
        hole = draw(st.sampled_from([2, 4])) if players <= 8 else 2
        stop = draw(st.sampled_from(["preflop", "flop", "turn", "river", "showdown"]))
        s.new_hand(players, hole).deal()
        if draw(st.booleans()):
            s.tick(draw(st.floats(0.1, 10)))
        for street in ("flop", "turn", "river"):
            if stop == {"flop": "preflop", "turn": "flop", "river": "turn"}[street]:
                break
            s.round_done()
            n = 3 if street == "flop" else 1
            s.street(n, spread=n == 3 and draw(st.booleans()))
            if draw(st.booleans()):
                # a board card flickers out and back
                c = s.last[0]
                s.off(c).on(c)
        else:
            s.round_done()
        s.hand_over()
    return s


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(legal_hands(), st.sampled_from(["tda-2019", "cz-c40"]))
def test_random_legal_hands_raise_nothing(script, profile):
    engine = HandEngine(profile)
    decisions = feed(engine, script)
    assert [d for d in decisions if d.verdict != "ok" or d.irregularity] == []
    assert_every_card_in_one_place(engine)


# -- random streams never raise, and every card stays in exactly one place ---------------
CARD_FIELDS = st.one_of(
    st.builds(lambda c: {"card": c}, st.sampled_from(DECK_52 + (JOKER,))),
    st.builds(lambda c: {"card": c, "deck": "B"}, st.sampled_from(DECK_52)),
    st.builds(lambda c: {"uid": simulated_uid("A", c)}, st.sampled_from(DECK_52)),
    st.just({"uid": "04FFFFFFFFFF01"}),
    st.just({"card": "Ah", "deck": "Z"}),
)


@st.composite
def raw_events(draw):
    kind = draw(st.sampled_from(["new_hand", "shoe", "shoe", "shoe", "board_on", "board_on", "board_off",
                                 "zone_on", "button", "button", "tick", "reader_fault", "garbage"]))
    if kind == "garbage":
        return draw(st.one_of(
            st.dictionaries(st.sampled_from(["t", "ev", "card", "uid", "players", "name", "zone"]),
                            st.one_of(st.none(), st.integers(), st.text(max_size=6), st.floats())),
            st.just({"t": 1, "ev": "shoe", "card": "1x"}),
            st.just({"t": 1, "ev": "shoe", "uid": "04ZZ"}),
            st.just({"t": 1, "ev": "new_hand", "players": 11}),
        ))
    e = {"ev": kind}
    if kind == "new_hand":
        e["players"] = draw(st.integers(2, 10))
        if draw(st.booleans()):
            e["hole_cards"] = 4
    elif kind in ("shoe", "board_on", "board_off", "zone_on"):
        e.update(draw(CARD_FIELDS))
        if kind == "zone_on":
            e["zone"] = draw(st.sampled_from(["burn", "muck", "seat1", "seat4"]))
    elif kind == "button":
        e["name"] = draw(st.sampled_from(sorted(BUTTONS)))
    elif kind == "reader_fault":
        e["reader"] = "board"
    return e


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(raw_events(), max_size=120), st.sampled_from(["tda-2019", "cz-c40"]),
       st.floats(0.01, 2.0))
def test_random_streams_never_raise(events, profile, step):
    engine = HandEngine(profile)
    t = 0.0
    for raw in events:
        t += step
        raw = dict(raw)
        raw.setdefault("t", t)
        try:
            event = Event.from_dict(raw)
        except EventError:
            continue
        for d in engine.feed(event):
            json.dumps({"cards": d.cards, "steps": [s.key for s in d.steps]})
            assert 0 <= d.step <= len(d.steps)
            assert d.verdict in ("ok", "correct", "misdeal", "void", "floor")
        assert_every_card_in_one_place(engine)


@pytest.mark.parametrize("profile", ["tda-2019", "cz-c40"])
def test_same_events_same_decisions(profile):
    s = HandScript(seed=11)
    s.new_hand(6).deal(4).button("exposed").deal(8).draw()
    s.round_done().flop(burn=False).round_done().turn().round_done().river().hand_over()
    a = feed(HandEngine(profile), s)
    b = feed(HandEngine(profile), s)
    assert a == b and a


def test_a_stray_ack_changes_nothing_and_one_a_step_does_not_take_is_a_wrong_correction():
    engine = HandEngine()
    s = HandScript(seed=4)
    s.new_hand(3).deal().button("ack")
    assert feed(engine, s) == []
    s2 = HandScript(seed=4)
    # With a mouth sensor an unread burn shows as such, so ACK cannot mean "burned, not read".
    s2.new_hand(3, mouth_sensor=True).deal().round_done()
    engine = HandEngine()
    feed(engine, s2)
    first = s2.draw()
    engine.feed(Event.from_dict(s2.events[-1]))
    out = engine.feed(Event.from_dict(s2.on(first).events[-1]))
    assert out[-1].irregularity == "MISSED_BURN" and out[-1].step == 0
    # The step waits for the card to come off the board: ACK cannot skip it. RULES.md: a button the step
    # does not take is WRONG_CORRECTION, amber, with the step shown again.
    out = engine.feed(Event.from_dict(s2.button("ack").events[-1]))
    assert [(d.verdict, d.irregularity) for d in out] == [("correct", "WRONG_CORRECTION")]
    assert engine.decision.steps[engine.decision.step].key == "missed_burn.take_off"
    # Taking the card off is the step: the wrong correction leaves with it.
    engine.feed(Event.from_dict(s2.off(first).events[-1]))
    assert engine.decision.irregularity == "MISSED_BURN"
    assert engine.decision.steps[engine.decision.step].key == "missed_burn.next_card"


def test_two_tags_of_one_card_are_a_duplicate():
    from dealerbox.domain.decks import simulation_registry

    registry = simulation_registry()
    registry.add("04C0FFEE123456", "A", "Ah")   # a second tag claiming to be the ace of hearts
    engine = HandEngine(registry=registry)
    engine.feed(Event.from_dict({"t": 0, "ev": "new_hand", "players": 2}))
    engine.feed(Event.from_dict({"t": 1, "ev": "shoe", "uid": simulated_uid("A", "Ah")}))
    out = engine.feed(Event.from_dict({"t": 2, "ev": "shoe", "uid": "04C0FFEE123456"}))
    assert out[-1].irregularity == "DUPLICATE_CARD" and out[-1].verdict == "void"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(2, 10), st.booleans(), st.booleans())
def test_returned_cards_come_out_again_without_alarm(seed, players, spread, by_button):
    """A premature flop corrected by the book: its cards go back, and may be drawn again later."""
    s = HandScript(seed=seed)
    s.new_hand(players).deal()
    if by_button:
        s.round_done().flop(spread=spread)
        s.button("premature")
    else:
        s.draw()
        s.street(3, burn=False, spread=spread)
    for c in s.last:
        s.off(c).put_back(c, top=True)     # back on top: they come out first again
    s.reshuffle_stub()
    s.stub = list(s.last) + [c for c in s.stub if c not in s.last]
    s.round_done().flop(burn=False, spread=spread).round_done().turn().round_done().river().round_done()
    s.hand_over()
    engine = HandEngine()
    decisions = feed(engine, s)
    raised = {d.irregularity for d in decisions if d.irregularity}
    assert raised <= {"EXTRA_CARD", "PREMATURE_FLOP"} and "PREMATURE_FLOP" in raised
    assert decisions[-1].verdict == "ok"
    assert_every_card_in_one_place(engine)


def _rest(s, streets, spread, no_burn=()):
    for name in streets:
        s.round_done()
        s.street(3 if name == "flop" else 1, burn=name not in no_burn, spread=spread and name == "flop")


def _corrected_hand(kind, seed, players, spread, pos):
    """A hand with one irregularity of *kind*, corrected as the box asks; returns (script, expected ids)."""
    s = HandScript(seed=seed)
    total = players * 2
    s.new_hand(players)
    if kind == "exposed":
        k = 2 + pos % (total - 2)                  # the 3rd card or later
        s.deal(k + 1).button("exposed").deal(total - k - 1).draw()
        _rest(s, ["flop", "turn", "river"], spread, no_burn={"flop"})
        return s, {"EXPOSED_DEAL"}
    if kind == "boxed":
        k = pos % total
        s.deal(k).draw()
        s.button("boxed").deal(total - k)
        _rest(s, ["flop", "turn", "river"], spread)
        return s, {"BOXED_CARD"}
    s.deal()
    if kind == "extra":
        x = s.draw()
        s.put_back(x).round_done().draw(x)
        s.street(3, burn=False, spread=spread)
        _rest(s, ["turn", "river"], spread)
        return s, {"EXTRA_CARD"}
    street = ["flop", "turn", "river"][pos % 3]
    before = ["flop", "turn", "river"][:["flop", "turn", "river"].index(street)]
    _rest(s, before, spread)
    s.round_done()
    n = 3 if street == "flop" else 1
    after = ["flop", "turn", "river"][len(before) + 1:]
    if kind == "double_burn":
        s.draw()
        second = s.draw()
        s.street(n, burn=False, spread=spread and n == 3)
        if after:
            s.put_back(second).round_done().draw(second)
            s.street(3 if after[0] == "flop" else 1, burn=False)
            _rest(s, after[1:], spread)
        return s, {"DOUBLE_BURN"}
    if kind == "missed_burn":
        if spread and n == 3:
            # Drawn as three and spread before the box spoke: the first comes off once all lie there.
            first = s.street(n, burn=False, spread=True)[0]
            s.off(first)
        else:
            # Laid one at a time: the dealer takes it off as the box says, before laying the rest
            # (RULES.md: the rest laid over it is WRONG_CORRECTION where no missed read explains it).
            first = s.draw()
            s.on(first).off(first)
            for _ in range(n - 1):
                s.on(s.draw())
        nxt = s.draw()
        s.on(nxt)
        _rest(s, after, spread)
        return s, {"MISSED_BURN"}
    raise AssertionError(kind)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["exposed", "boxed", "extra", "double_burn", "missed_burn"]), st.integers(0, 10_000),
       st.integers(2, 10), st.booleans(), st.integers(0, 100), st.sampled_from(["tda-2019", "cz-c40"]))
def test_corrected_hands_raise_only_their_irregularity(kind, seed, players, spread, pos, profile):
    s, expected = _corrected_hand(kind, seed, players, spread, pos)
    s.round_done().hand_over()
    engine = HandEngine(profile)
    decisions = feed(engine, s)
    raised = {d.irregularity for d in decisions if d.irregularity}
    assert raised == expected, [(d.t, d.irregularity, d.cards) for d in decisions]
    assert engine.decision.verdict == "ok"
    assert_every_card_in_one_place(engine)


# -- ROUND DONE pressed again before the street it opened is shown (issue 19, point 1) ------------
SENSORS = pytest.mark.parametrize("mouth", [False, True], ids=["no_sensor", "mouth_sensor"])
PROFILES = pytest.mark.parametrize("profile", ["tda-2019", "cz-c40"])


def _not_ok(engine, script):
    return [(d.verdict, d.irregularity) for d in feed(engine, script) if d.verdict != "ok"]


@SENSORS
@PROFILES
def test_round_done_pressed_twice_before_the_flop_is_a_repeat(profile, mouth):
    s = HandScript(seed=3)
    s.new_hand(4, mouth_sensor=mouth).deal().round_done().round_done()
    s.flop().round_done().turn().round_done().river().round_done().hand_over()
    engine = HandEngine(profile)
    assert _not_ok(engine, s) == []
    assert engine.phase == "over"
    assert_every_card_in_one_place(engine)


@SENSORS
@PROFILES
def test_a_repeated_press_between_the_burn_and_the_street_is_a_repeat(profile, mouth):
    s = HandScript(seed=5)
    s.new_hand(6, mouth_sensor=mouth).deal().round_done().draw()
    s.round_done()
    s.street(3, burn=False, spread=True)
    s.round_done().round_done().turn().round_done().river().round_done().hand_over()
    engine = HandEngine(profile)
    assert _not_ok(engine, s) == []
    assert engine.phase == "over"


@SENSORS
@PROFILES
@pytest.mark.parametrize("ahead", [2, 3, 5])
def test_an_all_in_run_out_with_round_done_pressed_ahead_raises_nothing(profile, mouth, ahead):
    # Everyone is all in before the flop: the dealer presses ROUND DONE for the rounds that
    # will not be played, then runs the board out without pressing again.
    s = HandScript(seed=8)
    s.new_hand(3, mouth_sensor=mouth).deal().round_done()
    for _ in range(ahead):
        s.round_done()
    s.flop().turn().river().hand_over()
    engine = HandEngine(profile)
    assert _not_ok(engine, s) == []
    assert engine.phase == "over"
    assert_every_card_in_one_place(engine)


@PROFILES
def test_pressed_ahead_for_the_flop_round_only_the_river_is_still_premature(profile):
    # One press ahead announces the flop's round, not the turn's.
    s = HandScript(seed=8)
    s.new_hand(3).deal().round_done().round_done().flop().turn().river()
    raised = [d.irregularity for d in feed(HandEngine(profile), s) if d.verdict != "ok"]
    assert raised and raised[0] == "PREMATURE_RIVER"


@SENSORS
@PROFILES
def test_an_all_in_on_the_flop_with_round_done_pressed_ahead_raises_nothing(profile, mouth):
    s = HandScript(seed=9)
    s.new_hand(5, mouth_sensor=mouth).deal().round_done().flop(spread=True).round_done()
    s.round_done().round_done()        # all in on the flop: the turn's and the river's rounds are done
    s.turn().river().round_done().hand_over()
    engine = HandEngine(profile)
    assert _not_ok(engine, s) == []
    assert engine.phase == "over"


@PROFILES
def test_a_premature_turn_is_still_raised_after_a_single_press(profile):
    # Pressing ahead is remembered only when pressed while a street is not shown: one press per
    # round, then a turn before the flop's round is done, is PREMATURE_TURN as before.
    s = HandScript(seed=3)
    s.new_hand(4).deal().round_done().flop().turn()
    raised = {d.irregularity for d in feed(HandEngine(profile), s)}
    assert "PREMATURE_TURN" in raised


@PROFILES
def test_a_repeat_is_used_up_by_the_round_it_announced(profile):
    # ROUND DONE twice before the flop, then once after the flop's betting: the repeat stood for
    # the flop's round, so a river dealt before the turn's round is done is still premature.
    s = HandScript(seed=3)
    s.new_hand(4).deal().round_done().round_done().flop().round_done().turn().river()
    raised = [d.irregularity for d in feed(HandEngine(profile), s) if d.verdict != "ok"]
    assert raised and raised[0] == "PREMATURE_RIVER"


@st.composite
def hands_with_presses_ahead(draw):
    """A legal hand in which the dealer presses ROUND DONE again while the street it opened
    shows no card (a repeat), and may go all in: press ROUND DONE for every round left at once,
    then run the board out without pressing again."""
    s = HandScript(seed=draw(st.integers(0, 10_000)), step_s=draw(st.sampled_from([0.05, 0.5])))
    players = draw(st.integers(2, 10))
    hole = draw(st.sampled_from([2, 4])) if players <= 8 else 2
    s.new_hand(players, hole, mouth_sensor=draw(st.booleans())).deal()
    all_in = False
    for i, name in enumerate(("flop", "turn", "river")):
        if not all_in:
            s.round_done()                      # the round before this street
            for _ in range(draw(st.integers(0, 2))):
                s.round_done()                  # again: the street shows no card yet
            if draw(st.integers(0, 3)) == 0:
                all_in = True                   # the rounds left will not be played
                for _ in range(2 - i + draw(st.integers(0, 1))):
                    s.round_done()
        n = 3 if name == "flop" else 1
        burned = draw(st.booleans())
        if burned:
            s.draw()
            if not all_in and draw(st.booleans()):
                s.round_done()                  # again, between the burn and the first card
        s.street(n, burn=not burned, spread=n == 3 and draw(st.booleans()))
    if not all_in and draw(st.booleans()):
        s.round_done()
    return s.hand_over()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands_with_presses_ahead(), st.sampled_from(["tda-2019", "cz-c40"]))
def test_round_done_pressed_ahead_or_again_never_raises(script, profile):
    engine = HandEngine(profile)
    decisions = feed(engine, script)
    assert [(d.verdict, d.irregularity) for d in decisions if d.verdict != "ok"] == []
    assert engine.phase == "over"
    assert_every_card_in_one_place(engine)


@PROFILES
def test_all_in_with_the_turn_dealt_unburned_is_a_missed_burn_not_a_fourth_flop_card(profile):
    # The flop's round was called done ahead: a card straight after the flop is the turn without
    # its burn, as after a press (RULES.md: a fourth flop card is one drawn before the round is done).
    s = HandScript(seed=8)
    s.new_hand(3).deal().round_done().round_done().round_done().flop()
    s.turn(burn=False)
    raised = [d.irregularity for d in feed(HandEngine(profile), s) if d.verdict != "ok"]
    assert raised[:1] == ["MISSED_BURN"]


@PROFILES
@pytest.mark.parametrize("answer", ["ack", None], ids=["answered", "unanswered"])
def test_round_done_pressed_twice_on_a_short_deal_is_one_question(profile, answer):
    # No mouth sensor, a hole card's tag not read: the second press repeats the first, it is
    # neither a second SHORT_DEAL nor the flop's round.
    s = HandScript(seed=3)
    s.new_hand(4).deal(7).round_done().round_done()
    if answer:
        s.button(answer)
    s.flop().round_done().turn().round_done().river().round_done().hand_over()
    decisions = feed(HandEngine(profile), s)
    assert {d.irregularity for d in decisions} <= {"SHORT_DEAL", "UNREAD_CARD", None}
    assert [d.irregularity for d in decisions].count("SHORT_DEAL") == 1


@SENSORS
@PROFILES
def test_round_done_before_the_board_reports_the_street_is_that_streets_round(profile, mouth):
    # The board antenna reports a card once it has lain there for the settle time (0.3 s): a
    # quick ROUND DONE after the flop was laid comes before its board_on. The flop's cards are
    # out, so the press is the flop's round, not a repeat.
    s = HandScript(seed=8, step_s=0.2)
    s.new_hand(2, mouth_sensor=mouth).deal().round_done()
    burn, *flop = [s.draw() for _ in range(4)]
    s.round_done().on(flop[0])
    s.draw()                            # the turn's burn, before the flop's last board_on
    s.on(flop[1]).on(flop[2])
    turn = s.draw()
    s.round_done()
    s.draw()                            # the river's burn, before the turn's board_on
    s.on(turn)
    river = s.draw()
    s.round_done().on(river).hand_over()
    engine = HandEngine(profile)
    assert _not_ok(engine, s) == []
    assert engine.phase == "over"


def test_the_stub_s_end_calls_the_floor_at_once():
    """RULES.md, the stub is finite: ten-handed Omaha deals 40 of 52 cards. Cards drawn for the flop and
    never laid leave the stub short of the board still to come (the turn and river, with their burns);
    the box calls the floor the moment the stub holds fewer cards than the hand needs, not before."""
    engine = HandEngine()
    s = HandScript(seed=5)
    s.new_hand(10, hole=4).deal().round_done()
    feed(engine, s)
    assert engine.hand.cards_left() == 12 and engine.hand.cards_needed() == 8
    for _ in range(8):                            # 8 cards in the dealer's hand, none laid yet
        engine.feed(Event.from_dict(s.take().events[-1]))
    assert engine.hand.cards_left() == 4 and engine.hand.cards_needed() == 4
    assert engine.decision.steps == () or engine.decision.steps[0].key != "stub.runs_out"
    engine.feed(Event.from_dict(s.take().events[-1]))
    assert engine.decision.verdict == "floor" and engine.decision.steps[0].key == "stub.runs_out"
