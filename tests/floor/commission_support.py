"""What the commissioning tests share: a ``commissioned`` record as ``dealerbox commission`` ends
a run with (CONTRACT.md's keys), passing or with a device failed, at a given time."""

from __future__ import annotations

import datetime as _dt
from zoneinfo import ZoneInfo

from dealerbox.domain import commission_figures as F
from dealerbox.tools.commission_record import Figure

CONFIG = "c0" * 32
ZONE = "Europe/Prague"


def figure(name, value, unit, bound, ok=True) -> dict:
    return {"name": name, "value": value, "unit": unit, "bound": bound, "ok": ok}


def devices(*, shoe_fails: bool = False) -> list[dict]:
    """Every device of a table with a mouth sensor, in run order; the shoe's weak tags when *shoe_fails*."""
    shoe = {"device": "shoe", "verdict": "pass", "advice": "",
            "figures": [figure("cards read", 54, "cards", "54 of 54"),
                        figure("time to first read, slowest card", 41.3, "ms", "at most 150 ms"),
                        figure("missed reads", 0, "reads", "0"),
                        figure("re-reads", 2, "reads", "at most 5")]}
    if shoe_fails:
        shoe = {"device": "shoe", "verdict": "fail",
                "advice": "Tags of 7h and Qs read late or twice: replace those two cards; if many cards read "
                          "late, check the antenna's distance to the mouth (WIRING.md, shoe reader).",
                "figures": [figure("cards read", 52, "cards", "54 of 54", False),
                            figure("time to first read, slowest card", 212.0, "ms", "at most 150 ms", False),
                            figure("missed reads", 2, "reads", "0", False),
                            figure("re-reads", 7, "reads", "at most 5", False)]}
    return [
        {"device": "lcd", "verdict": "pass", "advice": "",
         "figures": [figure("characters confirmed", 96, "characters", "all 96")]},
        {"device": "leds", "verdict": "pass", "advice": "", "figures": []},
        {"device": "buttons", "verdict": "pass", "advice": "",
         "figures": [figure("bounce, worst button", 3.2, "ms", "at most 20 ms")]},
        {"device": "mouth", "verdict": "skipped", "advice": "No mouth sensor in the config ([mouth] is not set).",
         "figures": []},
        shoe,
        {"device": "board", "verdict": "pass", "advice": "",
         "figures": [figure("positions seeing every card", 5, "positions", "5 of 5"),
                     figure("slid card counted", 0, "cards", "0")]},
        {"device": "clock", "verdict": "pass", "advice": "",
         "figures": [figure("offset from the floor", None, "s", "within 1.0 s")]},
        {"device": "state", "verdict": "pass", "advice": "",
         "figures": [figure("free space", 12.4, "GiB", "at least 1 GiB"),
                     figure("fsync", 4.1, "ms", "at most 50 ms")]},
    ]


def record(at: float, *, technician: str = "tomas", shoe_fails: bool = False, version: str = "1.4.0",
           zone: str = ZONE, box: bool = False) -> dict:
    """The ``commissioned`` event's keys for a run ending at epoch *at*, local time in *zone*;
    with *box*, its devices as the box's own tool words them (:func:`box_devices`)."""
    local = _dt.datetime.fromtimestamp(at, ZoneInfo(zone) if zone else _dt.timezone.utc)
    found = box_devices(shoe_fails=shoe_fails) if box else devices(shoe_fails=shoe_fails)
    return {"technician": technician, "at": local.isoformat(timespec="seconds"), "zone": zone,
            "version": version, "config": CONFIG, "ok": not any(d["verdict"] == "fail" for d in found),
            "devices": found}


def box_devices(*, shoe_fails: bool = False) -> list[dict]:
    """Devices as the box's own commissioning tool words them (its :class:`Figure` and the shared
    names of :mod:`dealerbox.domain.commission_figures`), and one figure of a newer box that the
    floor does not know; the shoe missing four cards when *shoe_fails*."""
    buttons = [Figure.at_most(F.BOUNCE.format(button="ROUND DONE"), 3.2, 25.0, "ms"),
               Figure.at_least(F.FLOOR_HELD, 2612.5, 2500.0, "ms"),
               Figure.confirmed(F.LED_ALONE.format(colour="red"), True)]
    shoe = [Figure.exactly(F.CARDS_READ, 1230 if shoe_fails else 1234, 1234, "cards"),
            Figure(F.FIRST_READ, None, "ms", F.NEEDS_MOUTH, True),
            Figure.at_least(F.READ_SHARE, 87.5, 50.0, "%"),
            Figure.shown("antenna temperature", 31.5, "kelvins")]
    return [{"device": "buttons", "verdict": "pass", "advice": "", "figures": [f.to_dict() for f in buttons]},
            {"device": "shoe", "verdict": "fail" if shoe_fails else "pass",
             "advice": "4 cards unread: the shoe antenna: check its distance from the mouth" if shoe_fails else "",
             "figures": [f.to_dict() for f in shoe]}]
