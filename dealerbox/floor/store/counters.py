"""The store's counters: the collectors' boot number and the clears of alerts (``meta``), and
each table's refused lines and messages (its row's ``rejected_*``), counted as they happen so
that nothing needs counting over the store's history."""

from __future__ import annotations

from sqlalchemy import Text, cast, select

from dealerbox.floor.store.connection import Connection
from dealerbox.floor.store.schema import Int64, meta_table, tables_table

__all__ = ["Counters", "REJECTED_WHY"]

#: Why a table's line or message was refused -> the column of its row that counts them:
#: ``chain``, a line that broke the table's chain or came again with other content (each time it
#: came); ``protocol``, a message the floor could not use, or a flood it dropped (each time).
REJECTED_WHY = {"chain": tables_table.c.rejected_chain, "protocol": tables_table.c.rejected_protocol}


class Counters(Connection):
    """Named counters every process sharing the store counts in (``meta``), and the tables'
    counts of refusals."""

    def counter(self, key: str) -> int:
        """Increment and return a persistent counter (the collector's boot)."""
        with self._unit():
            # One write transaction: collectors starting together get distinct values.
            self._increment(key)
            return int(self._execute(select(meta_table.c.value).where(meta_table.c.key == key)).scalar_one())

    def bump(self, key: str) -> None:
        """Add one to the counter *key* in one statement (safe across processes)."""
        with self._unit():
            self._increment(key)

    def _increment(self, key: str) -> None:
        stmt = self._insert(meta_table).values(key=key, value="1").on_conflict_do_update(
            index_elements=[meta_table.c.key],
            set_={"value": cast(cast(meta_table.c.value, Int64) + 1, Text)})
        self._execute(stmt)

    def meta(self, key: str) -> str | None:
        """The counter (or other ``meta`` value) *key*, as text; None if never set."""
        with self._unit(write=False):
            return self._execute(select(meta_table.c.value).where(meta_table.c.key == key)).scalar()

    def count_rejected(self, table_id: str, why: str) -> None:
        """Count one line or message of *table_id* refused for *why* (a key of
        :data:`REJECTED_WHY`), in the open transaction (the batch's, so that a message undone
        is not counted) or one of its own. A table first heard through a refusal gets its row:
        the floor knows it from then on. On PostgreSQL the statement takes the table's row lock,
        as the filing and the alerts take it first."""
        column = REJECTED_WHY[why]
        stmt = self._insert(tables_table).values({"table_id": table_id, column.name: 1})
        with self._unit():
            self._execute(stmt.on_conflict_do_update(index_elements=[tables_table.c.table_id],
                                                     set_={column.name: column + 1}))
