"""What the floor's metrics read from the store at scrape time (issue 41; docs/floor/metrics.md,
"Metrics"): every figure here is a statement over the store's own rows, so a scrape shows
what the store holds, whichever collector or process wrote it.

A scrape costs what the room's tables cost, never what the store's history holds: one
statement reads the tables' rows with the one line at a position of each (primary-key
lookups), the other the open alerts (through their partial index) and the bridges, never
every line or every alert ever raised (issue 47: a count over every line took 677 ms at ten
days' lines and grew with them). Two statements, not one per figure: on PostgreSQL each is a
round trip, and on a loaded machine each round trip waits for the server to be scheduled
(a scrape of seven took 214 ms at a load of 15 to 20).

Each function takes an open SQLAlchemy connection and returns plain values.
"""

from __future__ import annotations

import json

from sqlalchemy import Integer, and_, case, cast, exists, func, literal_column, null, select, text, union_all

from dealerbox.floor.store.bridges import bridges_table
from dealerbox.floor.store.counters import REJECTED_WHY
from dealerbox.floor.store.layout import layout_table
from dealerbox.floor.store.schema import alerts_table, lines_table, tables_table

__all__ = ["tables_statement", "table_figures", "room_figures", "REJECTED_WHY", "ROOM_STATEMENTS"]


def tables_statement(progress):
    """The statement :func:`table_figures` reads, built once by its caller: *progress* is game
    protection's table of each table's last line read (``protect_progress`` of
    dealerbox/floor/protect/tables.py, which the store does not import: the protection builds
    on the store)."""
    t, p = tables_table.c, progress.c
    newest, unread = lines_table.alias("newest"), lines_table.alias("unread")
    # A table's lines are filed in order, each once, from its first (seq 1, or first_seq when its
    # journal started later) to last_seq: their number is the difference, never a count.
    filed = case((t.last_seq > 0, t.last_seq - func.coalesce(t.first_seq, 1) + 1), else_=0)
    done = func.coalesce(p.seq, 0)
    known = (select(t.table_id, filed, t.rejected_chain, t.rejected_protocol, t.last_seq, t.health, t.early_at,
                    t.online, newest.c.committed, done, unread.c.committed)
             .select_from(tables_table
                          .outerjoin(newest, and_(newest.c.table_id == t.table_id, newest.c.seq == t.last_seq))
                          .outerjoin(progress, p.table_id == t.table_id)
                          .outerjoin(unread, and_(unread.c.table_id == t.table_id, unread.c.seq == done + 1))))
    # Tables the admin placed in the room that never spoke: their counters at 0 (last_seq NULL says so).
    placed = (select(layout_table.c.table_id, *[null()] * 10)
              .where(~exists().where(t.table_id == layout_table.c.table_id)))
    return union_all(known, placed)


def _room_statement(postgresql: bool):
    a, b = alerts_table.c, bridges_table.c
    parts = [select(literal_column("'alert'"), a.kind, func.count(), null())
             .where(a.cleared_at.is_(None)).group_by(a.kind),
             select(literal_column("'bridge'"), b.name, cast(b.connected, Integer), b.since)]
    if postgresql:
        parts.append(select(literal_column("'connections'"), null(), func.count(), null())
                     .select_from(text("pg_stat_activity")).where(text("datname = current_database()")))
    return union_all(*parts)


#: The room's statement on SQLite and on PostgreSQL (False, True), built once (SQLAlchemy then
#: reuses their compiled form).
ROOM_STATEMENTS = {False: _room_statement(False), True: _room_statement(True)}


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def table_figures(conn, statement) -> list[dict]:
    """Per table the floor knows (it heard from it, or the admin placed it in the room), by id:

    - ``filed``, the journal lines filed (its record: chained and acknowledged), and one
      count per reason of :data:`REJECTED_WHY` of its lines and messages refused, counted on
      the table's row as the filing refuses them; 0 for a table with none, so that a
      counter's first rise is a rise;
    - ``heard``: False for a table only placed in the room (it has no figures below);
    - ``last_seq``, ``head`` (the newest seq it reported in its health), ``backlog`` (the
      lines it holds that the floor has not acknowledged, as it reported), ``last_filed``
      (when the floor committed its newest line), ``early_at`` (since when lines wait ahead
      of a gap; None when none) and ``online``;
    - ``protected``, the last seq game protection's pass read, and ``unread_at``, when the
      first line it has not read was filed (None when none waits).

    *statement* is :func:`tables_statement`'s."""
    out = []
    for (table, filed, chain, protocol, last_seq, health, early_at, online, last_filed, protected,
         unread_at) in conn.execute(statement):
        row = {"table": table, "filed": int(filed or 0), "chain": int(chain or 0), "protocol": int(protocol or 0),
               "heard": last_seq is not None}
        if last_seq is not None:
            try:
                h = json.loads(health) if health else {}
            except ValueError:
                h = {}
            h = h if isinstance(h, dict) else {}
            row.update(last_seq=int(last_seq), head=_count(h.get("head")), backlog=_count(h.get("backlog")),
                       last_filed=last_filed, early_at=early_at, online=bool(online),
                       protected=int(protected), unread_at=unread_at)
        out.append(row)
    out.sort(key=lambda r: r["table"])
    return out


def room_figures(conn) -> dict:
    """The room's: ``alerts``, open alerts (not cleared) per kind; ``bridges``, each property's
    bridge (``name``, ``connected``, ``since``: when that state began), by name; and
    ``connections``, the connections open to the store's database now (every collector's and
    view's) on PostgreSQL, None on SQLite, which has no server to ask."""
    postgresql = conn.dialect.name == "postgresql"
    alerts, bridges, connections = {}, [], (0 if postgresql else None)
    for what, name, n, since in conn.execute(ROOM_STATEMENTS[postgresql]):
        if what == "alert":
            alerts[name] = int(n)
        elif what == "bridge":
            bridges.append({"name": name, "connected": bool(n), "since": since})
        else:
            connections = int(n)
    bridges.sort(key=lambda b: b["name"])
    return {"alerts": alerts, "bridges": bridges, "connections": connections}
