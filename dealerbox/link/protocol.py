"""Topics and payloads of floor reporting, schema version 1 (docs/floor/reporting.md).

Every payload is one JSON object with ``"v": 1``. A reader ignores keys it
does not know and refuses a ``v`` it does not know, so fields may be added
within a version and a change of meaning takes a new version.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Callable, Mapping

from dealerbox.domain.badges import check_dealer_id
from dealerbox.domain.cards import is_card
from dealerbox.domain.decks import normalize_uid
from dealerbox.domain.events import MAX_DECK_NAME, is_deck_name, is_fingerprint
from dealerbox.errors import DealerboxError, RegistryError
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
        # What the box runs and for how long (the floor's tables page, issue 41).
        "version": (_or_null(_text), "a version or null"),
        "config_fingerprint": (_or_null(_text), "a SHA-256 in hex or null"),
        "profile": (_or_null(_text), "a profile name or null"),
        "uptime_s": (_or_null(_number), "seconds or null"),
        "restarts": (_or_null(_integer), "a count or null"),
        "registry": (_or_null(lambda v: _registry_version(v)), "null or {version, fingerprint}"),
    },
}
KINDS = tuple(SHAPES)


def _registry_version(value) -> bool:
    """A health message's ``registry``: which floor registry the table judges with."""
    return (isinstance(value, dict) and _integer(value.get("version"))
            and is_fingerprint(value.get("fingerprint")))


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


# -- the room's registry: floor -> table (docs/floor/registry.md, "Topics and payloads")

REGISTRY_KIND = "registry"
#: Every table's registry topic, for the floor's own roles (a table reads its own only).
REGISTRY_WILDCARD = f"{ROOT}/floor/registry/+"


def registry_topic(table: str) -> str:
    """The retained topic the floor publishes *table*'s registry on (only the floor writes it)."""
    return f"{ROOT}/floor/registry/{table}"


class _Unsaid:
    """The registry says nothing of the table's active deck: the table keeps its own choice."""

    def __repr__(self) -> str:
        return "UNSAID"


#: ``active`` of a registry that does not name the table's deck (the key is left out).
UNSAID = _Unsaid()


class RegistryPayloadError(PayloadError):
    """A registry payload does not parse or does not check (the text says which key
    and what was expected); the table keeps the registry it has."""


@dataclass(frozen=True)
class FloorRegistry:
    """The room's registry as the floor published it, checked and normalised.

    ``decks``: deck name -> ``(back colour, {UID: card})``; ``retired``: UIDs that are
    foreign at every table; ``badges``: UID -> dealer id; ``revoked``: badges that sign
    in nowhere. UIDs are upper-case hex (:func:`~dealerbox.domain.decks.normalize_uid`).

    ``active``: the deck the floor issued to this table (``floor deck issue``), which it
    judges with; None when the deck it issued there was moved to another table or retired
    and none was issued since (no deck is this table's: every card is foreign); and
    :data:`UNSAID` when the floor never issued this table a deck (the table's own choice).
    A retired deck stays in ``decks`` with its tags (so every table names its cards) and
    its UIDs are in ``retired`` too.
    """

    version: int
    fingerprint: str
    decks: Mapping[str, tuple[str, Mapping[str, str]]]
    retired: frozenset[str]
    badges: Mapping[str, str]
    revoked: frozenset[str]
    active: "str | None | _Unsaid" = UNSAID

    @property
    def issues_active(self) -> bool:
        """True when the floor says which deck this table plays (``active`` is a deck or None)."""
        return self.active is not UNSAID

    def summary(self) -> dict:
        """What the table says it judges with: the journal's ``registry_applied`` and
        the health message's ``registry``."""
        return {"version": self.version, "fingerprint": self.fingerprint}


