"""The dealers' badges: ``dealerbox badge register|list|remove``.

:func:`register_badge` reads one badge on the shoe reader and files it under a
dealer's id in the badge registry (:class:`~dealerbox.domain.badges.BadgeRegistry`),
with the guidance ``dealerbox deck register`` gives: what to show next and a
progress bar (``[--------------------] 0/1 next: the badge of dealer 1042``),
each refusal with what the tag is, reader faults reported once and retried by
the same supervisor. The reading is :mod:`dealerbox.tools.deck_registration`'s
(:data:`~dealerbox.tools.deck_registration.TagWatcher`): a tag counts as shown once it has
been read steadily for *settle_s*, and shown again only after it was gone.

Nothing is written until a badge is taken; the file is replaced atomically, or
created (a new box has none). A cancel (Ctrl-C) or a timeout writes nothing.
Time and waiting are injected (``clock``, ``sleep``), so tests drive the loop
with a fake clock and the chip emulator.
"""

from __future__ import annotations

import time
from typing import Callable, Iterable, Mapping

from dealerbox.errors import DealerboxError, RegistryError
from dealerbox.hw.reader import TagReader
from dealerbox.domain.badges import BadgeRegistry, check_dealer_id
from dealerbox.domain.decks import DeckRegistry, normalize_uid
from dealerbox.service.room_registry import REVOKED_BADGE
from dealerbox.tools.deck_registration import Prompt, TagWatcher, progress_bar

__all__ = ["BadgeTimeout", "register_badge", "remove_badges", "format_badges"]


class BadgeTimeout(DealerboxError, TimeoutError):
    """No badge was shown to the reader within the allowed time; nothing was written."""


def _copy(badges: BadgeRegistry, *, without: str | None = None) -> BadgeRegistry:
    out = BadgeRegistry()
    for uid, dealer in badges.by_uid().items():
        if dealer != without:
            out.add(uid, dealer)
    return out


class _Enrolment:
    """One registration: judges each tag that appears, takes the first that can be the dealer's badge."""

    def __init__(self, badges: BadgeRegistry, decks: DeckRegistry | None, dealer: str, prompt: Prompt,
                 replace: bool, room: Mapping[str, str] | None = None):
        self.badges, self.decks, self.dealer, self.prompt, self.replace = badges, decks, dealer, prompt, replace
        self.room = room or {}
        self.taken: str | None = None

    def ask(self) -> None:
        self.prompt(f"{progress_bar(0, 1)} next: the badge of dealer {self.dealer}: hold it still on the antenna")

    def take(self, appeared: list[str]) -> bool:
        """Judge the tags that appeared in one poll; True once the dealer's badge is taken."""
        if len(appeared) > 1:
            self.prompt(f"refused: {len(appeared)} tags at once ({', '.join(appeared)}); hold one badge alone")
            self.ask()
            return False
        refusal = self._refusal(appeared[0])
        if refusal is not None:
            self.prompt(f"refused: {refusal}")
            self.ask()
            return False
        self.taken = normalize_uid(appeared[0])
        return True

    def _refusal(self, uid: str) -> str | None:
        try:
            key = normalize_uid(uid)
        except RegistryError:
            return f"tag {uid} has no valid UID (4, 7 or 10 bytes)"
        tag = self.decks.lookup(key) if self.decks is not None else None
        if tag is not None:
            back = self.decks.backs.get(tag.deck, "")
            return (f"this tag ({key}) is {tag.card} of deck {tag.deck}" + (f" ({back} back)" if back else "")
                    + "; a card cannot be a badge: show the dealer's badge")
        owner = self.badges.dealer_of(key)
        if owner is not None and owner != self.dealer:
            return (f"this badge ({key}) is dealer {owner}'s; take it from them first "
                    f"(dealerbox badge remove {owner})")
        in_room = self.room.get(key)
        if in_room == REVOKED_BADGE:
            return f"this badge ({key}) was revoked on the floor and signs in nowhere; give the dealer another"
        if in_room is not None and in_room != self.dealer:
            return (f"this badge ({key}) is dealer {in_room}'s in the room's registry; the floor revokes it "
                    "before it can be another dealer's")
        return None


