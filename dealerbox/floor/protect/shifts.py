"""The house's shifts in its own local time (the floor's ``[floor]`` zone).

A shift is where the house changes dealers and surveillance officers, so it is what
a figure per shift means; it starts at the house's local hours (by default 06:00,
14:00 and 22:00), whatever UTC says, and a day that changes the clock (daylight
saving) has one shift an hour longer or shorter. Pure: the caller passes the zone.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from dealerbox.errors import UsageError

__all__ = ["Shift", "DEFAULT_STARTS", "shift_of"]

#: Local hours at which the house's shifts start.
DEFAULT_STARTS = (6, 14, 22)


@dataclass(frozen=True, slots=True)
class Shift:
    """One shift: its start and end (epoch seconds) and a label in the house's time."""

    start: float
    end: float
    label: str


def shift_of(t: float, zone: _dt.tzinfo, starts=DEFAULT_STARTS) -> Shift:
    """The shift that holds the instant *t* (epoch seconds) in *zone*, shifts starting at
    local hours *starts* (each 0-23, at least one)."""
    hours = sorted(set(int(h) for h in starts))
    if not hours or hours[0] < 0 or hours[-1] > 23:
        raise UsageError(f"shift starts {starts!r}: expected local hours 0-23")
    local = _dt.datetime.fromtimestamp(t, zone).date()
    candidates = []
    for days in (-1, 0, 1):
        day = local + _dt.timedelta(days=days)
        for h in hours:
            candidates.append(_dt.datetime(day.year, day.month, day.day, h, tzinfo=zone).timestamp())
    candidates.sort()
    start = max(c for c in candidates if c <= t)
    end = min(c for c in candidates if c > start)
    a, b = _dt.datetime.fromtimestamp(start, zone), _dt.datetime.fromtimestamp(end, zone)
    label = f"{a:%Y-%m-%d %H:%M} to {b:%H:%M} {b:%Z}".strip()
    return Shift(start, end, label)
