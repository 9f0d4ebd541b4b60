"""The floor's store on both backends: SQLite (the default) and PostgreSQL from Debian's
packages. Its schema migrations, from every earlier release's store; two filers given one
table's batches out of order; the store's server restarted under it; and
``dealerbox floor migrate``, which moves an SQLite floor into PostgreSQL."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
import threading
import uuid
from dataclasses import replace

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import MetaData, inspect

from tests.floor.test_collector import journal, journal_lines, message, open_alerts, status
from tests.floor.test_figures import T0, all_queries, file_lines, filled_store, room  # noqa: F401
from tests.floor.support import wait_for
from tests.floor.registry_support import TableJournal, deck_tags, file_journal
from tests.floor.commission_support import record as commission_record
from dealerbox.floor.collecting.registry_pass import RegistryPass
from dealerbox.errors import ConfigError
from dealerbox.errors import FloorError
from dealerbox.floor import migrations as M
from dealerbox.floor.operating.settings import load_web
from dealerbox.floor.telling.figures import FIGURES, Ledger
from dealerbox.floor.collecting.filing import Filing
from dealerbox.floor.operating.move import move_store
from dealerbox.floor.store import METADATA, Store, StoreUnavailable, store_engine

DEALERBOX = [sys.executable, "-m", "dealerbox.cli"]

#: The store as the floor's first release made it (before the migrations existed).
FIRST_RELEASE = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tables (table_id TEXT PRIMARY KEY, last_seq INTEGER NOT NULL DEFAULT 0,
    last_hash TEXT NOT NULL DEFAULT '', first_seq INTEGER, boot INTEGER NOT NULL DEFAULT 0,
    conn INTEGER NOT NULL DEFAULT 0, online INTEGER NOT NULL DEFAULT 0,
    status TEXT, state TEXT, health TEXT, seen REAL);
CREATE TABLE lines (table_id TEXT NOT NULL, seq INTEGER NOT NULL, line TEXT NOT NULL,
    hash TEXT NOT NULL, chain_ok INTEGER NOT NULL, committed REAL NOT NULL,
    PRIMARY KEY (table_id, seq)) WITHOUT ROWID;
CREATE TABLE alerts (id INTEGER PRIMARY KEY, table_id TEXT NOT NULL, kind TEXT NOT NULL,
    text TEXT NOT NULL, seq INTEGER, raised REAL NOT NULL, cleared_by TEXT, cleared_at REAL, note TEXT);
CREATE TABLE audit (id INTEGER PRIMARY KEY, at REAL NOT NULL, who TEXT NOT NULL,
    action TEXT NOT NULL, alert_id INTEGER, detail TEXT);
"""
#: What the last release before the migrations added to it, each start creating what it lacked.
LAST_RELEASE = FIRST_RELEASE + """
CREATE TABLE quarantine (table_id TEXT NOT NULL, seq INTEGER NOT NULL, hash TEXT NOT NULL,
    line TEXT NOT NULL, why TEXT NOT NULL, received REAL NOT NULL, times INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (table_id, seq, hash)) WITHOUT ROWID;
ALTER TABLE alerts ADD COLUMN count INTEGER NOT NULL DEFAULT 1;
ALTER TABLE alerts ADD COLUMN last_seq INTEGER;
ALTER TABLE alerts ADD COLUMN last_text TEXT;
ALTER TABLE alerts ADD COLUMN last_raised REAL;
CREATE INDEX alerts_open ON alerts (table_id, kind) WHERE cleared_at IS NULL;
CREATE TABLE dealer_names (dealer TEXT PRIMARY KEY, name TEXT NOT NULL, changed REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE users (name TEXT PRIMARY KEY, role TEXT NOT NULL, hash TEXT NOT NULL,
    created REAL NOT NULL, changed REAL NOT NULL);
CREATE TABLE sessions (key TEXT PRIMARY KEY, user TEXT NOT NULL, csrf TEXT NOT NULL,
    created REAL NOT NULL, seen REAL NOT NULL, address TEXT NOT NULL);
CREATE INDEX sessions_user ON sessions (user);
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request, tmp_path):
    """A new store's target on each backend: an SQLite file, a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return tmp_path / "floor.sqlite"
    return request.getfixturevalue("postgres_cluster").database(f"floor_{uuid.uuid4().hex[:12]}")


