"""``dealerbox sim``: the simulated shoe, a terminal UI for testing a table.

A technician tests a table without dealing a real game: keys do what a dealer
does (a card leaves the shoe, lands on the board, a panel button is pressed),
and the screen shows what the table shows: the LCD glass character for
character, the LEDs, and where the box believes every card is.

The console never feeds the engine. It acts on the chip emulators of a
:class:`hardware_sim.table.SimulatedTable` (the RF field of a reader, the pins
of a button) and a :class:`dealerbox.service.daemon.Daemon` reads them through the real
drivers, exactly as ``dealerbox run`` does. What the technician sees is what the
table would do.

Keys
====

The keys do what a dealer does (deal, burn, lay a card on the board or lift
it, a card of deck B, a joker, an unknown tag, the panel's buttons, a reader's
cable pulled), plus ``n`` (act out a kind of radio noise), ``s`` (the
scenario's next step), ``w`` (write the record) and ``q`` (quit; the record is
written). :data:`dealerbox.tools.console.keys.KEYS` is the key map; the help
line at the bottom of the screen is made from it.

SIGTERM and SIGHUP (a dropped SSH session) end the console as ``q`` does. With
no terminal on standard input or output it refuses in one line.

Real devices
============

Any device but the shoe reader may be real. Give a table config whose ``[lcd]``
or ``[panel]`` says ``backend = "real"`` while the readers say ``"sim"``, or
flip devices of a config with ``real=("lcd", "panel")`` (``dealerbox sim --real
lcd --real panel``): the simulated table builds emulators only for the ``sim``
devices and the daemon opens the real drivers for the rest, so the real LCD and
LEDs show what the simulated shoe causes. With a real panel the button keys are
refused (press the real buttons) and the LED column shows what the box drives.
A real board reader works too: place real cards on it.

Recording
=========

The console's daemon keeps its own state, ``state_dir/sim`` of the config (or
the folder given), so it never resumes a hand that ``dealerbox run`` on the same
config left open. The session is recorded by copying the events the daemon journaled
(``daemon.journal.entries()``, each ``entry.event.to_dict()``) into the record
file: on exit, and whenever ``w`` is pressed. It starts at the open hand the
daemon recovered from the journal, if any, else at the first event of the
session, so ``dealerbox replay FILE`` (with the table's profile and registry)
gives the decisions the box gave. The journal is the box's own record: what the
engine saw, in the order it saw it, with event times.

Scenarios
=========

A scenario file (``tests/scenarios/*.jsonl``) is played one step a key press
by :class:`dealerbox.tools.console.scenario.ScenarioPlayer`; the header's
profile is applied to the session.

Threads: the daemon runs its own (readers, engine, LCD, ticks). The dealer's
actions sleep while a tag crosses a field or a button is held, so they run one
after the other on one worker thread (a Textual thread worker); the screen is
redrawn from a 0.1 s timer reading the emulators and the daemon.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import logging
import queue
import random
import signal
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Input, Log, Static
from textual.worker import get_current_worker

from hardware_sim.table import SimulatedTable

from dealerbox.atomic import save_atomic
from dealerbox.errors import ConfigError, DealerboxError, EventError
from dealerbox.hw.buses import REAL
from dealerbox.rules.profiles import load_profile
from dealerbox.service.config import DEFAULT_CONFIG, load_config
from dealerbox.service.daemon import Daemon
from dealerbox.tools.console.hands import DealerHands, TagChoice, parse_tag
from dealerbox.tools.console.keys import HELP, PROMPTS, bindings
from dealerbox.tools.console.scenario import Scenario, ScenarioPlayer
from dealerbox.tools.console.view import decision_lines, glass_lines, leds_text, table_lines

log = logging.getLogger("dealerbox.tools.console.app")

# --------------------------------------------------------------------------
# Config helpers
# --------------------------------------------------------------------------

def with_real_devices(config, real=None):
    """*config* with the devices named in *real* switched to ``backend = "real"``.

    Names are ``lcd``, ``panel`` or a reader's name. The reader serving the shoe
    stays simulated: the console deals from it. Raises :class:`ConfigError`.
    """
    if not real:
        return config
    changes: dict = {}
    sections = dict(config.sections)
    readers = dict(config.readers)
    shoe = config.zone_readers().get("shoe")
    for name in real:
        if name == "lcd":
            sections["lcd"] = dataclasses.replace(config.lcd, backend=REAL)
        elif name == "panel":
            sections["panel"] = dataclasses.replace(config.panel, backend=REAL)
            if config.gpio_factory == "mock":
                changes["gpio_factory"] = "auto"
        elif name in readers:
            if name == shoe:
                raise ConfigError(config.path, f"readers.{name}.backend",
                                  "sim: the console deals from the simulated shoe", "real")
            readers[name] = dataclasses.replace(readers[name], backend=REAL)
            changes["readers"] = readers
            if config.gpio_factory == "mock" and readers[name].drives_gpio:
                changes["gpio_factory"] = "auto"
        else:
            raise ConfigError(config.path, "--real", f"lcd, panel or a reader ({', '.join(readers)})", name)
    return dataclasses.replace(config, sections=sections, **changes)


def _check_shoe_simulated(config) -> None:
    shoe = config.zone_readers().get("shoe")
    if shoe is None or f"readers.{shoe}" not in config.simulated_devices:
        raise ConfigError(config.path, f"readers.{shoe or '?'}.backend",
                          "sim for the reader serving the shoe (dealerbox sim deals from it)",
                          config.readers[shoe].backend if shoe else None)


# --------------------------------------------------------------------------
# The session: the table, the daemon and the dealer's hands (no UI)
# --------------------------------------------------------------------------

class _NoteHandler(logging.Handler):
    """Sends the box's warnings to the console's notes instead of the terminal."""

    def __init__(self, session: "ConsoleSession"):
        super().__init__(logging.WARNING)
        self.session = session

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.session.note(f"{record.levelname.lower()}: {record.getMessage()}")
        except Exception:
            self.handleError(record)


class ConsoleSession:
    """A simulated table, the daemon reading it, and the dealer's actions queued for a thread.

    Owns the lifetime of the session (the table, the daemon, the dealer's
    thread, the record file) and what happened (the notes and the decisions the
    screen shows). What the keys do at the table belongs to its
    :class:`~dealerbox.tools.console.hands.DealerHands` (:attr:`hands`), the
    scenario to its :class:`~dealerbox.tools.console.scenario.ScenarioPlayer`
    (:attr:`player`).

    :param config: a loaded :class:`dealerbox.service.config.TableConfig`; the reader
        serving the shoe must be ``sim``.
    :param record: the event file to write the session to; None for
        ``state_dir/sim/session-<UTC time>.jsonl``.
    :param scenario: a scenario file to play step by step, or None.
    :param state_dir: the state folder of the console's own daemon (journal and
        records); None for ``state_dir/sim`` of *config*, so the console never
        recovers into the hand a ``dealerbox run`` on the same config left open.

    ``start()`` opens everything; ``submit(action, *args)`` queues a dealer's
    action (a name of :attr:`DealerHands.actions`, or ``scenario_step``), which
    :meth:`dealer_loop` runs one after the other on a thread of its own;
    ``close()`` stops, closes and writes the record (safe twice).
    """

    def __init__(self, config, *, record=None, scenario=None, rng: random.Random | None = None,
                 state_dir=None):
        self.scenario = Scenario.load(scenario) if scenario is not None else None
        if self.scenario is not None:
            config = self._with_scenario_profile(config, self.scenario)
        _check_shoe_simulated(config)
        state_dir = Path(state_dir) if state_dir is not None else config.state_dir / "sim"
        self.config = config = dataclasses.replace(config, state_dir=state_dir)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        self.record_path = Path(record) if record is not None else state_dir / f"session-{stamp}.jsonl"
        self.table = None
        self.daemon = None
        self.decisions: collections.deque = collections.deque(maxlen=50)
        self.notes: collections.deque = collections.deque(maxlen=500)
        self.unseen_notes: queue.SimpleQueue = queue.SimpleQueue()
        self.hands = DealerHands(config, rng=rng or random.Random(), note=self.note, where=self.where)
        self.player = ScenarioPlayer(self.scenario, hands=self.hands, note=self.note, settle=self.settle,
                                     engine=lambda: self.daemon.engine)
        # The shoe's memory, under the name the tests reach it by.
        self._left_shoe = self.hands.left_shoe
        self.submitted = 0                          # actions queued, and done: the tests wait on them
        self.actions_done = 0
        self._lock = threading.Lock()
        self._actions: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._loop_done = threading.Event()
        self._loop_done.set()
        self._record_from = 1
        self._handler = _NoteHandler(self)
        self._closed = False
        self._running = False
        self.record_error: str | None = None

    @property
    def last_drawn(self) -> TagChoice | None:
        """The last card the dealer's hands drew."""
        return self.hands.last_drawn

    @property
    def scenario_results(self) -> list[tuple[int, list[str]]]:
        """``(line, failures)`` per scenario expectation checked so far."""
        return self.player.results

    @staticmethod
    def _with_scenario_profile(config, scenario: Scenario):
        name = scenario.header.get("profile")
        if not name or name == config.profile.name:
            return config
        return dataclasses.replace(config, profile=load_profile(name))

    # -- lifetime ----------------------------------------------------------------------
    def start(self) -> None:
        """Build the simulated table, start the daemon on it."""
        logging.getLogger("dealerbox").addHandler(self._handler)
        self.table = self.hands.table = SimulatedTable(self.config).__enter__()
        self.daemon = Daemon(self.config, table=self.table, on_decision=self._decided)
        self._record_from = self.daemon.journal.head[0] + 1
        self.daemon.start()
        self._running = True
        if self.daemon.stats.recovered_events:
            self._record_from = self.daemon.journal.open_hand_start() or self._record_from
        self.note(f"table {self.config.name}: profile {self.config.profile.name}, "
                  f"devices {self._devices_text()}; recording to {self.record_path}")
        if self.scenario is not None:
            self.note(f"scenario {self.scenario.path.name}: {len(self.scenario.items)} lines; press s to step")

    def replay_command(self) -> str:
        """The ``dealerbox replay`` command line that gives this session's decisions again."""
        cmd = f"dealerbox replay {self.record_path}"
        if self.config.profile.name != "tda-2019":
            cmd += f" --profile {self.config.profile.name}"
        if self.config.language != "en":
            cmd += f" --lang {self.config.language}"
        if not self.config.registry_source.startswith("builtin:"):
            cmd += f" --registry {self.config.registry_source}"
        return cmd

    def _devices_text(self) -> str:
        c = self.config
        parts = [f"{n} {r.backend}" for n, r in c.readers.items()]
        parts += [f"panel {c.panel.backend}", f"lcd {c.lcd.backend}"]
        return ", ".join(parts)

    def close(self) -> None:
        """Stop the dealer's thread, the daemon and the table; write the record. Safe twice."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._loop_done.wait(5)
        try:
            if self.daemon is not None:
                self.daemon.close()
                if self._running:
                    try:
                        self.write_record()
                    except OSError as exc:
                        self.record_error = f"cannot write {self.record_path}: {exc.strerror or exc}"
        finally:
            if self.table is not None:
                self.table.close()
            logging.getLogger("dealerbox").removeHandler(self._handler)

    @property
    def closed(self) -> bool:
        return self._closed

    # -- what happened -----------------------------------------------------------------
    def note(self, text: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        line = f"{stamp} {text}"
        self.notes.append(line)
        self.unseen_notes.put(line)

    def _decided(self, decision: dict) -> None:
        with self._lock:
            self.decisions.append(decision)

    def last_decisions(self, n: int = 6) -> list[dict]:
        with self._lock:
            return list(self.decisions)[-n:]

    def where(self) -> dict[str, str]:
        """A copy of where the engine believes each card is (it runs on its own thread)."""
        for _ in range(5):
            try:
                return dict(self.daemon.engine.where)
            except RuntimeError:   # resized while copied: take it again
                continue
        return {}

    def write_record(self, path=None) -> int:
        """Copy the session's journaled events into the record file; return how many."""
        path = Path(path) if path is not None else self.record_path
        journal = self.daemon.journal
        if not self._closed:
            journal.flush()
        lines = [json.dumps(e.event.to_dict(), separators=(", ", ": ")) for e in journal.entries(self._record_from)]
        # A record is the technician's file, readable by whoever replays it.
        save_atomic(path, "".join(line + "\n" for line in lines), new_mode=0o644)
        return len(lines)

    # -- the dealer's thread -----------------------------------------------------------
    def submit(self, action: str, *args) -> None:
        """Queue a dealer's action; it runs on the dealer's thread."""
        self.submitted += 1
        self._actions.put((action, args))

    def pending(self) -> int:
        return self._actions.qsize()

    def _action(self, name: str):
        return self.player.step if name == "scenario_step" else self.hands.actions[name]

    def dealer_loop(self, cancelled: threading.Event | None = None) -> None:
        """Run queued actions until :meth:`close` (or *cancelled* is set)."""
        self._loop_done.clear()
        try:
            while not self._stop.is_set() and not (cancelled is not None and cancelled.is_set()):
                try:
                    action, args = self._actions.get(timeout=0.1)
                except queue.Empty:
                    continue
                try:
                    self._action(action)(*args)
                except (DealerboxError, OSError, ValueError, KeyError) as exc:
                    self.note(f"{action}: {exc}")
                except Exception as exc:
                    # One bad action must not end the technician's session.
                    log.debug("console action %s failed", action, exc_info=True)
                    self.note(f"{action} failed: {type(exc).__name__}: {exc}")
                finally:
                    self.actions_done += 1
        finally:
            self._loop_done.set()

    def _wait_for_rearm(self, uid: str) -> None:
        """Let the shoe reader forget *uid* (:meth:`DealerHands.wait_for_rearm`)."""
        self.hands.wait_for_rearm(uid)

    def settle(self, timeout: float = 3.0) -> bool:
        """Wait until the readers have reported what lies on them and the engine took it."""
        presence = self.config.presence
        time.sleep(min(1.5, max(presence.board_dropout_s, presence.shoe_rearm_s) + 0.15))
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.daemon.queue.empty():
                return True
            time.sleep(0.02)
        return False


