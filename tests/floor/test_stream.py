"""The journal is the outbox: a table's publisher and the floor's collector,
through a real broker."""

from __future__ import annotations

import contextlib
import json
import time

from tests.floor.support import (  # noqa: F401
    append_lines, broker, identity, open_journal, pki, settings, wait_for)
from dealerbox.floor.collecting.collector import Collector
from dealerbox.service.uplink import BIRTH_GRACE_S, CURSOR_NAME, Publisher
from dealerbox.floor.store import Store


def stored_seqs(store: Store, table: str) -> list[int]:
    return [seq for seq, _line in store.lines(table)]


def row(store: Store, table: str = "T01") -> dict:
    return {t["table_id"]: t for t in store.tables()}.get(table) or {"online": None, "health": None}


def test_every_line_reaches_the_store_in_order_and_the_cursor_follows_the_acks(broker, pki, tmp_path):
    jdir = tmp_path / "T01"
    with open_journal(jdir) as journal, Store(tmp_path / "floor.sqlite") as store:
        append_lines(journal, 150)
        with Collector(identity(pki, broker, "floor-collector"), store):
            with Publisher(settings(pki, broker, "T01", batch=16, window=40), jdir) as pub:
                wait_for(lambda: pub.acked == 150, "the floor to acknowledge 150 lines")
                append_lines(journal, 30)
                pub.notify()
                wait_for(lambda: pub.acked == 180, "the next 30 lines")
                assert pub.keep_from_seq() == 181
                wait_for(lambda: (row(store)["health"] or {}).get("backlog") == 0, "health: no backlog")
            wait_for(lambda: row(store)["online"] == 0, "the clean stop shown")
        assert stored_seqs(store, "T01") == list(range(1, 181))
        assert store.verify("T01") == []
        # The lines are stored exactly as the table stored them.
        raw = (jdir / sorted(p.name for p in jdir.glob("journal-*.jsonl"))[0]).read_text().splitlines()
        assert [line for _s, line in store.lines("T01")] == raw
        assert json.loads((jdir / CURSOR_NAME).read_text()) == {"acked": 180}
        assert row(store)["status"]["why"] == "stopped"
        assert not [a for a in store.alerts() if a["kind"] == "offline"]  # a clean stop is no alert


def test_lines_written_while_the_collector_is_away_are_sent_when_it_comes(broker, pki, tmp_path):
    jdir = tmp_path / "T01"
    with open_journal(jdir) as journal, Store(tmp_path / "floor.sqlite") as store:
        with Publisher(settings(pki, broker, "T01"), jdir) as pub:
            append_lines(journal, 20)
            wait_for(lambda: pub.connected and pub.head == 20, "the publisher to see 20 lines")
            # The broker took them (PUBACK) but nobody has them: no ack, no cursor.
            wait_for(lambda: pub.sent_batches >= 1, "a batch sent")
            assert pub.acked == 0
            with Collector(identity(pki, broker, "floor-collector"), store):
                # Sooner than the ack timeout: the collector's birth asks for the backlog.
                wait_for(lambda: pub.acked == 20, "the backlog after the collector came", timeout=2.5)
        assert stored_seqs(store, "T01") == list(range(1, 21))


