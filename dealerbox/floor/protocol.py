"""Topics and payloads of floor reporting, schema version 1 (docs/FLOOR.md).

Every payload is one JSON object with ``"v": 1``. A reader ignores keys it
does not know and refuses a ``v`` it does not know, so fields may be added
within a version and a change of meaning takes a new version.
"""

from __future__ import annotations

import json
import re

SCHEMA_VERSION = 1
ROOT = "dealerbox/v1"
GENESIS = "0" * 64

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

_TABLE_TOPIC_RE = re.compile(r"^" + re.escape(ROOT) + r"/tables/([^/]+)/([a-z]+)$")


def parse_table_topic(topic: str) -> tuple[str, str] | None:
    """``(table, kind)`` of a table topic, or None."""
    m = _TABLE_TOPIC_RE.match(topic)
    return (m.group(1), m.group(2)) if m else None


class PayloadError(ValueError):
    """A payload is not JSON, has another schema version or lacks a key."""


def encode(obj: dict) -> bytes:
    return json.dumps({"v": SCHEMA_VERSION, **obj}, separators=(",", ":"),
                      ensure_ascii=True).encode("ascii")


def decode(payload: bytes, *required: str) -> dict:
    try:
        d = json.loads(payload)
    except (ValueError, UnicodeDecodeError) as exc:
        raise PayloadError(f"not JSON: {exc}") from None
    if not isinstance(d, dict):
        raise PayloadError("not a JSON object")
    if d.get("v") != SCHEMA_VERSION:
        raise PayloadError(f"schema version {d.get('v')!r}, expected {SCHEMA_VERSION}")
    missing = [k for k in required if k not in d]
    if missing:
        raise PayloadError(f"missing {', '.join(missing)}")
    return d