def schema_differences(engine) -> list:
    """What differs between the store's tables at *engine* and the models (the store's and
    the figures' tables).

    Left out: the old SQLite stores declared their primary keys without NOT NULL, which
    SQLite takes literally. An INTEGER PRIMARY KEY is the rowid and cannot be NULL, and the
    store never writes a NULL key."""
    models = MetaData()
    for table in (*METADATA.tables.values(), *FIGURES.tables.values()):
        table.to_metadata(models)
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={
            "include_name": lambda name, kind, _parent: kind != "table" or name in models.tables})
        found = compare_metadata(context, models)
    return [d for d in found
            if not (engine.dialect.name == "sqlite" and isinstance(d, list) and d[0][0] == "modify_nullable"
                    and models.tables[d[0][2]].c[d[0][3]].primary_key)]


def test_a_new_store_is_at_the_newest_revision_and_as_the_models_say(target):
    with Store(target) as store:
        assert M.current(store.engine) == M.head()
        assert schema_differences(store.engine) == []


@pytest.mark.parametrize("release", [FIRST_RELEASE, LAST_RELEASE], ids=["first release", "last release"])
def test_a_store_of_an_earlier_release_is_migrated_on_opening_and_keeps_its_rows(tmp_path, release):
    path = tmp_path / "floor.sqlite"
    old = sqlite3.connect(path)
    old.executescript(release)
    lines = journal_lines(3)
    old.executemany("INSERT INTO lines VALUES ('T01', ?, ?, ?, 1, 1000.0)",
                    [(i + 1, line, "h") for i, line in enumerate(lines)])
    old.execute("INSERT INTO tables (table_id, last_seq, last_hash) VALUES ('T01', 3, 'h')")
    old.execute("INSERT INTO alerts (table_id, kind, text, seq, raised) VALUES ('T01', 'chain', 'old', 2, 5.0)")
    old.execute("INSERT INTO audit (at, who, action, alert_id, detail) VALUES (6.0, 'sam', 'clear', 9, 'x')")
    old.execute("INSERT INTO meta VALUES ('collector_boot', '7')")
    old.commit()
    old.close()
    with Store(path) as store:
        assert M.current(store.engine) == M.head()
        assert schema_differences(store.engine) == []
        assert [line for _seq, line in store.lines("T01")] == lines
        assert store.table("T01")["last_seq"] == 3
        (alert,) = store.alerts()
        assert (alert["text"], alert["count"], alert["last_text"]) == ("old", 1, "old")
        # The old alert takes the new behaviour: a second one of its kind folds into it.
        assert store.raise_alert("T01", "chain", "again", 3, 8.0)["count"] == 2
        assert store.audit()[0]["who"] == "sam"
        assert store.counter("collector_boot") == 8
        assert store.add_user("vera", "viewer", "h", 1.0) and store.dealer_names() == {}


def test_the_migrations_go_down_to_nothing_and_up_again(target):
    with Store(target) as store:
        engine = store.engine
        M.downgrade(engine, "base")
        assert [t for t in inspect(engine).get_table_names() if t != "alembic_version"] == []
        M.upgrade(engine)
        assert M.current(engine) == M.head() and schema_differences(engine) == []


def test_stores_opened_at_once_migrate_the_schema_once(target):
    opened, failed = [], []

    def open_one():
        try:
            opened.append(Store(target))
        except Exception as exc:  # noqa: BLE001: the test reports every failure
            failed.append(exc)
    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failed == [] and len(opened) == 4
    assert {store.counter("boot") for store in opened} == {1, 2, 3, 4}
    assert M.current(opened[0].engine) == M.head()
    for store in opened:
        store.close()


