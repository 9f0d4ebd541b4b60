"""The floor's figures as JSON (docs/floor/pages.md, "Figures"): hands per hour, irregularity
rates, alert clearing and sensing faults, for any time range, for the casino's own
reporting tools and the floor's pages.

Before answering, the ledger reads the lines stored since it last did
(:meth:`~dealerbox.floor.telling.figures.Ledger.catch_up`), so an answer is never behind
the store; the collector calling it after each commit keeps that step short.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse

from dealerbox.floor.telling import figures as F
from dealerbox.floor.telling import story as S
from dealerbox.floor.telling.catalogs import N_
from dealerbox.floor.store import store_engine
from dealerbox.floor.web.auth import Refused
from dealerbox.floor.web.params import (NO_JOURNAL_LINE, dealer_id_of, dealer_query, row_id_of, table_id_of, table_query,
                                        time_range)

__all__ = ["FiguresApi"]


class FiguresApi:
    """The ``/api/figures/...`` handlers over the store *store* (an SQLite path or a URL)."""

    def __init__(self, store, *, card_of_uid=None):
        self.engine = store_engine(store)
        self.ledger = F.Ledger()
        self.card_of_uid = card_of_uid

    def routes(self) -> list[tuple]:
        """The routes, as :meth:`FloorApp.routes` lists them: every one needs "view"."""
        return [
            ("/api/figures/room", "GET", self.room, "view", None),
            ("/api/figures/tables/{table_id}", "GET", self.table, "view", None),
            ("/api/figures/dealers/{dealer_id}", "GET", self.dealer, "view", None),
            ("/api/figures/hourly", "GET", self.hourly, "view", None),
            ("/api/figures/alerts", "GET", self.alerts, "view", None),
            ("/api/figures/sensing", "GET", self.sensing, "view", None),
            ("/api/hands/{table_id}/{seq:int}", "GET", self.hand_json, "view", None),
        ]

    def story(self, table_id: str, seq: int, language=None) -> dict:
        """The story of *table_id*'s hand holding journal line *seq* (dealerbox/floor/telling/story.py),
        its timeline in *language* (a Language; none: English); a 404 when the floor has no such line."""
        table_id = table_id_of(table_id)
        seq = row_id_of(NO_JOURNAL_LINE, seq)
        self.ledger.catch_up(self.engine)
        with self.engine.connect() as conn:
            found = S.hand_lines(conn, table_id, seq)
        if found is None:
            # Said without its journal line: a person followed a link, and the line is in its address.
            raise Refused(404, N_("table %(table)s has no such hand"), seq=seq, table=table_id)
        lines, dealer = found
        return S.tell(table_id, lines, dealer=dealer, card_of_uid=self.card_of_uid, language=language)

    async def hand_json(self, request, client, session):
        p = request.path_params
        return JSONResponse(await run_in_threadpool(self.story, p["table_id"], p["seq"]))

    def close(self) -> None:
        self.engine.dispose()

    def answer(self, query, *args, **kwargs):
        self.ledger.catch_up(self.engine)
        with self.engine.connect() as conn:
            return query(conn, *args, **kwargs)

    async def _json(self, query, *args, **kwargs) -> JSONResponse:
        return JSONResponse(await run_in_threadpool(self.answer, query, *args, **kwargs))

    async def room(self, request, client, session):
        return await self._json(F.room_figures, *time_range(request))

    async def table(self, request, client, session):
        table_id = table_id_of(request.path_params["table_id"])
        return await self._json(F.table_figures, table_id, *time_range(request))

    async def dealer(self, request, client, session):
        dealer_id = dealer_id_of(request.path_params["dealer_id"])
        return await self._json(F.dealer_figures, dealer_id, *time_range(request))

    async def hourly(self, request, client, session):
        start, end = time_range(request)
        table_id, dealer_id = table_query(request), dealer_query(request)
        hours = await run_in_threadpool(self.answer, F.hourly, start, end, table_id=table_id,
                                        dealer_id=dealer_id)
        return JSONResponse({"from": start, "to": end, "table": table_id, "dealer": dealer_id,
                             "hours": hours})

    async def alerts(self, request, client, session):
        start, end = time_range(request)
        rows = await run_in_threadpool(self.answer, F.alert_clearing, start, end)
        return JSONResponse({"from": start, "to": end, "supervisors": rows})

    async def sensing(self, request, client, session):
        start, end = time_range(request)
        rows = await run_in_threadpool(self.answer, F.sensing_faults, start, end)
        return JSONResponse({"from": start, "to": end, "tables": rows})
