"""What the floor's metrics read from the store at scrape time (issue 41; docs/floor/metrics.md,
"Metrics"): every figure here is a statement over the store's own rows, so a scrape shows
what the store holds, whichever collector or process wrote it.

A scrape costs what the room's tables cost, never what the store's history holds: each
statement reads the tables' rows (and the one line at a position of each), the open alerts
(through their partial index) or the bridges, never every line or every alert ever raised
(issue 47: a count over every line took 677 ms at ten days' lines and grew with them).

Each function takes an open SQLAlchemy connection and returns plain values.
"""

from __future__ import annotations

import json

from sqlalchemy import and_, case, func, select, text

from dealerbox.floor.store.bridges import bridges_table
from dealerbox.floor.store.counters import REJECTED_WHY
from dealerbox.floor.store.layout import layout_table
from dealerbox.floor.store.schema import alerts_table, lines_table, tables_table

__all__ = ["table_counters", "alerts_open", "bridge_states", "table_lag", "store_connections", "REJECTED_WHY"]


def table_counters(conn) -> dict[str, dict[str, int]]:
    """Per table the floor knows (it heard from it, or the admin placed it in the room), its
    counters: ``filed``, the journal lines filed (its record: chained and acknowledged), and
    one count per reason of :data:`REJECTED_WHY` of its lines and messages refused; 0 for a
    table with none, so that a counter's first rise is a rise.

    Read from the tables' own rows, never counted over the lines: a table's lines are filed in
    order, each once, from its first (seq 1, or the seq its journal started at when earlier
    lines were deleted before the floor had them: ``first_seq``) to its ``last_seq``, so their
    number is the difference; the refusals are counted on the row as the filing refuses them."""
    t = tables_table.c
    filed = case((t.last_seq > 0, t.last_seq - func.coalesce(t.first_seq, 1) + 1), else_=0)
    counters = {table: {"filed": int(n), "chain": int(chain), "protocol": int(protocol)}
                for table, n, chain, protocol in conn.execute(
                    select(t.table_id, filed, REJECTED_WHY["chain"], REJECTED_WHY["protocol"]))}
    for (table,) in conn.execute(select(layout_table.c.table_id)):
        counters.setdefault(table, {"filed": 0, **{why: 0 for why in REJECTED_WHY}})
    return counters


def alerts_open(conn) -> dict[str, int]:
    """Open alerts (not cleared) per kind."""
    a = alerts_table.c
    return {k: int(n) for k, n in conn.execute(
        select(a.kind, func.count()).where(a.cleared_at.is_(None)).group_by(a.kind))}


def bridge_states(conn) -> list[dict]:
    """Each property's bridge: ``name``, ``connected`` and ``since`` (when that state began)."""
    b = bridges_table.c
    return [{"name": n, "connected": bool(up), "since": since}
            for n, up, since in conn.execute(select(b.name, b.connected, b.since).order_by(b.name))]


def table_lag(conn) -> list[dict]:
    """Per table, how far the floor is behind it: ``filed`` (its last filed seq), ``head``
    (the newest seq it reported in its health), ``backlog`` (the lines it holds that the
    floor has not acknowledged, as it reported), ``last_filed`` (when the floor committed its
    newest line), ``early_at`` (since when lines wait ahead of a gap; None when none) and
    ``online``."""
    t, ln = tables_table.c, lines_table.c
    rows = conn.execute(
        select(t.table_id, t.last_seq, t.health, t.early_at, t.online, ln.committed)
        .select_from(tables_table.outerjoin(lines_table, and_(ln.table_id == t.table_id, ln.seq == t.last_seq)))
        .order_by(t.table_id))
    out = []
    for table_id, last_seq, health, early_at, online, committed in rows:
        try:
            h = json.loads(health) if health else {}
        except ValueError:
            h = {}
        h = h if isinstance(h, dict) else {}
        head, backlog = h.get("head"), h.get("backlog")
        out.append({"table": table_id, "filed": int(last_seq), "online": bool(online),
                    "head": head if isinstance(head, int) and not isinstance(head, bool) else None,
                    "backlog": backlog if isinstance(backlog, int) and not isinstance(backlog, bool) else None,
                    "last_filed": committed, "early_at": early_at})
    return out


def store_connections(conn) -> int | None:
    """Connections open to the store's database now (every collector's and view's), on
    PostgreSQL; None on SQLite, which has no server to ask."""
    if conn.dialect.name != "postgresql":
        return None
    return int(conn.execute(text("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"))
               .scalar_one())
