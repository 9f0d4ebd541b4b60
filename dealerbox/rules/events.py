"""Events in, as CONTRACT.md defines them: parsing, validation, serialisation."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from .cards import check_card
from ..errors import EventError, RegistryError
from .registry import normalize_uid

EVENT_KINDS = frozenset({
    "new_hand", "shoe", "board_on", "board_off", "zone_on", "zone_off",
    "button", "reader_fault", "reader_ok", "tick",
})
BUTTONS = frozenset({
    "new_hand", "round_done", "exposed", "boxed", "ack", "reshuffled", "premature",
    "misdeal", "floor", "hand_over",
})
CARD_EVENTS = frozenset({"shoe", "board_on", "board_off", "zone_on", "zone_off"})
ZONES = frozenset({"burn", "muck"} | {f"seat{i}" for i in range(1, 11)})
_KEYS = ("t", "ev", "card", "deck", "uid", "unread", "players", "hole_cards", "mouth_sensor", "seats", "zone",
         "name", "reader", "id")
_ALLOWED = frozenset(_KEYS)


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
    zone: str | None = None
    name: str | None = None
    reader: str | None = None
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
            raise EventError(f"unknown key {sorted(extra)[0]!r}")
        t = d.get("t")
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t < 0:
            raise EventError(f"'t' must be a non-negative number of seconds, not {t!r}")
        ev = d.get("ev")
        if not _is_one_of(ev, EVENT_KINDS):
            raise EventError(f"'ev' must be one of {sorted(EVENT_KINDS)}, not {ev!r}")
        e = cls(float(t), ev)
        if "id" in d:
            ident = d["id"]
            if isinstance(ident, bool) or not isinstance(ident, (int, str)):
                raise EventError(f"'id' must be a number or a string, not {ident!r}")
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
            card, uid = d.get("card"), d.get("uid")
            if (card is None) == (uid is None):
                raise EventError(f"a {ev} event needs exactly one of 'card' or 'uid'")
            if card is not None:
                e.card = check_card(card)
                deck = d.get("deck")
                if deck is not None and (not isinstance(deck, str) or not deck):
                    raise EventError(f"'deck' must be a deck name, not {deck!r}")
                e.deck = deck
            else:
                if "deck" in d:
                    raise EventError("'deck' goes with 'card', not with 'uid'")
                try:
                    e.uid = normalize_uid(uid)
                except RegistryError as exc:
                    raise EventError(str(exc)) from exc
            if ev in ("zone_on", "zone_off"):
                zone = d.get("zone")
                if not _is_one_of(zone, ZONES):
                    raise EventError(f"'zone' must be burn, muck or seat1..seat10, not {zone!r}")
                e.zone = zone
        elif ev == "new_hand":
            players = d.get("players")
            if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= 10:
                raise EventError(f"'players' must be a whole number 2..10, not {players!r}")
            hole = d.get("hole_cards", 2)
            if type(hole) is not int or hole not in (2, 4):
                raise EventError(f"'hole_cards' must be 2 (Hold'em) or 4 (Omaha), not {hole!r}")
            e.players, e.hole_cards = players, hole
            if "mouth_sensor" in d:
                e.mouth_sensor = d["mouth_sensor"]
            seats = d.get("seats")
            if seats is not None:
                if (not isinstance(seats, list) or len(seats) != players or len(set(seats)) != players
                        or not all(isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 10 for x in seats)):
                    raise EventError(f"'seats' must list {players} different seat numbers 1..10 in deal order, not {seats!r}")
                e.seats = tuple(seats)
        elif ev == "button":
            name = d.get("name")
            if not _is_one_of(name, BUTTONS):
                raise EventError(f"'name' must be one of {sorted(BUTTONS)}, not {name!r}")
            e.name = name
        elif ev in ("reader_fault", "reader_ok"):
            reader = d.get("reader")
            if not isinstance(reader, str) or not reader:
                raise EventError(f"'reader' must name a reader, not {reader!r}")
            e.reader = reader
        return e

    @classmethod
    def from_json(cls, line: str) -> "Event":
        try:
            d = json.loads(line)
        except ValueError as exc:
            raise EventError(f"not JSON ({getattr(exc, 'msg', exc)})") from exc
        except RecursionError as exc:
            raise EventError("not an event: JSON nested too deeply") from exc
        return cls.from_dict(d)

    def to_dict(self) -> dict:
        out = {"t": self.t, "ev": self.ev}
        for k in _KEYS[2:]:
            v = getattr(self, k)
            if v is not None:
                out[k] = list(v) if k == "seats" else v
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(", ", ": "))


def _is_one_of(value, allowed) -> bool:
    return isinstance(value, str) and value in allowed


def read_events(lines, *, start_line: int = 1):
    """Yield events from JSON lines, skipping blank ones; errors carry the line number.

    Also enforces that ``t`` never decreases within a file.
    """
    last_t = 0.0
    for n, line in enumerate(lines, start_line):
        if not line.strip():
            continue
        try:
            e = Event.from_json(line)
        except EventError as exc:
            raise EventError(str(exc), line=n) from exc
        if e.t < last_t:
            raise EventError(f"'t' went back from {last_t} to {e.t}", line=n)
        last_t = e.t
        yield e