def test_two_filers_given_one_tables_batches_out_of_order_store_each_line_once(target):
    """Two collectors' filings, each its own connection, receive the batches of three tables
    in no order at all and at the same time (as a shared subscription may hand them out).
    The seq and chain checks run inside each one's transaction, under the table's row lock:
    every line is stored once, in its place, and each gap is asked for again."""
    count = 120
    tables = ("T01", "T02", "T03")
    lines = {t: journal_lines(count) for t in tables}
    stores = [Store(target), Store(target)]
    filings = [Filing(s) for s in stores]
    rng = random.Random(5)
    done = threading.Event()

    def filer(filing, seed):
        r = random.Random(seed)
        while not done.is_set():
            table = r.choice(tables)
            start = r.randrange(1, count + 1)
            batch = lines[table][start - 1:start - 1 + r.randrange(1, 12)]
            filing.store_batch([journal(table, batch)], 1000.0)
    threads = [threading.Thread(target=filer, args=(f, rng.random())) for f in filings]
    for t in threads:
        t.start()
    try:
        wait_for(lambda: all(stores[1].line_counts().get(t, (0, 0, 0))[2] == count for t in tables),
                 "every line of every table stored", 120)
    finally:
        done.set()
        for t in threads:
            t.join()
    for table in tables:
        assert stores[1].lines(table) == list(enumerate(lines[table], start=1))
        assert stores[1].verify(table) == []
        assert open_alerts(stores[1], table) == []  # out of order is no one's fault
    for store in stores:
        store.close()


def test_a_table_another_collector_is_filing_waits_for_the_next_batch_alone(postgres_cluster):
    """On PostgreSQL a collector that finds a table's row locked by another does not wait
    behind that lock with its whole batch: the rest is filed and acknowledged, and that
    table's messages come back to be filed after the other's commit, in their order."""
    url = postgres_cluster.database("busy")
    lines = journal_lines(8)
    with Store(url) as holder, Store(url) as store:
        filing = Filing(store)
        assert filing.store_batch([journal("T01", lines[:2])], 1.0).acks == {"T01": 2}
        with holder.lock:
            holder.begin()
            holder.ensure_table("T01")
            busy = [journal("T01", lines[2:5]), journal("T01", lines[5:])]
            done = filing.store_batch([*busy, journal("T02", lines[:3])], 2.0)
            assert done.acks == {"T02": 3}
            assert done.deferred == busy
            holder.rollback()
        assert filing.store_batch(done.deferred, 3.0).acks == {"T01": 8}
        assert store.lines("T01") == list(enumerate(lines, start=1)) and store.verify("T01") == []
        assert store.alerts() == []


def early_seqs(store: Store, table: str) -> list[int]:
    with store.lock:
        return [seq for seq, _line, _hash in store.early_lines(table)]


def test_lines_ahead_of_a_gap_wait_in_the_store_for_the_collector_that_fills_it(target):
    """With several collectors, a table's next message often reaches one collector while
    the message before it is still in another's batch. Its lines are kept in the store,
    neither the record nor acknowledged, and nothing is asked again; the other collector's
    filing of the lines before them files them too, in the same transaction, and
    acknowledges all. A gap nobody fills is asked for once it has been open GAP_WAIT_S."""
    from dealerbox.floor.collecting.filing import GAP_WAIT_S

    lines = journal_lines(10)
    with Store(target) as one, Store(target) as other:
        first, second = Filing(one), Filing(other)
        assert first.store_batch([journal("T01", lines[:3])], 100.0).acks == {"T01": 3}
        done = first.store_batch([journal("T01", lines[5:7]), journal("T02", lines[:1])], 100.1)
        assert (done.deferred, done.acks, done.resends) == ([], {"T02": 1}, {})
        assert one.lines("T01") == list(enumerate(lines[:3], start=1)) and early_seqs(one, "T01") == [6, 7]
        assert first.open_gaps(100.1 + GAP_WAIT_S / 2) == {}
        # The other collector files seq 4-5, and with them the lines that waited.
        done = second.store_batch([journal("T01", lines[3:5])], 100.6)
        assert (done.acks, done.resends) == ({"T01": 7}, {})
        assert early_seqs(one, "T01") == [] and one.table("T01")["early_at"] is None
        # A gap nobody fills: asked for once it has been open long enough, by the next
        # message ahead of it or by the collector looking between batches.
        assert first.store_batch([journal("T01", lines[8:9])], 200.0).resends == {}
        assert first.open_gaps(200.0 + GAP_WAIT_S / 2) == {}
        assert first.open_gaps(200.0 + GAP_WAIT_S) == {"T01": 8}
        done = second.store_batch([journal("T01", lines[9:])], 200.0 + GAP_WAIT_S * 2)
        assert (done.acks, done.resends) == ({}, {"T01": 8})
        assert early_seqs(one, "T01") == [9, 10]
        # The table sends again from seq 8: stored once each, in order, the chain whole.
        assert first.store_batch([journal("T01", lines[7:])], 203.0).acks == {"T01": 10}
        assert one.lines("T01") == list(enumerate(lines, start=1)) and one.verify("T01") == []
        assert early_seqs(one, "T01") == [] and first.open_gaps(300.0) == {}
        assert one.alerts() == []  # out of order is no one's fault


