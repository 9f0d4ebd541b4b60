"""Where each table stands in the room: its pit and its place in the pit, as the floor's
admin sets them (``dealerbox floor layout``; migrations/versions/0009_layout.py creates the
table). The floor map draws the pits in name order, each table at its row and column; a
table with no place is drawn with the unplaced ones, by id.
"""

from __future__ import annotations

import time

from sqlalchemy import Column, MetaData, Table, Text, delete, func, select

from dealerbox.floor.store.connection import Connection
from dealerbox.floor.store.schema import Float64, Int64, lines_table, tables_table

__all__ = ["LAYOUT", "layout_table", "TableLayout", "PIT_NAME_MAX", "PLACE_MAX", "check_place"]

LAYOUT = MetaData()
layout_table = Table(
    "table_layout", LAYOUT,
    Column("table_id", Text, primary_key=True),
    Column("pit", Text, nullable=False),
    Column("row", Int64, nullable=False),
    Column("col", Int64, nullable=False),
    Column("changed", Float64, nullable=False),
    #: Who placed it (the admin's login name, or the web user).
    Column("changed_by", Text, nullable=False),
)

#: A pit's name as the map shows it: printable, one line, this long at most.
PIT_NAME_MAX = 40
#: Rows and columns of a pit are 1..PLACE_MAX (a room, not a spreadsheet).
PLACE_MAX = 50


def check_place(pit: str, row: int, col: int) -> str:
    """The pit's name as stored (stripped); :class:`ValueError` saying what is expected."""
    name = pit.strip() if isinstance(pit, str) else ""
    if not name or len(name) > PIT_NAME_MAX or not name.isprintable():
        raise ValueError(f"a pit's name is 1 to {PIT_NAME_MAX} printable characters on one line, not {pit!r}")
    for what, value in (("row", row), ("column", col)):
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= PLACE_MAX:
            raise ValueError(f"a {what} is a whole number from 1 to {PLACE_MAX}, not {value!r}")
    return name


class TableLayout(Connection):
    """The tables' places in the room, and when the floor last filed a line of each."""

    def place_table(self, table_id: str, pit: str, row: int, col: int, who: str,
                    now: float | None = None) -> dict:
        """Put *table_id* at *row*, *col* of *pit* (a new place replaces the old one); two
        tables may not share a place. Raises :class:`ValueError` for a bad place or a taken one."""
        pit = check_place(pit, row, col)
        now = time.time() if now is None else now
        c = layout_table.c
        with self._unit():
            taken = self._execute(select(c.table_id).where(c.pit == pit, c.row == row, c.col == col,
                                                            c.table_id != table_id)).scalar()
            if taken is not None:
                raise ValueError(f"{pit} row {row} column {col} is {taken}'s place")
            stmt = self._insert(layout_table).values(table_id=table_id, pit=pit, row=row, col=col,
                                                     changed=now, changed_by=who)
            self._execute(stmt.on_conflict_do_update(
                index_elements=[c.table_id],
                set_={k: stmt.excluded[k] for k in ("pit", "row", "col", "changed", "changed_by")}))
        return self.table_places()[table_id]

    def unplace_table(self, table_id: str) -> bool:
        """*table_id* has no place any more; False if it had none."""
        with self._unit():
            return self._execute(delete(layout_table).where(layout_table.c.table_id == table_id)).rowcount > 0

    def table_places(self) -> dict[str, dict]:
        """Table id -> ``{"pit", "row", "col", "changed", "changed_by"}``, by pit, row, column."""
        c = layout_table.c
        with self._unit(write=False):
            rows = self._execute(select(c.table_id, c.pit, c.row, c.col, c.changed, c.changed_by)
                                 .order_by(c.pit, c.row, c.col)).all()
        return {t: {"pit": p, "row": r, "col": k, "changed": ch, "changed_by": by}
                for t, p, r, k, ch, by in rows}

    def last_line_times(self) -> dict[str, float]:
        """Table id -> when the floor filed its newest line (the line at its ``last_seq``)."""
        t, ln = tables_table.c, lines_table.c
        with self._unit(write=False):
            return {table: when for table, when in self._execute(
                select(t.table_id, func.max(ln.committed))
                .join(lines_table, (ln.table_id == t.table_id) & (ln.seq == t.last_seq))
                .group_by(t.table_id))}
