"""The deck registry: which tag UID is which card of which deck.

A table plays one *active* deck; other registered decks (other backs) are known
so that a card from one of them is recognised as foreign rather than unknown.

The registry file is TOML a technician can read and edit::

    active = "A"

    [decks.A]
    back = "blue"
    [decks.A.tags]
    04A3C6CAE26180 = "Ah"
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import tomli_w

from dealerbox.atomic import save_atomic
from dealerbox.domain.cards import DECK_52, JOKER, is_card
from dealerbox.errors import ConfigError, RegistryError, shown
from dealerbox.tomlfile import read_toml

#: UID lengths ISO/IEC 14443-3 allows: single, double and triple size.
UID_LENGTHS = (4, 7, 10)
#: The longest deck name (a TOML key at the table, a name on the floor's pages).
MAX_DECK_NAME = 64
#: :func:`is_deck_name`'s rule in words: what every message refusing a deck name says, once.
DECK_NAME_RULE = f"1 to {MAX_DECK_NAME} printable characters, no '/'"


def is_deck_name(value) -> bool:
    """True when *value* is a deck name: the one rule of the table's tools and registry file,
    the journal's events, the wire and the floor's registry. 1 to :data:`MAX_DECK_NAME`
    printable characters (no NUL, no control character, no lone surrogate), no ``/`` (the
    floor's page of a deck is ``/registry/deck/<name>``: a ``/`` would split it)."""
    return (isinstance(value, str) and 1 <= len(value) <= MAX_DECK_NAME and value.isprintable()
            and "/" not in value)


#: The longest back colour a deck is registered with (the floor's pages show it beside the name).
MAX_DECK_BACK = 40


def deck_back_refusal(value) -> str | None:
    """None when *value* is a deck's back colour as the table's tools and the floor's registry
    take it (text of at most :data:`MAX_DECK_BACK` printable characters, empty for unsaid); else
    the sentence refusing it. (The journal's events take any text of up to 64 characters, so
    that a line of an older table is never refused for its back.)"""
    if isinstance(value, str) and len(value) <= MAX_DECK_BACK and value.isprintable():
        return None
    return f"a back's colour is at most {MAX_DECK_BACK} printable characters, not {shown(value)}"


def deck_name_refusal(value) -> str | None:
    """None when *value* is a deck name (:func:`is_deck_name`); else the sentence the tools
    refuse it with: the rule, once, and what was given (cut and escaped by :func:`shown`)."""
    if is_deck_name(value):
        return None
    return f"a deck name is {DECK_NAME_RULE}, not {shown(value)}"


def normalize_uid(uid) -> str:
    """Return *uid* as upper-case hex, or raise :class:`RegistryError`.

    Accepts ``str`` (hex, optional ``:``/``-``/space separators), ``bytes`` or a
    list of ints. The length must be 4, 7 or 10 bytes.
    """
    if isinstance(uid, (bytes, bytearray, list, tuple)):
        try:
            raw = bytes(uid)
        except (TypeError, ValueError) as exc:
            raise RegistryError(f"UID {uid!r} is not a list of bytes") from exc
    elif isinstance(uid, str):
        text = uid.replace(":", "").replace("-", "").replace(" ", "")
        try:
            raw = bytes.fromhex(text)
        except ValueError as exc:
            raise RegistryError(f"UID {uid!r} is not hexadecimal") from exc
    else:
        raise RegistryError(f"UID {uid!r} is neither text nor bytes")
    if len(raw) not in UID_LENGTHS:
        raise RegistryError(f"UID {uid!r} has {len(raw)} bytes; a tag UID has 4, 7 or 10")
    return raw.hex().upper()


@dataclass(frozen=True, slots=True)
class Tag:
    """What a registered tag is: a card of a deck."""

    deck: str
    card: str


class DeckRegistry:
    """Maps tag UIDs to :class:`Tag` and back. Pure data; load and save are explicit."""

    def __init__(self, active: str | None = None):
        self.active = active
        self._by_uid: dict[str, Tag] = {}
        self._by_card: dict[tuple[str, str], list[str]] = {}
        self.backs: dict[str, str] = {}

    # -- building -----------------------------------------------------------
    def add(self, uid, deck: str, card: str) -> str:
        """Register *uid* as *card* of *deck*; return the normalised UID.

        Raises :class:`RegistryError` for a malformed UID or card code, or a UID
        already registered.
        """
        key = normalize_uid(uid)
        if not is_card(card):
            raise RegistryError(f"{card!r} is not a card code")
        if key in self._by_uid:
            old = self._by_uid[key]
            raise RegistryError(f"UID {key} is already registered as {old.card} of deck {old.deck}")
        self._by_uid[key] = Tag(deck, card)
        self._by_card.setdefault((deck, card), []).append(key)
        self.backs.setdefault(deck, "")
        if self.active is None:
            self.active = deck
        return key

    # -- queries ------------------------------------------------------------
    def lookup(self, uid) -> Tag | None:
        """The tag behind *uid*, or None when no deck has it. Malformed UIDs raise."""
        return self._by_uid.get(normalize_uid(uid))

    def uids_of(self, deck: str, card: str) -> list[str]:
        """Every UID registered as *card* of *deck* (jokers have several)."""
        return list(self._by_card.get((deck, card), ()))

    def has_deck(self, deck: str) -> bool:
        return deck in self.backs

    @property
    def decks(self) -> list[str]:
        return sorted(self.backs)

    def cards_of(self, deck: str) -> dict[str, Tag]:
        """UID -> tag for one deck."""
        return {u: t for u, t in self._by_uid.items() if t.deck == deck}

    def __len__(self) -> int:
        return len(self._by_uid)

    def __contains__(self, uid) -> bool:
        try:
            return normalize_uid(uid) in self._by_uid
        except RegistryError:
            return False

    # -- files --------------------------------------------------------------
    @classmethod
    def load(cls, path) -> "DeckRegistry":
        """Read a registry file; errors name the file and the key."""
        path = Path(path)
        data = read_toml(path, "deck registry")
        unknown = set(data) - {"active", "decks"}
        if unknown:
            key = sorted(unknown)[0]
            raise ConfigError(path, key, "only 'active' and [decks.NAME] tables", data[key])
        decks = data.get("decks")
        if not isinstance(decks, dict) or not decks:
            raise ConfigError(path, "decks", "at least one [decks.NAME] table", decks, found=decks is not None)
        reg = cls(active=None)
        for name, body in decks.items():
            if not is_deck_name(name):
                raise ConfigError(path, "decks", f"each [decks.NAME] to name a deck ({DECK_NAME_RULE})", name)
            if not isinstance(body, dict):
                raise ConfigError(path, f"decks.{name}", "a table", body)
            extra = set(body) - {"back", "tags"}
            if extra:
                key = sorted(extra)[0]
                raise ConfigError(path, f"decks.{name}.{key}", "only 'back' and 'tags'", body[key])
            back = body.get("back", "")
            if not isinstance(back, str):
                raise ConfigError(path, f"decks.{name}.back", "a string", back)
            reg.backs[name] = back
            tags = body.get("tags", {})
            if not isinstance(tags, dict):
                raise ConfigError(path, f"decks.{name}.tags", "a table of UID = card", tags)
            for uid, card in tags.items():
                try:
                    reg.add(uid, name, card)
                except RegistryError as exc:
                    raise ConfigError(path, f"decks.{name}.tags.{uid}", f"a 4/7/10-byte hex UID mapped to a card code ({exc})", card) from exc
        active = data.get("active", next(iter(decks)))
        if active not in decks:
            raise ConfigError(path, "active", f"one of the decks {sorted(decks)}", active)
        reg.active = active
        return reg

    def to_toml(self) -> str:
        decks = {}
        # The active deck is written even with no tags yet, so the file loads back.
        for deck in sorted(set(self.decks) | ({self.active} if self.active else set())):
            tags = {u: t.card for u, t in sorted(self._by_uid.items(), key=lambda kv: (_order(kv[1].card), kv[0])) if t.deck == deck}
            decks[deck] = {"back": self.backs.get(deck, ""), "tags": tags}
        return tomli_w.dumps({"active": self.active or "", "decks": decks})

    def save(self, path) -> None:
        """Write the registry atomically: a crash leaves the old file or the new one.

        The new file keeps the old one's mode and owner; a first file gets its folder's
        owner and mode 0640 (see :func:`dealerbox.atomic.save_atomic`): a technician
        registers decks as root while the box runs as its own user.
        """
        save_atomic(path, self.to_toml())


def _order(card: str) -> int:
    return DECK_52.index(card) if card in DECK_52 else len(DECK_52)


def simulated_uid(deck: str, card: str, copy: int = 0) -> str:
    """A deterministic 7-byte UID shaped like an NXP NTAG's (first byte 0x04).

    Byte 3 is never 0x88 (the cascade tag), as ISO/IEC 14443-3 requires of a
    double-size UID's second cascade level.
    """
    digest = hashlib.sha256(f"dealerbox-sim:{deck}:{card}:{copy}".encode()).digest()
    raw = bytearray(b"\x04" + digest[:6])
    if raw[3] == 0x88:
        raw[3] = 0x89
    return raw.hex().upper()


def simulation_registry() -> DeckRegistry:
    """The built-in registry: deck A (52 cards + 2 jokers, active) and deck B (another back)."""
    reg = DeckRegistry(active="A")
    for deck, back in (("A", "blue"), ("B", "red")):
        for card in DECK_52:
            reg.add(simulated_uid(deck, card), deck, card)
        for copy in range(2):
            reg.add(simulated_uid(deck, JOKER, copy), deck, JOKER)
        reg.backs[deck] = back
    reg.active = "A"
    return reg
