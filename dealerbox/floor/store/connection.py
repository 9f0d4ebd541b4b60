"""The collector's store: committed before anything is acknowledged.

One row per journal line per table (the line exactly as the table stored it,
so the chain can be verified here again), the tables' last known status,
state and health, the alerts and the audit trail of who cleared what.

Only lines that continue a table's chain are its record (``lines``). A line
that breaks the chain, or that differs from the line already stored at its
``seq``, is kept aside in ``quarantine`` as evidence and never takes the
genuine line's place. An alert of a kind a table already has open is folded
into it (``count`` and the ``last_*`` columns), so a table cannot fill the
floor with alerts.

Two backends behind this one class, every statement written once in
SQLAlchemy Core: an SQLite file (the default: nothing else to run) and
PostgreSQL (``[store] url = "postgresql://..."``, through psycopg 3), which
several collectors can share. The schema is Alembic's
(dealerbox/floor/migrations), brought up to date when a store is opened.

Transactions are explicit SQL on a connection in the driver's autocommit mode,
as the filing needs them: one per batch of messages, a savepoint per message.
On SQLite a batch takes the write lock at once (``BEGIN IMMEDIATE``); on
PostgreSQL each table's row is locked (``SELECT ... FOR UPDATE``) before its
``seq`` and chain are checked, so collectors filing one table's batches at once
take turns with that table and with no other.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import (ARRAY, BigInteger, Column, Double, Index, Integer, MetaData, Table, Text, any_,
                        bindparam, cast, create_engine, delete, event, func, insert, or_, select, text,
                        update)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, IntegrityError
from sqlalchemy.pool import StaticPool

from dealerbox.errors import FloorError
from dealerbox.link import protocol as P

__all__ = ["Store", "StoreUnavailable", "TableBusy", "store_engine", "describe_target",
           "is_store_url", "METADATA", "lines_table", "tables_table", "alerts_table"]

log = logging.getLogger(__name__)

#: Lines kept aside per table at most; past it they are only counted (in the alert).
QUARANTINE_PER_TABLE = 10_000
#: Alert texts are cut to this many characters (parts of them come from the tables).
ALERT_TEXT_MAX = 300
#: How long a statement waits for another connection's lock before it fails.
LOCK_WAIT_S = 30

# Integers are 64-bit on both backends (SQLite's are; PostgreSQL's INTEGER is not):
# a number a table sends fits, or is refused for that table alone as on SQLite.
Int64 = BigInteger().with_variant(Integer, "sqlite")
#: Seconds since the epoch: double precision on both (SQLite calls it REAL, PostgreSQL's REAL is 4 bytes).
Float64 = Double().with_variant(sqlite.REAL(), "sqlite")

#: The store's tables as the newest migration leaves them (the migrations say how they got so).
METADATA = MetaData()
meta_table = Table(
    "meta", METADATA,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)
tables_table = Table(
    "tables", METADATA,
    Column("table_id", Text, primary_key=True),
    Column("last_seq", Int64, nullable=False, server_default="0"),
    Column("last_hash", Text, nullable=False, server_default=""),
    Column("first_seq", Int64),
    Column("boot", Int64, nullable=False, server_default="0"),
    Column("conn", Int64, nullable=False, server_default="0"),
    Column("online", Int64, nullable=False, server_default="0"),
    Column("status", Text),
    Column("state", Text),
    Column("health", Text),
    Column("seen", Float64),
    #: Since when the table has lines kept ahead of a gap (early_lines); NULL when none.
    Column("early_at", Float64),
)
lines_table = Table(
    "lines", METADATA,
    Column("table_id", Text, primary_key=True),
    Column("seq", Int64, primary_key=True),
    Column("line", Text, nullable=False),
    Column("hash", Text, nullable=False),
    Column("chain_ok", Int64, nullable=False),
    Column("committed", Float64, nullable=False),
    sqlite_with_rowid=False,
)
#: Lines that came ahead of a gap: never the record until the lines before them are
#: filed, then chained and moved to ``lines`` in that transaction.
early_lines_table = Table(
    "early_lines", METADATA,
    Column("table_id", Text, primary_key=True),
    Column("seq", Int64, primary_key=True),
    Column("line", Text, nullable=False),
    Column("hash", Text, nullable=False),
    Column("received", Float64, nullable=False),
    sqlite_with_rowid=False,
)
quarantine_table = Table(
    "quarantine", METADATA,
    Column("table_id", Text, primary_key=True),
    Column("seq", Int64, primary_key=True),
    Column("hash", Text, primary_key=True),
    Column("line", Text, nullable=False),
    Column("why", Text, nullable=False),
    Column("received", Float64, nullable=False),
    Column("times", Int64, nullable=False, server_default="1"),
    sqlite_with_rowid=False,
)
alerts_table = Table(
    "alerts", METADATA,
    Column("id", Int64, primary_key=True, autoincrement=True),
    Column("table_id", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("text", Text, nullable=False),
    Column("seq", Int64),
    Column("raised", Float64, nullable=False),
    Column("cleared_by", Text),
    Column("cleared_at", Float64),
    Column("note", Text),
    Column("count", Int64, nullable=False, server_default="1"),
    Column("last_seq", Int64),
    Column("last_text", Text),
    Column("last_raised", Float64),
)
#: Every open alert of one table and kind (folding looks it up for each alert raised).
Index("alerts_open", alerts_table.c.table_id, alerts_table.c.kind,
      sqlite_where=alerts_table.c.cleared_at.is_(None), postgresql_where=alerts_table.c.cleared_at.is_(None))
audit_table = Table(
    "audit", METADATA,
    Column("id", Int64, primary_key=True, autoincrement=True),
    Column("at", Float64, nullable=False),
    Column("who", Text, nullable=False),
    Column("action", Text, nullable=False),
    Column("alert_id", Int64),
    Column("detail", Text),
)
# The web view's users and their sessions. A session's key is the SHA-256 of the
# random id in the cookie: a copy of the store signs no one in.
users_table = Table(
    "users", METADATA,
    Column("name", Text, primary_key=True),
    Column("role", Text, nullable=False),
    Column("hash", Text, nullable=False),
    Column("created", Float64, nullable=False),
    Column("changed", Float64, nullable=False),
)
sessions_table = Table(
    "sessions", METADATA,
    Column("key", Text, primary_key=True),
    Column("user", Text, nullable=False),
    Column("csrf", Text, nullable=False),
    Column("created", Float64, nullable=False),
    Column("seen", Float64, nullable=False),
    Column("address", Text, nullable=False),
)
Index("sessions_user", sessions_table.c.user)
# Dealers' names: the tables know ids only; the floor's admin names them.
dealer_names_table = Table(
    "dealer_names", METADATA,
    Column("dealer", Text, primary_key=True),
    Column("name", Text, nullable=False),
    Column("changed", Float64, nullable=False),
    sqlite_with_rowid=False,
)

_TABLE_COLUMNS = tuple(tables_table.c.keys())
_ALERT_COLUMNS = tuple(alerts_table.c[name] for name in (
    "id", "table_id", "kind", "text", "seq", "raised", "cleared_by", "cleared_at", "note",
    "count", "last_seq", "last_text", "last_raised"))


class TableBusy(FloorError, BlockingIOError):
    """Another connection holds the table's row (PostgreSQL): it is filing that table now."""


