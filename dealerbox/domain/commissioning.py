"""The commissioning record's shape (CONTRACT.md, "The registries", ``commissioned``).

``dealerbox commission`` checks a table's hardware device by device and journals the
run as one ``commissioned`` line; the floor files it. Both sides read the record's
vocabulary and its checks from here: which devices a run may name, the verdicts, and
what a device's entry and its figures must hold.
"""

from __future__ import annotations

import math
import re
from datetime import datetime

from dealerbox.errors import EventError

#: The devices a run checks, in the order a full run checks them.
DEVICES = ("lcd", "leds", "buttons", "mouth", "shoe", "board", "clock", "state")
#: A device's verdict: every figure within its bound and every confirmation given;
#: something measured or confirmed wrong; or not checked (the entry's advice says why).
VERDICTS = ("pass", "fail", "skipped")
#: The longest technician name, version, unit or bound; the longest advice.
MAX_TEXT = 64
MAX_ADVICE = 2000
#: The most figures one device's entry may carry (a line stays well under the journal's limit).
MAX_FIGURES = 40
_ZONE = re.compile(r"[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*")
_DEVICE_KEYS = frozenset({"device", "verdict", "advice", "figures"})
_FIGURE_KEYS = frozenset({"name", "value", "unit", "bound", "ok"})


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:40]}... ({len(text)} characters)"


def check_text(value, label: str, *, key: str | None = None, empty: bool = False, limit: int = MAX_TEXT) -> str:
    """*value* when it is printable text of up to *limit* characters (``""`` only if *empty*);
    else an :class:`EventError` naming *label* (the event's *key*, default *label*)."""
    if not isinstance(value, str) or len(value) > limit or not value.isprintable() or (not empty and not value):
        what = "text" if empty else "non-empty text"
        raise EventError(f"{label!r} must be {what} of up to {limit} printable characters, not {_shown(value)}",
                         key=key or label)
    return value


def check_at(value) -> str:
    """An ISO 8601 local time with its UTC offset (``2026-12-02T07:41:05+01:00``)."""
    if isinstance(value, str) and len(value) <= MAX_TEXT:
        try:
            stamp = datetime.fromisoformat(value)
        except ValueError:
            stamp = None
        if stamp is not None and stamp.utcoffset() is not None:
            return value
    raise EventError(f"'at' must be an ISO 8601 time with its UTC offset, not {_shown(value)}", key="at")


def check_zone(value) -> str:
    """An IANA zone name (``Europe/Prague``), or ``""`` when the box does not know its zone."""
    if value == "" or (isinstance(value, str) and len(value) <= MAX_TEXT and _ZONE.fullmatch(value)):
        return value
    raise EventError(f"'zone' must be an IANA zone name such as 'Europe/Prague', or \"\", not {_shown(value)}",
                     key="zone")


def check_devices(value) -> tuple[dict, ...]:
    """The run's devices in the order run, each checked and copied (so the event owns its record)."""
    if not isinstance(value, list) or not 1 <= len(value) <= len(DEVICES):
        raise EventError(f"'devices' must list 1 to {len(DEVICES)} devices in the order run, not {_shown(value)}",
                         key="devices")
    out, seen = [], set()
    for n, entry in enumerate(value):
        where = f"devices[{n}]"
        if not isinstance(entry, dict) or entry.keys() != _DEVICE_KEYS:
            raise EventError(f"{where!r} must be an object of exactly {sorted(_DEVICE_KEYS)}, not {_shown(entry)}",
                             key="devices")
        device, verdict, advice = entry["device"], entry["verdict"], entry["advice"]
        if not isinstance(device, str) or device not in DEVICES or device in seen:
            raise EventError(f"'{where}.device' must be one of {list(DEVICES)}, each once, not {_shown(device)}",
                             key="devices")
        seen.add(device)
        if not isinstance(verdict, str) or verdict not in VERDICTS:
            raise EventError(f"'{where}.verdict' must be one of {list(VERDICTS)}, not {_shown(verdict)}",
                             key="devices")
        check_text(advice, f"{where}.advice", key="devices", empty=True, limit=MAX_ADVICE)
        if (verdict == "pass") != (advice == ""):
            raise EventError(f"'{where}.advice' must be \"\" for a pass and say what to check or why "
                             f"for a {verdict}", key="devices")
        out.append({"device": device, "verdict": verdict, "advice": advice,
                    "figures": _figures(entry["figures"], where)})
    return tuple(out)


def _figures(value, where: str) -> list[dict]:
    if not isinstance(value, list) or len(value) > MAX_FIGURES:
        raise EventError(f"'{where}.figures' must list up to {MAX_FIGURES} figures, not {_shown(value)}",
                         key="devices")
    out = []
    for n, figure in enumerate(value):
        at = f"{where}.figures[{n}]"
        if not isinstance(figure, dict) or figure.keys() != _FIGURE_KEYS:
            raise EventError(f"{at!r} must be an object of exactly {sorted(_FIGURE_KEYS)}, not {_shown(figure)}",
                             key="devices")
        number = figure["value"]
        if number is not None and (isinstance(number, bool) or not isinstance(number, (int, float))
                                   or not math.isfinite(number)):
            raise EventError(f"'{at}.value' must be a number or null, not {_shown(number)}", key="devices")
        if not isinstance(figure["ok"], bool):
            raise EventError(f"'{at}.ok' must be true or false, not {_shown(figure['ok'])}", key="devices")
        out.append({"name": check_text(figure["name"], f"{at}.name", key="devices"), "value": number,
                    "unit": check_text(figure["unit"], f"{at}.unit", key="devices", empty=True),
                    "bound": check_text(figure["bound"], f"{at}.bound", key="devices", empty=True), "ok": figure["ok"]})
    return out


def copied_devices(devices) -> list[dict]:
    """A JSON-ready copy of a record's devices (an event's :attr:`devices` is never shared out)."""
    return [{**d, "figures": [dict(f) for f in d["figures"]]} for d in devices]
