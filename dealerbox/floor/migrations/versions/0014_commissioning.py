"""The tables' commissioning records (issue 48): each ``commissioned`` line a table journals
(``dealerbox commission``: the technician, when, the software and config, every device's
verdict, advice and figures), filed once by the registry pass, shown on the tables page and
on each table's commissioning page.

Revision ID: 0014
Revises: 0013
"""
import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

Int64 = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Float64 = sa.Double().with_variant(sa.REAL(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "commissionings",
        sa.Column("table_id", sa.Text, primary_key=True),
        sa.Column("seq", Int64, primary_key=True),
        sa.Column("at", Float64, nullable=False),
        sa.Column("at_text", sa.Text, nullable=False),
        sa.Column("zone", sa.Text, nullable=False),
        sa.Column("technician", sa.Text, nullable=False),
        sa.Column("version", sa.Text, nullable=False),
        sa.Column("config", sa.Text, nullable=False),
        sa.Column("ok", Int64, nullable=False),
        sa.Column("devices", sa.Text, nullable=False),
        sa.Column("filed", Float64, nullable=False),
        sa.Column("clock_offset", Float64),
        sa.Column("clock_offset_at", Float64),
    )
    op.create_index("commissionings_last", "commissionings", ["table_id", "at"])


def downgrade() -> None:
    op.drop_index("commissionings_last", table_name="commissionings")
    op.drop_table("commissionings")
