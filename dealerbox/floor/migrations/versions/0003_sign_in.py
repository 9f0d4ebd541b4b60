"""Sign-in: the web view's users and their server-side sessions.

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

Float64 = sa.Double().with_variant(sa.REAL(), "sqlite")


def upgrade() -> None:
    have = sa.inspect(op.get_bind())
    if not have.has_table("users"):
        op.create_table(
            "users",
            sa.Column("name", sa.Text, primary_key=True),
            sa.Column("role", sa.Text, nullable=False),
            sa.Column("hash", sa.Text, nullable=False),
            sa.Column("created", Float64, nullable=False),
            sa.Column("changed", Float64, nullable=False),
        )
    if not have.has_table("sessions"):
        op.create_table(
            "sessions",
            sa.Column("key", sa.Text, primary_key=True),
            sa.Column("user", sa.Text, nullable=False),
            sa.Column("csrf", sa.Text, nullable=False),
            sa.Column("created", Float64, nullable=False),
            sa.Column("seen", Float64, nullable=False),
            sa.Column("address", sa.Text, nullable=False),
        )
        op.create_index("sessions_user", "sessions", ["user"])
    elif "sessions_user" not in {i["name"] for i in have.get_indexes("sessions")}:
        op.create_index("sessions_user", "sessions", ["user"])


def downgrade() -> None:
    op.drop_table("sessions")
    op.drop_table("users")