def test_a_line_kept_ahead_of_a_gap_that_breaks_the_chain_or_changes_is_kept_aside(target):
    """Lines kept ahead of a gap are checked as any: a seq sent again there with other
    content is kept aside (``tamper``); one that does not chain to the lines that fill the
    gap is kept aside (``chain``) and asked for again; neither becomes the record."""
    import json

    lines = journal_lines(8)
    forged = json.dumps({**json.loads(lines[5]), "prev": "0" * 64}, separators=(",", ":"))
    with Store(target) as store:
        filing = Filing(store)
        assert filing.store_batch([journal("T01", lines[:3])], 1.0).acks == {"T01": 3}
        assert filing.store_batch([journal("T01", [forged, *lines[6:]])], 1.1).acks == {}
        # The genuine seq 6 sent while the forgery is kept: the second of two is kept aside.
        assert filing.store_batch([journal("T01", lines[5:7])], 1.2).acks == {}
        assert [(q["seq"], q["why"]) for q in store.quarantined("T01")] == [(6, "tamper")]
        assert early_seqs(store, "T01") == [6, 7, 8]
        done = filing.store_batch([journal("T01", lines[3:5])], 1.3)
        # The kept seq 6 does not chain to seq 5: kept aside, and asked for again.
        assert (done.acks, done.resends) == ({"T01": 5}, {"T01": 6})
        assert store.lines("T01") == list(enumerate(lines[:5], start=1))
        assert ("chain", 6) in {(q["why"], q["seq"]) for q in store.quarantined("T01")}
        assert filing.store_batch([journal("T01", lines[5:])], 1.4).acks == {"T01": 8}
        assert store.lines("T01") == list(enumerate(lines, start=1)) and store.verify("T01") == []
        assert early_seqs(store, "T01") == []
        assert {a["kind"] for a in open_alerts(store, "T01")} == {"tamper", "chain"}


def test_messages_a_full_queue_dropped_are_asked_for_again_from_what_is_filed(target):
    """A table that sends faster than the collector's queue for it holds loses messages
    there: a ``protocol`` alert, and the table is asked to send again from its first line
    not filed (in the batch that files some of its lines, from after those)."""
    lines = journal_lines(6)
    with Store(target) as store:
        filing = Filing(store)
        assert filing.store_batch([journal("T01", lines[:2])], 1.0).acks == {"T01": 2}
        done = filing.store_batch([], 2.0, dropped={"T01": 3})
        assert (done.acks, done.resends) == ({}, {"T01": 3})
        done = filing.store_batch([journal("T01", lines[2:4])], 5.0, dropped={"T01": 1})
        assert (done.acks, done.resends) == ({"T01": 4}, {"T01": 5})
        assert [a["count"] for a in open_alerts(store, "T01", "protocol")] == [2]
        # A table the floor has never filed a line of has nothing to be asked from.
        assert filing.store_batch([], 6.0, dropped={"T02": 1}).resends == {}


