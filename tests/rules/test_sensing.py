"""Sensing faults (RULES.md): unread tags, late reads and tired readers are no dealing errors."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dealerbox.errors import EventError
from dealerbox.domain.cards import DECK_52
from dealerbox.rules.engine import HandEngine
from dealerbox.domain.events import Event
from dealerbox.rules.profiles import load_profile
from hardware_sim.script import HandScript
from tests.rules.test_engine import _corrected_hand

# -- the two new contract fields -------------------------------------------------------

def test_an_unread_shoe_event_names_no_card():
    e = Event.from_dict({"t": 1, "ev": "shoe", "unread": True})
    assert e.unread and e.card is None and e.uid is None
    assert e.to_dict() == {"t": 1.0, "ev": "shoe", "unread": True}
    assert Event.from_dict({"t": 1, "ev": "shoe", "unread": False, "card": "Ah"}).card == "Ah"


@pytest.mark.parametrize("bad, says", [
    ({"ev": "shoe", "unread": True, "card": "Ah"}, "names no card"),
    ({"ev": "shoe", "unread": True, "uid": "04A3C6CAE26180"}, "names no card"),
    ({"ev": "shoe", "unread": "yes"}, "true or false"),
    ({"ev": "board_on", "unread": True, "card": "Ah"}, "belongs to shoe events"),
    ({"ev": "shoe", "unread": False}, "exactly one of 'card' or 'uid'"),
    ({"ev": "new_hand", "players": 3, "mouth_sensor": 1}, "true or false"),
    ({"ev": "shoe", "card": "Ah", "mouth_sensor": True}, "belongs to new_hand events"),
])
def test_bad_combinations_are_event_errors(bad, says):
    with pytest.raises(EventError, match=says):
        Event.from_dict({"t": 1, **bad})


def test_mouth_sensor_defaults_to_false_and_round_trips():
    assert Event.from_dict({"t": 0, "ev": "new_hand", "players": 2}).mouth_sensor is None
    e = Event.from_dict({"t": 0, "ev": "new_hand", "players": 2, "mouth_sensor": True})
    assert Event.from_dict(e.to_dict()) == e


# -- READER_DEGRADED ---------------------------------------------------------------------

def _feed(engine, events):
    out = []
    for e in events:
        out += engine.feed(Event.from_dict(e))
    return out


def test_a_shoe_reader_missing_too_many_reads_needs_service():
    profile = load_profile("tda-2019")
    profile = type(profile)(profile.name, profile.rules, reader_max_unread_share=0.1, reader_recent_draws=20)
    engine = HandEngine(profile)
    events = [{"t": 0, "ev": "new_hand", "players": 10, "mouth_sensor": True}]
    s = HandScript(seed=3)
    s.new_hand(10)
    for i in range(20):
        events.append({"t": 1 + i, "ev": "shoe", "unread": True} if i % 6 == 5 else
                      {"t": 1 + i, "ev": "shoe", "card": s.draw()})
    out = _feed(engine, events)
    notices = [d for d in out if d.irregularity == "READER_DEGRADED"]
    assert len(notices) == 1 and notices[0].verdict == "ok"
    assert notices[0].steps[0].key == "reader.misses_reads"
    assert all(d.verdict == "ok" for d in out)


def test_a_healthy_shoe_reader_raises_nothing():
    profile = load_profile("tda-2019")
    profile = type(profile)(profile.name, profile.rules, reader_max_unread_share=0.2, reader_recent_draws=20)
    engine = HandEngine(profile)
    events = [{"t": 0, "ev": "new_hand", "players": 10, "mouth_sensor": True}]
    events += [{"t": 1 + i, "ev": "shoe", "unread": True} if i % 6 == 5 else
               {"t": 1 + i, "ev": "shoe", "card": c} for i, c in enumerate(HandScript(seed=3).new_hand(10).stub[:20])]
    assert not [d for d in _feed(engine, events) if d.irregularity == "READER_DEGRADED"]


def test_a_notice_never_hides_a_stop():
    engine = HandEngine()
    _feed(engine, [{"t": 0, "ev": "new_hand", "players": 2}, {"t": 1, "ev": "button", "name": "misdeal"}])
    _feed(engine, [{"t": 2 + i, "ev": "reader_fault", "reader": "shoe"} for i in range(3)])
    assert engine.decision.verdict == "misdeal"
    out = _feed(engine, [{"t": 9, "ev": "new_hand", "players": 2}])
    assert out[-1].irregularity == "READER_DEGRADED" and out[-1].steps[0].key == "reader.faults_often"


# -- random clean hands with unread cards ----------------------------------------------------
ALLOWED = {"UNREAD_CARD"}
ALLOWED_WITHOUT_SENSOR = {"UNREAD_CARD", "SHORT_DEAL", "MISSED_BURN"}


@st.composite
def hands_with_unread_cards(draw):
    """A clean hand; then some of its shoe reads are lost: with a mouth sensor the shoe
    says ``unread``, without one nothing is reported at all."""
    sensor = draw(st.booleans())
    s = HandScript(seed=draw(st.integers(0, 10_000)), step_s=draw(st.sampled_from([0.05, 0.3, 1.0])))
    players = draw(st.integers(2, 10))
    hole = draw(st.sampled_from([2, 4])) if players <= 8 else 2
    s.new_hand(players, hole, mouth_sensor=sensor).deal()
    for n in (3, 1, 1):
        s.round_done()
        s.street(n, spread=n == 3 and draw(st.booleans()))
    s.round_done().hand_over()
    shoe = [i for i, e in enumerate(s.events) if e["ev"] == "shoe"]
    lost = draw(st.lists(st.sampled_from(shoe), min_size=1, max_size=3 if sensor else 1, unique=True))
    events = []
    for i, e in enumerate(s.events):
        if i in lost:
            if sensor:
                events.append({"t": e["t"], "ev": "shoe", "unread": True})
            continue
        events.append(e)
    return sensor, events, lost, s.events


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands_with_unread_cards(), st.sampled_from(["tda-2019", "cz-c40"]))
def test_unread_cards_never_become_corrections(hand, profile):
    sensor, events, lost, clean = hand
    engine = HandEngine(profile)
    raised = []
    for e in events:
        for d in engine.feed(Event.from_dict(e)):
            raised.append(d)
            if d.irregularity in ("SHORT_DEAL", "MISSED_BURN"):
                # The dealer counts and finds every seat served / says a card was burned.
                raised += engine.feed(Event.from_dict({"t": e["t"], "ev": "button", "name": "ack"}))
    allowed = ALLOWED if sensor else ALLOWED_WITHOUT_SENSOR
    wrong = [(d.irregularity, d.verdict, d.cards) for d in raised if d.irregularity not in allowed | {None}]
    assert not wrong, (wrong, [clean[i] for i in lost])
    assert all(d.verdict in ("ok", "correct") for d in raised)
    if sensor:
        assert all(d.verdict == "ok" for d in raised)
    # A prompt only where a read was really missed; and every lost card is accounted for.
    assert engine.phase == "over"
    assert any(d.irregularity == "UNREAD_CARD" for d in raised) or not sensor
    for d in raised:
        if d.irregularity == "MISSED_BURN":
            assert [e for e in (clean[i] for i in lost)], "MISSED_BURN with every read in place"


# -- random streams with unread cards never break the engine -------------------------------
PLACES = {"stub", "hand", "burn", "board", "aside", "muck"} | {f"seat{i}" for i in range(1, 11)}
_CARDS = st.sampled_from(DECK_52)


@st.composite
def sensing_events(draw):
    kind = draw(st.sampled_from(["new_hand", "shoe", "shoe", "unread", "board_on", "board_on", "board_off",
                                 "button", "tick", "reader_fault"]))
    if kind == "new_hand":
        return {"ev": "new_hand", "players": draw(st.integers(2, 10)), "mouth_sensor": draw(st.booleans())}
    if kind == "unread":
        return {"ev": "shoe", "unread": True}
    if kind in ("shoe", "board_on", "board_off"):
        return {"ev": kind, "card": draw(_CARDS)}
    if kind == "button":
        return {"ev": "button", "name": draw(st.sampled_from(["round_done", "ack", "exposed", "boxed", "premature",
                                                               "reshuffled", "hand_over", "misdeal", "floor"]))}
    if kind == "reader_fault":
        return {"ev": "reader_fault", "reader": "shoe"}
    return {"ev": "tick"}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(sensing_events(), max_size=120), st.sampled_from(["tda-2019", "cz-c40"]), st.floats(0.01, 1.5))
def test_random_streams_with_unread_cards_never_raise(events, profile, step):
    engine = HandEngine(profile)
    for i, raw in enumerate(events):
        for d in engine.feed(Event.from_dict({"t": (i + 1) * step, **raw})):
            assert 0 <= d.step <= len(d.steps)
        assert all(p in PLACES for p in engine.where.values())
        assert sorted(k for k in engine.where if len(k) == 2) == sorted(DECK_52)


# -- corrections that follow an unread card stay right ------------------------------------
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["exposed", "boxed", "extra", "double_burn", "missed_burn"]), st.integers(0, 10_000),
       st.integers(2, 10), st.booleans(), st.integers(0, 100), st.sampled_from(["tda-2019", "cz-c40"]),
       st.integers(0, 10_000))
def test_corrections_stay_right_with_an_unread_card(kind, seed, players, spread, pos, profile, which):
    s, expected = _corrected_hand(kind, seed, players, spread, pos)
    s.round_done().hand_over()
    events = [dict(e) for e in s.events]
    events[0]["mouth_sensor"] = True
    shoe = [i for i, e in enumerate(events) if e["ev"] == "shoe"]
    lost = shoe[which % len(shoe)]
    events[lost] = {"t": events[lost]["t"], "ev": "shoe", "unread": True}
    engine = HandEngine(profile)
    decisions = []
    for e in events:
        decisions += engine.feed(Event.from_dict(e))
    raised = {d.irregularity for d in decisions if d.irregularity}
    assert raised == expected | {"UNREAD_CARD"}, ([(d.t, d.irregularity, d.cards) for d in decisions],
                                                  s.events[lost])
    assert engine.decision.verdict == "ok"


# -- every shoe read dropped once, no mouth sensor ----------------------------------------
#: Steps that ask the dealer, answered with ``ack`` when a tag was not read.
ASKS = {"short_deal.count", "missed_burn.take_off", "exposed.second_or_later", "duplicate.returned_burn",
        "duplicate.hole_card_again", "wrong.expected_card_or_unread"}
INFORMATION = {None, "UNREAD_CARD", "READER_DEGRADED"}


def _step_key(d):
    return d.steps[d.step].key if d.step < len(d.steps) else None


def _swept_hands():
    """Clean hands and hands with one corrected irregularity, on both profiles: (name, events, expected ids)."""
    for players in (2, 5, 9):
        seats = [1 + 9 * i // players for i in range(players)]
        s = HandScript(seed=players)
        s.new_hand(players, seats=seats)
        for i in range(2 * players):
            s.emit("zone_on", card=s.draw(), zone=f"seat{seats[i % players]}")
        s.tick(4)
        for n in (3, 1, 1):
            s.round_done().street(n)
        s.round_done().hand_over()
        yield f"clean {players}p with seat antennas", s.events, set()
    for players in (2, 3, 6, 10):
        for spread in (False, True):
            for hole in (2, 4) if players <= 8 else (2,):
                s = HandScript(seed=players * 11 + hole + spread)
                s.full_hand(players, hole, spread=spread)
                yield f"clean {players}p hole={hole} spread={spread}", s.events, set()
            for kind in ("exposed", "boxed", "extra", "double_burn", "missed_burn"):
                for pos in (0, 1, 2):
                    s, expected = _corrected_hand(kind, players * 7 + pos, players, spread, pos)
                    s.round_done().hand_over()
                    yield f"{kind} {players}p spread={spread} pos={pos}", s.events, expected


def dropped_read_cascades():
    """Replay every swept hand once per shoe event with that read lost and no mouth sensor
    (the shoe reports nothing). The dealer answers each question with ``ack``: a tag was not
    read. Returns (cases, cascades): every decision that is neither the hand's own
    irregularity, nor information, nor a question; and every stop the hand did not have."""
    cases, cascades = 0, []
    for name, events, expected in _swept_hands():
        for profile in ("tda-2019", "cz-c40"):
            for i, lost in enumerate(events):
                if lost["ev"] != "shoe":
                    continue
                cases += 1
                engine = HandEngine(profile)
                for e in events[:i] + events[i + 1:]:
                    for d in engine.feed(Event.from_dict(e)):
                        if d.irregularity not in expected and _step_key(d) in ASKS:
                            engine.feed(Event.from_dict({"t": e["t"], "ev": "button", "name": "ack"}))
                        elif d.irregularity not in INFORMATION | expected or d.verdict in ("misdeal", "void",
                                                                                            "floor"):
                            cascades.append((d.irregularity, d.verdict, name, profile, lost))
                if engine.phase != "over":
                    cascades.append(("hand not over", engine.phase, name, profile, lost))
    return cases, cascades


def test_a_dropped_read_never_moves_a_correct_card_nor_stops_the_hand():
    cases, cascades = dropped_read_cascades()
    assert cases > 2000
    counts = {}
    for c in cascades:
        counts[c[0]] = counts.get(c[0], 0) + 1
    assert not cascades, (counts, cascades[:5])


def test_the_console_table_view_names_an_unread_card_as_such():
    from dealerbox.tools.console.view import _label

    engine = HandEngine()
    engine.feed(Event.from_dict({"t": 0, "ev": "new_hand", "players": 2, "mouth_sensor": True}))
    engine.feed(Event.from_dict({"t": 1, "ev": "shoe", "unread": True}))
    (unread,) = [k for k, p in engine.where.items() if p == "seat1"]
    assert _label(unread) == "(unread)" and _label("Ah") == "Ah"


# -- a hole card's tag read again after the round (issue 19, point 5) ----------------------------
def _hole_card_again(mouth: bool, which: int, gap: float = 3.0):
    """Four players dealt, ROUND DONE, then hole card *which* (-1: the last) read again *gap*
    seconds after it was dealt, as the first card after the round."""
    s = HandScript(seed=7)
    s.new_hand(4, mouth_sensor=mouth).deal()
    dealt = [e["card"] for e in s.events if e["ev"] == "shoe"]
    s.emit("button", dt=gap / 2, name="round_done")
    again = dealt[which]
    s.emit("shoe", dt=gap / 2, card=again)
    engine = HandEngine()
    decisions = _feed(engine, s.events)
    return s, engine, decisions, again


def test_the_last_hole_card_read_again_without_a_sensor_is_asked_never_played_on():
    s, engine, decisions, again = _hole_card_again(False, -1)
    d = decisions[-1]
    # A clone, or a card too many that was put back (with a hole card's tag not read): the box
    # cannot tell, so it asks (the verdict is the count's: void); it does not say "play on".
    assert (d.verdict, d.irregularity) == ("void", "DUPLICATE_CARD")
    assert d.steps[d.step].key == "duplicate.hole_card_again" and d.cards == (again,)


def test_the_last_hole_card_read_again_answered_put_back_is_the_burn():
    s, engine, decisions, again = _hole_card_again(False, -1)
    out = _feed(engine, [{"t": s.t + 0.5, "ev": "button", "name": "ack"}])
    assert out[-1].verdict == "ok" and out[-1].irregularity == "UNREAD_CARD"
    s.t += 0.5
    s.stub = [c for c in s.stub if c != again]
    s.events.clear()
    for _ in range(3):
        s.on(s.draw())
    s.round_done().turn().round_done().river().round_done().hand_over()
    rest = _feed(engine, s.events)
    assert [d for d in rest if d.verdict != "ok"] == []
    assert engine.phase == "over"


def test_the_last_hole_card_read_again_answered_misdeal_is_a_void_clone():
    s, engine, decisions, again = _hole_card_again(False, -1)
    out = _feed(engine, [{"t": s.t + 0.5, "ev": "button", "name": "misdeal"}])
    assert (out[-1].verdict, out[-1].irregularity, out[-1].cards) == ("void", "DUPLICATE_CARD", (again,))
    assert engine.phase == "halted"


def test_the_last_hole_card_read_again_and_no_answer_keeps_asking():
    # The dealer goes on with the flop: the question stays on the panel until it is answered.
    s, engine, decisions, again = _hole_card_again(False, -1)
    s.events.clear()
    s.stub = [c for c in s.stub if c != again]
    for _ in range(3):
        s.on(s.draw())
    _feed(engine, s.events)
    assert (engine.decision.verdict, engine.decision.irregularity) == ("void", "DUPLICATE_CARD")
    assert engine.decision.steps[engine.decision.step].key == "duplicate.hole_card_again"


@pytest.mark.parametrize("mouth, which", [(True, -1), (False, 0), (True, 0), (False, 3)],
                         ids=["last_sensor", "first_no_sensor", "first_sensor", "fourth_no_sensor"])
def test_a_hole_card_read_again_is_a_void_duplicate_where_nothing_explains_it(mouth, which):
    s, engine, decisions, again = _hole_card_again(mouth, which)
    assert (decisions[-1].verdict, decisions[-1].irregularity, decisions[-1].cards) == (
        "void", "DUPLICATE_CARD", (again,))


# -- hand_over ends the hand whatever is open (RULES.md, sensing faults) ---------------------------
def _steps(d):
    return [s.key for s in d.steps]


def test_a_correction_left_open_at_hand_over_is_recorded_with_its_steps_never_done():
    s = HandScript(seed=2)
    s.new_hand(3).deal().draw()          # a card too many; everyone folds before it is put back
    engine = HandEngine()
    _feed(engine, s.events)
    assert engine.decision.irregularity == "EXTRA_CARD"
    open_steps = _steps(engine.decision)[engine.decision.step:]
    out = _feed(engine, [{"t": s.t + 1, "ev": "button", "name": "hand_over"}])
    records = [d for d in out if d.irregularity == "EXTRA_CARD"]
    assert len(records) == 1 and records[0].verdict == "ok" and records[0].phase == "over"
    assert _steps(records[0]) == ["over.left_open"] + open_steps and records[0].step == 0
    assert out[-1].verdict == "ok" and out[-1].irregularity is None and engine.phase == "over"


def test_a_question_left_open_at_hand_over_is_recorded():
    s, engine, decisions, again = _hole_card_again(False, -1)
    out = _feed(engine, [{"t": s.t + 1, "ev": "button", "name": "hand_over"}])
    (record,) = [d for d in out if d.irregularity == "DUPLICATE_CARD"]
    assert _steps(record) == ["over.left_open", "duplicate.hole_card_again"] and record.cards == (again,)


@pytest.mark.parametrize("pressed", [False, True], ids=["hand_over_in_the_deal", "short_deal_unanswered"])
def test_a_deal_left_short_by_a_lost_read_is_an_unread_card_after_the_hand(pressed):
    s = HandScript(seed=4)
    s.new_hand(4).deal(7)                # one hole card's tag was not read
    if pressed:
        s.round_done()                   # SHORT_DEAL, never answered
    s.hand_over()
    engine = HandEngine()
    out = _feed(engine, s.events)
    assert out[-1].verdict == "ok" and out[-1].irregularity == "UNREAD_CARD" and engine.phase == "over"
    assert _steps(out[-1]) == ["unread.check_deck"]
    left = [d for d in out if d.steps and d.steps[0].key == "over.left_open"]
    assert [d.irregularity for d in left] == (["SHORT_DEAL"] if pressed else [])


def test_with_a_mouth_sensor_a_hand_ended_during_the_deal_lost_no_read():
    s = HandScript(seed=4)
    s.new_hand(4, mouth_sensor=True).deal(7).hand_over()
    out = _feed(HandEngine(), s.events)
    assert all(d.irregularity is None for d in out)


def test_a_clean_hand_over_records_nothing():
    s = HandScript(seed=4).full_hand(5)
    assert _feed(HandEngine(), s.events) == []
