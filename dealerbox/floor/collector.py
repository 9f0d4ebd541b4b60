"""The floor's side: commit every table's journal lines, then acknowledge.

The collector subscribes to every table's topics. Its writer thread takes
the messages in arrival order, handles as many as are waiting in one SQLite
transaction (group commit), commits, and only then acknowledges each table
(``{"acked": seq}`` on ``dealerbox/v1/ack/<table>``). A collector killed
between its commit and its acknowledgement therefore has the lines, and
drops them as duplicates when the table sends them again.

Per table it checks:

- ``seq`` continuity: a gap asks the table to send again from the first
  missing ``seq`` (``{"resend_from": seq}``) and nothing after the gap is
  stored until it is filled;
- the hash chain: each line's ``prev`` must be the SHA-256 of the line
  before; a break is stored and raises a ``chain`` alert;
- duplicates: a line already stored is dropped; one that differs from what
  is stored raises a ``tamper`` alert.

A Last Will (``status`` with ``online: false``) whose ``(boot, conn)`` is
older than the table's current life is ignored: it is late, and the table is
alive.

The checks and the filing are :class:`~dealerbox.floor.filing.Filing`'s; the
collector owns the MQTT session, the writer thread, the acknowledgements and the
floor view's events.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import signal
import threading
import time

from . import protocol as P
from .client import Identity, make_client
from .filing import Batch, Filing
from .store import Store

__all__ = ["Collector", "COLLECTOR_ID"]

log = logging.getLogger(__name__)

COLLECTOR_ID = "floor-collector"
FAULT_ENV = "DEALERBOX_FLOOR_FAULT"
_BATCH = 2000


class Collector:
    """Collects every table's journal into a :class:`Store`.

    :param identity: the broker and the collector's certificate (CN
        ``floor-collector``).
    :param store: the SQLite store.

    Listeners added with :meth:`listen` get each change as a dict
    (``{"type": "tables"|"alert"|"cleared", ...}``) from the writer thread;
    the web view turns them into server-sent events.
    """

    def __init__(self, identity: Identity, store: Store, *, keepalive_s: int = 10):
        self.identity = identity
        self.store = store
        self.keepalive_s = keepalive_s
        self._queue: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._client = None
        self._listeners: list = []
        self._listen_lock = threading.Lock()
        self.boot = store.counter("collector_boot")
        self.commits = 0
        #: Set once subscribed to every table (cleared on a lost connection).
        self.connected = threading.Event()
        # What the view shows of each table, kept so that lines arriving
        # need no query (the writer thread's own; listeners get copies).
        self._views: dict[str, dict] = {}
        #: Lines received again that were already stored, per table.
        self.filing = Filing(self.store)
        #: Lines sent again that were already stored, per table.
        self.duplicates = self.filing.duplicates
        fault = os.environ.get(FAULT_ENV, "")
        self._kill_after_commit = (int(fault.split(":", 1)[1])
                                   if fault.startswith("kill-after-commit:") else None)

    # -- listeners (the view)

    def listen(self, callback) -> None:
        with self._listen_lock:
            self._listeners.append(callback)

    def unlisten(self, callback) -> None:
        with self._listen_lock:
            if callback in self._listeners:
                self._listeners.remove(callback)

    def _emit(self, event: dict) -> None:
        with self._listen_lock:
            listeners = list(self._listeners)
        for cb in listeners:
            try:
                cb(event)
            except Exception:
                log.exception("floor: a view listener failed")

    def snapshot(self) -> dict:
        """Everything the view shows, now."""
        return {"v": P.SCHEMA_VERSION, "tables": [_view_table(t) for t in self.store.tables()],
                "alerts": self.store.alerts(), "now": time.time()}

    def clear_alert(self, alert_id: int, who: str, note: str = "") -> dict | None:
        alert = self.store.clear_alert(alert_id, who, note)
        if alert is not None:
            self._emit({"type": "cleared", "alert": alert})
            self._publish_alerts()
        return alert

    # -- running

    def start(self) -> "Collector":
        client = make_client(self.identity, COLLECTOR_ID)
        client.on_connect = self._on_connect
        client.on_disconnect = lambda *a: self.connected.clear()
        client.on_message = self._on_message
        client.on_subscribe = lambda *_: self.connected.set()
        client.reconnect_delay_set(min_delay=1, max_delay=5)
        client.max_inflight_messages_set(1000)
        client.will_set(P.COLLECTOR_TOPIC, P.encode({"online": False, "boot": self.boot}),
                        qos=1, retain=True)
        self._client = client
        client.connect_async(self.identity.host, self.identity.port, keepalive=self.keepalive_s,
                             clean_start=True)
        self._thread = threading.Thread(target=self._writer, name="floor-collector", daemon=True)
        self._thread.start()
        client.loop_start()
        return self

    def close(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._client is not None:
            if self.connected.is_set():
                info = self._client.publish(P.COLLECTOR_TOPIC,
                                            P.encode({"online": False, "boot": self.boot}),
                                            qos=1, retain=True)
                try:
                    info.wait_for_publish(timeout=2)
                except (RuntimeError, ValueError):
                    pass
                self._client.disconnect()
            self._client.loop_stop()

    def __enter__(self) -> "Collector":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def run_forever(self) -> None:
        """Start, and run until SIGTERM/SIGINT."""
        done = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: done.set())
        self.start()
        try:
            done.wait()
        finally:
            self.close()

    # -- paho callbacks

    def _on_connect(self, client, _userdata, _flags, reason_code, _properties):
        if reason_code.is_failure:
            log.error("floor: the broker refused the collector: %s", reason_code)
            return
        client.subscribe(P.TABLES_WILDCARD, qos=1)
        # Tables send their unacknowledged lines again when they see this.
        client.publish(P.COLLECTOR_TOPIC, P.encode({"online": True, "boot": self.boot}),
                       qos=1, retain=True)
        log.info("floor: collector connected (boot %d)", self.boot)

    def _on_message(self, _client, _userdata, msg):
        self._queue.put((msg.topic, msg.payload, time.time()))

    # -- the writer thread

    def _writer(self) -> None:
        # The web view, another process, counts its clears in the store's meta
        # "alerts_cleared": when it moved, the retained open alerts are republished.
        cleared = self.store.meta("alerts_cleared")
        while not self._stop.is_set():
            try:
                first = self._queue.get(timeout=1.0)
            except queue.Empty:
                first = ...
            if self.store.meta("alerts_cleared") != cleared:
                cleared = self.store.meta("alerts_cleared")
                self._publish_alerts()
            if first is ...:
                continue
            if first is None:
                return
            batch = [first]
            while len(batch) < _BATCH:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    self._stop.set()
                    break
                batch.append(item)
            try:
                self._handle(batch)
            except Exception:
                log.exception("floor: collector could not store a batch; the tables will send again")

    def _handle(self, batch) -> None:
        done = self.filing.store_batch(batch, time.time())
        self.commits += 1
        if self._kill_after_commit is not None and self.commits >= self._kill_after_commit and done.acks:
            os.kill(os.getpid(), signal.SIGKILL)  # fault injection: committed, never acknowledged
        # QoS 0: an ack is cumulative and idempotent, so a lost one costs only
        # the table's ack timeout, while QoS 1 would queue every ack behind
        # paho's in-flight limit under load.
        for table, seq in done.acks.items():
            self._client.publish(P.ack_topic(table), P.encode({"acked": seq}), qos=0)
        for table, seq in done.resends.items():
            self._client.publish(P.ack_topic(table), P.encode({"resend_from": seq}), qos=0)
        events = done.events
        if done.changed:
            events.insert(0, {"type": "tables", "tables": self._views_of(done), "now": time.time()})
        if any(e["type"] == "alert" for e in events):
            self._publish_alerts()
        for event in events:
            self._emit(event)

    def _views_of(self, done: Batch) -> list[dict]:
        """The view rows of the tables *done* changed; a table that only sent lines keeps its row."""
        views = []
        for t in sorted(done.changed):
            view = self._views.get(t)
            if view is None or t in done.refreshed:
                with self.store.lock:
                    row = self.store.table(t)
                if row is None:
                    continue
                view = self._views[t] = _view_table(row)
            else:
                view["last_seq"] = done.last_seqs.get(t, view["last_seq"])
            views.append(dict(view))
        return views

    def _publish_alerts(self) -> None:
        alerts = self.store.alerts()
        if self._client is not None:
            self._client.publish(P.ALERTS_TOPIC, P.encode({"open": alerts}), qos=1, retain=True)


def _view_table(row: dict) -> dict:
    """One table as the view shows it."""
    state, health = (json.loads(v) if isinstance(v, str) else (v or {})
                     for v in (row.get("state"), row.get("health")))
    open_ = state.get("open") if isinstance(state, dict) else None
    online = bool(row.get("online"))
    if not online:
        colour = "grey"
    elif open_ and open_.get("verdict") == "floor":
        colour = "red"
    elif open_:
        colour = "amber"
    else:
        colour = "green"
    return {"table": row["table_id"], "online": online, "colour": colour,
            "last_seq": row["last_seq"], "open": open_, "phase": state.get("phase"),
            "backlog": health.get("backlog"), "clock_ok": health.get("clock_ok"),
            "readers": health.get("readers"), "boot": row.get("boot"), "seen": row.get("seen")}
