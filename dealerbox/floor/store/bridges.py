"""The properties' bridges as the group floor last heard of them: connected or blind, and
since when (migrations/versions/0008_bridges.py creates the table).

Each property's bridge publishes a retained ``1`` when it connects to the group broker and
``0`` (its will) when it is gone (firmware_config/floor/bridge.conf). The payload carries no
time: ``since`` is when the floor first heard the state, kept while the same state comes
again (a collector restarting gets the retained message once more). A property blind for
longer than ``[bridges] blind_alert_s`` raises one alert per blind spell.
"""

from __future__ import annotations

import time

from sqlalchemy import Boolean, Column, MetaData, Table, Text, select, update

from dealerbox.floor.bridge_alerts import BLIND_KIND, bridge_alert_table
from dealerbox.floor.store.alerts import AlertsAndAudit
from dealerbox.floor.store.schema import Float64

__all__ = ["BRIDGES", "bridges_table", "BridgeStates", "BLIND_KIND", "bridge_alert_table"]

BRIDGES = MetaData()
bridges_table = Table(
    "bridges", BRIDGES,
    Column("name", Text, primary_key=True),
    Column("connected", Boolean, nullable=False),
    Column("since", Float64, nullable=False),
    Column("heard", Float64, nullable=False),
    # An alert was raised for this blind spell (one per spell, whichever collector saw it first).
    Column("alerted", Boolean, nullable=False),
)


class BridgeStates(AlertsAndAudit):
    """What the floor knows of each property's bridge, and its alert when blind too long."""

    def note_bridge(self, name: str, connected: bool, now: float | None = None) -> dict:
        """The bridge of *name* says it is *connected* (or not) at *now*: a change of state
        starts a new ``since``; the same state again keeps it. Returns the bridge's row."""
        now = time.time() if now is None else now
        b = bridges_table.c
        with self._unit():
            row = self._execute(select(b.connected).where(b.name == name).with_for_update()).first()
            if row is None:
                self._execute(self._insert(bridges_table).values(
                    name=name, connected=connected, since=now, heard=now, alerted=False)
                    .on_conflict_do_nothing(index_elements=[b.name]))
            elif bool(row[0]) != connected:
                self._execute(update(bridges_table).where(b.name == name).values(
                    connected=connected, since=now, heard=now, alerted=False))
            else:
                self._execute(update(bridges_table).where(b.name == name).values(heard=now))
        return self.bridge(name)

    def bridge(self, name: str) -> dict | None:
        """One property's bridge (:meth:`bridges`' rows), or None if never heard of."""
        return next((b for b in self.bridges() if b["name"] == name), None)

    def bridges(self) -> list[dict]:
        """Every property's bridge by name: ``{"name", "connected", "since", "heard", "alerted"}``."""
        b = bridges_table.c
        with self._unit(write=False):
            rows = self._execute(select(b.name, b.connected, b.since, b.heard, b.alerted)
                                 .order_by(b.name)).all()
        return [{"name": n, "connected": bool(c), "since": s, "heard": h, "alerted": bool(a)}
                for n, c, s, h, a in rows]

    def alert_blind_bridges(self, blind_s: float, now: float | None = None) -> list[dict]:
        """Raise an alert for each property blind for *blind_s* seconds or more and not
        alerted in this spell yet; returns the alerts raised."""
        now = time.time() if now is None else now
        b = bridges_table.c
        raised = []
        due = select(b.name, b.since).where(b.connected.is_(False), b.alerted.is_(False),
                                            b.since <= now - blind_s).order_by(b.name)
        # Read first: the collectors ask every tick, and SQLite's write lock is for the lines.
        with self._unit(write=False):
            if not self._execute(due).first():
                return raised
        with self._unit():
            due = self._execute(due.with_for_update()).all()
            for name, since in due:
                self._execute(update(bridges_table).where(b.name == name).values(alerted=True))
                raised.append(self.raise_alert(
                    bridge_alert_table(name), BLIND_KIND,
                    f"the floor has not heard from property {name} for {now - since:.0f} s "
                    f"(its bridge to the group broker is down since "
                    f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(since))})", None, now))
        return raised
