"""Every value a request carries in its path or query, checked in one place.

A handler takes its parameters from here and never parses one itself, so a value of
any shape is a 400 (or a 404 for an id no row can have) naming the parameter, never
a 500: SQLite holds signed 64-bit integers, and Python's dates end at year 9999.
"""

from __future__ import annotations

import re
import time
from typing import NamedTuple

from dealerbox.floor.telling import figures as F
from dealerbox.floor.telling.catalogs import N_
from dealerbox.floor.operating.accounts import NAME_RE
from dealerbox.floor.telling.clock import PRESETS, FloorClock
from dealerbox.floor.web.auth import Refused
from dealerbox.link import protocol as P

__all__ = ["time_range", "page_range", "PageRange", "parse_time", "parse_local_time", "table_id_of", "dealer_id_of", "row_id_of", "user_name_of", "table_query",
           "dealer_query", "DEFAULT_SPAN_S", "LONGEST_SPAN_S", "LATEST_MOMENT", "ROW_ID_MAX", "NO_JOURNAL_LINE", "NO_OPEN_ALERT"]

#: Without ``from``, the range starts this long before ``to``.
DEFAULT_SPAN_S = 12 * 3600.0
#: The longest range asked for at once (a year and a day).
LONGEST_SPAN_S = 366 * 86400.0
#: The latest moment a range may name (3000-01-01T00:00:00Z): every date print and
#: time zone shift of it stays inside Python's years.
LATEST_MOMENT = 32503680000.0
#: The largest id a store row can have (SQLite's and PostgreSQL's signed 64-bit integer).
ROW_ID_MAX = 2 ** 63 - 1
#: A dealer's id as the badge registry holds it (CONTRACT.md, the ``dealer`` event).
DEALER_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,10}$")
#: The refusals of a row no store holds (:func:`row_id_of`), its number as ``number``.
NO_JOURNAL_LINE = N_("no journal line %(number)s")
NO_OPEN_ALERT = N_("no open alert %(number)s")
#: A moment out of the years a range may name.
_OUT_OF_YEARS = N_("%(name)s=%(given)s: expected a time from 1970 to before 3000-01-01")


def _shown(text: str) -> str:
    return repr(text[:40])


def parse_time(name: str, text: str) -> float:
    """Epoch seconds from the query parameter *name* (:func:`figures.parse_moment`), else a 400."""
    try:
        moment = F.parse_moment(text)
    except ValueError as exc:
        # parse_moment's reason is a catalog message: a person reads it in their language.
        raise Refused(400, N_("%(name)s=%(given)s: %(why)s"), words=("why",), name=name, given=_shown(text),
                      why=str(exc)) from None
    if not 0 <= moment <= LATEST_MOMENT:
        # An ISO time with an offset may fall before 1970 (0001-01-01T00:00+14:00 is year 0 in UTC).
        raise Refused(400, _OUT_OF_YEARS, name=name, given=_shown(text))
    return moment


def parse_local_time(name: str, text: str, clock: FloorClock) -> float:
    """Epoch seconds from the query parameter *name*, a local date-time in the floor's zone
    as ``<input type="datetime-local">`` sends it (``2026-11-26T19:55``), else a 400."""
    try:
        moment = clock.parse_local(text)
    except (ValueError, OverflowError):
        raise Refused(400, N_("%(name)s=%(given)s: expected a local date and time such as 2026-11-26T19:55"),
                      name=name, given=_shown(text)) from None
    if not 0 <= moment <= LATEST_MOMENT:
        raise Refused(400, _OUT_OF_YEARS, name=name, given=_shown(text))
    return moment


def _checked(start: float, end: float) -> tuple[float, float]:
    if start >= end:
        # A program reads the epoch seconds it sent; a person, the two moments in their language.
        raise Refused(400, N_("from (%(start)s) must be before to (%(end)s)"), moments=("start", "end"),
                      start=start, end=end)
    if end - start > LONGEST_SPAN_S:
        raise Refused(400, N_("a range of at most %(days)s days at once"), days=round(LONGEST_SPAN_S / 86400))
    return start, end


