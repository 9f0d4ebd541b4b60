"""A casino group's floor under load: 1,000 tables through three collectors, one
collector SIGKILLed and started again mid-run, all three filing into PostgreSQL
(Debian's server, a throwaway cluster started by the bench); beside it, one
collector on SQLite under the same load, in the same run. Where PostgreSQL cannot
be started the three share one SQLite file instead (``floor_group_store`` says
which, ``floor_group_postgresql`` why).

The tables are light publishers: no daemon, no journal on disk, but the real
protocol (their own certificate each, a birth and a Last Will, chained journal
lines sent from the floor's last ack, a resend on ``resend_from``, on a collector's
Last Will, on a new collector's birth as the publisher does it (at once what the broker
took for no subscriber, else what is still unacknowledged ``BIRTH_GRACE_S`` later), or
when no ack came for ``ACK_TIMEOUT_S``). Each writes
``RATE`` lines a second (a real table writes about one), spread over worker
processes that hold many MQTT clients each, all driven by one thread per process
(a thread per table cost the tables' processes more CPU than the three collectors
and PostgreSQL together, and their waits for the interpreter lock showed up in the
latencies measured). The clients are ``bench.light_mqtt``'s, not paho's: on a real
floor each table has a Pi of its own, here a thousand share the floor's two cores,
and paho's handling of each packet made the tables' side a third of the machine
(its docstring has the figures). Keys:

- ``floor_group_tables`` / ``floor_group_collectors``: tables that reported,
  collectors that shared them (goal: 1000 and 3).
- ``floor_group_lost`` / ``floor_group_duplicated``: lines missing from the
  store, or stored more than once (goal: 0 and 0).
- ``floor_group_ms_p99``: from a line appended at the table to its committed
  row (bounded from above by the ack's arrival, sent only after the commit).
  Goal: at most 500 ms.
- ``floor_group_lines_per_s`` beside ``floor_single_sqlite_lines_per_s``: lines
  committed per second over the run, three collectors on PostgreSQL against
  one on SQLite.
- ``floor_group_killed``: the collector SIGKILLed mid-run and started again.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import mosquitto_missing, show_goals

TABLES = 1000
COLLECTORS = 3
RATE = 1.0            # lines per second per table: a real table's pace
DEAL_S = 40.0
DRAIN_S = 90.0
WORKERS = 4           # processes the tables are spread over
BATCH = 64            # lines per journal message at most
ACK_TIMEOUT_S = 10.0
CONNECT_S = 60.0      # every table connected by then (1000 TLS handshakes on 2 cores)


#: key: (comparison, goal, baseline shown beside it)
GOALS = {
    "floor_group_tables": ("==", TABLES, ""),
    "floor_group_collectors": ("==", COLLECTORS, ""),
    "floor_group_lost": ("==", 0, ""),
    "floor_group_duplicated": ("==", 0, ""),
    "floor_group_ms_p99": ("<=", 500, "one SQLite collector {floor_single_sqlite_ms_p99}"),
    "floor_group_lines_per_s": ("", None, "one SQLite collector {floor_single_sqlite_lines_per_s}"),
}


def _p99(values):
    values = sorted(values)
    return round(values[min(len(values) - 1, int(0.99 * len(values)))] * 1000.0, 1) if values else None


class LightTable:
    """One table: an in-memory chained journal and an MQTT v5 client that sends it
    as the publisher does (dealerbox/service/uplink.py), from the floor's last ack."""

    def __init__(self, name: str, port: int, pki: Path, kicked: set):
        from dealerbox.link import protocol as P
        from dealerbox.service.uplink import BIRTH_GRACE_S
        from dealerbox.link.chain import line_hash

        from bench.light_mqtt import NO_MATCHING_SUBSCRIBERS, LightMQTT, table_context

        self.P, self.name, self.BIRTH_GRACE_S, self.line_hash = P, name, BIRTH_GRACE_S, line_hash
        self.lines: list[str] = []
        self.appended: list[float] = []   # wall time each line was appended, by seq - 1
        self.committed: dict[int, float] = {}
        self.prev = P.GENESIS
        self.acked = 0
        self.cursor = 1                   # the next seq to send
        self.in_flight: set[int] = set()  # journal messages' mids the broker has not acknowledged
        self.unheard = False              # the broker took one for no subscriber since the last rewind
        self.recheck: tuple[float, int] | None = None  # after a collector's birth (see the publisher)
        self.last_ack_at = time.monotonic()
        self.connected = False
        self.kicked = kicked              # the worker's tables with something to send
        self.NO_MATCHING_SUBSCRIBERS = NO_MATCHING_SUBSCRIBERS
        self.client = LightMQTT(name, table_context(pki, name), keepalive=30,
                                will=(P.status_topic(name), self._status(False, "lost"), 1, True))
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_publish = self._on_publish
        self.client.on_disconnect = self._on_disconnect
        self.port = port

    def connect(self, loop) -> None:
        """Connect (the TLS handshake blocks), then leave the socket to *loop*."""
        try:
            self.client.connect("127.0.0.1", self.port)
        except OSError:
            return  # counted as not connected
        loop.attach(self.client)

    def _status(self, online: bool, why: str) -> bytes:
        return self.P.encode({"table": self.name, "online": online, "why": why, "boot": 1, "conn": 1,
                              "wall": time.time()})

    def _on_connect(self, reason: int) -> None:
        if reason >= 0x80:
            return
        P = self.P
        self.client.subscribe([(P.ack_topic(self.name), 1), (P.COLLECTOR_TOPIC, 1)])
        self.client.publish(P.status_topic(self.name), self._status(True, "birth"), qos=1, retain=True)
        self._rewind()
        self.in_flight.clear()
        self.connected = True
        self.kicked.add(self)

    def _on_disconnect(self) -> None:
        self.connected = False

    def _on_message(self, topic: str, payload: bytes, retain: bool) -> None:
        d = json.loads(payload)
        if topic == self.P.COLLECTOR_TOPIC:
            # A collector that went: send again at once; one that came: at once what the
            # broker took for nobody, else what is unacknowledged a moment later.
            if not retain:
                if d.get("online") is True and not self.unheard:
                    self.recheck = (time.monotonic() + self.BIRTH_GRACE_S, self.cursor - 1)
                else:
                    self._rewind()
                    self.kicked.add(self)
        elif isinstance(d.get("acked"), int):
            now = time.time()
            for seq in range(self.acked + 1, d["acked"] + 1):
                self.committed.setdefault(seq, now)
            if d["acked"] > self.acked:
                self.acked = d["acked"]
                self.last_ack_at = time.monotonic()
            self.cursor = max(self.cursor, self.acked + 1)
        elif isinstance(d.get("resend_from"), int):
            self.cursor = min(self.cursor, max(1, d["resend_from"]), self.acked + 1)
            self.kicked.add(self)

    def _on_publish(self, mid: int, reason: int) -> None:
        if mid in self.in_flight:
            self.in_flight.discard(mid)
            if reason == self.NO_MATCHING_SUBSCRIBERS:
                self.unheard = True

    def _rewind(self) -> None:
        self.cursor = self.acked + 1
        self.unheard = False
        self.recheck = None

    def append(self) -> None:
        seq = len(self.lines) + 1
        line = json.dumps({"seq": seq, "prev": self.prev, "wall": time.strftime("%Y-%m-%dT%H:%M:%SZ"),
                           "event": {"t": float(seq), "ev": "tick"}}, separators=(",", ":"))
        self.lines.append(line)
        self.appended.append(time.time())
        self.prev = self.line_hash(line)
        self.kicked.add(self)

    def pump(self) -> bool:
        """Send what is due: from the cursor, or again from the ack after a silence.
        True if more is due than one message took."""
        if not self.connected:
            return False
        if self.recheck is not None and time.monotonic() >= self.recheck[0]:
            if self.acked < self.recheck[1]:
                self._rewind()
            self.recheck = None
        if self.acked < len(self.lines) and time.monotonic() - self.last_ack_at > ACK_TIMEOUT_S:
            self._rewind()
            self.last_ack_at = time.monotonic()
        if self.cursor > len(self.lines):
            return False
        first = self.cursor
        part = self.lines[first - 1:first - 1 + BATCH]
        self.cursor = first + len(part)
        mid = self.client.publish(self.P.journal_topic(self.name),
                                  self.P.encode({"table": self.name, "boot": 1, "oldest": 1, "lines": part}), qos=1)
        self.in_flight.add(mid)
        return self.cursor <= len(self.lines)


