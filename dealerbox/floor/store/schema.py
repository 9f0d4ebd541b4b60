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
           "dealer_names_table", "storable", "reg_decks_table", "reg_tags_table", "reg_badges_table",
           "reg_steps_table", "reg_hands_table", "reg_progress_table", "commissionings_table"]

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
    #: The table's wall clock minus the floor's when its last live health came (migration 0011).
    Column("clock_offset", Float64),
    Column("clock_offset_at", Float64),
    #: The table's lines and messages refused, counted as the filing refuses them (migration
    #: 0015): lines that broke its chain or came again with other content, each time; messages
    #: the floor could not use, each time. The metrics read them here, never over the history.
    Column("rejected_chain", Int64, nullable=False, server_default="0"),
    Column("rejected_protocol", Int64, nullable=False, server_default="0"),
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
# The pages that read alerts by time (the audit trail, the shift report, the Surveillance page;
# migration 0013): raised, cleared, or raised again (``last_raised``, its first raise at least) in a range.
Index("alerts_raised", alerts_table.c.raised)
Index("alerts_cleared_at", alerts_table.c.cleared_at)
Index("alerts_last_raised", alerts_table.c.last_raised)
audit_table = Table(
    "audit", METADATA,
    Column("id", Int64, primary_key=True, autoincrement=True),
    Column("at", Float64, nullable=False),
    Column("who", Text, nullable=False),
    Column("action", Text, nullable=False),
    Column("alert_id", Int64),
    Column("detail", Text),
)
#: The audit trail of a range (migration 0013).
Index("audit_at", audit_table.c.at)
# The web view's users and their sessions. A session's key is the SHA-256 of the
# random id in the cookie: a copy of the store signs no one in.
users_table = Table(
    "users", METADATA,
    Column("name", Text, primary_key=True),
    Column("role", Text, nullable=False),
    Column("hash", Text, nullable=False),
    Column("created", Float64, nullable=False),
    Column("changed", Float64, nullable=False),
    # The language the user reads the floor in (en, cs, sk, de); NULL: the room's.
    Column("language", Text),
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

# The room's registry (issue 40; dealerbox/floor/store/registry.py writes it, migration 0010
# creates it): every deck with its life, its tags, the badges, each step of the card control
# log, the hands each deck dealt, and how far the registry pass read each table.
reg_decks_table = Table(
    "reg_decks", METADATA,
    Column("name", Text, primary_key=True),
    Column("back", Text, nullable=False),
    #: received, registered, in_play, retired, destroyed
    Column("state", Text, nullable=False),
    Column("sealed_count", Int64),
    Column("received_at", Float64),
    Column("received_by", Text),
    Column("registered_at", Float64),
    Column("registered_by", Text),
    Column("registered_table", Text),
    Column("first_play_at", Float64),
    Column("first_play_table", Text),
    Column("retired_at", Float64),
    Column("retired_by", Text),
    Column("retired_why", Text),
    Column("destroyed_at", Float64),
    Column("destroyed_by", Text),
    Column("destroyed_witness", Text),
    Column("hands", Int64, nullable=False, server_default="0"),
    Column("play_s", Float64, nullable=False, server_default="0"),
    Column("last_table", Text),
    Column("last_ended", Float64),
    Column("limit_hours", Float64),
    Column("limit_hands", Int64),
    Column("limit_alerted", Float64),
    Column("changed", Float64, nullable=False),
)
reg_tags_table = Table(
    "reg_tags", METADATA,
    Column("uid", Text, primary_key=True),
    Column("deck", Text, nullable=False),
    Column("card", Text, nullable=False),
)
Index("reg_tags_deck", reg_tags_table.c.deck)
reg_badges_table = Table(
    "reg_badges", METADATA,
    Column("uid", Text, primary_key=True),
    Column("dealer", Text, nullable=False),
    Column("registered_at", Float64, nullable=False),
    Column("registered_by", Text, nullable=False),
    Column("registered_table", Text),
    Column("revoked_at", Float64),
    Column("revoked_by", Text),
    Column("revoked_why", Text),
)
reg_steps_table = Table(
    "reg_steps", METADATA,
    Column("id", Int64, primary_key=True, autoincrement=True),
    Column("at", Float64, nullable=False),
    Column("deck", Text),
    Column("badge", Text),
    Column("step", Text, nullable=False),
    Column("table_id", Text),
    #: The journal line the step came from (a table's event), so that it is filed once.
    Column("seq", Int64),
    Column("person", Text),
    Column("witness", Text),
    Column("detail", Text),
)
Index("reg_steps_line", reg_steps_table.c.table_id, reg_steps_table.c.seq, reg_steps_table.c.step, unique=True)
Index("reg_steps_deck", reg_steps_table.c.deck, reg_steps_table.c.at)
Index("reg_steps_at", reg_steps_table.c.at)
reg_hands_table = Table(
    "reg_hands", METADATA,
    Column("table_id", Text, primary_key=True),
    Column("start_seq", Int64, primary_key=True),
    Column("deck", Text, nullable=False),
    Column("started", Float64),
    Column("ended", Float64),
    Column("dealer", Text),
)
Index("reg_hands_deck", reg_hands_table.c.deck, reg_hands_table.c.started)
#: Every deck's hands of a day (the card control log; migration 0013).
Index("reg_hands_started", reg_hands_table.c.started)
reg_progress_table = Table(
    "reg_progress", METADATA,
    Column("table_id", Text, primary_key=True),
    Column("seq", Int64, nullable=False),
    Column("resume_seq", Int64),
)

# The tables' commissioning records (issue 48; dealerbox/floor/store/commissioning.py writes them,
# migration 0014 creates them): one row per run a table journalled (its ``commissioned`` line,
# filed once by the registry pass), with every device's verdict, advice and figures.
commissionings_table = Table(
    "commissionings", METADATA,
    Column("table_id", Text, primary_key=True),
    #: The journal line the record came in: a record is filed once.
    Column("seq", Int64, primary_key=True),
    #: When the run ended (epoch seconds), and as the table wrote it (ISO 8601 with its offset).
    Column("at", Float64, nullable=False),
    Column("at_text", Text, nullable=False),
    #: The table's IANA zone, "" when it did not name one.
    Column("zone", Text, nullable=False),
    Column("technician", Text, nullable=False),
    Column("version", Text, nullable=False),
    #: The SHA-256 of the table's config the run was made with.
    Column("config", Text, nullable=False),
    #: 1: no device failed.
    Column("ok", Int64, nullable=False),
    #: Every device in run order with its verdict, advice and figures (JSON).
    Column("devices", Text, nullable=False),
    #: When the floor filed it.
    Column("filed", Float64, nullable=False),
    #: The table's clock minus the floor's as the floor last measured it before filing the run
    #: (tables.clock_offset, and when it was measured), NULL when the table sent no live health:
    #: a table cannot measure its own offset from the floor, so the record carries the floor's.
    Column("clock_offset", Float64),
    Column("clock_offset_at", Float64),
)
Index("commissionings_last", commissionings_table.c.table_id, commissionings_table.c.at)


def storable(text: str) -> str:
    """*text* as both backends store it: no lone surrogates, no NUL (PostgreSQL's text has none)."""
    return str(text).encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")
