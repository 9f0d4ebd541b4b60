"""A table's commissioning record in the floor view (issue 48; docs/floor/tables.md, "Commissioning").

- ``/tables/{table_id}/commissioning``: the table's last commissioning run, as a regulator
  reads it (when, by whom, the software and config, each device's verdict, advice and
  figures beside their bounds), and the table's earlier runs listed, each linked;
- ``/tables/{table_id}/commissioning/{seq}``: the run the table journalled at line *seq*;
- ``.../{seq}/record.csv`` and ``.../{seq}/record.pdf``: that run as CSV and as a PDF.

Everyone signed in may read them ("view", as the tables page): the record names a technician
and a table's hardware, nothing a viewer may not see elsewhere.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from dealerbox.floor.telling.catalogs import N_
from dealerbox.floor.telling import commissioning as C
from dealerbox.floor.telling.story_pdf import NO_FONT, FontMissing
from dealerbox.floor.web.auth import Refused
from dealerbox.floor.web.params import table_id_of

__all__ = ["CommissionPages"]


class CommissionPages:
    """The commissioning pages of a :class:`~dealerbox.floor.web.app.FloorApp`."""

    def __init__(self, app):
        self.app = app

    def routes(self) -> list[tuple]:
        """The routes, as :meth:`FloorApp.routes` lists them: every one needs "view"."""
        return [
            ("/tables/{table_id}/commissioning", "GET", self.page, "view", None),
            ("/tables/{table_id}/commissioning/{seq:int}", "GET", self.page, "view", None),
            ("/tables/{table_id}/commissioning/{seq:int}/record.csv", "GET", self.run_csv, "view", None),
            ("/tables/{table_id}/commissioning/{seq:int}/record.pdf", "GET", self.run_pdf, "view", None),
        ]

    def _runs(self, request) -> tuple[str, list[dict]]:
        table = table_id_of(request.path_params["table_id"])
        return table, self.app.store.commissionings(table)

    async def _record(self, request) -> tuple[dict, list[dict]]:
        """The run the path names (its last, without a seq) and every run of its table, last first."""
        table, runs = await run_in_threadpool(self._runs, request)
        seq = request.path_params.get("seq")
        found = next((r for r in runs if seq is None or r["seq"] == seq), None)
        if found is None:
            if seq is None:
                raise Refused(404, N_("no commissioning of table %(table)s has reached the floor"), table=table)
            raise Refused(404, N_("no commissioning of table %(table)s at journal line %(seq)s"), table=table, seq=seq)
        return found, runs

    async def page(self, request, client, session):
        """The run the path names, with every run of its table listed."""
        table = table_id_of(request.path_params["table_id"])   # a bad id: 400, as every page's
        language = self.app.language.of(request, session)
        _ = language.gettext
        try:
            record, runs = await self._record(request)
        except Refused as refused:
            # On the record's own page, which says when a commissioning reaches the floor.
            return self.app.render(request, "commission.html", refused.status, session=session, record=None,
                                   table=table, error=refused.told(language), language=language,
                                   title=_("Commissioning of table %(table)s") % {"table": table})
        clock = self.app.clock
        path = C.record_path(record["table"], record["seq"])
        earlier = [{"when": C.moment_in(language, r["at"]), "by": r["technician"], "ok": r["ok"],
                    "path": C.record_path(r["table"], r["seq"]), "shown": r["seq"] == record["seq"]} for r in runs]
        return self.app.render(request, "commission.html", session=session, record=record, table=record["table"],
                               error="", last=record["seq"] == runs[0]["seq"], language=language,
                               ended=C.moment_in(language, record["at"]),
                               title=C.record_title(record, clock, language), path=path, runs=earlier,
                               sections=C.record_sections(record, clock, language),
                               failed=C.devices_in(language, [d["device"] for d in record["devices"]
                                                              if d["verdict"] == "fail"]))

    async def run_csv(self, request, client, session):
        record, _runs = await self._record(request)
        return _file(C.record_csv(record), "text/csv; charset=utf-8", C.file_name(record, self.app.clock, "csv"))

    async def run_pdf(self, request, client, session):
        record, _runs = await self._record(request)
        try:
            # In the language of whoever asks for it, as their pages are.
            language = self.app.language.of(request, session)
            pdf = await run_in_threadpool(C.record_pdf, record, self.app.clock, language)
        except FontMissing as exc:
            raise Refused(503, NO_FONT, dirs=exc.dirs) from None
        return _file(pdf, "application/pdf", C.file_name(record, self.app.clock, "pdf"))


def _file(body, media_type: str, name: str) -> Response:
    return Response(body, media_type=media_type, headers={"Content-Disposition": f'attachment; filename="{name}"'})
