"""The room's registry at the table: the floor's decks and badges beside the table's own files.

The floor publishes each table the room's registry (docs/floor/registry.md, "The room's
registry"; the wire is :mod:`dealerbox.link.protocol`). The box judges cards with its
own deck registry file and the room's decks together, less the tags the floor retired,
and badges with its own badge file and the room's badges, less the revoked ones. The deck
it deals (the active one) is the one the floor issued to it, when the floor says; else the
table's own file's choice.

A registry reaches the box from the uplink's thread at any moment; :class:`RoomRegistry`
checks it there (one log line and nothing else for one that does not check) and keeps
it on disk as *waiting* (``floor-registry-next.json``). The engine loop applies it
between hands only (:meth:`RoomRegistry.apply`): then it becomes the one the box judges
with, kept as ``floor-registry.json`` and loaded again at the next start, before the
open hand is replayed, so the replay judges with the registry that hand was dealt with.
Both files hold the payload as the floor sent it, written with
:func:`dealerbox.atomic.save_atomic`.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from dealerbox.atomic import save_atomic
from dealerbox.domain.badges import BadgeRegistry
from dealerbox.domain.decks import DeckRegistry
from dealerbox.errors import RegistryError
from dealerbox.link import protocol as P

log = logging.getLogger("dealerbox")

APPLIED_NAME = "floor-registry.json"
WAITING_NAME = "floor-registry-next.json"
#: Where retired tags go in the merged deck registry: a deck that is never the active one,
#: so that a retired card is a card of another deck (``FOREIGN_CARD``) at every table.
RETIRED_DECK = "(retired)"
#: The dealer of a revoked badge in the readers' badge map: no dealer id is empty, so the
#: badge is still taken out of the polls (a badge is never a card) and signs nobody in.
REVOKED_BADGE = ""


@dataclass(frozen=True)
class Received:
    """A room registry as the floor sent it: the checked content and the payload's bytes."""

    registry: P.FloorRegistry
    payload: bytes


def merged_decks(local: DeckRegistry | None, floor: P.FloorRegistry | None) -> DeckRegistry:
    """The deck registry the engine judges with: *local* (the table's file) and the room's
    decks, less the retired tags, which become cards of :data:`RETIRED_DECK` (the floor keeps
    a retired deck's cards in its ``decks``, so every table names a retired card).

    The active deck is the one the floor issued to this table when the registry says
    (``active``; None there: the deck issued here moved on or was retired, and no deck is
    this table's, so every card is foreign); else the local file's; a table without either
    takes the room's first deck by name that is not retired. A tag that the local file and
    the room give to different cards stays as the local file says (one log line): ``deck
    register`` refuses a tag of the room's registry the table has received, and the floor
    refuses a registration whose tags it knows, so only a file edited by hand, or filled at a
    table that had not yet received the room's registry, gets there.
    """
    if floor is None:
        return local if local is not None else DeckRegistry()
    out = DeckRegistry(active=None)
    known: dict[str, tuple[str, str]] = {}          # UID -> (deck, card), local first
    backs: dict[str, str] = {}
    if local is not None:
        for deck in local.decks:
            backs[deck] = local.backs.get(deck, "")
            for uid, tag in local.cards_of(deck).items():
                known[uid] = (tag.deck, tag.card)
    for deck, (back, tags) in sorted(floor.decks.items()):
        backs.setdefault(deck, back)
        if not backs[deck]:
            backs[deck] = back
        for uid, card in tags.items():
            old = known.setdefault(uid, (deck, card))
            if old != (deck, card):
                log.warning("room registry %d: tag %s is %s of deck %s there and %s of deck %s in this table's "
                            "file; the file is kept for it", floor.version, uid, card, deck, old[1], old[0])
    for uid, (deck, card) in known.items():
        out.add(uid, RETIRED_DECK if uid in floor.retired else deck, card)
    for deck, back in backs.items():
        out.backs[deck] = back
    if floor.issues_active:
        active = floor.active
    else:
        active = local.active if local is not None else None
        if active is None:
            # The floor keeps retired decks in its decks: one of them would make every card foreign.
            active = next((deck for deck, (_, tags) in sorted(floor.decks.items())
                           if not (tags and floor.retired.issuperset(tags))), None)
    out.active = active
    if active is not None:
        out.backs.setdefault(active, "")
    return out


def merged_badges(local: BadgeRegistry | None, floor: P.FloorRegistry | None) -> dict[str, str]:
    """Badge UID -> dealer id for the readers: *local* (the table's file) and the room's badges;
    a revoked badge maps to :data:`REVOKED_BADGE`. Local first where both name a badge."""
    out = dict(local.by_uid()) if local is not None else {}
    if floor is None:
        return out
    for uid, dealer in floor.badges.items():
        out.setdefault(uid, dealer)
    for uid in floor.revoked:
        out[uid] = REVOKED_BADGE
    return out


