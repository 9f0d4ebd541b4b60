"""The technicians' tables page (issue 41; docs/floor/tables.md, "The tables page").

``/tables`` shows every table's software version, config fingerprint and rule profile, the
room registry it judges cards with, each reader's health and error rate, its clock's offset
from the floor's, its backlog, when the floor last heard it, its uptime and restarts. A table
out of step with the room (an older version than most tables run, a newer one than the floor's
own, another profile than most, another registry than the floor's, a clock off by more than a
second), offline, with a failing reader, or not commissioned as the house asks (never, its last
run failed, or older than ``[commission] max_age_days``) is marked in plain words,
and the tables most in need of attention come first
(:func:`~dealerbox.floor.telling.tables_step.room_tables` judges). ``/api/tables`` answers the
same as JSON. Both need a signed-in user ("view").
"""

from __future__ import annotations

import dataclasses
import time

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse

from dealerbox import __version__ as FLOOR_VERSION
from dealerbox.floor.telling import figure_text as FT
from dealerbox.floor.telling.commissioning import CommissionCheck, age_words, commission_check, record_path
from dealerbox.floor.telling.catalogs import SOURCE_LANGUAGE
from dealerbox.floor.telling.figure_text import english
from dealerbox.floor.telling.language import Language
from dealerbox.floor.telling.tables_step import CLOCK_LIMIT_S, TableCheck, room_tables

__all__ = ["TablesPages", "commission_shown", "offset_words", "rate_words"]

#: How many hex digits of a fingerprint the page shows: enough to tell configs apart by eye.
FINGERPRINT_SHOWN = 12


def offset_words(offset: float | None, language: Language | None = None) -> str:
    """A clock's offset from the floor's in words, one decimal (in *language*; none: English):
    ``0.0 s (in step)``, ``2.3 s ahead``."""
    language = language if language is not None else english()
    _ = language.gettext
    if offset is None:
        return _("not measured yet")
    seconds = FT.decimal_in(language, abs(offset))
    if round(abs(offset), 1) == 0:
        return _("%(seconds)s s (in step)") % {"seconds": seconds}
    return (_("%(seconds)s s ahead") if offset > 0 else _("%(seconds)s s behind")) % {"seconds": seconds}


def rate_words(rate: float | None, language: Language | None = None) -> str:
    """A reader's error rate: ``0.0% of reads failed``; before any read, that none was tried."""
    language = language if language is not None else english()
    if rate is None:
        return language.gettext("no read tried yet")
    return language.gettext("%(share)s of reads failed") % {"share": language.forms.percent(rate)}


def commission_shown(clock, table: str, c: CommissionCheck | None, language: Language | None = None) -> dict:
    """A table's last commissioning in words, as ``_commission.html`` shows it on the tables page
    and the table's own page: when (local time, zone, by *clock*; in *language*, the reader's),
    by whom, the verdict."""
    language = language if language is not None else Language(SOURCE_LANGUAGE, clock)
    _ = language.gettext
    if c is None or c.state == "never":
        return {"state": "never", "words": _("never commissioned"), "path": None}
    return {"state": c.state, "words": _("failed") if c.state == "failed" else _("passed"),
            "when": language.forms.full(c.at),
            "ago": age_words(c.age_days, language), "by": c.technician, "path": record_path(table),
            "outdated": c.state == "outdated"}


class TablesPages:
    """The tables page over *app* (:class:`~dealerbox.floor.web.app.FloorApp`): its store,
    clock and templates."""

    def __init__(self, app):
        self.app = app

    def routes(self) -> list[tuple]:
        """The routes, as :meth:`FloorApp.routes` lists them: every one needs "view"."""
        return [
            ("/tables", "GET", self.page, "view", None),
            ("/api/tables", "GET", self.json, "view", None),
        ]

    def _checks(self, now: float, language: Language):
        # The bars are the floor's own version and registry, never what a table claims.
        store, limit = self.app.store, self.app.settings.commission
        rows, last = store.tables(), store.last_commissionings()
        commissionings = {r["table_id"]: commission_check(last.get(r["table_id"]), now, limit, language)
                          for r in rows}
        return room_tables(rows, floor_version=FLOOR_VERSION, floor_registry=store.registry_version(),
                           commissionings=commissionings, language=language)

    def _shown(self, check: TableCheck, now: float, language: Language) -> dict:
        """One table's card: every figure already in words, in *language*."""
        _, forms = language.gettext, language.forms
        fingerprint = check.config_fingerprint
        if check.registry_version is None:
            registry = _("none: it judges with its own files only")
        else:
            registry = _("version %(version)s") % {"version": check.registry_version}
            if check.registry_fingerprint:
                registry += f" ({check.registry_fingerprint[:FINGERPRINT_SHOWN]})"
        not_said = _("not said")
        return {
            "id": check.table_id, "online": check.online, "marks": check.marks,
            "version": check.version or _("not said (an older box)"),
            "config": fingerprint[:FINGERPRINT_SHOWN] if fingerprint else not_said,
            "config_full": fingerprint or "", "profile": check.profile or not_said,
            "registry": registry,
            "readers": [{"name": r.name, "rate": rate_words(r.error_rate, language), "troubled": r.troubled,
                         "state": _("not working") if r.faulted else _("working") if r.ok else _("not known"),
                         "last_seen": _("never") if r.last_seen_s is None else
                         _("%(seconds)s s ago") % {"seconds": FT.decimal_in(language, r.last_seen_s)}}
                        for r in check.readers],
            "clock": offset_words(check.clock_offset, language),
            "clock_off": check.clock_offset is not None and abs(check.clock_offset) > CLOCK_LIMIT_S,
            "backlog": not_said if check.backlog is None else
                       language.ngettext("%(count)s line", "%(count)s lines", check.backlog)
                       % {"count": forms.integer(check.backlog)},
            "last_heard": forms.full(check.last_heard) if check.last_heard else _("never"),
            "last_heard_ago": FT.duration(now - check.last_heard) if check.last_heard else "",
            "uptime": FT.duration(check.uptime_s) if check.uptime_s is not None else not_said,
            "restarts": not_said if check.restarts is None else forms.integer(check.restarts),
            "commission": commission_shown(self.app.clock, check.table_id, check.commissioning, language),
        }

    async def page(self, request, client, session):
        now = time.time()
        language = self.app.language.of(request, session)
        checks, room = await run_in_threadpool(self._checks, now, language)
        return self.app.render(
            request, "tables.html", session=session, room=room, now=language.forms.full(now), language=language,
            limit=FT.decimal_in(language, CLOCK_LIMIT_S), tables=[self._shown(c, now, language) for c in checks],
            attention=sum(1 for c in checks if c.needs_attention),
            commission_days=self.app.settings.commission.max_age_days)

    async def json(self, request, client, session):
        # The marks are readable fields: in the reader's language, as the page's.
        language = self.app.language.of(request, session)
        checks, room = await run_in_threadpool(self._checks, time.time(), language)
        return JSONResponse({"room": dataclasses.asdict(room),
                             "tables": [{**dataclasses.asdict(c), "needs_attention": c.needs_attention}
                                        for c in checks]})
