"""Hostile tables: lines that break a chain are kept aside, alerts of a kind are folded.

Revision ID: 0002
Revises: 0001

A store made before the migrations may have some of this already (its code
created what it lacked on every start): only what is missing is added.
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

Int64 = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Float64 = sa.Double().with_variant(sa.REAL(), "sqlite")


def folding() -> tuple[sa.Column, ...]:
    """The columns an alert is folded with (new ones each call: a column joins one table only)."""
    return (
        sa.Column("count", Int64, nullable=False, server_default="1"),
        sa.Column("last_seq", Int64),
        sa.Column("last_text", sa.Text),
        sa.Column("last_raised", Float64),
    )


def upgrade() -> None:
    have = sa.inspect(op.get_bind())
    if not have.has_table("quarantine"):
        op.create_table(
            "quarantine",
            sa.Column("table_id", sa.Text, primary_key=True),
            sa.Column("seq", Int64, primary_key=True),
            sa.Column("hash", sa.Text, primary_key=True),
            sa.Column("line", sa.Text, nullable=False),
            sa.Column("why", sa.Text, nullable=False),
            sa.Column("received", Float64, nullable=False),
            sa.Column("times", Int64, nullable=False, server_default="1"),
            sqlite_with_rowid=False,
        )
    columns = {c["name"] for c in have.get_columns("alerts")}
    for column in folding():
        if column.name not in columns:
            op.add_column("alerts", column)
    if "alerts_open" not in {i["name"] for i in have.get_indexes("alerts")}:
        open_ = sa.text("cleared_at IS NULL")
        op.create_index("alerts_open", "alerts", ["table_id", "kind"],
                        sqlite_where=open_, postgresql_where=open_)


def downgrade() -> None:
    op.drop_index("alerts_open", table_name="alerts")
    with op.batch_alter_table("alerts") as alerts:
        for column in reversed(folding()):
            alerts.drop_column(column.name)
    op.drop_table("quarantine")
