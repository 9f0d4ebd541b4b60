"""Floor reporting through faults: a SIGKILLed broker, collector and table,
a network partition, and a wall clock thrown back to 1970. Real broker, real
processes; the store must end with exactly lines 1..N of every table."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time

from tests.floor.support import (  # noqa: F401
    TABLES, TcpProxy, append_lines, broker, identity, open_journal, pki, settings, wait_for,
    write_collector_config, write_table_config)
from dealerbox.floor.collecting.collector import FAULT_ENV, Collector
from dealerbox.service.uplink import CURSOR_NAME, Publisher
from dealerbox.floor.store import Store

DEALERBOX = [sys.executable, "-m", "dealerbox.cli"]


def seqs(store: Store, table: str) -> list[int]:
    return [s for s, _l in store.lines(table)]


class Dealer:
    """Appends lines to a journal at a steady pace in a thread, as a table would."""

    def __init__(self, journal, count: int, pace: float = 0.005):
        self.journal, self.count, self.pace = journal, count, pace
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        for _ in range(self.count):
            append_lines(self.journal, 1)
            time.sleep(self.pace)
        self.done.set()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.thread.join(timeout=60)


def test_a_sigkilled_broker_loses_nothing_the_floor_needs(broker, pki, tmp_path):
    tables = ("T01", "T02", "T03")
    journals = {t: open_journal(tmp_path / t) for t in tables}
    with Store(tmp_path / "floor.sqlite") as store:
        with Collector(identity(pki, broker, "floor-collector"), store):
            pubs = [Publisher(settings(pki, broker, t, batch=8, window=32), tmp_path / t).start()
                    for t in tables]
            dealers = [Dealer(journals[t], 300) for t in tables]
            for d in dealers:
                d.__enter__()
            wait_for(lambda: all(len(seqs(store, t)) > 30 for t in tables), "lines stored before the kill")
            broker.kill()
            time.sleep(0.5)
            broker.start()
            for d in dealers:
                d.__exit__()
            wait_for(lambda: all(p.acked == 300 for p in pubs), "every line acknowledged after the restart",
                     timeout=120)
            for p in pubs:
                p.close()
        for t in tables:
            assert seqs(store, t) == list(range(1, 301))
            assert store.verify(t) == []
    for j in journals.values():
        j.close()


def test_a_collector_killed_between_commit_and_ack_stores_every_line_once(broker, pki, tmp_path):
    db = tmp_path / "floor.sqlite"
    config = write_collector_config(tmp_path / "floor.toml", pki, broker, db)
    env = {**os.environ, FAULT_ENV: "kill-after-commit:3"}
    with open_journal(tmp_path / "T01") as journal:
        append_lines(journal, 100)
        with Publisher(settings(pki, broker, "T01", batch=5, window=20), tmp_path / "T01") as pub:
            first = subprocess.Popen([*DEALERBOX, "floor", "collect", "--config", str(config)], env=env,
                                     stderr=subprocess.DEVNULL)
            assert first.wait(timeout=60) == -signal.SIGKILL
            with Store(db) as store:
                committed = seqs(store, "T01")
            assert committed and pub.acked < committed[-1]  # committed, never acknowledged
            second = subprocess.Popen([*DEALERBOX, "floor", "collect", "--config", str(config)],
                                      stderr=subprocess.DEVNULL)
            try:
                wait_for(lambda: pub.acked == 100, "every line acknowledged by the second collector")
            finally:
                second.send_signal(signal.SIGTERM)
                assert second.wait(timeout=30) == 0
    with Store(db) as store:
        assert seqs(store, "T01") == list(range(1, 101))
        assert store.verify("T01") == []


def test_a_sigkilled_table_resumes_from_its_cursor(broker, pki, tmp_path):
    config = write_table_config(tmp_path / "table.toml", pki, broker.port, "T01", batch=10, window=30)
    jdir = tmp_path / "T01"
    with open_journal(jdir) as journal, Store(tmp_path / "floor.sqlite") as store:
        append_lines(journal, 100)
        with Collector(identity(pki, broker, "floor-collector"), store) as collector:
            proc = subprocess.Popen([*DEALERBOX, "floor", "publish", "--config", str(config),
                                     "--journal", str(jdir)], stderr=subprocess.DEVNULL)
            try:
                wait_for(lambda: (jdir / CURSOR_NAME).exists()
                         and json.loads((jdir / CURSOR_NAME).read_text())["acked"] == 100,
                         "the cursor at 100")
                append_lines(journal, 300)  # killed while sending these
            finally:
                proc.kill()
                proc.wait()
            cursor = json.loads((jdir / CURSOR_NAME).read_text())["acked"]
            assert 100 <= cursor <= 400 and seqs(store, "T01")[-1] >= cursor
            before = len(seqs(store, "T01"))
            append_lines(journal, 50)
            proc = subprocess.Popen([*DEALERBOX, "floor", "publish", "--config", str(config),
                                     "--journal", str(jdir)], stderr=subprocess.DEVNULL)
            try:
                wait_for(lambda: json.loads((jdir / CURSOR_NAME).read_text())["acked"] == 450,
                         "all 450 lines acknowledged")
            finally:
                proc.send_signal(signal.SIGTERM)
                assert proc.wait(timeout=30) == 0
        assert seqs(store, "T01") == list(range(1, 451))
        assert store.verify("T01") == []
        assert before >= cursor
        # It resumed from its cursor: at most the lines in flight (a window of
        # 30 from each run) came twice, not the journal again from seq 1.
        assert collector.duplicates.get("T01", 0) <= 2 * 30 < cursor
        assert json.loads((jdir / CURSOR_NAME).read_text())["acked"] == 450


def _table(store: Store, table: str) -> dict:
    return {t["table_id"]: t for t in store.tables()}.get(table) or {}


def test_a_partition_shows_the_table_offline_then_flushes_the_backlog_in_order(broker, pki, tmp_path):
    proxy = TcpProxy(broker.port)
    jdir = tmp_path / "T01"
    try:
        with open_journal(jdir) as journal, Store(tmp_path / "floor.sqlite") as store, \
                Collector(identity(pki, broker, "floor-collector"), store):
            s = settings(pki, broker, "T01", port=proxy.port, keepalive_s=5)
            with Publisher(s, jdir) as pub:
                append_lines(journal, 20)
                wait_for(lambda: pub.acked == 20, "20 lines before the partition")
                assert _table(store, "T01")["online"] == 1
                proxy.partition()
                cut = time.monotonic()
                append_lines(journal, 30)
                wait_for(lambda: _table(store, "T01")["online"] == 0, "the table shown offline")
                # Not before the broker's keepalive (1.5 x 5 s) and the will delay.
                assert time.monotonic() - cut >= 5
                assert any(a["kind"] == "offline" for a in store.alerts())
                assert seqs(store, "T01") == list(range(1, 21))
                append_lines(journal, 10)
                proxy.heal()
                wait_for(lambda: pub.acked == 60, "the backlog after healing")
                wait_for(lambda: _table(store, "T01")["online"] == 1, "the table online again")
                # The first connection's will (if the broker sends it only now) is late:
                # it must not mark the live table offline.
                time.sleep(2.5)
                assert _table(store, "T01")["online"] == 1
            assert seqs(store, "T01") == list(range(1, 61))
            assert store.verify("T01") == []
    finally:
        proxy.close()


def test_a_late_last_will_does_not_mark_a_live_table_offline(broker, pki, tmp_path):
    """The old connection is cut without the broker noticing and the table
    comes back on a new one: whatever the broker does with the old
    connection's will, the floor keeps the live table online."""
    proxy = TcpProxy(broker.port)
    jdir = tmp_path / "T01"
    try:
        with open_journal(jdir) as journal, Store(tmp_path / "floor.sqlite") as store, \
                Collector(identity(pki, broker, "floor-collector"), store):
            s = settings(pki, broker, "T01", port=proxy.port, keepalive_s=5)
            with Publisher(s, jdir) as pub:
                append_lines(journal, 5)
                wait_for(lambda: pub.acked == 5, "5 lines")
                proxy.partition()   # the old connection goes dark...
                proxy.heal()        # ...while new connections get through
                append_lines(journal, 5)
                wait_for(lambda: _table(store, "T01")["conn"] >= 2, "the table's second connection",
                         timeout=60)
                wait_for(lambda: pub.acked == 10, "the lines after reconnecting")
                # Past the broker's keepalive of the old connection and its will delay.
                time.sleep(5 * 1.5 + 2 + 1)
                row = _table(store, "T01")
                assert row["online"] == 1, row["status"]
    finally:
        proxy.close()


