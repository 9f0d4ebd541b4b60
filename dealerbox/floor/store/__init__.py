"""The collector's store: committed before anything is acknowledged.

One row per journal line per table (the line exactly as the table stored it,
so the chain can be verified here again), the tables' last known status,
state and health, the alerts and the audit trail of who cleared what, the web
view's users and sessions, and the dealers' names.

Two backends behind this one interface, every statement written once in
SQLAlchemy Core: an SQLite file (the default: nothing else to run) and
PostgreSQL (``[store] url = "postgresql://..."``, through psycopg 3), which
several collectors can share. The schema is Alembic's
(dealerbox/floor/migrations), brought up to date when a store is opened.

:class:`Store` is one object that callers use as one (``store.add_lines(...)``,
``store.raise_alert(...)``), made of one part per concept, each in a module of
its own over the shared :class:`~dealerbox.floor.store.connection.Connection`:

- :mod:`.engine`: where the store is and how it is reached;
- :mod:`.schema`: its tables;
- :mod:`.connection`: the one connection and its transactions;
- :mod:`.lines`: the tables' rows and lines, early lines and quarantine;
- :mod:`.counters`: the counters every process shares;
- :mod:`.alerts`: alerts and the audit trail;
- :mod:`.users`: the web view's users and sessions;
- :mod:`.dealers`: the dealers' names;
- :mod:`.layout`: the tables' places in the room;
- :mod:`.registry`: the room's registry of decks and badges, and each deck's life;
- :mod:`.commissioning`: the tables' commissioning records (filed by the registry pass);
- :mod:`.metrics`: what a metrics scrape reads (functions over a connection, outside :class:`Store`).
"""

from __future__ import annotations

from dealerbox.floor.store.alerts import AlertsAndAudit
from dealerbox.floor.store.bridges import BridgeStates
from dealerbox.floor.store.commissioning import CommissioningRecords
from dealerbox.floor.store.counters import Counters
from dealerbox.floor.store.dealers import DealerNames
from dealerbox.floor.store.layout import TableLayout
from dealerbox.floor.store.engine import StoreUnavailable, describe_target, is_store_url, store_engine
from dealerbox.floor.store.lines import TableBusy, TableLines
from dealerbox.floor.store.registry import RoomRegistry
from dealerbox.floor.store.schema import METADATA, alerts_table, lines_table, tables_table
from dealerbox.floor.store.users import UsersAndSessions

__all__ = ["Store", "StoreUnavailable", "TableBusy", "store_engine", "describe_target",
           "is_store_url", "METADATA", "lines_table", "tables_table", "alerts_table"]


class Store(TableLines, BridgeStates, AlertsAndAudit, Counters, UsersAndSessions, DealerNames,
            TableLayout, RoomRegistry, CommissioningRecords):
    """The store at *target* (an SQLite file's path, or a PostgreSQL URL).

    All of this object's statements go through one connection under :attr:`lock`;
    the collector's writer thread groups many messages into one transaction
    (:meth:`begin` ... :meth:`commit`), every other method is a transaction of its own
    (or a part of the open one, when called between :meth:`begin` and :meth:`commit`).
    Opening it creates the schema, or migrates an older one (``migrate=False``: not).
    """
