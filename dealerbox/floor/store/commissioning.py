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
import math
import re
import time

from sqlalchemy import func, select

from dealerbox.domain.events import is_fingerprint, shown
from dealerbox.errors import FloorError
from dealerbox.floor.store.connection import Connection
from dealerbox.floor.store.schema import commissionings_table, storable

__all__ = ["CommissioningRecords", "CommissioningRefused", "check_commissioning", "COMMISSIONED",
           "DEVICES", "VERDICTS", "RECORD_KEYS"]

log = logging.getLogger(__name__)

#: The journal event a commissioning run ends with.
COMMISSIONED = "commissioned"
#: The devices a run may check, and the verdicts each ends in (CONTRACT.md).
DEVICES = ("lcd", "leds", "buttons", "mouth", "shoe", "board", "clock", "state")
VERDICTS = ("pass", "fail", "skipped")
#: The record's keys, every one required; the journal's own ``t``, ``ev`` and ``id`` beside them.
RECORD_KEYS = ("technician", "at", "zone", "version", "config", "ok", "devices")
_EVENT_KEYS = frozenset(RECORD_KEYS) | {"t", "ev", "id"}
_DEVICE_KEYS = frozenset({"device", "verdict", "advice", "figures"})
_FIGURE_KEYS = frozenset({"name", "value", "unit", "bound", "ok"})
#: Lengths the floor keeps (a real record's are a fraction of these; a table's line is at most 64 KiB).
_PERSON_MAX, _VERSION_MAX, _NAME_MAX, _UNIT_MAX, _BOUND_MAX, _ADVICE_MAX = 80, 64, 120, 32, 120, 2000
_FIGURES_MAX = 500
#: An IANA zone's name: ``Europe/Prague``, ``America/Argentina/Buenos_Aires``, ``UTC``, ``Etc/GMT+1``.
_ZONE = re.compile(r"[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*")
#: No run predates the floor's software, nor comes from past Python's years.
_FIRST_YEAR, _LAST_YEAR = 2000, 9998


class CommissioningRefused(FloorError, ValueError):
    """A ``commissioned`` record whose fields are not the contract's: the text says which and why."""


def _text(what: str, value, most: int, *, empty: bool = False) -> str:
    if not isinstance(value, str) or len(value) > most or not (empty or value.strip()) or not value.isprintable():
        raise CommissioningRefused(f"{what} must be {'' if empty else '1 to '}{most} printable characters"
                                   f"{' (or none)' if empty else ''}, not {shown(value)}")
    return value


def _keys(what: str, d, allowed: frozenset, required) -> dict:
    if not isinstance(d, dict):
        raise CommissioningRefused(f"{what} must be a JSON object, not {shown(d)}")
    extra = sorted(map(str, d.keys() - allowed))
    if extra:
        raise CommissioningRefused(f"{what} has an unknown key {shown(extra[0])}")
    missing = [k for k in required if k not in d]
    if missing:
        raise CommissioningRefused(f"{what} lacks {missing[0]!r} (every key of a record is required)")
    return d


def _moment(value) -> tuple[float, str]:
    """``at``: ISO 8601 local time with its UTC offset -> epoch seconds, and the text as sent."""
    if not isinstance(value, str) or len(value) > 40:
        raise CommissioningRefused(f"'at' must be an ISO 8601 time with its UTC offset, not {shown(value)}")
    try:
        moment = _dt.datetime.fromisoformat(value)
    except ValueError:
        raise CommissioningRefused(f"'at' must be an ISO 8601 time with its UTC offset "
                                   f"(2026-12-02T14:05:00+01:00), not {shown(value)}") from None
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise CommissioningRefused(f"'at' must carry its UTC offset (+01:00), not {shown(value)}")
    if not _FIRST_YEAR <= moment.year <= _LAST_YEAR:
        raise CommissioningRefused(f"'at' must be a time from {_FIRST_YEAR} on, not {shown(value)}")
    return moment.timestamp(), value


def _figure(where: str, f) -> dict:
    f = _keys(where, f, _FIGURE_KEYS, sorted(_FIGURE_KEYS))
    value = f["value"]
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                              or not math.isfinite(value)):
        raise CommissioningRefused(f"{where}: 'value' must be a number or null, not {shown(value)}")
    if not isinstance(f["ok"], bool):
        raise CommissioningRefused(f"{where}: 'ok' must be true or false, not {shown(f['ok'])}")
    return {"name": _text(f"{where}: 'name'", f["name"], _NAME_MAX), "value": value,
            "unit": _text(f"{where}: 'unit'", f["unit"], _UNIT_MAX, empty=True),
            "bound": _text(f"{where}: 'bound'", f["bound"], _BOUND_MAX, empty=True), "ok": f["ok"]}