class StoreUnavailable(FloorError, ConnectionError):
    """The store's database cannot be reached (or a store URL names no backend it knows)."""


def is_store_url(target) -> bool:
    """True when *target* is a database URL (``postgresql://...``) rather than an SQLite file."""
    return isinstance(target, str) and "://" in target


def describe_target(target) -> str:
    """*target* as logs and messages may show it: a URL without its password."""
    if is_store_url(target):
        try:
            return make_url(target).render_as_string(hide_password=True)
        except ArgumentError:
            return "a store URL that cannot be read"
    return str(target)


def store_engine(target):
    """An SQLAlchemy engine on *target*: an SQLite file's path, or a ``postgresql://`` URL.

    A PostgreSQL URL is driven by psycopg 3 whichever driver it names; its connections
    are checked before use, so a server restarted since is met with a new connection.
    On SQLite every connection waits up to :data:`LOCK_WAIT_S` for another's write lock
    and syncs each commit to the disk.
    """
    if is_store_url(target):
        try:
            url = make_url(target)
        except ArgumentError as exc:
            raise StoreUnavailable(f"the store URL cannot be read: {exc}") from None
        if url.get_backend_name() != "postgresql":
            raise StoreUnavailable(f"{describe_target(target)}: the store is an SQLite file's path "
                                   "or a postgresql:// URL")
        url = url.set(drivername="postgresql+psycopg")
        return create_engine(url, pool_pre_ping=True, pool_size=4, max_overflow=4,
                             connect_args={"connect_timeout": 10,
                                           "options": f"-c lock_timeout={LOCK_WAIT_S * 1000}"})
    if str(target) == ":memory:":
        # One in-memory database for every thread that uses the engine (tests' throwaway stores).
        engine = create_engine("sqlite://", poolclass=StaticPool,
                               connect_args={"timeout": LOCK_WAIT_S, "check_same_thread": False})
    else:
        engine = create_engine(f"sqlite:///{target}", connect_args={"timeout": LOCK_WAIT_S})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record):
        dbapi_conn.execute(f"PRAGMA busy_timeout = {LOCK_WAIT_S * 1000}")
        dbapi_conn.execute("PRAGMA synchronous = FULL")
    return engine


