"""Presence tracking: successive reader polls in, CONTRACT.md events out.

RFID presence is noisy both ways. A card lying still on an antenna drops out of some
polls (detuning by a hand or a neighbouring card, a collision round that ran out of
budget), and a card sliding out of the shoe is read in several consecutive polls.
:class:`PresenceTracker` debounces both without merging two real cards: UIDs are
tracked one by one, so two different cards are always two events, however close.

It has no clock and no I/O: each poll comes with its time ``t`` (seconds, as events
carry it), which keeps it replayable and testable without sleeping.

Zones and events:

- ``shoe`` -> ``shoe``. A UID's first read is the draw. It stays the same draw while
  it keeps being read with gaps no longer than *shoe_rearm*; read again after a
  longer absence it is a new draw (a card really drawn twice, e.g. after a
  reshuffle).
- ``board`` -> ``board_on`` / ``board_off``; any other zone -> ``zone_on`` /
  ``zone_off`` with ``zone`` set to the zone's name. A UID is *on* once it has been
  seen for *settle* seconds without a gap longer than the dropout window (with the
  default settle of 0: at its first read), and *off* once it has not been seen for
  longer than the dropout window (*board_dropout* or *zone_dropout*).

Defaults, for polls every 10-20 ms and a card that passes through a field in
30-100 ms:

- ``shoe_rearm = 1.2`` s (:data:`SHOE_REARM_S`), without a mouth sensor: a card sliding
  out is in the field for at most ~0.1 s and may be missed by a few polls in between;
  a card lingering at the mouth is read again up to ~1.2 s after its draw, which a
  shorter window turns into a false ``DUPLICATE_CARD`` (the window runs from the last
  read, so 1.0 s let the latest lingers through). A tag drawn again within the window
  (a clone, or a card a correction sent back and drawn at once) is not seen: the noise
  benchmark found 1.2 s loses no more of those than 0.5 s (docs/NOISE.md).
- ``board_dropout = zone_dropout = 0.5`` s: 25-50 polls. A card lying still misses
  isolated polls or short bursts (a hand passing over the antenna, ~0.1-0.3 s);
  cards leave the board only at the end of a hand or in a correction, where half a
  second of latency is invisible to the dealer.
- ``settle = 0.3`` s (:data:`SETTLE_S`): cards that only pass over an antenna (a
  burn on its way to the muck, 30-150 ms; a hole card pitched across; folded cards
  swept over the board, 100-300 ms) must never become board cards: a seat's card on
  the board calls the floor. 0.3 s is the shortest settle time for which the noise
  benchmark's pass-by kinds raise nothing; it delays each ``board_on`` by about as
  much (docs/NOISE.md).
- With a mouth sensor (*mouth_window*, e.g. 0.15 s) the shoe needs no rearm window:
  every count of a card leaving the stub becomes one ``shoe`` event, named by the
  new tag read within the window, or by a tag drawn before and read again (the card
  drawn again after a correction, or a clone), or ``unread``. A tag read again with
  no count is a card lingering at the mouth: no event; so is a new tag read with no
  count within *shoe_rearm* of a count reported ``unread`` (that card, read late at the
  mouth). Events keep the counts' order, so an unread card keeps its place. Without one, ``shoe_rearm`` stays a
  trade-off between a lingering card (a false ``DUPLICATE_CARD``) and the same tag
  drawn again soon (missed); docs/NOISE.md measures it.
- *max_tags*: a board or zone poll holding as many tags as the reader reports at
  most (folded cards swept across a full board) may have left known cards out, so
  it takes no card off.

Tags first read in one poll come in the order they came out of the shoe when the
reader can tell (a list in read order, or UID -> first-seen time); a set, from a
reader that cannot, falls back to UID order.

Zones missing from a poll's mapping were not looked at (see
:class:`dealerbox.hw.reader.TagReader`) and are not aged, so a reader fault does not
turn into a storm of ``board_off``. UIDs that are not 4/7/10-byte hex are passed
through as ``uid`` events, upper-cased, and counted: the engine decides what an
unknown tag means.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from dealerbox.errors import RegistryError
from dealerbox.domain.events import ZONES, Event
from dealerbox.domain.decks import normalize_uid

log = logging.getLogger(__name__)

SHOE, BOARD = "shoe", "board"

#: Default settle time for the board and the zones (docs/NOISE.md: the shortest that
#: removes the pass-by alarms of the noise benchmark).
SETTLE_S = 0.3
#: Default rearm window of the shoe without a mouth sensor (docs/NOISE.md: lingering cards
#: against a tag drawn again soon). A lingering card is read again up to 1.2 s after its
#: draw; the window runs from the draw's last read, 30-100 ms after it, so 1.2 s covers it.
SHOE_REARM_S = 1.2
_DRAWN_MEMORY = 4096      # tags remembered as drawn (mouth sensor); a few decks' worth
#: A card read again at the mouth this long after its draw is not lingering: it was drawn again.
_LINGER_S = 5.0


@dataclass(slots=True)
class _Seen:
    first: float      # start of the current unbroken run of reads
    last: float       # latest read
    on: bool = False  # an *_on event has been emitted


@dataclass(slots=True)
class _Count:
    """A card the mouth sensor counted, waiting for the tag read that names it."""

    t: float
    uid: str | None = None    # a tag first read with it: the card's name
    again: str | None = None  # a tag drawn before, read again with it (a redraw or a clone)
    read_first: bool = False  # made by a tag read before any count: waits the window for its count
    read_before: bool = False  # made that way (kept once its count came): reported as of the read


class PresenceTracker:
    """Turns ``{zone: UIDs}`` polls into events. Windows are in seconds (config values).

    :param mouth_window: the table has a mouth sensor (see :meth:`count`) and a tag
        read belongs to a count when the two are at most this far apart. None: no sensor.
    :param max_tags: the most tags the reader reports in one poll. A board or zone
        poll that holds this many may have left cards out, so it ages nobody.
    """

    def __init__(self, *, shoe_rearm: float = SHOE_REARM_S, board_dropout: float = 0.5,
                 zone_dropout: float = 0.5, settle: float = SETTLE_S, mouth_window: float | None = None,
                 max_tags: int | None = None):
        for key, value in (("shoe_rearm", shoe_rearm), ("board_dropout", board_dropout),
                           ("zone_dropout", zone_dropout), ("settle", settle),
                           ("mouth_window", 0.0 if mouth_window is None else mouth_window)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{key} must be a non-negative number of seconds, not {value!r}")
        if max_tags is not None and (isinstance(max_tags, bool) or not isinstance(max_tags, int) or max_tags < 1):
            raise ValueError(f"max_tags must be a whole number of tags, at least 1, not {max_tags!r}")
        self.shoe_rearm = float(shoe_rearm)
        self.board_dropout = float(board_dropout)
        self.zone_dropout = float(zone_dropout)
        self.settle = float(settle)
        self.mouth_window = None if mouth_window is None else float(mouth_window)
        self.max_tags = max_tags
        self.counters: Counter = Counter()
        self._shoe: dict[str, float] = {}                  # uid -> last read
        self._zones: dict[str, dict[str, _Seen]] = {}      # zone -> uid -> state
        self._last_t: float | None = None
        self._clean_uids: dict[str, str] = {}
        self._warned_zones: set[str] = set()
        # Mouth sensor: counts in time order until resolved, tags drawn so far, and
        # reads that came before their count (the count, when it comes, is theirs).
        self._counts: list[_Count] = []
        self._drawn: dict[str, float] = {}
        self._credits: list[float] = []
        self._rereads: list[tuple[float, str]] = []   # drawn tags read again with no count yet
        self._shoe_t = -math.inf                       # time of the latest shoe event (they never go back)
        self._unread_at: list[float] = []              # counts reported unread lately (their cards may be read late)

    @property
    def has_mouth_sensor(self) -> bool:
        return self.mouth_window is not None

    def present(self, zone: str) -> frozenset[str]:
        """UIDs currently *on* in *zone* (for ``shoe``: UIDs within their draw window)."""
        if zone == SHOE:
            return frozenset(self._shoe)
        return frozenset(u for u, s in self._zones.get(zone, {}).items() if s.on)

    def count(self, t: float) -> None:
        """The mouth sensor counted a card leaving the stub at time *t*.

        Every count becomes exactly one ``shoe`` event: with the UID of the new tag
        read within the window, else with a tag drawn before that was read again
        (a card drawn again, or a clone), else ``unread``. A tag read again with no
        count is the same card lingering at the mouth: no event.
        """
        if self.mouth_window is None:
            raise ValueError("this tracker has no mouth sensor (mouth_window is None)")
        self.counters["mouth_count"] += 1
        for i, read_t in enumerate(self._credits):
            if abs(t - read_t) <= self.mouth_window:
                del self._credits[i]      # the tag was read first; this is its count
                for c in self._counts:
                    if c.read_first and c.t == read_t:
                        c.read_first = False
                        break
                return
        again = None
        for i, (read_t, uid) in enumerate(self._rereads):
            if abs(t - read_t) <= self.mouth_window and not self._claimed(uid):
                again = uid
                del self._rereads[i]
                break
        self._counts.append(_Count(t, again=again))

    def _claimed(self, uid: str) -> bool:
        """*uid* already names a count still waiting (one read run is one card)."""
        return any(c.uid == uid or c.again == uid for c in self._counts)

    def update(self, t: float, seen: Mapping[str, Iterable]) -> list[Event]:
        """Feed one poll taken at time *t*; return the events it causes, in order.

        Every ``*_off`` comes before every ``*_on``/``shoe`` of the same poll (a card
        moving from the board to the muck leaves before it arrives); within a kind,
        zones come in the mapping's order. Tags first read in one poll come in the
        order they were seen: by time when a zone's value maps UID -> first-seen
        time, in the given order for a list or tuple, and by UID for a set (a reader
        that cannot tell).
        """
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
            self.counters["bad_time"] += 1
            log.warning("presence: poll with time %r ignored", t)
            return []
        if self._last_t is not None and t < self._last_t:
            self.counters["time_went_back"] += 1
            log.warning("presence: poll time went back from %s to %s; using %s", self._last_t, t, self._last_t)
            t = self._last_t
        self._last_t = t
        offs: list[Event] = []
        ons: list[Event] = []
        for zone, uids in seen.items():
            if not isinstance(zone, str) or not zone:
                self.counters["bad_zone"] += 1
                log.warning("presence: poll for zone %r ignored", zone)
                continue
            clean = self._in_order(uids)
            if zone == SHOE:
                ons.extend(self._update_mouth(t, clean) if self.mouth_window is not None
                           else self._update_shoe(t, clean))
            else:
                self._update_zone(t, zone, clean, offs, ons)
        return offs + ons

    # -- internals -------------------------------------------------------------------
    def _clean(self, uid) -> str:
        if isinstance(uid, str) and uid in self._clean_uids:
            return self._clean_uids[uid]
        try:
            clean = normalize_uid(uid)
            if isinstance(uid, str) and len(self._clean_uids) < _DRAWN_MEMORY:
                self._clean_uids[uid] = clean
            return clean
        except RegistryError:
            self.counters["odd_uid"] += 1
            if isinstance(uid, (bytes, bytearray)):
                return bytes(uid).hex().upper()
            return str(uid).strip().upper()

    def _in_order(self, uids) -> list[str]:
        """The poll's UIDs, cleaned, each once, in the order they were first seen."""
        if not uids:
            return []
        if isinstance(uids, Mapping):
            ordered = [u for u, _ in sorted(uids.items(), key=lambda kv: (kv[1], str(kv[0])))]
        elif isinstance(uids, (list, tuple)):
            ordered = list(uids)
        else:
            ordered = sorted(uids, key=str)
        return list(dict.fromkeys(self._clean(u) for u in ordered))

    def _update_mouth(self, t: float, uids: list[str]) -> list[Event]:
        for uid in uids:
            self._mouth_read(t, uid)
        events = self._resolve_counts(t)
        self._forget_mouth(t)
        return events

    def _mouth_read(self, t: float, uid: str) -> None:
        """Pair one tag read with the count it belongs to, or remember it for one to come."""
        window = self.mouth_window
        last = self._shoe.get(uid)
        self._shoe[uid] = t
        if last is not None and t - last <= window:
            return                                # the same read run
        pending = [c for c in self._counts if c.uid is None and abs(t - c.t) <= window]
        # A tag is read within a poll or two of its beam break: prefer the counts
        # of the last third of the window, so a card after an unread one does not
        # take the unread one's count (and its place).
        pending = [c for c in pending if c.t >= t - window / 3] or pending
        drawn = self._drawn.get(uid)
        if drawn is None or t - drawn > _LINGER_S:
            # Never drawn, or so long ago that it cannot be lingering at the mouth.
            self._drawn[uid] = t
            if pending:
                # A count that a tag drawn before was read with may still be that
                # card's (drawn again): a new tag takes a free count first.
                target = next((c for c in pending if c.again is None), pending[0])
                target.uid = uid
                if target.again is not None:
                    later = next((c for c in pending if c is not target and c.again is None), None)
                    if later is not None:
                        later.again = target.again
            else:
                # Read before its count came, or a count the sensor missed: the
                # tag is proof enough of a card. Queue it behind older counts.
                self.counters["read_before_count"] += 1
                self._counts.append(_Count(t, uid=uid, read_first=True, read_before=True))
                self._credits.append(t)
        elif pending and not self._claimed(uid):
            free = next((c for c in pending if c.again is None), None)
            if free is not None:
                free.again = uid
        else:
            # Lingering, unless a count comes within the window (it then was drawn again).
            self.counters["lingering"] += 1
            self._rereads.append((t, uid))

    def _resolve_counts(self, t: float) -> list[Event]:
        """The counts whose window has closed, oldest first, as ``shoe`` events."""
        window = self.mouth_window
        events = []
        while self._counts:
            head = self._counts[0]
            if (head.uid is None or head.read_first) and t - head.t <= window:
                break                                 # its read (or its count) may still come
            self._counts.pop(0)
            if head.read_first and self._unread_at and head.t - self._unread_at[-1] <= self.shoe_rearm:
                # No count came for this tag, and a card counted unread left just before: it is
                # that card, lingering at the mouth and read late. It was reported (unread) already.
                self._unread_at.pop()
                self.counters["unread_read_late"] += 1
                continue
            uid = head.uid or head.again
            if uid is None:
                events.append(Event(t, "shoe", unread=True))
                self._shoe_t = t
                self._unread_at = [u for u in self._unread_at if head.t - u <= self.shoe_rearm] + [head.t]
                self.counters["shoe_unread"] += 1
            else:
                # A tag read before its count is reported as of its read (it waited for the count).
                at = max(head.t, self._shoe_t) if head.read_before else t
                events.append(Event(at, "shoe", uid=uid))
                self._shoe_t = at
                self.counters["shoe"] += 1
                self.counters["shoe_again"] += head.uid is None
        return events

    def _forget_mouth(self, t: float) -> None:
        """Drop reads and draws too old to pair with anything, so memory stays bounded."""
        window = self.mouth_window
        self._credits = [c for c in self._credits if t - c <= window]
        self._rereads = [r for r in self._rereads if t - r[0] <= window]
        for uid in [u for u, last in self._shoe.items() if t - last > window]:
            del self._shoe[uid]
        if len(self._drawn) > _DRAWN_MEMORY:
            for uid in sorted(self._drawn, key=self._drawn.get)[:len(self._drawn) - _DRAWN_MEMORY]:
                del self._drawn[uid]

    def _update_shoe(self, t: float, uids: list[str]) -> list[Event]:
        events = []
        for uid in uids:
            last = self._shoe.get(uid)
            if last is None or t - last > self.shoe_rearm:
                events.append(Event(t, "shoe", uid=uid))
                self.counters["shoe"] += 1
            self._shoe[uid] = t
        # Forget draws whose window has passed, so memory stays bounded.
        for uid in [u for u, last in self._shoe.items() if t - last > self.shoe_rearm]:
            del self._shoe[uid]
        return events

    def _update_zone(self, t: float, zone: str, uids: list[str], offs: list, ons: list) -> None:
        if zone == BOARD:
            on_kind, off_kind, extra, window = "board_on", "board_off", None, self.board_dropout
        else:
            on_kind, off_kind, extra, window = "zone_on", "zone_off", zone, self.zone_dropout
            if zone not in ZONES and zone not in self._warned_zones:
                self._warned_zones.add(zone)
                log.warning("presence: zone %r is not a CONTRACT.md zone; its events will not replay", zone)
        table = self._zones.setdefault(zone, {})
        present = set(uids)
        if self.max_tags is not None and len(present) >= self.max_tags:
            # The reader stopped at its limit: an unseen card may be lying there still.
            self.counters[f"{zone}_full"] += 1
            present = set(table) | present
            for uid in set(table) - set(uids):
                table[uid].last = t if table[uid].on else table[uid].last
        for uid in sorted(set(table) - present):
            state = table[uid]
            if t - state.last > window:
                del table[uid]
                if state.on:
                    offs.append(Event(t, off_kind, uid=uid, zone=extra))
                    self.counters[off_kind] += 1
        for uid in uids:
            state = table.get(uid)
            if state is None or (not state.on and t - state.last > window):
                # New, or a pending (not yet settled) run that was broken: start over.
                state = table[uid] = _Seen(first=t, last=t)
            state.last = t
            if not state.on and t - state.first >= self.settle:
                state.on = True
                ons.append(Event(t, on_kind, uid=uid, zone=extra))
                self.counters[on_kind] += 1


