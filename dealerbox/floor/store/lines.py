"""The filing of the tables' lines: each table's row, its lines, the lines that came
ahead of a gap, and the lines kept aside.

Only lines that continue a table's chain are its record (``lines``). A line
that breaks the chain, or that differs from the line already stored at its
``seq``, is kept aside in ``quarantine`` as evidence and never takes the
genuine line's place. Lines that came ahead of a gap wait in ``early_lines``
until the lines before them are filed.
"""

from __future__ import annotations

import json

from sqlalchemy import ARRAY, Text, any_, bindparam, delete, func, insert, select, update

from dealerbox.errors import FloorError
from dealerbox.floor.store.connection import Connection
from dealerbox.floor.store.schema import early_lines_table, lines_table, quarantine_table, storable, tables_table
from dealerbox.link.chain import GENESIS, line_hash

__all__ = ["TableLines", "TableBusy", "QUARANTINE_PER_TABLE"]

#: Lines kept aside per table at most; past it they are only counted (in the alert).
QUARANTINE_PER_TABLE = 10_000

_TABLE_COLUMNS = tuple(tables_table.c.keys())


class TableBusy(FloorError, BlockingIOError):
    """Another connection holds the table's row (PostgreSQL): it is filing that table now."""


class TableLines(Connection):
    """Each table's row and lines, as the collector's filing writes them (between
    :meth:`begin` and :meth:`commit`) and everyone reads them."""

    def table(self, table_id: str) -> dict | None:
        """*table_id*'s row as stored (``status``, ``state``, ``health`` as JSON text), or None."""
        with self._unit(write=False):
            rows = self._rows(select(tables_table).where(tables_table.c.table_id == table_id))
        return rows[0] if rows else None

    def table_rows(self, table_ids) -> dict[str, dict]:
        """The rows of those of *table_ids* that exist, as :meth:`table` gives each, by id:
        a few queries for many tables (a collector started while the room deals meets
        every table in its first batches)."""
        ids = sorted(set(table_ids))
        found: dict[str, dict] = {}
        with self._unit(write=False):
            for i in range(0, len(ids), 500):  # within any SQLite's limit of bound values
                for row in self._rows(select(tables_table).where(tables_table.c.table_id.in_(ids[i:i + 500]))):
                    found[row["table_id"]] = row
        return found

    def hold_tables(self, table_ids) -> set[str]:
        """Lock the rows of the tables *table_ids* that exist, in one statement, for the
        open transaction (PostgreSQL; on SQLite the transaction holds the whole store).
        Returns the tables whose rows another connection holds: another collector is
        filing them now, and this one leaves their messages for later (see
        :meth:`ensure_table`)."""
        if self.backend != "postgresql" or not table_ids:
            return set()
        wanted = list(set(table_ids) - set(self._held))
        ids = bindparam("ids", type_=ARRAY(Text))
        for row in self._run("hold_tables", lambda: select(tables_table)
                             .where(tables_table.c.table_id == any_(ids))
                             .with_for_update(skip_locked=True), ids=wanted).fetchall():
            self._held[row[0]] = dict(zip(_TABLE_COLUMNS, row))
        missing = [t for t in wanted if t not in self._held]
        if not missing:
            return set()
        return {row[0] for row in self._run(
            "have_tables", lambda: select(tables_table.c.table_id)
            .where(tables_table.c.table_id == any_(ids)), ids=missing).fetchall()}

    def ensure_table(self, table_id: str) -> dict:
        """*table_id*'s row, created if new, locked until the transaction ends; with the
        transaction's own changes to it.

        On PostgreSQL a row another collector holds is not waited for: :class:`TableBusy`
        says so, and that collector's commit is what the caller would have waited for.
        A new table's row is waited for (two collectors creating it at once)."""
        held = self._held.get(table_id)
        if held is not None and self._in_transaction:
            return dict(held)

        def locked(skip):
            return (select(tables_table).where(tables_table.c.table_id == bindparam("t"))
                    .with_for_update(skip_locked=skip))
        row = self._run("lock_table", lambda: locked(True), t=table_id).fetchone()
        if row is None:
            if self.backend == "postgresql" and self._run(
                    "has_table", lambda: select(tables_table.c.table_id)
                    .where(tables_table.c.table_id == bindparam("t")), t=table_id).fetchone():
                raise TableBusy(table_id)
            self._run("add_table", lambda: self._insert(tables_table).values(table_id=bindparam("t"))
                      .on_conflict_do_nothing(), t=table_id)
            row = self._run("wait_table", lambda: locked(False), t=table_id).fetchone()
        found = dict(zip(_TABLE_COLUMNS, row))  # the select's own order (psycopg's description is dear)
        if self._in_transaction:
            self._held[table_id] = dict(found)
        return found

    def update_table(self, table_id: str, **fields) -> None:
        """Change *table_id*'s row; within a transaction, sent when it commits."""
        if self._in_transaction and table_id in self._held:
            self._held[table_id].update(fields)
            self._pending_updates.setdefault(table_id, {}).update(fields)
            return
        self._update_tables(tuple(sorted(fields)), [(table_id, fields)])

    def stored_hashes(self, table_id: str, first: int, last: int) -> dict[int, str]:
        """The hashes of *table_id*'s stored lines *first* to *last*, by seq: a resend's
        lines are checked against them in one query rather than one per line."""
        if any(row["table_id"] == table_id for row in self._pending_lines):
            self.flush()
        c = lines_table.c
        rows = self._run("stored_hashes", lambda: select(c.seq, c.hash).where(
            c.table_id == bindparam("t"), c.seq.between(bindparam("a"), bindparam("b"))),
            t=table_id, a=first, b=last).fetchall()
        return dict(rows)

    def keep_early(self, table_id: str, rows: list[tuple[int, str, str]], received: float, *,
                   kept_before: bool = True) -> dict[int, str]:
        """Keep lines ``(seq, line, hash)`` that came ahead of a gap in *table_id*'s
        lines until the gap is filled (:meth:`take_early`); within a transaction, sent
        when it commits. A seq kept already keeps its first line; returns the hashes of
        those kept before, by seq, so that the caller can tell a line sent again from one
        sent with other content (nothing to look up when *kept_before* is false: the
        table has no lines kept, as its row's ``early_at`` says)."""
        before: dict[int, str] = {}
        if kept_before:
            self._flush_early(table_id)
            e = early_lines_table.c
            before = dict(self._run("early_hashes", lambda: select(e.seq, e.hash).where(
                e.table_id == bindparam("t"), e.seq.between(bindparam("a"), bindparam("b"))),
                t=table_id, a=rows[0][0], b=rows[-1][0]).fetchall())
        self._pending_early.extend(
            {"table_id": table_id, "seq": seq, "line": storable(line), "hash": digest, "received": received}
            for seq, line, digest in rows if seq not in before)
        if not self._in_transaction:
            self.flush()
        return before

    def take_early(self, table_id: str) -> list[tuple[int, str, str]]:
        """Remove *table_id*'s lines kept ahead of a gap and return them, ``(seq, line,
        hash)`` by seq, in one statement (the caller keeps again what a gap still
        separates)."""
        self._flush_early(table_id)
        e = early_lines_table.c
        return sorted(tuple(row) for row in self._run("take_early", lambda: delete(early_lines_table).where(
            e.table_id == bindparam("t")).returning(e.seq, e.line, e.hash), t=table_id).fetchall())

    def early_lines(self, table_id: str) -> list[tuple[int, str, str]]:
        """*table_id*'s lines kept ahead of a gap, ``(seq, line, hash)`` by seq."""
        e = early_lines_table.c
        with self._unit(write=False):
            self._flush_early(table_id)
            return [tuple(row) for row in self._run("early_lines", lambda: select(e.seq, e.line, e.hash).where(
                e.table_id == bindparam("t")).order_by(e.seq), t=table_id).fetchall()]

    def _flush_early(self, table_id: str) -> None:
        if any(row["table_id"] == table_id for row in self._pending_early):
            self.flush()

    def open_gaps(self, since: float) -> list[tuple[str, int]]:
        """``(table, last_seq)`` of the tables with lines kept ahead of a gap since *since*
        or before: the lines before them are not coming by themselves."""
        c = tables_table.c
        with self._unit(write=False):
            return [tuple(row) for row in self._execute(
                select(c.table_id, c.last_seq).where(c.early_at <= since).order_by(c.table_id)).all()]

    def add_line(self, table_id: str, seq: int, line: str, digest: str, chain_ok: bool,
                 committed: float) -> None:
        """Store one line (see :meth:`add_lines`)."""
        self.add_lines([(table_id, seq, line, digest, chain_ok, committed)])

    def add_lines(self, rows: list[tuple]) -> None:
        """Store lines, each ``(table_id, seq, line, hash, chain_ok, committed)``; within a
        transaction, sent when it commits, all in one statement (psycopg pipelines them)."""
        names = ("table_id", "seq", "line", "hash", "chain_ok", "committed")
        self._pending_lines.extend(dict(zip(names, (t, s, line, h, int(ok), c)))
                                   for t, s, line, h, ok, c in rows)
        if not self._in_transaction:
            self.flush()

    def quarantine(self, table_id: str, seq: int, line: str, digest: str, why: str,
                   received: float) -> bool:
        """Keep *line* aside (it broke the chain, or differs from the stored line at
        its seq); True if it is a line not kept before. The same line again only
        counts ``times``; past :data:`QUARANTINE_PER_TABLE` lines nothing is added."""
        q = quarantine_table.c
        again = self._execute(update(quarantine_table).where(q.table_id == table_id, q.seq == seq,
                                                       q.hash == digest).values(times=q.times + 1))
        if again.rowcount:
            return False
        kept = self._execute(select(func.count()).select_from(quarantine_table)
                             .where(q.table_id == table_id)).scalar_one()
        if kept >= QUARANTINE_PER_TABLE:
            return True
        self._execute(insert(quarantine_table).values(table_id=table_id, seq=seq, hash=digest,
                                                line=storable(line), why=why, received=received))
        return True

    def quarantined(self, table_id: str) -> list[dict]:
        """The lines kept aside for *table_id*, by seq and arrival."""
        q = quarantine_table.c
        with self._unit(write=False):
            return self._rows(select(q.seq, q.hash, q.line, q.why, q.received, q.times)
                              .where(q.table_id == table_id).order_by(q.seq, q.received))

    def tables(self) -> list[dict]:
        """Every table's row, by id, with its ``status``, ``state`` and ``health`` read from JSON."""
        with self._unit(write=False):
            rows = self._rows(select(tables_table).order_by(tables_table.c.table_id))
        for row in rows:
            for key in ("status", "state", "health"):
                row[key] = json.loads(row[key]) if row[key] else None
        return rows

    def lines(self, table_id: str, after: int = 0, limit: int | None = None) -> list[tuple[int, str]]:
        """*table_id*'s stored lines past seq *after* (at most *limit*), as (seq, line) by seq."""
        c = lines_table.c
        stmt = select(c.seq, c.line).where(c.table_id == table_id, c.seq > after).order_by(c.seq)
        if limit is not None:
            stmt = stmt.limit(limit)
        with self._unit(write=False):
            return [tuple(r) for r in self._execute(stmt)]

    def line_counts(self) -> dict[str, tuple[int, int, int]]:
        """Per table: its stored lines, distinct seqs and highest seq (a bench's check)."""
        c = lines_table.c
        with self._unit(write=False):
            return {t: (n, d, m) for t, n, d, m in self._execute(
                select(c.table_id, func.count(), func.count(c.seq.distinct()), func.max(c.seq))
                .group_by(c.table_id))}

    def verify(self, table_id: str) -> list[str]:
        """Check the stored chain of one table; returns the problems found."""
        problems = []
        prev_seq, prev_hash = None, None
        after = 0
        while True:
            chunk = self.lines(table_id, after, 10_000)
            if not chunk:
                return problems
            for seq, line in chunk:
                d = json.loads(line)
                if prev_seq is None:
                    if seq == 1 and d.get("prev") != GENESIS:
                        problems.append("seq 1 does not start the chain")
                else:
                    if seq != prev_seq + 1:
                        problems.append(f"seq {prev_seq + 1}..{seq - 1} missing")
                    elif d.get("prev") != prev_hash:
                        problems.append(f"seq {seq} does not chain to seq {prev_seq}")
                if d.get("seq") != seq:
                    problems.append(f"row {seq} holds a line with seq {d.get('seq')}")
                prev_seq, prev_hash = seq, line_hash(line)
            after = chunk[-1][0]
