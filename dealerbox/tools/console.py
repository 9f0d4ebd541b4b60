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

======= ==================================================================
``d``   deal: a random card of those the box believes are in the stub
``c``   deal a chosen card (a prompt: ``Ah``, ``10h``, ``9c/B``, ``joker``, a UID)
``x``   burn: a random card out of the shoe, left off the board
``f``   a board card: a random card drawn and laid on the board
``p``   put a card on the board (prompt; Enter alone: the last card drawn)
``o``   take a card off the board (prompt; Enter alone: the last card placed)
``g``   a card of deck B (another back)
``j``   a joker of the active deck
``i``   an unknown tag (prompt; Enter alone: ``04FFFFFFFFFF01``)
``l``   set the number of players (prompt: 2..10; steps the PLAYERS button)
``u``   unplug the board reader, or plug it back (``U``: the shoe reader)
``s``   play the scenario's next step
``w``   write the record now
``1``.. NEW HAND, ROUND DONE, EXPOSED, BOXED, ACK, RESHUFFLED, PREMATURE,
``0``   MISDEAL (a long FLOOR press when no MISDEAL button is wired), FLOOR,
        HAND OVER (then the dealer gathers the board)
``q``   quit (the record is written)
======= ==================================================================

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

A scenario file (``tests/scenarios/*.jsonl``: a header line, CONTRACT.md
events, ``{"expect": ...}`` lines) is played one step a key press: an event is
acted out at the table with :meth:`SimulatedTable.play`, an expectation is
checked against the live engine once the readers have settled. Events the
table cannot act out (``tick``, ``zone_*``, ``reader_*``; so the seat-antenna
scenarios do not apply) are skipped with a note. The header's profile is
applied to the session. Two events are played at least as far apart as their
``t`` says, and the same tag crosses the shoe again only once the reader has
forgotten it (``presence.shoe_rearm_s``), so grace periods and duplicates
play out as the file means; a slower technician only stretches time.

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
import os
import queue
import random
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Input, Log, Static

from ..rules.cards import DECK_52, JOKER, RANKS, SUITS
from ..errors import ConfigError, DealerboxError, EventError, RegistryError
from ..hw.buses import REAL
from ..rules.registry import normalize_uid
from ..rules.tracker import UNREAD_PREFIX

log = logging.getLogger("dealerbox.tools.console")

#: The panel's buttons in the order of the number keys 1..9, 0.
BUTTON_KEYS = (
    ("1", "new_hand"), ("2", "round_done"), ("3", "exposed"), ("4", "boxed"), ("5", "ack"),
    ("6", "reshuffled"), ("7", "premature"), ("8", "misdeal"), ("9", "floor"), ("0", "hand_over"),
)
#: The unknown tag the ``i`` key offers: a UID no deck registry holds.
DEFAULT_UNKNOWN_UID = "04FFFFFFFFFF01"
SUIT_SYMBOL = {"\x00": "\u2663", "\x01": "\u2666", "\x02": "\u2665", "\x03": "\u2660"}
LED_STYLE = {"green": "bold green", "amber": "bold yellow", "red": "bold red"}
#: A card the console drew is not offered again for this long, even if the
#: engine has not taken its shoe event yet (the readers and the engine run on
#: their own threads).
_RECENT_S = 2.0

HELP = ("d deal  c deal a card…  x burn  f board card  p place…  o lift…  g deck B  j joker  i unknown tag…  "
        "l players…  u board reader  U shoe reader  s scenario step  w write record  q quit\n"
        + "  ".join(f"{k} {name.upper().replace('_', ' ')}" for k, name in BUTTON_KEYS))


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
# Tags typed by the technician
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class TagChoice:
    """A tag the technician named: a card (of a deck) or a bare UID."""

    label: str
    card: str | None = None
    deck: str | None = None
    uid: str | None = None

    def kwargs(self) -> dict:
        """Keyword arguments of :meth:`SimulatedTable.draw`, ``place`` and ``lift``."""
        return {"card": self.card, "deck": self.deck, "uid": self.uid}


def parse_tag(text: str) -> TagChoice:
    """``Ah``, ``ah``, ``10h``, ``9c/B`` (a card of deck B), ``joker``, ``uid:04..`` or a bare hex UID.

    Raises :class:`EventError` with a message for the technician.
    """
    raw = text.strip()
    if not raw:
        raise EventError("no card given")
    body, _, deck = raw.partition("/")
    deck = deck.strip() or None
    body = body.strip()
    if deck is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", deck):
        raise EventError(f"{deck!r} is not a deck name")
    if body.lower() == JOKER:
        return TagChoice(JOKER + (f"/{deck}" if deck else ""), card=JOKER, deck=deck)
    code = body
    if len(code) == 3 and code[:2] == "10":
        code = "T" + code[2]
    if len(code) == 2:
        code = code[0].upper() + code[1].lower()
        if code[0] in RANKS and code[1] in SUITS:
            return TagChoice(code + (f"/{deck}" if deck else ""), card=code, deck=deck)
    if deck is None:
        hexa = body[4:] if body.lower().startswith("uid:") else body
        try:
            uid = normalize_uid(hexa)
        except RegistryError:
            pass
        else:
            return TagChoice(f"uid:{uid}", uid=uid)
    raise EventError(f"{raw!r} is not a card (Ah, 10h, 9c/B, joker) or a tag UID (04A1B2C3D4E5F6)")


# --------------------------------------------------------------------------
# Scenario files
# --------------------------------------------------------------------------

@dataclass
class Scenario:
    """A scenario file: its header and its lines (line number, object), played in order."""

    path: Path
    header: dict
    items: list
    position: int = 0

    @classmethod
    def load(cls, path) -> "Scenario":
        path = Path(path)
        header: dict = {}
        items = []
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise EventError(f"cannot read {path}: {exc.strerror or exc}") from exc
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise EventError(f"{path}: not JSON", line=n) from exc
            if not isinstance(obj, dict):
                raise EventError(f"{path}: not a JSON object", line=n)
            if "ev" not in obj and "expect" not in obj:
                if items or header:
                    raise EventError(f"{path}: neither an event nor an expectation", line=n)
                header = obj
                continue
            items.append((n, obj))
        return cls(path, header, items)

    @property
    def done(self) -> bool:
        return self.position >= len(self.items)

    def take(self):
        item = self.items[self.position]
        self.position += 1
        return item


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
    """A simulated table, the daemon reading it, and the dealer's actions.

    :param config: a loaded :class:`dealerbox.service.config.TableConfig`; the reader
        serving the shoe must be ``sim``.
    :param record: the event file to write the session to; None for
        ``state_dir/sim/session-<UTC time>.jsonl``.
    :param scenario: a scenario file to play step by step, or None.
    :param state_dir: the state folder of the console's own daemon (journal and
        records); None for ``state_dir/sim`` of *config*, so the console never
        recovers into the hand a ``dealerbox run`` on the same config left open.

    ``start()`` opens everything; ``submit(action, *args)`` queues a dealer's
    action (``deal``, ``burn``, ``board_card``, ``place``, ``lift``, ``button``,
    ``players``, ``foreign``, ``joker``, ``unknown``, ``toggle_reader``,
    ``scenario_step``), which :meth:`dealer_loop` runs one after the other on a
    thread of its own; ``close()`` stops, closes and writes the record (safe
    twice).
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
        self.rng = rng or random.Random()
        self.table = None
        self.daemon = None
        self.decisions: collections.deque = collections.deque(maxlen=50)
        self.notes: collections.deque = collections.deque(maxlen=500)
        self.unseen_notes: queue.SimpleQueue = queue.SimpleQueue()
        self.unplugged: set[str] = set()
        self.last_drawn: TagChoice | None = None
        self.last_placed: TagChoice | None = None
        self.on_felt: dict[str, str] = {}          # UID lying on the board antenna -> label
        self.submitted = 0                          # actions queued, and done: the tests wait on them
        self.actions_done = 0
        self.scenario_results: list[tuple[int, list[str]]] = []   # (line, failures) per expectation
        self._lock = threading.Lock()
        self._recent: dict[str, float] = {}
        self._left_shoe: dict[str, float] = {}     # UID -> when it last left the shoe's field
        self._scenario_mark: tuple[float, float] | None = None   # (file t, monotonic) of the last event played
        self._actions: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._loop_done = threading.Event()
        self._loop_done.set()
        self._record_from = 1
        self._handler = _NoteHandler(self)
        self._closed = False
        self._running = False
        self.record_error: str | None = None

    @staticmethod
    def _with_scenario_profile(config, scenario: Scenario):
        name = scenario.header.get("profile")
        if not name or name == config.profile.name:
            return config
        from ..rules.profiles import load_profile

        return dataclasses.replace(config, profile=load_profile(name))

    # -- lifetime ----------------------------------------------------------------------
    def start(self) -> None:
        """Build the simulated table, start the daemon on it."""
        from hardware_sim.table import SimulatedTable

        from ..service.daemon import Daemon

        logging.getLogger("dealerbox").addHandler(self._handler)
        self.table = SimulatedTable(self.config).__enter__()
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
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        os.replace(tmp, path)
        return len(lines)

    # -- the dealer's thread -----------------------------------------------------------
    def submit(self, action: str, *args) -> None:
        """Queue a dealer's action; it runs on the dealer's thread."""
        self.submitted += 1
        self._actions.put((action, args))

    def pending(self) -> int:
        return self._actions.qsize()

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
                    getattr(self, "do_" + action)(*args)
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

    # -- the dealer's hands (run on the dealer's thread) -------------------------------
    def _wait_for_rearm(self, uid: str) -> None:
        """Let the shoe reader forget *uid* before it crosses the field again.

        The presence tracker counts a tag seen again within ``shoe_rearm_s`` as
        the same draw; a card drawn twice (a duplicate, a returned card) must
        leave that much room or the box sees one draw.
        """
        gap = self.config.presence.shoe_rearm_s + 0.15
        last = self._left_shoe.get(uid)
        if last is not None:
            wait = gap - (time.monotonic() - last)
            if wait > 0:
                time.sleep(min(wait, 5.0))

    def _draw(self, tag: TagChoice) -> None:
        uid = self._uid(tag)
        self._wait_for_rearm(uid)
        self.table.draw(**tag.kwargs())
        self._left_shoe[uid] = time.monotonic()
        self.last_drawn = tag
        if tag.card is not None and tag.deck is None:
            self._recent[tag.card] = time.monotonic()

    def random_stub_card(self) -> str | None:
        """A card of the active deck the engine believes is still in the stub."""
        now = time.monotonic()
        where = self.where()
        stub = [c for c in DECK_52 if where.get(c) == "stub" and now - self._recent.get(c, -1e9) > _RECENT_S]
        return self.rng.choice(stub) if stub else None

    def do_deal(self, text: str | None = None) -> None:
        """A card leaves the shoe: the one named, else a random card of the stub."""
        if text:
            tag = parse_tag(text)
        else:
            card = self.random_stub_card()
            if card is None:
                self.note("deal: the stub is empty (as far as the box knows)")
                return
            tag = TagChoice(card, card=card)
        self._draw(tag)
        self.note(f"drew {tag.label}")

    def do_burn(self) -> None:
        """A burn: a card out of the shoe that stays off the board."""
        card = self.random_stub_card()
        if card is None:
            self.note("burn: the stub is empty (as far as the box knows)")
            return
        self._draw(TagChoice(card, card=card))
        self.note(f"burned {card}")

    def do_board_card(self) -> None:
        """A board card: drawn from the stub and laid on the board."""
        card = self.random_stub_card()
        if card is None:
            self.note("board card: the stub is empty (as far as the box knows)")
            return
        tag = TagChoice(card, card=card)
        self._draw(tag)
        self._place(tag)
        self.note(f"drew {card} onto the board")

    def _place(self, tag: TagChoice) -> None:
        self.table.place(zone="board", **tag.kwargs())
        self.on_felt[self._uid(tag)] = tag.label
        self.last_placed = tag

    def _uid(self, tag: TagChoice) -> str:
        return tag.uid or normalize_uid(self.table.uid_of(tag.card, tag.deck))

    def do_place(self, text: str | None = None) -> None:
        """Put a card on the board: the one named, else the last card drawn."""
        tag = parse_tag(text) if text else self.last_drawn
        if tag is None:
            self.note("place: no card drawn yet; name one")
            return
        self._place(tag)
        self.note(f"put {tag.label} on the board")

    def do_lift(self, text: str | None = None) -> None:
        """Take a card off the board: the one named, else the last card placed."""
        tag = parse_tag(text) if text else self.last_placed
        if tag is None:
            self.note("lift: nothing on the board; name a card")
            return
        self.table.lift(zone="board", **tag.kwargs())
        self.on_felt.pop(self._uid(tag), None)
        if self.last_placed == tag:
            self.last_placed = next(iter(self._felt_tags()), None)
        self.note(f"took {tag.label} off the board")

    def _felt_tags(self):
        for label in reversed(list(self.on_felt.values())):
            try:
                yield parse_tag(label)
            except EventError:
                continue

    def do_foreign(self, text: str | None = None) -> None:
        """A card of another deck (B unless the registry lacks it)."""
        registry = self.config.registry
        decks = [d for d in (registry.decks if registry else ["B"]) if d != (registry.active if registry else "A")]
        if not decks:
            self.note("deck B: the registry holds no other deck")
            return
        card = self.rng.choice(DECK_52)
        tag = parse_tag(text) if text else TagChoice(f"{card}/{decks[0]}", card=card, deck=decks[0])
        self._draw(tag)
        self.note(f"drew {tag.label} (another deck)")

    def do_joker(self) -> None:
        """A joker of the active deck: one the engine believes is still in the stub."""
        registry = self.config.registry
        uids = registry.uids_of(registry.active, JOKER) if registry else []
        where = self.where()
        uid = next((u for u in uids if where.get(f"joker:{u}") == "stub"), uids[0] if uids else None)
        tag = TagChoice(JOKER, uid=uid) if uid else TagChoice(JOKER, card=JOKER)
        self._draw(tag)
        self.note("drew a joker")

    def do_unknown(self, text: str | None = None) -> None:
        """A tag no deck holds."""
        tag = parse_tag(text or DEFAULT_UNKNOWN_UID)
        if tag.uid is None:
            self.note(f"unknown tag: {text!r} is a card; give a tag UID (04FFFFFFFFFF01)")
            return
        self._draw(tag)
        self.note(f"drew the tag {tag.label}")

    def do_button(self, name: str) -> None:
        """Press a panel button (MISDEAL is a long FLOOR press when no MISDEAL button is wired)."""
        if self.table.pin_factory is None:
            self.note(f"{name.upper()}: the panel is real; press its button")
            return
        buttons = self.config.panel.pins.buttons
        if name == "misdeal" and "misdeal" not in buttons and "floor" in buttons:
            self.table.press("floor", hold_s=self.config.panel.floor_hold_s + 0.3)
        elif name not in buttons:
            self.note(f"{name.upper()}: this panel has no such button")
            return
        else:
            self.table.press(name)
        if name == "new_hand":
            self._recent.clear()
        if name == "hand_over":
            self.table.sweep()
            self.on_felt.clear()
            self.last_placed = None
        self.note(f"pressed {name.upper().replace('_', ' ')}")

    def do_players(self, text: str) -> None:
        """Step the PLAYERS button to *text* players (2..10)."""
        try:
            players = int(text)
        except (TypeError, ValueError):
            players = 0
        if not 2 <= players <= 10:
            self.note(f"players: {text!r} is not 2..10")
            return
        if self.table.pin_factory is None:
            self.note("players: the panel is real; use its PLAYERS button")
            return
        self.table.set_players(players)
        self.note(f"players set to {players}")

    def do_toggle_reader(self, zone: str) -> None:
        """Unplug the reader serving *zone*, or plug it back."""
        name = self.config.zone_readers().get(zone)
        if name is None or name not in self.table.emulators:
            self.note(f"the {zone} reader is not simulated")
            return
        if name in self.unplugged:
            self.table.replug(name)
            self.unplugged.discard(name)
            self.note(f"plugged the {name} reader back")
        else:
            self.table.unplug(name)
            self.unplugged.add(name)
            self.note(f"unplugged the {name} reader")

    def do_scenario_step(self) -> None:
        """Play the scenario's next event, or check its next expectation."""
        sc = self.scenario
        if sc is None:
            self.note("no scenario loaded (dealerbox sim --scenario FILE)")
            return
        while not sc.done:
            n, obj = sc.take()
            if "expect" in obj:
                self._check_expectation(n, obj["expect"])
                return
            ev = obj.get("ev")
            self._pace_scenario(obj)
            if ev in ("new_hand", "shoe", "board_on", "board_off", "button"):
                if ev == "new_hand" and obj.get("hole_cards", 2) != self.config.panel.hole_cards:
                    self.note(f"line {n}: the panel deals {self.config.panel.hole_cards} hole cards, "
                              f"the scenario {obj['hole_cards']}")
                if ev == "button":
                    # MISDEAL may be a long FLOOR press on this panel: do_button knows.
                    self.do_button(obj["name"])
                else:
                    tag = _tag_of(obj)
                    if ev == "shoe":
                        self._wait_for_rearm(self._uid(tag))
                    self.table.play([obj], pace_s=0.0)
                    if ev == "shoe":
                        self._left_shoe[self._uid(tag)] = time.monotonic()
                    self._after_scenario_event(obj, tag)
                    if ev == "board_off":
                        # The board reader reports a card gone only after board_dropout_s:
                        # the next event must not overtake it.
                        time.sleep(self.config.presence.board_dropout_s + 0.1)
                self._mark_scenario(obj)
                self.note(f"scenario line {n}: {_event_text(obj)}")
                return
            self._mark_scenario(obj)
            if ev != "tick":
                self.note(f"scenario line {n}: {ev} skipped (the table cannot act it out)")
        self.note("scenario: the end")

    def _pace_scenario(self, obj: dict) -> None:
        """Leave at least the file's time between two events, so grace periods and
        the readers' presence timing see what the file meant."""
        if self._scenario_mark is None or not isinstance(obj.get("t"), (int, float)):
            return
        file_t, played = self._scenario_mark
        wait = (obj["t"] - file_t) - (time.monotonic() - played)
        if wait > 0:
            time.sleep(min(wait, 10.0))

    def _mark_scenario(self, obj: dict) -> None:
        if isinstance(obj.get("t"), (int, float)):
            self._scenario_mark = (float(obj["t"]), time.monotonic())

    def _after_scenario_event(self, obj: dict, tag: TagChoice) -> None:
        if obj["ev"] == "shoe":
            self.last_drawn = tag
        elif obj["ev"] == "board_on":
            self.on_felt[self._uid(tag)] = tag.label
            self.last_placed = tag
        elif obj["ev"] == "board_off":
            self.on_felt.pop(self._uid(tag), None)

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

    def _check_expectation(self, n: int, want: dict) -> None:
        from ..rules.scenario import check_expectation

        self.settle()
        fails = check_expectation(self.daemon.engine, want, n)
        if fails:
            for f in fails:
                self.note(f"scenario expectation differs: {f}")
        else:
            self.note(f"scenario line {n}: expectation met ({', '.join(sorted(want))})")
        self.scenario_results.append((n, fails))


def _tag_of(obj: dict) -> TagChoice:
    """The tag a card event names."""
    uid = normalize_uid(obj["uid"]) if obj.get("uid") else None
    label = obj.get("card") or f"uid:{uid}"
    if obj.get("deck"):
        label += f"/{obj['deck']}"
    return TagChoice(label, card=obj.get("card"), deck=obj.get("deck"), uid=uid)


def _event_text(obj: dict) -> str:
    ev = obj["ev"]
    what = obj.get("card") or obj.get("uid") or obj.get("name") or obj.get("players") or ""
    if obj.get("deck"):
        what = f"{what}/{obj['deck']}"
    return f"{ev} {what}".strip()


# --------------------------------------------------------------------------
# What the screen shows (read from the emulators and the daemon)
# --------------------------------------------------------------------------

def glass_symbols(line: str) -> str:
    """An LCD line with the suit glyph slots (CGRAM 0..3) shown as suit symbols.

    The other custom-character slots (4..7) show as a hollow box: a terminal
    must never receive control characters.
    """
    return "".join(SUIT_SYMBOL.get(ch, "\u25af" if ch < " " else ch) for ch in line)


def _label(key: str) -> str:
    """A card as the table view spells it: a card that left the stub unread has no name yet."""
    if key.startswith(UNREAD_PREFIX):
        return "(unread)"
    return JOKER if key.startswith("joker:") else key


def table_lines(session: ConsoleSession) -> list[str]:
    """Where the box believes the cards are: stub count, seats, board, burns, aside, muck."""
    engine = session.daemon.engine
    where = session.where()
    order = {c: i for i, c in enumerate(list(engine.deal_cards))}
    by_place: dict[str, list[str]] = collections.defaultdict(list)
    for key, place in where.items():
        by_place[place].append(key)
    panel = session.daemon.panel
    players = panel.players if panel is not None else session.config.panel.players
    lines = [f"{session.config.name} · {session.config.profile.name} · phase {engine.phase} · "
             f"panel players {players} · hand players {engine.players or '-'}",
             f"stub   {len(by_place.get('stub', []))} cards" + (
                 f"   drawn, not placed: {' '.join(_label(k) for k in by_place['hand'])}" if by_place.get("hand") else "")]
    seats = sorted((p for p in by_place if p.startswith("seat")), key=lambda p: int(p[4:]))
    for seat in seats:
        cards = sorted(by_place[seat], key=lambda c: order.get(c, 99))
        lines.append(f"seat {int(seat[4:]):<2} {' '.join(_label(c) for c in cards)}")
    if not seats:
        lines.append("seats  -")
    for place in ("board", "burn", "aside", "muck"):
        cards = by_place.get(place, [])
        name = "burns" if place == "burn" else place
        lines.append(f"{name:<6} {' '.join(_label(c) for c in cards) or '-'}")
    felt = list(session.on_felt.values())
    lines.append(f"felt   {' '.join(felt) or '-'}   (lying on the board antenna)")
    readers = "  ".join(f"{n} {'UNPLUGGED' if n in session.unplugged else r.backend}"
                        for n, r in session.config.readers.items())
    lines.append(f"readers {readers}")
    return lines


def glass_lines(session: ConsoleSession) -> tuple[str, list[str]]:
    """(title, LCD lines with suit symbols): the emulated glass, or the frame sent to a real LCD."""
    glass = session.table.glass()
    if glass:
        return "LCD", [glass_symbols(line) for line in glass]
    view = session.daemon.view
    lines = list(view.lines) if view is not None else []
    return "LCD (real; frame sent)", [glass_symbols(line) for line in lines]


def leds_text(session: ConsoleSession) -> Text:
    """The LED pins as lit now; a floor verdict's red is marked blinking."""
    view = session.daemon.view
    blink = bool(view is not None and view.blink)
    pins = session.table.leds()
    text = Text()
    if not pins:
        text.append("panel real; the box drives ")
        if view is not None:
            text.append(view.led.upper() + (" (blinking)" if blink else ""), style=LED_STYLE.get(view.led, ""))
        return text
    for colour in ("green", "amber", "red"):
        lit = pins.get(colour, False) or (blink and colour == "red")
        text.append("\u25cf " if lit else "\u25cb ", style=LED_STYLE[colour] if lit else "dim")
        label = colour.upper() if lit else colour
        if colour == "red" and blink:
            label += " (blinking)"
        text.append(label + "   ", style=LED_STYLE[colour] if lit else "dim")
    return text


def decision_lines(session: ConsoleSession, n: int = 6) -> list[str]:
    """The last decisions, newest last, and the step the dealer must do now."""
    out = []
    decisions = session.last_decisions(n)
    for d in decisions:
        steps = d.get("steps") or []
        counter = f" step {d['step'] + 1}/{len(steps)}" if steps and d["step"] < len(steps) else ""
        cards = f" [{' '.join(d.get('cards') or [])}]" if d.get("cards") else ""
        out.append(f"t={d['t']:9.2f}  {d['verdict']:<7} {d.get('irregularity') or '-'}{cards}{counter}")
    if decisions:
        d = decisions[-1]
        steps = d.get("steps") or []
        if steps and d["step"] < len(steps):
            out.append(f"now: {steps[d['step']]}")
        if d.get("rule"):
            out.append(f"rule: {d['rule']}")
    return out or ["no decision yet"]


# --------------------------------------------------------------------------
# The Textual app
# --------------------------------------------------------------------------

#: Prompts of the keys that ask for something: (title, placeholder, action).
_PROMPTS = {
    "deal": ("deal which card?", "Ah, 10h, 9c/B, joker or a UID", "deal"),
    "place": ("put which card on the board?", "Enter: the last card drawn", "place"),
    "lift": ("take which card off the board?", "Enter: the last card placed", "lift"),
    "unknown": ("draw which unknown tag?", f"Enter: {DEFAULT_UNKNOWN_UID}", "unknown"),
    "players": ("how many players?", "2..10", "players"),
}


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
    BINDINGS = [
        Binding("d", "deal", "deal", show=False),
        Binding("c", "ask('deal')", "deal a card", show=False),
        Binding("x", "burn", "burn", show=False),
        Binding("f", "board_card", "board card", show=False),
        Binding("p", "ask('place')", "place", show=False),
        Binding("o", "ask('lift')", "lift", show=False),
        Binding("g", "foreign", "deck B", show=False),
        Binding("j", "joker", "joker", show=False),
        Binding("i", "ask('unknown')", "unknown tag", show=False),
        Binding("l", "ask('players')", "players", show=False),
        Binding("u", "toggle_reader('board')", "board reader", show=False),
        Binding("U", "toggle_reader('shoe')", "shoe reader", show=False),
        Binding("s", "scenario_step", "scenario step", show=False),
        Binding("w", "write_record", "write record", show=False),
        Binding("q", "quit", "quit", show=False),
        Binding("escape", "cancel_prompt", "cancel", show=False),
    ] + [Binding(key, f"button('{name}')", name, show=False) for key, name in BUTTON_KEYS]

    def __init__(self, config_path=None, *, record=None, scenario=None, real=None, config=None,
                 state_dir=None):
        super().__init__()
        if config is None:
            from ..service.config import DEFAULT_CONFIG, load_config

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
        from textual.worker import get_current_worker

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
    def action_deal(self) -> None:
        self.session.submit("deal")

    def action_burn(self) -> None:
        self.session.submit("burn")

    def action_board_card(self) -> None:
        self.session.submit("board_card")

    def action_foreign(self) -> None:
        self.session.submit("foreign")

    def action_joker(self) -> None:
        self.session.submit("joker")

    def action_button(self, name: str) -> None:
        self.session.submit("button", name)

    def action_toggle_reader(self, zone: str) -> None:
        self.session.submit("toggle_reader", zone)

    def action_scenario_step(self) -> None:
        self.session.submit("scenario_step")

    def action_write_record(self) -> None:
        try:
            n = self.session.write_record()
        except (DealerboxError, OSError) as exc:
            self.session.note(f"record: {exc}")
        else:
            self.session.note(f"wrote {n} events to {self.session.record_path}")

    def action_ask(self, what: str) -> None:
        title, placeholder, _ = _PROMPTS[what]
        self._asking = what
        prompt = self.query_one("#prompt", Input)
        prompt.border_title = title
        prompt.placeholder = placeholder
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
        action = _PROMPTS[what][2]
        if action == "players":
            self.session.submit("players", value)
            return
        if value:
            try:
                parse_tag(value)
            except EventError as exc:
                self.session.note(str(exc))
                return
        self.session.submit(action, value or None)


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
