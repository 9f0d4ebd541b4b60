"""The store's counters (``meta``): the collectors' boot number, the clears of alerts."""

from __future__ import annotations

from sqlalchemy import Text, cast, select

from dealerbox.floor.store.connection import Connection
from dealerbox.floor.store.schema import Int64, meta_table

__all__ = ["Counters"]


class Counters(Connection):
    """Named counters every process sharing the store counts in (``meta``)."""

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
