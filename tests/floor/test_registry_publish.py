"""The room's registry on the wire, with Debian's mosquitto, the shipped ACL and the collector:
each table is sent its own (retained, QoS 1), a change reaches a connected table within 10 s,
a table heard of for the first time gets the newest, a table's registration goes up and out to
the others, and a hostile table can neither publish a registry (to another table or to itself)
nor read another table's."""

from __future__ import annotations

import json
import time

from dealerbox.floor.collecting.collector import Collector
from dealerbox.floor.store import Store
from dealerbox.link import protocol as P
from tests.floor.registry_support import TableJournal, deck_tags, file_journal
from tests.floor.support import Client, identity, wait_for

#: The issue's bound: a change reaches a connected table within this.
WITHIN_S = 10.0


def registries(client: Client, table: str) -> list:
    """The registries *client* received on *table*'s topic, parsed, in order."""
    return [P.parse_registry(payload) for topic, payload in list(client.messages) if topic == P.registry_topic(table)]


def newest(client: Client, table: str):
    got = registries(client, table)
    return got[-1] if got else None


def table_client(pki, broker, table: str) -> Client:
    client = Client(identity(pki, broker, table), table)
    assert client.connect(broker.port)
    client.subscribe(P.registry_topic(table))
    return client


def say_hello(client: Client, table: str, journal: TableJournal) -> None:
    """The table's journal lines so far, as its uplink sends them (the floor hears of it)."""
    client.publish(P.journal_topic(table), P.encode({"table": table, "boot": 1, "lines": journal.lines}))


def test_each_table_gets_its_registry_and_every_change_within_ten_seconds(broker, pki, tmp_path):
    path = tmp_path / "floor.sqlite"
    with Store(path) as store, Collector(identity(pki, broker, "floor-collector"), store) as collector, \
            Store(path) as admin:   # the admin's command: another process's connection
        assert collector.connected.wait(30)
        t01, t02 = table_client(pki, broker, "T01"), table_client(pki, broker, "T02")
        try:
            journals = {t: TableJournal(t) for t in ("T01", "T02")}
            for client, table in ((t01, "T01"), (t02, "T02")):
                journals[table].add(time.time(), "tick")
                say_hello(client, table, journals[table])
            for client, table in ((t01, "T01"), (t02, "T02")):
                wait_for(lambda c=client, t=table: newest(c, t), f"{table}'s first registry", 30)
                assert newest(client, table).version == 0 and not newest(client, table).decks
            red = deck_tags("Red 7")
            changed = time.monotonic()
            admin.register_deck("Red 7", "red", red, "ann")
            for client, table in ((t01, "T01"), (t02, "T02")):
                wait_for(lambda c=client, t=table: "Red 7" in newest(c, t).decks, f"Red 7 at {table}", WITHIN_S)
            assert time.monotonic() - changed < WITHIN_S
            admin.retire_deck("Red 7", "ann", "marked cards suspected")
            changed = time.monotonic()
            for client, table in ((t01, "T01"), (t02, "T02")):
                wait_for(lambda c=client, t=table: newest(c, t).retired == frozenset(red),
                         f"Red 7 retired at {table}", WITHIN_S)
            assert time.monotonic() - changed < WITHIN_S
            got = newest(t01, "T01")
            assert got.version == admin.registry_version() == 2 and got.decks["Red 7"][1] == red
            # Each table reads its own registry only.
            assert all(topic == P.registry_topic("T01") for topic, _ in t01.messages)
            assert all(topic == P.registry_topic("T02") for topic, _ in t02.messages)
            # A table heard of for the first time gets the newest, retained: it comes on subscribing.
            t03 = table_client(pki, broker, "T03")
            try:
                assert newest(t03, "T03") is None
                journal = TableJournal("T03")
                journal.add(time.time(), "tick")
                say_hello(t03, "T03", journal)
                wait_for(lambda: newest(t03, "T03") and newest(t03, "T03").version == 2, "T03's registry", WITHIN_S)
            finally:
                t03.close()
            t01.close()   # T01 again, as after a restart: the retained registry comes on subscribing
            late = table_client(pki, broker, "T01")
            try:
                wait_for(lambda: newest(late, "T01"), "T01's retained registry", WITHIN_S)
                assert newest(late, "T01").version == 2
            finally:
                late.close()
        finally:
            t01.close()   # again, if the test ended before it was closed: a no-op otherwise
            t02.close()


