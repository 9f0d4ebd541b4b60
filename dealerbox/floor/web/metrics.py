"""The floor's metrics for IT's monitoring (issue 41; docs/floor/metrics.md): ``/metrics`` in
Prometheus's text format: the families made with the ``prometheus_client`` library, written
by the floor's own writer (:mod:`~dealerbox.floor.web.exposition`, the library's bytes for less
CPU).

Only a scraper showing the bearer token of ``[web] metrics_token_file`` gets an answer (401
otherwise, and 404 when no token file is set: the floor then serves no metrics at all). The
file is read again at each scrape, so a new token takes effect without a restart.

Every figure the store holds is read from it at scrape time by a custom collector
(:class:`StoreCollector`), so a scrape shows what the store holds whichever collector process
filed it, at the cost of the room's tables rather than of the store's history
(:mod:`dealerbox.floor.store.metrics`): lines filed and refused per table (every table the floor
knows, at 0 until it counts, so that Prometheus's ``increase()`` sees the first one), how far the
floor is behind each table, the
open alerts by kind, the properties' bridges, the protection pass's lag, and the store's own
connections and how long the scrape's reads took. The broker health check's last result is read
from the file the check keeps (:mod:`~dealerbox.floor.operating.broker_check_metrics`). Only the
failed sign-ins are counted in the view's memory: the view is the one process that sees them.
"""

from __future__ import annotations

import logging
import secrets
import time

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.concurrency import run_in_threadpool
from starlette.responses import PlainTextResponse, Response

from dealerbox.errors import ConfigError
from dealerbox.floor.operating.broker_check_metrics import BrokerCheckCollector
from dealerbox.floor.protect.tables import protect_progress
from dealerbox.floor.store import metrics as SM
from dealerbox.floor.web.exposition import exposition

__all__ = ["FloorMetrics", "StoreCollector", "read_token", "TOKEN_MIN"]

log = logging.getLogger(__name__)

#: A token shorter than this is refused at start: a guessable token is an open door.
TOKEN_MIN = 24
NS = "dealerbox_floor"
#: The scrape's statement over the tables' rows, built once.
TABLES = SM.tables_statement(protect_progress)


def read_token(path) -> str:
    """The bearer token in *path* (surrounding whitespace ignored); :class:`ConfigError` when the
    file cannot be read or the token is shorter than :data:`TOKEN_MIN` characters."""
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(path, "(file)", "a file holding the metrics' bearer token", exc) from None
    if len(token) < TOKEN_MIN or any(c.isspace() for c in token):
        raise ConfigError(path, "web.metrics_token_file",
                          f"a token of at least {TOKEN_MIN} characters without spaces "
                          "(e.g. openssl rand -hex 32)", f"{len(token)} characters")
    return token


