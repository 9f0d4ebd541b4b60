"""The properties' bridges: connected or blind, since when (dealerbox/floor/store/bridges.py).

Revision ID: 0008
Revises: 0007
"""
import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

Float64 = sa.Double().with_variant(sa.REAL(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "bridges",
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("connected", sa.Boolean, nullable=False),
        sa.Column("since", Float64, nullable=False),
        sa.Column("heard", Float64, nullable=False),
        sa.Column("alerted", sa.Boolean, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("bridges")
