"""The reads a page makes cost what its range holds, not what the store does (issue 47: a
year is some 400 million lines).

Time indexes for the reads by time: the audit trail of a range, the alerts raised, cleared
or raised again in it (the audit trail, the shift report, the Surveillance page), and the
hands each deck dealt on a day (the card control log). Without them each of these reads
every row the store ever kept. An alert's ``last_raised`` is filled where an older floor
left it empty (its first raise), so that "raised again since" is one indexed column.

Each hand's number at its table (``fig_hands.number``, 1 for the first the ledger filed)
and the closed hands filed per table (``fig_progress.hands``): a hand's page names the hand
without counting every hand the table dealt before it. Filled here for the hands filed
before, in ``start_seq`` order per table, as the ledger numbers the ones it files.

Revision ID: 0013
Revises: 0012
"""
import sqlalchemy as sa
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
    op.add_column("fig_hands", sa.Column("number", sa.BigInteger))
    op.add_column("fig_progress", sa.Column("hands", sa.BigInteger))
    # UPDATE ... FROM: PostgreSQL, and SQLite since 3.33 (Debian 12 ships 3.40).
    op.execute("UPDATE fig_hands SET number = numbered.n FROM ("
               "SELECT table_id AS t, start_seq AS s, row_number() OVER (PARTITION BY table_id ORDER BY start_seq) AS n "
               "FROM fig_hands) AS numbered WHERE fig_hands.table_id = numbered.t AND fig_hands.start_seq = numbered.s")
    op.execute("UPDATE fig_progress SET hands = (SELECT count(*) FROM fig_hands "
               "WHERE fig_hands.table_id = fig_progress.table_id)")


def downgrade() -> None:
    with op.batch_alter_table("fig_progress") as batch:
        batch.drop_column("hands")
    with op.batch_alter_table("fig_hands") as batch:
        batch.drop_column("number")
    for name, table, _columns in reversed(INDEXES):
        op.drop_index(name, table_name=table)