def _device(index: int, d) -> dict:
    named = d.get("device") if isinstance(d, dict) else None
    d = _keys(f"device {index + 1}" + (f" ({named})" if named in DEVICES else ""), d, _DEVICE_KEYS,
              ("device", "verdict", "advice", "figures"))
    name = d["device"]
    if not isinstance(name, str) or name not in DEVICES:
        raise CommissioningRefused(f"device {index + 1}: 'device' must be one of {', '.join(DEVICES)}, "
                                   f"not {shown(name)}")
    verdict = d["verdict"]
    if not isinstance(verdict, str) or verdict not in VERDICTS:
        raise CommissioningRefused(f"device {name}: 'verdict' must be one of {', '.join(VERDICTS)}, "
                                   f"not {shown(verdict)}")
    figures = d["figures"]
    if not isinstance(figures, list) or len(figures) > _FIGURES_MAX:
        raise CommissioningRefused(f"device {name}: 'figures' must be a list of at most {_FIGURES_MAX} "
                                   f"figures, not {shown(figures)}")
    return {"device": name, "verdict": verdict,
            "advice": _text(f"device {name}: 'advice'", d["advice"], _ADVICE_MAX, empty=True),
            "figures": [_figure(f"device {name}, figure {i + 1}", f) for i, f in enumerate(figures)]}


def check_commissioning(event) -> dict:
    """A ``commissioned`` event as the floor files it (``at`` in epoch seconds beside
    ``at_text`` as sent, ``ok`` and every device checked), or :class:`CommissioningRefused`
    saying which field is not the contract's and what was expected."""
    event = _keys("a commissioning record", event, _EVENT_KEYS, RECORD_KEYS)
    at, at_text = _moment(event["at"])
    zone = event["zone"]
    if not isinstance(zone, str) or len(zone) > 64 or (zone and not _ZONE.fullmatch(zone)):
        raise CommissioningRefused(f"'zone' must be an IANA zone's name (Europe/Prague) or \"\", not {shown(zone)}")
    if not is_fingerprint(event["config"]):
        raise CommissioningRefused(f"'config' must be the config's SHA-256 in lower-case hex, "
                                   f"not {shown(event['config'])}")
    ok, devices = event["ok"], event["devices"]
    if not isinstance(ok, bool):
        raise CommissioningRefused(f"'ok' must be true or false, not {shown(ok)}")
    if not isinstance(devices, list) or not 1 <= len(devices) <= len(DEVICES):
        raise CommissioningRefused(f"'devices' must list 1 to {len(DEVICES)} devices in run order, "
                                   f"not {shown(devices)}")
    checked = [_device(i, d) for i, d in enumerate(devices)]
    names = [d["device"] for d in checked]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise CommissioningRefused(f"device {twice} is in the record twice")
    failed = [d["device"] for d in checked if d["verdict"] == "fail"]
    if ok != (not failed):
        raise CommissioningRefused(f"'ok' is {str(ok).lower()}, but " + (
            f"{', '.join(failed)} failed" if failed else "no device failed"))
    return {"technician": _text("'technician'", event["technician"], _PERSON_MAX), "at": at, "at_text": at_text,
            "zone": zone, "version": _text("'version'", event["version"], _VERSION_MAX), "config": event["config"],
            "ok": ok, "devices": checked}


def _record(row: dict) -> dict:
    row["ok"] = bool(row["ok"])
    row["devices"] = json.loads(row["devices"])
    row["table"] = row.pop("table_id")
    return row


class CommissioningRecords(Connection):
    """The tables' commissioning records. The registry pass files them
    (:meth:`_file_commissioning`, inside its transaction); the tables page reads each table's
    last (:meth:`last_commissionings`), a table's page all of them (:meth:`commissionings`)."""

    def _file_commissioning(self, table: str, seq: int, event, *, fresh: bool) -> dict | None:
        """File the ``commissioned`` event of *table*'s line *seq*; a record that is not the
        contract's is logged and raised as a ``protocol`` alert when the line is *fresh* (not
        read again after a restart), and filed never. Returns the alert, if one was raised."""
        try:
            record = check_commissioning(event)
        except CommissioningRefused as refused:
            if not fresh:
                return None
            log.warning("commissioning: %s seq %s refused: %s", table, seq, refused)
            return self.raise_alert(table, "protocol",
                                    f"commissioning record refused (seq {seq}): {storable(str(refused))}", seq,
                                    time.time())
        self._execute(self._insert(commissionings_table).values(
            table_id=table, seq=seq, at=record["at"], at_text=record["at_text"], zone=record["zone"],
            technician=storable(record["technician"]), version=storable(record["version"]),
            config=record["config"], ok=int(record["ok"]),
            devices=json.dumps(record["devices"], sort_keys=True), filed=time.time())
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
