"""The commissioning record: each device's figures and verdict, kept on the box and journalled.

A run of ``dealerbox commission`` makes one :class:`DeviceResult` per device it
checks, each with the :class:`Figure` values it was judged by. At the end the whole
run becomes one record (CONTRACT.md, ``commissioned``): it is written atomically to
``<state dir>/commissioned.json`` (:func:`save_record`, what ``--report`` prints) and
put on its way to the journal (:func:`journal_record`), which is how it reaches the
floor. A run stopped half-way records nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from dealerbox import __version__
from dealerbox.atomic import save_atomic
from dealerbox.domain.commission_figures import YES_BOUND
from dealerbox.domain.events import Event
from dealerbox.errors import EventError
from dealerbox.service.registry_outbox import post_registry_event

__all__ = ["Figure", "DeviceResult", "RECORD_NAME", "technician", "config_fingerprint", "local_zone",
           "make_record", "save_record", "load_record", "journal_record", "format_record"]

#: The last record, in the state directory.
RECORD_NAME = "commissioned.json"


def _number(value: float) -> str:
    return f"{value:g}" if float(value).is_integer() else f"{value:.1f}"


@dataclass(frozen=True)
class Figure:
    """One measured figure beside its bound: ``value`` None when nothing could be measured."""

    name: str
    value: float | None
    unit: str
    bound: str
    ok: bool

    @classmethod
    def at_most(cls, name: str, value: float | None, limit: float, unit: str = "") -> "Figure":
        return cls(name, value, unit, f"<= {_number(limit)} {unit}".rstrip(), value is not None and value <= limit)

    @classmethod
    def at_least(cls, name: str, value: float | None, limit: float, unit: str = "") -> "Figure":
        return cls(name, value, unit, f">= {_number(limit)} {unit}".rstrip(), value is not None and value >= limit)

    @classmethod
    def exactly(cls, name: str, value: float | None, expected: float, unit: str = "") -> "Figure":
        return cls(name, value, unit, f"= {_number(expected)} {unit}".rstrip(), value == expected)

    @classmethod
    def confirmed(cls, name: str, yes: bool) -> "Figure":
        """What the technician confirmed seeing or hearing (1 yes, 0 no)."""
        return cls(name, 1 if yes else 0, "", YES_BOUND, yes)

    @classmethod
    def shown(cls, name: str, value: float | None, unit: str = "") -> "Figure":
        """A figure printed for the technician that no bound judges."""
        return cls(name, value, unit, "", True)

    def line(self) -> str:
        """The figure as the run prints it: name, value with its unit, bound, and a mark."""
        value = "-" if self.value is None else f"{_number(self.value)} {self.unit}".rstrip()
        mark = "" if not self.bound or (self.value is None and self.ok) else ("ok" if self.ok else "OUT OF BOUND")
        return f"{self.name:<44} {value:>12}   {self.bound:<16} {mark}".rstrip()

    def to_dict(self) -> dict:
        return {"name": self.name, "value": self.value, "unit": self.unit, "bound": self.bound, "ok": self.ok}


@dataclass
class DeviceResult:
    """One device's outcome: ``pass``, ``fail`` (``advice``: what to check) or ``skipped`` (why)."""

    device: str
    verdict: str = "pass"
    advice: str = ""
    figures: list[Figure] = field(default_factory=list)

    @classmethod
    def skipped(cls, device: str, why: str) -> "DeviceResult":
        return cls(device, "skipped", why)

    @classmethod
    def judged(cls, device: str, figures: list[Figure], advice: list[str]) -> "DeviceResult":
        """Pass when every figure is within its bound; else fail with *advice* (one sentence each)."""
        failed = not all(f.ok for f in figures)
        if failed and not advice:
            advice = ["out of bound: " + ", ".join(f.name for f in figures if not f.ok)]
        return cls(device, "fail" if failed else "pass", " ".join(advice) if failed else "", list(figures))

    def to_dict(self) -> dict:
        return {"device": self.device, "verdict": self.verdict, "advice": self.advice,
                "figures": [f.to_dict() for f in self.figures]}


