"""Moving a floor store into another: an SQLite floor grown into a casino group's PostgreSQL.

``dealerbox floor migrate --from floor.sqlite`` copies every table's lines (and
those waiting ahead of a gap), the tables' rows, the lines kept aside, the alerts
with their audit trail, the web view's users, the dealers' names and the room's
registry (decks, tags, badges, the card control log, the hands each deck dealt and
the registry pass's progress) and the tables' commissioning records into the configured
store, in one transaction of the target (it holds all of it or nothing), from one read
snapshot of the source. The target must hold none of
these yet. Afterwards each table's chain is verified in the target and must read
as it does in the source, and the figures are filed from the copied lines.
Sessions are not copied: supervisors sign in again. The collectors and web views
must be stopped while it runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import func, insert, select, text
from sqlalchemy.dialects import postgresql, sqlite

from dealerbox.errors import FloorError
from dealerbox.floor.telling.figures import Ledger
from dealerbox.floor.store import Store
from dealerbox.floor.store.layout import layout_table
from dealerbox.floor.protect.tables import protect_fitted
from dealerbox.floor.store.schema import (alerts_table, audit_table, commissionings_table, dealer_names_table,
                                          early_lines_table, lines_table, meta_table, quarantine_table,
                                          reg_badges_table, reg_decks_table, reg_hands_table, reg_progress_table,
                                          reg_steps_table, reg_tags_table, tables_table, users_table)

__all__ = ["move_store", "Moved"]

#: What is copied, in this order (sessions are not: their users sign in again).
COPIED = (tables_table, lines_table, early_lines_table, quarantine_table, alerts_table, audit_table,
          users_table, dealer_names_table, protect_fitted, layout_table,
          reg_decks_table, reg_tags_table, reg_badges_table, reg_steps_table, reg_hands_table, reg_progress_table,
          commissionings_table)
#: Rows read and written at a time.
CHUNK = 5000


@dataclass
class Moved:
    """What :func:`move_store` copied: rows per store table, and the hands the figures filed."""

    rows: dict[str, int] = field(default_factory=dict)
    tables_verified: int = 0
    lines_filed: int = 0


def move_store(source: Store, target: Store) -> Moved:
    """Copy every row of *source* into *target* (see the module's docstring); raises
    :class:`~dealerbox.errors.FloorError` when the target is not empty or the copy does
    not read back as the source."""
    if source.url == target.url:
        raise FloorError(f"the store to move from and the configured store are both {source.url}")
    moved = Moved()
    with target.engine.connect() as dst:
        filled = [t.name for t in COPIED
                  if dst.execute(select(func.count()).select_from(t)).scalar_one()]
    if filled:
        raise FloorError(f"the store {target.url} holds {', '.join(filled)} already: a store is "
                         "moved into an empty one only")
    with source.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as src, \
            target.engine.begin() as dst:
        src.exec_driver_sql("BEGIN")  # one snapshot of the source for every table
        try:
            for table in COPIED:
                moved.rows[table.name] = _copy(src, dst, table)
            _copy_meta(src, dst, target.backend)
            if target.backend == "postgresql":
                for table in (alerts_table, audit_table, reg_steps_table):
                    # The copied ids were given, not drawn: the next one drawn follows them.
                    dst.execute(text(f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                                     f"COALESCE(MAX(id), 1), MAX(id) IS NOT NULL) FROM {table.name}"))
        finally:
            src.exec_driver_sql("COMMIT")
    for row in source.tables():
        table_id = row["table_id"]
        if target.verify(table_id) != source.verify(table_id):
            raise FloorError(f"table {table_id}'s chain reads otherwise in {target.url} than in "
                             f"{source.url}: the copy is not to be trusted")
        moved.tables_verified += 1
    moved.lines_filed = Ledger().catch_up(target.engine)
    return moved


def _copy(src, dst, table) -> int:
    copied = 0
    result = src.execution_options(yield_per=CHUNK).execute(select(table))
    for chunk in result.mappings().partitions(CHUNK):
        dst.execute(insert(table), [dict(row) for row in chunk])
        copied += len(chunk)
    return copied


def _copy_meta(src, dst, backend: str) -> None:
    """The source's counters; the collectors' boot number never goes back."""
    rows = dict(src.execute(select(meta_table.c.key, meta_table.c.value)).all())
    have = dict(dst.execute(select(meta_table.c.key, meta_table.c.value)).all())
    for key, value in rows.items():
        if key in have and have[key].isdigit() and value.isdigit():
            value = str(max(int(value), int(have[key])))
        stmt = (postgresql if backend == "postgresql" else sqlite).insert(meta_table)
        stmt = stmt.values(key=key, value=value)
        dst.execute(stmt.on_conflict_do_update(index_elements=[meta_table.c.key],
                                               set_={"value": stmt.excluded.value}))

