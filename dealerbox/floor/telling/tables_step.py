"""Every table as a technician reads it (issue 41): what it runs, how its readers fare, and
whether it is in step with the room.

:func:`room_tables` takes the store's table rows (:meth:`~dealerbox.floor.store.Store.tables`:
the retained ``status`` and ``health`` each table sent, and the clock offset the collector
measured) and answers one :class:`TableCheck` per table, most in need of attention first.

The bars a table is held to are never set by what one table claims (a table's message is its
word, and a broken or hostile box may say anything):

- software: the version most tables run, counting only versions no newer than the floor's own
  (ties: the newer). A table older than that is marked; a table newer than the floor itself
  is marked as running a release the floor does not know, and sets no bar;
- registry: the floor's own current registry version (the store's, which it sends every
  table). A table judging with an older one, or none once the floor has one, is marked; a
  table claiming a newer one than the floor ever sent is marked as such;
- profile: the one most tables run (a tie marks nobody);
- clock: more than :data:`CLOCK_LIMIT_S` off the floor's;
- commissioning: never commissioned, its last run failed, or older than the house's limit, as
  :func:`~dealerbox.floor.telling.commissioning.commission_check` judges each table's last record
  (given to :func:`room_tables` by the caller, which reads them from the store).

Anything of the wrong kind in a table's message is shown as unknown, never trusted.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

from dealerbox.floor.telling.clock import CLOCK_LIMIT_S
from dealerbox.floor.telling.commissioning import CommissionCheck
from dealerbox.floor.telling.figure_text import english, offset_in
from dealerbox.floor.telling.language import Language

__all__ = ["CLOCK_LIMIT_S", "ReaderCheck", "TableCheck", "Room", "room_tables", "version_key"]

#: A reader failing more than this share of its tries needs a look.
READER_ERROR_LIMIT = 0.01


def version_key(text) -> Version | None:
    """*text* as a comparable version, None when it is not one (an old box sends none)."""
    if not isinstance(text, str):
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _text(value) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass
class ReaderCheck:
    """One reader of a table: its name, whether it works, its error rate (a share, None before
    any try) and seconds since its last good poll."""

    name: str
    ok: bool | None
    error_rate: float | None
    last_seen_s: float | None
    faulted: bool

    @property
    def troubled(self) -> bool:
        return self.faulted or (self.error_rate is not None and self.error_rate > READER_ERROR_LIMIT)


@dataclass
class TableCheck:
    """One table as the tables page shows it; ``marks`` are what is out of step or wrong, in
    plain words, ``attention`` orders the page (larger first)."""

    table_id: str
    online: bool
    version: str | None
    config_fingerprint: str | None
    profile: str | None
    registry_version: int | None
    registry_fingerprint: str | None
    readers: list[ReaderCheck]
    clock_offset: float | None
    clock_problem: str | None
    backlog: int | None
    last_heard: float | None
    uptime_s: float | None
    restarts: int | None
    #: Its last commissioning as judged (None: not judged).
    commissioning: CommissionCheck | None = None
    marks: list[str] = field(default_factory=list)
    attention: int = 0

    @property
    def needs_attention(self) -> bool:
        return bool(self.marks)


@dataclass(frozen=True)
class Room:
    """What the room should run: ``version``, the version most tables run that is no newer than
    the floor's own ``floor_version``; the profile most tables run; ``registry``, the floor's
    current registry version (0: the floor has none yet)."""

    version: str | None
    usual_profile: str | None
    registry: int
    floor_version: str | None


def _readers(value) -> list[ReaderCheck]:
    if not isinstance(value, dict):
        return []
    out = []
    for name, r in sorted(value.items()):
        r = r if isinstance(r, dict) else {}
        faulted = r.get("faulted") is True
        rate = _number(r.get("error_rate"))
        rate = rate if rate is not None and 0.0 <= rate <= 1.0 else None
        out.append(ReaderCheck(str(name)[:64], None if "faulted" not in r else not faulted, rate,
                               _number(r.get("last_seen_s")), faulted))
    return out


def _check(row: dict) -> TableCheck:
    health = row.get("health") if isinstance(row.get("health"), dict) else {}
    status = row.get("status") if isinstance(row.get("status"), dict) else {}
    registry = health.get("registry") if isinstance(health.get("registry"), dict) else {}
    clock_problem = _text(health.get("clock_problem")) if health.get("clock_ok") is False else None
    return TableCheck(
        table_id=row["table_id"], online=bool(row.get("online")) and status.get("online") is not False,
        version=_text(health.get("version")), config_fingerprint=_text(health.get("config_fingerprint")),
        profile=_text(health.get("profile")), registry_version=_count(registry.get("version")),
        registry_fingerprint=_text(registry.get("fingerprint")), readers=_readers(health.get("readers")),
        clock_offset=_number(row.get("clock_offset")), clock_problem=clock_problem,
        backlog=_count(health.get("backlog")), last_heard=_number(row.get("seen")),
        uptime_s=_number(health.get("uptime_s")), restarts=_count(health.get("restarts")))


def room_of(checks: list[TableCheck], floor_version: str | None, floor_registry: int) -> Room:
    """The room's bars: the version most tables run no newer than *floor_version* (ties: the
    newer), the most common profile (ties: the first by name) and *floor_registry*."""
    floor_key = version_key(floor_version)
    said = Counter(version_key(c.version) for c in checks if version_key(c.version) is not None
                   and (floor_key is None or version_key(c.version) <= floor_key))
    usual_version = max(said.items(), key=lambda kv: (kv[1], kv[0]))[0] if said else None
    profiles = Counter(c.profile for c in checks if c.profile)
    usual = sorted(profiles.items(), key=lambda kv: (-kv[1], kv[0]))
    return Room(str(usual_version) if usual_version is not None else None, usual[0][0] if usual else None,
                floor_registry, floor_version)


def _mark(check: TableCheck, room: Room, profiles: Counter, language: Language) -> None:
    _, ngettext, percent = language.gettext, language.ngettext, language.forms.percent
    marks, attention = [], 0
    if not check.online:
        marks.append(_("offline: the floor does not hear this table"))
        attention += 8
    if check.clock_offset is not None and abs(check.clock_offset) > CLOCK_LIMIT_S:
        marks.append(_("its clock is %(offset)s") % {"offset": offset_in(language, check.clock_offset)})
        attention += 4
    if check.clock_problem:
        # The table's own words for what is wrong with its clock: its message, as it sent it.
        marks.append(_("its clock cannot be trusted: %(problem)s") % {"problem": check.clock_problem})
        attention += 4
    for reader in check.readers:
        if reader.faulted:
            marks.append(_("reader %(name)s is not working") % {"name": reader.name})
            attention += 6
        elif reader.troubled:
            marks.append(_("reader %(name)s fails %(share)s of its reads")
                         % {"name": reader.name, "share": percent(reader.error_rate)})
            attention += 2
    own, floor_key = version_key(check.version), version_key(room.floor_version)
    if own is not None and floor_key is not None and own > floor_key:
        marks.append(_("runs version %(version)s, newer than this floor's own %(floor)s: not a release the floor "
                       "knows") % {"version": check.version, "floor": room.floor_version})
        attention += 3
    elif room.version is not None:
        if check.version is None:
            marks.append(_("does not say its version (most tables run %(usual)s)") % {"usual": room.version})
            attention += 3
        elif own is not None and own < version_key(room.version):
            marks.append(_("runs version %(version)s, older than most tables' %(usual)s")
                         % {"version": check.version, "usual": room.version})
            attention += 3
    if room.usual_profile is not None and check.profile is not None and check.profile != room.usual_profile \
            and profiles[check.profile] < profiles[room.usual_profile]:
        marks.append(_("deals by profile %(profile)s, while most tables deal by %(usual)s")
                     % {"profile": check.profile, "usual": room.usual_profile})
        attention += 3
    if check.registry_version is not None and check.registry_version > room.registry:
        said = {"version": check.registry_version, "floor": room.registry}
        marks.append(_("says it judges cards with registry version %(version)s, newer than the floor's own "
                       "%(floor)s: not one the floor sent") % said if room.registry
                     else _("says it judges cards with registry version %(version)s, but the floor has sent no "
                            "registry") % said)
        attention += 3
    elif room.registry > 0:
        if check.registry_version is None:
            marks.append(_("judges cards without the room's registry (the floor's is version %(floor)s)")
                         % {"floor": room.registry})
            attention += 3
        elif check.registry_version < room.registry:
            marks.append(_("judges cards with registry version %(version)s, older than the floor's %(floor)s")
                         % {"version": check.registry_version, "floor": room.registry})
            attention += 3
    if check.commissioning is not None and check.commissioning.mark:
        marks.append(check.commissioning.mark)
        attention += check.commissioning.attention
    if check.backlog:
        marks.append(ngettext("%(count)s journal line not yet on the floor",
                              "%(count)s journal lines not yet on the floor", check.backlog)
                     % {"count": language.forms.integer(check.backlog)})
        attention += 1
    check.marks, check.attention = marks, attention


def room_tables(rows: list[dict], *, floor_version: str | None, floor_registry: int,
                commissionings: dict[str, CommissionCheck] | None = None,
                language: Language | None = None) -> tuple[list[TableCheck], Room]:
    """Every table of *rows* checked against the room, most in need of attention first (then
    by id): *floor_version* is the floor's own software version, *floor_registry* the room
    registry version the floor sends (the store's :meth:`registry_version`), *commissionings*
    each table's commissioning as judged (a table missing from it is not judged); the marks
    are in *language*, the reader's (none: English)."""
    language = language if language is not None else english()
    checks = [_check(row) for row in rows]
    for check in checks:
        check.commissioning = (commissionings or {}).get(check.table_id)
    room = room_of(checks, floor_version, floor_registry)
    profiles = Counter(c.profile for c in checks if c.profile)
    for check in checks:
        _mark(check, room, profiles, language)
    checks.sort(key=lambda c: (-c.attention, c.table_id))
    return checks, room