class StoreCollector:
    """A ``prometheus_client`` collector reading the store at each scrape: one connection, two
    statements (:mod:`dealerbox.floor.store.metrics`), whatever the store holds."""

    def __init__(self, engine, clock=time.time):
        self.engine = engine
        self.clock = clock

    def describe(self):
        # Nothing up front: the registry must not read the store while registering us.
        return []

    def collect(self):
        started = time.perf_counter()
        now = self.clock()
        try:
            with self.engine.connect() as conn:
                tables, room = SM.table_figures(conn, TABLES), SM.room_figures(conn)
        except Exception:  # the store down: say so in the scrape rather than failing it
            log.warning("floor metrics: cannot read the store", exc_info=True)
            yield GaugeMetricFamily(f"{NS}_store_up", "1 when the scrape could read the store", value=0)
            return
        took = time.perf_counter() - started
        yield GaugeMetricFamily(f"{NS}_store_up", "1 when the scrape could read the store", value=1)
        yield GaugeMetricFamily(f"{NS}_store_query_seconds", "How long this scrape's reads of the store took",
                                value=took)
        if room["connections"] is not None:
            yield GaugeMetricFamily(f"{NS}_store_connections",
                                    "Connections open to the store's PostgreSQL database (every process)",
                                    value=room["connections"])
        # Every table the floor knows, at 0 until it counts: increase() sees the first rise.
        filed = CounterMetricFamily(f"{NS}_lines_filed", "Journal lines filed in the store, per table",
                                    labels=["table"])
        rejected = CounterMetricFamily(f"{NS}_lines_rejected", "Lines that broke a table's chain or came "
                                       "again with other content (why=chain) and messages the floor could "
                                       "not use (why=protocol), per table", labels=["table", "why"])
        for row in tables:
            filed.add_metric([row["table"]], row["filed"])
            for why in SM.REJECTED_WHY:
                rejected.add_metric([row["table"], why], row[why])
        yield from (filed, rejected)
        families = {
            "online": GaugeMetricFamily(f"{NS}_table_online", "1 when the table is connected to the floor",
                                        labels=["table"]),
            "behind": GaugeMetricFamily(f"{NS}_collector_behind_lines", "Lines a table reported that the floor "
                                        "has not filed yet (collector lag, in lines)", labels=["table"]),
            "backlog": GaugeMetricFamily(f"{NS}_table_backlog_lines", "Lines a table holds that the floor has "
                                         "not acknowledged, as the table last reported", labels=["table"]),
            "last": GaugeMetricFamily(f"{NS}_last_filed_timestamp_seconds", "When the floor filed a table's "
                                      "newest line (Unix time)", labels=["table"]),
            "early": GaugeMetricFamily(f"{NS}_gap_waiting_seconds", "How long lines have waited ahead of a gap "
                                       "in a table's journal (0: no gap)", labels=["table"]),
        }
        lines = GaugeMetricFamily(f"{NS}_protection_behind_lines", "Lines filed that game protection's pass has "
                                  "not read yet, per table", labels=["table"])
        seconds = GaugeMetricFamily(f"{NS}_protection_lag_seconds", "How long the oldest line the protection "
                                    "pass has not read has waited, per table (0: none)", labels=["table"])
        for row in tables:
            if not row["heard"]:
                continue
            table = [row["table"]]
            families["online"].add_metric(table, 1 if row["online"] else 0)
            if row["head"] is not None:
                families["behind"].add_metric(table, max(0, row["head"] - row["last_seq"]))
            if row["backlog"] is not None:
                families["backlog"].add_metric(table, row["backlog"])
            if row["last_filed"] is not None:
                families["last"].add_metric(table, row["last_filed"])
            families["early"].add_metric(table, max(0.0, now - row["early_at"]) if row["early_at"] else 0.0)
            waiting = row["last_seq"] > row["protected"]
            lines.add_metric(table, max(0, row["last_seq"] - row["protected"]))
            seconds.add_metric(table, max(0.0, now - row["unread_at"]) if waiting and row["unread_at"] is not None
                               else 0.0)
        yield from families.values()
        m = GaugeMetricFamily(f"{NS}_alerts_open", "Alerts open (not cleared), per kind", labels=["kind"])
        for kind, n in sorted(room["alerts"].items()):
            m.add_metric([kind], n)
        yield m
        m = GaugeMetricFamily(f"{NS}_bridge_connected", "1 when a property's bridge to the group broker is "
                              "connected, 0 when the property is blind", labels=["property"])
        since = GaugeMetricFamily(f"{NS}_bridge_state_seconds", "How long a property's bridge has been in its "
                                  "state (connected or blind)", labels=["property"])
        count = GaugeMetricFamily(f"{NS}_bridges", "Properties' bridges connected and blind", labels=["state"])
        bridges = room["bridges"]
        for b in bridges:
            m.add_metric([b["name"]], 1 if b["connected"] else 0)
            since.add_metric([b["name"]], max(0.0, now - b["since"]))
        up = sum(1 for b in bridges if b["connected"])
        count.add_metric(["connected"], up)
        count.add_metric(["blind"], len(bridges) - up)
        yield from (m, since, count)
        yield from (lines, seconds)


class FloorMetrics:
    """``/metrics`` of the web view over *app* (:class:`~dealerbox.floor.web.app.FloorApp`)."""

    def __init__(self, app):
        self.token_file = app.settings.metrics_token_file
        if self.token_file is not None:
            read_token(self.token_file)  # a missing or weak token stops the view at start, saying which file
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(StoreCollector(app.figures.engine))
        self.registry.register(BrokerCheckCollector(app.settings.broker_check_result))
        self._signins_failed = Counter("signins_failed", "Failed sign-ins to the floor view (wrong name or "
                                       "password) since the view started", namespace=NS, registry=self.registry)

    def routes(self) -> list[tuple]:
        """The route, as :meth:`FloorApp.routes` lists them: open to the gate, as the handler
        asks for the bearer token itself (a scraper has no session)."""
        return [("/metrics", "GET", self.metrics, None, None)]

    def signin_failed(self) -> None:
        """Count one failed sign-in."""
        self._signins_failed.inc()

    def _allowed(self, request) -> bool:
        given = request.headers.get("authorization", "")
        scheme, _, token = given.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return False
        try:
            expected = read_token(self.token_file)
        except ConfigError as exc:
            log.error("floor metrics: %s", exc)
            return False
        return secrets.compare_digest(token.strip().encode(), expected.encode())

    async def metrics(self, request, client, session):
        if self.token_file is None:
            return PlainTextResponse("metrics are off: set [web] metrics_token_file\n", 404)
        if not self._allowed(request):
            return PlainTextResponse("a bearer token is needed\n", 401,
                                     headers={"WWW-Authenticate": 'Bearer realm="dealerbox floor metrics"'})
        body = await run_in_threadpool(exposition, self.registry)
        return Response(body, media_type=CONTENT_TYPE_LATEST)
