"""Dealers' names, kept on the floor (the tables know the badge's id only).

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

Float64 = sa.Double().with_variant(sa.REAL(), "sqlite")


def upgrade() -> None:
    if not sa.inspect(op.get_bind()).has_table("dealer_names"):
        op.create_table(
            "dealer_names",
            sa.Column("dealer", sa.Text, primary_key=True),
            sa.Column("name", sa.Text, nullable=False),
            sa.Column("changed", Float64, nullable=False),
            sqlite_with_rowid=False,
        )


def downgrade() -> None:
    op.drop_table("dealer_names")
