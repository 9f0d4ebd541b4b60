"""The store's engine on PostgreSQL: its connections' settings, and what they make the planner
do on a store of many days (issue 47: a dealer's shift read through the index on the time
alone, 20,000 hands to find 666, once the store held ten days in the order they were filed).
This room's ten days are read through the dealer's index at either cost; the year-size
bench's (bench/floor_history.py) were not at PostgreSQL's default, and are at the store's."""

from __future__ import annotations

import io
import json
import uuid

from sqlalchemy import select

from dealerbox.floor.store import Store, store_engine
from dealerbox.floor.store.engine import LOCK_WAIT_S, RANDOM_PAGE_COST
from dealerbox.floor.telling.figures import fig_hands

DAY_S = 86_400.0
T0 = 1_796_000_000.0


def _ten_days_in_filing_order(url: str, dealers: int = 60, tables: int = 50, per_table_day: int = 660) -> None:
    """Ten days of a room's hands, each day's hands in the order a collector files them:
    the tables side by side, time going on."""
    engine = store_engine(url)
    try:
        with engine.begin() as conn, conn.connection.dbapi_connection.cursor() as cur:
            with cur.copy("COPY fig_hands (table_id, start_seq, end_seq, dealer, started, hour, ended, seconds, number, pause_before, "
                          "players, hole_cards, ended_by, irregularities, corrections, wrong_corrections, misdeal, "
                          "void, unread_cards, reader_degraded, reader_faults) FROM STDIN") as copy:
                text = io.StringIO()
                for day in range(10):
                    for hand in range(per_table_day):
                        for t in range(tables):
                            at = T0 + day * DAY_S + hand * 70.0 + t
                            seq = (day * per_table_day + hand) * 30 + 1
                            # A dealer stays at a table for a stretch of hands, then moves on.
                            dealer = f"{1000 + (t + hand // 40 + day) % dealers}"
                            number = day * per_table_day + hand + 1
                            text.write(f"T{t}\t{seq}\t{seq + 29}\t{dealer}\t{at}\t{int(at // 3600)}\t{at + 60}\t60.0\t"
                                       f"{number}\t10\t8\t2\t"
                                       f"hand_over\t0\t0\t0\t0\t0\t0\t0\t0\n")
                copy.write(text.getvalue())
        with engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("ANALYZE fig_hands")
    finally:
        engine.dispose()


def test_a_store_connection_waits_for_locks_and_tells_the_planner_reads_are_cheap(postgres_cluster):
    url = postgres_cluster.database(f"engine_{uuid.uuid4().hex[:12]}")
    Store(url).close()
    engine = store_engine(url)
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW lock_timeout").scalar() == f"{LOCK_WAIT_S}s"
            assert float(conn.exec_driver_sql("SHOW random_page_cost").scalar()) == RANDOM_PAGE_COST
    finally:
        engine.dispose()


def test_a_dealers_shift_is_read_through_the_dealers_index_on_a_store_of_ten_days(postgres_cluster):
    url = postgres_cluster.database(f"engine_{uuid.uuid4().hex[:12]}")
    Store(url).close()
    _ten_days_in_filing_order(url)
    start = T0 + 9 * DAY_S
    c = fig_hands.c
    statement = (select(c.table_id).distinct()
                 .where(c.started >= start, c.started < start + 8 * 3600, c.dealer == "1009")
                 .order_by(c.table_id))
    engine = store_engine(url)
    try:
        with engine.connect() as conn:
            sql = str(statement.compile(engine, compile_kwargs={"literal_binds": True}))
            plan = json.dumps(conn.exec_driver_sql(f"EXPLAIN (FORMAT JSON) {sql}").scalar())
            assert "fig_hands_dealer_started" in plan, plan
    finally:
        engine.dispose()
