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
from .client import Identity, PacketTypes, Properties, make_client
from .store import Store, line_hash

__all__ = ["Collector", "COLLECTOR_ID"]

log = logging.getLogger(__name__)

COLLECTOR_ID = "floor-collector"
FAULT_ENV = "DEALERBOX_FLOOR_FAULT"
_RESEND_QUIET_S = 2.0
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
        self._asked: dict[str, tuple[int, float]] = {}
        self.boot = store.counter("collector_boot")
        self.commits = 0
        #: Set once subscribed to every table (cleared on a lost connection).
        self.connected = threading.Event()
        # What the view shows of each table, kept so that lines arriving
        # need no query (the writer thread's own; listeners get copies).
        self._views: dict[str, dict] = {}
        #: Lines received again that were already stored, per table.
        self.duplicates: dict[str, int] = {}
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
        while not self._stop.is_set():
            first = self._queue.get()
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
        acks: dict[str, int] = {}
        resends: dict[str, int] = {}
        events: list[dict] = []
        changed: set[str] = set()
        refreshed: set[str] = set()
        last_seqs: dict[str, int] = {}
        now = time.time()
        with self.store.lock:
            self.store.begin()
            try:
                for topic, payload, received in batch:
                    parsed = P.parse_table_topic(topic)
                    if parsed is None:
                        continue
                    table, kind = parsed
                    if not P.valid_table_id(table):
                        continue
                    try:
                        d = P.decode(payload)
                    except P.PayloadError as exc:
                        log.warning("floor: %s: %s", topic, exc)
                        continue
                    if kind == "journal":
                        seq = self._journal(table, d, now, acks, resends, events)
                        if seq is not None:
                            last_seqs[table] = seq
                    elif kind == "status":
                        self._status(table, d, now, events)
                        refreshed.add(table)
                    elif kind in ("state", "health"):
                        self._retained(table, kind, d, now, events)
                        refreshed.add(table)
                    changed.add(table)
                self.store.commit()
            except BaseException:
                self.store.rollback()
                raise
        self.commits += 1
        if self._kill_after_commit is not None and self.commits >= self._kill_after_commit and acks:
            os.kill(os.getpid(), signal.SIGKILL)  # fault injection: committed, never acknowledged
        # QoS 0: an ack is cumulative and idempotent, so a lost one costs only
        # the table's ack timeout, while QoS 1 would queue every ack behind
        # paho's in-flight limit under load.
        for table, seq in acks.items():
            self._client.publish(P.ack_topic(table), P.encode({"acked": seq}), qos=0)
        for table, seq in resends.items():
            self._client.publish(P.ack_topic(table), P.encode({"resend_from": seq}), qos=0)
        if changed:
            views = []
            for t in sorted(changed):
                view = self._views.get(t)
                if view is None or t in refreshed:
                    with self.store.lock:
                        row = self.store.table(t)
                    if row is None:
                        continue
                    view = self._views[t] = _view_table(row)
                else:  # only lines came: the rest of the view is as it was
                    view["last_seq"] = last_seqs.get(t, view["last_seq"])
                views.append(dict(view))
            events.insert(0, {"type": "tables", "tables": views, "now": time.time()})
        if any(e["type"] == "alert" for e in events):
            self._publish_alerts()
        for event in events:
            self._emit(event)

    def _publish_alerts(self) -> None:
        alerts = self.store.alerts()
        if self._client is not None:
            self._client.publish(P.ALERTS_TOPIC, P.encode({"open": alerts}), qos=1, retain=True)

    def _alert(self, events, table, kind, text, seq=None) -> None:
        alert = self.store.raise_alert(table, kind, text, seq)
        log.warning("floor: alert %s %s: %s", table, kind, text)
        events.append({"type": "alert", "alert": alert})

    def _journal(self, table, d, now, acks, resends, events) -> int | None:
        """Store a batch of lines; returns the table's last stored seq."""
        lines = d.get("lines")
        if not isinstance(lines, list):
            return None
        row = self.store.ensure_table(table)
        last_seq, last_hash = row["last_seq"], row["last_hash"]
        start_seq = last_seq
        for line in lines:
            if not isinstance(line, str):
                break
            try:
                rec = json.loads(line)
                seq, prev = rec["seq"], rec["prev"]
            except (ValueError, KeyError, TypeError):
                self._alert(events, table, "chain", f"a line that is not a journal line after seq {last_seq}")
                break
            digest = line_hash(line)
            if seq <= last_seq:
                stored = self.store.stored_line(table, seq)
                self.duplicates[table] = self.duplicates.get(table, 0) + 1
                if stored is not None and stored != line:
                    self._alert(events, table, "tamper",
                                f"seq {seq} was sent again with other content", seq)
                acks[table] = max(acks.get(table, 0), last_seq)
                continue
            if seq != last_seq + 1:
                oldest = d.get("oldest")
                if last_seq == 0 and seq == oldest:
                    self._alert(events, table, "chain",
                                f"the table's journal starts at seq {seq}: earlier lines were "
                                "deleted before the floor received them", seq)
                    self.store.update_table(table, first_seq=seq)
                else:
                    asked = self._asked.get(table)
                    if asked is None or asked[0] != last_seq + 1 or now - asked[1] > _RESEND_QUIET_S:
                        resends[table] = last_seq + 1
                        self._asked[table] = (last_seq + 1, now)
                    break
            if last_seq > 0:
                chain_ok = prev == last_hash
            else:  # the first line: seq 1 starts the chain; a later start was alerted above
                chain_ok = seq != 1 or prev == P.GENESIS
            if not chain_ok:
                self._alert(events, table, "chain",
                            f"seq {seq} does not chain to seq {last_seq}: the table's journal "
                            "was changed", seq)
            self.store.add_line(table, seq, line, digest, chain_ok, now)
            self._decision_alert(table, rec, events)
            last_seq, last_hash = seq, digest
        if last_seq != start_seq:
            self.store.update_table(table, last_seq=last_seq, last_hash=last_hash, seen=now)
            acks[table] = last_seq
            self._asked.pop(table, None)
        elif last_seq > 0 and table not in resends:
            acks[table] = max(acks.get(table, 0), last_seq)
        return last_seq

    def _decision_alert(self, table, rec, events) -> None:
        dec = rec.get("decision")
        if isinstance(dec, dict) and dec.get("verdict") == "floor" and dec.get("step") in (0, None):
            what = dec.get("irregularity") or "the dealer called the floor"
            self._alert(events, table, "floor", f"{what}: the floor is needed at the table",
                        rec.get("seq"))

    def _status(self, table, d, now, events) -> None:
        row = self.store.ensure_table(table)
        # Each connection's birth and Last Will carry the same (boot, conn).
        life = (_int(d.get("boot")), _int(d.get("conn")))
        current = (row["boot"], row["conn"])
        if life < current:
            log.info("floor: %s: ignoring a status of an earlier life %s (now %s)",
                     table, life, current)
            return
        online = bool(d.get("online"))
        was_online = bool(row["online"])
        self.store.update_table(table, boot=life[0], conn=life[1], online=int(online),
                                status=json.dumps(d), seen=now)
        if was_online and not online and d.get("why") == "lost":
            self._alert(events, table, "offline", "the table lost its connection to the floor")

    def _retained(self, table, kind, d, now, events) -> None:
        row = self.store.ensure_table(table)
        self.store.update_table(table, **{kind: json.dumps(d)}, seen=now)
        if kind == "health":
            old = json.loads(row["health"]) if row["health"] else {}
            if d.get("clock_ok") is False and old.get("clock_ok", True) is not False:
                self._alert(events, table, "clock", d.get("clock_problem") or "the clock is wrong")


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


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
