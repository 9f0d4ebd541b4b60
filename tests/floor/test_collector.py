"""The collector files each table on its own: no table's garbage, forgeries or
flood costs another table a line, an ack, a status or a batch, and nothing the
collector publishes outgrows the broker.

Filing-level tests run the real filing against a real SQLite store; the rest
run the real collector, publishers and journals through a real mosquitto
started with the shipped config (test_floor_support).
"""

from __future__ import annotations

import contextlib
import json
import logging
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.floor.support import (  # noqa: F401
    Client, append_lines, broker, identity, open_journal, pki, wait_for, write_collector_config)
from tests.floor.support import settings as table_settings
from dealerbox.link import protocol as P
from dealerbox.floor.operating.broker import free_port
from dealerbox.link.client import Identity
from dealerbox.floor.collecting.collector import Collector
from dealerbox.floor.collecting.filing import ALERT_QUIET_S, Filing
from dealerbox.floor.collecting.limits import CollectorLimits
from dealerbox.floor.collecting.message import Message
from dealerbox.service.uplink import Publisher
from dealerbox.floor.store import Store
from dealerbox.link.chain import line_hash

DEALERBOX = [sys.executable, "-m", "dealerbox.cli"]
WALL = "2026-11-23T19:20:01.500Z"


def journal_lines(count: int, start: int = 1, prev: str = P.GENESIS, *, ev: str = "tick") -> list[str]:
    """*count* chained lines in the journal's own format, from seq *start* after *prev*."""
    out = []
    for seq in range(start, start + count):
        line = json.dumps({"seq": seq, "prev": prev, "wall": WALL, "event": {"t": float(seq), "ev": ev}},
                          separators=(",", ":"))
        out.append(line)
        prev = line_hash(line)
    return out


def message(topic: str, payload: bytes) -> Message | None:
    """*payload* on *topic* as the collector queues it (None: a topic it queues nothing of)."""
    return Message.on_table_topic(topic, payload, 0.0)


def journal(table: str, lines: list[str], **extra) -> Message:
    return message(P.journal_topic(table), P.encode({"table": table, "boot": 1, "lines": lines, **extra}))


def status(table: str, conn: int, online: bool = True) -> Message:
    return message(P.status_topic(table), P.encode({"table": table, "online": online, "why": "birth",
                                                    "boot": 1, "conn": conn, "wall": 1764000000.0}))


def open_alerts(store: Store, table: str, kind: str | None = None) -> list[dict]:
    return [a for a in store.alerts() if a["table"] == table and kind in (None, a["kind"])]


def memory_store() -> Store:
    return Store(":memory:")


# -- A. one table's malformed message is refused for that table alone

MALFORMED = {
    "seq null": journal("T02", ['{"seq":null,"prev":"x"}']).payload,
    "seq a string": journal("T02", ['{"seq":"7","prev":"x"}']).payload,
    "seq negative": journal("T02", ['{"seq":-1,"prev":"x"}']).payload,
    "seq past SQLite": journal("T02", ['{"seq":%d,"prev":"x"}' % 2**64]).payload,
    "seq a float": journal("T02", ['{"seq":1.0,"prev":"' + P.GENESIS + '"}']).payload,
    "a line nested deeply": journal("T02", ["[" * 100_000]).payload,
    "a payload nested deeply": b"[" * 100_000,
    "not UTF-8": b'{"v":1,"lines":["\xff\xfe"]}',
    "a lone surrogate": b'{"v":1,"lines":["{\\"seq\\":1,\\"prev\\":\\"\\ud800\\"}"]}',
    "a number of 5000 digits": b'{"v":1,"oldest":' + b"9" * 5000 + b"}",
    "lines not a list": P.encode({"lines": {"seq": 1}}),
    "another table's name": P.encode({"table": "T01", "lines": []}),
}


def _honest_batch(bad_topic: str, bad: bytes):
    t01 = journal_lines(3)
    return t01, [
        message(bad_topic, bad),
        journal("T01", t01),
        status("T01", 1),
        message(P.state_topic("T03"), P.encode({"table": "T03", "phase": "flop", "open": None})),
    ]


