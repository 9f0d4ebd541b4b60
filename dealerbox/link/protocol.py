"""Topics and payloads of floor reporting, schema version 1 (docs/FLOOR.md).

Every payload is one JSON object with ``"v": 1``. A reader ignores keys it
does not know and refuses a ``v`` it does not know, so fields may be added
within a version and a change of meaning takes a new version.
"""

from __future__ import annotations

import json
import re
from typing import Callable

from dealerbox.errors import DealerboxError
from dealerbox.link.chain import GENESIS

SCHEMA_VERSION = 1
ROOT = "dealerbox/v1"

#: Table ids are certificate CNs; names starting with ``floor-`` are the
#: floor's own roles (collector, view) and never a table.
TABLE_ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
ROLE_PREFIX = "floor-"


def valid_table_id(table: str) -> bool:
    return bool(TABLE_ID_RE.match(table)) and not table.startswith(ROLE_PREFIX)


def journal_topic(table: str) -> str:
    return f"{ROOT}/tables/{table}/journal"


def status_topic(table: str) -> str:
    return f"{ROOT}/tables/{table}/status"


def state_topic(table: str) -> str:
    return f"{ROOT}/tables/{table}/state"


def health_topic(table: str) -> str:
    return f"{ROOT}/tables/{table}/health"


def ack_topic(table: str) -> str:
    return f"{ROOT}/ack/{table}"


COLLECTOR_TOPIC = f"{ROOT}/floor/collector"
ALERTS_TOPIC = f"{ROOT}/floor/alerts"
TABLES_WILDCARD = f"{ROOT}/tables/+/+"
#: Collectors share the tables' topics through this MQTT v5 shared subscription
#: group by default: the broker gives each message to one collector of the group.
SHARE_GROUP = "dealerbox-collectors"
SHARE_GROUP_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def shared_tables_wildcard(group: str = SHARE_GROUP) -> str:
    """Every table's topics, shared among the collectors of *group*."""
    return f"$share/{group}/{TABLES_WILDCARD}"


#: What a table keeps retained at the broker: what it is now, not a record.
RETAINED_KINDS = ("status", "state", "health")


def retained_wildcards() -> list[str]:
    """Every table's retained topics (one wildcard per kind), not shared."""
    return [f"{ROOT}/tables/+/{kind}" for kind in RETAINED_KINDS]


def collector_sync_topic(boot: int) -> str:
    """A topic of one collector's own (its *boot* number): what it publishes there comes
    back to it after the retained messages its subscription before brought."""
    return f"{ROOT}/floor/sync/{boot}"

_TABLE_TOPIC_RE = re.compile(r"^" + re.escape(ROOT) + r"/tables/([^/]+)/([a-z]+)$")


def parse_table_topic(topic: str) -> tuple[str, str] | None:
    """``(table, kind)`` of a table topic, or None."""
    m = _TABLE_TOPIC_RE.match(topic)
    return (m.group(1), m.group(2)) if m else None


class PayloadError(DealerboxError, ValueError):
    """A payload is not JSON, has another schema version, lacks a key or holds a
    value of the wrong kind; the text says which, in a few words."""


def encode(obj: dict) -> bytes:
    return json.dumps({"v": SCHEMA_VERSION, **obj}, separators=(",", ":"),
                      ensure_ascii=True).encode("ascii")


def decode(payload: bytes, *required: str) -> dict:
    try:
        d = json.loads(payload)
    except (ValueError, UnicodeDecodeError) as exc:
        raise PayloadError(f"not JSON: {_cut(str(exc))}") from None
    except RecursionError:
        raise PayloadError("JSON nested too deeply") from None
    if not isinstance(d, dict):
        raise PayloadError("not a JSON object")
    if d.get("v") != SCHEMA_VERSION:
        raise PayloadError(f"schema version {shown(d.get('v'))}, expected {SCHEMA_VERSION}")
    missing = [k for k in required if k not in d]
    if missing:
        raise PayloadError(f"missing {', '.join(missing)}")
    return d


# -- what the collector checks of a table's payloads

#: The largest integer SQLite stores (seq, boot and conn must fit).
MAX_INT = 2**63 - 1


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_INT


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _or_null(check: Callable[[object], bool]) -> Callable[[object], bool]:
    return lambda value: value is None or check(value)


def _text(value) -> bool:
    return isinstance(value, str)


def _object(value) -> bool:
    return isinstance(value, dict)


def _lines(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _open(value) -> bool:
    return value is None or (isinstance(value, dict)
                             and all(value.get(k) is None or isinstance(value[k], str)
                                     for k in ("irregularity", "verdict")))


#: Per kind of table message, the keys the floor reads and what each must be:
#: ``key: (check, what was expected)``. A key left out is fine (a reader takes
#: its default), a key of another kind refuses the message; keys not named
#: here are not read and never refuse anything.
SHAPES: dict[str, dict[str, tuple[Callable[[object], bool], str]]] = {
    "journal": {
        "lines": (_lines, "a list of journal lines (strings)"),
        "oldest": (_or_null(_integer), "a seq or null"),
        "boot": (_integer, "a count"),
    },
    "status": {
        "online": (lambda v: isinstance(v, bool), "true or false"),
        "why": (_or_null(_text), "a word"),
        "boot": (_integer, "a count"),
        "conn": (_integer, "a count"),
        "wall": (_or_null(_number), "a time"),
    },
    "state": {
        "phase": (_or_null(_text), "a phase name or null"),
        "open": (_open, "null or an irregularity with text fields"),
    },
    "health": {
        "readers": (_or_null(_object), "an object"),
        "backlog": (_or_null(_integer), "a count"),
        "head": (_or_null(_integer), "a seq"),
        "acked": (_or_null(_integer), "a seq"),
        "clock_ok": (_or_null(lambda v: isinstance(v, bool)), "true, false or null"),
        "clock_problem": (_or_null(_text), "text or null"),
    },
}
KINDS = tuple(SHAPES)


def check_shape(kind: str, table: str, d: dict) -> None:
    """Raise :class:`PayloadError` naming the first key of *d* the floor cannot use.

    A ``table`` key, when present, must be the table whose topic carried it.
    """
    if "table" in d and d["table"] != table:
        raise PayloadError(f"table = {shown(d['table'])} on {table}'s topic")
    for key, (check, expected) in SHAPES[kind].items():
        if key in d and not check(d[key]):
            raise PayloadError(f"{key} = {shown(d[key])}: expected {expected}")


def journal_line(line: str) -> tuple[int, str, dict]:
    """``(seq, prev, record)`` of one journal line as a table sent it, or
    :class:`PayloadError` saying why it is not a journal line."""
    if not line.isascii():
        raise PayloadError("not ASCII (a journal line always is)")
    try:
        rec = json.loads(line)
    except ValueError as exc:
        raise PayloadError(f"not JSON: {_cut(str(exc))}") from None
    except RecursionError:
        raise PayloadError("JSON nested too deeply") from None
    if not isinstance(rec, dict):
        raise PayloadError("not a JSON object")
    seq, prev = rec.get("seq"), rec.get("prev")
    if not _integer(seq) or seq == 0:
        raise PayloadError(f"seq = {shown(seq)}: expected a positive integer")
    if not isinstance(prev, str):
        raise PayloadError(f"prev = {shown(prev)}: expected a SHA-256 in hex")
    return seq, prev, rec


def shown(value, limit: int = 40) -> str:
    """*value* as JSON, cut to *limit* characters: safe to put in an alert or a log line."""
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (ValueError, RecursionError):
        text = repr(type(value))
    return _cut(text, limit)


def _cut(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."