def test_a_retained_message_delivered_again_on_subscribe_is_filed_only_when_it_is_news(target):
    """A collector that subscribes gets every table's retained status, state and health
    again: what the store holds already costs no row lock and no write; what differs
    (a table's Last Will that came while no collector ran) is filed."""
    with Store(target) as store:
        filing = Filing(store)
        birth = status("T01", 1)
        assert filing.store_batch([birth], 1.0).refreshed == {"T01"}
        done = filing.store_batch([replace(birth, received=2.0, retained=True)], 2.0)
        assert (done.refreshed, done.changed) == (set(), set())
        assert store.table("T01")["seen"] == 1.0
        will = status("T01", 1, online=False)
        assert filing.store_batch([replace(will, received=3.0, retained=True)], 3.0).refreshed == {"T01"}
        assert store.table("T01")["online"] == 0
        # The same payload live (not retained) is filed as always.
        assert filing.store_batch([replace(will, received=4.0, retained=False)], 4.0).refreshed == {"T01"}
        assert store.table("T01")["seen"] == 4.0


def test_a_batch_sending_lines_twice_finds_the_ones_it_stored_itself(target):
    """Lines are written when the batch commits: a later message of the same batch that
    sends them again is still checked against them (a forged one is kept aside)."""
    lines = journal_lines(6)
    forged = lines[3].replace('"tick"', '"tock"')
    with Store(target) as store:
        filing = Filing(store)
        done = filing.store_batch([journal("T01", lines[:5]), journal("T01", [*lines[2:3], forged, *lines[4:]])],
                                  1.0)
        assert done.acks == {"T01": 6}
        assert store.lines("T01") == list(enumerate(lines, start=1))
        assert [(q["seq"], q["why"]) for q in store.quarantined("T01")] == [(4, "tamper")]
        assert [a["kind"] for a in open_alerts(store, "T01")] == ["tamper"]


def test_one_collector_at_a_time_files_the_figures_on_postgresql(postgres_cluster, room):  # noqa: F811
    """Collectors leave the figures to the one filing them (instead of each reading every
    table's new lines); the web view waits for it and then finds them filed."""
    from sqlalchemy import create_engine

    from dealerbox.floor.telling.figures import _FIGURES_LOCK_KEY

    url = postgres_cluster.database("figures_lock")
    with Store(url) as store:
        for table, lines in room.items():
            file_lines(store, table, lines)
        engine = store_engine(url)
        other = create_engine(url)
        try:
            with other.connect() as holder:
                holder.exec_driver_sql(f"SELECT pg_advisory_lock({_FIGURES_LOCK_KEY})")
                assert Ledger().catch_up(engine, wait=False) == 0
                holder.exec_driver_sql(f"SELECT pg_advisory_unlock({_FIGURES_LOCK_KEY})")
                holder.commit()
            assert Ledger().catch_up(engine, wait=False) == sum(len(v) for v in room.values())
            assert Ledger().catch_up(engine) == 0
        finally:
            other.dispose()
            engine.dispose()


def test_a_postgresql_restart_under_an_open_store_costs_at_most_the_batch_in_flight(postgres_cluster):
    """The server killed between two batches: the next batch finds a new connection. Killed
    in the middle of a batch: that batch fails (nothing of it stored, nothing acked: the
    table sends it again), and the one after is filed."""
    from sqlalchemy.exc import OperationalError

    url = postgres_cluster.database("restarted")
    lines = journal_lines(30)
    with Store(url) as store:
        filing = Filing(store)
        assert filing.store_batch([journal("T01", lines[:10])], 1.0).acks == {"T01": 10}
        postgres_cluster.kill()
        postgres_cluster.start()
        assert filing.store_batch([journal("T01", lines[10:20])], 2.0).acks == {"T01": 20}
        with store.lock:
            store.begin()
            store.ensure_table("T01")
            postgres_cluster.kill()
            postgres_cluster.start()
            store.add_line("T01", 21, lines[20], "h", True, 3.0)
            with pytest.raises(OperationalError):
                store.flush()  # the transaction's writes go out together: the server is gone
            store.rollback()
        # The table sends again what was not acknowledged: stored once, acked.
        assert filing.store_batch([journal("T01", lines[15:30])], 4.0).acks == {"T01": 30}
        assert store.lines("T01") == list(enumerate(lines, start=1)) and store.verify("T01") == []
        assert store.alerts() == []