def test_the_clock_jumping_back_to_1970_keeps_the_order_and_health_flags_it(broker, pki, tmp_path):
    now = {"t": time.time()}
    jdir = tmp_path / "T01"
    with open_journal(jdir, clock=lambda: now["t"]) as journal, Store(tmp_path / "floor.sqlite") as store, \
            Collector(identity(pki, broker, "floor-collector"), store):
        with Publisher(settings(pki, broker, "T01"), jdir, clock=lambda: now["t"],
                       clock_synchronised=lambda: True) as pub:
            append_lines(journal, 10)
            wait_for(lambda: pub.acked == 10, "10 lines")
            now["t"] = 3600.0  # 1970-01-01T01:00Z
            append_lines(journal, 10)
            wait_for(lambda: pub.acked == 20, "the lines written in 1970")
            wait_for(lambda: any(a["kind"] == "clock" for a in store.alerts()), "a clock alert")
            health = _table(store, "T01")["health"]
            assert health["clock_ok"] is False and "2020" in health["clock_problem"]
        assert seqs(store, "T01") == list(range(1, 21))
        assert store.verify("T01") == []
        walls = [json.loads(line)["wall"] for _s, line in store.lines("T01")]
        assert walls[10].startswith("1970-01-01") and not walls[9].startswith("1970")


