"""The floor store's schema migrations (Alembic), run when a store is opened.

Each revision in ``versions/`` is one step of the schema's history, written out
as it was then (never from the models of today), so a store of any earlier
release is brought to the newest schema step by step, on SQLite and PostgreSQL.

:func:`upgrade` runs in one transaction that first takes the store's migration
lock (SQLite: the write lock; PostgreSQL: an advisory lock), so collectors and
web views starting together migrate once and never see half a schema. A store
made before the migrations existed (no ``alembic_version``) is adopted as the
first revision; the later revisions check what is there before they add it.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

__all__ = ["upgrade", "downgrade", "current", "head", "FIRST"]

HERE = Path(__file__).resolve().parent
#: The first revision: the store as the floor's first release made it.
FIRST = "0001"
#: PostgreSQL advisory lock key of the store's migrations ("dbox" in ASCII).
_LOCK_KEY = 0x64626F78


def _config(connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(HERE))
    config.attributes["connection"] = connection
    return config


def head() -> str:
    """The newest revision."""
    return ScriptDirectory.from_config(_config(None)).get_current_head()


def current(engine) -> str | None:
    """The revision the store at *engine* is at (None: no schema yet, or made before migrations)."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def _locked(engine, step) -> None:
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        if engine.dialect.name == "sqlite":
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            conn.exec_driver_sql("BEGIN")
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_LOCK_KEY})")
        try:
            step(conn)
        except BaseException:
            conn.exec_driver_sql("ROLLBACK")
            raise
        conn.exec_driver_sql("COMMIT")


def upgrade(engine, revision: str = "head") -> None:
    """Bring the store at *engine* to *revision* (the newest by default)."""
    if revision == "head" and current(engine) == head():
        # Every start of a collector or web view comes here: a store already at the newest
        # revision needs no write lock, which on SQLite waits behind the running collectors.
        return

    def step(conn):
        config = _config(conn)
        if MigrationContext.configure(conn).get_current_revision() is None \
                and inspect(conn).has_table("tables"):
            command.stamp(config, FIRST)  # made before the migrations: the first release's tables
        command.upgrade(config, revision)
    _locked(engine, step)


def downgrade(engine, revision: str) -> None:
    """Take the store at *engine* back to *revision* (``"base"``: no tables at all)."""
    _locked(engine, lambda conn: command.downgrade(_config(conn), revision))
