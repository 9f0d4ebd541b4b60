"""Alembic's environment for the floor store: the connection comes from
:func:`dealerbox.floor.migrations.upgrade`, already in its locked transaction."""

from alembic import context

context.configure(connection=context.config.attributes["connection"])
with context.begin_transaction():
    context.run_migrations()
