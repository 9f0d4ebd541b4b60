"""Events in, as CONTRACT.md defines them: parsing, validation, serialisation."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from dealerbox.domain.cards import check_card
from dealerbox.domain.commissioning import check_at, check_devices, check_text, check_zone, copied_devices
from dealerbox.errors import SHOWN_CHARS, EventError, RegistryError, shown
from dealerbox.domain.decks import DECK_NAME_RULE, MAX_DECK_NAME, is_deck_name, normalize_uid

EVENT_KINDS = frozenset({
    "new_hand", "shoe", "board_on", "board_off", "zone_on", "zone_off",
    "button", "reader_fault", "reader_ok", "dealer", "tick",
    "deck_registered", "deck_checked", "badge_registered", "registry_applied", "commissioned",
})
#: Events about the table's registries, not about a hand (CONTRACT.md, "The registries"):
#: journalled so that they reach the floor, and judged by nobody at the table.
REGISTRY_EVENTS = frozenset({"deck_registered", "deck_checked", "badge_registered", "registry_applied",
                             "commissioned"})
BUTTONS = frozenset({
    "new_hand", "round_done", "exposed", "boxed", "ack", "reshuffled", "premature",
    "misdeal", "floor", "hand_over",
})
CARD_EVENTS = frozenset({"shoe", "board_on", "board_off", "zone_on", "zone_off"})
ZONES = frozenset({"burn", "muck"} | {f"seat{i}" for i in range(1, 11)})
_KEYS = ("t", "ev", "card", "deck", "uid", "unread", "players", "hole_cards", "mouth_sensor", "seats", "zone",
         "name", "reader", "dealer", "back", "tags", "missing", "damaged", "ok", "version", "fingerprint",
         "technician", "at", "config", "devices", "id")
#: The keys only the registry events carry, and the kinds each belongs to.
_REGISTRY_KEYS = {"back": ("deck_registered",), "tags": ("deck_registered",), "missing": ("deck_checked",),
                  "damaged": ("deck_checked",), "ok": ("deck_checked", "commissioned"),
                  "version": ("registry_applied", "commissioned"), "fingerprint": ("registry_applied",),
                  "technician": ("commissioned",), "at": ("commissioned",), "config": ("commissioned",),
                  "devices": ("commissioned",)}
_FINGERPRINT = re.compile(r"[0-9a-f]{64}")


def is_fingerprint(value) -> bool:
    """True when *value* is a registry's fingerprint: a SHA-256 in lower-case hex, nothing
    after it (``fullmatch``: a trailing newline is not one)."""
    return isinstance(value, str) and _FINGERPRINT.fullmatch(value) is not None


_ALLOWED = frozenset(_KEYS)
#: The largest ``t``, in seconds (some 31,700 years): room for any clock's seconds,
#: and a float still holds such a ``t`` to the millisecond.
MAX_T = 10**12
#: The longest line an event file may have, in bytes (a real event is under 300).
MAX_LINE_BYTES = 64 * 1024
_HEX_UID = re.compile(r"[0-9A-Fa-f]*")
#: A dealer's id as the badge registry holds it: an employee number of up to 10 letters,
#: digits, '-' or '_' (short enough for the LCD's greeting; a name never fits the pattern's intent).
DEALER_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]{0,9}")


@dataclass(slots=True)
class Event:
    """One observation. Only the keys that apply to ``ev`` are set."""

    t: float
    ev: str
    card: str | None = None
    deck: str | None = None
    uid: str | None = None
    #: ``shoe`` only: a card left the stub and no tag read came with it (the mouth sensor counted it).
    unread: bool | None = None
    players: int | None = None
    hole_cards: int | None = None
    #: ``new_hand`` only: the table counts every card at the shoe's mouth.
    mouth_sensor: bool | None = None
    seats: tuple[int, ...] | None = None
    #: ``zone_on``/``zone_off``: the zone (burn, muck, seatN); ``commissioned``: the box's IANA time zone, or "".
    zone: str | None = None
    name: str | None = None
    reader: str | None = None
    #: ``dealer`` only: the id of the dealer who deals from now on; None signs the dealer out.
    dealer: str | None = None
    #: ``deck_registered``: the deck's back colour, and every tag of it as registered (UID -> card).
    back: str | None = None
    tags: dict[str, str] | None = None
    #: ``deck_checked``: the deck's cards no tag answered for, its tags that answered wrongly, and
    #: whether the deck is fit to deal.
    missing: tuple[str, ...] | None = None
    damaged: tuple[str, ...] | None = None
    ok: bool | None = None
    #: ``registry_applied``: the floor registry the box judges with from now on (its version, a count).
    #: ``commissioned``: dealerbox's version (text), as the run's record names it.
    version: int | str | None = None
    fingerprint: str | None = None
    #: ``commissioned`` (with ``zone``, ``version`` and ``ok``): who ran the commissioning, when it
    #: ended, the table config's SHA-256, and each device's verdict and figures in the order run
    #: (:mod:`dealerbox.domain.commissioning`).
    technician: str | None = None
    at: str | None = None
    config: str | None = None
    devices: tuple[dict, ...] | None = None
    #: Optional, any kind: the source's own number for the event, so a source that
    #: delivers twice (MQTT QoS 1, an input file after a restart) can be deduplicated.
    id: int | str | None = None

    @classmethod
    def from_dict(cls, d) -> "Event":
        """Validate a decoded JSON object; raise :class:`EventError` naming the problem."""
        if not isinstance(d, dict):
            raise EventError("an event is a JSON object")
        extra = d.keys() - _ALLOWED
        if extra:
            key = sorted(extra, key=str)[0]
            raise EventError(f"unknown key {shown(key)}", key=key if len(key) <= SHOWN_CHARS else None)
        t = d.get("t")
        # The comparison is false for NaN, so NaN is refused with the rest.
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= MAX_T:
            raise EventError(f"'t' must be a number of seconds from 0 to 1e12, not {shown(t)}", key="t")
        ev = d.get("ev")
        if not _is_one_of(ev, EVENT_KINDS):
            raise EventError(f"'ev' must be one of {sorted(EVENT_KINDS)}, not {shown(ev)}")
        e = cls(float(t), ev)
        if "id" in d:
            ident = d["id"]
            if isinstance(ident, bool) or not isinstance(ident, (int, str)):
                raise EventError(f"'id' must be a number or a string, not {shown(ident)}")
            e.id = ident
        for key, where in (("unread", "shoe"), ("mouth_sensor", "new_hand")):
            if key in d and ev != where:
                raise EventError(f"{key!r} belongs to {where} events, not to {ev}")
            if key in d and not isinstance(d[key], bool):
                raise EventError(f"{key!r} must be true or false, not {d[key]!r}")
        if ev == "shoe" and d.get("unread"):
            if d.keys() & {"card", "uid", "deck"}:
                raise EventError("an unread shoe event names no card: 'unread' goes without 'card', 'uid' or 'deck'")
            e.unread = True
        elif ev in CARD_EVENTS:
            _card_fields(e, d)
        elif ev == "new_hand":
            _new_hand_fields(e, d)
        elif ev == "button":
            name = d.get("name")
            if not _is_one_of(name, BUTTONS):
                raise EventError(f"'name' must be one of {sorted(BUTTONS)}, not {shown(name)}")
            e.name = name
        elif ev in ("reader_fault", "reader_ok"):
            reader = d.get("reader")
            if not isinstance(reader, str) or not reader:
                raise EventError(f"'reader' must name a reader, not {shown(reader)}")
            e.reader = reader
        for key, kinds in _REGISTRY_KEYS.items():
            if key in d and ev not in kinds:
                raise EventError(f"{key!r} belongs to {' and '.join(kinds)} events, not to {ev}", key=key)
        if ev in REGISTRY_EVENTS:
            _registry_fields(e, d)
            return e
        if "dealer" in d and ev != "dealer":
            raise EventError(f"'dealer' belongs to dealer events, not to {ev}")
        if ev == "dealer":
            if "dealer" not in d:
                raise EventError("a dealer event needs 'dealer': the dealer's id, or null to sign out")
            dealer = d["dealer"]
            if dealer is not None and not (isinstance(dealer, str) and DEALER_ID.fullmatch(dealer)):
                raise EventError(f"'dealer' must be null or a dealer id (1-10 letters, digits, '-' or '_'), "
                                 f"not {shown(dealer)}", key="dealer")
            e.dealer = dealer
        return e

    @classmethod
    def from_json(cls, line: str) -> "Event":
        try:
            d = _decoded(line)
        except ValueError as exc:
            raise EventError(f"not JSON ({getattr(exc, 'msg', exc)})") from exc
        except RecursionError as exc:
            raise EventError("not an event: JSON nested too deeply") from exc
        try:
            return cls.from_dict(d)
        except RegistryError as exc:  # a card or deck field: one message, never a traceback
            raise EventError(str(exc)) from exc

    def to_dict(self) -> dict:
        out = {"t": self.t, "ev": self.ev}
        for k in _KEYS[2:]:
            v = getattr(self, k)
            if v is not None or (k == "dealer" and self.ev == "dealer"):   # null: signed out
                out[k] = (copied_devices(v) if k == "devices" else list(v) if isinstance(v, tuple)
                          else dict(v) if isinstance(v, dict) else v)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(", ", ": "))


class _LongInteger:
    """A JSON integer with more digits than Python converts (``sys.get_int_max_str_digits``).

    No key takes one, so it stays a value of its key and is refused there, with the
    key's own message, instead of failing the whole line as "not JSON".
    """

    __slots__ = ("digits",)

    def __init__(self, digits: int):
        self.digits = digits

    def __repr__(self) -> str:
        return f"an integer of {self.digits} digits"


def _parse_int(text: str):
    try:
        return int(text)
    except ValueError:  # only Python's digit limit makes int() refuse what the JSON scanner matched
        return _LongInteger(len(text.lstrip("-")))


#: Decodes a line that ``json.loads`` refused for a too long integer only (the
#: common line keeps the faster plain decoder).
_LONG_INTEGER_DECODER = json.JSONDecoder(parse_int=_parse_int)


def _decoded(line: str):
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        raise
    except ValueError:  # JSON, with an integer past Python's digit limit: a bad value of its key
        return _LONG_INTEGER_DECODER.decode(line)


def _is_one_of(value, allowed) -> bool:
    return isinstance(value, str) and value in allowed


def read_events(lines, *, start_line: int = 1, file: str | None = None):
    """Yield events from JSON lines, skipping blank ones; errors carry the line number
    (and *file*, when given). A byte-order mark before the first line is allowed.

    Also enforces that ``t`` never decreases within a file.
    """
    for _n, e in _numbered_events(lines, start_line, file):
        yield e


def _numbered_events(lines, start_line: int, file: str | None):
    last_t = 0.0
    for n, line in enumerate(lines, start_line):
        if n == start_line and line.startswith("\ufeff"):
            line = line[1:]
        if not line.strip():
            continue
        try:
            e = Event.from_json(line)
        except EventError as exc:
            raise EventError(exc.message, line=n, file=file, key=exc.key) from exc
        if e.t < last_t:
            raise EventError(f"'t' went back from {last_t} to {e.t}", line=n, file=file, key="t")
        last_t = e.t
        yield n, e


class EventFile:
    """A CONTRACT.md event file (JSON Lines), read as a stream as often as
    it is iterated: the one reader of ``replay``, ``demo`` and ``run --input``.

    Every problem is an :class:`EventError` of one line naming the file, the
    line and the key: a file that cannot be opened, a byte that is not UTF-8,
    a line longer than ``max_line`` bytes, a line that is not an event.
    With ``number_ids`` an event without an ``id`` gets its line number.
    """

    def __init__(self, path, *, number_ids: bool = False, max_line: int = MAX_LINE_BYTES):
        self.path = Path(path)
        self.number_ids = number_ids
        self.max_line = max_line

    def __iter__(self):
        name = str(self.path)
        try:
            fh = open(self.path, "rb")
        except OSError as exc:
            raise EventError(f"cannot read it: {exc.strerror or exc}", file=name) from exc
        with fh:
            yield from stream_events(fh, name, number_ids=self.number_ids, max_line=self.max_line)


def stream_events(fh, name: str, *, number_ids: bool = False, max_line: int = MAX_LINE_BYTES):
    """The events of a binary stream holding an event file called *name*
    (see :class:`EventFile`, which reads its file through this)."""
    for n, e in _numbered_events(_stream_lines(fh, name, max_line), 1, name):
        if number_ids and e.id is None:
            e.id = n
        yield e


def _stream_lines(fh, name: str, max_line: int):
    n = 0
    while True:
        try:
            raw = fh.readline(max_line + 1)
        except OSError as exc:
            raise EventError(f"cannot read it: {exc.strerror or exc}", line=n + 1, file=name) from exc
        if not raw:
            return
        n += 1
        if len(raw) > max_line and not raw.endswith(b"\n"):
            raise EventError(f"longer than {max_line} bytes: not an event", line=n, file=name)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EventError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", line=n, file=name) from exc
        yield text


def _card_fields(e: Event, d: dict) -> None:
    """The card of a card event: ``card`` (with its ``deck``) or ``uid``, and a zone event's ``zone``."""
    ev, card, uid = e.ev, d.get("card"), d.get("uid")
    if (card is None) == (uid is None):
        raise EventError(f"a {ev} event needs exactly one of 'card' or 'uid'")
    if card is not None:
        if not isinstance(card, str) or len(card) > 8:
            raise EventError(f"'card': {shown(card)} is not a card code (such as 'Ah' or 'joker')", key="card")
        e.card = check_card(card)
        deck = d.get("deck")
        if deck is not None and (not isinstance(deck, str) or not deck):
            raise EventError(f"'deck' must be a deck name, not {shown(deck)}")
        e.deck = deck
    else:
        if "deck" in d:
            raise EventError("'deck' goes with 'card', not with 'uid'")
        e.uid = _checked_uid(uid)
    if ev in ("zone_on", "zone_off"):
        zone = d.get("zone")
        if not _is_one_of(zone, ZONES):
            raise EventError(f"'zone' must be burn, muck or seat1..seat10, not {shown(zone)}")
        e.zone = zone