def technician(euid: int | None = None, environ=None) -> str:
    """Who runs the commissioning: the process's effective user, as the floor's commands name
    theirs (``$USER`` is whatever the caller set). Run as root through sudo, as INSTALL.md
    has it, it is the person sudo let in (``$SUDO_UID``): only root can set that variable for
    a root process, and root could write any record anyway, whereas "root" names nobody for
    the regulator. A ``$SUDO_UID`` that is no user of this box is ignored."""
    euid = os.geteuid() if euid is None else euid
    environ = os.environ if environ is None else environ
    if euid == 0:
        try:
            return pwd.getpwuid(int(environ.get("SUDO_UID", ""))).pw_name
        except (ValueError, KeyError):
            pass
    return pwd.getpwuid(euid).pw_name


def config_fingerprint(path) -> str:
    """The SHA-256 of the table config file's bytes, in lower-case hex."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def local_zone(localtime: Path = Path("/etc/localtime"), timezone: Path = Path("/etc/timezone")) -> str:
    """The box's IANA zone name (``$TZ``, else the ``/etc/localtime`` link, else
    ``/etc/timezone``), or ``""`` when none of them says."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz and "/" in tz and not tz.startswith("/"):
        return tz
    try:
        target = os.readlink(localtime)
    except OSError:
        target = ""
    if "zoneinfo/" in target:
        return target.split("zoneinfo/", 1)[1]
    try:
        return timezone.read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def make_record(results: list[DeviceResult], *, config_path, ended: datetime, zone: str,
                who: str | None = None) -> dict:
    """The run's record as the ``commissioned`` event's fields (CONTRACT.md), checked."""
    fields = {"technician": who or technician(), "at": ended.isoformat(timespec="seconds"), "zone": zone,
              "version": __version__, "config": config_fingerprint(config_path),
              "ok": all(r.verdict != "fail" for r in results), "devices": [r.to_dict() for r in results]}
    Event.from_dict({"t": 0.0, "ev": "commissioned", **fields})
    return fields


def save_record(state_dir, record: dict) -> Path:
    """Keep *record* as the box's last commissioning, atomically (a crash leaves the old one whole)."""
    path = Path(state_dir) / RECORD_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    save_atomic(path, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    return path


def load_record(state_dir) -> dict | None:
    """The box's last record, or None when it has none; :class:`EventError` for a damaged one."""
    path = Path(state_dir) / RECORD_NAME
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise EventError(f"{path}: not a commissioning record ({exc})") from exc
    if not isinstance(record, dict):
        raise EventError(f"{path}: not a commissioning record")
    try:
        Event.from_dict({**record, "t": 0.0, "ev": "commissioned"})
    except EventError as exc:
        raise EventError(f"{path}: not a commissioning record ({exc})") from exc
    return record


def journal_record(config, record: dict) -> str:
    """Put *record* on its way to the table's journal (and so to the floor); what happened, in a sentence."""
    return post_registry_event(config, "commissioned", **record)


def format_record(record: dict) -> str:
    """The record as ``--report`` prints it: who, when, what, and each device with its figures."""
    head = [f"commissioned {record['at']}" + (f" ({record['zone']})" if record["zone"] else ""),
            f"by {record['technician']}, dealerbox {record['version']}, config sha256 {record['config']}",
            f"result: {'PASS' if record['ok'] else 'FAIL'}"]
    lines = head + [""]
    for device in record["devices"]:
        lines.append(f"{device['device']:<8} {device['verdict'].upper()}"
                     + (f": {device['advice']}" if device["advice"] else ""))
        for figure in device["figures"]:
            lines.append("  " + Figure(**figure).line())
    return "\n".join(lines)