def time_range(request) -> tuple[float, float]:
    """``(from, to)`` of the request's query, in epoch seconds: ``to`` defaults to now,
    ``from`` to :data:`DEFAULT_SPAN_S` before ``to`` (never before 0); a 400 when they
    are out of order or further apart than :data:`LONGEST_SPAN_S`."""
    q = request.query_params
    end = parse_time("to", q["to"]) if "to" in q else time.time()
    start = parse_time("from", q["from"]) if "from" in q else max(0.0, end - DEFAULT_SPAN_S)
    return _checked(start, end)


class PageRange(NamedTuple):
    """The range a page shows: epoch seconds, and the preset it is (``None``: none)."""

    start: float
    end: float
    preset: str | None


def page_range(request, clock: FloorClock, now: float | None = None) -> PageRange:
    """The range a figures page or the shift report shows, from its query, one of:

    - ``preset``: one of :data:`~dealerbox.floor.telling.clock.PRESETS` (``this_shift``, ...), from
      :meth:`FloorClock.presets`;
    - ``start`` / ``end``: local date-times in the floor's zone, as the page's date-time
      inputs send them (an input left empty counts as not given);
    - ``from`` / ``to``: epoch seconds or ISO 8601 with an offset, as the API takes them
      (:func:`time_range`).

    Each end is taken from ``start``/``from`` (``end``/``to``), else it defaults as
    :func:`time_range`'s. Anything else (an unknown preset, a preset with bounds, both
    ``start`` and ``from``, a value of any other shape) is a 400 naming it."""
    q = request.query_params
    now = time.time() if now is None else now
    local = {k: q[k] for k in ("start", "end") if q.get(k, "").strip()}
    if "preset" in q:
        preset = q["preset"]
        if preset not in PRESETS:
            raise Refused(400, N_("preset=%(given)s: expected one of %(presets)s"), given=_shown(preset),
                          presets=", ".join(PRESETS))
        given = sorted(set(local) | {k for k in ("from", "to") if k in q})
        if given:
            raise Refused(400, N_("preset=%(preset)s names its own range: drop %(given)s"), preset=preset,
                          given=given[0])
        start, end = clock.presets(now)[preset]
        return PageRange(*_checked(start, end), preset)
    for local_name, api_name in (("start", "from"), ("end", "to")):
        if local_name in local and api_name in q:
            raise Refused(400, N_("give %(local)s (a local time) or %(api)s, not both"), local=local_name,
                          api=api_name)
    if "end" in local:
        end = parse_local_time("end", local["end"].strip(), clock)
    else:
        end = parse_time("to", q["to"]) if "to" in q else now
    if "start" in local:
        start = parse_local_time("start", local["start"].strip(), clock)
    else:
        start = parse_time("from", q["from"]) if "from" in q else max(0.0, end - DEFAULT_SPAN_S)
    return PageRange(*_checked(start, end), None)


def table_id_of(value: str) -> str:
    """*value* if it is a table id, else a 400 saying so."""
    if not P.valid_table_id(value):
        raise Refused(400, N_("table %(given)s is no table id"), given=_shown(value))
    return value


def dealer_id_of(value: str) -> str:
    """*value* if it is a dealer id, else a 400 saying so."""
    if not DEALER_ID_RE.match(value):
        raise Refused(400, N_("dealer %(given)s is no dealer id (1 to 10 letters, digits, - or _)"),
                      given=_shown(value))
    return value


def row_id_of(refusal: str, value: int) -> int:
    """*value* (a path's ``int``, which Starlette leaves unbounded) if a store row can
    have it, else a 404 saying *refusal* (:data:`NO_JOURNAL_LINE`, :data:`NO_OPEN_ALERT`):
    no journal line or alert has such a number."""
    if not 0 <= value <= ROW_ID_MAX:
        raise Refused(404, refusal, number=str(value)[:40])
    return value


def user_name_of(value: str) -> str:
    """*value* if a user can have it as a name (:data:`accounts.NAME_RE`), else a 404."""
    if not NAME_RE.match(value):
        raise Refused(404, N_("no user %(given)s"), given=_shown(value))
    return value


def table_query(request) -> str | None:
    """The query's ``table`` (checked), or None when it has none."""
    q = request.query_params
    return table_id_of(q["table"]) if "table" in q else None


def dealer_query(request) -> str | None:
    """The query's ``dealer`` (checked), or None when it has none."""
    q = request.query_params
    return dealer_id_of(q["dealer"]) if "dealer" in q else None