@pytest.mark.parametrize("what", sorted(MALFORMED))
def test_a_malformed_journal_message_costs_the_other_tables_nothing_in_its_batch(what, caplog):
    t01, batch = _honest_batch(P.journal_topic("T02"), MALFORMED[what])
    with memory_store() as store:
        done = Filing(store).store_batch(batch, 1000.0)
        assert done.acks == {"T01": 3}
        assert [line for _s, line in store.lines("T01")] == t01
        rows = {t["table_id"]: t for t in store.tables()}
        assert rows["T01"]["online"] == 1 and rows["T01"]["conn"] == 1
        assert rows["T03"]["state"] == {"v": 1, "table": "T03", "phase": "flop", "open": None}
        assert store.lines("T02") == []
        (alert,) = store.alerts()
        assert (alert["table"], alert["kind"]) == ("T02", "protocol")
        assert "journal message refused" in alert["text"]
    assert any("T02" in r.getMessage() and "protocol" in r.getMessage() for r in caplog.records
               if r.levelno == logging.WARNING)


@pytest.mark.parametrize("kind, payload, named", [
    ("status", P.encode({"online": True, "boot": 2**70}), "boot"),
    ("status", P.encode({"online": "yes"}), "online"),
    ("status", P.encode({"online": False, "conn": -3}), "conn"),
    ("state", P.encode({"phase": "flop", "open": ["FOUR_CARD_FLOP"]}), "open"),
    ("state", P.encode({"phase": {"deep": [1]}}), "phase"),
    ("health", P.encode({"clock_ok": False, "clock_problem": {"why": "?"}}), "clock_problem"),
    ("health", P.encode({"backlog": "many"}), "backlog"),
    ("health", b'{"v":2,"backlog":1}', "schema version 2"),
    ("state", b"\x80not utf-8", "not JSON"),
])
def test_a_malformed_retained_message_is_refused_with_an_alert_naming_what(kind, payload, named):
    t01, batch = _honest_batch(f"{P.ROOT}/tables/T02/{kind}", payload)
    with memory_store() as store:
        done = Filing(store).store_batch(batch, 1000.0)
        assert done.acks == {"T01": 3} and len(store.lines("T01")) == 3
        (alert,) = store.alerts()
        assert alert["kind"] == "protocol" and alert["table"] == "T02"
        assert alert["text"].startswith(f"{kind} message refused") and named in alert["text"]
        # Nothing of T02's refused message was kept.
        t02 = {t["table_id"]: t for t in store.tables()}.get("T02")
        assert t02 is None or (t02["state"], t02["health"], t02["status"]) == (None, None, None)


def test_the_lines_before_a_malformed_line_are_kept_and_acknowledged():
    good = journal_lines(2)
    with memory_store() as store:
        done = Filing(store).store_batch([journal("T01", [*good, '{"seq":"3"}'])], 1.0)
        assert done.acks == {"T01": 2} and len(store.lines("T01")) == 2
        assert "line 3 of a batch (after seq 2)" in open_alerts(store, "T01", "protocol")[0]["text"]


def test_a_table_refused_a_thousand_times_has_one_protocol_alert_and_one_log_line(caplog):
    with memory_store() as store:
        filing = Filing(store)
        events = []
        for i in range(1000):
            done = filing.store_batch([message(P.journal_topic("T02"), b"garbage")], 1000.0 + i / 100)
            events += done.events
        (alert,) = store.alerts()
        assert alert["kind"] == "protocol" and alert["count"] == 1000
        assert "not JSON" in alert["text"]
        # 10 s of garbage: the view and the log hear of it once, then again after the quiet time.
        assert len(events) == 1 and events[0]["alert"]["id"] == alert["id"]
        done = filing.store_batch([message(P.journal_topic("T02"), b"garbage")], 1000.0 + ALERT_QUIET_S + 1)
        assert done.events[0]["alert"]["count"] == 1001
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "T02" in r.getMessage()
                and r.name == "dealerbox.floor.collecting.filing"]
    assert len(warnings) == 2
    # The security log (the journal's table_refused) hears of it as often, and no more.
    refused = [r for r in caplog.records if getattr(r, "security", {}).get("event") == "table_refused"]
    assert [r.security["table"] for r in refused] == ["T02", "T02"]


def test_a_gap_filled_later_in_the_same_batch_is_not_asked_again():
    lines = journal_lines(6)
    with memory_store() as store:
        done = Filing(store).store_batch([journal("T01", lines[:2]), journal("T01", lines[4:]),
                                          journal("T01", lines[2:])], 1.0)
        # A resend_from 3 after the ack of 6 would move the table's cursor back.
        assert done.acks == {"T01": 6} and done.resends == {}


# The fuzz: every field of every payload, in every kind of wrong.

RAW = [
    b"[" * 100_000 + b"]" * 100_000, b"{" * 50_000, b"9" * 5000, b"-" + b"9" * 30, b"1e999", b"-1",
    b"NaN", b"-Infinity", b'"' + b"x" * 300_000 + b'"', b'"\\ud800"', b'"\\u0000"', b"true",
    b"null", b"[]", b"{}", b"0", b"18446744073709551616",
]
SENSIBLE_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-2**80, max_value=2**80),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12))
JSON_VALUES = st.recursive(SENSIBLE_LEAVES,
                           lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)
