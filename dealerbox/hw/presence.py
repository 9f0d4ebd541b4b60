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

- ``shoe_rearm = 0.5`` s: a card sliding out is in the field for at most ~0.1 s and
  may be missed by a few polls in between; a card lingering at the shoe's mouth
  drops out for ~0.1 s at worst. The same card cannot honestly come out of the shoe
  again within half a second (it would have to go back in), so 0.5 s is several
  times the longest gap within one draw and far below any real redraw.
- ``board_dropout = zone_dropout = 0.5`` s: 25-50 polls. A card lying still misses
  isolated polls or short bursts (a hand passing over the antenna, ~0.1-0.3 s);
  cards leave the board only at the end of a hand or in a correction, where half a
  second of latency is invisible to the dealer.
- ``settle = 0`` s: RC522 reads are CRC- and BCC-checked, so a single read is a real
  card; a settle time would only delay the engine. Raise it if an antenna sees
  cards passing over it (e.g. a pitch crossing the board).

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

from ..errors import RegistryError
from ..rules.events import ZONES, Event
from ..rules.registry import normalize_uid

log = logging.getLogger(__name__)

SHOE, BOARD = "shoe", "board"


@dataclass(slots=True)
class _Seen:
    first: float      # start of the current unbroken run of reads
    last: float       # latest read
    on: bool = False  # an *_on event has been emitted


class PresenceTracker:
    """Turns ``{zone: UIDs}`` polls into events. Windows are in seconds (config values)."""

    def __init__(self, *, shoe_rearm: float = 0.5, board_dropout: float = 0.5,
                 zone_dropout: float = 0.5, settle: float = 0.0):
        for key, value in (("shoe_rearm", shoe_rearm), ("board_dropout", board_dropout),
                           ("zone_dropout", zone_dropout), ("settle", settle)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{key} must be a non-negative number of seconds, not {value!r}")
        self.shoe_rearm = float(shoe_rearm)
        self.board_dropout = float(board_dropout)
        self.zone_dropout = float(zone_dropout)
        self.settle = float(settle)
        self.counters: Counter = Counter()
        self._shoe: dict[str, float] = {}                  # uid -> last read
        self._zones: dict[str, dict[str, _Seen]] = {}      # zone -> uid -> state
        self._last_t: float | None = None
        self._warned_zones: set[str] = set()

    def present(self, zone: str) -> frozenset[str]:
        """UIDs currently *on* in *zone* (for ``shoe``: UIDs within their draw window)."""
        if zone == SHOE:
            return frozenset(self._shoe)
        return frozenset(u for u, s in self._zones.get(zone, {}).items() if s.on)

    def update(self, t: float, seen: Mapping[str, Iterable]) -> list[Event]:
        """Feed one poll taken at time *t*; return the events it causes, in order.

        Every ``*_off`` comes before every ``*_on``/``shoe`` of the same poll (a card
        moving from the board to the muck leaves before it arrives); within a kind,
        zones come in the mapping's order and UIDs sorted.
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
            clean = sorted({self._clean(u) for u in (uids or ())})
            if zone == SHOE:
                ons.extend(self._update_shoe(t, clean))
            else:
                self._update_zone(t, zone, clean, offs, ons)
        return offs + ons

    # -- internals -------------------------------------------------------------------
    def _clean(self, uid) -> str:
        try:
            return normalize_uid(uid)
        except RegistryError:
            self.counters["odd_uid"] += 1
            if isinstance(uid, (bytes, bytearray)):
                return bytes(uid).hex().upper()
            return str(uid).strip().upper()

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
