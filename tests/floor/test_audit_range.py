"""The audit trail of a range read from the store by time (``Store.audit_range``), on both
backends: only the rows the range holds come back, and the trail built from them is the
one built from every row."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import update

from dealerbox.floor.store import Store
from dealerbox.floor.store.schema import alerts_table, audit_table
from dealerbox.floor.telling import audit_files as AF

T0 = 1_790_006_400.0
START, END = T0 + 1000.0, T0 + 2000.0


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    if request.param == "sqlite":
        return tmp_path / "floor.sqlite"
    return request.getfixturevalue("postgres_cluster").database(f"audit_{uuid.uuid4().hex[:12]}")


def _alert(store: Store, table: str, raised: float, cleared: float | None, note: str = "") -> int:
    """An alert raised at *raised* and, when *cleared* is given, cleared then (the store
    stamps a clear with the moment it is made: its time is set afterwards)."""
    with store.lock:
        store.begin()
        alert = store.raise_alert(table, f"kind_{note or table}", "something", None, now=raised)
        store.commit()
    if cleared is not None:
        store.clear_alert(alert["id"], "sam", note)
        with store.engine.begin() as conn:
            conn.execute(update(alerts_table).where(alerts_table.c.id == alert["id"]).values(cleared_at=cleared))
            conn.execute(update(audit_table).where(audit_table.c.alert_id == alert["id"]).values(at=cleared))
    return alert["id"]


def test_only_the_ranges_rows_are_read_and_the_trail_is_the_same(store_url):
    with Store(store_url) as store:
        before = _alert(store, "T01", T0, T0 + 500, "before")                 # raised and cleared before
        into = _alert(store, "T02", T0 + 100, START + 10, "into")             # cleared in the range
        inside = _alert(store, "T03", START + 20, START + 30, "inside")       # both in the range
        still_open = _alert(store, "T04", START + 40, None)                    # raised in it, open
        out = _alert(store, "T05", END + 1, END + 2, "after")                 # after the range
        at_end = _alert(store, "T06", END, None)                               # the end is not in it
        old_open = _alert(store, "T07", T0 - 50, None)                         # open, raised before
        store.receive_deck("Early", "red", 54, "ada", now=T0)                  # a change before the range
        store.receive_deck("Red 7", "red", 54, "ada", now=START + 50)           # and one in it
        audit, alerts = store.audit_range(START, END)
        assert [(r["alert"], r["action"]) for r in audit] == [(into, "clear"), (inside, "clear"),
                                                              (None, "deck_receive")]
        assert [a["id"] for a in alerts] == [into, inside, still_open]
        assert {before, out, at_end, old_open}.isdisjoint(a["id"] for a in alerts)
        # The same trail as from every row (what the pages read before).
        steps = store.registry_steps(start=START, end=END)
        every = AF.audit_trail(store.audit(), store.alerts(open_only=False), START, END, steps)
        assert AF.audit_trail(audit, alerts, START, END, steps) == every
        assert every["registry"][0]["deck"] == "Red 7"


def test_the_report_and_the_surveillance_page_read_their_alerts_by_time(store_url):
    with Store(store_url) as store:
        before = _alert(store, "T01", T0, T0 + 500, "before")
        inside = _alert(store, "T02", START + 20, START + 30, "inside")
        still_open = _alert(store, "T03", START + 40, None)
        old_open = _alert(store, "T04", T0 - 50, None)
        after = _alert(store, "T05", END + 1, END + 2, "after")
        # Raised before the range, raised again in it (folded), then cleared: the page still shows it.
        again = _alert(store, "T06", T0 + 10, None, "again")
        with store.lock:
            store.begin()
            store.raise_alert("T06", "kind_again", "something again", None, now=START + 60)
            store.commit()
        store.clear_alert(again, "sam", "seen")
        every = store.alerts(open_only=False)
        assert [a["id"] for a in store.alerts_raised(START, END)] == [inside, still_open]
        assert store.alerts_raised(START, END) == [a for a in every if START <= a["raised"] < END]
        kinds = {a["kind"] for a in every} - {"kind_after"}
        shown = store.alerts_live_in(START, END, kinds)
        # What the Surveillance page kept of every alert before: open now, or raised in the range again.
        assert shown == [a for a in reversed(every) if a["kind"] in kinds and (
            a["cleared_at"] is None or (a["raised"] < END and a["last_raised"] >= START))]
        assert [a["id"] for a in shown] == [again, old_open, still_open, inside]
        assert before not in {a["id"] for a in shown} and after not in {a["id"] for a in shown}


def test_the_reads_by_time_use_an_index_not_a_scan_of_every_row(tmp_path):
    """The pages' reads by time on SQLite: its plan searches an index for each, never a
    SCAN of the whole audit trail, every alert or every hand of every deck (issue 47)."""
    import sqlite3
    from sqlalchemy import event

    path = tmp_path / "floor.sqlite"
    statements: list[tuple[str, tuple]] = []
    with Store(path) as store:
        event.listen(store.engine, "before_cursor_execute",
                     lambda _c, _cur, sql, params, _ctx, _many: statements.append((sql, params)))
        store.audit_range(START, END)
        store.alerts_raised(START, END)
        store.alerts_live_in(START, END, {"shuffle", "dealer_chart"})
        store.deck_hands(None, START, END)
        store.registry_steps(start=START, end=END)
    reads = [(sql, params) for sql, params in statements if sql.lstrip().upper().startswith("SELECT")]
    assert len(reads) >= 5
    with sqlite3.connect(path) as db:
        for sql, params in reads:
            plan = " / ".join(row[3] for row in db.execute("EXPLAIN QUERY PLAN " + sql, params))
            for table in ("audit", "alerts", "reg_hands", "reg_steps"):
                assert not any(part.strip() == f"SCAN {table}" for part in plan.split(" / ")), (sql, plan)
