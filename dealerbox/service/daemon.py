"""The box as a service: readers, buttons and ticks in; journal, engine, panel out.

Threads and why:

- one thread per reader (:mod:`.polling`) polls it on a fixed period and
  turns polls into events (presence tracking); its
  :class:`~dealerbox.hw.reader.ReaderSupervisor` reports a reader that fails (``reader_fault``), reopens it with backoff and
  reports it back (``reader_ok``); a reader that crashes is logged and reopened;
- the panel's buttons arrive from gpiozero's callback thread;
- a tick thread sends ``tick`` about every 250 ms so judgments with a grace
  period settle (CONTRACT.md);
- the engine loop takes every event from one queue, hands it to the journal's
  writer, feeds the engine, and fans the decisions out (:mod:`.output`): LEDs
  first, then the LCD (its own thread, latest frame wins, so a slow LCD never
  delays detection), then the log on stdout;
- the journal's writer thread commits what was queued meanwhile with one
  write and one fsync, in the events' order, so the flash's fsync time is
  never between a card and the LED (docs/JOURNAL.md says why this loses no
  more than before). While the disk fails it holds the lines in memory and
  retries; the panel, ``STATUS=`` and the log say so.

On start the box replays the journal from the start of the open hand
(:mod:`.recovery`), so it comes back in exactly the state it had, and says so
on the LCD.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from pathlib import Path

from dealerbox.errors import DealerboxError
from dealerbox.rules.engine import HandEngine
from dealerbox.domain.events import Event, EventFile
from dealerbox.domain.messages import load_messages
from dealerbox.service.config import load_config
from dealerbox.service.devices import TableDevices
from dealerbox.service.engine_loop import EngineLoop
from dealerbox.service.health import BoxHealth
from dealerbox.service.kinds import open_reader
from dealerbox.service.output import DecisionOutput
from dealerbox.service.polling import ReaderPolling
from dealerbox.service.recovery import StartupRecovery
from dealerbox.service.sdnotify import Notifier
from dealerbox.service.registry_outbox import OutboxCourier, RegistryOutbox
from dealerbox.service.room_registry import RoomRegistry
from dealerbox.service.sources import BadgeRead, DealerSignIn, InputFeed, RegistryOffer
from dealerbox.service.uplink import Publisher

log = logging.getLogger("dealerbox")


class Daemon:
    """One table's box. ``start()`` then ``run()`` (blocking) or ``stop()``.

    It owns the life of the box: it puts the parts together, starts them in
    order, stops them in order, and reloads the config on SIGHUP; the event
    sources (ticks, an input, the devices) feed its :meth:`_put`. Each part
    owns one job: :class:`~dealerbox.service.engine_loop.EngineLoop` (the
    queue: journal, engine, output, one event at a time),
    :class:`~dealerbox.service.devices.TableDevices` (panel, LCD, mouth sensor),
    :class:`~dealerbox.service.polling.ReaderPolling` (the readers' threads),
    :class:`~dealerbox.service.output.DecisionOutput` (glass, LEDs, journal
    and log per decision), :class:`~dealerbox.service.health.BoxHealth`
    (counters, ``STATUS=``, watchdog, floor health),
    :class:`~dealerbox.service.recovery.StartupRecovery` (the open hand
    replayed) and :class:`~dealerbox.service.sources.InputFeed` (an input).

    :param config: a loaded :class:`dealerbox.service.config.TableConfig`.
    :param table: the :class:`hardware_sim.table.SimulatedTable` serving every
        device whose backend is ``sim`` (required when there is one: the
        simulator is never picked silently).
    :param input_events: events to feed as a source of their own (a recorded
        session replayed into a live box, or the crash test). Events with an
        ``id`` already in the journal are skipped. With it, no ticks are sent:
        the events carry their own time.
    :param on_decision: called with each decision dict (tests, the console).
    :param journal_options: more keyword arguments for the
        :class:`~dealerbox.service.journal.Journal` (``queue_lines``,
        ``retry_s``, ``keep_from_seq``), beside the config's ``[journal]``.
    """

    def __init__(self, config, *, table=None, input_events=None, input_pace_s: float = 0.0,
                 on_decision=None, notifier: Notifier | None = None, clock=time.monotonic,
                 journal_options: dict | None = None):
        self.config = config
        self.table = table
        self._clock = clock
        self.notifier = notifier if notifier is not None else Notifier()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._reload = threading.Event()
        #: The table's copy of the room's registry (the floor's decks and badges); None without a floor.
        self.room = RoomRegistry(config.state_dir, config.registry, config.badge_registry) \
            if config.floor.enabled else None
        self.floor = self._make_floor(config)
        self.journal = config.journal.open(config.state_dir / "journal", **self._journal_options(journal_options))
        # The registry the open hand was dealt with: the room's kept one, before the replay.
        self.engine = HandEngine(config.profile, self.room.decks() if self.room is not None else config.registry)
        self.health = BoxHealth(self.engine, self.journal, self.notifier, clock)
        self.stats = self.health.stats
        self.devices = TableDevices(table)
        self.polling = ReaderPolling(self.stats, clock=clock)
        self.output = DecisionOutput(self.engine, self.journal, self.devices, self.stats, self._stop,
                                     on_decision=on_decision)
        self.recovery = StartupRecovery(self.engine, self.journal, self.stats, on_decision=on_decision)
        self.input = None if input_events is None else InputFeed(input_events, input_pace_s, self.journal)
        self.loop = EngineLoop(self.engine, self.journal, self.output, self.health, live=self.input is None)
        self.loop.sign_in = DealerSignIn(self.engine)
        if self.room is not None:
            self.loop.room = self.room
            self.loop.on_badges = self._use_badges
            self.loop.on_registry_applied = self.floor.health_changed
            self.polling.badge_map = self.room.badges()
        #: The events' queue; a ``tick`` or any event put here is judged in turn.
        self.queue = self.loop.queue
        self._apply_table_settings(config)
        self._t0 = clock()
        self._t_offset = 0.0

    def _make_floor(self, config):
        """Floor reporting reads the journal back on its own threads. Made before the
        journal, so that retention, which runs on opening, keeps what the floor has
        not acknowledged."""
        if not config.floor.enabled:
            return None
        return Publisher(config.floor, config.state_dir / "journal",
                         on_registry=self._registry_received, registry=lambda: self.room.summary(),
                         readers=lambda: self.health.readers(self.config.readers), box=lambda: self.health.box(self.config))

    def _journal_options(self, journal_options: dict | None) -> dict:
        options = dict(journal_options or {})
        if self.floor is not None:
            options.setdefault("keep_from_seq", self.floor.keep_from_seq)
        return options

    def _apply_table_settings(self, config) -> None:
        self.messages = load_messages(config.language)
        self.output.configure(config, self.messages)

    # ------------------------------------------------------------------ time
    def now(self) -> float:
        """Event time: seconds, continuing from the journal's last event after a restart."""
        return round(self._t_offset + (self._clock() - self._t0), 4)

    # -------------------------------------------------- what the parts hold
    @property
    def view(self):
        """The :class:`~dealerbox.service.panel.PanelView` shown last, or None."""
        return self.output.view

    @property
    def panel(self):
        """The open panel (LEDs and buttons), or None."""
        return self.devices.panel

    @property
    def lcd(self):
        """The open LCD, or None."""
        return self.devices.lcd

    @property
    def readers(self) -> dict:
        """Each reader that is open now, by name."""
        return self.polling.readers

    # ------------------------------------------------------------- lifecycle
    def start(self) -> None:
        """Recover from the journal, open the devices, start the threads; then READY=1."""
        if threading.current_thread() is threading.main_thread():
            # Before READY=1: systemd may send SIGHUP the moment it hears it.
            signal.signal(signal.SIGTERM, lambda *_: self.stop())
            signal.signal(signal.SIGINT, lambda *_: self.stop())
            signal.signal(signal.SIGHUP, lambda *_: self._reload.set())
        self._recover()
        self.journal.start_writer(on_change=self.loop.storage_changed)
        self._record_damage()
        self._room_at_start()
        self.output.start_note = self.recovery.note
        self._open_devices()
        self._start(self.loop.run, "engine")
        self._start(self.output.lcd_loop, "lcd")
        # The technician's registrations made while the box runs (or while it was stopped and
        # could not take them) reach the journal, and so the floor.
        courier = OutboxCourier(RegistryOutbox(self.config.state_dir), self.queue.put, self.now, self.journal)
        self._start(lambda: courier.run(self._stop), "outbox")
        if self.input is not None:
            self._start(lambda: self.input.run(self._put, self._stop), "input")
        else:
            self._start(self._tick_loop, "tick")
        self.output.show(self.engine.decision, initial=True)
        if self.floor is not None:
            try:
                self.floor.start()  # returns at once; never waits for the floor
            except OSError as exc:
                log.error("floor reporting is off: %s", exc)
        self.notifier.ready(self._status())
        log.info("dealerbox started: table %s, profile %s, %d reader(s)", self.config.name,
                 self.config.profile.name, len(self.config.readers))

    def _recover(self) -> None:
        """Replay the open hand; event time goes on from the journal's last event."""
        self._t_offset = self.loop.last_t = self.recovery.replay(self.messages)

    def _room_at_start(self) -> None:
        """Put the kept room registry on record (the writer runs by now), and the one that waited
        for a hand to end when the box stopped in line for the next chance."""
        if self.room is None:
            return
        summary = self.room.summary()
        if summary is not None:
            self._put(Event(self.now(), "registry_applied", **summary))
        if self.room.waiting is not None:
            self.queue.put(RegistryOffer(self.room.waiting))

    def _registry_received(self, payload: bytes) -> None:
        """The uplink's thread: a room registry came; checked here, applied between hands by the loop."""
        got = self.room.receive(payload)
        if got is not None:
            self.queue.put(RegistryOffer(got))

    def _use_badges(self, badges: dict) -> None:
        self.polling.badge_map = badges

    def _record_damage(self) -> None:
        """Put the damage the journal found on opening on record (the writer runs by now)."""
        self.recovery.record_damage()

    def run(self) -> int:
        """Block until SIGTERM/SIGINT (or :meth:`stop`); SIGHUP reloads the config."""
        while not self._stop.wait(0.2):
            if self._reload.is_set():
                self._reload.clear()
                self.reload()
        self.close()
        return 0

    def stop(self) -> None:
        """Ask the box to stop (any thread, or a signal): :meth:`run` returns after closing it."""
        self._stop.set()
        self.loop.stop()

    def close(self) -> None:
        """Stop every thread, close devices and the journal. Safe twice."""
        if getattr(self, "_closed", False):
            return
        self._closed = True
        self.notifier.stopping()
        # Order matters: the readers stop first, then the engine drains every event
        # they produced (nothing polled is dropped), and only then are the devices
        # closed, so no decision is being shown on a panel that is closing.
        self.polling.stop()
        self._stop.set()
        self.loop.stop()
        self.output.wake_lcd()
        for t in self._threads:
            t.join(timeout=5)
        self._close_devices()
        if self.floor is not None:
            self.floor.close()
        self.journal.close()
        self.notifier.close()
        log.info("dealerbox stopped after %d events", self.stats.events)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def _start(self, target, name: str) -> threading.Thread:
        t = threading.Thread(target=target, name=name, daemon=True)
        self._threads.append(t)
        t.start()
        return t

    def _open_devices(self) -> None:
        self.devices.open(self.config, sink=self._put, clock=self.now)
        self.polling.start(self.config, self.devices, sink=self._put, now=self.now,
                           badge_sink=lambda t, dealer: self.queue.put(BadgeRead(t, dealer)))

    def _close_devices(self) -> None:
        self.polling.stop()
        self.devices.close()

    # ---------------------------------------------------------------- sources
    def _put(self, event: Event) -> None:
        if event.ev == "new_hand" and self.config.mouth_sensor.pin is not None:
            event.mouth_sensor = True      # CONTRACT.md: every card leaving the stub is a shoe event
        self.queue.put(event)

    def _tick_loop(self) -> None:
        while not self._stop.wait(self.config.tick_s):
            self._put(Event(self.now(), "tick"))

    def _status(self) -> str:
        """The ``STATUS=`` text systemd shows."""
        return self.health.status()

    # ------------------------------------------------------------------ reload
    def reload(self) -> bool:
        """SIGHUP: load the config again. A bad one is refused and the box runs on."""
        self.notifier.reloading()
        try:
            new = load_config(self.config.path)
        except (DealerboxError, OSError) as exc:
            self.stats.reloads_refused += 1
            log.error("config reload refused, running on with the old one: %s", exc)
            self.notifier.ready(self._status())
            return False
        if new.state_dir != self.config.state_dir:
            log.warning("state_dir changes only on restart; keeping %s", self.config.state_dir)
        self._close_devices()
        self.config = new
        if self.room is not None:
            # The table's own files may have changed; the room's registry stays as it was.
            self.room.use_local(new.registry, new.badge_registry)
            self.polling.badge_map = self.room.badges()
        self._apply_table_settings(new)
        self.engine.profile = new.profile
        self._open_devices()
        self.output.show(self.engine.decision, initial=True)
        self.stats.reloads += 1
        log.info("config reloaded from %s", new.path)
        self.notifier.ready(self._status())
        return True


def make_reader(config, name: str, *, buses):
    """Open reader *name* of *config*: its driver (:mod:`dealerbox.service.kinds`) on *buses*."""
    return open_reader(config.readers[name], buses)


def read_input_events(path) -> EventFile:
    """An event file for ``--input``, read as a stream each time it is iterated;
    each event gets its line number as ``id`` if it has none. Problems are
    :class:`~dealerbox.errors.EventError` naming the file, line and key."""
    return EventFile(Path(path), number_ids=True)
