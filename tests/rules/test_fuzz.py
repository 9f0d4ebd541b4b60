"""The engine never raises on input the contract allows (CONTRACT.md; issue 46, family 11).

Random event sequences, not a dealer's: any card of the active deck, a joker, a card of another
registered deck, a tag of none, a count with no read, cards laid and lifted in any order, every
button at any moment, time passing in steps that cross the grace periods, hands cut short by the
next NEW HAND. Both shipped profiles, hold'em and Omaha, 2-10 players, with and without a mouth
sensor. The engine runs ``strict``, so a drift of its model of the table shows as the exception it
would have hidden behind a floor call; a table runs it not strict, and an event it cannot place is a
floor call with what it knows (the last test).
"""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dealerbox.cli import main
from dealerbox.domain.cards import DECK_52
from dealerbox.domain.events import Event
from dealerbox.rules import procedures
from dealerbox.rules.engine import HandEngine
from dealerbox.rules.open_steps import STEP_CONTRACTS
from dealerbox.rules.profiles import VERDICTS

BUTTONS = ("round_done", "exposed", "boxed", "ack", "reshuffled", "premature", "misdeal", "floor", "hand_over")
#: The steps between events (s): a quick pair, a dealer's pace, a pause past every grace period.
GAPS = (0.05, 0.3, 0.5, 1.0, 3.5)
PROFILES = ("tda-2019", "cz-c40")

_card = st.sampled_from(DECK_52 + ("joker",))
_action = st.one_of(
    st.tuples(st.just("shoe"), _card),
    st.tuples(st.just("shoe_unread"), st.none()),
    st.tuples(st.just("shoe_foreign"), st.sampled_from(DECK_52)),
    st.tuples(st.just("shoe_unknown"), st.just("04DEADBEEF0001")),
    st.tuples(st.just("board_on"), _card),
    st.tuples(st.just("board_off"), _card),
    st.tuples(st.just("button"), st.sampled_from(BUTTONS)),
    st.tuples(st.just("tick"), st.none()),
    st.tuples(st.just("new_hand"), st.none()),
)


@st.composite
def sessions(draw):
    """A contract-valid event file: hands of random events, the first dealt in full or in part."""
    events, t = [], 0.0

    def emit(**fields):
        nonlocal t
        t = round(t + draw(st.sampled_from(GAPS)), 3)
        events.append({"t": t, **fields})

    def new_hand():
        players = draw(st.integers(2, 10))
        hole = draw(st.sampled_from((2, 4)))
        emit(ev="new_hand", players=players, mouth_sensor=draw(st.booleans()),
             **({"hole_cards": 4} if hole == 4 else {}))
        return players * hole

    deal = new_hand()
    order = draw(st.permutations(DECK_52))
    for card in order[:draw(st.integers(0, deal))]:
        emit(ev="shoe", card=card)
    for kind, what in draw(st.lists(_action, max_size=60)):
        if kind == "shoe":
            emit(ev="shoe", card=what)
        elif kind == "shoe_unread":
            emit(ev="shoe", unread=True)
        elif kind == "shoe_foreign":
            emit(ev="shoe", card=what, deck="B")
        elif kind == "shoe_unknown":
            emit(ev="shoe", uid=what)
        elif kind in ("board_on", "board_off"):
            emit(ev=kind, card=what)
        elif kind == "button":
            emit(ev="button", name=what)
        elif kind == "tick":
            emit(ev="tick")
        else:
            new_hand()
    return events


def _judge_all(profile, events):
    engine = HandEngine(profile)
    engine.strict = True
    for e in events:
        for d in engine.feed(Event.from_dict(e)):
            assert d.verdict in VERDICTS
            assert all(step.key in STEP_CONTRACTS for step in d.steps), d
            assert 0 <= d.step <= len(d.steps)
    return engine


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.sampled_from(PROFILES), sessions())
def test_random_event_files_never_make_the_engine_raise(profile, events):
    _judge_all(profile, events)


def test_the_hand_of_family_11_replays_with_exit_0(tmp_path, capsys):
    """C40: the later streets laid face up instead of aside after the skipped player acts; `dealerbox
    replay` raised a ValueError in procedures.redeal_street and exited 1."""
    events = [{"t": 0.5, "ev": "new_hand", "players": 3, "mouth_sensor": True}]
    events += [{"t": 1.0 + i / 2, "ev": "shoe", "card": c} for i, c in enumerate(("3h", "7h", "4d", "Ks", "5s", "6c"))]
    events += [{"t": 4.0, "ev": "shoe", "card": "4h"}, {"t": 4.5, "ev": "board_on", "card": "4h"},
               {"t": 5.0, "ev": "button", "name": "round_done"}, {"t": 5.5, "ev": "button", "name": "round_done"},
               {"t": 6.0, "ev": "shoe", "card": "5d"}, {"t": 6.5, "ev": "shoe", "card": "5h"},
               {"t": 7.0, "ev": "board_on", "card": "5h"}, {"t": 7.5, "ev": "shoe", "card": "9s"},
               {"t": 8.0, "ev": "board_on", "card": "9s"}]
    path = tmp_path / "hand.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    assert main(["replay", "--profile", "cz-c40", str(path)]) == 0
    decisions = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert decisions[-1]["verdict"] == "floor"
    _judge_all("cz-c40", events)


def test_an_event_the_engine_cannot_place_is_a_floor_call_with_what_it_knows(monkeypatch):
    """Whatever drift the model has, the table's engine calls the floor, naming the card, and judges on."""
    def broken(*args, **kwargs):
        raise ValueError("the model lost a card")

    monkeypatch.setitem(procedures.BUILDERS, "open_burn_next_card_replaces", broken)
    engine = HandEngine()
    for e in ({"t": 0, "ev": "new_hand", "players": 2, "mouth_sensor": True},
              *({"t": 1 + i, "ev": "shoe", "card": c} for i, c in enumerate(("2c", "3c", "4c", "5c"))),
              {"t": 6, "ev": "button", "name": "round_done"}, {"t": 7, "ev": "shoe", "card": "As"}):
        engine.feed(Event.from_dict(e))
    out = engine.feed(Event.from_dict({"t": 8, "ev": "board_on", "card": "As"}))
    assert [(d.verdict, d.steps[0].key, d.cards) for d in out] == [("floor", "floor.cannot_place", ("As",))]
    engine.feed(Event.from_dict({"t": 9, "ev": "button", "name": "ack"}))
    engine.feed(Event.from_dict({"t": 10, "ev": "button", "name": "ack"}))
    assert engine.decision.verdict == "ok"