def test_a_deck_registered_at_one_table_is_sent_to_the_other(broker, pki, tmp_path):
    with Store(tmp_path / "floor.sqlite") as store, \
            Collector(identity(pki, broker, "floor-collector"), store) as collector:
        assert collector.connected.wait(30)
        t01, t02 = table_client(pki, broker, "T01"), table_client(pki, broker, "T02")
        try:
            hello = TableJournal("T02")
            hello.add(time.time(), "tick")
            say_hello(t02, "T02", hello)
            wait_for(lambda: newest(t02, "T02"), "T02's first registry", 30)
            red = deck_tags("Red 7")
            journal = TableJournal("T01")
            journal.add(time.time(), "deck_registered", deck="Red 7", back="red", tags=red)
            registered = time.monotonic()
            say_hello(t01, "T01", journal)
            wait_for(lambda: newest(t02, "T02") and "Red 7" in newest(t02, "T02").decks, "Red 7 at T02", WITHIN_S)
            assert time.monotonic() - registered < WITHIN_S
            assert dict(newest(t02, "T02").decks["Red 7"][1]) == red
            assert store.deck("Red 7")["registered_by"] == "a technician at T01"
        finally:
            t01.close()
            t02.close()


def test_a_hostile_table_can_neither_publish_a_registry_nor_read_anothers(broker, pki, tmp_path):
    with Store(tmp_path / "floor.sqlite") as store, \
            Collector(identity(pki, broker, "floor-collector"), store) as collector:
        assert collector.connected.wait(30)
        store.register_deck("Red 7", "red", deck_tags("Red 7"), "ann")
        t01, hostile = table_client(pki, broker, "T01"), table_client(pki, broker, "T02")
        try:
            for client, table in ((t01, "T01"), (hostile, "T02")):
                journal = TableJournal(table)
                journal.add(time.time(), "tick")
                say_hello(client, table, journal)
                wait_for(lambda c=client, t=table: newest(c, t) and newest(c, t).version == 1,
                         f"{table}'s registry", 30)
            before = {t: P.registry_topic(t) for t in ("T01", "T02")}
            sent = {t: [p for topic, p in c.messages if topic == before[t]]
                    for t, c in (("T01", t01), ("T02", hostile))}
            # A registry of its own making, to another table and to itself, retained: refused.
            forged = json.loads(sent["T01"][-1])
            forged.update(version=99, decks={}, retired=[])
            forged["fingerprint"] = P.registry_fingerprint({}, [], forged["badges"], forged["revoked"])
            for table in ("T01", "T02"):
                refused = hostile.publish(P.registry_topic(table), json.dumps(forged).encode(), retain=True)
                assert refused.value == 135   # MQTT v5: not authorized
            # It may not read another table's registry either: subscribed, it is sent nothing.
            hostile.subscribe(P.registry_topic("T01"))
            time.sleep(2.0)
            assert all(topic == P.registry_topic("T02") for topic, _ in hostile.messages)
            # Nothing changed: no table was sent anything new, and a table subscribing afresh gets the floor's.
            assert [p for topic, p in t01.messages if topic == before["T01"]] == sent["T01"]
            assert [p for topic, p in hostile.messages if topic == before["T02"]] == sent["T02"]
            fresh = table_client(pki, broker, "T01")
            try:
                wait_for(lambda: newest(fresh, "T01"), "T01's retained registry", WITHIN_S)
                assert newest(fresh, "T01").version == 1 and "Red 7" in newest(fresh, "T01").decks
            finally:
                fresh.close()
            assert store.registry_version() == 1 and [d["name"] for d in store.decks()] == ["Red 7"]
        finally:
            t01.close()
            hostile.close()


def test_a_floor_told_not_to_publish_sends_no_table_a_registry(broker, pki, tmp_path):
    # A group's floor: its floor/ topics reach every property's broker through the bridges,
    # and a property's tables must hear their own floor's registry only.
    with Store(tmp_path / "floor.sqlite") as store, \
            Collector(identity(pki, broker, "floor-collector"), store, publish_registry=False) as collector:
        assert collector.connected.wait(30)
        store.register_deck("Red 7", "red", deck_tags("Red 7"), "ann")
        t01 = table_client(pki, broker, "T01")
        try:
            journal = TableJournal("T01")
            journal.add(time.time(), "deck_registered", deck="Blue 1", back="blue", tags=deck_tags("Blue 1"))
            say_hello(t01, "T01", journal)
            wait_for(lambda: store.deck("Blue 1"), "T01's registration filed", WITHIN_S)   # filed all the same
            time.sleep(2.0)
            assert registries(t01, "T01") == [] and collector.registry_publisher.published == 0
        finally:
            t01.close()


