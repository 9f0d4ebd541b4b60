"""The registry events (CONTRACT.md, "The registries"): what the technician's commands and
the box journal so that the floor learns of every deck and badge, and which floor registry
a table judges with. Every valid form round-trips; every invalid one is named."""

from __future__ import annotations

import pytest

from dealerbox.domain.decks import simulated_uid
from dealerbox.domain.events import REGISTRY_EVENTS, Event
from dealerbox.errors import EventError
from dealerbox.rules.engine import HandEngine

AH, KS = simulated_uid("R1", "Ah"), simulated_uid("R1", "Ks")
FP = "0123456789abcdef" * 4

VALID = [
    {"t": 1.0, "ev": "deck_registered", "deck": "R1", "back": "green", "tags": {AH: "Ah", KS: "Ks"}},
    {"t": 1.0, "ev": "deck_checked", "deck": "R1", "missing": ["Ks", "joker"], "damaged": [AH], "ok": False},
    {"t": 1.0, "ev": "deck_checked", "deck": "R1", "missing": [], "damaged": [], "ok": True},
    {"t": 1.0, "ev": "badge_registered", "uid": "08A1B2C3", "dealer": "1042"},
    {"t": 1.0, "ev": "registry_applied", "version": 12, "fingerprint": FP},
    {"t": 1.0, "ev": "commissioned", "technician": "jana", "at": "2026-12-02T07:41:05+01:00",
     "zone": "Europe/Prague", "version": "1.4.0", "config": FP, "ok": True,
     "devices": [{"device": "shoe", "verdict": "pass", "advice": "",
                  "figures": [{"name": "missed reads", "value": 0, "unit": "cards", "bound": "<= 0", "ok": True},
                              {"name": "time to first read", "value": 41.5, "unit": "ms", "bound": "<= 250 ms",
                               "ok": True}]},
                 {"device": "mouth", "verdict": "skipped", "advice": "no mouth sensor in the config",
                  "figures": []}]},
]


@pytest.mark.parametrize("data", VALID, ids=lambda d: d["ev"])
def test_a_registry_event_round_trips(data):
    e = Event.from_dict(data)
    assert e.to_dict() == data
    assert Event.from_json(e.to_json()) == e


def test_uids_are_normalised():
    e = Event.from_dict({"t": 0, "ev": "deck_registered", "deck": "R1", "back": "",
                         "tags": {AH.lower(): "Ah"}})
    assert e.tags == {AH: "Ah"}
    assert Event.from_dict({"t": 0, "ev": "badge_registered", "uid": "08:a1:b2:c3", "dealer": "7"}).uid == "08A1B2C3"


@pytest.mark.parametrize("data, says", [
    ({"ev": "deck_registered", "back": "red", "tags": {AH: "Ah"}}, "'deck'"),
    ({"ev": "deck_registered", "deck": "", "back": "red", "tags": {AH: "Ah"}}, "'deck'"),
    ({"ev": "deck_registered", "deck": "x" * 65, "back": "red", "tags": {AH: "Ah"}}, "'deck'"),
    ({"ev": "deck_registered", "deck": "R1", "tags": {AH: "Ah"}}, "'back'"),
    ({"ev": "deck_registered", "deck": "R1", "back": "red", "tags": {}}, "'tags'"),
    ({"ev": "deck_registered", "deck": "R1", "back": "red", "tags": {AH: "Zz"}}, "'tags'"),
    ({"ev": "deck_registered", "deck": "R1", "back": "red", "tags": {"XYZ": "Ah"}}, "'uid'"),
    ({"ev": "deck_checked", "deck": "R1", "missing": ["11"], "damaged": [], "ok": True}, "'missing'"),
    ({"ev": "deck_checked", "deck": "R1", "missing": [], "damaged": "04", "ok": True}, "'damaged'"),
    ({"ev": "deck_checked", "deck": "R1", "missing": [], "damaged": [], "ok": "yes"}, "'ok'"),
    ({"ev": "badge_registered", "uid": "08A1B2C3"}, "'dealer'"),
    ({"ev": "badge_registered", "uid": "08A1B2C3", "dealer": None}, "'dealer'"),
    ({"ev": "badge_registered", "dealer": "1042"}, "uid"),
    ({"ev": "registry_applied", "version": -1, "fingerprint": FP}, "'version'"),
    ({"ev": "registry_applied", "version": True, "fingerprint": FP}, "'version'"),
    ({"ev": "registry_applied", "version": 1, "fingerprint": FP.upper()}, "'fingerprint'"),
    ({"ev": "shoe", "card": "Ah", "tags": {AH: "Ah"}}, "'tags' belongs to deck_registered"),
    ({"ev": "new_hand", "players": 2, "version": 1}, "'version' belongs to registry_applied"),
])
def test_a_bad_registry_event_is_named(data, says):
    with pytest.raises(EventError, match=says):
        Event.from_dict({"t": 1.0, **data})


def test_the_engine_judges_nothing_by_a_registry_event_in_any_phase():
    """A registry event is on record for the floor; mid-hand it is no card, no step and no time."""
    plain, mixed = HandEngine(), HandEngine()
    hand = [Event(0.0, "new_hand", players=2)] + [Event(0.1 * (i + 1), "shoe", card=c)
                                                   for i, c in enumerate(("Ah", "Kd", "Qs", "Jc"))]
    hand += [Event(1.0, "button", name="round_done"), Event(1.1, "shoe", card="2c")]
    for event in hand:
        before = plain.feed(event)
        for data in VALID:
            assert mixed.feed(Event.from_dict({**data, "t": event.t + 30.0})) == []
        assert mixed.feed(event) == before
        assert (mixed.phase, mixed.decision, mixed.seq) == (plain.phase, plain.decision, plain.seq)
    assert REGISTRY_EVENTS == {d["ev"] for d in VALID}
