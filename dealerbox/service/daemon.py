"""The box as a service: readers, buttons and ticks in; journal, engine, panel out.

Threads and why:

- one thread per reader polls it on a fixed period and turns polls into events
  (presence tracking); its :class:`~dealerbox.hw.reader.ReaderSupervisor`
  reports a reader that fails (``reader_fault``), reopens it with backoff and
  reports it back (``reader_ok``); a reader that crashes is logged and reopened;
- the panel's buttons arrive from gpiozero's callback thread;
- a tick thread sends ``tick`` about every 250 ms so judgments with a grace
  period settle (CONTRACT.md);
- the engine loop takes every event from one queue, hands it to the journal's
  writer, feeds the engine, and fans the decisions out: LEDs first, then the
  LCD (its own thread, latest frame wins, so a slow LCD never delays
  detection), then the log on stdout;
- the journal's writer thread commits what was queued meanwhile with one
  write and one fsync, in the events' order, so the flash's fsync time is
  never between a card and the LED (docs/JOURNAL.md says why this loses no
  more than before). While the disk fails it holds the lines in memory and
  retries; the panel, ``STATUS=`` and the log say so.

On start the box replays the journal from the start of the open hand, so it
comes back in exactly the state it had, and says so on the LCD.
"""

from __future__ import annotations

import json
import logging
import queue
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..rules.engine import HandEngine, decision_to_dict
from ..errors import DealerboxError, EventError, HardwareError
from ..rules.events import Event, EventFile
from ..rules.messages import load_messages
from .panel import PanelView, render, technician_line
from .sdnotify import Notifier

log = logging.getLogger("dealerbox")

_STOP = object()
_STORAGE = object()   # the journal's writer changed state: refresh the panel and STATUS=


@dataclass
class DaemonStats:
    """What the daemon counts; ``STATUS=`` and the tests read it."""

    events: int = 0
    decisions: int = 0
    recovered_events: int = 0
    reader_faults: int = 0
    reader_restarts: int = 0
    lcd_errors: int = 0
    journal_errors: int = 0
    #: Storage faults (runs of failed journal writes) since start.
    storage_faults: int = 0
    #: Why the journal cannot be written now, or None.
    storage_fault: str | None = None
    #: Events lost because the journal's queue overflowed during a fault.
    journal_lost_events: int = 0
    #: Journal lines held in memory, waiting for the disk.
    journal_queued: int = 0
    #: Damaged journal lines found (and quarantined) at start.
    journal_damage: int = 0
    reloads: int = 0
    reloads_refused: int = 0
    per_reader: dict = field(default_factory=dict)


