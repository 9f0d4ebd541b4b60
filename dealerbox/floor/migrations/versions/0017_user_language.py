"""Each user's own language for the floor's pages (issue 45).

Revision ID: 0017
Revises: 0012

``users.language``: ``en``, ``cs``, ``sk`` or ``de``, chosen by the user from the page header;
NULL (every user before this revision) reads the room's ``[web] language``. A change is on
the audit trail (action ``language``).
"""
import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("users", sa.Column("language", sa.Text()))


def downgrade() -> None:
    with op.batch_alter_table("users") as users:
        users.drop_column("language")
