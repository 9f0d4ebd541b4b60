"""Game protection in a real room: each protection alert's evidence, why a hand's shuffle was
not scored, the deck's last hands as the evidence names them, each table's seats with their
charts, and each dealer's chart against their own baseline (dealerbox/floor/protect/tables.py).

Revision ID: 0012
Revises: 0011
"""
import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

Int64 = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Float64 = sa.Double().with_variant(sa.REAL(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "protect_evidence",
        sa.Column("id", Int64, primary_key=True, autoincrement=True),
        sa.Column("alert_id", Int64, nullable=False),
        sa.Column("table_id", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("seq", Int64),
        sa.Column("raised", Float64, nullable=False),
        sa.Column("evidence", sa.Text, nullable=False),
    )
    op.create_index("protect_evidence_alert", "protect_evidence", ["alert_id", "id"])
    op.add_column("protect_hands", sa.Column("unscored", sa.Text))
    op.add_column("protect_decks", sa.Column("hands", sa.Text))
    op.add_column("protect_progress", sa.Column("seats", sa.Text))
    op.add_column("protect_dealers", sa.Column("own", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("protect_dealers") as batch:
        batch.drop_column("own")
    with op.batch_alter_table("protect_progress") as batch:
        batch.drop_column("seats")
    with op.batch_alter_table("protect_decks") as batch:
        batch.drop_column("hands")
    with op.batch_alter_table("protect_hands") as batch:
        batch.drop_column("unscored")
    op.drop_index("protect_evidence_alert", table_name="protect_evidence")
    op.drop_table("protect_evidence")