def _canonical(decks, retired, badges, revoked, active=UNSAID) -> dict:
    """The normalised content of a registry (no version): what the fingerprint covers
    (``active`` only when it is said, so a registry without it keeps its fingerprint).

    Raises :class:`RegistryPayloadError` naming the first key that is not what a
    registry holds.
    """
    if not isinstance(decks, dict):
        raise RegistryPayloadError(f"decks = {shown(decks)}: expected an object of deck name -> deck")
    out_decks: dict[str, dict] = {}
    owner: dict[str, str] = {}
    for name, body in decks.items():
        if not is_deck_name(name):
            raise RegistryPayloadError(f"decks: name {shown(name)}: expected 1 to {MAX_DECK_NAME} printable characters")
        if not isinstance(body, dict):
            raise RegistryPayloadError(f"decks.{name} = {shown(body)}: expected {{back, tags}}")
        back = body.get("back", "")
        if not isinstance(back, str):
            raise RegistryPayloadError(f"decks.{name}.back = {shown(back)}: expected a colour (text)")
        tags = body.get("tags", {})
        if not isinstance(tags, dict):
            raise RegistryPayloadError(f"decks.{name}.tags = {shown(tags)}: expected an object of UID -> card")
        out_tags: dict[str, str] = {}
        for uid, card in tags.items():
            key = _uid(uid, f"decks.{name}.tags")
            if not isinstance(card, str) or not is_card(card):
                raise RegistryPayloadError(f"decks.{name}.tags.{key} = {shown(card)}: expected a card code (Ah, Td, joker)")
            if key in owner:
                raise RegistryPayloadError(f"decks.{name}.tags.{key}: the UID is a card of deck {shown(owner[key])} too")
            owner[key] = name
            out_tags[key] = card
        out_decks[name] = {"back": back, "tags": dict(sorted(out_tags.items()))}
    if not isinstance(badges, dict):
        raise RegistryPayloadError(f"badges = {shown(badges)}: expected an object of UID -> dealer id")
    out_badges: dict[str, str] = {}
    for uid, dealer in badges.items():
        key = _uid(uid, "badges")
        try:
            check_dealer_id(dealer)
        except RegistryError:
            raise RegistryPayloadError(f"badges.{key} = {shown(dealer)}: expected a dealer id "
                                       f"(1 to 10 letters, digits, '-' or '_')") from None
        if key in owner:
            raise RegistryPayloadError(f"badges.{key}: the UID is a card of deck {shown(owner[key])}")
        if key in out_badges:
            raise RegistryPayloadError(f"badges.{key}: the badge is listed twice")
        out_badges[key] = dealer
    out = {"decks": dict(sorted(out_decks.items())),
           "retired": _uid_list(retired, "retired"),
           "badges": dict(sorted(out_badges.items())),
           "revoked": _uid_list(revoked, "revoked")}
    if active is not UNSAID:
        if active is not None and (not isinstance(active, str) or active not in out_decks):
            raise RegistryPayloadError(f"active = {shown(active)}: expected null or the name of one of the "
                                       "registry's decks")
        out["active"] = active
    return out


def _uid(uid, where: str) -> str:
    try:
        if not isinstance(uid, str):
            raise RegistryError("not text")
        return normalize_uid(uid)
    except RegistryError:
        raise RegistryPayloadError(f"{where}: {shown(uid)}: expected a tag UID (4, 7 or 10 bytes in hex)") from None


def _uid_list(value, where: str) -> list[str]:
    if not isinstance(value, (list, tuple, set, frozenset)):
        raise RegistryPayloadError(f"{where} = {shown(value)}: expected a list of tag UIDs")
    return sorted({_uid(uid, where) for uid in value})


def _digest(canonical: dict) -> str:
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def registry_fingerprint(decks, retired, badges, revoked, active=UNSAID) -> str:
    """The SHA-256 (hex) of a registry's canonical JSON: UIDs normalised, lists sorted
    and deduplicated, keys sorted, no spaces. The one definition the floor and the
    tables share: two registries with the same content have the same fingerprint.

    *decks* is deck name -> ``{"back": colour, "tags": {UID: card}}``; *badges* is
    UID -> dealer id; *retired* and *revoked* are iterables of UIDs; *active* is the deck
    issued to the table the registry is for, None for none, or :data:`UNSAID`.
    """
    return _digest(_canonical(decks, list(retired), badges, list(revoked), active))


def build_registry(version: int, decks, retired, badges, revoked, active=UNSAID) -> bytes:
    """The payload the floor publishes on :func:`registry_topic` (see
    :func:`registry_fingerprint` for the arguments; *active* is left out when
    :data:`UNSAID`). Raises :class:`RegistryPayloadError` if the content would not
    check at a table."""
    if not _integer(version):
        raise RegistryPayloadError(f"version = {shown(version)}: expected a count")
    body = _canonical(decks, list(retired), badges, list(revoked), active)
    return encode({"kind": REGISTRY_KIND, "version": version, "fingerprint": _digest(body), **body})


def parse_registry(payload: bytes) -> FloorRegistry:
    """The registry a floor published, checked; :class:`RegistryPayloadError` saying
    why not (not JSON, another schema version or kind, a key missing or of the wrong
    kind, a UID in two places, or a fingerprint that does not match the content)."""
    try:
        d = decode(payload, "kind", "version", "fingerprint", "decks", "retired", "badges", "revoked")
    except RegistryPayloadError:
        raise
    except PayloadError as exc:
        raise RegistryPayloadError(str(exc)) from None
    if d["kind"] != REGISTRY_KIND:
        raise RegistryPayloadError(f"kind = {shown(d['kind'])}: expected {REGISTRY_KIND!r}")
    version = d["version"]
    if not _integer(version):
        raise RegistryPayloadError(f"version = {shown(version)}: expected a count")
    fingerprint = d["fingerprint"]
    if not is_fingerprint(fingerprint):
        raise RegistryPayloadError(f"fingerprint = {shown(fingerprint)}: expected a SHA-256 in lower-case hex")
    body = _canonical(d["decks"], d["retired"], d["badges"], d["revoked"], d.get("active", UNSAID))
    if _digest(body) != fingerprint:
        raise RegistryPayloadError(f"fingerprint {fingerprint[:12]}... does not match the content "
                                   f"({_digest(body)[:12]}...)")
    return FloorRegistry(
        version=version, fingerprint=fingerprint,
        decks={name: (deck["back"], dict(deck["tags"])) for name, deck in body["decks"].items()},
        retired=frozenset(body["retired"]), badges=dict(body["badges"]), revoked=frozenset(body["revoked"]),
        active=body.get("active", UNSAID))