class Daemon:
    """One table's box. ``start()`` then ``run()`` (blocking) or ``stop()``.

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
        # A list, or an EventFile read as a stream each time it is iterated.
        self._input = (input_events if input_events is None or isinstance(input_events, (list, EventFile))
                       else list(input_events))
        self._input_pace_s = input_pace_s
        self._on_decision = on_decision
        self.notifier = notifier if notifier is not None else Notifier()
        self.stats = DaemonStats()
        self.queue: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._device_stop = threading.Event()
        self._device_threads: list[threading.Thread] = []
        self._reload = threading.Event()
        self._lcd_frame: PanelView | None = None
        self._lcd_wake = threading.Condition()
        # Reload swaps the panel and the LCD under the running threads. One lock each,
        # so a hung LCD never holds up the LEDs.
        self._panel_lock = threading.RLock()
        self._lcd_lock = threading.RLock()
        self.view: PanelView | None = None
        self.panel = None
        self.lcd = None
        self.readers: dict = {}
        self._apply_table_settings(config)
        # Floor reporting reads the journal back on its own threads; made
        # first so that retention, which runs on opening, keeps what the
        # floor has not acknowledged.
        self.floor = None
        if config.floor.enabled:
            from ..floor.publisher import Publisher
            self.floor = Publisher(config.floor, config.state_dir / "journal", readers=self.reader_health,
                                   box=self.box_health)
        options = dict(journal_options or {})
        if self.floor is not None:
            options.setdefault("keep_from_seq", self.floor.keep_from_seq)
        self.journal = config.journal.open(config.state_dir / "journal", **options)
        self.engine = HandEngine(config.profile, config.registry)
        self._t0 = clock()
        self._t_offset = 0.0
        self._last_t = 0.0
        self._recovered_note: str | None = None
        self._damage_note: str | None = None
        self._last_watchdog = 0.0

    # ------------------------------------------------------------------ time
    def now(self) -> float:
        """Event time: seconds, continuing from the journal's last event after a restart."""
        return round(self._t_offset + (self._clock() - self._t0), 4)

    def _apply_table_settings(self, config) -> None:
        self.messages = load_messages(config.language)

    # ------------------------------------------------------------- lifecycle
    def start(self) -> None:
        """Recover from the journal, open the devices, start the threads; then READY=1."""
        if threading.current_thread() is threading.main_thread():
            # Before READY=1: systemd may send SIGHUP the moment it hears it.
            signal.signal(signal.SIGTERM, lambda *_: self.stop())
            signal.signal(signal.SIGINT, lambda *_: self.stop())
            signal.signal(signal.SIGHUP, lambda *_: self._reload.set())
        self._recover()
        self.journal.start_writer(on_change=self._storage_changed)
        self._record_damage()
        self._open_devices()
        self._start(self._engine_loop, "engine")
        self._start(self._lcd_loop, "lcd")
        if self._input is not None:
            self._start(self._input_loop, "input")
        else:
            self._start(self._tick_loop, "tick")
        self._show(self.engine.decision, initial=True)
        if self.floor is not None:
            try:
                self.floor.start()  # returns at once; never waits for the floor
            except OSError as exc:
                log.error("floor reporting is off: %s", exc)
        self.notifier.ready(self._status())
        log.info("dealerbox started: table %s, profile %s, %d reader(s)", self.config.name,
                 self.config.profile.name, len(self.config.readers))

    def run(self) -> int:
        """Block until SIGTERM/SIGINT (or :meth:`stop`); SIGHUP reloads the config."""
        while not self._stop.wait(0.2):
            if self._reload.is_set():
                self._reload.clear()
                self.reload()
        self.close()
        return 0

    def stop(self) -> None:
        self._stop.set()
        self.queue.put(_STOP)

    def close(self) -> None:
        """Stop every thread, close devices and the journal. Safe twice."""
        if getattr(self, "_closed", False):
            return
        self._closed = True
        self.notifier.stopping()
        # Order matters: the readers stop first, then the engine drains every event
        # they produced (nothing polled is dropped), and only then are the devices
        # closed, so no decision is being shown on a panel that is closing.
        self._stop_readers()
        self._stop.set()
        self.queue.put(_STOP)
        with self._lcd_wake:
            self._lcd_wake.notify_all()
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

    def _start(self, target, name: str, *, device: bool = False) -> threading.Thread:
        t = threading.Thread(target=target, name=name, daemon=True)
        (self._device_threads if device else self._threads).append(t)
        t.start()
        return t

    # -------------------------------------------------------------- recovery
    def _recover(self) -> None:
        """Replay the open hand: only the lines the hash chain vouches for
        (journal.checked_open_hand), so a duplicated or forged line never
        puts the engine in a state the table was not in."""
        replayed = 0
        last = None
        last_decisions: list = []
        for entry in self.journal.open_hand():
            last_decisions = self.engine.feed(entry.event)
            replayed += 1
            last = entry
        if last is None:
            for entry in self.journal.entries(skip_damaged=True):
                last = entry
        self._t_offset = self._last_t = last.event.t if last else 0.0
        self.stats.recovered_events = replayed
        if last_decisions:
            try:
                self._journal_lost_decisions(last, last_decisions)
            except OSError as exc:
                self.stats.journal_errors += 1
                log.error("could not journal the decisions a stop had cut off: %s", exc.strerror or exc)
        if replayed:
            self._recovered_note = f"RECOVERED {replayed} ev"
            log.info("recovered the open hand from the journal: %d events replayed, phase %s, verdict %s; "
                     "showing %s", replayed, self.engine.phase, self.engine.decision.verdict,
                     json.dumps(decision_to_dict(self.engine.decision, self.messages), ensure_ascii=False))

    def _record_damage(self) -> None:
        """Damage the journal found on opening goes on record, and to the floor."""
        record = self.journal.damage_record()
        if record is None:
            return
        self.stats.journal_damage = record["count"]
        self.journal.submit_record("journal_damage", record)
        first = record["lines"][0]
        self._damage_note = "JOURNAL DAMAGED"
        log.error("floor notice: the journal was damaged: %d line(s), the first at %s:%d (%s); "
                  "quarantined, the table runs on (run dealerbox journal verify)",
                  record["count"], first["file"], first["line"], first["kind"])

    def _storage_changed(self, fault: str | None) -> None:
        """Called by the journal's writer thread: the engine loop redraws."""
        self.queue.put(_STORAGE)

    def _journal_lost_decisions(self, entry, decisions) -> None:
        """A stop between an event's line and its decisions' lines left them out: write them now."""
        from .journal import read_decisions

        if any(d.get("seq") == entry.seq for _seq, _wall, d in read_decisions(self.journal.directory, entry.seq)):
            return
        for d in decisions:
            self.journal.append_decision(self._decision_record(d, entry.seq, entry.event))
        log.info("journaled %d decision(s) of event %d that a stop had cut off", len(decisions), entry.seq)

    def _decision_record(self, decision, seq: int, event: Event) -> dict:
        out = decision_to_dict(decision, self.messages)
        # Added fields (CONTRACT.md allows them): which journal line, and which
        # source event, caused the decision.
        out["seq"] = seq
        if event.id is not None:
            out["id"] = event.id
        return out

    # --------------------------------------------------------------- devices
    def _open_devices(self) -> None:
        config = self.config
        for key, backend in config.device_backends.items():
            self._buses_of(backend, key)   # a device marked sim with no simulated table: refused here
        self._device_stop.clear()
        with self._panel_lock:
            self._pin_factory = self._make_pin_factory()
            self._open_panel()
        with self._lcd_lock:
            self._open_lcd()
        self._open_mouth_sensor()
        for name in config.readers:
            self._start(lambda n=name: self._reader_loop(n), f"reader-{name}", device=True)

    def _open_mouth_sensor(self) -> None:
        """The optional photo-interrupter at the shoe's mouth; its counts go to the shoe's tracker."""
        self.mouth = None
        ms = self.config.mouth_sensor
        if ms.pin is None:
            return
        from ..hw.mouth import MouthSensor

        factory = self._buses_of(ms.backend, "mouth_sensor.backend").pin_factory()
        self.mouth = MouthSensor(ms.pin, pin_factory=factory, blocked_level=ms.blocked_level, clock=self.now)

    def _buses_of(self, backend: str, key: str):
        """The buses a device with *backend* runs on: the simulated table's or the box's own."""
        from ..hw.buses import RealBuses, buses_for

        if getattr(self, "_real_buses", None) is None:
            self._real_buses = RealBuses(self.config.gpio_factory)
        return buses_for(self.config, backend, key=key, real_buses=self._real_buses,
                         sim_buses=self.table.buses if self.table is not None else None)

    def _make_pin_factory(self):
        """The pin factory of the panel, as its backend and ``gpio.factory`` say."""
        return self._buses_of(self.config.panel.backend, "panel.backend").pin_factory()

    def _open_panel(self) -> None:
        pc = self.config.panel
        self.panel = pc.open(pin_factory=self._pin_factory, sink=self._put, clock=self.now,
                             on_players=self._players_changed)

    def _open_lcd(self) -> None:
        lc = self.config.lcd
        try:
            bus = self._buses_of(lc.backend, "lcd.backend").i2c(lc.port)
            self.lcd = lc.open(bus)
        except HardwareError as exc:
            # The box still judges and lights the LEDs without its LCD.
            log.error("LCD not available: %s", exc)
            self.lcd = None

    def _stop_readers(self) -> None:
        self._device_stop.set()
        for t in self._device_threads:
            t.join(timeout=5)
        self._device_threads = []

    def _close_devices(self) -> None:
        self._stop_readers()
        mouth, self.mouth = getattr(self, "mouth", None), None
        if mouth is not None:
            mouth.close()
        for lock, attr in ((self._panel_lock, "panel"), (self._lcd_lock, "lcd")):
            with lock:
                dev = getattr(self, attr)
                setattr(self, attr, None)
                if dev is not None:
                    try:
                        dev.close()
                    except Exception:  # closing must go on for the other devices
                        log.exception("closing the %s failed", attr)
        self._pin_factory = None
        buses, self._real_buses = getattr(self, "_real_buses", None), None
        if buses is not None:
            buses.close()   # the box's own pin factory and I2C buses; the table closes its own

    def _reader_loop(self, name: str) -> None:
        """Poll one reader on its fixed grid until told to stop; its supervisor owns faults and reopening."""
        from ..hw.reader import PollSchedule

        rc = self.config.readers[name]
        counts = self.stats.per_reader.setdefault(
            name, {"polls": 0, "events": 0, "faults": 0, "restarts": 0, "skipped_slots": 0})
        ms = self.config.mouth_sensor
        mouth = self.mouth if ms.pin is not None and "shoe" in rc.zones else None
        tracker = self.config.presence.tracker(mouth_window=ms.read_window_s if mouth is not None else None,
                                               max_tags=getattr(rc.options, "max_tags", None))
        supervisor = self._supervise(name)
        schedule = PollSchedule(rc.poll_s, time.monotonic())
        try:
            while not self._device_stop.is_set():
                try:
                    self._poll_once(name, supervisor, tracker, counts, mouth)
                except Exception:
                    # Not the reader's fault (its supervisor catches those): keep the thread alive.
                    log.exception("reader thread %s: an error outside the reader", name)
                self._device_stop.wait(schedule.next_wait(time.monotonic()))
                counts["skipped_slots"] = schedule.skipped
        finally:
            supervisor.close()
            self.readers.pop(name, None)

    def _supervise(self, name: str):
        from ..hw.kinds import supervise

        rc = self.config.readers[name]
        # The daemon's clock, as for event times: a fault's backoff is measured in the time the
        # events carry (a simulated table's virtual clock included).
        return supervise(rc, self._buses_of(rc.backend, f"readers.{name}.backend"), clock=self._clock)

    def _poll_once(self, name: str, supervisor, tracker, counts: dict, mouth=None) -> None:
        restarts = supervisor.restarts
        polled, reports = supervisor.poll()
        if supervisor.reader is not None:
            self.readers[name] = supervisor.reader
        else:
            self.readers.pop(name, None)
        self.stats.reader_restarts += supervisor.restarts - restarts
        counts["restarts"] = supervisor.restarts
        t = self.now()
        for kind in reports:
            if kind == "reader_fault":
                counts["faults"] += 1
                self.stats.reader_faults += 1
            self._put(Event(t, kind, reader=name))
        if polled is not None:
            counts["polls"] += 1
            counts["last_ok"] = time.monotonic()
            if mouth is not None:
                for count_t in mouth.take():
                    tracker.count(count_t)
            for e in tracker.update(t, polled):
                counts["events"] += 1
                self._put(e)

    def reader_health(self) -> dict:
        """Each reader as the floor's ``health`` shows it: seconds since its last good
        poll (None before the first) and whether the engine has it as faulted."""
        now = time.monotonic()
        faulted = set(self.engine.faulted_readers)
        out = {}
        for name in self.config.readers:
            last = self.stats.per_reader.get(name, {}).get("last_ok")
            out[name] = {"last_seen_s": None if last is None else round(now - last, 2),
                         "faulted": name in faulted}
        return out

    def box_health(self) -> dict:
        """What the box itself reports beside the readers: the journal's storage fault."""
        return {"storage_fault": self.stats.storage_fault, "storage_faults": self.stats.storage_faults,
                "journal_queued": self.stats.journal_queued, "journal_lost_events": self.stats.journal_lost_events}

    def _players_changed(self, players: int) -> None:
        log.info("players set to %d", players)

    # ---------------------------------------------------------------- sources
    def _put(self, event: Event) -> None:
        if event.ev == "new_hand" and self.config.mouth_sensor.pin is not None:
            event.mouth_sensor = True      # CONTRACT.md: every card leaving the stub is a shoe event
        self.queue.put(event)

    def _tick_loop(self) -> None:
        while not self._stop.wait(self.config.tick_s):
            self._put(Event(self.now(), "tick"))

    def _input_loop(self) -> None:
        try:
            self._feed_input()
        except EventError as exc:  # checked at start; changed on disk since
            log.error("input stopped: %s", exc)

    def _feed_input(self) -> None:
        """Feed the input events, resuming after the last one the journal holds.

        The input is in order, so everything up to the last journaled id was either
        journaled or (a tick that judged nothing) deliberately left out: none of it
        is owed to the engine again.
        """
        last = None
        for entry in self.journal.entries(skip_damaged=True):
            if entry.event.id is not None:
                last = entry.event
        start = 0
        if last is not None:
            # Ids are line numbers unless the file gives its own: match the event
            # too, or a second input file would lose its first lines. (Two passes
            # over a file read as a stream: it is never held whole in memory.)
            for i, event in enumerate(self._input):
                if event.id == last.id and event.to_dict() == last.to_dict():
                    start = i + 1
        for i, event in enumerate(self._input):
            if i < start:
                continue
            if self._stop.is_set():
                return
            self._put(event)
            if self._input_pace_s:
                time.sleep(self._input_pace_s)

    # ------------------------------------------------------------ engine loop
    def _engine_loop(self) -> None:
        while True:
            item = self.queue.get()
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
            self._pet_watchdog()

    def _handle(self, event: Event) -> None:
        if self._input is None and event.t < self._last_t:
            event.t = self._last_t
        if event.ev == "tick" and not self.engine.has_deadline:
            # A tick judges nothing unless a grace period is running: not worth a journal line.
            return
        # Queued, not written: the writer thread commits it (one fsync for all
        # queued meanwhile) while the engine judges and the panel shows.
        seq = self.journal.submit(event)
        self._last_t = max(self._last_t, event.t)
        self.stats.events += 1
        decisions = self.engine.feed(event)
        if not decisions and (event.ev in ("reader_fault", "reader_ok") or self.engine.phase != self._shown_phase):
            # No new decision, but the glass must follow: a dead reader, or "OK flop" becoming "OK turn".
            self._show(self.engine.decision, refresh=True)
        for d in decisions:
            self.stats.decisions += 1
            self._show(d)
            out = self._decision_record(d, seq, event)
            self.journal.submit_record("decision", out)
            log.info("decision %s", json.dumps(out, ensure_ascii=False))
            if self._on_decision is not None:
                self._on_decision(out)
        if self.journal.fault is not None or self.stats.storage_fault is not None:
            self._count_storage()

    def _count_storage(self) -> None:
        j = self.journal
        self.stats.storage_fault = j.fault
        self.stats.storage_faults = j.faults
        self.stats.journal_lost_events = j.lost_events
        self.stats.journal_queued = j.queued

    def _storage_refresh(self) -> None:
        """The journal's writer started or stopped failing: the glass, the LED
        and STATUS= follow at once."""
        self._count_storage()
        self._show(self.engine.decision, refresh=True)
        self.notifier.status(self._status())

    def _show(self, decision, *, initial: bool = False, refresh: bool = False) -> None:
        lc = self.config.lcd
        view = render(decision, self.messages, cols=lc.cols, rows=lc.rows,
                      previous=None if initial or refresh else self._last_decision, phase=self.engine.phase)
        note = None
        storage = self.journal.fault is not None
        if storage:
            # The box judges on, but nothing is on record until the disk is back:
            # the technician must know (the LED turns amber where it was green).
            note = f"STORAGE FAULT {self.journal.queued}q"
        elif self.engine.faulted_readers:
            # No RULES.md row covers a dead reader, but the dealer must know the box is half blind.
            note = "READER DOWN: " + ",".join(sorted(self.engine.faulted_readers))
        elif initial and self._damage_note:
            note = self._damage_note
        elif initial and self._recovered_note:
            note = self._recovered_note
        if note:
            view = technician_line(view, note, storage_fault=storage, beep=view.beep and not refresh)
        self._last_decision = decision
        self._shown_phase = self.engine.phase
        self.view = view
        with self._panel_lock:
            if self.panel is not None:
                self.panel.show(view)       # LEDs first: they are instant
        with self._lcd_wake:
            self._lcd_frame = view
            self._lcd_wake.notify()

    _last_decision = None
    _shown_phase = None

    def _lcd_loop(self) -> None:
        while not self._stop.is_set():
            with self._lcd_wake:
                while self._lcd_frame is None and not self._stop.is_set():
                    self._lcd_wake.wait(0.5)
                frame, self._lcd_frame = self._lcd_frame, None
            if frame is None:
                continue
            try:
                with self._lcd_lock:
                    if self.lcd is not None:
                        self.lcd.show(frame)
            except Exception:
                self.stats.lcd_errors += 1
                log.exception("LCD update failed")

    def _pet_watchdog(self) -> None:
        now = self._clock()
        interval = self.notifier.watchdog_interval
        if interval and now - self._last_watchdog >= min(interval, 1.0):
            self._last_watchdog = now
            self.notifier.watchdog()
            self.notifier.status(self._status())

    def _status(self) -> str:
        d = self.engine.decision
        text = (f"{self.engine.phase}, {d.verdict}" + (f" {d.irregularity}" if d.irregularity else "")
                + f"; {self.stats.events} events")
        if self.journal.fault is not None:
            text += f"; STORAGE FAULT ({self.journal.fault}), {self.journal.queued} lines held"
        if self.journal.lost_events:
            text += f"; {self.journal.lost_events} events lost from the journal"
        if self.stats.journal_damage:
            text += f"; journal damage found at start ({self.stats.journal_damage} lines)"
        return text

    # ------------------------------------------------------------------ reload
    def reload(self) -> bool:
        """SIGHUP: load the config again. A bad one is refused and the box runs on."""
        from .config import load_config

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
        self._apply_table_settings(new)
        self.engine.profile = new.profile
        self._open_devices()
        self._show(self.engine.decision, initial=True)
        self.stats.reloads += 1
        log.info("config reloaded from %s", new.path)
        self.notifier.ready(self._status())
        return True


def make_reader(config, name: str, *, buses):
    """Open reader *name* of *config*: its driver (:mod:`dealerbox.hw.kinds`) on *buses*."""
    from ..hw.kinds import open_reader

    return open_reader(config.readers[name], buses)


def read_input_events(path) -> EventFile:
    """An event file for ``--input``, read as a stream each time it is iterated;
    each event gets its line number as ``id`` if it has none. Problems are
    :class:`~dealerbox.errors.EventError` naming the file, line and key."""
    return EventFile(Path(path), number_ids=True)
