"""The registry pass: what the tables journal about the room's registry, filed into it.

It runs beside the figures' ledger and the protection pass (in the collector, after the
lines are filed and acknowledged), and reads each table's new lines once, in ``seq``
order:

- the technician's ``deck_registered`` and ``badge_registered`` (first registration wins:
  a tag or badge that is already another deck's or dealer's is refused, an alert naming
  both), ``deck_checked`` (shown on the deck's page) and the box's ``registry_applied``
  (which registry version the table judges with), each a step of the card control log;
- every hand, through :class:`~dealerbox.floor.telling.hands.HandFollower`, with the deck
  its cards came from (the deck most of its shoe cards name, or whose tags they are): the
  deck's first hand puts it in play, every hand counts towards its limit
  (``[registry]`` of floor.toml), and a deck past it raises one alert.

Each chunk is filed in one transaction that moves the table's progress from the value
read (:meth:`~dealerbox.floor.store.registry.RoomRegistry.file_registry_part`), so two
collectors never file it twice; a hand still open is read again from its start by a
pass that did not follow it (a restart), and what it files again is filed once.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter

from dealerbox.floor.store.registry import DeckLimits, RegistryRefused, check_deck_name
from dealerbox.floor.telling.hands import HandFollower, wall_seconds

__all__ = ["RegistryPass", "REGISTRY_EVENTS"]

log = logging.getLogger(__name__)

#: The journal events the pass files into the registry (REGISTRY_WIRE, docs/floor/registry.md).
REGISTRY_EVENTS = frozenset({"deck_registered", "deck_checked", "badge_registered", "registry_applied"})
#: Lines read and filed per transaction.
CHUNK = 2000


class _Follower:
    """One table's lines: the registry's events, and each closed hand with its deck."""

    def __init__(self, table: str, decks: set[str], tags: dict[str, tuple[str, str]]):
        self.hands = HandFollower(table)
        self.decks, self.tags = decks, tags
        # What this table's lines registered, beside the store's (shared, cached: never written).
        self.learnt_decks: set[str] = set()
        self.learnt_tags: dict[str, tuple[str, str]] = {}
        self._cards: Counter = Counter()

    def known(self, decks: set[str], tags: dict[str, tuple[str, str]]) -> None:
        """The store's decks and tags as they are now: what the lines taught is in them if filed."""
        if decks is not self.decks or tags is not self.tags:
            self.decks, self.tags = decks, tags
            self.learnt_decks, self.learnt_tags = set(), {}

    @property
    def open_start(self) -> int | None:
        hand = self.hands.open_hand
        return hand.start_seq if hand is not None else None

    def feed(self, line: str, notes: list[dict], hands: list[dict]) -> None:
        record = json.loads(line)
        if not isinstance(record, dict):
            return
        event = record.get("event")
        kind = event.get("ev") if isinstance(event, dict) else None
        if kind in REGISTRY_EVENTS and isinstance(record.get("seq"), int):
            at = wall_seconds(record.get("wall"))
            notes.append({"kind": kind, "seq": record["seq"], "at": at if at is not None else time.time(),
                          "event": event})
            if kind == "deck_registered":
                self._learn(event)
        for closed in self.hands.feed(record):
            deck = self._cards.most_common(1)[0][0] if self._cards else None
            self._cards.clear()
            if deck is not None:
                hands.append({"start_seq": closed.start_seq, "deck": deck, "started": closed.started,
                              "ended": closed.ended, "dealer": closed.dealer})
        if kind == "new_hand":
            self._cards.clear()
        elif kind == "shoe" and self.hands.open_hand is not None:
            deck = self._deck(event)
            if deck is not None:
                self._cards[deck] += 1

    def _deck(self, event: dict) -> str | None:
        """The floor's deck a shoe card belongs to (None: a deck the floor does not know)."""
        deck = event.get("deck")
        if isinstance(deck, str) and (deck in self.decks or deck in self.learnt_decks):
            return deck
        uid = event.get("uid")
        if isinstance(uid, str):
            found = self.tags.get(uid.upper()) or self.learnt_tags.get(uid.upper())
            return found[1] if found is not None else None
        return None

    def _learn(self, event: dict) -> None:
        """A deck registered in the lines being read: its hands that follow count for it now.
        Only a name the store could hold is learnt (the store looks the deck up by it)."""
        tags = event.get("tags")
        try:
            deck = check_deck_name(event.get("deck"))
        except RegistryRefused:
            return
        if isinstance(tags, dict):
            self.learnt_decks.add(deck)
            for uid, card in tags.items():
                if isinstance(uid, str) and uid.upper() not in self.tags:
                    self.learnt_tags.setdefault(uid.upper(), (str(card), deck))


