"""A scrape's reads of the store (issue 47) cost what the room's tables cost, not what the store
holds: the same two statements and the same rows read whether the tables hold ten lines each or
a thousand, on SQLite and PostgreSQL; on SQLite every line a scrape reads is found through the
lines' primary key and the open alerts through an index, never by a scan."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import event, insert
from sqlalchemy.dialects import sqlite

from dealerbox.floor.protect.tables import protect_progress
from dealerbox.floor.store import Store
from dealerbox.floor.store import metrics as SM
from dealerbox.floor.store.schema import alerts_table, lines_table, tables_table
from dealerbox.floor.web.metrics import TABLES

T0 = 1_800_000_000.0


def fill(store: Store, tables: int, lines: int, first: int) -> None:
    """*tables* tables holding *lines* lines each, seqs from *first* (the test's own rows), and
    a few alerts, two of them cleared."""
    with store.engine.begin() as conn:
        for n in range(tables):
            table = f"T{n:02d}"
            conn.execute(insert(tables_table).values(table_id=table, last_seq=first + lines - 1,
                                                     first_seq=first if first > 1 else None, online=1,
                                                     health='{"head": %d, "backlog": 3}' % (first + lines + 4),
                                                     rejected_chain=n, rejected_protocol=2 * n))
            conn.execute(insert(lines_table), [{"table_id": table, "seq": s, "line": "{}", "hash": "h", "chain_ok": 1,
                                                "committed": T0 + s} for s in range(first, first + lines)])
            conn.execute(insert(alerts_table), [
                {"table_id": table, "kind": kind, "text": "t", "raised": T0, "cleared_at": T0 + 1 if cleared else None}
                for kind, cleared in (("misdeal", False), ("reader", True))])
        # Game protection has read T00 up to its third line.
        conn.execute(insert(protect_progress).values(table_id="T00", seq=first + 2))


def scrape(store: Store) -> tuple[list[dict], dict, int, int]:
    """The scrape's figures, its statements and the rows they returned."""
    counted = {"statements": 0, "rows": 0}

    def executed(_conn, cursor, *_args):
        counted["statements"] += 1

    event.listen(store.engine, "after_cursor_execute", executed)
    try:
        with store.engine.connect() as conn:
            tables, room = SM.table_figures(conn, TABLES), SM.room_figures(conn)
    finally:
        event.remove(store.engine, "after_cursor_execute", executed)
    rows = len(tables) + len(room["alerts"]) + len(room["bridges"])
    return tables, room, counted["statements"], rows


@pytest.fixture(params=["sqlite", "postgresql"])
def targets(request, tmp_path):
    """Two new stores' targets on each backend: SQLite files, fresh PostgreSQL databases."""
    if request.param == "sqlite":
        return tmp_path / "small.sqlite", tmp_path / "large.sqlite"
    cluster = request.getfixturevalue("postgres_cluster")
    return tuple(cluster.database(f"floor_{uuid.uuid4().hex[:12]}") for _ in range(2))


def test_a_scrape_reads_two_statements_and_the_tables_rows_whatever_the_lines(targets):
    seen = []
    for lines, where in zip((10, 1000), targets):
        with Store(where) as store:
            fill(store, tables=5, lines=lines, first=7)
            tables, room, statements, rows = scrape(store)
        assert [t["filed"] for t in tables] == [lines] * 5
        assert [(t["chain"], t["protocol"]) for t in tables] == [(n, 2 * n) for n in range(5)]
        assert all(t["last_seq"] == 7 + lines - 1 and t["head"] == 7 + lines + 4 and t["backlog"] == 3
                   and t["last_filed"] == T0 + t["last_seq"] for t in tables)
        assert [(t["protected"], t["unread_at"]) for t in tables[:2]] == [(9, T0 + 10), (0, None)]
        assert room["alerts"] == {"misdeal": 5}
        seen.append((statements, rows))
    assert seen[0] == seen[1] and seen[0][0] == 2, seen


def test_on_sqlite_a_scrape_finds_its_lines_by_key_and_its_alerts_by_index(tmp_path):
    with Store(tmp_path / "floor.sqlite") as store:
        fill(store, tables=3, lines=50, first=1)
        plans = []
        with store.engine.connect() as conn:
            for statement in (TABLES, SM.ROOM_STATEMENTS[False]):
                sql = str(statement.compile(dialect=sqlite.dialect(), compile_kwargs={"literal_binds": True}))
                plans.append([row[3] for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql)])
    lines_read = [step for step in plans[0] if step.split()[1] in ("newest", "unread")]
    assert len(lines_read) == 2 and all(step.startswith("SEARCH") and "PRIMARY KEY" in step
                                        for step in lines_read), plans[0]
    assert not [step for step in plans[0] + plans[1] if step.startswith("SCAN") and " lines" in step]
    alerts = [step for step in plans[1] if " alerts " in f" {step} "]
    assert alerts and all("USING" in step and "INDEX" in step for step in alerts), plans[1]
