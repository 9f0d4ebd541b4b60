"""The tables' commissioning records in the store (issue 48): what a table journalled of each
``dealerbox commission`` run, as the floor keeps it for the pit and the regulator.

A table's ``commissioned`` line (CONTRACT.md's keys, each required: ``technician``, ``at``,
``zone``, ``version``, ``config``, ``ok``, ``devices``) is filed by the registry pass
(:mod:`dealerbox.floor.collecting.registry_pass`) in the transaction that moves the table's
progress, one row per line (the table and its ``seq`` are the key: a line read again is
filed once). A record whose fields are not the contract's is never filed: it is refused
with the reason (:func:`check_commissioning` raises :class:`CommissioningRefused`), logged,
and raised as a ``protocol`` alert of its table, as a message the filing refuses is; the
table's other lines go on.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import time

from sqlalchemy import func, select

from dealerbox.domain.events import Event
from dealerbox.errors import EventError, FloorError, RegistryError
from dealerbox.floor.store.connection import Connection
from dealerbox.floor.store.schema import commissionings_table, storable, tables_table

__all__ = ["CommissioningRecords", "CommissioningRefused", "check_commissioning", "COMMISSIONED"]

log = logging.getLogger(__name__)

#: The journal event a commissioning run ends with.
COMMISSIONED = "commissioned"
#: No run predates the floor's software, nor comes from past Python's years.
_FIRST_YEAR, _LAST_YEAR = 2000, 9998


class CommissioningRefused(FloorError, ValueError):
    """A ``commissioned`` record whose fields are not the contract's: the text says which and why."""


def check_commissioning(event) -> dict:
    """A ``commissioned`` event of a journal line as the floor files it (``at`` in epoch
    seconds beside ``at_text`` as sent, ``ok``, every device as checked), or
    :class:`CommissioningRefused` saying which field is not the contract's and what was
    expected. The contract is the vocabulary's (:mod:`dealerbox.domain.commissioning`, through
    :meth:`~dealerbox.domain.events.Event.from_dict`), as the table checks the record it writes."""
    try:
        checked = Event.from_dict(event)
    except EventError as exc:
        raise CommissioningRefused(exc.message) from None
    except RegistryError as exc:   # a card or deck field of another kind's keys: one message, as from_json's
        raise CommissioningRefused(str(exc)) from None
    if checked.ev != COMMISSIONED:
        raise CommissioningRefused(f"'ev' must be {COMMISSIONED!r}, not {checked.ev!r}")
    moment = _dt.datetime.fromisoformat(checked.at)   # the vocabulary checked it: with its UTC offset
    if not _FIRST_YEAR <= moment.year <= _LAST_YEAR:
        raise CommissioningRefused(f"'at' must be a time from {_FIRST_YEAR} to {_LAST_YEAR}, not {checked.at!r}")
    return {"technician": checked.technician, "at": moment.timestamp(), "at_text": checked.at,
            "zone": checked.zone, "version": checked.version, "config": checked.config, "ok": checked.ok,
            "devices": checked.to_dict()["devices"]}


def _record(row: dict) -> dict:
    row["ok"] = bool(row["ok"])
    row["devices"] = json.loads(row["devices"])
    row["table"] = row.pop("table_id")
    return row


class CommissioningRecords(Connection):
    """The tables' commissioning records. The registry pass files them
    (:meth:`_file_commissioning`, inside its transaction); the tables page reads each table's
    last (:meth:`last_commissionings`), a table's page all of them (:meth:`commissionings`)."""

    def _file_commissioning(self, table: str, seq: int, event, at: float, *, fresh: bool) -> dict | None:
        """File the ``commissioned`` event of *table*'s line *seq* (journalled at *at*); a record
        that is not the contract's is logged and raised as a ``protocol`` alert when the line is
        *fresh* (not read again after a restart), and filed never. Returns the alert, if raised."""
        try:
            record = check_commissioning(event)
        except CommissioningRefused as refused:
            if not fresh:
                return None
            log.warning("commissioning: %s seq %s refused: %s", table, seq, refused)
            return self.raise_alert(table, "protocol",
                                    f"commissioning record refused (seq {seq}): {storable(str(refused))}", seq, at)
        t = tables_table.c
        measured = self._rows(select(t.clock_offset, t.clock_offset_at).where(t.table_id == table))
        offset = measured[0] if measured else {"clock_offset": None, "clock_offset_at": None}
        self._execute(self._insert(commissionings_table).values(
            table_id=table, seq=seq, at=record["at"], at_text=record["at_text"], zone=record["zone"],
            technician=storable(record["technician"]), version=storable(record["version"]),
            config=record["config"], ok=int(record["ok"]),
            devices=json.dumps(record["devices"], sort_keys=True), filed=time.time(),
            clock_offset=offset["clock_offset"], clock_offset_at=offset["clock_offset_at"])
            .on_conflict_do_nothing(index_elements=[commissionings_table.c.table_id, commissionings_table.c.seq]))
        return None

    def last_commissionings(self) -> dict[str, dict]:
        """Table id -> its last commissioning record (the latest run; of two at one moment,
        the later line), for every table that has one."""
        c = commissionings_table.c
        latest = (select(c.table_id, func.max(c.at).label("at")).group_by(c.table_id)).subquery()
        with self._unit(write=False):
            rows = self._rows(select(commissionings_table).join(
                latest, (latest.c.table_id == c.table_id) & (latest.c.at == c.at)).order_by(c.table_id, c.seq))
        return {r["table"]: r for r in map(_record, rows)}

    def commissionings(self, table: str) -> list[dict]:
        """Every commissioning record of *table*, the last first."""
        c = commissionings_table.c
        with self._unit(write=False):
            rows = self._rows(select(commissionings_table).where(c.table_id == table)
                              .order_by(c.at.desc(), c.seq.desc()))
        return [_record(r) for r in rows]