def _deal(names, port, pki, start_at, out_path) -> None:
    """A worker process: its tables dealing from ``start_at`` for DEAL_S seconds, then draining."""
    import heapq

    from bench.light_mqtt import Loop

    loop = Loop()
    kicked: set = set()  # only these are pumped (and every table once a second, for its ack timeout)
    tables = [LightTable(n, port, pki, kicked) for n in names]
    deadline = time.time() + CONNECT_S
    for t in tables:
        t.connect(loop)
        loop.run(0)
    while time.time() < deadline and not all(t.connected for t in tables):
        loop.run(0.1)
    connected = sum(t.connected for t in tables)
    loop.run_until(start_at)
    # Each table appends RATE lines a second, the tables staggered over the second.
    rng = random.Random(hash(names[0]))
    start = time.monotonic()
    due = [(start + rng.random() / RATE, i) for i in range(len(tables))]
    heapq.heapify(due)
    swept = start

    def pump_kicked(now: float) -> None:
        nonlocal swept
        if now - swept >= 1.0:
            swept = now
            kicked.update(tables)
        for t in list(kicked):
            if not t.pump():
                kicked.discard(t)

    while time.monotonic() - start < DEAL_S:
        now = time.monotonic()
        while due[0][0] <= now:
            at, i = heapq.heappop(due)
            tables[i].append()
            heapq.heappush(due, (at + 1.0 / RATE, i))
        pump_kicked(now)
        loop.run_until(time.time() + 0.02)
    drain_end = time.monotonic() + DRAIN_S
    while time.monotonic() < drain_end and any(t.acked < len(t.lines) for t in tables):
        pump_kicked(time.monotonic())
        loop.run_until(time.time() + 0.05)
    drained = time.monotonic() - start
    for t in tables:
        t.client.disconnect()
    Path(out_path).write_text(json.dumps({
        "lines": {t.name: len(t.lines) for t in tables},
        "latencies": [t.committed[s] - t.appended[s - 1] for t in tables for s in t.committed
                      if s <= len(t.appended)],
        "drained_s": drained, "connected": connected}))


