"""The pit boss's figures: one row per closed hand, per irregularity, per reader that faulted.

Revision ID: 0005
Revises: 0004

Derived from the stored lines by figures.Ledger (fig_progress says how far). Stores of
the release that brought them got them from the ledger itself: only what is missing
is created.
"""
import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

FIGURES = ("fig_hands", "fig_irregularities", "fig_reader_faults", "fig_progress")


def upgrade() -> None:
    have = set(sa.inspect(op.get_bind()).get_table_names())
    if "fig_hands" not in have:
        op.create_table(
            "fig_hands",
            sa.Column("table_id", sa.String, primary_key=True),
            sa.Column("start_seq", sa.BigInteger, primary_key=True),
            sa.Column("end_seq", sa.BigInteger, nullable=False),
            sa.Column("dealer", sa.String),
            sa.Column("started", sa.Double),
            sa.Column("hour", sa.BigInteger),
            sa.Column("ended", sa.Double),
            sa.Column("seconds", sa.Double),
            sa.Column("pause_before", sa.Double, nullable=False),
            sa.Column("players", sa.Integer),
            sa.Column("hole_cards", sa.Integer, nullable=False),
            sa.Column("ended_by", sa.String, nullable=False),
            sa.Column("irregularities", sa.Integer, nullable=False),
            sa.Column("corrections", sa.Integer, nullable=False),
            sa.Column("wrong_corrections", sa.Integer, nullable=False),
            sa.Column("misdeal", sa.Integer, nullable=False),
            sa.Column("void", sa.Integer, nullable=False),
            sa.Column("unread_cards", sa.Integer, nullable=False),
            sa.Column("reader_degraded", sa.Integer, nullable=False),
            sa.Column("reader_faults", sa.Integer, nullable=False),
        )
        op.create_index("fig_hands_started", "fig_hands", ["started"])
        op.create_index("fig_hands_table_started", "fig_hands", ["table_id", "started"])
        op.create_index("fig_hands_dealer_started", "fig_hands", ["dealer", "started"])
    if "fig_irregularities" not in have:
        op.create_table(
            "fig_irregularities",
            sa.Column("table_id", sa.String, primary_key=True),
            sa.Column("seq", sa.BigInteger, primary_key=True),
            sa.Column("start_seq", sa.BigInteger, nullable=False),
            sa.Column("dealer", sa.String),
            sa.Column("started", sa.Double),
            sa.Column("irregularity", sa.String, nullable=False),
            sa.Column("verdict", sa.String, nullable=False),
        )
        op.create_index("fig_irregularities_started", "fig_irregularities", ["started"])
        op.create_index("fig_irregularities_table_started", "fig_irregularities", ["table_id", "started"])
        op.create_index("fig_irregularities_dealer_started", "fig_irregularities", ["dealer", "started"])
    if "fig_reader_faults" not in have:
        op.create_table(
            "fig_reader_faults",
            sa.Column("table_id", sa.String, primary_key=True),
            sa.Column("start_seq", sa.BigInteger, primary_key=True),
            sa.Column("reader", sa.String, primary_key=True),
            sa.Column("dealer", sa.String),
            sa.Column("started", sa.Double),
            sa.Column("faults", sa.Integer, nullable=False),
        )
        op.create_index("fig_reader_faults_started", "fig_reader_faults", ["started"])
    if "fig_progress" not in have:
        op.create_table(
            "fig_progress",
            sa.Column("table_id", sa.String, primary_key=True),
            sa.Column("seq", sa.BigInteger, nullable=False),
            sa.Column("resume_seq", sa.BigInteger),
            sa.Column("dealer", sa.String),
            sa.Column("last_ended", sa.Double),
        )


def downgrade() -> None:
    for table in reversed(FIGURES):
        op.drop_table(table)
