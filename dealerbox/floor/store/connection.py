"""The floor store's connection and its transactions, under every part of the store.

Transactions are explicit SQL on a connection in the driver's autocommit mode,
as the filing needs them: one per batch of messages, a savepoint per message.
On SQLite a batch takes the write lock at once (``BEGIN IMMEDIATE``); on
PostgreSQL each table's row is locked (``SELECT ... FOR UPDATE``) before its
``seq`` and chain are checked, so collectors filing one table's batches at once
take turns with that table and with no other.

The open transaction's writes of lines and tables' rows are held here and sent
together when it commits (or before anything reads them back): on PostgreSQL
each statement costs a round trip to the server.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Table, bindparam, insert, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError

from dealerbox.floor.migrations import upgrade
from dealerbox.floor.store.engine import StoreUnavailable, describe_target, is_store_url, reason, store_engine
from dealerbox.floor.store.schema import early_lines_table, lines_table, tables_table

__all__ = ["Connection"]


class Connection:
    """The store at *target* (an SQLite file's path, or a PostgreSQL URL): its one
    connection and its transactions, which every part of :class:`~dealerbox.floor.store.Store`
    runs its statements through.

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
                upgrade(self.engine)
        except DBAPIError as exc:
            self.engine.dispose()
            raise StoreUnavailable(f"the store {self.url} cannot be opened: {reason(exc)}") from None

    def close(self) -> None:
        """Close the connection and the engine's pool."""
        with self.lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self.engine.dispose()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

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
        """Send the transaction's held writes and commit it."""
        self.flush()
        self._in_transaction = False
        self._forget_writes()
        self._sql("COMMIT")

    def rollback(self) -> None:
        """Undo the open transaction (and forget its held writes)."""
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

    def data_version(self) -> int | str:
        """A value that changes whenever anyone (another process too) commits a change:
        SQLite's ``PRAGMA data_version``, PostgreSQL's WAL insert position (it moves
        with every write of the cluster, so it may change with nothing of ours changed,
        never the other way). The web view polls it to notice changes cheaply."""
        with self._unit(write=False):
            if self.backend == "sqlite":
                return self._execute(text("PRAGMA data_version")).scalar_one()
            return str(self._execute(text("SELECT pg_current_wal_insert_lsn()")).scalar_one())
