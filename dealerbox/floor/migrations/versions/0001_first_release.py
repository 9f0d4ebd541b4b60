"""The store as the floor's first release made it: tables, their lines, alerts, audit.

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# 64-bit integers and double-precision seconds on both backends.
Int64 = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Float64 = sa.Double().with_variant(sa.REAL(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "meta",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    op.create_table(
        "tables",
        sa.Column("table_id", sa.Text, primary_key=True),
        sa.Column("last_seq", Int64, nullable=False, server_default="0"),
        sa.Column("last_hash", sa.Text, nullable=False, server_default=""),
        sa.Column("first_seq", Int64),
        sa.Column("boot", Int64, nullable=False, server_default="0"),
        sa.Column("conn", Int64, nullable=False, server_default="0"),
        sa.Column("online", Int64, nullable=False, server_default="0"),
        sa.Column("status", sa.Text),
        sa.Column("state", sa.Text),
        sa.Column("health", sa.Text),
        sa.Column("seen", Float64),
    )
    op.create_table(
        "lines",
        sa.Column("table_id", sa.Text, primary_key=True),
        sa.Column("seq", Int64, primary_key=True),
        sa.Column("line", sa.Text, nullable=False),
        sa.Column("hash", sa.Text, nullable=False),
        sa.Column("chain_ok", Int64, nullable=False),
        sa.Column("committed", Float64, nullable=False),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "alerts",
        sa.Column("id", Int64, primary_key=True, autoincrement=True),
        sa.Column("table_id", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("seq", Int64),
        sa.Column("raised", Float64, nullable=False),
        sa.Column("cleared_by", sa.Text),
        sa.Column("cleared_at", Float64),
        sa.Column("note", sa.Text),
    )
    op.create_table(
        "audit",
        sa.Column("id", Int64, primary_key=True, autoincrement=True),
        sa.Column("at", Float64, nullable=False),
        sa.Column("who", sa.Text, nullable=False),
        sa.Column("action", sa.Text, nullable=False),
        sa.Column("alert_id", Int64),
        sa.Column("detail", sa.Text),
    )


def downgrade() -> None:
    for table in ("audit", "alerts", "lines", "tables", "meta"):
        op.drop_table(table)
