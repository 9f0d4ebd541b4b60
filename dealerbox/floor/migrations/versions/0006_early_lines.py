"""Lines that came ahead of a gap, kept until the lines before them are filed.

Revision ID: 0006
Revises: 0005

With several collectors a table's next message often reaches one collector while
the message before it is still in another's queue. Its lines wait here (never the
record, never acknowledged) and the collector that fills the gap chains them in
the same transaction. ``tables.early_at`` says since when a table has lines waiting
(NULL: none), so that the filing needs no query to know.
"""
import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

Int64 = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Float64 = sa.Double().with_variant(sa.REAL(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "early_lines",
        sa.Column("table_id", sa.Text, primary_key=True),
        sa.Column("seq", Int64, primary_key=True),
        sa.Column("line", sa.Text, nullable=False),
        sa.Column("hash", sa.Text, nullable=False),
        sa.Column("received", Float64, nullable=False),
        sqlite_with_rowid=False,
    )
    op.add_column("tables", sa.Column("early_at", Float64))


def downgrade() -> None:
    with op.batch_alter_table("tables") as tables:
        tables.drop_column("early_at")
    op.drop_table("early_lines")