def _checked_uid(uid) -> str:
    """A tag UID given as hex text or a list of bytes, normalized; 4, 7 or 10 bytes."""
    if isinstance(uid, str):
        digits = uid.replace(":", "").replace("-", "").replace(" ", "")
        if not _HEX_UID.fullmatch(digits):
            raise EventError(f"'uid' must be hexadecimal digits, not {shown(uid)}", key="uid")
        if len(digits) % 2:
            raise EventError(f"'uid' must be whole bytes (an even number of hex digits), "
                             f"not {len(digits)} digits in {shown(uid)}", key="uid")
        if len(digits) // 2 not in (4, 7, 10):
            raise EventError(f"'uid' has {len(digits) // 2} bytes; a tag UID has 4, 7 or 10", key="uid")
    if isinstance(uid, list) and len(uid) > 16:
        raise EventError(f"'uid' has {len(uid)} bytes; a tag UID has 4, 7 or 10", key="uid")
    try:
        return normalize_uid(uid)
    except RegistryError as exc:
        raise EventError(f"'uid': {str(exc)[:120]}", key="uid") from exc


def _new_hand_fields(e: Event, d: dict) -> None:
    """``players``, ``hole_cards``, ``mouth_sensor`` and ``seats`` of a ``new_hand``."""
    players = d.get("players")
    if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= 10:
        raise EventError(f"'players' must be a whole number 2..10, not {shown(players)}")
    hole = d.get("hole_cards", 2)
    if type(hole) is not int or hole not in (2, 4):
        raise EventError(f"'hole_cards' must be 2 (Hold'em) or 4 (Omaha), not {shown(hole)}")
    e.players, e.hole_cards = players, hole
    if "mouth_sensor" in d:
        e.mouth_sensor = d["mouth_sensor"]
    seats = d.get("seats")
    if seats is not None:
        if (not isinstance(seats, list) or len(seats) != players or len(set(seats)) != players
                or not all(isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 10 for x in seats)):
            raise EventError(f"'seats' must list {players} different seat numbers 1..10 in deal order, not {shown(seats)}")
        e.seats = tuple(seats)