class RoomRegistry:
    """The table's copy of the room's registry: the one the box judges with (:attr:`applied`)
    and the one waiting for the hand to end, both kept in *state_dir*.

    :param state_dir: the box's state directory (beside its journal).
    :param decks: the table's own deck registry (its file), or None.
    :param badges: the table's own badge registry (its file).
    """

    def __init__(self, state_dir, decks: DeckRegistry | None, badges: BadgeRegistry | None):
        self.directory = Path(state_dir)
        self.local_decks = decks
        self.local_badges = badges
        self.applied: Received | None = self._load(APPLIED_NAME)
        waiting = self._load(WAITING_NAME)
        #: Received since the last apply and kept on disk: applied at the next chance.
        self.waiting: Received | None = waiting if waiting is not None and self._is_new(waiting) else None
        self._last_refusal: str | None = None
        # receive runs on the uplink's thread and apply on the engine loop: without it, apply
        # could clear (and unlink) a newer registry receive had just kept as waiting.
        self._lock = threading.Lock()

    # -- what the box judges with
    @property
    def floor(self) -> P.FloorRegistry | None:
        return self.applied.registry if self.applied is not None else None

    def decks(self) -> DeckRegistry:
        """The merged deck registry (see :func:`merged_decks`)."""
        return merged_decks(self.local_decks, self.floor)

    def badges(self) -> dict[str, str]:
        """The merged badge map (see :func:`merged_badges`)."""
        return merged_badges(self.local_badges, self.floor)

    def summary(self) -> dict | None:
        """``{"version", "fingerprint"}`` of the registry the box judges with, or None (health)."""
        return self.floor.summary() if self.floor is not None else None

    def use_local(self, decks: DeckRegistry | None, badges: BadgeRegistry | None) -> None:
        """The table's own files changed (a config reload)."""
        self.local_decks, self.local_badges = decks, badges

    # -- receiving (the uplink's thread) and applying (the engine loop)
    def receive(self, payload: bytes) -> Received | None:
        """Check a payload the floor sent; keep it as waiting and return it when it is new.

        One that does not check is refused with one log line (once per distinct reason in a
        row: the broker sends a retained one again on every reconnect); the registry in use
        and the one waiting stay as they were.
        """
        with self._lock:
            return self._receive(payload)

    def _receive(self, payload: bytes) -> Received | None:
        try:
            got = Received(P.parse_registry(payload), bytes(payload))
        except P.RegistryPayloadError as exc:
            reason = str(exc)
            if reason != self._last_refusal:
                log.error("floor: refused a room registry (%s); the box keeps judging with %s", reason,
                          self._describe(self.floor))
                self._last_refusal = reason
            return None
        self._last_refusal = None
        if not self._is_new(got) or (self.waiting is not None
                                     and self.waiting.registry.summary() == got.registry.summary()):
            return None
        if self.floor is not None and got.registry.version < self.floor.version:
            log.warning("floor: room registry version %d follows version %d: the floor's store was restored or "
                        "rebuilt; taking it", got.registry.version, self.floor.version)
        try:
            save_atomic(self.directory / WAITING_NAME, payload.decode("ascii"))
        except OSError as exc:
            log.error("floor: cannot keep room registry %d on disk (%s); it applies all the same",
                      got.registry.version, exc.strerror or exc)
        self.waiting = got
        return got

    def apply(self, got: Received) -> None:
        """Make *got* the registry the box judges with, on disk first (the engine loop calls
        this between hands, then hands the engine :meth:`decks`)."""
        with self._lock:
            self._apply(got)

    def _apply(self, got: Received) -> None:
        try:
            save_atomic(self.directory / APPLIED_NAME, got.payload.decode("ascii"))
        except OSError as exc:
            log.error("floor: cannot keep room registry %d on disk (%s): a restart judges with %s",
                      got.registry.version, exc.strerror or exc, self._describe(self.floor))
        self.applied = got
        if self.waiting is not None and self.waiting.registry.summary() == got.registry.summary():
            self.waiting = None
            try:
                (self.directory / WAITING_NAME).unlink(missing_ok=True)
            except OSError:
                pass
        issued = got.registry.active
        log.info("floor: judging with room registry %d (%s): %d deck(s), %d retired tag(s), %d badge(s), "
                 "%d revoked; %s", got.registry.version, got.registry.fingerprint[:12], len(got.registry.decks),
                 len(got.registry.retired), len(got.registry.badges), len(got.registry.revoked),
                 "the active deck is this table's own choice" if not got.registry.issues_active
                 else f"deck {issued} is issued to this table" if issued is not None
                 else "no deck is issued to this table (its deck moved on or was retired)")

    # -- files
    def _is_new(self, got: Received) -> bool:
        return self.floor is None or self.floor.summary() != got.registry.summary()

    def _load(self, name: str) -> Received | None:
        path = self.directory / name
        try:
            payload = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.error("floor: cannot read the kept room registry %s (%s)", path, exc.strerror or exc)
            return None
        try:
            return Received(P.parse_registry(payload), payload)
        except (P.RegistryPayloadError, RegistryError) as exc:
            log.error("floor: the kept room registry %s is not one (%s); waiting for the floor's", path, exc)
            return None

    @staticmethod
    def _describe(floor: P.FloorRegistry | None) -> str:
        return "the table's own files only" if floor is None else f"room registry {floor.version}"
