"""Game protection: the protection pass's progress, deck histories, dealer charts,
per-hand results, and the fitted references (dealerbox/floor/protect/tables.py).

Revision ID: 0007
Revises: 0006
"""
import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

Int64 = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Float64 = sa.Double().with_variant(sa.REAL(), "sqlite")

TABLES = ("protect_progress", "protect_decks", "protect_dealers", "protect_hands", "protect_fitted")


def upgrade() -> None:
    op.create_table(
        "protect_progress",
        sa.Column("table_id", sa.Text, primary_key=True),
        sa.Column("seq", Int64, nullable=False),
        sa.Column("resume_seq", Int64),
        sa.Column("dealer", sa.Text),
        sa.Column("window", Int64),
    )
    op.create_table(
        "protect_decks",
        sa.Column("table_id", sa.Text, primary_key=True),
        sa.Column("deck", sa.Text, primary_key=True),
        sa.Column("pairs", sa.Text, nullable=False),
    )
    op.create_table(
        "protect_dealers",
        sa.Column("dealer", sa.Text, primary_key=True),
        sa.Column("chart", Int64, nullable=False),
        sa.Column("block", sa.Text, nullable=False),
    )
    op.create_table(
        "protect_hands",
        sa.Column("table_id", sa.Text, primary_key=True),
        sa.Column("start_seq", Int64, primary_key=True),
        sa.Column("dealer", sa.Text),
        sa.Column("started", Float64),
        sa.Column("players", sa.Integer),
        sa.Column("hole_cards", sa.Integer, nullable=False),
        sa.Column("deck", sa.Text),
        sa.Column("statistic", sa.Integer),
        sa.Column("p_value", Float64),
        sa.Column("error", sa.Integer, nullable=False),
        sa.Column("chart", Float64, nullable=False),
        sa.Column("seats", sa.Text, nullable=False),
        sa.Column("strong", sa.Text, nullable=False),
    )
    op.create_index("protect_hands_started", "protect_hands", ["started"])
    op.create_index("protect_hands_table_started", "protect_hands", ["table_id", "started"])
    op.create_index("protect_hands_dealer_started", "protect_hands", ["dealer", "started"])
    op.create_table(
        "protect_fitted",
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )


def downgrade() -> None:
    for table in reversed(TABLES):
        op.drop_table(table)