def test_the_data_version_moves_with_every_commit_of_another_connection(target):
    with Store(target) as writer, Store(target) as watcher:
        before = watcher.data_version()
        Filing(writer).store_batch([status("T01", 1)], 1.0)
        assert watcher.data_version() != before


def test_a_hostile_tables_text_is_stored_on_both_backends_or_refused_for_it_alone(target):
    with Store(target) as store:
        filing = Filing(store)
        done = filing.store_batch([journal("T01", journal_lines(2)),
                                   message(status("T02", 1).topic,
                                           b'{"table":"T02","online":true,"why":"bi\\u0000rth",'
                                           b'"boot":1,"conn":1,"wall":1.0}'),
                                   journal("T03", journal_lines(2))], 1.0)
        assert done.acks == {"T01": 2, "T03": 2}
        assert store.table("T02") is not None or open_alerts(store, "T02", "protocol")
        assert [len(store.lines(t)) for t in ("T01", "T03")] == [2, 2]


def test_a_store_url_in_floor_toml(tmp_path):
    path = tmp_path / "floor.toml"
    path.write_text('[store]\nurl = "postgresql://floor@db.casino.example:5432/dealerbox"\n')
    assert load_web(path).store == "postgresql://floor@db.casino.example:5432/dealerbox"
    for body, says in [
        ('[store]\nurl = "mysql://floor:s3cret@db/dealerbox"\n', "store.url"),
        ('[store]\nurl = "postgresql://floor:s3cret@db"\n', "store.url"),
        ('[store]\npath = "f.sqlite"\nurl = "postgresql://floor:s3cret@db/d"\n', "not both"),
        ('[store]\nurl = 5\n', "store.url"),
    ]:
        path.write_text(body)
        with pytest.raises(ConfigError) as refused:
            load_web(path)
        assert says in str(refused.value) and str(path) in str(refused.value)
        assert "s3cret" not in str(refused.value)  # a password never reaches a message


def test_a_store_that_cannot_be_reached_says_so_without_its_password(postgres_cluster):
    url = postgres_cluster.url.replace(f":{postgres_cluster.port}/", ":1/")
    with pytest.raises(StoreUnavailable) as refused:
        Store(url)
    assert "cannot be opened" in str(refused.value)
    assert postgres_cluster.password not in str(refused.value)


