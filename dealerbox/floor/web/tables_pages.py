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
from dealerbox.floor.telling.tables_step import CLOCK_LIMIT_S, TableCheck, room_tables

__all__ = ["TablesPages", "commission_shown", "offset_words", "rate_words"]

#: How many hex digits of a fingerprint the page shows: enough to tell configs apart by eye.
FINGERPRINT_SHOWN = 12


def offset_words(offset: float | None) -> str:
    """A clock's offset from the floor's in words, one decimal: ``0.0 s``, ``2.3 s ahead``."""
    if offset is None:
        return "not measured yet"
    if round(abs(offset), 1) == 0:
        return "0.0 s (in step)"
    return f"{abs(offset):.1f} s {'ahead' if offset > 0 else 'behind'}"


def rate_words(rate: float | None) -> str:
    """A reader's error rate: ``0.0% of reads failed``; before any read, that none was tried."""
    if rate is None:
        return "no read tried yet"
    return f"{100 * rate:.1f}% of reads failed"


def commission_shown(clock, table: str, c: CommissionCheck | None) -> dict:
    """A table's last commissioning in words, as ``_commission.html`` shows it on the tables page
    and the table's own page: when (local time, zone, by *clock*), by whom, the verdict."""
    if c is None or c.state == "never":
        return {"state": "never", "words": "never commissioned", "path": None}
    return {"state": c.state, "words": "failed" if c.state == "failed" else "passed",
            "when": clock.full(c.at),
            "ago": age_words(c.age_days), "by": c.technician, "path": record_path(table),
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

    def _checks(self, now: float):
        # The bars are the floor's own version and registry, never what a table claims.
        store, limit = self.app.store, self.app.settings.commission
        rows, last = store.tables(), store.last_commissionings()
        commissionings = {r["table_id"]: commission_check(last.get(r["table_id"]), now, limit) for r in rows}
        return room_tables(rows, floor_version=FLOOR_VERSION, floor_registry=store.registry_version(),
                           commissionings=commissionings)

    def _commission_shown(self, table: str, c: CommissionCheck | None) -> dict:
        return commission_shown(self.app.clock, table, c)

    def _shown(self, check: TableCheck, now: float) -> dict:
        """One table's card: every figure already in words."""
        clock = self.app.clock
        fingerprint = check.config_fingerprint
        registry = ("none: it judges with its own files only" if check.registry_version is None
                    else f"version {check.registry_version}"
                    + (f" ({check.registry_fingerprint[:FINGERPRINT_SHOWN]})" if check.registry_fingerprint else ""))
        return {
            "id": check.table_id, "online": check.online, "marks": check.marks,
            "version": check.version or "not said (an older box)",
            "config": fingerprint[:FINGERPRINT_SHOWN] if fingerprint else "not said",
            "config_full": fingerprint or "", "profile": check.profile or "not said",
            "registry": registry,
            "readers": [{"name": r.name, "rate": rate_words(r.error_rate), "troubled": r.troubled,
                         "state": "not working" if r.faulted else "working" if r.ok else "not known",
                         "last_seen": "never" if r.last_seen_s is None else f"{r.last_seen_s:.1f} s ago"}
                        for r in check.readers],
            "clock": offset_words(check.clock_offset),
            "clock_off": check.clock_offset is not None and abs(check.clock_offset) > CLOCK_LIMIT_S,
            "backlog": "not said" if check.backlog is None else
                       f"{check.backlog} line{'s' if check.backlog != 1 else ''}",
            "last_heard": clock.full(check.last_heard) if check.last_heard else "never",
            "last_heard_ago": FT.duration(now - check.last_heard) if check.last_heard else "",
            "uptime": FT.duration(check.uptime_s) if check.uptime_s is not None else "not said",
            "restarts": "not said" if check.restarts is None else str(check.restarts),
            "commission": self._commission_shown(check.table_id, check.commissioning),
        }

    async def page(self, request, client, session):
        now = time.time()
        checks, room = await run_in_threadpool(self._checks, now)
        return self.app.render(
            request, "tables.html", session=session, room=room, now=self.app.clock.full(now),
            limit=f"{CLOCK_LIMIT_S:.1f}", tables=[self._shown(c, now) for c in checks],
            attention=sum(1 for c in checks if c.needs_attention),
            commission_days=self.app.settings.commission.max_age_days)

    async def json(self, request, client, session):
        checks, room = await run_in_threadpool(self._checks, time.time())
        return JSONResponse({"room": dataclasses.asdict(room),
                             "tables": [{**dataclasses.asdict(c), "needs_attention": c.needs_attention}
                                        for c in checks]})
