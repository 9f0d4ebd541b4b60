"""The readers' threads: polls on a fixed grid, turned into events by presence tracking."""

from __future__ import annotations

import logging
import threading
import time

from dealerbox.domain.events import Event
from dealerbox.hw.presence import BadgeReads
from dealerbox.hw.reader import PollSchedule
from dealerbox.service.kinds import supervise

log = logging.getLogger("dealerbox")


class ReaderPolling:
    """Owns one thread per reader and what it keeps: the polling itself.

    Each thread polls its reader on the reader's fixed grid
    (:class:`~dealerbox.hw.reader.PollSchedule`) through a
    :class:`~dealerbox.hw.reader.ReaderSupervisor`, which owns faults and
    reopening; its ``reader_fault``/``reader_ok`` reports become events. Good
    polls lose the dealers' badges first (a badge is never a card; one held to
    the shoe goes to *badge_sink*), then go through the reader's presence
    tracker, which pairs the shoe's reads with the mouth sensor's counts (a card
    that left the stub unread).
    It counts polls, events, faults, restarts and skipped slots per reader in
    ``stats.per_reader`` and keeps each open reader object in :attr:`readers`.
    """

    def __init__(self, stats, *, clock=time.monotonic):
        self.stats = stats
        # The daemon's clock, as for event times: a fault's backoff is measured in the time the
        # events carry (a simulated table's virtual clock included).
        self.clock = clock
        #: Each reader that is open now, by name.
        self.readers: dict = {}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.badge_sink = None
        #: Badge UID -> dealer id when the room's registry decides (a revoked badge: an empty id);
        #: None: the config's badge registry. Replaced whole, never changed in place.
        self.badge_map: dict[str, str] | None = None

    def start(self, config, devices, *, sink, now, badge_sink=None) -> None:
        """Start a thread per reader of *config*, on *devices*' buses; events go to *sink*, timed by *now*,
        and each badge held to the shoe to ``badge_sink(t, dealer)``."""
        self._stop.clear()
        self.badge_sink = badge_sink
        for name in config.readers:
            t = threading.Thread(target=self._loop, args=(config, name, devices, sink, now),
                                 name=f"reader-{name}", daemon=True)
            self._threads.append(t)
            t.start()

    def stop(self) -> None:
        """Stop every reader thread and wait for it; each closes its reader. Safe twice."""
        self._stop.set()
        for t in self._threads:
            t.join(timeout=5)
        self._threads = []

    def _loop(self, config, name: str, devices, sink, now) -> None:
        """Poll one reader on its fixed grid until told to stop."""
        polled = _PolledReader(self, config, name, devices, sink, now)
        schedule = PollSchedule(config.readers[name].poll_s, time.monotonic())
        try:
            while not self._stop.is_set():
                try:
                    polled.poll_once()
                except Exception:
                    # Not the reader's fault (its supervisor catches those): keep the thread alive.
                    log.exception("reader thread %s: an error outside the reader", name)
                self._stop.wait(schedule.next_wait(time.monotonic()))
                polled.counts["skipped_slots"] = schedule.skipped
        finally:
            polled.supervisor.close()
            self.readers.pop(name, None)


class _PolledReader:
    """One reader as its thread sees it: its supervisor, its presence tracker
    (with the mouth sensor when it reads the shoe) and its counts."""

    def __init__(self, polling: ReaderPolling, config, name: str, devices, sink, now):
        rc = config.readers[name]
        self.polling, self.name, self.sink, self.now = polling, name, sink, now
        self.counts = polling.stats.per_reader.setdefault(
            name, {"polls": 0, "events": 0, "faults": 0, "restarts": 0, "skipped_slots": 0})
        ms = config.mouth_sensor
        self.mouth = devices.mouth if ms.pin is not None and "shoe" in rc.zones else None
        self.tracker = config.presence.tracker(mouth_window=ms.read_window_s if self.mouth is not None else None,
                                               max_tags=getattr(rc.options, "max_tags", None))
        self._badge_map = polling.badge_map
        self.badges = BadgeReads(self._badge_map if self._badge_map is not None else config.badge_registry.by_uid(),
                                 rearm=config.presence.shoe_rearm_s)
        self.badge_sink = polling.badge_sink
        self.supervisor = supervise(rc, devices.buses_of(rc.backend, f"readers.{name}.backend"),
                                    clock=polling.clock)

    def poll_once(self) -> None:
        """One poll: the supervisor's reports, then the tracker's events, to the sink."""
        supervisor, counts, stats = self.supervisor, self.counts, self.polling.stats
        restarts = supervisor.restarts
        polled, reports = supervisor.poll()
        if supervisor.reader is not None:
            self.polling.readers[self.name] = supervisor.reader
        else:
            self.polling.readers.pop(self.name, None)
        stats.reader_restarts += supervisor.restarts - restarts
        counts["restarts"] = supervisor.restarts
        t = self.now()
        for kind in reports:
            if kind == "reader_fault":
                counts["faults"] += 1
                stats.reader_faults += 1
            self.sink(Event(t, kind, reader=self.name))
        if polled is not None:
            counts["polls"] += 1
            counts["last_ok"] = time.monotonic()
            if self.polling.badge_map is not self._badge_map and self.polling.badge_map is not None:
                self._badge_map = self.polling.badge_map      # a new room registry applied
                self.badges.badges = dict(self._badge_map)
            polled, held = self.badges.split(t, polled)
            for _uid, dealer in held:
                counts["badges"] = counts.get("badges", 0) + 1
                if self.badge_sink is not None:
                    self.badge_sink(t, dealer)
            if self.mouth is not None:
                for count_t in self.mouth.take():
                    self.tracker.count(count_t)
            for e in self.tracker.update(t, polled):
                counts["events"] += 1
                self.sink(e)
