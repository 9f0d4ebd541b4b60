"""What changed in the store, for the event streams.

The collector is another process: the web view learns of its commits by
polling SQLite's ``PRAGMA data_version`` (one read of the WAL index, no query)
every :data:`POLL_S`. Only when it moved are the tables and the open alerts
read again, compared with what the streams were last told, and the
differences sent to every stream as ``tables``, ``alert`` and ``cleared``.

Every table and alert carries its words (:mod:`dealerbox.floor.telling.floor_words`) beside its raw fields.
A table goes quiet with nothing written: every :data:`RETILE_S` the tiles are worded
again for the time it is, and those that changed are sent.
"""

from __future__ import annotations

import asyncio
import logging
import time

from anyio import to_thread
from sqlalchemy import select

from dealerbox.floor.telling import figures as F
from dealerbox.floor.store import Store
from dealerbox.floor.store.alerts import SURVEILLANCE_KINDS
from dealerbox.floor.telling.table_view import view_table
from dealerbox.floor.telling.floor_words import FloorWords, alert_order

__all__ = ["Floor", "Subscriber", "POLL_S"]

log = logging.getLogger(__name__)

POLL_S = 0.2
#: The pit boss's part of each tile (who deals, hands per hour over the last
#: :data:`PIT_SPAN_S`) is read again at most this often: it moves with hands, not lines.
PIT_EVERY_S = 10.0
PIT_SPAN_S = 2 * 3600.0
#: Events a stream may fall behind by before it is ended (the client reconnects
#: and starts again from a snapshot).
QUEUE = 1000
#: How often the tiles are worded again without a change in the store (a table going quiet).
RETILE_S = 5.0


class Subscriber:
    """One event stream's queue of events."""

    def __init__(self):
        self.queue: asyncio.Queue = asyncio.Queue(QUEUE)
        self.overrun = False

    def put(self, event: dict) -> None:
        if self.overrun:
            return
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            self.overrun = True  # the stream ends once it has read what it holds