class CuttingProxy(TcpProxy):
    """A relay whose :meth:`cut` ends every connection through it at once: both
    sides see the TCP connection close, and the broker gets no MQTT DISCONNECT
    (as when a table loses power or its switch restarts)."""

    def cut(self) -> None:
        for link in list(self._links):
            for s in link["socks"]:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


RELOADS = 200


def test_two_hundred_reloads_while_tables_come_and_go_keep_the_broker_up_and_lose_nothing(broker, pki, tmp_path):
    """Debian's logrotate reloads mosquitto (SIGHUP) every day. Debian's mosquitto
    2.0.11 crashed on reloads that met the sessions of tables that had just gone,
    when the publisher asked the broker to keep them (session expiry and a will
    delay): with that publisher this test killed it (SIGSEGV) or left it refusing
    the tables. With no broker-side session it stays up, nothing is lost, and the
    wills still come, at once."""
    proxies = {t: CuttingProxy(broker.port) for t in TABLES}
    journals = {t: open_journal(tmp_path / t) for t in TABLES}
    rng = random.Random(20)

    def publisher(t: str) -> Publisher:
        return Publisher(settings(pki, broker, t, port=proxies[t].port, batch=8, window=32), tmp_path / t).start()

    def broker_alive() -> bool:
        assert broker.proc.poll() is None, \
            f"mosquitto died ({broker.proc.returncode}): {broker.log.read_text(errors='replace')[-2000:]}"
        return True

    try:
        with Store(tmp_path / "floor.sqlite") as store, \
                Collector(identity(pki, broker, "floor-collector"), store):
            pubs = {t: publisher(t) for t in TABLES}
            wait_for(lambda: all(p.connected for p in pubs.values()), "every table connected")
            with Dealer(journals["T01"], 300, 0.02), Dealer(journals["T02"], 300, 0.02), \
                    Dealer(journals["T03"], 300, 0.02):
                for i in range(RELOADS):
                    broker.reload()
                    # A table drops off (and reconnects a second later)...
                    proxies[rng.choice(TABLES)].cut()
                    if i % 4 == 0:
                        # ...or its daemon restarts: a clean stop and a new connection.
                        t = rng.choice(TABLES)
                        pubs[t].close()
                        pubs[t] = publisher(t)
                    # The reloads' pace, not a wait for anything: they come while lines flow.
                    time.sleep(0.02)
                    broker_alive()
            wait_for(lambda: broker_alive() and all(p.acked == 300 for p in pubs.values()),
                     "every line acknowledged", 120)
            # The Last Will: a cut connection is reported lost (an offline alert)...
            assert any(a["kind"] == "offline" for a in store.alerts()), "no Last Will reached the floor"
            # ...and each table is back online.
            wait_for(lambda: all(t["online"] for t in store.tables()), "every table online again")

            # Killed and started again, with lines written meanwhile: nothing lost either.
            broker.kill()
            for t in TABLES:
                append_lines(journals[t], 50)
            broker.start()
            wait_for(lambda: broker_alive() and all(p.acked == 350 for p in pubs.values()),
                     "every line after the restart", 120)
            for p in pubs.values():
                p.close()
            for t in TABLES:
                assert seqs(store, t) == list(range(1, 351)), t
                assert store.verify(t) == []
    finally:
        for proxy in proxies.values():
            proxy.close()
        for j in journals.values():
            j.close()