FRAGMENTS = st.one_of(JSON_VALUES.map(lambda v: json.dumps(v).encode()), st.sampled_from(RAW))
LINE_KEYS = ["seq", "prev", "wall", "event", "decision"]
KEYS = {kind: ["v", "table", *shape] for kind, shape in P.SHAPES.items()}


def _object(fields: dict[str, bytes]) -> bytes:
    return b"{" + b",".join(json.dumps(k).encode() + b":" + v for k, v in fields.items()) + b"}"


@st.composite
def fuzz_lines(draw) -> bytes:
    """A ``lines`` value: a list of strings that may or may not be journal lines."""
    lines = []
    for _ in range(draw(st.integers(0, 3))):
        fields = {k: draw(FRAGMENTS) for k in draw(st.lists(st.sampled_from(LINE_KEYS), unique=True))}
        if draw(st.booleans()):
            fields["seq"] = str(draw(st.integers(-1, 3))).encode()
            fields["prev"] = json.dumps(draw(st.sampled_from([P.GENESIS, "0" * 63, "x"]))).encode()
        if draw(st.booleans()):
            fields["decision"] = _object({"verdict": b'"floor"', "step": b"0",
                                          "irregularity": draw(FRAGMENTS)})
        text = _object(fields).decode("latin-1")
        lines.append(draw(st.sampled_from([text, text[:len(text) // 2], "caf\u00e9", "\ud800", ""])))
    return json.dumps(lines).encode()


@st.composite
def fuzz_message(draw, table: str = "T02", raw_size: int = 300) -> tuple[str, bytes]:
    """A message on one of *table*'s topics, of any shape."""
    kind = draw(st.sampled_from([*P.KINDS, "wat", "Journal"]))
    topic = f"{P.ROOT}/tables/{table}/{kind}"
    if draw(st.integers(0, 9)) == 0:
        return topic, draw(st.one_of(st.binary(max_size=raw_size), st.sampled_from(RAW),
                                     st.sampled_from([b"\xff\xfe\xfd", b"", b"[]", b'{"v":2}'])))
    keys = draw(st.lists(st.sampled_from(KEYS.get(kind, KEYS["journal"])), unique=True))
    fields = {"v": b"1"}
    for key in keys:
        fields[key] = draw(fuzz_lines()) if key == "lines" and draw(st.booleans()) else draw(FRAGMENTS)
    return topic, _object(fields)


class Honest:
    """A table that only ever sends what a table sends: chained lines, births,
    state and health, each batch a little more."""

    #: What :meth:`messages` returns: a birth, a journal batch, state and health.
    MESSAGES = 4

    def __init__(self, table: str):
        self.table, self.lines, self.conn = table, [], 0

    def messages(self, more: int) -> list[Message]:
        prev = line_hash(self.lines[-1]) if self.lines else P.GENESIS
        new = journal_lines(more, len(self.lines) + 1, prev)
        self.lines += new
        self.conn += 1
        return [status(self.table, self.conn), journal(self.table, new, oldest=1),
                message(P.state_topic(self.table), P.encode({"table": self.table, "phase": "deal", "open": None})),
                message(P.health_topic(self.table), P.encode({"table": self.table, "backlog": 0, "clock_ok": True,
                                                              "readers": {}}))]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.data_too_large])
@given(data=st.data(), rounds=st.integers(1, 4))
def test_fuzzed_messages_from_one_table_cost_the_honest_tables_nothing(data, rounds):
    honest = [Honest("T01"), Honest("T03")]
    with memory_store() as store:
        filing = Filing(store)
        for r in range(rounds):
            batch = [m for h in honest for m in h.messages(data.draw(st.integers(1, 3)))]
            for topic, payload in data.draw(st.lists(fuzz_message(), max_size=6)):
                at = data.draw(st.integers(0, len(batch)))
                fuzzed = message(topic, payload)
                if fuzzed is not None:  # a topic that is no table's is never queued
                    batch.insert(at, fuzzed)
            done = filing.store_batch(batch, 1000.0 + r)
            rows = {t["table_id"]: t for t in store.tables()}
            for h in honest:
                # Filed in this very batch: lines, ack, status and retained rows.
                assert done.acks[h.table] == len(h.lines) and h.table not in done.resends
                assert rows[h.table]["conn"] == h.conn and rows[h.table]["online"] == 1
                assert rows[h.table]["health"]["readers"] == {} and rows[h.table]["state"]["phase"] == "deal"
        for h in honest:
            assert [line for _s, line in store.lines(h.table)] == h.lines
            assert store.verify(h.table) == [] and open_alerts(store, h.table) == []
        assert len(open_alerts(store, "T02", "protocol")) <= 1
        # Whatever T02 left in its row, the floor view can show it.
        view = Collector(Identity("127.0.0.1", 1, Path("ca"), Path("c"), Path("k")), store).snapshot()
        assert {"T01", "T03"} <= {t["table"] for t in view["tables"]}


def test_fuzzed_messages_through_the_broker_cost_an_honest_table_nothing_and_no_batch(broker, pki, tmp_path):
    with Store(tmp_path / "floor.sqlite") as store, \
            Collector(identity(pki, broker, "floor-collector"), store) as collector:
        assert collector.connected.wait(30)
        honest = Client(identity(pki, broker, "T01"), "T01")
        bad = Client(identity(pki, broker, "T02"), "T02")
        assert honest.connect(broker.port) and bad.connect(broker.port)
        honest.subscribe(P.ack_topic("T01"))
        table = Honest("T01")
        sent: list = []

        @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
        @given(st.lists(fuzz_message(raw_size=2000), min_size=1, max_size=5), st.integers(1, 3), st.randoms())
        def one_round(garbage, more, rnd):
            # Interleaved, T01's own messages still in its order. Shuffled before T01
            # makes its lines: hypothesis may end an example while the shuffle draws, and
            # lines made and never sent would be a gap no real table leaves.
            order = ["T01"] * Honest.MESSAGES + list(garbage)
            rnd.shuffle(order)
            queue = iter(table.messages(more))
            infos, thrown = [], []
            for item in order:
                if item == "T01":
                    sent_by_t01 = next(queue)
                    infos.append(honest.client.publish(sent_by_t01.topic, sent_by_t01.payload, qos=1))
                else:
                    thrown.append(bad.client.publish(*item, qos=1))
            for info in infos:
                info.wait_for_publish(timeout=30)
            for info in thrown:
                # The broker may drop the hostile table for what it sent (a packet over its
                # size limit); paho reconnects it for the next round. Only T01 must get through.
                with contextlib.suppress(RuntimeError, ValueError):
                    info.wait_for_publish(timeout=5)
            wait_for(lambda: (store.tables() and {t["table_id"]: t for t in store.tables()}
                              .get("T01", {}).get("last_seq") == len(table.lines)
                              and any(f'"acked":{len(table.lines)}'.encode() in p for _t, p in honest.messages)),
                     f"T01's line {len(table.lines)} stored and acknowledged "
                     f"({[t for t in store.tables() if t['table_id'] == 'T01']}, {honest.messages[-3:]}, "
                     f"{collector.waited_batches}, dropped {collector.dropped}, refused {collector.filing.refused}, "
                     f"dups {collector.duplicates}, lines {[q for q, _l in store.lines('T01')][-5:]}, "
                     f"quarantine {store.quarantined('T01')})", timeout=30)
            sent.append(len(garbage))

        try:
            one_round()
        finally:
            honest.close()
            bad.close()
        assert [line for _s, line in store.lines("T01")] == table.lines
        assert store.verify("T01") == [] and open_alerts(store, "T01") == []
        assert wait_for(lambda: {t["table_id"]: t for t in store.tables()}["T01"]["conn"] == table.conn,
                        "T01's newest status")
        assert collector.waited_batches["T01"] <= 1, collector.waited_batches
        assert collector.sessions == 1 and collector.disconnects == 0
        assert len(open_alerts(store, "T02", "protocol")) <= 1
        print(f"\nfuzz through the broker: {len(sent)} rounds, {sum(sent)} garbage messages; "
              f"T01 waited at most {collector.waited_batches['T01']} batch(es), "
              f"{collector.waited_s['T01'] * 1000:.0f} ms arrival to commit")


class Dealer(threading.Thread):
    """Appends lines to a journal at a steady pace, as a table does."""

    def __init__(self, journal, count: int, pace: float = 0.01):
        super().__init__(daemon=True)
        self.journal, self.count, self.pace = journal, count, pace

    def run(self):
        for _ in range(self.count):
            append_lines(self.journal, 1)
            time.sleep(self.pace)


def _flooder(pki, broker, table: str) -> Client:
    """A client of *table* that keeps a thousand messages in flight (paho sets it before connecting)."""
    client = Client(identity(pki, broker, table), table)
    client.client.max_inflight_messages_set(1000)
    assert client.connect(broker.port)
    return client


def _flood(client: Client, messages, qos: int = 1) -> None:
    infos = [client.client.publish(topic, payload, qos=qos) for topic, payload in messages]
    for info in infos:
        info.wait_for_publish(timeout=120)


def _honest_tables(broker, pki, tmp_path, tables=("T01", "T03"), lines: int = 300):
    journals = {t: open_journal(tmp_path / t) for t in tables}
    pubs = {t: Publisher(table_settings(pki, broker, t, batch=8, window=32), tmp_path / t).start()
            for t in tables}
    dealers = [Dealer(journals[t], lines) for t in tables]
    return journals, pubs, dealers


def test_a_table_flooding_garbage_delays_no_honest_line_past_one_batch(broker, pki, tmp_path):
    garbage = [(P.journal_topic("T02"), b"[" * 50_000), (P.journal_topic("T02"), b'{"v":1,"lines":[{"seq":null}]}'),
               (P.status_topic("T02"), P.encode({"online": "maybe"})), (P.journal_topic("T02"), b"\xff" * 900)]
    with Store(tmp_path / "floor.sqlite") as store, \
            Collector(identity(pki, broker, "floor-collector"), store) as collector:
        assert collector.connected.wait(30)
        journals, pubs, dealers = _honest_tables(broker, pki, tmp_path)
        flooder = _flooder(pki, broker, "T02")
        try:
            for d in dealers:
                d.start()
            _flood(flooder, (garbage[i % len(garbage)] for i in range(10_000)))
            wait_for(lambda: collector.filing.refused.get("T02", 0) + collector.dropped.get("T02", 0) == 10_000,
                     "every garbage message refused or dropped", timeout=120)
            for d in dealers:
                d.join(timeout=120)
            wait_for(lambda: all(p.acked == 300 for p in pubs.values()), "every honest line acknowledged",
                     timeout=120)
        finally:
            flooder.close()
            for p in pubs.values():
                p.close()
            for j in journals.values():
                j.close()
        for t in pubs:
            assert [s for s, _l in store.lines(t)] == list(range(1, 301)) and store.verify(t) == []
            assert open_alerts(store, t) == []
            assert collector.waited_batches[t] <= 1, collector.waited_batches
        (alert,) = open_alerts(store, "T02")
        assert alert["kind"] == "protocol"
        assert collector.sessions == 1 and collector.disconnects == 0
        print(f"\ngarbage flood: 10000 messages from T02 ({collector.filing.refused['T02']} refused, "
              f"{collector.dropped.get('T02', 0)} dropped), {collector.commits} batches; honest tables "
              f"waited at most {max(collector.waited_batches[t] for t in pubs)} batch(es), "
              f"{max(collector.waited_s[t] for t in pubs) * 1000:.0f} ms arrival to commit "
              f"(T02: {collector.waited_batches.get('T02')} batches, {collector.waited_s.get('T02', 0):.1f} s)")


# -- B. an alert flood: bounded, summarised, and the session kept

def test_ten_thousand_chain_breaking_lines_keep_the_floor_running_and_alerts_bounded(broker, pki, tmp_path):
    forged = [(P.journal_topic("T02"),
               P.encode({"lines": [journal_lines(1, prev=f"{i:064x}")[0]]})) for i in range(1, 10_001)]
    with Store(tmp_path / "floor.sqlite") as store, \
            Collector(identity(pki, broker, "floor-collector"), store) as collector:
        assert collector.connected.wait(30)
        watcher = Client(identity(pki, broker, "floor-view"), "floor-view")
        assert watcher.connect(broker.port)
        watcher.subscribe(P.ALERTS_TOPIC)
        journals, pubs, dealers = _honest_tables(broker, pki, tmp_path, ("T01",))
        forger = _flooder(pki, broker, "T02")
        try:
            dealers[0].start()
            _flood(forger, forged)
            dealers[0].join(timeout=120)
            wait_for(lambda: pubs["T01"].acked == 300, "every honest line acknowledged", timeout=120)
            kept = wait_for(lambda: (lambda a: a and a[0]["count"] + collector.dropped.get("T02", 0) == 10_000
                                     and a)(open_alerts(store, "T02", "chain")),
                            "every forged line counted", timeout=120)
            last = wait_for(lambda: [json.loads(p) for _t, p in watcher.messages
                                     if json.loads(p)["counts"].get("T02", {}).get("chain") == kept[0]["count"]],
                            "floor/alerts with the final count")[-1]
        finally:
            forger.close()
            watcher.close()
            pubs["T01"].close()
            journals["T01"].close()
        assert [s for s, _l in store.lines("T01")] == list(range(1, 301))
        assert collector.waited_batches["T01"] <= 1
        assert store.lines("T02") == []  # a chain-breaking line is never the record
        assert len(store.quarantined("T02")) == kept[0]["count"]
        sizes = [len(p) for _t, p in watcher.messages]
        assert max(sizes) <= collector.limits.max_message_bytes
        assert collector.sessions == 1 and collector.disconnects == 0
        assert last["total"] == len(store.alerts()) and last["open"][-1]["kind"] in ("chain", "protocol")
        print(f"\nchain flood: 10000 forged lines from T02, {kept[0]['count']} kept aside in one alert, "
              f"{collector.dropped.get('T02', 0)} dropped; {len(sizes)} floor/alerts of at most {max(sizes)} "
              f"bytes; T01 waited at most {collector.waited_batches['T01']} batch(es), "
              f"{collector.waited_s['T01'] * 1000:.0f} ms arrival to commit")


def _busy_room(store: Store, tables: int = 2000) -> None:
    """A room that never clears: every table with alerts of several kinds."""
    with store.lock:
        store.begin()
        for i in range(tables):
            for kind in ("floor", "offline", "clock"):
                store.raise_alert(f"X{i:04d}", kind, f"{kind} at table X{i:04d}: " + "details " * 20, i)
        store.commit()


def test_floor_alerts_carries_the_newest_alerts_and_counts_within_its_size(broker, pki, tmp_path):
    with Store(tmp_path / "floor.sqlite") as store:
        _busy_room(store)
        for _ in range(4):  # folded: one alert, counted four times
            store.raise_alert("X0001", "floor", "again")
        watcher = Client(identity(pki, broker, "floor-view"), "floor-view")
        limits = CollectorLimits(max_message_bytes=200 * 1024, alerts_shown=500)
        with Collector(identity(pki, broker, "floor-collector"), store, limits=limits) as collector:
            assert collector.connected.wait(30)
            assert watcher.connect(broker.port)
            watcher.subscribe(P.ALERTS_TOPIC)
            (_t, payload), *_ = wait_for(lambda: watcher.messages, "floor/alerts")
            watcher.close()
            assert collector.sessions == 1 and collector.disconnects == 0
        alerts = json.loads(payload)
        assert len(payload) <= 200 * 1024 < len(P.encode({"open": store.alerts()}))
        assert alerts["total"] == 6000 and 0 < alerts["shown"] == len(alerts["open"]) < 500
        newest = [a["id"] for a in store.alerts()][-alerts["shown"]:]
        assert [a["id"] for a in alerts["open"]] == newest
        assert alerts["counts"]["X0001"] == {"floor": 5, "offline": 1, "clock": 1}


def test_a_collector_that_cannot_keep_its_broker_session_gives_up(broker, pki, tmp_path):
    """Past the broker's packet limit (here allowed on purpose), the broker drops
    the collector at each publish: it says so and gives up instead of looping."""
    with Store(tmp_path / "floor.sqlite") as store:
        _busy_room(store, 3000)
        limits = CollectorLimits(max_message_bytes=8 * 1024 * 1024, alerts_shown=100_000, broker_lost_s=4)
        with Collector(identity(pki, broker, "floor-collector"), store, limits=limits) as collector:
            assert collector.failed.wait(60)
            assert collector.disconnects >= 1 and "giving up" in collector.failure
            assert collector.alerts_published == 0 or collector.alerts_largest > 1024 * 1024


def test_dealerbox_floor_collect_exits_non_zero_without_a_broker_session(pki, tmp_path):
    class Nowhere:
        port = free_port()  # nobody listens there
    config = write_collector_config(tmp_path / "floor.toml", pki, Nowhere, tmp_path / "floor.sqlite")
    config.write_text(config.read_text() + "[collector]\nbroker_lost_s = 2\n")
    started = time.monotonic()
    proc = subprocess.run([*DEALERBOX, "floor", "collect", "--config", str(config)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "giving up so that the service restarts" in proc.stderr
    assert time.monotonic() - started < 30


def test_the_collector_section_of_floor_toml_is_checked(pki, tmp_path):
    from dealerbox.errors import ConfigError
    from dealerbox.floor.operating.settings import load_collector

    class Somewhere:
        port = 8883
    config = write_collector_config(tmp_path / "floor.toml", pki, Somewhere, tmp_path / "floor.sqlite")
    base = config.read_text()
    config.write_text(base + "[collector]\nmax_message_bytes = 65536\nalerts_shown = 50\n")
    limits = load_collector(config).limits
    assert (limits.max_message_bytes, limits.alerts_shown, limits.broker_lost_s) == (65536, 50, 120.0)
    config.write_text(base + "[collector]\nmax_message_bytes = 2000000\n")
    with pytest.raises(ConfigError, match=r"collector.max_message_bytes = 2000000: expected bytes"):
        load_collector(config)


# -- C. a line that breaks the chain is kept aside, never the record

def test_a_chain_breaking_line_is_kept_aside_and_the_genuine_line_becomes_the_record(broker, pki, tmp_path):
    jdir = tmp_path / "T01"
    with open_journal(jdir) as jnl, Store(tmp_path / "floor.sqlite") as store, \
            Collector(identity(pki, broker, "floor-collector"), store) as collector:
        append_lines(jnl, 5)
        with Publisher(table_settings(pki, broker, "T01"), jdir) as pub:
            wait_for(lambda: pub.acked == 5, "5 lines")
        genuine = [line for _s, line in store.lines("T01")]
        # Someone with T01's certificate sends a seq 6 of their own.
        forger = Client(identity(pki, broker, "T01"), "T01")
        assert forger.connect(broker.port)
        forger.subscribe(P.ack_topic("T01"))
        forged = journal_lines(1, 6, prev=line_hash(genuine[3]), ev="shoe")[0]
        forger.publish(P.journal_topic("T01"), P.encode({"lines": [forged]}))
        wait_for(lambda: any(b'"resend_from":6' in p for _t, p in forger.messages), "a resend request for seq 6")
        forger.close()
        (alert,) = open_alerts(store, "T01")
        assert alert["kind"] == "chain" and alert["seq"] == 6 and "kept aside" in alert["text"]
        assert [q["line"] for q in store.quarantined("T01")] == [forged]
        assert len(store.lines("T01")) == 5
        # The table sends its genuine seq 6 (and more): it is the record.
        append_lines(jnl, 5)
        with Publisher(table_settings(pki, broker, "T01"), jdir) as pub:
            wait_for(lambda: pub.acked == 10, "the genuine lines")
        raw = next(jdir.glob("journal-*.jsonl")).read_text().splitlines()
        assert [line for _s, line in store.lines("T01")] == raw
        assert store.verify("T01") == []
        assert [a["kind"] for a in open_alerts(store, "T01")] == ["chain"]  # no tamper
        # A forgery of a stored line afterwards is kept aside too, with a tamper alert.
        forger = Client(identity(pki, broker, "T01"), "T01")
        assert forger.connect(broker.port)
        changed = raw[2].replace('"tick"', '"shoe"')
        forger.publish(P.journal_topic("T01"), P.encode({"lines": [changed]}))
        wait_for(lambda: open_alerts(store, "T01", "tamper"), "a tamper alert")
        forger.close()
        assert [(q["seq"], q["why"]) for q in store.quarantined("T01")] == [(3, "tamper"), (6, "chain")]
        assert [line for _s, line in store.lines("T01")] == raw
        assert collector.sessions == 1


def test_a_journal_that_starts_after_retention_is_filed_and_forgeries_still_kept_aside(broker, pki, tmp_path):
    from tests.service.test_uplink_retention import DAY, T0, write_days
    from dealerbox.service.journal import Journal

    jdir = tmp_path / "T01"
    write_days(jdir, 5)  # seq 1..5, one a day
    now = {"t": T0 + 4 * DAY}
    with Journal(jdir, clock=lambda: now["t"], keep_days=2, sync="none") as jnl, \
            Store(tmp_path / "floor.sqlite") as store, \
            Collector(identity(pki, broker, "floor-collector"), store):
        oldest = int(json.loads(next(iter(sorted(jdir.glob("journal-*.jsonl")))).read_text()
                                .splitlines()[0])["seq"])
        assert oldest > 1  # retention deleted the first days before the floor was on
        with Publisher(table_settings(pki, broker, "T01"), jdir) as pub:
            wait_for(lambda: pub.acked == 5, "the lines the table still holds")
        assert [s for s, _l in store.lines("T01")] == list(range(oldest, 6))
        assert "starts at seq" in open_alerts(store, "T01", "chain")[0]["text"]
        forger = Client(identity(pki, broker, "T01"), "T01")
        assert forger.connect(broker.port)
        forger.publish(P.journal_topic("T01"), P.encode({"oldest": oldest, "lines": journal_lines(1, 6)}))
        wait_for(lambda: store.quarantined("T01"), "the forged seq 6 kept aside")
        forger.close()
        append_lines(jnl, 3)
        with Publisher(table_settings(pki, broker, "T01"), jdir) as pub:
            wait_for(lambda: pub.acked == 8, "the genuine lines after it")
        assert [s for s, _l in store.lines("T01")] == list(range(oldest, 9))
        assert store.verify("T01") == []
        (alert,) = open_alerts(store, "T01")
        assert alert["count"] == 2 and "kept aside" in alert["last_text"]


# -- G. a collector that starts takes what the tables retained before its share of them

def test_a_starting_collector_files_every_retained_message_before_it_takes_a_share(broker, pki, tmp_path):
    """The tables' retained messages come on a subscription of the collector's own and
    are filed before it joins the share and publishes its birth: none of its share of
    the tables' lines waits behind them, and what came while no collector ran is filed."""
    tables = {name: Client(identity(pki, broker, name), name) for name in ("T01", "T02", "T03")}
    watcher = Client(identity(pki, broker, "floor-view"), "floor-view")
    try:
        assert all(c.connect(broker.port) for c in (*tables.values(), watcher))
        # T01 died while no collector ran: its Last Will is all the broker holds of it.
        lost = {"table": "T01", "online": False, "why": "lost", "boot": 1, "conn": 4, "wall": 1764000000.0}
        tables["T01"].publish(P.status_topic("T01"), P.encode(lost), retain=True)
        tables["T02"].publish(P.state_topic("T02"), P.encode({"table": "T02", "phase": "turn", "open": None}),
                              retain=True)
        tables["T03"].publish(P.health_topic("T03"), P.encode({"table": "T03", "backlog": 7, "clock_ok": True}),
                              retain=True)
        for c in tables.values():
            c.close()  # no Last Will: what they retained stays as it is
        watcher.subscribe(P.COLLECTOR_TOPIC)
        with Store(tmp_path / "floor.sqlite") as store, \
                Collector(identity(pki, broker, "floor-collector"), store) as collector:
            assert collector.connected.wait(30)
            # At once: filed before the collector joined.
            rows = {t["table_id"]: t for t in store.tables()}
            assert (rows["T01"]["online"], rows["T01"]["conn"]) == (0, 4)
            assert rows["T02"]["state"]["phase"] == "turn"
            assert rows["T03"]["health"]["backlog"] == 7
            births = wait_for(lambda: [json.loads(p) for _t, p in watcher.messages
                                       if json.loads(p).get("online")], "the collector's birth")
            assert births[-1]["boot"] == collector.boot
            # In the share now, and only there: a table's new status is filed once, as it comes.
            back = dict(lost, online=True, why="birth", conn=5)
            tables["T01"] = Client(identity(pki, broker, "T01"), "T01")
            assert tables["T01"].connect(broker.port)
            tables["T01"].publish(P.status_topic("T01"), P.encode(back), retain=True)
            wait_for(lambda: {t["table_id"]: t for t in store.tables()}["T01"]["conn"] == 5, "T01 back")
            with open_journal(tmp_path / "T02") as jnl:
                append_lines(jnl, 5)
            with Publisher(table_settings(pki, broker, "T02"), tmp_path / "T02") as pub:
                wait_for(lambda: pub.acked == 5, "T02's lines acknowledged")
            assert collector.sessions == 1
            assert open_alerts(store, "T01") == []  # a Last Will filed before T01 ever was online
    finally:
        for c in (*tables.values(), watcher):
            c.close()


def test_a_collector_that_never_hears_its_sync_message_joins_the_share_after_a_wait(
        broker, pki, tmp_path, monkeypatch, caplog):
    """The broker refuses the collector's sync topic (an ACL that lacks it): the collector
    says so, joins the share after the wait, and the tables' lines are filed."""
    monkeypatch.setattr(P, "collector_sync_topic", lambda boot: f"{P.ROOT}/elsewhere/sync/{boot}")
    monkeypatch.setattr("dealerbox.floor.collecting.collector._SNAPSHOT_WAIT_S", 1.0)
    with Store(tmp_path / "floor.sqlite") as store, \
            Collector(identity(pki, broker, "floor-collector"), store) as collector:
        assert collector.connected.wait(30)
        with open_journal(tmp_path / "T01") as jnl:
            append_lines(jnl, 3)
        with Publisher(table_settings(pki, broker, "T01"), tmp_path / "T01") as pub:
            wait_for(lambda: pub.acked == 3, "T01's lines acknowledged")
    # (mosquitto grants the subscription and delivers nothing on it, nor takes the publish.)
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("joins the others without that" in m for m in said), said
