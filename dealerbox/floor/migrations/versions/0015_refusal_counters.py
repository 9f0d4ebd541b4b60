"""Each table's refused lines and messages counted on its row, as the filing refuses them.

Revision ID: 0015
Revises: 0012

The metrics counted them at every scrape over the store's whole history (the lines kept
aside, every ``protocol`` alert ever raised); a scrape now reads them from the tables' rows:
``tables.rejected_chain`` (a line that broke the chain or came again with other content,
each time it came) and ``tables.rejected_protocol`` (a message the floor could not use, each
time). A store of an earlier release starts from what its history holds: the lines kept
aside (``quarantine.times``) and its ``protocol`` alerts' counts; a table known only from
them gets its row.
"""
import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

Int64 = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.add_column("tables", sa.Column("rejected_chain", Int64, nullable=False, server_default="0"))
    op.add_column("tables", sa.Column("rejected_protocol", Int64, nullable=False, server_default="0"))
    op.execute("INSERT INTO tables (table_id) SELECT DISTINCT table_id FROM quarantine "
               "WHERE table_id NOT IN (SELECT table_id FROM tables)")
    op.execute("INSERT INTO tables (table_id) SELECT DISTINCT table_id FROM alerts "
               "WHERE kind = 'protocol' AND table_id NOT IN (SELECT table_id FROM tables)")
    op.execute("UPDATE tables SET rejected_chain = (SELECT COALESCE(SUM(q.times), 0) FROM quarantine q "
               "WHERE q.table_id = tables.table_id)")
    op.execute("UPDATE tables SET rejected_protocol = (SELECT COALESCE(SUM(a.count), 0) FROM alerts a "
               "WHERE a.table_id = tables.table_id AND a.kind = 'protocol')")


def downgrade() -> None:
    with op.batch_alter_table("tables") as tables:
        tables.drop_column("rejected_protocol")
        tables.drop_column("rejected_chain")