def test_lines_in_flight_to_a_collector_that_dies_are_sent_again_on_its_last_will(broker, pki, tmp_path):
    """A collector's queue dies with it: the table hears its Last Will and sends again what
    is unacknowledged, so the collectors left file it without waiting for the ack timeout."""
    import socket

    from tests.floor.support import Client
    from dealerbox.link import protocol as P
    dying = Client(identity(pki, broker, "floor-collector"), "floor-collector")
    dying.client.will_set(P.COLLECTOR_TOPIC, P.encode({"online": False, "boot": 1}), qos=1, retain=True)
    watcher = Client(identity(pki, broker, "floor-collector-2"), "floor-collector-2")
    assert dying.connect(broker.port) and watcher.connect(broker.port)
    jdir = tmp_path / "T01"
    try:
        dying.subscribe(P.journal_topic("T01"))
        watcher.subscribe(P.journal_topic("T01"))
        with open_journal(jdir) as journal:
            append_lines(journal, 5)
            # No ack will come, and the ack timeout is far away: only the will can bring them again.
            with Publisher(settings(pki, broker, "T01", ack_timeout_s=600.0), jdir) as pub:
                wait_for(lambda: len(dying.messages) >= 1 and len(watcher.messages) >= 1,
                         "the lines taken by the collector")
                assert pub.acked == 0
                sent = len(watcher.messages)
                dying.client.socket().shutdown(socket.SHUT_RDWR)  # no DISCONNECT: the broker sends the will
                wait_for(lambda: len(watcher.messages) > sent, "the lines sent again after the will")
        seqs = [json.loads(line)["seq"] for _t, payload in watcher.messages
                for line in json.loads(payload)["lines"]]
        assert seqs == [1, 2, 3, 4, 5] * (len(seqs) // 5) and len(seqs) >= 10
    finally:
        dying.close()
        watcher.close()


class FrozenClock:
    """A monotonic clock that moves only when told: what waits for it cannot come early."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _seqs_sent(messages) -> list[int]:
    return [json.loads(line)["seq"] for _t, payload in messages for line in json.loads(payload)["lines"]]


@contextlib.contextmanager
def _five_lines_and_a_collector(broker, pki, tmp_path, *, taken: bool):
    """T01's publisher (on a frozen clock, the ack timeout far away) with 5 lines, and a
    collector that never acknowledges unless told; *taken*: subscribed before they are sent
    (else the broker takes them for nobody, PUBACK reason 16, and it subscribes after)."""
    from tests.floor.support import Client
    from dealerbox.link import protocol as P
    collector = Client(identity(pki, broker, "floor-collector"), "floor-collector")
    assert collector.connect(broker.port)
    clock = FrozenClock()
    jdir = tmp_path / "T01"
    try:
        if taken:
            collector.subscribe(P.journal_topic("T01"))
        with open_journal(jdir) as journal:
            append_lines(journal, 5)
        with Publisher(settings(pki, broker, "T01", ack_timeout_s=600.0), jdir, monotonic=clock) as pub:
            if taken:
                wait_for(lambda: _seqs_sent(collector.messages) == [1, 2, 3, 4, 5], "the lines taken")
            else:
                wait_for(lambda: pub.sent_batches >= 1 and pub._link.unheard, "a batch nobody took")
                collector.subscribe(P.journal_topic("T01"))
            yield collector, pub, clock
    finally:
        collector.close()


def _birth(pki, broker) -> None:
    """A collector (another, or the same one started again) announces itself."""
    from tests.floor.support import Client
    from dealerbox.link import protocol as P
    newcomer = Client(identity(pki, broker, "floor-collector-2"), "floor-collector-2")
    assert newcomer.connect(broker.port)
    try:
        newcomer.publish(P.COLLECTOR_TOPIC, P.encode({"online": True, "boot": 2}))
    finally:
        newcomer.close()


def test_a_collector_starting_beside_another_makes_no_table_send_its_lines_twice(broker, pki, tmp_path):
    """The collector already running has the lines in flight and acknowledges them: the
    newcomer's birth sends nothing again (a group of three filed every table's in-flight
    lines twice whenever one of them started)."""
    from dealerbox.link import protocol as P
    with _five_lines_and_a_collector(broker, pki, tmp_path, taken=True) as (collector, pub, clock):
        _birth(pki, broker)
        collector.publish(P.ack_topic("T01"), P.encode({"acked": 5}))
        wait_for(lambda: pub.acked == 5, "the ack")
        clock.now += 2 * BIRTH_GRACE_S
        time.sleep(1.0)  # what the publisher would send again, it has sent by now
        assert _seqs_sent(collector.messages) == [1, 2, 3, 4, 5]


def test_lines_still_unacknowledged_a_moment_after_a_collector_starts_are_sent_again(broker, pki, tmp_path):
    """Taken by a collector that never acknowledges them: not sent again at the newcomer's
    birth, but once the grace has passed without an ack."""
    with _five_lines_and_a_collector(broker, pki, tmp_path, taken=True) as (collector, pub, clock):
        _birth(pki, broker)
        time.sleep(1.0)  # what the publisher would send again at once, it has sent by now
        assert _seqs_sent(collector.messages) == [1, 2, 3, 4, 5], "sent again before the grace"
        clock.now += BIRTH_GRACE_S
        wait_for(lambda: _seqs_sent(collector.messages) == [1, 2, 3, 4, 5] * 2, "the lines sent again")
        assert pub.acked == 0


def test_lines_the_broker_took_for_no_collector_are_sent_again_at_a_birth_at_once(broker, pki, tmp_path):
    """No collector was subscribed (PUBACK reason 16): a collector's birth brings them again
    at once, the clock not moving at all."""
    with _five_lines_and_a_collector(broker, pki, tmp_path, taken=False) as (collector, _pub, _clock):
        _birth(pki, broker)
        wait_for(lambda: _seqs_sent(collector.messages) == [1, 2, 3, 4, 5], "the lines sent again")


def test_a_duplicate_is_dropped_and_a_changed_duplicate_raises_a_tamper_alert(broker, pki, tmp_path):
    from tests.floor.support import Client
    from dealerbox.link import protocol as P
    jdir = tmp_path / "T01"
    with open_journal(jdir) as journal, Store(tmp_path / "floor.sqlite") as store:
        append_lines(journal, 5)
        with Collector(identity(pki, broker, "floor-collector"), store) as col:
            with Publisher(settings(pki, broker, "T01"), jdir) as pub:
                wait_for(lambda: pub.acked == 5, "5 lines acknowledged")
            lines = [line for _s, line in store.lines("T01")]
            assert col.connected.wait(30)
            table = Client(identity(pki, broker, "T01"), "T01")
            assert table.connect(broker.port)
            try:
                table.publish(P.journal_topic("T01"), P.encode({"lines": lines[2:4]}))
                forged = lines[3].replace('"tick"', '"shoe"')
                table.publish(P.journal_topic("T01"), P.encode({"lines": [forged]}))
                wait_for(lambda: [a for a in store.alerts() if a["kind"] == "tamper"], "a tamper alert")
            finally:
                table.close()
            alerts = [a for a in store.alerts() if a["kind"] == "tamper"]
            assert len(alerts) == 1 and alerts[0]["seq"] == 4
            assert [line for _s, line in store.lines("T01")] == lines
            cleared = col.clear_alert(alerts[0]["id"], "pit boss Novak", "checked the table's journal")
            assert cleared["cleared_by"] == "pit boss Novak"
            assert store.audit()[-1]["who"] == "pit boss Novak"
            assert [a for a in store.alerts() if a["kind"] == "tamper"] == []


def test_a_gap_asks_for_a_resend_and_nothing_after_it_is_stored_first(broker, pki, tmp_path):
    from tests.floor.support import Client
    from dealerbox.link import protocol as P
    jdir = tmp_path / "T01"
    with open_journal(jdir) as journal, Store(tmp_path / "floor.sqlite") as store:
        append_lines(journal, 10)
        lines = (jdir / next(iter(sorted(p.name for p in jdir.glob("journal-*"))))).read_text().splitlines()
        with Collector(identity(pki, broker, "floor-collector"), store) as col:
            assert col.connected.wait(30)
            table = Client(identity(pki, broker, "T01"), "T01")
            assert table.connect(broker.port)
            table.subscribe(P.ack_topic("T01"))
            try:
                table.publish(P.journal_topic("T01"), P.encode({"lines": lines[:3]}))
                table.publish(P.journal_topic("T01"), P.encode({"lines": lines[5:7]}))
                wait_for(lambda: any(b'"resend_from":4' in p for _t, p in table.messages),
                         "a resend request from seq 4")
            finally:
                table.close()
            assert stored_seqs(store, "T01") == [1, 2, 3]
            # The real publisher answers the request and fills the gap.
            with Publisher(settings(pki, broker, "T01"), jdir) as pub:
                wait_for(lambda: pub.acked == 10, "the gap filled")
        assert stored_seqs(store, "T01") == list(range(1, 11))
        assert store.verify("T01") == []


def test_a_collector_that_lost_its_store_gets_everything_again(broker, pki, tmp_path):
    jdir = tmp_path / "T01"
    with open_journal(jdir) as journal:
        append_lines(journal, 30)
        with Store(tmp_path / "first.sqlite") as store, \
                Collector(identity(pki, broker, "floor-collector"), store), \
                Publisher(settings(pki, broker, "T01"), jdir) as pub:
            wait_for(lambda: pub.acked == 30, "30 lines acknowledged")
        append_lines(journal, 5)
        # A new, empty store: the floor asks from seq 1 and the cursor goes back.
        with Store(tmp_path / "second.sqlite") as store, \
                Collector(identity(pki, broker, "floor-collector"), store), \
                Publisher(settings(pki, broker, "T01"), jdir) as pub:
            wait_for(lambda: len(store.lines("T01")) == 35, "every line in the new store")
            wait_for(lambda: pub.acked == 35, "the cursor at 35 again")
            assert stored_seqs(store, "T01") == list(range(1, 36))
            assert store.verify("T01") == []