def _registry_fields(e: Event, d: dict) -> None:
    """The fields of a registry event (CONTRACT.md, "The registries"); each is required."""
    ev = e.ev
    if ev in ("deck_registered", "deck_checked"):
        deck = d.get("deck")
        if not is_deck_name(deck):
            raise EventError(f"'deck' must be a deck name ({DECK_NAME_RULE}), not {shown(deck)}", key="deck")
        e.deck = deck
    if ev == "deck_registered":
        back = d.get("back")
        if not isinstance(back, str) or len(back) > MAX_DECK_NAME:
            raise EventError(f"'back' must be the deck's back colour (text), not {shown(back)}", key="back")
        tags = d.get("tags")
        if not isinstance(tags, dict) or not tags:
            raise EventError(f"'tags' must map each tag UID of the deck to its card, not {shown(tags)}", key="tags")
        e.back, e.tags = back, {}
        for uid, card in tags.items():
            key = _checked_uid(uid)
            if not isinstance(card, str) or len(card) > 8:
                raise EventError(f"'tags': {shown(card)} is not a card code (such as 'Ah' or 'joker')", key="tags")
            try:
                e.tags[key] = check_card(card)
            except EventError as exc:
                raise EventError(f"'tags': {exc.message}", key="tags") from exc
    elif ev == "deck_checked":
        missing, damaged, ok = d.get("missing"), d.get("damaged"), d.get("ok")
        if not isinstance(missing, list) or not all(isinstance(c, str) and len(c) <= 8 for c in missing):
            raise EventError(f"'missing' must list card codes, not {shown(missing)}", key="missing")
        try:
            e.missing = tuple(check_card(c) for c in missing)
        except EventError as exc:
            raise EventError(f"'missing': {exc.message}", key="missing") from exc
        if not isinstance(damaged, list) or len(damaged) > 1000:
            raise EventError(f"'damaged' must list tag UIDs, not {shown(damaged)}", key="damaged")
        e.damaged = tuple(_checked_uid(u) for u in damaged)
        if not isinstance(ok, bool):
            raise EventError(f"'ok' must be true or false, not {shown(ok)}", key="ok")
        e.ok = ok
    elif ev == "badge_registered":
        e.uid = _checked_uid(d.get("uid"))
        dealer = d.get("dealer")
        if not (isinstance(dealer, str) and DEALER_ID.fullmatch(dealer)):
            raise EventError(f"'dealer' must be a dealer id (1-10 letters, digits, '-' or '_'), "
                             f"not {shown(dealer)}", key="dealer")
        e.dealer = dealer
    elif ev == "commissioned":
        _commissioned_fields(e, d)
    else:   # registry_applied
        version, fingerprint = d.get("version"), d.get("fingerprint")
        if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version < 2**63:
            raise EventError(f"'version' must be the floor registry's version (a count), not {shown(version)}",
                             key="version")
        if not is_fingerprint(fingerprint):
            raise EventError(f"'fingerprint' must be a SHA-256 in lower-case hex, not {shown(fingerprint)}",
                             key="fingerprint")
        e.version, e.fingerprint = version, fingerprint


def _commissioned_fields(e: Event, d: dict) -> None:
    """A commissioning record (CONTRACT.md, "The registries"); every key is required, and
    ``ok`` says what its devices say: true exactly when none failed."""
    e.technician = check_text(d.get("technician"), "technician")
    e.at = check_at(d.get("at"))
    e.zone = check_zone(d.get("zone"))
    e.version = check_text(d.get("version"), "version")
    config = d.get("config")
    if not is_fingerprint(config):
        raise EventError(f"'config' must be the config file's SHA-256 in lower-case hex, not {shown(config)}",
                         key="config")
    e.config = config
    e.devices = check_devices(d.get("devices"))
    ok = d.get("ok")
    if not isinstance(ok, bool):
        raise EventError(f"'ok' must be true or false, not {shown(ok)}", key="ok")
    if ok != all(entry["verdict"] != "fail" for entry in e.devices):
        raise EventError(f"'ok' must be true exactly when no device failed, not {ok}", key="ok")
    e.ok = ok
