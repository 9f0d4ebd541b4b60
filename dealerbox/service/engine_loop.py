"""The one thread that takes every event in order: journal, engine, output."""

from __future__ import annotations

import logging
import queue

from dealerbox.domain.decisions import Step
from dealerbox.domain.events import Event
from dealerbox.rules.book import NOT_PLAYING
from dealerbox.service.registry_outbox import Delivery
from dealerbox.service.room_registry import REVOKED_BADGE
from dealerbox.service.sources import RegistryOffer

log = logging.getLogger("dealerbox")

_STOP = object()
_STORAGE = object()   # the journal's writer changed state: refresh the panel and STATUS=


class EngineLoop:
    """Owns the box's event queue and the thread that empties it (:meth:`run`).

    Each event, one at a time and in the order queued, is handed to the
    journal's writer, fed to the engine, and its decisions given to the
    :class:`~dealerbox.service.output.DecisionOutput`. The loop keeps event
    time from going back (live sources only: an input carries its own time),
    redraws when the journal starts or stops failing, and pets the watchdog
    after every item and whenever it has waited a petting interval for one
    (an input that ran dry sends nothing), so only a hung loop stops petting it.

    :param live: True when events come from the devices and the tick thread;
        False for an input of recorded events.
    """

    def __init__(self, engine, journal, output, health, *, live: bool):
        self.queue: queue.Queue = queue.Queue()
        self.engine = engine
        self.journal = journal
        self.output = output
        self.health = health
        self.stats = health.stats
        self.live = live
        #: The latest event time taken; a live event older than this is moved up to it.
        self.last_t = 0.0
        #: Turns badges held to the shoe (:class:`~dealerbox.service.sources.BadgeRead` items) into
        #: ``dealer`` events, in the engine's order; None: the box reads no badges.
        self.sign_in = None
        #: The table's copy of the room's registry
        #: (:class:`~dealerbox.service.room_registry.RoomRegistry`); None: no floor.
        self.room = None
        #: Called with the merged badge map once a new room registry applies (the readers' threads).
        self.on_badges = None
        #: Called once a new room registry applies (health says so soon).
        self.on_registry_applied = None
        #: A room registry received during a hand, applied once it is over (:class:`RegistryOffer`).
        self.registry_waiting = None
        #: The journal line of the last event handed to the journal's writer.
        self.last_seq: int | None = None

    def stop(self) -> None:
        """Make :meth:`run` return once it has taken everything queued before."""
        self.queue.put(_STOP)

    def storage_changed(self, fault: str | None) -> None:
        """Called by the journal's writer thread: the loop redraws."""
        self.queue.put(_STORAGE)

    def run(self) -> None:
        """Take items until :meth:`stop`; any single one that fails is logged and the loop goes on."""
        idle_s = self.health.notifier.watchdog_interval
        if idle_s is not None:
            idle_s = min(idle_s, 1.0)     # BoxHealth.pet_watchdog's own pace
        while True:
            try:
                item = self.queue.get(timeout=idle_s)
            except queue.Empty:
                # Nothing to take (no ticks with --input): the loop is alive all the same.
                self.health.pet_watchdog()
                continue
            if item is _STOP:
                return
            try:
                if item is _STORAGE:
                    self._storage_refresh()
                else:
                    self._handle(item)
            except Exception:
                # The loop must survive any single event; the watchdog catches a hang.
                log.exception("event %s could not be handled", item)
            self.health.pet_watchdog()

    def _handle(self, event) -> None:
        if isinstance(event, Delivery):            # a technician's command registered a deck or badge
            try:
                self.last_seq = None
                event.event.t = max(event.event.t, self.last_t)   # an input's own times included
                self._handle(event.event)
                event.seq = self.last_seq
            finally:
                event.done.set()
            return
        if isinstance(event, RegistryOffer):       # the floor sent a new room registry
            self.registry_waiting = event.received
            self._apply_registry(self.last_t)
            return
        if not isinstance(event, Event) and event.dealer == REVOKED_BADGE:
            # Signs nobody in, anywhere; the dealer reads why on one line, and nothing is raised.
            log.info("a revoked badge was held to the shoe: it signs nobody in")
            self.output.say(Step("dealer.badge_revoked"))
            return
        if not isinstance(event, Event):          # a badge held to the shoe
            for dealer_event in self.sign_in.read(event) if self.sign_in is not None else ():
                self._handle(dealer_event)
            return
        if self.live and event.t < self.last_t:
            event.t = self.last_t
        if event.ev == "tick" and not self.engine.has_deadline:
            # A tick judges nothing unless a grace period is running: not worth a journal line.
            return
        if event.ev == "new_hand" and self.sign_in is not None:
            for dealer_event in self.sign_in.due(event.t, new_hand=True):   # the new hand is the new dealer's
                self._handle(dealer_event)
        if event.ev == "new_hand":
            self._apply_registry(event.t, new_hand=True)   # the new hand is judged with the new registry
        # Queued, not written: the writer thread commits it (one fsync for all
        # queued meanwhile) while the engine judges and the panel shows.
        seq = self.last_seq = self.journal.submit(event)
        self.last_t = max(self.last_t, event.t)
        self.stats.events += 1
        self.output.publish(self.engine.feed(event), seq, event)
        if self.journal.fault is not None or self.stats.storage_fault is not None:
            self.stats.take_storage(self.journal)
        if self.sign_in is not None:
            for dealer_event in self.sign_in.due(event.t):   # the hand is over: a badge held during it
                self._handle(dealer_event)
        self._apply_registry(event.t)

    def _apply_registry(self, t: float, *, new_hand: bool = False) -> None:
        """Hand the engine the room registry waiting, if no hand is in play (or a new one starts):
        never during a hand, whose cards are all judged with one registry."""
        got = self.registry_waiting
        if got is None or self.room is None or (self.engine.phase not in NOT_PLAYING and not new_hand):
            return
        self.registry_waiting = None
        self.room.apply(got)
        self.engine.use_registry(self.room.decks())
        if self.on_badges is not None:
            self.on_badges(self.room.badges())
        self._handle(Event(t, "registry_applied", **got.registry.summary()))
        if self.on_registry_applied is not None:
            self.on_registry_applied()

    def _storage_refresh(self) -> None:
        """The journal's writer started or stopped failing: the glass, the LED
        and STATUS= follow at once."""
        self.stats.take_storage(self.journal)
        self.output.show(self.engine.decision, refresh=True)
        self.health.report_status()
