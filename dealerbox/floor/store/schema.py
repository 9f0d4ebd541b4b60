"""The floor store's tables, as the newest migration leaves them.

The migrations (:mod:`dealerbox.floor.migrations`) say how a store got so; these
definitions are what every statement of the store, the figures and a move is
written against, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Double, Index, Integer, MetaData, Table, Text
from sqlalchemy.dialects import sqlite

__all__ = ["METADATA", "Int64", "Float64", "meta_table", "tables_table", "lines_table", "early_lines_table",
           "quarantine_table", "alerts_table", "audit_table", "users_table", "sessions_table",
           "dealer_names_table", "storable"]

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
    #: The table's wall clock minus the floor's when its last live health came (migration 0012).
    Column("clock_offset", Float64),
    Column("clock_offset_at", Float64),
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


def storable(text: str) -> str:
    """*text* as both backends store it: no lone surrogates, no NUL (PostgreSQL's text has none)."""
    return str(text).encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")
