"""Each table's clock as the floor measured it: the offset of its wall clock from the floor's.

Revision ID: 0011
Revises: 0010

A table's ``health`` carries its wall clock (``wall``). When one comes live (not a retained
copy delivered again on subscribe), the floor notes ``wall`` minus its own clock at arrival:
``tables.clock_offset`` (seconds, NULL before the first), measured at ``clock_offset_at``. The
technicians' tables page marks a table whose clock is off by more than a second.
"""
import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

Float64 = sa.Double().with_variant(sa.REAL(), "sqlite")


def upgrade() -> None:
    op.add_column("tables", sa.Column("clock_offset", Float64))
    op.add_column("tables", sa.Column("clock_offset_at", Float64))


def downgrade() -> None:
    with op.batch_alter_table("tables") as tables:
        tables.drop_column("clock_offset_at")
        tables.drop_column("clock_offset")
