"""A moment's time of day with its zone, and a range of moments, in a reader's language:
what a hand's story writes beside each line (``12:00:55 SEČ``, its date being the heading's)
and what the shift report's title and the range controls say (``st 2. 12. 2026, 6:00–14:00
SEČ``).

English keeps the floor's forms from before (:func:`~.figure_text.span`, ``12:00:55 CET``),
as :class:`~.room_forms.RoomForms` keeps them: the tz database's ``CET`` is what an
English-reading supervisor in Prague knows. The other languages take the locale's forms from
Babel (CLDR) and the zone's short name in the language (``SEČ``, ``MEZ``).
"""

from __future__ import annotations

from babel.dates import format_date, format_datetime, format_time

from dealerbox.floor.telling.catalogs import SOURCE_LANGUAGE
from dealerbox.floor.telling.figure_text import span as english_span
from dealerbox.floor.telling.language import Language

__all__ = ["zone", "time_with_zone", "span"]


def zone(language: Language, ts: float) -> str:
    """The zone's short name at *ts* as *language* writes it: ``SEČ``, ``MEZ``, ``CET``."""
    moment = language.clock.at(ts)
    if language.code == SOURCE_LANGUAGE or getattr(moment.tzinfo, "key", None) is None:
        return moment.strftime("%Z")  # the machine's own zone has no IANA name to ask CLDR about
    return format_datetime(moment, "zzz", locale=language.forms.locale)


def time_with_zone(language: Language, ts: float) -> str:
    """The time of day with seconds and the zone: ``12:00:55 SEČ``."""
    return f"{language.forms.time(ts)} {zone(language, ts)}"


def _day(language: Language, moment) -> str:
    locale = language.forms.locale
    return f"{format_date(moment, 'EEE', locale=locale)} {format_date(moment, 'medium', locale=locale)}"


def _minute(language: Language, moment) -> str:
    locale = language.forms.locale
    return format_time(moment, locale.time_formats["short"].pattern, locale=locale)


def span(language: Language, start: float, end: float) -> str:
    """A range in *language*: within one day ``st 2. 12. 2026, 6:00–14:00 SEČ``, else both
    ends in full (``út 1. 12. 2026 22:00 SEČ – st 2. 12. 2026 6:00 SEČ``)."""
    if language.code == SOURCE_LANGUAGE:
        return english_span(language.clock, start, end)
    _ = language.gettext
    a, b = language.clock.at(start), language.clock.at(end)
    if a.date() == b.date() and a.utcoffset() == b.utcoffset():
        return _("%(day)s, %(start)s to %(end)s") % {
            "day": _day(language, a), "start": _minute(language, a),
            "end": f"{_minute(language, b)} {zone(language, end)}"}
    return _("%(start)s to %(end)s") % {
        "start": f"{_day(language, a)} {_minute(language, a)} {zone(language, start)}",
        "end": f"{_day(language, b)} {_minute(language, b)} {zone(language, end)}"}