def test_floor_migrate_moves_an_sqlite_floor_into_postgresql(tmp_path, room, postgres_cluster):
    """``floor migrate --from``: every row, the chains reading as they did, the same figures;
    a second run into the filled store is refused; ``--check`` says where a store stands."""
    lite = filled_store(tmp_path / "floor.sqlite", room)
    with Store(lite) as store:
        store.add_user("vera", "viewer", "argon-hash", 1.0)
        store.set_dealer_name("1042", "Ann Example", 2.0)
        store.add_session("k", "vera", "c", 3.0, "10.0.0.9")
        # The room's registry: a deck through its life, one in play, a badge revoked.
        store.receive_deck("Red 7", "red", 54, "ann", now=T0)
        store.register_deck("Red 7", "red", deck_tags("Red 7"), "ann", now=T0 + 60)
        store.retire_deck("Red 7", "ann", "marked cards suspected", now=T0 + 3600)
        store.register_deck("Blue 1", "blue", deck_tags("Blue 1"), None, table="T01", seq=7, now=T0 + 120)
        store.register_badge("08A1B2C3", "1042", "ann", now=T0 + 180)
        store.revoke_badge("08A1B2C3", "ann", "left the house", now=T0 + 240)
        # A table's commissioning record, filed by the registry pass.
        t09 = TableJournal("T09")
        t09.add(T0 + 300, "commissioned", **commission_record(T0 + 300))
        file_journal(store, t09)
        RegistryPass(store).catch_up()
        assert len(store.commissionings("T09")) == 1
    url = postgres_cluster.database("moved")
    config = tmp_path / "floor.toml"
    config.write_text(f'[store]\nurl = "{url}"\n')

    def floor(*args):
        return subprocess.run([*DEALERBOX, "floor", *args, "--config", str(config)],
                              capture_output=True, text=True, timeout=300)
    moved = floor("migrate", "--from", str(lite))
    assert moved.returncode == 0, moved.stderr
    assert "chains read as in the source" in moved.stdout and postgres_cluster.password not in moved.stdout
    with Store(lite) as source, Store(url) as copy:
        for table in room:
            assert copy.lines(table) == source.lines(table) and copy.verify(table) == []
        assert copy.alerts(open_only=False) == source.alerts(open_only=False)
        assert copy.audit() == source.audit()
        assert copy.users() == [{**u, "sessions": 0} for u in source.users()]  # they sign in again
        assert copy.dealer_names() == {"1042": "Ann Example"}
        assert copy.meta("collector_boot") == source.meta("collector_boot")
        # The registry survives the move: the same decks, tags, badges, log and version the tables are sent.
        assert copy.decks() == source.decks() and copy.deck("Red 7") == source.deck("Red 7")
        assert copy.badges() == source.badges()
        assert copy.registry_steps() == source.registry_steps()
        assert copy.registry_behind() == source.registry_behind()
        assert copy.registry_payload() == source.registry_payload()
        assert copy.commissionings("T09") == source.commissionings("T09")
        # The next step of the card control log draws an id after the copied ones.
        copy.destroy_deck("Red 7", "ann", "bob", now=T0 + 7200)
        assert [s["step"] for s in copy.registry_steps(deck="Red 7")] == [
            "received", "registered", "retired", "destroyed"]
        # New alerts draw ids after the copied ones.
        newest = max(a["id"] for a in source.alerts(open_only=False))
        assert copy.raise_alert("T09", "offline", "new", None, 9.0)["id"] == newest + 1
        start, end = T0 - 600.0, T0 + 11 * 3600.0
        engines = store_engine(lite), store_engine(url)
        Ledger().catch_up(engines[0])  # the copy's figures were filed by the move
        try:
            with engines[0].connect() as a, engines[1].connect() as b:
                assert all_queries(b, room, start, end) == all_queries(a, room, start, end)
        finally:
            for engine in engines:
                engine.dispose()
    again = floor("migrate", "--from", str(lite))
    assert again.returncode == 2 and "holds tables, lines" in again.stderr
    assert floor("migrate", "--check").returncode == 0
    missing = floor("migrate", "--from", str(tmp_path / "no.sqlite"))
    assert missing.returncode == 2 and "no such SQLite store" in missing.stderr


def test_a_store_is_not_moved_into_itself(tmp_path):
    with Store(tmp_path / "a.sqlite") as a, Store(tmp_path / "a.sqlite") as b:
        with pytest.raises(FloorError, match="both"):
            move_store(a, b)


def test_migrate_check_says_a_store_is_behind(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(FIRST_RELEASE)
    db.close()
    config = tmp_path / "floor.toml"
    config.write_text(f'[store]\npath = "{path}"\n')
    check = subprocess.run([*DEALERBOX, "floor", "migrate", "--check", "--config", str(config)],
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 1 and f"the newest is {M.head()}" in check.stdout
    done = subprocess.run([*DEALERBOX, "floor", "migrate", "--config", str(config)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and M.head() in done.stdout


def test_a_users_sessions_past_the_cap_end_with_the_least_recently_used_on_each_backend(target):
    with Store(target) as store:
        store.add_user("vera", "viewer", "argon-hash", 1.0)
        store.add_user("sam", "supervisor", "argon-hash", 1.0)
        store.add_session("sam-1", "sam", "c", 1.0, "10.0.0.2")
        for n in range(6):
            store.add_session(f"vera-{n}", "vera", "c", 10.0 + n, "10.0.0.1")
        store.touch_session("vera-0", 99.0)   # the oldest, but used last
        assert store.drop_sessions_beyond("vera", 3) == 3
        assert [k for k in ("vera-0", "vera-1", "vera-2", "vera-3", "vera-4", "vera-5")
                if store.session(k)] == ["vera-0", "vera-4", "vera-5"]
        assert store.session("sam-1") is not None    # another user's are not counted
        assert store.drop_sessions_beyond("vera", 3) == 0
