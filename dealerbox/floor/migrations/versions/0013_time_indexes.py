"""Time indexes for the reads a page makes by time: the audit trail of a range, the alerts
raised, cleared or still raised in it (the audit trail, the shift report, the Surveillance
page), and the hands each deck dealt on a day (the card control log). Without them each of
these reads every row the store ever kept (issue 47: a year is some 400 million lines).

An alert's ``last_raised`` is filled where an older floor left it empty (its first raise),
so that "raised again since" is one indexed column.

Revision ID: 0013
Revises: 0012
"""
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

INDEXES = (("audit_at", "audit", ["at"]), ("alerts_raised", "alerts", ["raised"]),
           ("alerts_cleared_at", "alerts", ["cleared_at"]), ("alerts_last_raised", "alerts", ["last_raised"]),
           ("reg_hands_started", "reg_hands", ["started"]))


def upgrade() -> None:
    op.execute("UPDATE alerts SET last_raised = raised WHERE last_raised IS NULL")
    for name, table, columns in INDEXES:
        op.create_index(name, table, columns)


def downgrade() -> None:
    for name, table, _columns in reversed(INDEXES):
        op.drop_index(name, table_name=table)
