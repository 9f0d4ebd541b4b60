"""How the pages, the report file and its PDF write a figure for people to read.

The API keeps its raw values for machines (``329.485``, ``None``); people read one
decimal (``329.5``), a count as a whole number, a dash where there is nothing to
count (with a legend saying so: :data:`NOTHING_LEGEND`), a duration in minutes and
seconds, and a range as local times with the zone. A zero is a figure (``0.0``),
never a blank.
"""

from __future__ import annotations

import functools
import math

from dealerbox.floor.telling.catalogs import SOURCE_LANGUAGE
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.language import Language

__all__ = ["NOTHING", "NOTHING_LEGEND", "NO_HANDS", "one_decimal", "count", "duration", "span", "english",
           "decimal_in", "count_in", "offset_in", "nothing_legend"]

#: What a cell holds when there is nothing to count (no hands; no corrections).
NOTHING = "–"
#: The legend under a table that may hold :data:`NOTHING`.
NOTHING_LEGEND = (f"{NOTHING} nothing to count: no hands in the range (for wrong corrections: "
                  "no corrections made); 0.0 is a real zero.")
#: A group's hands when it dealt none.
NO_HANDS = "no hands"


def one_decimal(value) -> str:
    """``329.485`` → ``329.5``, ``0`` → ``0.0``; ``None`` (or a non-finite value) → :data:`NOTHING`."""
    if value is None or isinstance(value, bool):
        return NOTHING
    value = float(value)
    if not math.isfinite(value):
        return NOTHING
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def count(value) -> str:
    """A count as a whole number; ``None`` → :data:`NOTHING`."""
    return NOTHING if value is None else str(int(value))


def duration(seconds) -> str:
    """``42.4`` → ``42 s``, ``200`` → ``3 min 20 s``, ``3900`` → ``1 h 5 min``; ``None`` → :data:`NOTHING`."""
    if seconds is None or not math.isfinite(float(seconds)):
        return NOTHING
    s = round(float(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"
    minutes = round(s / 60)
    return f"{minutes // 60} h {minutes % 60} min" if minutes % 60 else f"{minutes // 60} h"


def span(clock: FloorClock, start: float, end: float) -> str:
    """A range as people read it, in the floor's zone: ``Thu 26 Nov 2026, 14:00 to 19:55 CET``
    within one day, else both ends in full (``Wed 25 Nov 2026, 22:00 CET to Thu 26 Nov 2026,
    06:00 CET``)."""
    a, b = clock.at(start), clock.at(end)
    if a.date() == b.date() and a.strftime("%Z") == b.strftime("%Z"):
        return f"{a:%a %d %b %Y}, {a:%H:%M} to {b:%H:%M %Z}"
    return f"{a:%a %d %b %Y, %H:%M %Z} to {b:%a %d %b %Y, %H:%M %Z}"


# -- in a reader's language (issue 45): the same figures in the forms of its readers

@functools.cache
def english() -> Language:
    """English in the machine's zone: the words of a caller that names no reader (a file,
    a test); numbers and words only, never a moment a person reads."""
    return Language(SOURCE_LANGUAGE)


def decimal_in(language: Language, value) -> str:
    """:func:`one_decimal` in *language*'s form: ``329,5`` (cs), ``0,0``; nothing: :data:`NOTHING`."""
    if value is None or isinstance(value, bool):
        return NOTHING
    value = float(value)
    if not math.isfinite(value):
        return NOTHING
    return language.forms.decimal(0.0 if round(value, 1) == 0 else value, 1)


def count_in(language: Language, value) -> str:
    """A count in *language*'s grouping (``1 234`` in cs); ``None`` → :data:`NOTHING`."""
    return NOTHING if value is None else language.forms.integer(int(value))


def offset_in(language: Language, offset: float) -> str:
    """A table clock's offset from the floor's, one decimal: ``2,3 s ahead of the floor's``."""
    seconds = language.forms.decimal(abs(offset), 1)
    if offset > 0:
        return language.gettext("%(seconds)s s ahead of the floor's") % {"seconds": seconds}
    return language.gettext("%(seconds)s s behind the floor's") % {"seconds": seconds}


def nothing_legend(language: Language) -> str:
    """:data:`NOTHING_LEGEND` in *language* (the shift report's words, one catalog entry)."""
    return language.gettext("%(nothing)s nothing to count: no hands in the range (for wrong corrections: no "
                            "corrections made); %(zero)s is a real zero.") % {
        "nothing": NOTHING, "zero": language.forms.decimal(0.0, 1)}
