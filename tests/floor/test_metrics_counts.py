"""The metrics' per-table counters (issue 47), read from the tables' own rows rather than counted
over the store's history, on SQLite and PostgreSQL: lines filed equal the lines the store holds,
counted here with SQL of the test's own, and the refusals equal the refusals the test made,
through everything the filing meets: lines sent twice, out of order and ahead of a gap; a
journal that starts past seq 1; lines that break the chain or come again changed; messages the
floor cannot use, one refused only once the batch is filed again message by message; a flood
dropped; a collector restarted; two collectors filing the same tables at once. Every table the
floor knows is at 0 until it counts; a store of an earlier release starts from its history."""

from __future__ import annotations

import json
import random
import threading

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text

from dealerbox.floor import migrations as M
from dealerbox.floor.collecting.filing import Filing
from dealerbox.floor.store import Store
from dealerbox.floor.web.metrics import StoreCollector
from dealerbox.link import protocol as P
from tests.floor.support import wait_for
from tests.floor.test_collector import journal, journal_lines, message, open_alerts, status
from tests.floor.test_store import target  # noqa: F401  (a new store on each backend)


def scraped(store: Store) -> dict[str, dict[str, float]]:
    """The counters as a scrape gives them (the view's own collector): per table, ``filed``
    and each ``why`` of the refused."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(StoreCollector(store.engine))
    out: dict[str, dict[str, float]] = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for s in family.samples:
            if s.name == "dealerbox_floor_lines_filed_total":
                out.setdefault(s.labels["table"], {})["filed"] = s.value
            elif s.name == "dealerbox_floor_lines_rejected_total":
                out.setdefault(s.labels["table"], {})[s.labels["why"]] = s.value
    return out


def stored_lines(store: Store) -> dict[str, int]:
    """The lines the store holds per table, counted over every line (the test's own SQL)."""
    with store.engine.connect() as conn:
        return dict(conn.execute(text("SELECT table_id, count(*) FROM lines GROUP BY table_id")).all())


def forged(line: str) -> str:
    """*line* chained to nothing: it breaks its table's chain."""
    d = json.loads(line)
    d["prev"] = "0" * 64
    return json.dumps(d, separators=(",", ":"))


def changed(line: str) -> str:
    """*line* with other content at the same seq and after the same line."""
    d = json.loads(line)
    d["event"]["ev"] = "changed"
    return json.dumps(d, separators=(",", ":"))


def test_the_counters_equal_the_store_through_everything_the_filing_meets(target, monkeypatch):  # noqa: F811
    t01, t02, t03 = journal_lines(40), journal_lines(12, start=50), journal_lines(10)
    refused = {"T01": {"chain": 0, "protocol": 0}, "T02": {"chain": 0, "protocol": 0},
               "T03": {"chain": 0, "protocol": 0}, "T04": {"chain": 0, "protocol": 0}}
    with Store(target) as store:
        store.place_table("T09", "Pit 1", 1, 1, "ada")   # placed in the room, never heard
        filing = Filing(store)
        # Known from its birth alone: at 0 already.
        filing.store_batch([status("T01", 1)], 1.0)
        assert scraped(store)["T01"] == {"filed": 0, "chain": 0, "protocol": 0}
        assert scraped(store)["T09"] == {"filed": 0, "chain": 0, "protocol": 0}
        # In order, then sent again (acknowledgements lost): each line filed once.
        filing.store_batch([journal("T01", t01[:10])], 2.0)
        filing.store_batch([journal("T01", t01[:10]), journal("T01", t01[5:12])], 3.0)
        # Ahead of a gap, then the gap filled.
        filing.store_batch([journal("T01", t01[15:20])], 4.0)
        filing.store_batch([journal("T01", t01[12:15])], 5.0)
        # A journal that starts at seq 50: retention deleted its first lines before the floor had them.
        filing.store_batch([journal("T02", t02, oldest=50)], 6.0)
        # A line that breaks the chain, twice; then one filed already, sent again changed.
        filing.store_batch([journal("T03", t03[:4])], 7.0)
        for now in (8.0, 9.0):
            filing.store_batch([journal("T03", [forged(t03[4])])], now)
            refused["T03"]["chain"] += 1
        filing.store_batch([journal("T03", [changed(t03[1])])], 10.0)
        refused["T03"]["chain"] += 1
        # Messages the floor cannot use: not JSON; a journal with a line that is not one (the
        # lines before it filed); a health it cannot use.
        filing.store_batch([message(P.journal_topic("T03"), b"{not json")], 11.0)
        filing.store_batch([journal("T03", [*t03[4:6], '{"seq":"x"}'])], 12.0)
        filing.store_batch([message(P.health_topic("T01"), b'{"table":"T01","backlog":"lots"}')], 13.0)
        refused["T03"]["protocol"] += 2
        refused["T01"]["protocol"] += 1
        # A status the database refuses as it is written (the driver's error, made here): the
        # batch is undone and filed again message by message, that status refused alone, and a
        # chain break in the same batch counted once.
        update_table = store.update_table

        def refusing(table_id, **fields):
            if table_id == "T03" and "status" in fields:
                raise ValueError("the database refused the row")
            update_table(table_id, **fields)
        monkeypatch.setattr(store, "update_table", refusing)
        filing.store_batch([journal("T01", [forged(t01[20])]), status("T03", 1)], 14.0)
        monkeypatch.undo()
        assert "status message refused" in open_alerts(store, "T03", "protocol")[0]["last_text"]
        refused["T01"]["chain"] += 1
        refused["T03"]["protocol"] += 1
        # A flood the collector dropped; a table first heard through one.
        filing.store_batch([], 15.0, dropped={"T02": 3, "T04": 1})
        refused["T02"]["protocol"] += 1
        refused["T04"]["protocol"] += 1
        check(store, refused, placed={"T09"})
    # A collector started again: a new filing and connection on the same store, sent again what
    # the table did not see acknowledged, and more.
    with Store(target) as store:
        filing = Filing(store)
        filing.store_batch([journal("T01", t01[10:30])], 16.0)
        filing.store_batch([journal("T01", [forged(t01[30])])], 17.0)
        refused["T01"]["chain"] += 1
        check(store, refused, placed={"T09"})
        assert stored_lines(store) == {"T01": 30, "T02": 12, "T03": 6}


def check(store: Store, refused: dict, *, placed: set[str] = frozenset()) -> None:
    lines = stored_lines(store)
    got = scraped(store)
    assert set(got) == set(refused) | set(placed)
    for table, counts in got.items():
        assert counts == {"filed": lines.get(table, 0), **refused.get(table, {"chain": 0, "protocol": 0})}, table


def test_two_collectors_filing_the_same_tables_at_once_count_each_line_and_refusal_once(target):  # noqa: F811
    """Two filings, each its own connection, given three tables' batches in no order and at
    the same time (a shared subscription's way), with a forged line and garbage among them."""
    count, tables = 80, ("T01", "T02", "T03")
    lines = {t: journal_lines(count) for t in tables}
    stores = [Store(target), Store(target)]
    filings = [Filing(s) for s in stores]
    done, lock = threading.Event(), threading.Lock()
    refused = {t: {"chain": 0, "protocol": 0} for t in tables}

    def filer(filing, seed):
        r = random.Random(seed)
        while not done.is_set():
            table = r.choice(tables)
            start = r.randrange(1, count + 1)
            batch = [journal(table, lines[table][start - 1:start - 1 + r.randrange(1, 12)])]
            bad = r.random()
            if bad < 0.1:
                batch.append(message(P.journal_topic(table), b"garbage"))
            elif bad < 0.2 and start > 1:
                batch.append(journal(table, [forged(lines[table][start - 1])]))
            pending = batch
            while pending:  # what another collector held comes back to be filed again
                pending = filing.store_batch(pending, 1000.0).deferred
            with lock:
                if bad < 0.1:
                    refused[table]["protocol"] += 1
    threads = [threading.Thread(target=filer, args=(f, seed)) for f, seed in zip(filings, (1, 2))]
    for t in threads:
        t.start()
    try:
        wait_for(lambda: all(stores[0].line_counts().get(t, (0, 0, 0))[0] == count for t in tables),
                 "every line of every table stored", 120)
    finally:
        done.set()
        for t in threads:
            t.join()
    # A forged line is refused as a chain break when its seq comes next, else it is a line sent
    # again with other content: each time, either way, as the quarantine counts its arrivals.
    with stores[0].engine.connect() as conn:
        for table, n in conn.execute(text("SELECT table_id, sum(times) FROM quarantine GROUP BY table_id")):
            refused[table]["chain"] = int(n)
    assert sum(r["chain"] for r in refused.values()) > 0 and sum(r["protocol"] for r in refused.values()) > 0
    for store in stores:
        check(store, refused)
        store.close()


def test_a_store_of_an_earlier_release_starts_its_counters_from_its_history(target):  # noqa: F811
    """Migration 0015 on a store holding refusals: each table's counts from its lines kept
    aside and its ``protocol`` alerts (cleared ones too), and a table known only from an
    alert gets its row."""
    lines = journal_lines(6)
    with Store(target) as store:
        filing = Filing(store)
        filing.store_batch([journal("T01", lines[:4])], 1.0)
        for now in (2.0, 3.0):
            filing.store_batch([journal("T01", [forged(lines[4])])], now)
        filing.store_batch([message(P.journal_topic("T01"), b"nope")], 4.0)
        first = [a for a in store.alerts() if a["kind"] == "protocol"][0]
        store.clear_alert(first["id"], "sam", "seen")
        filing.store_batch([message(P.journal_topic("T01"), b"nope again")], 5.0)
        filing.store_batch([], 6.0, dropped={"T05": 2})
        want = {"T01": {"filed": 4, "chain": 2, "protocol": 2}, "T05": {"filed": 0, "chain": 0, "protocol": 1}}
        assert scraped(store) == want
        M.downgrade(store.engine, "0012")
        with store.engine.begin() as conn:   # an alert-only table, as the old filing left one
            conn.execute(text("DELETE FROM tables WHERE table_id = 'T05'"))
        M.upgrade(store.engine)
        assert scraped(store) == want
