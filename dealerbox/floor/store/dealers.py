"""Dealers' names: the tables know dealers by their ids only; the floor's admin names them."""

from __future__ import annotations

from sqlalchemy import delete, select

from dealerbox.floor.store.connection import Connection
from dealerbox.floor.store.schema import dealer_names_table

__all__ = ["DealerNames"]


class DealerNames(Connection):
    """The names the floor gives the dealers' ids."""

    def set_dealer_name(self, dealer: str, name: str, now: float) -> None:
        """Name *dealer* (a new name replaces the old one)."""
        stmt = self._insert(dealer_names_table).values(dealer=dealer, name=name, changed=now)
        stmt = stmt.on_conflict_do_update(index_elements=[dealer_names_table.c.dealer],
                                          set_={"name": stmt.excluded.name, "changed": stmt.excluded.changed})
        with self._unit():
            self._execute(stmt)

    def remove_dealer_name(self, dealer: str) -> bool:
        """*dealer* has no name any more; False if it had none."""
        with self._unit():
            gone = self._execute(delete(dealer_names_table).where(dealer_names_table.c.dealer == dealer))
            return gone.rowcount > 0

    def dealer_names(self) -> dict[str, str]:
        """Dealer id -> name, for every dealer the floor has a name for."""
        with self._unit(write=False):
            return dict(self._execute(select(dealer_names_table.c.dealer, dealer_names_table.c.name)
                                      .order_by(dealer_names_table.c.dealer)).all())
