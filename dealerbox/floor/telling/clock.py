"""The floor's clock: moments in the floor's time zone, and the shifts a pit boss asks about.

Everything the floor stores is an epoch second (UTC); people read local times with
their zone. One :class:`FloorClock` per web view, from ``[web] time_zone`` and
``[web] shift_starts``, formats every time a page shows and turns a form's local
date-time back into an epoch second.
"""

from __future__ import annotations

import datetime as _dt
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["CLOCK_LIMIT_S", "FloorClock", "DEFAULT_SHIFT_STARTS", "PRESETS", "parse_shift_start", "zone_named"]

#: A table's clock further than this from the floor's is out of step (its hands' times mislead).
CLOCK_LIMIT_S = 1.0

#: Three eight-hour shifts, as most card rooms run them.
DEFAULT_SHIFT_STARTS = ("06:00", "14:00", "22:00")
#: The ranges a figures page offers in one click, in the order it offers them.
PRESETS = ("this_shift", "last_shift", "today", "yesterday")


def zone_named(name: str | None) -> _dt.tzinfo:
    """The IANA zone ``name`` (``Europe/Prague``); ``None`` or ``""``: the machine's own zone.

    Raises :class:`ValueError` for a name the zone database does not know."""
    if not name:
        local = _dt.datetime.now().astimezone().tzinfo
        return local if local is not None else _dt.timezone.utc
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r}") from None


def parse_shift_start(text: str) -> _dt.time:
    """``"06:00"`` → 06:00; :class:`ValueError` for anything else."""
    if not isinstance(text, str) or len(text) != 5 or text[2] != ":":
        raise ValueError(text)
    return _dt.time(int(text[:2]), int(text[3:]))


class FloorClock:
    """Local times in one zone, and the shifts that start at ``shift_starts`` each day."""

    def __init__(self, zone: str | None = None, shift_starts=DEFAULT_SHIFT_STARTS):
        self.zone = zone_named(zone)
        starts = sorted(parse_shift_start(s) for s in shift_starts)
        if not starts or len(set(starts)) != len(starts):
            raise ValueError("shift starts must be one or more different times of day")
        self.shift_starts = tuple(starts)

    def at(self, ts: float) -> _dt.datetime:
        """The moment ``ts`` (epoch seconds) as an aware datetime in the floor's zone."""
        return _dt.datetime.fromtimestamp(float(ts), self.zone)

    def stamp(self, ts) -> str:
        """``2026-11-26 19:55 CET``; empty for no moment."""
        return self.at(ts).strftime("%Y-%m-%d %H:%M %Z") if ts else ""

    def full(self, ts) -> str:
        """``Thu 26 Nov 2026, 19:55:03 CET``: for alerts and a hand's story."""
        return self.at(ts).strftime("%a %d %b %Y, %H:%M:%S %Z") if ts else ""

    def time(self, ts) -> str:
        """``19:55:03``: beside a date already shown."""
        return self.at(ts).strftime("%H:%M:%S") if ts else ""

    def input_value(self, ts) -> str:
        """``2026-11-26T19:55``: the value an ``<input type="datetime-local">`` shows."""
        return self.at(ts).strftime("%Y-%m-%dT%H:%M") if ts else ""

    def parse_local(self, text: str) -> float:
        """A local date-time as a form sends it (``2026-11-26T19:55``, seconds optional) →
        epoch seconds. A time that a clock change skips or repeats takes its first reading.

        Raises :class:`ValueError` for anything else, or a year outside 1970..9998."""
        if not isinstance(text, str) or "T" not in text:
            raise ValueError(f"not a local date and time: {text!r}")
        moment = _dt.datetime.fromisoformat(text)
        if moment.tzinfo is not None:
            raise ValueError(f"a local date and time has no zone: {text!r}")
        if not 1970 <= moment.year <= 9998:
            raise ValueError(f"year out of range: {text!r}")
        return moment.replace(tzinfo=self.zone, fold=0).timestamp()

    def _day_start(self, day: _dt.date, at: _dt.time) -> float:
        return _dt.datetime.combine(day, at, self.zone).timestamp()

    def shift_of(self, ts: float) -> tuple[float, float]:
        """The shift ``ts`` falls in: (its start, the next shift's start)."""
        day = self.at(ts).date()
        starts = [self._day_start(day + _dt.timedelta(days=d), t)
                  for d in (-1, 0, 1) for t in self.shift_starts]
        begin = max(s for s in starts if s <= ts)
        return begin, min(s for s in starts if s > begin)

    def presets(self, now: float) -> dict[str, tuple[float, float]]:
        """:data:`PRESETS` as (start, end) epoch seconds; a range that has not ended ends at ``now``."""
        shift = self.shift_of(now)
        last = self.shift_of(shift[0] - 1)
        midnight = _dt.datetime.combine(self.at(now).date(), _dt.time(0), self.zone)
        yesterday = _dt.datetime.combine(midnight.date() - _dt.timedelta(days=1), _dt.time(0), self.zone)
        return {"this_shift": (shift[0], now), "last_shift": last,
                "today": (midnight.timestamp(), now),
                "yesterday": (yesterday.timestamp(), midnight.timestamp())}