# --------------------------------------------------------------------------
# The Textual app
# --------------------------------------------------------------------------

class SimConsole(App):
    """The simulated shoe's screen. See the module docstring.

    :param config_path: the table config (default :data:`dealerbox.service.config.DEFAULT_CONFIG`).
    :param record: the event file written on exit (default under ``state_dir/sim/``).
    :param scenario: a scenario file to play step by step.
    :param real: devices to switch to real hardware (``lcd``, ``panel``, reader names).
    :param config: an already loaded config, instead of *config_path*.
    """

    TITLE = "dealerbox sim"
    CSS = """
    Screen { layout: vertical; }
    #top { height: auto; }
    #table { width: 1fr; height: auto; border: round $primary; padding: 0 1; }
    #side { width: auto; height: auto; }
    #glass { width: auto; height: auto; border: round $primary; padding: 0 1; }
    #leds { width: auto; height: auto; border: round $primary; padding: 0 1; }
    #decisions { height: auto; border: round $primary; padding: 0 1; }
    #notes { height: 1fr; min-height: 6; border: round $primary; }
    #prompt { display: none; }
    #help { height: auto; color: $text-muted; }
    """
    BINDINGS = bindings()

    def __init__(self, config_path=None, *, record=None, scenario=None, real=None, config=None,
                 state_dir=None):
        super().__init__()
        if config is None:
            config = load_config(config_path or DEFAULT_CONFIG)
        self.session = ConsoleSession(with_real_devices(config, real), record=record, scenario=scenario,
                                      state_dir=state_dir)
        self._asking: str | None = None
        self._shown: dict[str, object] = {}

    # -- layout --------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(id="top"):
            yield Static(id="table", markup=False)
            with Vertical(id="side"):
                yield Static(id="glass", markup=False)
                yield Static(id="leds", markup=False)
        yield Static(id="decisions", markup=False)
        yield Log(id="notes", max_lines=500)
        yield Input(id="prompt")
        yield Static(HELP, id="help", markup=False)

    def on_mount(self) -> None:
        self.query_one("#table").border_title = "table"
        self.query_one("#leds").border_title = "LEDs"
        self.query_one("#decisions").border_title = "decisions"
        self.query_one("#notes").border_title = "what happened"
        # A service manager stops with SIGTERM, a dropped SSH session sends SIGHUP:
        # either ends the console as q does, so the record is written.
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(signum, self.exit)
        try:
            self.session.start()
        except Exception as exc:   # a real device that cannot be opened, a damaged journal, ...
            log.debug("the console could not start", exc_info=True)
            self.exit(return_code=2, message=f"dealerbox sim: cannot start: {exc}")
            return
        self.run_worker(self._dealer, thread=True, name="dealer", group="dealer", exit_on_error=False)
        self.refresh_view()
        self.set_interval(0.1, self.refresh_view)

    def _dealer(self) -> None:
        self.session.dealer_loop(get_current_worker().cancelled_event)

    def on_unmount(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            loop.remove_signal_handler(signum)
        self.session.close()

    # -- the screen ----------------------------------------------------------------------
    def _update(self, widget_id: str, content) -> None:
        key = content.plain if isinstance(content, Text) else content
        if self._shown.get(widget_id) == key:
            return
        self._shown[widget_id] = key
        self.query_one(f"#{widget_id}", Static).update(content)

    def refresh_view(self) -> None:
        """Redraw from the emulators and the daemon (a timer calls it every 0.1 s)."""
        s = self.session
        if s.daemon is None or not self.is_running or s.closed:
            return
        try:
            self._refresh_widgets(s)
        except NoMatches:
            # The screen is being torn down at exit: nothing left to draw on.
            return

    def _refresh_widgets(self, s: ConsoleSession) -> None:
        self._update("table", "\n".join(table_lines(s)))
        title, glass = glass_lines(s)
        self.query_one("#glass").border_title = title
        self._update("glass", "\n".join(glass))
        self._update("leds", leds_text(s))
        self._update("decisions", "\n".join(decision_lines(s)))
        fresh = []
        while True:
            try:
                fresh.append(s.unseen_notes.get_nowait())
            except queue.Empty:
                break
        if fresh:
            notes = self.query_one("#notes", Log)
            notes.write_lines(fresh, scroll_end=False)
            notes.scroll_end(animate=False)

    @property
    def glass(self) -> list[str]:
        """The glass as last drawn on the screen (suit symbols for the glyph slots)."""
        text = self._shown.get("glass")
        return text.split("\n") if isinstance(text, str) else []

    # -- the keys ------------------------------------------------------------------------
    def action_submit(self, action: str, *args) -> None:
        """Queue one of the dealer's actions (a key of :data:`~dealerbox.tools.console.keys.KEYS`)."""
        self.session.submit(action, *args)

    def action_write_record(self) -> None:
        try:
            n = self.session.write_record()
        except (DealerboxError, OSError) as exc:
            self.session.note(f"record: {exc}")
        else:
            self.session.note(f"wrote {n} events to {self.session.record_path}")

    def action_ask(self, what: str) -> None:
        asked = PROMPTS[what]
        self._asking = what
        prompt = self.query_one("#prompt", Input)
        prompt.border_title = asked.title
        prompt.placeholder = asked.placeholder
        prompt.value = ""
        prompt.display = True
        prompt.focus()

    def action_cancel_prompt(self) -> None:
        self._close_prompt()

    def _close_prompt(self) -> None:
        self._asking = None
        prompt = self.query_one("#prompt", Input)
        prompt.display = False
        self.set_focus(None)

    def on_input_submitted(self, message: Input.Submitted) -> None:
        what = self._asking
        value = message.value.strip()
        self._close_prompt()
        if what is None:
            return
        asked = PROMPTS[what]
        if asked.raw:
            self.session.submit(asked.action, value)
            return
        if value:
            try:
                parse_tag(value)
            except EventError as exc:
                self.session.note(str(exc))
                return
        self.session.submit(asked.action, value or None)


def no_terminal(stdin=None, stdout=None) -> str | None:
    """The one line ``dealerbox sim`` refuses with when standard input or output is
    not a terminal (nobody to press a key, nowhere to draw), else None."""
    if (stdin or sys.stdin).isatty() and (stdout or sys.stdout).isatty():
        return None
    return ("dealerbox sim: needs a terminal (it is an interactive screen); "
            "to play a session without one, use dealerbox run --input FILE")


def run_console(config_path=None, *, record=None, scenario=None, real=None, config=None,
                state_dir=None, stdin=None, stdout=None) -> int:
    """``dealerbox sim``: run the console until the technician quits; 0 when all went well.

    Refuses with one line (exit 2) when standard input or output is not a
    terminal: with no terminal there is no one to press a key.
    """
    refusal = no_terminal(stdin, stdout)
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    app = SimConsole(config_path, record=record, scenario=scenario, real=real, config=config,
                     state_dir=state_dir)
    try:
        app.run()
    finally:
        app.session.close()
    if app.return_code:
        return app.return_code
    if app.session.record_error:
        print(f"dealerbox sim: {app.session.record_error}")
        return 1
    if app.session.record_path.exists():
        print(f"dealerbox sim: session recorded in {app.session.record_path}; "
              f"replay it with: {app.session.replay_command()}")
    return 0