def _collector_config(tmp: Path, name: str, port: int, pki: Path, store: str) -> Path:
    config = tmp / f"{name}.toml"
    config.write_text(f'[broker]\nhost = "localhost"\nport = {port}\nca = "{pki / "ca.crt"}"\n'
                      f'cert = "{pki / f"{name}.crt"}"\nkey = "{pki / f"{name}.key"}"\n'
                      f'[store]\n{store}\n')
    return config


def _collect(config: Path) -> subprocess.Popen:
    with open(config.with_suffix(".log"), "ab") as log:
        return subprocess.Popen([sys.executable, "-m", "dealerbox.cli", "floor", "collect",
                                 "--config", str(config)], stderr=log)


def _one_run(tmp: Path, names, pki, store_line: str, collectors: int, kill: bool) -> dict:
    """Tables through *collectors* collectors into the store *store_line* says."""
    import multiprocessing

    from dealerbox.floor.operating.broker import Broker

    (tmp / "broker").mkdir()
    broker = Broker(tmp / "broker", pki).start()
    ids = ["floor-collector"] + [f"floor-collector-{i}" for i in range(2, collectors + 1)]
    configs = [_collector_config(tmp, cid, broker.port, pki, store_line) for cid in ids[:collectors]]
    procs = [_collect(c) for c in configs]
    workers, killed = [], None
    try:
        ctx = multiprocessing.get_context("spawn")
        start_at = time.time() + CONNECT_S + 5.0
        for w in range(WORKERS):
            out = tmp / f"worker{w}.json"
            proc = ctx.Process(target=_deal, args=(names[w::WORKERS], broker.port, pki, start_at, out))
            proc.start()
            workers.append((proc, out))
        if kill:
            time.sleep(max(0.0, start_at - time.time()) + DEAL_S / 2)
            procs[0].send_signal(signal.SIGKILL)
            procs[0].wait()
            killed = ids[0]
            time.sleep(2.0)
            procs[0] = _collect(configs[0])
        for proc, _out in workers:
            proc.join(timeout=CONNECT_S + DEAL_S + DRAIN_S + 120)
    finally:
        for proc, _out in workers:
            if proc.is_alive():
                proc.kill()
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        broker.stop()
    results = [json.loads(out.read_text()) for _p, out in workers if out.exists()]
    lines = {n: c for r in results for n, c in r["lines"].items()}
    latencies = [x for r in results for x in r["latencies"]]
    drained = max((r["drained_s"] for r in results), default=None)
    return {"lines": lines, "latencies": latencies, "drained_s": drained, "killed": killed,
            "connected": sum(r["connected"] for r in results)}


