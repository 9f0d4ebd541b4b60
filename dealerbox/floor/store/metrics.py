"""What the floor's metrics read from the store at scrape time (issue 41; docs/floor/metrics.md,
"Metrics"): every figure here is a statement over the store's own rows, so a scrape shows
what the store holds, whichever collector or process wrote it.

Each function takes an open SQLAlchemy connection and returns plain values.
"""

from __future__ import annotations

import json

from sqlalchemy import and_, func, select, text

from dealerbox.floor.store.bridges import bridges_table
from dealerbox.floor.store.schema import alerts_table, lines_table, quarantine_table, tables_table

__all__ = ["lines_filed", "lines_rejected", "alerts_open", "bridge_states", "table_lag", "store_connections",
           "PROTOCOL_KIND"]

#: The alert kind a refused message raises (collecting/filing.py): folded per table, counted.
PROTOCOL_KIND = "protocol"


def lines_filed(conn) -> dict[str, int]:
    """Lines filed per table (the record: chained and acknowledged)."""
    c = lines_table.c
    return {t: int(n) for t, n in conn.execute(select(c.table_id, func.count()).group_by(c.table_id))}


def lines_rejected(conn) -> dict[tuple[str, str], int]:
    """Lines and messages refused per ``(table, why)``: ``chain`` counts lines that broke a
    table's hash chain (kept aside in quarantine, each time it came), ``protocol`` counts
    messages the floor could not use (the protocol alerts, each time one was raised)."""
    q, a = quarantine_table.c, alerts_table.c
    out = {(t, "chain"): int(n) for t, n in conn.execute(
        select(q.table_id, func.sum(q.times)).group_by(q.table_id))}
    out.update({(t, "protocol"): int(n) for t, n in conn.execute(
        select(a.table_id, func.sum(a.count)).where(a.kind == PROTOCOL_KIND).group_by(a.table_id))})
    return out


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