class Floor:
    """The floor as the streams know it, kept up to date from the store.

    :param path: the store's file; the watcher opens its own connection.
    :param figures: the pit boss's figures (``ledger`` and ``engine``, as
        :class:`~.figures_api.FiguresApi` has them), shared with the API.
    :param words: the tiles' and alerts' words (default: English, the machine's zone).
    """

    def __init__(self, path, figures, words: FloorWords | None = None):
        self.path = path
        self.figures = figures
        self.words = words if words is not None else FloorWords()
        self.tables: dict[str, dict] = {}
        self.alerts: dict[int, dict] = {}
        #: Each property's bridge (a group floor): connected or blind, and since when.
        self.bridges: list[dict] = []
        self.subscribers: set[Subscriber] = set()
        self._store: Store | None = None
        self._version: int | None = None
        self._task: asyncio.Task | None = None
        self.refreshes = 0
        self._pit: dict[str, dict] = {}
        self._pit_at = float("-inf")
        # What the tiles were worded from: (views, places, last line times), for :meth:`_retile`.
        self._raw: tuple[dict, dict, dict] = ({}, {}, {})

    async def start(self) -> None:
        self._store = await to_thread.run_sync(Store, self.path)
        await self._refresh(announce=False)
        self._task = asyncio.create_task(self._watch(), name="floor-watch")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        if self._store is not None:
            await to_thread.run_sync(self._store.close)

    def snapshot(self) -> dict:
        """The tables by id, the open alerts as the floor lists them (floor calls first, then
        the longest waiting: :func:`~dealerbox.floor.telling.floor_words.alert_order`), the properties' bridges."""
        return {"tables": [self.tables[t] for t in sorted(self.tables)],
                "alerts": alert_order(list(self.alerts.values())), "bridges": list(self.bridges),
                "now": time.time()}

    def subscribe(self) -> tuple[Subscriber, dict]:
        """A new stream and the snapshot it starts from (no event is lost or
        repeated between them: both happen in one step of the event loop)."""
        sub = Subscriber()
        self.subscribers.add(sub)
        return sub, self.snapshot()

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)

    def close_streams(self) -> None:
        """End every stream (the server stops): each reads ``None`` and returns."""
        for sub in list(self.subscribers):
            sub.overrun = True
            try:
                sub.queue.put_nowait(None)
            except asyncio.QueueFull:
                pass

    async def _watch(self) -> None:
        retile_at = time.monotonic() + RETILE_S
        while True:
            await asyncio.sleep(POLL_S)
            try:
                if self._store.data_version() != self._version:
                    await self._refresh()
                elif time.monotonic() >= retile_at:
                    self._retile(time.time())
                if time.monotonic() >= retile_at:
                    retile_at = time.monotonic() + RETILE_S
            except Exception:  # a locked or damaged store: say so, keep watching
                log.exception("floor web: could not read the store")
                await asyncio.sleep(1.0)

    async def _refresh(self, announce: bool = True) -> None:
        version, tables, alerts, bridges = await to_thread.run_sync(self._read)
        self._version = version
        self.refreshes += 1
        events = []
        changed = [view for name, view in sorted(tables.items()) if self.tables.get(name) != view]
        if changed:
            events.append({"type": "tables", "tables": changed, "now": time.time()})
        if bridges != self.bridges:
            events.append({"type": "bridges", "bridges": bridges})
        for alert_id in sorted(set(alerts) - set(self.alerts)):
            events.append({"type": "alert", "alert": alerts[alert_id]})
        gone = sorted(set(self.alerts) - set(alerts))
        if gone:
            cleared = await to_thread.run_sync(lambda: [self._store.alert(i) for i in gone])
            for alert_id, row in zip(gone, cleared):
                events.append({"type": "cleared", "alert": self.words.alert(row) if row else self.alerts[alert_id]})
        self.tables, self.alerts, self.bridges = tables, alerts, bridges
        if announce:
            self._announce(events)

    def _announce(self, events: list[dict]) -> None:
        for event in events:
            for sub in list(self.subscribers):
                sub.put(event)

    def _retile(self, now: float) -> None:
        """Word the tiles again for *now*; send those that changed (a table gone quiet)."""
        tables = self._tiles(*self._raw, now)
        changed = [view for name, view in sorted(tables.items()) if self.tables.get(name) != view]
        self.tables = tables
        if changed:
            self._announce([{"type": "tables", "tables": changed, "now": now}])

    def _tiles(self, views: dict, places: dict, last_lines: dict, now: float) -> dict[str, dict]:
        return {name: self.words.tile(view, places.get(name), last_lines.get(name), now)
                for name, view in views.items()}

    def _read(self):
        store = self._store
        version = store.data_version()  # before the reads: a commit after it is seen next time
        views = {row["table_id"]: view_table(row) for row in store.tables()}
        places, last_lines = store.table_places(), store.last_line_times()
        # The floor map's alerts are what a pit boss acts on: surveillance's own are on its page.
        alerts = {a["id"]: self.words.alert(a) for a in store.alerts() if a["kind"] not in SURVEILLANCE_KINDS}
        bridges = store.bridges()
        now = time.time()
        if now - self._pit_at >= PIT_EVERY_S:
            self._pit_at = now
            self._pit = self._read_pit(now)
        for name, view in views.items():
            view.update(self._pit.get(name, {"dealer": None, "hands_per_hour": None}))
        self._raw = (views, places, last_lines)
        return version, self._tiles(views, places, last_lines, now), alerts, bridges

    def _read_pit(self, now: float) -> dict[str, dict]:
        """Per table: who deals (as the figures follow the ``dealer`` events) and its hands
        per hour over the last :data:`PIT_SPAN_S`. A figures problem leaves the last answer."""
        def read(conn):
            rows = F.room_figures(conn, now - PIT_SPAN_S, now)["tables"]
            return rows, dict(conn.execute(select(F.fig_progress.c.table_id, F.fig_progress.c.dealer)).all())
        try:
            rows, dealers = self.figures.answer(read)
        except Exception:
            log.exception("floor web: could not read the figures for the tiles")
            return self._pit
        rate = {r["table"]: r["hands_per_hour"] for r in rows}
        return {t: {"dealer": dealers.get(t), "hands_per_hour": rate.get(t)} for t in set(rate) | set(dealers)}
