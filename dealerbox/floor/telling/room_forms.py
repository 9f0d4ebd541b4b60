"""The room's own forms of numbers, dates and times, through Babel (CLDR): the one place
the floor formats a number or a moment for a person.

What Babel 2.19 gives for the floor's languages and their zones (tests/floor/test_room_forms.py
holds each):

============  =================  ==========================  ===========  ==========
language      zone               a moment (:meth:`stamp`)    12.5, 1234   12.5 %
============  =================  ==========================  ===========  ==========
cs            Europe/Prague      ``2. 12. 2026 14:05 SEČ``   12,5; 1 234  12,5 %
sk            Europe/Bratislava  ``2. 12. 2026 14:05 SEČ``   12,5; 1 234  12,5 %
de            Europe/Berlin      ``02.12.2026, 14:05 MEZ``   12,5; 1.234  12,5 %
en            Europe/Prague      ``2026-12-02 14:05 CET``    12.5; 1,234  12.5%
============  =================  ==========================  ===========  ==========

Summer time is ``SELČ`` (cs, sk) and ``MESZ`` (de). The spaces in ``1 234`` and ``12,5 %`` are
the locale's no-break space (U+00A0), so a number never breaks across two lines. The date is
the locale's medium date, the time its short (or, in :meth:`full`, medium) time, joined as the
locale joins them, the zone its short name (CLDR's ``zzz``).

English keeps the floor's forms from before (``2026-12-02 14:05 CET``, ``Wed 02 Dec 2026,
14:05:03 CET``, :class:`~.clock.FloorClock`): CLDR's English has no short name for the
Central European zones (Babel gives ``+0100``), and the tz database's ``CET``/``CEST`` is what
an English-reading supervisor in Prague knows.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re

from babel.core import Locale
from babel.dates import DateTimeFormat, format_date, format_datetime
from babel.numbers import NumberPattern, parse_pattern

from dealerbox.floor.telling.clock import FloorClock

__all__ = ["RoomForms"]


#: Moments told with their minute only (:meth:`RoomForms.stamp`) kept told, per language: a
#: page of a day's rows tells the same minutes, days and zone again and again, and Babel
#: takes some 30 us for each (a day's audit trail in Czech read 1.45 times the English).
TOLD_KEPT = 4096

#: A CLDR time pattern's fields (``%(H)s`` in Babel's parsed pattern), and those that a time
#: of day's hour alone decides (its hour in any count, AM or PM: not the day periods ``b``/``B``,
#: whose noon and midnight are a minute's).
_FIELD = re.compile(r"%\((\w+)\)s")
_OF_THE_HOUR = frozenset({"H", "HH", "h", "hh", "k", "kk", "K", "KK", "a"})
_WITHIN_THE_HOUR = {"m": "{0}", "mm": "{0:02d}", "s": "{1}", "ss": "{1:02d}"}


def _decimal_text(digits: int) -> str:
    return "#,##0" + ("." + "0" * digits if digits else "")


@functools.cache
def _decimal_pattern(digits: int) -> NumberPattern:
    # Parsed once: Babel's format_decimal parses its pattern on every call.
    return parse_pattern(_decimal_text(digits))


@functools.cache
def _percent_pattern(code: str, digits: int) -> NumberPattern:
    # The locale's own percent pattern (where its sign goes, with or without a space),
    # with *digits* decimals.
    pattern = Locale.parse(code).percent_formats[None].pattern
    return parse_pattern(pattern.replace("#,##0", _decimal_text(digits), 1))


class RoomForms:
    """Numbers and moments as readers of *code* write them, moments in *clock*'s zone."""

    def __init__(self, code: str, clock: FloorClock):
        self.code, self.clock = code, clock
        self.locale = Locale.parse(code)
        self._glue = str(self.locale.datetime_formats["short"])
        self._stamp_of_minute = functools.lru_cache(TOLD_KEPT)(self._told_minute)
        self._day = functools.lru_cache(TOLD_KEPT)(self._told_day)
        self._clock_of_hour = functools.lru_cache(TOLD_KEPT)(self._told_clock_hour)
        self._zones: dict[tuple, str] = {}

    # -- numbers

    def decimal(self, value: float, digits: int = 1) -> str:
        """``12.5`` → ``12,5`` (cs): *digits* decimals, the locale's grouping."""
        return _decimal_pattern(digits).apply(value, self.locale, decimal_quantization=True)

    def integer(self, value: int) -> str:
        """``1234`` → ``1 234`` (cs, a no-break space), ``1.234`` (de), ``1,234`` (en)."""
        return _decimal_pattern(0).apply(int(value), self.locale)

    def percent(self, fraction: float, digits: int = 1) -> str:
        """``0.125`` → ``12,5 %`` (cs), ``12.5%`` (en)."""
        return _percent_pattern(self.code, digits).apply(fraction, self.locale)

    # -- moments

    def _moment(self, ts) -> _dt.datetime:
        return self.clock.at(ts)

    def _zone(self, moment: _dt.datetime) -> str:
        if getattr(moment.tzinfo, "key", None) is None:
            return moment.strftime("%Z")  # the machine's own zone: no IANA name to ask CLDR about
        # The zone's short name depends on its offset at that moment (winter or summer time) only.
        key = (moment.tzinfo.key, moment.utcoffset(), moment.dst())
        if key not in self._zones:
            self._zones[key] = format_datetime(moment, "zzz", locale=self.locale)
        return self._zones[key]

    def _told_day(self, day: _dt.date, weekday: bool = False) -> str:
        told = format_date(day, "medium", locale=self.locale)
        return f"{format_date(day, 'EEE', locale=self.locale)} {told}" if weekday else told

    def _told_clock_hour(self, hour: _dt.datetime, width: str) -> str | None:
        # The time of every moment of *hour* (local), its minutes and seconds left as holes:
        # Babel's apply takes some 10 us a moment, and a day's audit trail tells 1,400 moments,
        # most in a minute of their own (in Czech the page took 1.35 times the English, whose
        # strftime takes 1 us). None when the pattern has a field that the hour does not decide.
        pattern = self.locale.time_formats[width]
        fields = _FIELD.findall(pattern.format)
        if not all(f in _OF_THE_HOUR or f in _WITHIN_THE_HOUR for f in fields):
            return None
        told = DateTimeFormat(hour, self.locale)
        text = pattern.format.replace("{", "{{").replace("}", "}}")
        return text % {f: _WITHIN_THE_HOUR.get(f) or told[f].replace("{", "{{").replace("}", "}}") for f in fields}

    def _clock_of(self, moment: _dt.datetime, width: str) -> str:
        holed = self._clock_of_hour(moment.replace(minute=0, second=0, microsecond=0), width)
        if holed is None:
            # The locale's own pattern, parsed once (format_time would parse its text each time).
            return self.locale.time_formats[width].apply(moment, self.locale)
        return holed.format(moment.minute, moment.second)

    def _date_time(self, moment: _dt.datetime, time_width: str, weekday: bool = False) -> str:
        day = self._day(moment.date(), weekday)
        return self._glue.format(self._clock_of(moment, time_width), day)

    def _told_minute(self, minute: int) -> str:
        moment = self._moment(minute * 60)
        return f"{self._date_time(moment, 'short')} {self._zone(moment)}"

    def stamp(self, ts) -> str:
        """A moment with its date and zone: ``2. 12. 2026 14:05 SEČ``; empty for none."""
        if not ts:
            return ""
        if self.code == "en":
            return self.clock.stamp(ts)
        return self._stamp_of_minute(int(ts // 60))

    def full(self, ts) -> str:
        """With the weekday and seconds: ``st 2. 12. 2026 14:05:03 SEČ``; empty for none."""
        if not ts:
            return ""
        if self.code == "en":
            return self.clock.full(ts)
        moment = self._moment(ts)
        return f"{self._date_time(moment, 'medium', weekday=True)} {self._zone(moment)}"

    def as_written(self, moment: _dt.datetime) -> str:
        """A moment in the offset it was written with (not the floor's zone), the offset named:
        ``st 2. 12. 2026 7:41:05 UTC+01:00`` (cs), ``Wed 02 Dec 2026, 07:41:05 UTC+01:00`` (en)."""
        offset = moment.utcoffset() or _dt.timedelta(0)
        minutes = int(offset.total_seconds()) // 60
        sign = "-" if minutes < 0 else "+"
        named = f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
        if self.code == "en":
            return f"{moment:%a %d %b %Y, %H:%M:%S} {named}"
        weekday = format_date(moment, "EEE", locale=self.locale)
        return f"{weekday} {self._date_time(moment, 'medium')} {named}"

    def time(self, ts) -> str:
        """The time of day beside a date already shown: ``14:05:03``."""
        if not ts:
            return ""
        if self.code == "en":
            return self.clock.time(ts)
        return self._clock_of(self._moment(ts), "medium")

    def weekday(self, ts) -> str:
        """The day's name as a word of its own: ``středa``, ``Mittwoch``, ``Wednesday``."""
        return format_date(self._moment(ts), "cccc", locale=self.locale)

    def month(self, ts) -> str:
        """The month's name as a word of its own (nominative): ``prosinec``, ``Dezember``."""
        return format_date(self._moment(ts), "LLLL", locale=self.locale)