def _count(store, names, lines) -> tuple[int, int, int]:
    """(tables stored, lines lost, lines stored twice), from the store itself."""
    counts = store.line_counts()
    lost = sum(lines.get(n, 0) - counts.get(n, (0, 0, 0))[1] for n in names)
    duplicated = sum(c - d for c, d, _top in counts.values())
    return sum(1 for n in names if counts.get(n, (0, 0, 0))[0]), lost, duplicated


def run() -> dict:
    missing = mosquitto_missing()
    if missing:
        return {"floor_group_skipped": missing}
    from dealerbox.floor.operating.broker import make_pki
    from dealerbox.floor.operating.pgcluster import PostgresCluster, unavailable_reason
    from dealerbox.floor.store import Store

    names = [f"T{i:04d}" for i in range(1, TABLES + 1)]
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench_floor_group_") as tmp:
        tmp = Path(tmp)
        # Each collector has a certificate of its own: the broker takes its CN as the
        # client id (the shipped ACL has floor-collector, -2 and -3).
        pki = make_pki(tmp / "pki", [*names, "floor-collector",
                                     *(f"floor-collector-{i}" for i in range(2, COLLECTORS + 1))])
        # One collector on SQLite: the embedded default, under the same load.
        single = tmp / "single"
        single.mkdir()
        db = single / "floor.sqlite"
        r = _one_run(single, names, pki, f'path = "{db}"', 1, kill=False)
        with Store(db) as store:
            _tables, lost, dup = _count(store, names, r["lines"])
        total = sum(r["lines"].values())
        out["floor_single_sqlite_lines_per_s"] = round(total / r["drained_s"], 1) if r["drained_s"] else None
        out["floor_single_sqlite_ms_p99"] = _p99(r["latencies"])
        out["floor_single_sqlite_lost"] = lost

        # Three collectors sharing the tables, one SIGKILLed and started again, into PostgreSQL.
        group = tmp / "group"
        group.mkdir()
        reason = unavailable_reason()
        cluster = None
        if reason is None:
            cluster = PostgresCluster().start()
            target = cluster.database("floor_group")
            store_kind, store_line = "postgresql", f'url = "{target}"'
        else:
            target = group / "floor.sqlite"
            store_kind, store_line = "sqlite", f'path = "{target}"'
        try:
            r = _one_run(group, names, pki, store_line, COLLECTORS, kill=True)
            with Store(target) as store:
                tables, lost, dup = _count(store, names, r["lines"])
                chains_ok = all(not store.verify(n) for n in names)
        finally:
            if cluster is not None:
                cluster.close()
        total = sum(r["lines"].values())
        out.update({
            "floor_group_store": store_kind,
            "floor_group_postgresql": reason or "Debian's server, one throwaway cluster",
            "floor_group_tables": tables,
            "floor_group_collectors": COLLECTORS,
            "floor_group_killed": r["killed"],
            "floor_group_connected": r["connected"],
            "floor_group_lines": total,
            "floor_group_lost": lost,
            "floor_group_duplicated": dup,
            "floor_group_chains_ok": chains_ok,
            "floor_group_ms_p99": _p99(r["latencies"]),
            "floor_group_lines_per_s": round(total / r["drained_s"], 1) if r["drained_s"] else None,
            "floor_group_load_avg_1min": round(os.getloadavg()[0], 1),
        })
    show_goals(GOALS, out)
    return out


if __name__ == "__main__":
    print(json.dumps(run()))