class Store:
    """The store at *target* (an SQLite file's path, or a PostgreSQL URL).

    All of this object's statements go through one connection under :attr:`lock`;
    the collector's writer thread groups many messages into one transaction
    (:meth:`begin` ... :meth:`commit`), every other method is a transaction of its own
    (or a part of the open one, when called between :meth:`begin` and :meth:`commit`).
    Opening it creates the schema, or migrates an older one (``migrate=False``: not).
    """

    def __init__(self, target, *, migrate: bool = True):
        self.target = target
        self.url = describe_target(target)
        if not is_store_url(target):
            target = Path(target)
            target.parent.mkdir(parents=True, exist_ok=True)
        #: The SQLite file, or None on PostgreSQL.
        self.path = None if is_store_url(target) else Path(target)
        self.engine = store_engine(target)
        self.backend = self.engine.dialect.name
        self._insert = postgresql.insert if self.backend == "postgresql" else sqlite.insert
        self.lock = threading.RLock()
        self._conn = None
        self._in_transaction = False
        self._prepared: dict = {}
        self._array_sql: dict[tuple, tuple[str, tuple[type, ...]]] = {}  # SQL, columns' types
        self._cursor = self._cursor_of = None
        # The open transaction's writes of lines and tables' rows, sent together when it
        # commits (or before anything reads them back): on PostgreSQL each statement costs a
        # round trip to the server, and a batch of a thousand tables' messages made three
        # per message, seconds per batch on a busy machine.
        self._held: dict[str, dict] = {}          # tables' rows this transaction locked, as it left them
        self._held_saved: dict[str, dict] | None = None
        self._pending_lines: list[dict] = []
        self._pending_updates: dict[str, dict] = {}
        self._pending_early: list[dict] = []
        try:
            if self.backend == "sqlite" and self.path != Path(":memory:"):
                with self.engine.connect() as conn:
                    conn.exec_driver_sql("PRAGMA journal_mode=WAL")
            if migrate:
                from dealerbox.floor.migrations import upgrade
                upgrade(self.engine)
        except DBAPIError as exc:
            self.engine.dispose()
            raise StoreUnavailable(f"the store {self.url} cannot be opened: {_reason(exc)}") from None

    def close(self) -> None:
        with self.lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self.engine.dispose()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- the connection and its transactions

    def _connection(self):
        if self._conn is None or self._conn.closed or self._conn.invalidated:
            if self._conn is not None:
                self._conn.close()
            # The driver's autocommit: transactions are the SQL below, as the filing needs them.
            self._conn = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        return self._conn

    def _execute(self, statement):
        try:
            return self._connection().execute(statement)
        except DBAPIError as exc:
            if self._in_transaction or not exc.connection_invalidated:
                raise
            # A statement of its own on a connection the server dropped (it restarted): once more
            # on a new one. Within a transaction the caller starts the transaction again instead.
            return self._connection().execute(statement)

    def _sql(self, sql: str) -> None:
        self._driver(sql, None)

    def _run(self, key, build, *, _many: list[dict] | None = None, **params):
        """Run the statement *build* makes, compiled once per store for its dialect, on the
        driver's own cursor (for each of *_many*'s parameter sets, if given); returns the
        cursor. The filing runs a few statements per message: building, compiling and
        wrapping a Core statement each time cost the collector ten times the CPU of the old
        hand-written SQL, and SQLAlchemy's execution of a compiled statement still three
        times (cProfile, 5,000 messages on SQLite)."""
        prepared = self._prepared.get(key)
        if prepared is None:
            compiled = build().compile(dialect=self.engine.dialect)
            prepared = (str(compiled), compiled.positiontup if compiled.positional else None)
            self._prepared[key] = prepared
        sql, order = prepared

        def args(values):
            return tuple(values[k] for k in order) if order is not None else values
        if _many is not None and len(_many) != 1:
            return self._driver(sql, [args(p) for p in _many], many=True)
        if _many is not None:
            params = _many[0]
        return self._driver(sql, args(params))

    def _driver(self, sql: str, args, *, many: bool = False):
        """*sql* on the driver's cursor, its errors raised as SQLAlchemy's (a dropped
        connection marked, as SQLAlchemy marks it, so that the next use reconnects)."""
        conn = self._connection()
        dbapi_conn = conn.connection.dbapi_connection
        if self._cursor is None or self._cursor_of is not dbapi_conn:
            self._cursor, self._cursor_of = dbapi_conn.cursor(), dbapi_conn
        try:
            if many:
                self._cursor.executemany(sql, args)
            elif args is None:
                self._cursor.execute(sql)
            else:
                self._cursor.execute(sql, args)
        except self.engine.dialect.loaded_dbapi.Error as exc:
            gone = self.engine.dialect.is_disconnect(exc, dbapi_conn, self._cursor)
            if gone:
                self._cursor = self._cursor_of = None
                conn.invalidate(exc)
            raise DBAPIError.instance(sql, args, exc, self.engine.dialect.loaded_dbapi.Error,
                                      connection_invalidated=gone, dialect=self.engine.dialect) from exc
        return self._cursor

    def begin(self) -> None:
        """Open the batch's transaction (the caller holds :attr:`lock`)."""
        self._forget_writes()
        try:
            self._sql("BEGIN IMMEDIATE" if self.backend == "sqlite" else "BEGIN")
        except DBAPIError as exc:
            if not exc.connection_invalidated:
                raise
            self._sql("BEGIN")  # the server restarted since the last batch: a new connection
        self._in_transaction = True

    def flush(self) -> None:
        """Send the transaction's lines and tables' rows written so far (:meth:`commit`
        does; a caller that wants a write's error before committing calls it first)."""
        if self._pending_lines:
            rows, self._pending_lines = self._pending_lines, []
            self._insert_rows(lines_table, rows)
        if self._pending_updates:
            updates, self._pending_updates = self._pending_updates, {}
            by_names: dict[tuple, list[tuple[str, dict]]] = {}
            for table_id, fields in updates.items():
                by_names.setdefault(tuple(sorted(fields)), []).append((table_id, fields))
            for names, rows in by_names.items():
                self._update_tables(names, rows)
        if self._pending_early:
            rows, self._pending_early = self._pending_early, []
            self._insert_rows(early_lines_table, rows, skip_kept=True)

    def _insert_rows(self, table: Table, rows: list[dict], *, skip_kept: bool = False) -> None:
        """Insert *rows* (dicts of the same columns) into *table*: one statement of arrays on
        PostgreSQL (:meth:`_by_arrays`), else a statement a row; *skip_kept* leaves out a
        row whose key is there already."""
        if self.backend == "postgresql" and len(rows) > 1:
            self._by_arrays(table, tuple(rows[0]), rows, skip_kept=skip_kept)
            return
        self._run(("insert", table.name, skip_kept),
                  lambda: self._insert(table).on_conflict_do_nothing() if skip_kept else insert(table),
                  _many=rows)

    def _by_arrays(self, table: Table, names: tuple[str, ...], rows: list[dict], *,
                   key: str | None = None, skip_kept: bool = False) -> None:
        """PostgreSQL: insert *rows* (dicts of the columns *names*) into *table*, or with a
        *key* column update the rows it names, in one statement that takes each column as
        an array (*skip_kept*: a row whose key is there already is left out). psycopg's
        executemany sends one statement a row (in a pipeline): that was the writer's
        largest cost in the group bench (py-spy, a sixth of a collector's CPU time) for a
        few hundred rows a batch. The arrays go in PostgreSQL's binary format: as text,
        every journal line's quotes were escaped in Python, 13.5 ms of CPU for 250 lines
        against 1.6 ms (measured with psycopg 3.3); a binary array holds one type, so each
        value is made its column's (an int in a float column, a bool in an int one)."""
        prepared = self._array_sql.get((table.name, names, key, skip_kept))
        if prepared is None:
            dialect = self.engine.dialect
            typed = ", ".join(f"%b::{table.c[n].type.compile(dialect=dialect)}[]" for n in names)
            columns = ", ".join(f'"{n}"' for n in names)
            if key is None:
                sql = f'INSERT INTO "{table.name}" ({columns}) SELECT * FROM unnest({typed})'
                if skip_kept:
                    sql += " ON CONFLICT DO NOTHING"
            else:
                sets = ", ".join(f'"{n}" = u."{n}"' for n in names if n != key)
                sql = (f'UPDATE "{table.name}" SET {sets} FROM unnest({typed}) AS u({columns}) '
                       f'WHERE "{table.name}"."{key}" = u."{key}"')
            kinds = tuple(table.c[n].type.python_type for n in names)
            prepared = self._array_sql[(table.name, names, key, skip_kept)] = (sql, kinds)
        sql, kinds = prepared
        self._driver(sql, tuple([row[n] for row in rows] if kind is str else
                                [None if row[n] is None else kind(row[n]) for row in rows]
                                for n, kind in zip(names, kinds)))

    def _update_tables(self, names: tuple[str, ...], rows: list[tuple[str, dict]]) -> None:
        """Set the columns *names* of tables' rows: *rows* are ``(table_id, {name: value})``."""
        if self.backend == "postgresql" and len(rows) > 1:
            self._by_arrays(tables_table, ("table_id", *names),
                            [{"table_id": table_id, **fields} for table_id, fields in rows], key="table_id")
            return
        self._run(("update_table", names),
                  lambda: update(tables_table).where(tables_table.c.table_id == bindparam("t"))
                  .values({n: bindparam(f"v_{n}") for n in names}),
                  _many=[{"t": table_id, **{f"v_{n}": fields[n] for n in names}} for table_id, fields in rows])

    def commit(self) -> None:
        self.flush()
        self._in_transaction = False
        self._forget_writes()
        self._sql("COMMIT")

    def rollback(self) -> None:
        self._in_transaction = False
        self._forget_writes()
        try:
            self._sql("ROLLBACK")
        except DBAPIError:
            # The connection is gone (the server restarted): so is the transaction.
            self._discard()

    def _forget_writes(self) -> None:
        self._held.clear()
        self._held_saved = None
        self._pending_lines.clear()
        self._pending_updates.clear()
        self._pending_early.clear()

    def _discard(self) -> None:
        if self._conn is not None:
            try:
                self._conn.invalidate()
                self._conn.close()
            except Exception:  # noqa: BLE001: closed already, or the driver's socket gone
                pass
            self._conn = None

    def savepoint(self) -> None:
        """Start a nested part of the open transaction (one table's message)."""
        self.flush()
        self._held_saved = {t: dict(row) for t, row in self._held.items()}
        self._sql("SAVEPOINT message")

    def release(self) -> None:
        """Keep what was done since :meth:`savepoint` (its writes are sent now: an error
        in them belongs to that part)."""
        self.flush()
        self._held_saved = None
        self._sql("RELEASE SAVEPOINT message")

    def undo(self) -> None:
        """Undo what was done since :meth:`savepoint`; the transaction goes on."""
        self._pending_lines.clear()
        self._pending_updates.clear()
        self._pending_early.clear()
        if self._held_saved is not None:
            self._held, self._held_saved = self._held_saved, None
        self._sql("ROLLBACK TO SAVEPOINT message")
        self._sql("RELEASE SAVEPOINT message")

    @contextmanager
    def _unit(self, *, write: bool = True):
        """One transaction under the lock, or a part of the batch's when one is open."""
        with self.lock:
            if self._in_transaction:
                yield
                return
            if not write:
                try:
                    yield
                except DBAPIError as exc:
                    if exc.connection_invalidated:
                        self._discard()
                    raise
                return
            self.begin()
            try:
                yield
            except BaseException:
                self.rollback()
                raise
            self.commit()

    def _rows(self, statement) -> list[dict]:
        result = self._execute(statement)
        return [dict(row) for row in result.mappings()]

    # -- the collector's filing (between begin and commit)

    def counter(self, key: str) -> int:
        """Increment and return a persistent counter (the collector's boot)."""
        with self._unit():
            # One write transaction: collectors starting together get distinct values.
            self._increment(key)
            return int(self._execute(select(meta_table.c.value).where(meta_table.c.key == key)).scalar_one())

    def table(self, table_id: str) -> dict | None:
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
            {"table_id": table_id, "seq": seq, "line": _storable(line), "hash": digest, "received": received}
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
                                                line=_storable(line), why=why, received=received))
        return True

    def quarantined(self, table_id: str) -> list[dict]:
        """The lines kept aside for *table_id*, by seq and arrival."""
        q = quarantine_table.c
        with self._unit(write=False):
            return self._rows(select(q.seq, q.hash, q.line, q.why, q.received, q.times)
                              .where(q.table_id == table_id).order_by(q.seq, q.received))

    def raise_alert(self, table_id: str, kind: str, text: str, seq: int | None = None,
                    now: float | None = None) -> dict:
        """Raise an alert, or fold it into the open alert of the same table and
        kind (its ``count`` goes up, ``last_seq``/``last_text``/``last_raised``
        say what came last). Returns the alert as it now is."""
        now = time.time() if now is None else now
        text = _cut(text)
        a = alerts_table.c
        with self._unit():
            if self.backend == "postgresql":
                # The table's row first, as the filing takes it: one order of locks for everyone.
                self._execute(select(tables_table.c.table_id).where(tables_table.c.table_id == table_id)
                              .with_for_update())
            open_id = self._execute(select(a.id).where(a.table_id == table_id, a.kind == kind,
                                                       a.cleared_at.is_(None))
                                    .order_by(a.id.desc()).limit(1).with_for_update()).scalar()
            if open_id is None:
                open_id = self._execute(
                    insert(alerts_table).values(table_id=table_id, kind=kind, text=text, seq=seq, raised=now,
                                          last_seq=seq, last_text=text, last_raised=now)
                    .returning(a.id)).scalar_one()
            else:
                self._execute(update(alerts_table).where(a.id == open_id).values(
                    count=a.count + 1, last_seq=seq, last_text=text, last_raised=now))
            return self.alert(open_id)

    # -- reading and clearing (any thread)

    def clear_alert(self, alert_id: int, who: str, note: str = "") -> dict | None:
        """Acknowledge an alert; records who and when in the audit trail.
        Returns the alert, or None if there is no such open alert."""
        now = time.time()
        a = alerts_table.c
        with self._unit():
            cleared = self._execute(update(alerts_table).where(a.id == alert_id, a.cleared_at.is_(None))
                                    .values(cleared_by=who, cleared_at=now, note=note)).rowcount
            if cleared:
                self._execute(insert(audit_table).values(at=now, who=who, action="clear",
                                                   alert_id=alert_id, detail=note))
        return self.alert(alert_id) if cleared else None

    def alert(self, alert_id: int) -> dict | None:
        with self._unit(write=False):
            row = self._execute(select(*_ALERT_COLUMNS).where(alerts_table.c.id == alert_id)).first()
        return _alert(row) if row else None

    def alerts(self, *, open_only: bool = True) -> list[dict]:
        stmt = select(*_ALERT_COLUMNS).order_by(alerts_table.c.id)
        if open_only:
            stmt = stmt.where(alerts_table.c.cleared_at.is_(None))
        with self._unit(write=False):
            return [_alert(r) for r in self._execute(stmt)]

    def alert_summary(self, newest: int) -> dict:
        """The open alerts in brief: the *newest* of them (oldest first), how many
        are open, and how often each table raised each kind (``counts``)."""
        a = alerts_table.c
        with self._unit(write=False):
            rows = self._execute(select(*_ALERT_COLUMNS).where(a.cleared_at.is_(None))
                                 .order_by(a.id.desc()).limit(max(0, newest))).all()
            counts: dict[str, dict[str, int]] = {}
            total = 0
            for table, kind, raised, times in self._execute(
                    select(a.table_id, a.kind, func.count(), func.sum(a.count))
                    .where(a.cleared_at.is_(None)).group_by(a.table_id, a.kind)
                    .order_by(a.table_id, a.kind)):
                counts.setdefault(table, {})[kind] = int(times)
                total += raised
        return {"open": [_alert(r) for r in reversed(rows)], "total": total, "counts": counts}

    def audit(self) -> list[dict]:
        with self._unit(write=False):
            c = audit_table.c
            rows = self._execute(select(c.at, c.who, c.action, c.alert_id, c.detail).order_by(c.id)).all()
        return [{"at": at, "who": w, "action": ac, "alert": i, "detail": d} for at, w, ac, i, d in rows]

    def tables(self) -> list[dict]:
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
                    if seq == 1 and d.get("prev") != P.GENESIS:
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

    # -- dealers' names (the tables know ids only; the floor's admin names them)

    def set_dealer_name(self, dealer: str, name: str, now: float) -> None:
        stmt = self._insert(dealer_names_table).values(dealer=dealer, name=name, changed=now)
        stmt = stmt.on_conflict_do_update(index_elements=[dealer_names_table.c.dealer],
                                          set_={"name": stmt.excluded.name, "changed": stmt.excluded.changed})
        with self._unit():
            self._execute(stmt)

    def remove_dealer_name(self, dealer: str) -> bool:
        with self._unit():
            gone = self._execute(delete(dealer_names_table).where(dealer_names_table.c.dealer == dealer))
            return gone.rowcount > 0

    def dealer_names(self) -> dict[str, str]:
        """Dealer id -> name, for every dealer the floor has a name for."""
        with self._unit(write=False):
            return dict(self._execute(select(dealer_names_table.c.dealer, dealer_names_table.c.name)
                                      .order_by(dealer_names_table.c.dealer)).all())

    def data_version(self) -> int | str:
        """A value that changes whenever anyone (another process too) commits a change:
        SQLite's ``PRAGMA data_version``, PostgreSQL's WAL insert position (it moves
        with every write of the cluster, so it may change with nothing of ours changed,
        never the other way). The web view polls it to notice changes cheaply."""
        with self._unit(write=False):
            if self.backend == "sqlite":
                return self._execute(text("PRAGMA data_version")).scalar_one()
            return str(self._execute(text("SELECT pg_current_wal_insert_lsn()")).scalar_one())

    def bump(self, key: str) -> None:
        """Add one to the counter *key* in one statement (safe across processes)."""
        with self._unit():
            self._increment(key)

    def _increment(self, key: str) -> None:
        stmt = self._insert(meta_table).values(key=key, value="1").on_conflict_do_update(
            index_elements=[meta_table.c.key],
            set_={"value": cast(cast(meta_table.c.value, Int64) + 1, Text)})
        self._execute(stmt)

    def meta(self, key: str) -> str | None:
        with self._unit(write=False):
            return self._execute(select(meta_table.c.value).where(meta_table.c.key == key)).scalar()

    # -- users and sessions of the web view (dealerbox/floor/accounts.py decides; these store)

    def add_user(self, name: str, role: str, password_hash: str, now: float) -> bool:
        """False when *name* exists already."""
        try:
            with self._unit():
                self._execute(insert(users_table).values(name=name, role=role, hash=password_hash,
                                                   created=now, changed=now))
        except IntegrityError:
            return False
        return True

    def user(self, name: str) -> dict | None:
        u = users_table.c
        with self._unit(write=False):
            rows = self._rows(select(u.name, u.role, u.hash, u.created, u.changed).where(u.name == name))
        return rows[0] if rows else None

    def users(self) -> list[dict]:
        """Every user (no hashes), with how many sessions each has open."""
        u, s = users_table.c, sessions_table.c
        open_sessions = (select(func.count()).select_from(sessions_table).where(s.user == u.name)
                         .scalar_subquery().label("sessions"))
        with self._unit(write=False):
            return self._rows(select(u.name, u.role, u.created, u.changed, open_sessions).order_by(u.name))

    def set_password_hash(self, name: str, password_hash: str, now: float, *,
                          end_sessions: bool = True) -> bool:
        """A new hash for *name* (False if no such user); ends the user's sessions
        unless told otherwise (a rehash of the same password at sign-in)."""
        with self._unit():
            changed = self._execute(update(users_table).where(users_table.c.name == name)
                                    .values(hash=password_hash, changed=now)).rowcount
            if changed and end_sessions:
                self._execute(delete(sessions_table).where(sessions_table.c.user == name))
        return changed > 0

    def remove_user(self, name: str) -> bool:
        """Remove *name* and its sessions; False if no such user."""
        with self._unit():
            self._execute(delete(sessions_table).where(sessions_table.c.user == name))
            return self._execute(delete(users_table).where(users_table.c.name == name)).rowcount > 0

    def add_session(self, key: str, user: str, csrf: str, now: float, address: str) -> None:
        with self._unit():
            self._execute(insert(sessions_table).values(key=key, user=user, csrf=csrf, created=now, seen=now,
                                                  address=address))

    def session(self, key: str) -> dict | None:
        """The session stored under *key* with its user's current role, or None."""
        s, u = sessions_table.c, users_table.c
        with self._unit(write=False):
            rows = self._rows(select(s.key, s.user, u.role, s.csrf, s.created, s.seen, s.address)
                              .join_from(sessions_table, users_table, u.name == s.user).where(s.key == key))
        return rows[0] if rows else None

    def touch_session(self, key: str, now: float) -> None:
        with self._unit():
            self._execute(update(sessions_table).where(sessions_table.c.key == key).values(seen=now))

    def drop_session(self, key: str) -> bool:
        with self._unit():
            return self._execute(delete(sessions_table).where(sessions_table.c.key == key)).rowcount > 0

    def drop_stale_sessions(self, seen_before: float, created_before: float) -> int:
        """Delete the sessions idle since *seen_before* or opened before *created_before*."""
        s = sessions_table.c
        with self._unit():
            return self._execute(delete(sessions_table).where(
                or_(s.seen < seen_before, s.created < created_before))).rowcount


def _reason(exc: DBAPIError) -> str:
    """The database's own words for *exc*, on one line."""
    return " ".join(str(exc.orig).split()) or type(exc.orig).__name__


def _alert(row) -> dict:
    i, t, k, text, seq, raised, by, at, note, count, last_seq, last_text, last_raised = row
    return {"id": i, "table": t, "kind": k, "text": text, "seq": seq, "raised": raised,
            "cleared_by": by, "cleared_at": at, "note": note, "count": count,
            "last_seq": last_seq if last_text is not None else seq,
            "last_text": last_text if last_text is not None else text,
            "last_raised": last_raised if last_raised is not None else raised}


def _storable(text: str) -> str:
    """*text* as both backends store it: no lone surrogates, no NUL (PostgreSQL's text has none)."""
    return str(text).encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def _cut(text: str, limit: int = ALERT_TEXT_MAX) -> str:
    """*text* as the store keeps it, at most *limit* characters."""
    text = _storable(text)
    return text if len(text) <= limit else text[:limit - 3] + "..."
