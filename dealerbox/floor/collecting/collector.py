"""The floor's side: commit every table's journal lines, then acknowledge.

The collector subscribes to every table's topics. Its writer thread takes
the messages in arrival order, handles as many as are waiting in one SQLite
transaction (group commit), commits, and only then acknowledges each table
(``{"acked": seq}`` on ``dealerbox/v1/ack/<table>``). A collector killed
between its commit and its acknowledgement therefore has the lines, and
drops them as duplicates when the table sends them again.

Per table it checks:

- ``seq`` continuity: lines after a gap wait in the store, not yet the record,
  for the lines before them (most often in another collector's batch); a gap
  still open after a moment asks the table to send again from the first
  missing ``seq`` (``{"resend_from": seq}``);
- the hash chain: each line's ``prev`` must be the SHA-256 of the line
  before; a break is stored and raises a ``chain`` alert;
- duplicates: a line already stored is dropped; one that differs from what
  is stored raises a ``tamper`` alert.

A Last Will (``status`` with ``online: false``) whose ``(boot, conn)`` is
older than the table's current life is ignored: it is late, and the table is
alive.

A collector that connects first takes the tables' retained messages (what each
table is now: ``status``, ``state``, ``health``) on a subscription of its own,
files them, and only then joins the shared subscription, without retained
messages, and publishes its birth. While it files them the other collectors
carry every table: a collector started beside two busy ones got a thousand
retained messages ahead of its share of the tables' lines, and those lines
waited seconds behind them (the group bench). The end of the retained messages
is a message the collector publishes to a topic of its own once subscribed
(:func:`~dealerbox.link.protocol.collector_sync_topic`): the broker sends it
after what that subscription brought.

No table can slow down or silence another: messages wait in one queue per
table and each batch takes at most :attr:`CollectorLimits.share` of each
table's (round robin), so a table flooding the floor delays no other table's
lines past the batch being filed; a table's queue that is full drops that
table's messages alone (a ``protocol`` alert; its journal is sent again).
A message the floor cannot use is refused for its table alone (see
:mod:`~dealerbox.floor.collecting.filing`). ``floor/alerts`` is bounded by
:attr:`CollectorLimits.max_message_bytes`: the newest open alerts and counts
per table and kind. A collector that cannot keep a session with the broker
for :attr:`CollectorLimits.broker_lost_s` gives up (:attr:`Collector.failed`),
so that ``dealerbox floor collect`` exits non-zero and systemd restarts it.

The checks and the filing are :class:`~dealerbox.floor.collecting.filing.Filing`'s; the
collector owns the MQTT session, the writer thread, the acknowledgements and the
floor view's events. Each message is queued as a
:class:`~dealerbox.floor.collecting.message.Message`, its topic read once as it comes.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections import deque

from dealerbox.floor.telling.figures import Ledger
from dealerbox.floor.protect.floor_pass import Protection
from dealerbox.floor.collecting.filing import Batch, Filing
from dealerbox.floor.collecting.limits import CollectorLimits
from dealerbox.floor.collecting.message import BRIDGES_WILDCARD, Message
from dealerbox.floor.collecting.registry_pass import RegistryPass
from dealerbox.floor.collecting.registry_publish import RegistryPublisher
from dealerbox.floor.store import Store, store_engine
from dealerbox.floor.store.registry import DeckLimits
from dealerbox.floor.telling.table_view import view_table
from dealerbox.link import protocol as P
from dealerbox.link.client import Identity, SubscribeOptions, make_client

__all__ = ["Collector", "COLLECTOR_ID"]

log = logging.getLogger(__name__)

COLLECTOR_ID = "floor-collector"
FAULT_ENV = "DEALERBOX_FLOOR_FAULT"
#: Messages filed in one transaction at most. On SQLite one writer files at a time and a
#: big batch shares one commit (an fsync). On PostgreSQL a batch holds its tables' rows
#: until it commits and the other collectors leave those tables for later: a collector
#: started into a backlog took 2,000 messages of nearly every table a batch, for two
#: seconds each, and the others found all their tables held (the group bench).
_BATCH = {"sqlite": 2000, "postgresql": 250}
#: The writer wakes at least this often (alerts to publish, the broker session to watch).
_TICK_S = 0.25
#: ``floor/alerts`` is published at most this often, and checked against the store
#: this often even when nothing was raised here (an alert cleared elsewhere).
_ALERTS_EVERY_S = 1.0
_ALERTS_CHECK_S = 5.0
#: The pit boss's figures (figures.Ledger) are brought up to date this often, by a
#: thread of their own: never in the writer's way (it cost the writer 44% of its time
#: under 300 tables, measured with py-spy), the web view catching up before it answers.
_FIGURES_EVERY_S = 5.0
#: A batch whose every message was left for later (another collector filing its table)
#: waits this long before the next.
_BUSY_WAIT_S = 0.05
#: On SQLite the writer pauses this long after each batch (see _writer).
_SQLITE_PAUSE_S = 0.01
#: How often the writer looks for gaps that lines wait behind and no message has closed.
_GAPS_CHECK_S = 0.5
#: A collector joins the share this long after it asked for the tables' retained
#: messages even if the sign that they have all come never came back.
_SNAPSHOT_WAIT_S = 10.0
#: The room's registry: the tables' registry events filed, and a new version published to
#: every table, this often (a retired deck must reach a connected table within 10 s).
_REGISTRY_EVERY_S = 1.0
#: A registry payload larger than this is not sent: the shipped broker takes packets of 1 MiB at most.
_REGISTRY_MAX_BYTES = 1024 * 1024 - 4096


class _Inbox:
    """Messages waiting to be filed: one queue per table, taken in turns."""

    def __init__(self, limits: CollectorLimits):
        self.limits = limits
        self._cond = threading.Condition()
        self._queues: dict[str, deque] = {}
        self._bytes: dict[str, int] = {}
        self._turns: deque[str] = deque()
        self._closed = False
        self._dropped: dict[str, int] = {}

    def put(self, message: Message) -> bool:
        """Queue *message* behind its table's; False if that queue is full."""
        table = message.table
        size = len(message.payload)
        with self._cond:
            q = self._queues.get(table)
            if q is None:
                q = self._queues[table] = deque()
                self._bytes[table] = 0
            elif (len(q) >= self.limits.table_queue
                  or self._bytes[table] + size > self.limits.table_queue_bytes):
                self._dropped[table] = self._dropped.get(table, 0) + 1
                return False
            if not q:
                self._turns.append(table)
            q.append(message)
            self._bytes[table] += size
            self._cond.notify()
            return True

    def put_back(self, messages: list[Message]) -> None:
        """Return *messages* (taken, not filed) to the front of their tables' queues, in order."""
        with self._cond:
            for message in reversed(messages):
                table = message.table
                q = self._queues.get(table)
                if q is None:
                    q = self._queues[table] = deque()
                    self._bytes[table] = 0
                    self._turns.append(table)
                q.appendleft(message)
                self._bytes[table] += len(message.payload)
            self._cond.notify()

    def take(self, timeout: float, most: int) -> tuple[list[Message], dict[str, int]] | None:
        """One batch of at most *most* messages: up to ``share`` of each waiting table, in
        turn; and the messages dropped per table since the last batch. None once closed."""
        with self._cond:
            if not self._turns and not self._closed:
                self._cond.wait(timeout)
            if self._closed:
                return None
            batch: list[Message] = []
            for _ in range(len(self._turns)):
                if len(batch) >= most:
                    break
                table = self._turns.popleft()
                q = self._queues[table]
                taken = budget = 0
                while q and taken < self.limits.share and len(batch) < most:
                    size = len(q[0].payload)
                    if taken and budget + size > self.limits.share_bytes:
                        break
                    batch.append(q.popleft())
                    taken += 1
                    budget += size
                self._bytes[table] -= budget
                if q:
                    self._turns.append(table)
                else:
                    del self._queues[table]
                    del self._bytes[table]
            dropped, self._dropped = self._dropped, {}
            return batch, dropped

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()


