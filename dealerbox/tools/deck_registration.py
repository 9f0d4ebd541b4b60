"""Deck registration and the deck check, driven from a card reader.

Two technician tools sit on top of :class:`~dealerbox.hw.reader.TagReader`:

- :func:`register_deck` walks a technician through a new deck, one card at a
  time, in a fixed order (the 52 cards of :data:`~dealerbox.domain.cards.DECK_52`, then
  2 jokers). It names the card to show next with a progress bar
  (``[########------------] 22/54 next: Jd (jack of diamonds)``), refuses a tag
  already taken in this registration or registered to another deck, and writes
  the registry file atomically at the end. A cancel (Ctrl-C) writes nothing.
- :func:`check_deck_with_reader` collects every tag of a deck passed over a
  reader and judges it with :func:`dealerbox.rules.deckcheck.check_deck`;
  :func:`format_report` prints the findings and :func:`exit_status` turns the
  verdict into the command's exit code (0 fit for play, 1 not fit).

How a tag counts as "shown"
---------------------------
Reads go through :class:`~dealerbox.hw.presence.PresenceTracker` with every zone
of the reader merged into one, so the same debouncing the daemon uses applies:
a tag is *shown* when it appears (after *settle_s* of steady reading), and it
is shown *again* only after it has been gone for longer than the dropout
window. A card lying on the antenna is therefore one appearance, however many
polls see it, and a card lifted and put back is two.

Time and waiting are injected (``clock``, ``sleep``) and every wait is bounded
(``timeout_s``, ``quiet_s``, ``start_timeout_s``), so tests drive the loops with
a fake clock and a chip emulator, never with real time.

A rehearsal without hardware
----------------------------
:class:`RehearsalHand` is a technician's hand at an emulated reader (a reader of
:class:`hardware_sim.table.SimulatedTable`): it lays each card's tag on the
antenna when :func:`register_deck` asks for it (``on_ask``), or passes a deck's
tags over it one by one between the polls of :func:`check_deck_with_reader`
(:meth:`RehearsalHand.passing`). The reader, its driver and everything above are
the real ones; ``dealerbox deck register --simulated`` and ``deck check
--simulated`` use it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from dealerbox.domain.cards import DECK_52, JOKER
from dealerbox.rules.deckcheck import DeckReport, check_deck
from dealerbox.errors import DealerboxError, RegistryError
from dealerbox.hw.presence import BOARD, PresenceTracker
from dealerbox.hw.reader import ReaderSupervisor, TagReader
from dealerbox.domain.decks import (DeckRegistry, deck_back_refusal, deck_name_refusal, normalize_uid,
                                    simulated_uid)
from dealerbox.service.room_registry import RETIRED_DECK

__all__ = [
    "REGISTRATION_ORDER", "JOKERS_PER_DECK", "DeckTimeout", "ReaderDeckReport",
    "register_deck", "check_deck_with_reader", "format_report", "exit_status",
    "progress_bar", "card_name", "RehearsalHand", "deck_registered_fields", "deck_checked_fields",
]

log = logging.getLogger(__name__)

#: Jokers a registered deck carries (registered last, after the 52 cards).
JOKERS_PER_DECK = 2
#: The order in which :func:`register_deck` asks for the cards.
REGISTRATION_ORDER: tuple[str, ...] = DECK_52 + (JOKER,) * JOKERS_PER_DECK

_RANK_NAMES = {"2": "two", "3": "three", "4": "four", "5": "five", "6": "six", "7": "seven",
               "8": "eight", "9": "nine", "T": "ten", "J": "jack", "Q": "queen", "K": "king", "A": "ace"}
_SUIT_NAMES = {"c": "clubs", "d": "diamonds", "h": "hearts", "s": "spades"}

Prompt = Callable[[str], None]


class DeckTimeout(DealerboxError, TimeoutError):
    """No card was shown to the reader within the allowed time; nothing was written."""


def card_name(card: str) -> str:
    """``Ah`` -> ``ace of hearts``; ``joker`` stays ``joker``."""
    if len(card) == 2 and card[0] in _RANK_NAMES and card[1] in _SUIT_NAMES:
        return f"{_RANK_NAMES[card[0]]} of {_SUIT_NAMES[card[1]]}"
    return card


def progress_bar(done: int, total: int, width: int = 20) -> str:
    """``[#####---------------] 13/54``: *done* of *total*, in *width* cells."""
    total = max(total, 1)
    done = min(max(done, 0), total)
    filled = done * width // total
    return f"[{'#' * filled}{'-' * (width - filled)}] {done}/{total}"


def _ask_text(done: int, order: tuple[str, ...]) -> str:
    card = order[done]
    if card == JOKER:
        nth = order[:done + 1].count(JOKER)
        label = f"joker ({nth} of {order.count(JOKER)})"
    else:
        label = f"{card} ({card_name(card)})"
    return f"{progress_bar(done, len(order))} next: {label}"


def _tag_label(registry: DeckRegistry, deck: str, card: str) -> str:
    if deck == RETIRED_DECK:
        return f"{card} of a deck the floor retired"
    back = registry.backs.get(deck, "")
    return f"{card} of deck {deck}" + (f" ({back} back)" if back else "")


class _Watcher:
    """Turns a supervised reader's polls into tag appearances, and tells the technician about faults.

    Every zone of the reader is merged into one, so a multi-antenna reader works
    like a single pad. Faults belong to a :class:`~dealerbox.hw.reader.ReaderSupervisor`,
    as in the daemon: it reports a fault once per outage, lets go of the failed
    reader and tries again with its backoff (at most *retry_s* between tries);
    this class says so through *prompt*. With *reopen* the supervisor makes a
    fresh reader after a fault (the failed one is closed; a fresh one is
    *reopen*'s caller's to close); without it, the reader handed in is polled
    again, and stays the caller's.
    """

    def __init__(self, reader: TagReader, *, prompt: Prompt, clock, sleep, poll_s: float,
                 retry_s: float, settle_s: float, dropout_s: float, zones: Iterable[str] | None,
                 reopen: Callable[[], TagReader] | None):
        if not poll_s > 0:
            raise ValueError(f"poll_s must be > 0 seconds, not {poll_s!r}")
        self.prompt = prompt
        self.sleep = sleep
        self.poll_s = float(poll_s)
        self.zones = frozenset(zones) if zones is not None else None
        self.tracker = PresenceTracker(board_dropout=dropout_s, settle=settle_s)
        self._clock = clock
        handed_in = [reader]

        def open_reader() -> TagReader:
            if handed_in:
                return handed_in.pop()
            return reopen() if reopen is not None else reader

        longest = max(float(retry_s), self.poll_s)
        self.supervisor = ReaderSupervisor(reader.name, open_reader, backoff_initial=min(0.1, longest),
                                           backoff_max=longest, clock=clock, owns_readers=reopen is not None)

    @property
    def faults(self) -> int:
        """Outages of the reader so far (each reported once)."""
        return self.supervisor.faults

    @property
    def polls(self) -> int:
        """Polls that answered."""
        return self.supervisor.polls

    def poll(self) -> list[str] | None:
        """One poll: the UIDs that appeared (sorted), or None when the reader failed or is not due."""
        t = self._clock()
        seen, reports = self.supervisor.poll()
        name = self.supervisor.name
        if "reader_fault" in reports:
            self.prompt(f"reader {name!r} failed ({self.supervisor.fault_reason}); check the cable; "
                        "retrying, nothing read so far is lost")
        if "reader_ok" in reports:
            self.prompt(f"reader {name!r} answers again; carry on")
        if seen is None:
            return None
        uids = set()
        for zone, tags in seen.items():
            if self.zones is None or zone in self.zones:
                uids.update(tags)
        events = self.tracker.update(t, {BOARD: frozenset(uids)})
        return [e.uid for e in events if e.ev == "board_on"]

    def wait(self) -> None:
        """Sleep until the next poll: one poll period, or the supervisor's backoff after a fault."""
        self.sleep(max(self.poll_s, self.supervisor.wait_s))


#: The same watcher for the other tools that read one tag at a time (``dealerbox badge register``).
TagWatcher = _Watcher


def _check_new_deck(registry: DeckRegistry, known: DeckRegistry, deck: str, back: str, replace: bool) -> None:
    """Refuse a deck name that is not one, or a back colour (the rules the floor holds too:
    :func:`~dealerbox.domain.decks.is_deck_name`), a deck of the room's registry that the
    table's file does not hold (the floor would refuse it: first registration wins), or a deck
    already registered unless it is replaced."""
    refusal = deck_name_refusal(deck) or deck_back_refusal(back)
    if refusal is not None:
        raise RegistryError(refusal)
    if known.has_deck(deck) and not registry.has_deck(deck):
        raise RegistryError(f"deck {deck} is the room's already (registered on the floor, "
                            f"{len(known.cards_of(deck))} tags); register this deck under another name")
    if registry.has_deck(deck) and not replace:
        raise RegistryError(f"deck {deck} is already registered ({len(registry.cards_of(deck))} tags); "
                            "replace it explicitly to register it again")


class _Registration:
    """One registration run: which card is asked for next, and the tags taken so far.

    Each appearance is judged here: taken as the card asked for, or refused
    (two tags at once, a tag taken earlier in this run, a malformed UID, a tag
    of another deck) with the same card asked for again. Taken tags go into
    *new*; *registry* (every tag the table knows: its file and the room's registry) is only read.
    """

    def __init__(self, registry: DeckRegistry, new: DeckRegistry, deck: str, order: tuple[str, ...],
                 prompt: Prompt, on_ask: Callable[[int], None] | None = None):
        self.registry, self.new, self.deck, self.order, self.prompt = registry, new, deck, order, prompt
        self.on_ask = on_ask
        self.taken: dict[str, str] = {}          # uid -> card, in this run
        self.done = 0

    @property
    def finished(self) -> bool:
        return self.done >= len(self.order)

    @property
    def wanted(self) -> str:
        """The card asked for now."""
        return self.order[self.done]

    def ask(self) -> None:
        self.prompt(_ask_text(self.done, self.order))
        if self.on_ask is not None:
            self.on_ask(self.done)

    def take(self, appeared: list[str]) -> bool:
        """Judge the tags that appeared in one poll; True when one was registered."""
        if len(appeared) > 1:
            self.prompt(f"refused: {len(appeared)} tags at once ({', '.join(appeared)}); "
                        f"lift them all and show one card")
            self.ask()
            return False
        uid, want = appeared[0], self.wanted
        refusal = self._refusal(uid)
        if refusal is not None:
            self.prompt(f"refused: {refusal}; put it aside and show {want}")
            self.ask()
            return False
        self.new.add(uid, self.deck, want)
        self.taken[uid] = want
        self.done += 1
        self.prompt(f"{want} registered as tag {uid}")
        if not self.finished:
            self.ask()
        return True

    def _refusal(self, uid: str) -> str | None:
        tag = _lookup(self.registry, uid)
        if uid in self.taken:
            return f"this tag ({uid}) was registered a moment ago as {self.taken[uid]}"
        if tag is _MALFORMED:
            return f"tag {uid} has no valid UID (4, 7 or 10 bytes)"
        if tag is not None and tag.deck != self.deck:
            return f"this tag ({uid}) is registered as {_tag_label(self.registry, tag.deck, tag.card)}"
        return None


def _copy_without(registry: DeckRegistry, deck: str) -> DeckRegistry:
    """A copy of *registry* without *deck*'s tags (``active`` is set by the caller)."""
    out = DeckRegistry(active=None)
    for name in registry.decks:
        if name == deck:
            continue
        for uid, tag in registry.cards_of(name).items():
            out.add(uid, name, tag.card)
        out.backs[name] = registry.backs.get(name, "")
    return out


def register_deck(reader: TagReader, registry: DeckRegistry, deck: str, path, *,
                  prompt: Prompt = print, back: str = "", replace: bool = False,
                  activate: bool = False, clock: Callable[[], float] = time.monotonic,
                  sleep: Callable[[float], None] = time.sleep, poll_s: float = 0.02,
                  timeout_s: float = 300.0, retry_s: float = 0.5, settle_s: float = 0.1,
                  dropout_s: float = 0.5, zones: Iterable[str] | None = None,
                  reopen: Callable[[], TagReader] | None = None,
                  order: tuple[str, ...] = REGISTRATION_ORDER,
                  on_ask: Callable[[int], None] | None = None,
                  known: DeckRegistry | None = None) -> DeckRegistry:
    """Register a new deck card by card from *reader*; write it to *path*; return the new registry.

    :param registry: the registry as it is now (other decks' tags are refused;
        it is not modified: a new registry is returned and saved).
    :param deck: the new deck's name. A deck already in *registry* is refused
        unless *replace* is true, which drops its old tags.
    :param prompt: called with one line of text for the technician at every
        change: the card to show next with the progress bar, each card
        registered, each refusal, reader faults.
    :param back: the back's colour or pattern, kept in the registry file.
    :param activate: make the new deck the table's active deck (a deck added to
        an empty registry becomes active anyway).
    :param clock: monotonic seconds; :param sleep: waits between polls. Both are
        injected so tests drive the loop with a fake clock.
    :param poll_s: time between polls; :param retry_s: the longest wait between two tries
        to reopen a failed reader (the reader's supervisor backs off up to it).
    :param timeout_s: longest wait for the next card (a reader fault counts as
        waiting); then :class:`DeckTimeout` is raised and nothing is written.
    :param settle_s: how long a tag must be read steadily to count as shown.
    :param dropout_s: how long a tag must be gone to count as lifted.
    :param zones: only these zones of the reader (default: all of them).
    :param reopen: makes a fresh reader after a fault (the failed one is closed);
        without it the same reader is polled again.
    :param order: the cards to ask for (default :data:`REGISTRATION_ORDER`).
    :param on_ask: called with the index in *order* of the card asked for, each
        time it is asked for (after *prompt*): what a simulated hand
        (:meth:`RehearsalHand.registering`) acts on.
    :param known: every tag the table judges with, when it is more than *registry*: the
        table's file and the room's registry the box keeps
        (:meth:`dealerbox.service.room_registry.RoomRegistry.decks`). A tag or a deck name of
        the room is refused as one of the file's is; only *registry* is written.

    A tag read again that was registered earlier in this run, or that is
    registered to another deck, is refused with a message saying what it is,
    and the same card is asked for again. Two new tags appearing in one poll are
    both refused (one card at a time). ``KeyboardInterrupt`` (Ctrl-C) ends the
    run and writes nothing; it is re-raised for the caller.
    """
    known = registry if known is None else known
    _check_new_deck(registry, known, deck, back, replace)
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be > 0 seconds, not {timeout_s!r}")
    new = _copy_without(registry, deck)
    watcher = _Watcher(reader, prompt=prompt, clock=clock, sleep=sleep, poll_s=poll_s, retry_s=retry_s,
                       settle_s=settle_s, dropout_s=dropout_s, zones=zones, reopen=reopen)
    run = _Registration(known, new, deck, order, prompt, on_ask)
    try:
        run.ask()
        last_progress = clock()
        while not run.finished:
            if clock() - last_progress > timeout_s:
                raise DeckTimeout(f"no card shown for {timeout_s:g} s while waiting for "
                                  f"{run.wanted} ({run.done}/{len(order)} registered); nothing was written")
            appeared = watcher.poll()
            if appeared and run.take(appeared):
                last_progress = clock()
            watcher.wait()
    except KeyboardInterrupt:
        prompt(f"cancelled at {run.done}/{len(order)}: nothing was written")
        raise
    done = run.done
    new.backs[deck] = back
    keep = registry.active
    new.active = deck if activate or keep is None or not (keep == deck or new.has_deck(keep)) else keep
    new.save(path)
    prompt(f"{progress_bar(done, len(order))} deck {deck} registered: {done} tags written to {path}"
           + (f" ({watcher.faults} reader faults retried)" if watcher.faults else ""))
    return new


# --------------------------------------------------------------------------
# The deck check


@dataclass
class ReaderDeckReport(DeckReport):
    """A :class:`~dealerbox.rules.deckcheck.DeckReport` with what the reader saw.

    ``passes`` counts the separate appearances of each UID (a tag lifted and
    shown again counts twice); ``reader_faults`` counts the reader's outages (each
    reported once); ``polls`` counts the polls that answered. A fault during the check may hide cards passed at that
    moment: they show up as missing, and the text says to pass the deck again.
    """

    passes: dict[str, int] = field(default_factory=dict)
    reader_faults: int = 0
    polls: int = 0
    registry: DeckRegistry | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        out = super().to_dict()
        out["passes"] = dict(self.passes)
        out["reader_faults"] = self.reader_faults
        return out


def check_deck_with_reader(reader: TagReader, registry: DeckRegistry, deck: str | None = None, *,
                           quiet_s: float = 3.0, start_timeout_s: float = 60.0,
                           max_s: float = 600.0, stop: Callable[[], bool] | None = None,
                           prompt: Prompt = print, profile=None,
                           clock: Callable[[], float] = time.monotonic,
                           sleep: Callable[[float], None] = time.sleep, poll_s: float = 0.02,
                           retry_s: float = 0.5, settle_s: float = 0.0, dropout_s: float = 0.5,
                           zones: Iterable[str] | None = None,
                           reopen: Callable[[], TagReader] | None = None) -> ReaderDeckReport:
    """Collect the tags of a deck passed over *reader* and judge them against *registry*.

    Every appearance of a tag is one pass (see the module docstring); a tag seen
    in two separate appearances is reported as a duplicate, which means either
    a cloned tag or the same card passed twice (:func:`format_report` says so).

    The check ends when no new tag has appeared for *quiet_s* after the first
    one, when *stop* returns true, when no tag at all appeared within
    *start_timeout_s*, or after *max_s* in all. ``KeyboardInterrupt`` ends it
    too and is re-raised (no report). *deck* defaults to the active deck.
    """
    deck = deck or registry.active
    if deck is None or not registry.has_deck(deck):
        raise RegistryError(f"deck {deck!r} is not in the registry (decks: {', '.join(registry.decks) or 'none'})")
    for name, value in (("quiet_s", quiet_s), ("start_timeout_s", start_timeout_s), ("max_s", max_s)):
        if not value > 0:
            raise ValueError(f"{name} must be > 0 seconds, not {value!r}")
    watcher = _Watcher(reader, prompt=prompt, clock=clock, sleep=sleep, poll_s=poll_s, retry_s=retry_s,
                       settle_s=settle_s, dropout_s=dropout_s, zones=zones, reopen=reopen)
    order: list[str] = []
    passes: dict[str, int] = {}
    prompt(f"pass the cards of deck {deck} over reader {reader.name!r}, one by one; "
           f"the check ends {quiet_s:g} s after the last card")
    start = last_new = clock()
    while not (stop is not None and stop()):
        now = clock()
        if _check_over(now - start, now - last_new, bool(order), prompt, quiet_s=quiet_s,
                       start_timeout_s=start_timeout_s, max_s=max_s):
            break
        appeared = watcher.poll()
        if appeared:
            for uid in appeared:
                order.append(uid)
                passes[uid] = passes.get(uid, 0) + 1
            last_new = clock()
            prompt(f"{len(order)} tags read")
        watcher.wait()
    base = check_deck(order, registry, deck, profile)
    report = ReaderDeckReport(**{f: getattr(base, f) for f in DeckReport.__dataclass_fields__})
    report.passes = passes
    report.reader_faults = watcher.faults
    report.polls = watcher.polls
    report.registry = registry
    return report


def _check_over(elapsed: float, quiet: float, seen: bool, prompt: Prompt, *, quiet_s: float,
                start_timeout_s: float, max_s: float) -> bool:
    """True when the deck check ends: quiet after the cards, no card at all, or too long (said)."""
    if not seen and elapsed > start_timeout_s:
        prompt(f"no card seen in {start_timeout_s:g} s")
        return True
    if seen and quiet > quiet_s:
        return True
    if elapsed > max_s:
        prompt(f"the check stopped after {max_s:g} s")
        return True
    return False


def deck_registered_fields(registry: DeckRegistry, deck: str) -> dict:
    """The ``deck_registered`` event of *deck* as *registry* holds it (CONTRACT.md, "The
    registries"): its back and every tag, for the floor's room registry."""
    return {"deck": deck, "back": registry.backs.get(deck, ""),
            "tags": {uid: tag.card for uid, tag in sorted(registry.cards_of(deck).items())}}


def deck_checked_fields(report: DeckReport) -> dict:
    """The ``deck_checked`` event of *report*: the cards missing, the damaged tags (a tag no
    registry knows, as a card's replaced or broken tag reads; and the tags of a card that
    answered under two tags, a cloned or re-tagged card) and whether the deck may deal."""
    damaged = [uid for uid in report.unknown if _is_uid(uid)]
    for card in report.duplicates:
        damaged += [uid for uid in report.cards.get(card, ()) if uid not in damaged]
    return {"deck": report.deck, "missing": list(report.missing), "damaged": damaged, "ok": report.fit_for_play}


def _is_uid(text: str) -> bool:
    try:
        normalize_uid(text)
    except RegistryError:
        return False
    return True


def exit_status(report: DeckReport) -> int:
    """The command's exit code: 0 when the deck is fit for play, 1 when it is not."""
    return 0 if report.fit_for_play else 1


def format_report(report: DeckReport, registry: DeckRegistry | None = None) -> str:
    """The report as text a technician reads: each finding on its own line, the verdict last."""
    registry = registry or getattr(report, "registry", None)
    passes = getattr(report, "passes", {})
    lines = [f"Deck check of deck {report.deck}: {report.seen} tag reads, "
             f"{len(report.cards)} of 52 cards seen"]
    if report.missing:
        lines.append(f"  MISSING ({len(report.missing)}): {' '.join(report.missing)}")
    for card in report.duplicates:
        uids = report.cards.get(card, [])
        if len(uids) > 1:
            lines.append(f"  DUPLICATE {card}: {len(uids)} different tags are registered as {card} "
                         f"({', '.join(uids)}): the deck has an extra {card}")
        else:
            twice = [u for u, n in passes.items() if n > 1 and _card_of(registry, u) == card]
            which = f" (tag {', '.join(twice)})" if twice else ""
            lines.append(f"  DUPLICATE {card}: one tag read in two passes{which}: either a cloned tag "
                         f"or the same card passed twice; pass the deck again, each card once")
    for other, card in report.foreign:
        label = _tag_label(registry, other, card) if registry is not None else f"{card} of deck {other}"
        lines.append(f"  FOREIGN {label}: another back; take it out")
    if report.jokers:
        lines.append(f"  JOKERS ({len(report.jokers)}): {', '.join(report.jokers)}; "
                     "take them out before play")
    for uid in report.unknown:
        lines.append(f"  UNKNOWN tag {uid}: in no registered deck; take it out")
    faults = getattr(report, "reader_faults", 0)
    if faults:
        lines.append(f"  READER: {faults} reader faults; cards passed meanwhile were not seen, "
                     "pass the deck again")
    for d in report.decisions:
        lines.append(f"  rule {d.irregularity}: {d.rule}")
    lines.append("FIT FOR PLAY" if report.fit_for_play else "NOT FIT FOR PLAY")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# A rehearsal without hardware


class RehearsalHand:
    """A simulated technician's hand at an emulated reader's antenna.

    *table* is a :class:`hardware_sim.table.SimulatedTable` whose emulators serve
    *zone* (it has ``place`` and ``lift`` by zone and UID); the tags the hand lays
    down are read by the real driver through the chip emulator, as a card laid
    on the pad would be. *pace_s* is how long the hand takes to reach for the
    next card. The cards are tags of :func:`~dealerbox.domain.decks.simulated_uid`
    (a new deck) or a registry's tags (a deck check). :meth:`close` lifts
    whatever still lies on the antenna.
    """

    def __init__(self, table, zone: str, *, pace_s: float = 0.25, sleep: Callable[[float], None] = time.sleep):
        if not pace_s >= 0:
            raise ValueError(f"pace_s must be >= 0 seconds, not {pace_s!r}")
        self.table, self.zone, self.pace_s, self._sleep = table, zone, float(pace_s), sleep
        self.lying: str | None = None
        #: Every tag the hand laid down, in order.
        self.shown: list[str] = []

    def show(self, uid: str) -> None:
        """Lift the card lying on the antenna, reach for the next one and lay *uid* down."""
        self.lift()
        self._sleep(self.pace_s)
        self.table.place(zone=self.zone, uid=uid)
        self.lying = uid
        self.shown.append(uid)

    def lift(self) -> None:
        """Take the card lying on the antenna away (if one does)."""
        if self.lying is not None:
            self.table.lift(zone=self.zone, uid=self.lying)
            self.lying = None

    def registering(self, deck: str, order: tuple[str, ...] = REGISTRATION_ORDER) -> Callable[[int], None]:
        """The ``on_ask`` of :func:`register_deck`: show the new deck's tag of the card asked for.

        A card asked for again was refused: as the technician is told, the hand
        puts it aside and shows another card of that rank and suit (another tag).
        """
        asked: dict[int, int] = {}

        def on_ask(index: int) -> None:
            card = order[index]
            again = asked.get(index, 0)
            asked[index] = again + 1
            # Copies 0..n-1 are the deck's own (two jokers: two copies); a card shown
            # again after a refusal takes the copies past them.
            self.show(simulated_uid(deck, card, again * order.count(card) + order[:index].count(card)))
        return on_ask

    def passing(self, uids: Iterable[str], *, hold_polls: int = 3) -> Callable[[float], None]:
        """The ``sleep`` of :func:`check_deck_with_reader`: between polls, pass *uids* over the antenna.

        Each tag lies there for *hold_polls* polls, then the hand takes it away and
        lays the next one down; after the last one the antenna stays empty, and the
        check ends when it has been quiet long enough. Counting polls, not seconds,
        keeps every card seen however slowly the machine runs.
        """
        if hold_polls < 1:
            raise ValueError(f"hold_polls must be at least 1, not {hold_polls!r}")
        queue = list(uids)
        polls = 0

        def sleep(seconds: float) -> None:
            nonlocal polls
            polls += 1
            if self.lying is None or polls >= hold_polls:
                # Before the wait, so a tag laid down has a whole poll period to power up.
                polls = 0
                if queue:
                    self.show(queue.pop(0))
                else:
                    self.lift()
            self._sleep(seconds)
        return sleep

    def close(self) -> None:
        self.lift()


_MALFORMED = object()


def _lookup(registry: DeckRegistry, uid: str):
    """The registered tag behind *uid*, None if unregistered, _MALFORMED if not a UID."""
    try:
        return registry.lookup(uid)
    except RegistryError:
        return _MALFORMED


def _card_of(registry: DeckRegistry | None, uid: str) -> str:
    tag = _lookup(registry, uid) if registry is not None else None
    if tag is None or tag is _MALFORMED:
        return f"uid:{uid}"
    return tag.card
