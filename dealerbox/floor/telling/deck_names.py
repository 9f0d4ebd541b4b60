"""Which card a tag is, for everything on the floor that names cards: the deck registries.

A table journals a card by its face (``card``) or, when it has no name for the tag, by its
tag (``uid``). The floor names such a card from its registries: the room's registry in the
store (issue 40: every deck registered on the floor or at any table, retired ones too), then
``[web] deck_registry`` of floor.toml (``deck register``'s file), then the built-in
simulated decks. The hand's story
(:func:`dealerbox.floor.telling.story.registry_cards`) and the protection pass
(:func:`dealerbox.floor.protect.decks.collector_protection`) both read them through here.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.engine import Engine

from dealerbox.domain.decks import DeckRegistry, Tag, normalize_uid, simulation_registry
from dealerbox.floor.store.schema import reg_tags_table

__all__ = ["floor_registries", "registry_decks", "RoomDecks", "UNKNOWN_AGAIN_S", "UNKNOWN_KEPT"]

#: A tag the room's registry did not hold is asked for again after this long (it may be
#: registered since); a known tag is never asked for again (a tag is one card for good).
UNKNOWN_AGAIN_S = 5.0
#: How many unknown tags are remembered, the least recently asked dropped first: a stray
#: tag or a reader's garbage costs a question every UNKNOWN_AGAIN_S, never unbounded memory.
UNKNOWN_KEPT = 4096


class RoomDecks:
    """The room's registry in the store (``reg_tags``), looked up as a deck registry is:
    :meth:`lookup`. It reads through its own connections of *engine*, never the store's
    lock: the protection pass and the pages name cards while the filing writes."""

    def __init__(self, engine: Engine, *, unknown_again_s: float = UNKNOWN_AGAIN_S,
                 unknown_kept: int = UNKNOWN_KEPT):
        self.engine = engine
        self.unknown_again_s = unknown_again_s
        self.unknown_kept = unknown_kept
        self._known: dict[str, Tag] = {}
        # UID -> when the store last said it does not know it, least recently asked first.
        self._unknown: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def unknown_remembered(self) -> list[str]:
        """The unknown UIDs remembered, least recently asked first (at most ``unknown_kept``)."""
        with self._lock:
            return list(self._unknown)

    def lookup(self, uid) -> Tag | None:
        """The tag behind *uid* in the room's registry, or None; a malformed UID raises
        :class:`~dealerbox.errors.RegistryError` (a ValueError), as a deck registry's does."""
        uid = normalize_uid(uid)
        with self._lock:
            tag = self._known.get(uid)
            if tag is not None:
                return tag
            asked = self._unknown.get(uid)
            if asked is not None:
                self._unknown.move_to_end(uid)
                if time.monotonic() - asked < self.unknown_again_s:
                    return None
        t = reg_tags_table.c
        with self.engine.connect() as conn:
            row = conn.execute(select(t.deck, t.card).where(t.uid == uid)).first()
        with self._lock:
            if row is None:
                self._unknown[uid] = time.monotonic()
                self._unknown.move_to_end(uid)
                while len(self._unknown) > self.unknown_kept:
                    self._unknown.popitem(last=False)
                return None
            self._unknown.pop(uid, None)
            tag = self._known[uid] = Tag(row[0], row[1])
            return tag


def floor_registries(deck_registry: Path | None, room: Engine | None = None) -> list:
    """The room's registry in the store of *room* (an engine) when given, then the house
    registry *deck_registry* when there is one (a bad file raises its ConfigError, naming
    it), then the built-in simulated decks."""
    loaded = [DeckRegistry.load(deck_registry)] if deck_registry else []
    return [*([RoomDecks(room)] if room is not None else []), *loaded, simulation_registry()]


def registry_decks(*registries: DeckRegistry):
    """A *card_of_uid*: tag UID -> ``(card, deck)`` from *registries*, tried in order; None
    for a tag none of them holds or a UID that is no UID (the card stays unnamed)."""
    def card_of_uid(uid: str) -> tuple[str, str] | None:
        for registry in registries:
            try:
                tag = registry.lookup(uid)
            except ValueError:   # not a UID at all
                return None
            if tag is not None:
                return tag.card, tag.deck
        return None
    return card_of_uid