class Collector:
    """Collects every table's journal into a :class:`Store`.

    :param identity: the broker and the collector's certificate (CN
        ``floor-collector``).
    :param store: the store (SQLite or PostgreSQL).

    Listeners added with :meth:`listen` get each change as a dict
    (``{"type": "tables"|"alert"|"cleared", ...}``) from the writer thread;
    the web view turns them into server-sent events.
    """

    def __init__(self, identity: Identity, store: Store, *, keepalive_s: int = 10,
                 limits: CollectorLimits | None = None, bridge_blind_s: float = 300.0,
                 protection: Protection | None = None, registry_limits: DeckLimits | None = None,
                 publish_registry: bool = True):
        self.identity = identity
        # Game protection reads the filed lines where the figures do (figures.Ledger).
        self.protection = protection
        self.store = store
        self.keepalive_s = keepalive_s
        self.limits = limits or CollectorLimits()
        self._inbox = _Inbox(self.limits)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._client = None
        self._listeners: list = []
        self._listen_lock = threading.Lock()
        self.boot = store.counter("collector_boot")
        self.commits = 0
        #: Set once subscribed to every table (cleared on a lost connection).
        self.connected = threading.Event()
        #: Sessions with the broker so far (subscribed), and disconnections.
        self.sessions = 0
        self.disconnects = 0
        #: Set when the collector gave up on the broker; :attr:`failure` says why.
        self.failed = threading.Event()
        self.failure: str | None = None
        #: Per table, the most batches one of its messages waited for before the
        #: batch that filed it (1: only the batch being filed when it came), and
        #: the longest it took from arrival to commit, in seconds.
        self.waited_batches: dict[str, int] = {}
        self.waited_s: dict[str, float] = {}
        #: Messages dropped per table because its queue was full.
        self.dropped: dict[str, int] = {}
        #: ``floor/alerts`` payloads published, and the largest one's size in bytes.
        self.alerts_published = 0
        self.alerts_largest = 0
        self._session_since: float | None = None
        self._last_kept = time.monotonic()
        self._last_disconnect = "never connected"
        self._alerts_dirty = True
        self._alerts_sent_at = float("-inf")
        self._alerts_checked_at = float("-inf")
        self._alerts_last: bytes | None = None
        self._gaps_checked_at = float("-inf")
        # Joining the share (see the module's docstring). The sync topic is this
        # collector's own: its boot number is the floor's, counted in the store.
        self._sync_topic = P.collector_sync_topic(self.boot)
        self._subscribing = threading.Lock()  # a subscription's mid is known before its SUBACK
        self._snapshot_mid: int | None = None
        self._snapshot_since: float | None = None  # monotonic, while taking the retained messages
        self._share_mid: int | None = None
        self._figures = None  # (Ledger, engine), made on first use
        self._figures_thread: threading.Thread | None = None
        # What the view shows of each table, kept so that lines arriving
        # need no query (the writer thread's own; listeners get copies).
        self._views: dict[str, dict] = {}
        #: A property's bridge down this long raises an alert (``[bridges] blind_alert_s``).
        self.bridge_blind_s = bridge_blind_s
        self._bridge_notes: deque[Message] = deque()  # from paho's thread to the writer's
        self._bridges_checked_at = float("-inf")
        self.filing = Filing(self.store)
        # The room's registry (issue 40): filed beside the figures, published to every table.
        self.registry = RegistryPass(self.store, registry_limits)
        self.registry_publisher = RegistryPublisher(self.store)
        #: False on a group's floor (``[registry] publish``): its floor/ topics reach the properties.
        self.publish_registry = publish_registry
        self._registry_thread: threading.Thread | None = None
        self._registry_too_big = None   # the version said to be too big to send, said once
        #: A registry payload larger than this is not sent (the broker would refuse it).
        self.registry_max_bytes = _REGISTRY_MAX_BYTES
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
        return {"v": P.SCHEMA_VERSION, "tables": [view_table(t) for t in self.store.tables()],
                "alerts": self.store.alerts(), "now": time.time()}

    def clear_alert(self, alert_id: int, who: str, note: str = "") -> dict | None:
        alert = self.store.clear_alert(alert_id, who, note)
        if alert is not None:
            self._emit({"type": "cleared", "alert": alert})
            self._alerts_dirty = True  # the writer publishes it within a tick
        return alert

    # -- running

    def start(self) -> "Collector":
        client = make_client(self.identity, COLLECTOR_ID)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.on_subscribe = self._on_subscribe
        client.reconnect_delay_set(min_delay=1, max_delay=5)
        client.max_inflight_messages_set(1000)
        client.will_set(P.COLLECTOR_TOPIC, P.encode({"online": False, "boot": self.boot}),
                        qos=1, retain=True)
        self._client = client
        self._last_kept = time.monotonic()
        client.connect_async(self.identity.host, self.identity.port, keepalive=self.keepalive_s,
                             clean_start=True)
        self._thread = threading.Thread(target=self._writer, name="floor-collector", daemon=True)
        self._thread.start()
        self._figures_thread = threading.Thread(target=self._figures_loop, name="floor-figures", daemon=True)
        self._figures_thread.start()
        self._registry_thread = threading.Thread(target=self._registry_loop, name="floor-registry", daemon=True)
        self._registry_thread.start()
        client.loop_start()
        return self

    def close(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        self._inbox.close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._figures_thread is not None:
            self._figures_thread.join(timeout=10)
        if self._registry_thread is not None:
            self._registry_thread.join(timeout=10)
        if self.protection is not None:   # after the figures' thread: nothing asks for a fit now
            self.protection.close()
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
        # First what every table is now (its retained messages), on a subscription of this
        # collector's own; the tables' other messages go to the other collectors meanwhile.
        with self._subscribing:
            self._share_mid = None
            _rc, self._snapshot_mid = client.subscribe(
                [(topic, 1) for topic in (*P.retained_wildcards(), self._sync_topic)])
            self._snapshot_since = time.monotonic()
        # The properties' bridges, up or down (retained): every collector keeps their
        # states, not shared, since noting one twice changes nothing.
        client.subscribe(BRIDGES_WILDCARD, qos=1)
        if self.publish_registry:
            # Every table's registry as the broker keeps it, whoever sent it: one older than the
            # store's (another collector's, late) is sent again (registry_publish.py).
            client.subscribe(P.REGISTRY_WILDCARD, qos=1)

    def _on_subscribe(self, client, _userdata, mid, reason_codes, _properties) -> None:
        with self._subscribing:
            refused = [str(code) for code in reason_codes if code.is_failure]
            if refused:
                log.error("floor: the broker refused a subscription of the collector: %s",
                          ", ".join(refused))
            if mid == self._snapshot_mid:
                # Comes back after the retained messages the subscription brought: the broker
                # queued them while it subscribed us, before it took this message from us.
                client.publish(self._sync_topic, P.encode({"boot": self.boot}), qos=1)
            elif mid == self._share_mid:
                self._joined(client)

    def _join_share(self, client) -> None:
        """Join the collectors' shared subscription (the writer, once it filed the tables'
        retained messages, or gave up waiting for them)."""
        with self._subscribing:
            self._snapshot_since = None
            # Shared: several collectors of a floor take turns with the tables' messages.
            # Which collector files a table's batch does not matter: the seq and chain checks
            # read the table's row inside the store's write transaction. No retained messages:
            # the subscription before brought them.
            options = SubscribeOptions(qos=1, retainHandling=SubscribeOptions.RETAIN_DO_NOT_SEND)
            _rc, self._share_mid = client.subscribe(
                P.shared_tables_wildcard(self.limits.share_group), options=options)

    def _joined(self, client) -> None:
        """In the share: the retained messages' own subscription ends and the tables hear
        of this collector (they send their unacknowledged lines again when they do)."""
        self._share_mid = None
        client.unsubscribe([*P.retained_wildcards(), self._sync_topic])
        client.publish(P.COLLECTOR_TOPIC, P.encode({"online": True, "boot": self.boot}),
                       qos=1, retain=True)
        log.info("floor: collector connected (boot %d)", self.boot)
        self.sessions += 1
        self._session_since = time.monotonic()
        self._alerts_dirty = True  # the broker may hold an older floor/alerts
        self.registry_publisher.reset()  # and may have lost the tables' registries
        self.connected.set()

    def _on_disconnect(self, _client, _userdata, _flags, reason_code, _properties) -> None:
        self.connected.clear()
        with self._subscribing:
            self._snapshot_mid = self._share_mid = self._snapshot_since = None
        self._session_since = None
        self.disconnects += 1
        self._last_disconnect = str(reason_code)
        if not self._stop.is_set():
            log.warning("floor: the collector lost the broker: %s", reason_code)

    def _on_message(self, _client, _userdata, msg):
        # paho's network thread: only queue it, so the broker never waits for the store.
        try:
            topic = msg.topic
        except UnicodeDecodeError:
            log.warning("floor: ignoring a message on a topic that is not UTF-8")
            return
        if topic == self._sync_topic:
            # The retained messages have all come: the writer joins the share once it filed them.
            self._inbox.put(Message.sync(topic, time.time(), self.commits))
            return
        if self.registry_publisher.heard(topic, msg.payload):
            return
        bridge = Message.on_bridge_topic(topic, msg.payload, time.time())
        if bridge is not None:
            self._bridge_notes.append(bridge)  # the writer notes it in the store
            return
        message = Message.on_table_topic(topic, msg.payload, time.time(), self.commits, bool(msg.retain))
        if message is None:
            return
        if not self._inbox.put(message):
            self.dropped[message.table] = self.dropped.get(message.table, 0) + 1

    # -- the writer thread

    def _writer(self) -> None:
        # The web view, another process, counts its clears in the store's meta
        # "alerts_cleared": when it moved, the retained open alerts are republished.
        cleared = None
        cleared_checked = float("-inf")
        failing = False
        while not self._stop.is_set():
            taken = self._inbox.take(_TICK_S, _BATCH.get(self.store.backend, 2000))
            if taken is None:
                return
            batch, dropped = taken
            # The sync message is no table's: the sign to join the share once this batch is filed.
            taken_count = len(batch)
            batch = [message for message in batch if message.topic != self._sync_topic]
            synced = len(batch) != taken_count
            asked = False   # whether the store was asked anything: only an answer says it is back
            try:
                # As often as floor/alerts may be published, not every batch (a query each).
                if time.monotonic() - cleared_checked >= _ALERTS_EVERY_S:
                    cleared_checked = time.monotonic()
                    asked = True
                    now_cleared = self.store.meta("alerts_cleared")
                    if now_cleared != cleared:
                        cleared = now_cleared
                        self._alerts_dirty = True  # published by the tick below
                if batch or dropped:
                    asked = True
                    self._handle(batch, dropped)
                    if self.store.backend == "sqlite":
                        # SQLite has one write lock and no queue for it: collectors that begin
                        # their next transaction the moment they commit leave it to no one
                        # else, and a collector starting beside two busy ones gave up after
                        # waiting 30 s for its boot counter (make test). The pause lets a
                        # waiting writer in; the next batch is the larger for it.
                        self._stop.wait(_SQLITE_PAUSE_S)
                if failing and asked:
                    log.warning("floor: the store answers again")
                    failing = False
            except Exception:
                # The store failed (its server restarting, a full disk): nothing of the batch was
                # acknowledged, so the tables send it again; the writer goes on with the next one.
                if not failing:
                    log.exception("floor: collector could not store a batch; the tables will send again")
                else:
                    log.warning("floor: the store still fails; the tables will send again")
                failing = True
                self._stop.wait(_TICK_S)
            if synced and self._snapshot_since is not None:
                self._join_share(self._client)
            try:
                self._tick()
            except Exception:
                log.exception("floor: collector housekeeping failed")

    def _handle(self, batch: list[Message], dropped: dict[str, int] | None = None) -> None:
        done = self.filing.store_batch(batch, time.time(), dropped=dropped)
        self.commits += 1
        if done.deferred:
            # Tables another collector was filing (PostgreSQL): they wait for a later batch
            # here instead of this whole batch waiting for that collector.
            self._inbox.put_back(done.deferred)
            deferred = {id(message) for message in done.deferred}
            batch = [message for message in batch if id(message) not in deferred]
            if not batch:
                self._stop.wait(_BUSY_WAIT_S)
        if self._kill_after_commit is not None and self.commits >= self._kill_after_commit and done.acks:
            os.kill(os.getpid(), signal.SIGKILL)  # fault injection: committed, never acknowledged
        # QoS 0: an ack is cumulative and idempotent, so a lost one costs only
        # the table's ack timeout, while QoS 1 would queue every ack behind
        # paho's in-flight limit under load.
        for table, seq in done.acks.items():
            self._client.publish(P.ack_topic(table), P.encode({"acked": seq}), qos=0)
        self._publish_resends(done.resends)
        self._measure(batch)
        if done.alerts:
            self._alerts_dirty = True
        events = done.events
        if done.changed:
            try:
                events.insert(0, {"type": "tables", "tables": self._views_of(done), "now": time.time()})
            except Exception:  # a row the view cannot show must not cost the others their events
                log.exception("floor: cannot show the tables %s", sorted(done.changed))
        for event in events:
            self._emit(event)

    def _publish_resends(self, resends: dict[str, int]) -> None:
        for table, seq in resends.items():
            self._client.publish(P.ack_topic(table), P.encode({"resend_from": seq}), qos=0)

    def _measure(self, batch: list[Message]) -> None:
        """How long each table's messages waited (see :attr:`waited_batches`)."""
        committed = time.time()
        before = self.commits - 1  # batches done before this one
        for message in batch:
            table = message.table
            waited = before - message.arrived
            if waited > self.waited_batches.get(table, -1):
                self.waited_batches[table] = waited
            seconds = committed - message.received
            if seconds > self.waited_s.get(table, -1.0):
                self.waited_s[table] = seconds

    def _tick(self) -> None:
        """Between batches: publish ``floor/alerts`` when due, ask for the gaps no message
        closed (lines wait ahead of them), and watch the broker session."""
        self._bridges_tick()
        mono = time.monotonic()
        snapshot_since = self._snapshot_since
        if snapshot_since is not None and mono - snapshot_since >= _SNAPSHOT_WAIT_S:
            log.warning("floor: the broker did not say in %g s that every retained message of the "
                        "tables came; the collector joins the others without that", _SNAPSHOT_WAIT_S)
            self._join_share(self._client)
        if self.connected.is_set() and mono - self._gaps_checked_at >= _GAPS_CHECK_S:
            self._gaps_checked_at = mono
            try:
                self._publish_resends(self.filing.open_gaps(time.time()))
            except Exception:  # the store failing: the writer says so with the next batch
                log.debug("floor: cannot look for open gaps", exc_info=True)
        if self.connected.is_set():
            if not self._alerts_dirty and mono - self._alerts_checked_at >= _ALERTS_CHECK_S:
                self._alerts_checked_at = mono
                self._alerts_dirty = self._alerts_payload() != self._alerts_last
            if self._alerts_dirty and mono - self._alerts_sent_at >= _ALERTS_EVERY_S:
                self._publish_alerts()
        since = self._session_since
        kept_s = min(self.limits.session_kept_s, self.limits.broker_lost_s / 3)
        if since is not None and mono - since >= kept_s:
            self._last_kept = mono
        elif mono - self._last_kept > self.limits.broker_lost_s and not self.failed.is_set():
            self.failure = (f"no session with the broker {self.identity.host}:{self.identity.port} "
                            f"that lasted {kept_s:g} s in the last {self.limits.broker_lost_s:g} s "
                            f"({self.sessions} sessions, {self.disconnects} lost; last: "
                            f"{self._last_disconnect}); giving up so that the service restarts")
            log.error("floor: %s", self.failure)
            self.failed.set()

    def _bridges_tick(self) -> None:
        """Note the bridges' states that came, and alert on a property blind too long."""
        changed = False
        while self._bridge_notes:
            note = self._bridge_notes.popleft()
            up = note.bridge_up
            if up is None:
                log.warning("floor: ignoring the bridge notification %r on %s", note.payload[:40], note.topic)
                continue
            self.store.note_bridge(note.table, up, note.received)
            changed = True
        mono = time.monotonic()
        if mono - self._bridges_checked_at >= _GAPS_CHECK_S:
            self._bridges_checked_at = mono
            for alert in self.store.alert_blind_bridges(self.bridge_blind_s):
                self._alerts_dirty = True
                self._emit({"type": "alert", "alert": alert})
        if changed:
            self._emit({"type": "bridges", "bridges": self.store.bridges(), "now": time.time()})

    def _figures_loop(self) -> None:
        while not self._stop.wait(_FIGURES_EVERY_S):
            self._catch_up_figures()
        self._catch_up_figures()  # what the last batches stored

    def _catch_up_figures(self) -> None:
        """File the lines stored since the last call into the figures' tables. After the
        acks, never before them: a figures problem is logged and costs no table a line."""
        try:
            if self._figures is None:
                self._figures = (Ledger(protection=self.protection), store_engine(self.store.target))
            ledger, engine = self._figures
            ledger.catch_up(engine, wait=False)  # another collector filing them files these too
        except Exception:
            log.exception("floor: the figures could not be brought up to date (the web view will)")

    def _registry_loop(self) -> None:
        # A connection of its own, as the figures' and the protection's: reading and filing the
        # registry never waits for the writer's lock, nor makes a batch wait for it.
        own = None
        if self.store.path is None or str(self.store.path) != ":memory:":
            try:
                own = Store(self.store.target, migrate=False)
            except Exception:
                log.exception("floor: the registry's own connection to the store could not be opened; "
                              "it shares the writer's")
        if own is not None:
            self.registry.store = self.registry_publisher.store = own
        try:
            while not self._stop.wait(_REGISTRY_EVERY_S):
                self._registry_tick()
        finally:
            if own is not None:
                own.close()

    def _registry_tick(self) -> None:
        """File the tables' registry events and hands, then publish a new registry version
        to every table (and the newest to a table heard of for the first time). After the
        acks, never before them: a registry problem is logged and costs no table a line."""
        try:
            for alert in self.registry.catch_up():
                self._alerts_dirty = True
                self._emit({"type": "alert", "alert": alert})
        except Exception:
            log.exception("floor: the tables' registry events could not be filed (the next pass tries again)")
        client = self._client
        if client is None or not self.connected.is_set() or not self.publish_registry:
            return
        try:
            for table, topic, payload in self.registry_publisher.due():
                if len(payload) > self.registry_max_bytes:
                    # The broker would refuse it: the tables keep the registry they have.
                    if self.registry_publisher.version != self._registry_too_big:
                        self._registry_too_big = self.registry_publisher.version
                        log.error("floor: the room's registry takes %d bytes, more than the %d the broker "
                                  "takes: not sent (retired decks' tags add up; see docs/floor/registry.md)",
                                  len(payload), self.registry_max_bytes)
                    return
                if client.publish(topic, payload, qos=1, retain=True).rc != 0:
                    return  # not connected after all: the next session sends them all
                self.registry_publisher.sent(table)
        except Exception:
            log.exception("floor: the room's registry could not be published (the next tick tries again)")

    def _views_of(self, done: Batch) -> list[dict]:
        """The view rows of the tables *done* changed; a table that only sent lines keeps its row."""
        views = []
        wanted = [t for t in done.changed if t not in self._views or t in done.refreshed]
        rows = self.store.table_rows(wanted) if wanted else {}
        for t in sorted(done.changed):
            view = self._views.get(t)
            if view is None or t in done.refreshed:
                row = rows.get(t)
                if row is None:
                    continue
                view = self._views[t] = view_table(row)
            else:
                view["last_seq"] = done.last_seqs.get(t, view["last_seq"])
            views.append(dict(view))
        return views

    def _alerts_payload(self) -> bytes:
        """``floor/alerts``: the newest open alerts that fit in ``max_message_bytes``,
        how many are open and how often each table raised each kind."""
        limit = self.limits.max_message_bytes
        summary = self.store.alert_summary(self.limits.alerts_shown)
        shown = summary["open"]
        while True:
            payload = P.encode({"open": shown, "total": summary["total"], "shown": len(shown),
                                "counts": summary["counts"]})
            if len(payload) <= limit or not shown:
                break
            shown = shown[len(shown) // 2 + len(shown) % 2:] if len(shown) > 1 else []
        if len(payload) > limit:
            # Too many tables to count each: totals per kind only.
            kinds: dict[str, int] = {}
            for per_kind in summary["counts"].values():
                for kind, n in per_kind.items():
                    kinds[kind] = kinds.get(kind, 0) + n
            payload = P.encode({"open": [], "total": summary["total"], "shown": 0,
                                "counts": None, "kinds": kinds})
        return payload

    def _publish_alerts(self) -> None:
        """Publish ``floor/alerts`` (retained) if connected; else on the next session."""
        client = self._client
        if client is None or not self.connected.is_set():
            return
        payload = self._alerts_payload()
        self._alerts_dirty = False
        self._alerts_sent_at = self._alerts_checked_at = time.monotonic()
        if len(payload) > self.limits.max_message_bytes:
            log.error("floor: floor/alerts would take %d bytes, more than %d: not published",
                      len(payload), self.limits.max_message_bytes)
            return
        info = client.publish(P.ALERTS_TOPIC, payload, qos=1, retain=True)
        if info.rc != 0:
            self._alerts_dirty = True  # not connected after all: on the next session
            return
        self._alerts_last = payload
        self.alerts_published += 1
        self.alerts_largest = max(self.alerts_largest, len(payload))

