"""The technicians' tables page (issue 41; docs/floor/pages.md, "The tables page").

``/tables`` shows every table's software version, config fingerprint and rule profile, the
room registry it judges cards with, each reader's health and error rate, its clock's offset
from the floor's, its backlog, when the floor last heard it, its uptime and restarts. A table
out of step with the room (an older version than most tables run, a newer one than the floor's
own, another profile than most, another registry than the floor's, a clock off by more than a
second), offline, or with a failing reader is marked in plain words,
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
from dealerbox.floor.telling.tables_step import CLOCK_LIMIT_S, TableCheck, room_tables

__all__ = ["TablesPages", "offset_words", "rate_words"]

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

    def _checks(self):
        # The bars are the floor's own version and registry, never what a table claims.
        return room_tables(self.app.store.tables(), floor_version=FLOOR_VERSION,
                           floor_registry=self.app.store.registry_version())

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
        }

    async def page(self, request, client, session):
        checks, room = await run_in_threadpool(self._checks)
        now = time.time()
        return self.app.render(
            request, "tables.html", session=session, room=room, now=self.app.clock.full(now),
            limit=f"{CLOCK_LIMIT_S:.1f}", tables=[self._shown(c, now) for c in checks],
            attention=sum(1 for c in checks if c.needs_attention))

    async def json(self, request, client, session):
        checks, room = await run_in_threadpool(self._checks)
        return JSONResponse({"room": dataclasses.asdict(room),
                             "tables": [{**dataclasses.asdict(c), "needs_attention": c.needs_attention}
                                        for c in checks]})