class BadgeReads:
    """Takes the dealers' badges out of a reader's polls, before presence tracking sees them.

    A badge is never a card: on any antenna it is dropped from the poll, so it can
    raise nothing (no unknown tag, no duplicate, no board card). Held to the shoe's
    antenna it is a sign-in: :meth:`split` returns it once per holding. A badge
    read again within *rearm* seconds of its last read is the same holding (a
    badge lingering in the field, or held still while the reader re-reads it),
    the rule the shoe uses for a card lingering at the mouth.

    :param badges: normalised UID -> dealer id (``BadgeRegistry.by_uid()``).
    """

    def __init__(self, badges: Mapping[str, str], *, rearm: float = SHOE_REARM_S):
        self.badges = dict(badges)
        self.rearm = float(rearm)
        self.counters: Counter = Counter()
        self._last: dict[str, float] = {}       # badge UID -> its latest read at the shoe
        self._clean: dict = {}                  # raw UID -> normalised (None: not a UID)

    def _dealer(self, uid) -> str | None:
        if isinstance(uid, str) and uid in self._clean:
            clean = self._clean[uid]
        else:
            try:
                clean = normalize_uid(uid)
            except RegistryError:
                clean = None
            if isinstance(uid, str) and len(self._clean) < _DRAWN_MEMORY:
                self._clean[uid] = clean
        return None if clean is None else self.badges.get(clean)

    def split(self, t: float, seen: Mapping[str, Iterable]) -> tuple[Mapping[str, Iterable], list[tuple[str, str]]]:
        """(*seen* without the badges, ``(UID, dealer)`` of each badge newly held to the shoe).

        Each zone's value keeps its kind (a mapping, a list or tuple, a set), so
        the order the reader saw the cards in is kept.
        """
        if not self.badges or not any(seen.values()):
            return seen, []
        held: list[tuple[str, str]] = []
        out: dict = {}
        for zone, uids in seen.items():
            found = [u for u in (uids or ()) if self._dealer(u) is not None]
            if not found:
                out[zone] = uids
                continue
            if isinstance(uids, Mapping):
                out[zone] = {u: v for u, v in uids.items() if u not in found}
            elif isinstance(uids, (list, tuple)):
                out[zone] = type(uids)(u for u in uids if u not in found)
            else:
                out[zone] = frozenset(u for u in uids if u not in found)
            for uid in found:
                if zone != SHOE:
                    self.counters[f"badge_on_{zone}"] += 1
                    continue
                key = normalize_uid(uid)
                last = self._last.get(key)
                if last is None or t - last > self.rearm:
                    held.append((key, self.badges[key]))
                    self.counters["badge_held"] += 1
                self._last[key] = t
        for uid in [u for u, last in self._last.items() if t - last > self.rearm]:
            del self._last[uid]
        return out, held