class RegistryPass:
    """Files every table's registry events and each deck's hands into the store's registry.

    :meth:`catch_up` is safe to call from several threads and processes at once; the
    collector calls it about once a second (:class:`~dealerbox.floor.collecting.collector.Collector`).
    """

    def __init__(self, store, limits: DeckLimits | None = None, *, chunk: int = CHUNK):
        self.store = store
        self.limits = limits or DeckLimits()
        self.chunk = chunk
        #: Lines that could not be read (malformed), skipped; per table, this process.
        self.skipped: dict[str, int] = {}
        #: Per table, the progress at which its filing last failed (logged once there; its
        #: lines are tried again each pass, and the other tables go on meanwhile).
        self.failing: dict[str, int | None] = {}
        self._followers: dict[str, tuple[int, _Follower]] = {}
        self._known: tuple[tuple[int, int], set[str], dict] | None = None   # (key, decks, tags)

    def _decks_and_tags(self) -> tuple[set[str], dict[str, tuple[str, str]]]:
        """The store's deck names and tags, read again only when the registry changed: its
        version moves with every registration and retirement, its count of decks with every
        deck received (a received deck's hands count, and receiving moves no version)."""
        key = self.store.registry_revision()
        if self._known is None or self._known[0] != key:
            self._known = (key, {d["name"] for d in self.store.decks()}, self.store.deck_of_tags())
        return self._known[1], self._known[2]

    def catch_up(self) -> list[dict]:
        """Read every table's lines filed since the last call; returns the alerts raised.
        A table whose lines cannot be filed (the store refuses them) is logged and left
        behind; every other table is filed all the same."""
        behind = self.store.registry_behind()
        if not behind:
            return []
        alerts: list[dict] = []
        for table, seq, resume_seq in behind:
            decks, tags = self._decks_and_tags()
            try:
                alerts.extend(self._table(table, seq, resume_seq, decks, tags))
            except Exception:
                self._followers.pop(table, None)
                if self.failing.get(table, -1) != seq:
                    self.failing[table] = seq
                    log.exception("registry: %s's lines after seq %s could not be filed; the other tables "
                                  "go on, and the next pass tries these again", table, seq)
                continue
            self.failing.pop(table, None)
        return alerts

    def _table(self, table, seq, resume_seq, decks, tags) -> list[dict]:
        kept = self._followers.pop(table, None)
        if kept is not None and kept[0] == (seq or 0):
            follower, cursor = kept[1], seq or 0
        else:
            follower = _Follower(table, decks, tags)
            # The open hand is read again from its first line: nothing to keep but where it began.
            cursor = resume_seq - 1 if resume_seq is not None else (seq or 0)
        follower.known(decks, tags)
        alerts: list[dict] = []
        while True:
            rows = self.store.lines(table, cursor, self.chunk)
            if not rows:
                self._followers[table] = (seq or 0, follower)
                return alerts
            notes: list[dict] = []
            hands: list[dict] = []
            for line_seq, line in rows:
                try:
                    follower.feed(line, notes, hands)
                except Exception as exc:  # garbage in the store must not stop the registry
                    if line_seq > (seq or 0):
                        self.skipped[table] = self.skipped.get(table, 0) + 1
                        log.warning("registry: %s seq %s is not a journal line, skipped: %s", table, line_seq, exc)
            cursor = rows[-1][0]
            progress = max(cursor, seq or 0)
            done = self.store.file_registry_part(table, seq, progress, follower.open_start, notes, hands, self.limits)
            if done is None:
                return alerts  # another caller filed these lines first
            alerts.extend(done)
            seq = progress
