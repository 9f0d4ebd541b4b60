"""The tables' places in the room: pit, row and column (dealerbox/floor/store/layout.py).

Revision ID: 0009
Revises: 0008
"""
import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

Float64 = sa.Double().with_variant(sa.REAL(), "sqlite")
Int64 = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "table_layout",
        sa.Column("table_id", sa.Text, primary_key=True),
        sa.Column("pit", sa.Text, nullable=False),
        sa.Column("row", Int64, nullable=False),
        sa.Column("col", Int64, nullable=False),
        sa.Column("changed", Float64, nullable=False),
        sa.Column("changed_by", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("table_layout")