def register_badge(reader: TagReader, badges: BadgeRegistry, dealer: str, path, *,
                   decks: DeckRegistry | None = None, room: Mapping[str, str] | None = None,
                   prompt: Prompt = print, replace: bool = False,
                   clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
                   poll_s: float = 0.02, timeout_s: float = 120.0, retry_s: float = 0.5,
                   settle_s: float = 0.1, dropout_s: float = 0.5, zones: Iterable[str] | None = None,
                   reopen: Callable[[], TagReader] | None = None) -> BadgeRegistry:
    """Read *dealer*'s badge on *reader*; write the registry to *path*; return it.

    :param badges: the badge registry as it is now (not modified).
    :param dealer: the dealer's id (an employee number: 1-10 letters, digits, '-', '_').
    :param decks: the table's deck registry: a card's tag is refused as a badge.
    :param room: the room's badges as the box judges them (badge UID -> dealer id,
        :data:`~dealerbox.service.room_registry.REVOKED_BADGE` for a revoked one): another dealer's badge there, or a revoked one, is refused.
    :param replace: the dealer's other badges are dropped (a lost badge); without
        it a dealer who has a badge already is refused.
    :param zones: only these zones of the reader (the shoe's, for a reader with several).

    The other parameters are :func:`dealerbox.tools.deck_registration.register_deck`'s. Refused
    (with what the tag is, and the badge asked for again): two tags at once, a tag
    that is no UID, a card of a registered deck, another dealer's badge. The
    dealer's own badge shown again changes nothing and writes nothing.
    ``KeyboardInterrupt`` writes nothing and is re-raised; :class:`BadgeTimeout`
    when no badge came within *timeout_s*.
    """
    check_dealer_id(dealer)
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be > 0 seconds, not {timeout_s!r}")
    had = badges.badges_of(dealer)
    if had and not replace:
        raise RegistryError(f"dealer {dealer} has a badge already ({', '.join(had)}); register with --replace "
                            "to give them this one instead (a lost badge), or remove theirs first")
    watcher = TagWatcher(reader, prompt=prompt, clock=clock, sleep=sleep, poll_s=poll_s, retry_s=retry_s,
                         settle_s=settle_s, dropout_s=dropout_s, zones=zones, reopen=reopen)
    run = _Enrolment(badges, decks, dealer, prompt, replace, room)
    try:
        run.ask()
        start = clock()
        while run.taken is None:
            if clock() - start > timeout_s:
                raise BadgeTimeout(f"no badge shown for {timeout_s:g} s while waiting for the badge of dealer "
                                   f"{dealer}; nothing was written")
            appeared = watcher.poll()
            if not (appeared and run.take(appeared)):
                watcher.wait()
    except KeyboardInterrupt:
        prompt("cancelled: nothing was written")
        raise
    uid = run.taken
    faults = f" ({watcher.faults} reader faults retried)" if watcher.faults else ""
    if had == [uid]:
        prompt(f"{progress_bar(1, 1)} badge {uid} is dealer {dealer}'s already: nothing to write{faults}")
        return badges
    new = _copy(badges, without=dealer if replace else None)
    new.add(uid, dealer)
    new.save(path)
    dropped = [u for u in had if u != uid]
    prompt(f"{progress_bar(1, 1)} badge {uid} registered to dealer {dealer}, written to {path}"
           + (f"; their old badge {', '.join(dropped)} no longer signs in" if dropped else "") + faults)
    return new


def remove_badges(badges: BadgeRegistry, dealer: str, path) -> list[str]:
    """Take every badge of *dealer* out of the registry at *path*; return their UIDs.

    Raises :class:`RegistryError` when the dealer has no badge (nothing is written).
    """
    check_dealer_id(dealer)
    new = _copy(badges)
    gone = new.remove(dealer)
    if not gone:
        known = ", ".join(badges.dealers) or "none"
        raise RegistryError(f"dealer {dealer} has no badge in {path} (dealers with a badge: {known})")
    new.save(path)
    return gone


def format_badges(badges: BadgeRegistry, source: str) -> str:
    """The registry as a technician reads it: one dealer a line, with their badges."""
    lines = [f"{len(badges.dealers)} dealer(s) with a badge in {source}"]
    for dealer in badges.dealers:
        lines.append(f"  {dealer:<10}  {' '.join(badges.badges_of(dealer))}")
    return "\n".join(lines)
