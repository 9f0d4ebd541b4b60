"""The ``commissioned`` line (CONTRACT.md, "The registries"): a commissioning run's record,
journalled so that it reaches the floor. Every key is required and checked; the record's
own consistency (``ok`` against its verdicts, advice against the verdict) is too."""

from __future__ import annotations

import copy

import pytest

from dealerbox.domain.commissioning import DEVICES
from dealerbox.domain.events import Event
from dealerbox.errors import EventError

FP = "0123456789abcdef" * 4
FIGURE = {"name": "bounce", "value": 3.2, "unit": "ms", "bound": "<= 20 ms", "ok": True}


def record(**changes) -> dict:
    data = {"t": 5.0, "ev": "commissioned", "technician": "jana", "at": "2026-12-02T07:41:05+01:00",
            "zone": "Europe/Prague", "version": "1.4.0", "config": FP, "ok": False,
            "devices": [{"device": d, "verdict": "fail" if d == "board" else "pass",
                         "advice": "check the board antenna's cable (WIRING.md: RC522 #2, CS GPIO 7)"
                         if d == "board" else "", "figures": [dict(FIGURE)]} for d in DEVICES]}
    data.update(changes)
    return data


def test_a_full_record_round_trips_and_is_copied():
    data = record()
    e = Event.from_dict(data)
    assert e.to_dict() == data and Event.from_json(e.to_json()) == e
    # The event owns its record: changing what it was made from, or what it gives out, changes nothing.
    data["devices"][0]["figures"][0]["value"] = 99
    out = e.to_dict()
    out["devices"][1]["figures"].clear()
    assert e.devices[0]["figures"][0]["value"] == 3.2 and e.devices[1]["figures"] == [FIGURE]


def test_an_unknown_zone_and_a_null_figure_are_a_record():
    devices = [{"device": "clock", "verdict": "pass", "advice": "",
                "figures": [{**FIGURE, "name": "offset from the floor", "value": None, "bound": ""}]}]
    e = Event.from_dict(record(zone="", ok=True, devices=devices, at="2026-12-02T06:41:05Z"))
    assert e.zone == "" and e.devices[0]["figures"][0]["value"] is None


def _without(key):
    data = record()
    del data[key]
    return data


def _device(n=0, **changes):
    data = record()
    data["devices"][n].update(changes)
    return data


def _figure(**changes):
    data = record()
    data["devices"][0]["figures"][0].update(changes)
    return data


BAD = [
    *[(_without(k), f"'{k}'") for k in ("technician", "at", "zone", "version", "config", "ok", "devices")],
    (record(technician=""), "'technician'"),
    (record(technician="a\nb"), "'technician'"),
    (record(at="2026-12-02T07:41:05"), "'at'.*UTC offset"),
    (record(at="yesterday"), "'at'"),
    (record(zone="Europe/../etc"), "'zone'"),
    (record(zone=None), "'zone'"),
    (record(version=3), "'version'"),
    (record(config=FP.upper()), "'config'"),
    (record(ok="no"), "'ok'"),
    (record(ok=True), "'ok' must be true exactly when no device failed"),
    (record(devices=[]), "'devices'"),
    (record(devices={"device": "lcd"}), "'devices'"),
    (_device(device="printer"), "device' must be one of"),
    (_device(1, device="lcd"), "each once"),
    (_device(verdict="ok"), "verdict' must be one of"),
    (_device(advice="all fine"), "advice' must be \"\" for a pass"),
    (_device(5, advice=""), "for a fail"),
    (_device(verdict="skipped"), "for a skipped"),
    (_device(extra=1), "exactly"),
    (_device(figures="none"), "figures'"),
    (_device(figures=[dict(FIGURE)] * 41), "figures'"),
    (_figure(value=True), "value' must be a number or null"),
    (_figure(value=float("nan")), "value' must be a number or null"),
    (_figure(value="3"), "value' must be a number or null"),
    (_figure(ok=None), "ok' must be true or false"),
    (_figure(name=""), "name'"),
    (_figure(unit=None), "unit'"),
    (_figure(bound=7), "bound'"),
    ({"t": 1.0, "ev": "shoe", "card": "Ah", "technician": "jana"}, "'technician' belongs to commissioned"),
    ({"t": 1.0, "ev": "new_hand", "players": 2, "devices": []}, "'devices' belongs to commissioned"),
    ({"t": 1.0, "ev": "registry_applied", "version": "1.4.0", "fingerprint": FP}, "'version'"),
]


@pytest.mark.parametrize("data, says", BAD, ids=[f"bad{n}" for n in range(len(BAD))])
def test_a_bad_record_is_named(data, says):
    with pytest.raises(EventError, match=says):
        Event.from_dict(copy.deepcopy(data))