def test_a_registry_the_broker_would_refuse_is_not_sent_and_said_once(broker, pki, tmp_path, caplog):
    with Store(tmp_path / "floor.sqlite") as store, \
            Collector(identity(pki, broker, "floor-collector"), store) as collector:
        assert collector.connected.wait(30)
        t01 = table_client(pki, broker, "T01")
        try:
            journal = TableJournal("T01")
            journal.add(time.time(), "tick")
            say_hello(t01, "T01", journal)
            wait_for(lambda: newest(t01, "T01"), "T01's first registry", 30)
            # As if the room had a thousand decks: the same bound, met by one deck.
            collector.registry_max_bytes = 1000
            store.register_deck("Red 7", "red", deck_tags("Red 7"), "ann")
            wait_for(lambda: "not sent" in caplog.text, "the registry said too big", WITHIN_S)
            time.sleep(2.0)
            assert [r.version for r in registries(t01, "T01")] == [0]
            assert caplog.text.count("the room's registry takes") == 1
        finally:
            t01.close()


def test_an_older_registry_another_collector_sent_late_is_replaced_by_the_newest(broker, pki, tmp_path):
    # Two collectors publish: one that read the store before a change may publish after the
    # other sent the change, and stop. The broker would keep the older (a retired deck dealing
    # again); the collector still running hears it and sends the newest again.
    with Store(tmp_path / "floor.sqlite") as store, \
            Collector(identity(pki, broker, "floor-collector"), store) as collector:
        assert collector.connected.wait(30)
        store.register_deck("Red 7", "red", deck_tags("Red 7"), "ann")
        old = store.registry_payload("T01")[2]
        t01 = table_client(pki, broker, "T01")
        try:
            journal = TableJournal("T01")
            journal.add(time.time(), "tick")
            say_hello(t01, "T01", journal)
            wait_for(lambda: newest(t01, "T01") and newest(t01, "T01").version == 1, "T01's registry", 30)
            store.retire_deck("Red 7", "ann", "marked cards suspected")
            wait_for(lambda: newest(t01, "T01").version == 2, "the retirement at T01", WITHIN_S)
            late = Client(identity(pki, broker, "floor-collector-2"), "floor-collector-2")
            assert late.connect(broker.port)
            try:
                assert late.publish(P.registry_topic("T01"), old, retain=True).value == 0
            finally:
                late.close()   # and stops: nobody else would correct it
            wait_for(lambda: newest(t01, "T01").version == 1, "the late copy at T01", WITHIN_S)
            changed = time.monotonic()
            wait_for(lambda: newest(t01, "T01").version == 2, "the newest again at T01", WITHIN_S)
            assert time.monotonic() - changed < WITHIN_S
            fresh = table_client(pki, broker, "T01")   # what the broker keeps: the newest
            try:
                wait_for(lambda: newest(fresh, "T01"), "T01's retained registry", WITHIN_S)
                assert newest(fresh, "T01").version == 2 and newest(fresh, "T01").retired
            finally:
                fresh.close()
        finally:
            t01.close()


def test_the_registry_pass_files_on_a_connection_of_its_own(broker, pki, tmp_path):
    # The writer's lock held (a long batch): the registry pass reads and files all the same.
    path = tmp_path / "floor.sqlite"
    with Store(path) as store, Store(path) as admin, \
            Collector(identity(pki, broker, "floor-collector"), store) as collector:
        assert collector.connected.wait(30)
        journal = TableJournal("T01")
        journal.add(time.time(), "deck_registered", deck="Red 7", back="red", tags=deck_tags("Red 7"))
        file_journal(admin, journal)
        with store.lock:
            wait_for(lambda: admin.deck("Red 7"), "T01's registration filed", WITHIN_S)
        assert collector.registry.store is not store and collector.registry_publisher.store is not store
