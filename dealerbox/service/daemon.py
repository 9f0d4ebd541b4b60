"""The box as a service: readers, buttons and ticks in; journal, engine, panel out.

Threads and why:

- one thread per reader polls it and turns polls into events (presence
  tracking); a reader that fails is reported (``reader_fault``), reopened with
  backoff and reported back (``reader_ok``); a thread that dies is logged and
  restarted;
- the panel's buttons arrive from gpiozero's callback thread;
- a tick thread sends ``tick`` about every 250 ms so judgments with a grace
  period settle (CONTRACT.md);
- the engine loop takes every event from one queue, appends it to the journal
  (so a power cut loses nothing the engine saw), feeds the engine, and fans the
  decisions out: LEDs first, then the LCD (its own thread, latest frame wins, so
  a slow LCD never delays detection), then the log on stdout.

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
from ..errors import ConfigError, DealerboxError, HardwareError, ReaderError
from ..rules.events import Event
from .journal import Journal
from ..rules.messages import load_messages
from .panel import PanelView, render
from .sdnotify import Notifier

log = logging.getLogger("dealerbox")

_STOP = object()


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
    """

    def __init__(self, config, *, table=None, input_events=None, input_pace_s: float = 0.0,
                 on_decision=None, notifier: Notifier | None = None, clock=time.monotonic):
        self.config = config
        self.table = table
        self._clock = clock
        self._input = list(input_events) if input_events is not None else None
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
        self.journal = Journal(config.state_dir / "journal", **config.journal)
        self.engine = HandEngine(config.profile, config.registry)
        self._t0 = clock()
        self._t_offset = 0.0
        self._last_t = 0.0
        self._recovered_note: str | None = None
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
        self._open_devices()
        self._start(self._engine_loop, "engine")
        self._start(self._lcd_loop, "lcd")
        if self._input is not None:
            self._start(self._input_loop, "input")
        else:
            self._start(self._tick_loop, "tick")
        self._show(self.engine.decision, initial=True)
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
        replayed = 0
        last = None
        last_decisions: list = []
        for entry in self.journal.open_hand():
            last_decisions = self.engine.feed(entry.event)
            replayed += 1
            last = entry
        if last is None:
            for entry in self.journal.entries():
                last = entry
        self._t_offset = self._last_t = last.event.t if last else 0.0
        self.stats.recovered_events = replayed
        if last_decisions:
            self._journal_lost_decisions(last, last_decisions)
        if replayed:
            self._recovered_note = f"RECOVERED {replayed} ev"
            log.info("recovered the open hand from the journal: %d events replayed, phase %s, verdict %s; "
                     "showing %s", replayed, self.engine.phase, self.engine.decision.verdict,
                     json.dumps(decision_to_dict(self.engine.decision, self.messages), ensure_ascii=False))

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
        sims = [n for n, r in config.readers.items() if r.backend == "sim"]
        if (sims or config.panel.backend == "sim" or config.lcd.backend == "sim") and self.table is None:
            raise ConfigError(config.path, "backend", "a simulated table for the devices marked sim "
                              "(dealerbox run starts one for an all-simulated config)", "sim")
        self._device_stop.clear()
        with self._panel_lock:
            self._pin_factory = self._make_pin_factory()
            self._open_panel()
        with self._lcd_lock:
            self._open_lcd()
        self._open_mouth_sensor()
        for name in config.readers:
            self._start(lambda n=name: self._reader_loop(n), f"reader-{name}", device=True)

    def _make_pin_factory(self):
        """One pin factory for the panel and the readers' reset pins, as the config names it."""
        if self.config.panel.backend == "sim":
            return self.table.pin_factory
        from ..hw.gpio_panel import make_pin_factory

        return make_pin_factory(self.config.gpio_factory)

    def _open_panel(self) -> None:
        from ..hw.gpio_panel import PanelGpio

        pc = self.config.panel
        self.panel = PanelGpio(pc.pins, pin_factory=self._pin_factory, sink=self._put, clock=self.now,
                               on_players=self._players_changed, **pc.kwargs())

    def _open_lcd(self) -> None:
        from ..hw.lcd import PanelLcd

        lc = self.config.lcd
        try:
            self.lcd = PanelLcd(bus=self.table.i2c if lc.backend == "sim" else None, **lc.kwargs())
        except HardwareError as exc:
            # The box still judges and lights the LEDs without its LCD.
            log.error("LCD not available: %s", exc)
            self.lcd = None

    def _open_mouth_sensor(self) -> None:
        """The optional photo-interrupter at the shoe's mouth; its counts go to the shoe's tracker."""
        self.mouth = None
        ms = getattr(self.config, "mouth_sensor", None)
        if ms is None:
            return
        from ..hw.mouth import MouthSensor

        factory = self.table.pin_factory if ms.backend == "sim" else self._pin_factory
        self.mouth = MouthSensor(ms.pin, pin_factory=factory, blocked_level=ms.blocked_level, clock=self.now)

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
        factory, self._pin_factory = getattr(self, "_pin_factory", None), None
        if factory is not None and (self.table is None or factory is not self.table.pin_factory):
            factory.close()

    def _make_reader(self, name: str):
        return make_reader(self.config, name, table=self.table, pin_factory=self._pin_factory)

    def _reader_loop(self, name: str) -> None:
        """Poll one reader until told to stop; survive faults and bugs alike."""
        from ..hw.presence import PresenceTracker

        rc = self.config.readers[name]
        counts = self.stats.per_reader.setdefault(name, {"polls": 0, "events": 0, "faults": 0, "restarts": 0})
        ms = getattr(self.config, "mouth_sensor", None)
        mouth = self.mouth if ms is not None and "shoe" in rc.zones else None
        tracker = PresenceTracker(**self.config.presence, mouth_window=ms.read_window_s if mouth else None,
                                  max_tags=rc.params.get("max_tags"))
        reader = None
        faulted = False
        backoff = 0.1
        crash_backoff = 0.02   # a card passes the shoe in 30-100 ms: come back at once
        while not self._device_stop.is_set():
            try:
                if reader is None:
                    reader = self._make_reader(name)
                    self.readers[name] = reader
                    if faulted:
                        faulted = False
                        self._put(Event(self.now(), "reader_ok", reader=name))
                    backoff = 0.1
                polled = reader.poll()
                counts["polls"] += 1
                crash_backoff = max(0.02, crash_backoff * 0.9)
                t = self.now()
                if mouth is not None:
                    for count_t in mouth.take():
                        tracker.count(count_t)
                for e in tracker.update(t, polled):
                    counts["events"] += 1
                    self._put(e)
                if hasattr(reader, "take_events"):
                    for e in reader.take_events(t):
                        self.stats.reader_faults += e.ev == "reader_fault"
                        self._put(e)
                self._device_stop.wait(rc.poll_s)
            except ReaderError as exc:
                if not faulted:
                    faulted = True
                    counts["faults"] += 1
                    self.stats.reader_faults += 1
                    log.error("reader %s failed: %s", name, exc)
                    self._put(Event(self.now(), "reader_fault", reader=name))
                reader = self._drop_reader(name, reader)
                self._device_stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)
            except Exception:
                counts["restarts"] += 1
                self.stats.reader_restarts += 1
                log.exception("reader thread %s crashed; restarting it", name)
                reader = self._drop_reader(name, reader)
                self._device_stop.wait(crash_backoff)
                crash_backoff = min(crash_backoff * 2, 5.0)
        self._drop_reader(name, reader)

    def _drop_reader(self, name, reader):
        if reader is not None:
            try:
                reader.close()
            except Exception:
                log.exception("closing reader %s failed", name)
        self.readers.pop(name, None)
        return None

    def _players_changed(self, players: int) -> None:
        log.info("players set to %d", players)

    # ---------------------------------------------------------------- sources
    def _put(self, event: Event) -> None:
        if event.ev == "new_hand" and getattr(self.config, "mouth_sensor", None) is not None:
            event.mouth_sensor = True      # CONTRACT.md: every card leaving the stub is a shoe event
        self.queue.put(event)

    def _tick_loop(self) -> None:
        while not self._stop.wait(self.config.tick_s):
            self._put(Event(self.now(), "tick"))

    def _input_loop(self) -> None:
        """Feed the input events, resuming after the last one the journal holds.

        The input is in order, so everything up to the last journaled id was either
        journaled or (a tick that judged nothing) deliberately left out: none of it
        is owed to the engine again.
        """
        last = None
        for entry in self.journal.entries():
            if entry.event.id is not None:
                last = entry.event
        start = 0
        if last is not None:
            # Ids are line numbers unless the file gives its own: match the event
            # too, or a second input file would lose its first lines.
            for i, event in enumerate(self._input):
                if event.id == last.id and event.to_dict() == last.to_dict():
                    start = i + 1
        for event in self._input[start:]:
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
        seq = self.journal.append(event)
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
            try:
                self.journal.append_decision(out)
            except OSError:
                self.stats.journal_errors += 1
                log.exception("could not journal a decision")
            log.info("decision %s", json.dumps(out, ensure_ascii=False))
            if self._on_decision is not None:
                self._on_decision(out)

    def _show(self, decision, *, initial: bool = False, refresh: bool = False) -> None:
        lc = self.config.lcd
        view = render(decision, self.messages, cols=lc.cols, rows=lc.rows,
                      previous=None if initial or refresh else self._last_decision, phase=self.engine.phase)
        note = None
        if self.engine.faulted_readers:
            # No RULES.md row covers a dead reader, but the dealer must know the box is half blind.
            note = "READER DOWN: " + ",".join(sorted(self.engine.faulted_readers))
        elif initial and self._recovered_note:
            note = self._recovered_note
        if note:
            lines = list(view.lines)
            lines[-1] = note[:lc.cols].ljust(lc.cols)
            view = PanelView(tuple(lines), view.led, view.blink, view.beep and not refresh)
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
        return (f"{self.engine.phase}, {d.verdict}" + (f" {d.irregularity}" if d.irregularity else "")
                + f"; {self.stats.events} events")

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


def make_reader(config, name: str, *, table=None, pin_factory=None):
    """Open reader *name* of *config*: its real driver, on the simulated table's chip when sim."""
    rc = config.readers[name]
    params = dict(rc.params)
    if rc.backend == "sim" and table is None:
        raise ConfigError(config.path, f"readers.{name}.backend", "a simulated table to serve it", "sim")
    if rc.kind == "rc522":
        from ..hw.rc522 import RC522Reader

        if rc.backend == "sim":
            # The emulated chip has no reset line to drive.
            params["reset_pin"] = None
        return RC522Reader(pin_factory=pin_factory, **params)
    from ..hw.serial_reader import PepperC1Reader, ShoeLineReader

    cls = PepperC1Reader if rc.kind == "pepper_c1" else ShoeLineReader
    if rc.backend == "sim":
        params["url"] = table.url_of(name)
    return cls(**params)


def read_input_events(path) -> list[Event]:
    """An event file for ``--input``; each event gets its line number as ``id`` if it has none."""
    from ..rules.events import read_events

    events = []
    with open(Path(path), encoding="utf-8") as fh:
        for n, e in enumerate(read_events(fh), 1):
            if e.id is None:
                e.id = n
            events.append(e)
    return events
