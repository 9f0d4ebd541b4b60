"""The room's registry: decks, their tags and lives, badges, the card control log's steps,
the hands each deck dealt, and the registry pass's progress (dealerbox/floor/store/registry.py).

Revision ID: 0010
Revises: 0009
"""
import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

Float64 = sa.Double().with_variant(sa.REAL(), "sqlite")
Int64 = sa.BigInteger().with_variant(sa.Integer, "sqlite")

TABLES = ("reg_decks", "reg_tags", "reg_badges", "reg_steps", "reg_hands", "reg_progress")


def upgrade() -> None:
    op.create_table(
        "reg_decks",
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("back", sa.Text, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("sealed_count", Int64),
        sa.Column("received_at", Float64),
        sa.Column("received_by", sa.Text),
        sa.Column("registered_at", Float64),
        sa.Column("registered_by", sa.Text),
        sa.Column("registered_table", sa.Text),
        sa.Column("first_play_at", Float64),
        sa.Column("first_play_table", sa.Text),
        sa.Column("retired_at", Float64),
        sa.Column("retired_by", sa.Text),
        sa.Column("retired_why", sa.Text),
        sa.Column("destroyed_at", Float64),
        sa.Column("destroyed_by", sa.Text),
        sa.Column("destroyed_witness", sa.Text),
        sa.Column("hands", Int64, nullable=False, server_default="0"),
        sa.Column("play_s", Float64, nullable=False, server_default="0"),
        sa.Column("last_table", sa.Text),
        sa.Column("last_ended", Float64),
        sa.Column("limit_hours", Float64),
        sa.Column("limit_hands", Int64),
        sa.Column("limit_alerted", Float64),
        sa.Column("changed", Float64, nullable=False),
    )
    op.create_table(
        "reg_tags",
        sa.Column("uid", sa.Text, primary_key=True),
        sa.Column("deck", sa.Text, nullable=False),
        sa.Column("card", sa.Text, nullable=False),
    )
    op.create_index("reg_tags_deck", "reg_tags", ["deck"])
    op.create_table(
        "reg_badges",
        sa.Column("uid", sa.Text, primary_key=True),
        sa.Column("dealer", sa.Text, nullable=False),
        sa.Column("registered_at", Float64, nullable=False),
        sa.Column("registered_by", sa.Text, nullable=False),
        sa.Column("registered_table", sa.Text),
        sa.Column("revoked_at", Float64),
        sa.Column("revoked_by", sa.Text),
        sa.Column("revoked_why", sa.Text),
    )
    op.create_table(
        "reg_steps",
        sa.Column("id", Int64, primary_key=True, autoincrement=True),
        sa.Column("at", Float64, nullable=False),
        sa.Column("deck", sa.Text),
        sa.Column("badge", sa.Text),
        sa.Column("step", sa.Text, nullable=False),
        sa.Column("table_id", sa.Text),
        sa.Column("seq", Int64),
        sa.Column("person", sa.Text),
        sa.Column("witness", sa.Text),
        sa.Column("detail", sa.Text),
    )
    op.create_index("reg_steps_line", "reg_steps", ["table_id", "seq", "step"], unique=True)
    op.create_index("reg_steps_deck", "reg_steps", ["deck", "at"])
    op.create_index("reg_steps_at", "reg_steps", ["at"])
    op.create_table(
        "reg_hands",
        sa.Column("table_id", sa.Text, primary_key=True),
        sa.Column("start_seq", Int64, primary_key=True),
        sa.Column("deck", sa.Text, nullable=False),
        sa.Column("started", Float64),
        sa.Column("ended", Float64),
        sa.Column("dealer", sa.Text),
    )
    op.create_index("reg_hands_deck", "reg_hands", ["deck", "started"])
    op.create_table(
        "reg_progress",
        sa.Column("table_id", sa.Text, primary_key=True),
        sa.Column("seq", Int64, nullable=False),
        sa.Column("resume_seq", Int64),
    )


def downgrade() -> None:
    for table in reversed(TABLES):
        op.drop_table(table)
