"""The table config: one TOML file says what is wired where, checked strictly at start.

Modelled on Klipper's config: every option has a type and bounds, an error names
the file, the dotted key, the value found and what was expected, and an option
nobody asked for is a typo (the closest known key is suggested). Nothing is ever
simulated unless the file says so: ``backend`` has no default on any device.

Every key is declared once, as a field of a section's frozen dataclass
(:mod:`dealerbox.options` says how); the loader's checks and the
reference, ``docs/CONFIG.md``, are made from those declarations
(``python -m dealerbox.service.config > docs/CONFIG.md``; a test fails when the
committed file is stale). Reader kinds declare their options in
:mod:`dealerbox.service.kinds`.

Public API
==========

:func:`load_config(path, *, check_devices=True) <load_config>` -> :class:`TableConfig`
    Reads and validates a file; raises the **first** :class:`ConfigError` met
    (start-up stops there). The daemon uses this.
:func:`check_config(path, *, check_devices=True) <check_config>` -> ``list[ConfigError]``
    Runs the same checks but **collects every** independent error, section by
    section, so a technician fixes a file in one pass (``dealerbox
    check-config``). An empty list means the file loads. The first error of the
    list is the one :func:`load_config` raises.
:data:`DEFAULT_CONFIG`
    ``firmware_config/tables/sim.toml``: the all-simulated table of ``make run``.
:func:`reference_markdown`
    The key reference, as ``docs/CONFIG.md`` holds it.

``check_devices=False`` skips what exists only on the installed box, so a Pi's
config can be checked on a laptop: the device nodes (``/dev/spidev*``,
``/dev/i2c-*``, serial devices, GPIO chips) and a deck registry *file that does
not exist yet* (then ``TableConfig.registry`` is None; a registry file that
exists is always checked).

The results are frozen dataclasses, one per section; drivers take their typed
section's fields by name::

    cfg = load_config(path)
    cfg.presence.shoe_rearm_s                 # PresenceSection
    cfg.readers["board"].options.spi_hz        # RC522Options (dealerbox.service.kinds)
    cfg.lcd.cols, cfg.panel.pins.leds          # LcdConfig, PanelConfig

Adding a section
================

A section is one frozen, keyword-only dataclass and one registration line::

    @dataclass(frozen=True, kw_only=True)
    class FloorSection:
        \"\"\"[floor]: decisions reported to the floor manager (off when the section is left out).\"\"\"

        enabled: bool = option(Flag(doc="report to the floor"), False)
        url: str | None = option(Text(doc="where the floor listens"), None)
        pin: int | None = option(Pin(doc="a call-the-floor lamp", none_word="none"), None)

    register_section("floor", FloorSection)

Every key is then checked (type, bounds, unknown keys with a suggestion),
:class:`Pin` / :class:`PinTable` fields are taken in the one pin book (a pin is
used once, both users named), ``cfg.floor`` is the typed section (its defaults
when the file has no ``[floor]``), and the next ``docs/CONFIG.md`` has its table
(regenerate it; a test says when it is stale). Checks across keys go in a
``validate(values, fail)`` staticmethod of the dataclass: *values* maps each key
that passed its own check to its value, and ``fail(key, expected, value)``
reports a problem (*key* below the section).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dealerbox.errors import ConfigError, RegistryError
from dealerbox.hw.buses import BACKENDS, I2C_PINS, simulated
from dealerbox.hw.gpio_panel import PANEL_BUTTON_ORDER, PIN_FACTORY_KINDS, PanelGpio, PanelPins
from dealerbox.hw.lcd import PanelLcd
from dealerbox.service.kinds import READER_KINDS as _KINDS, reader_kind
from dealerbox.hw.presence import SETTLE_S, SHOE_REARM_S, PresenceTracker
from dealerbox.domain.messages import LANGUAGES, load_messages
from dealerbox.rules.profiles import Profile, available_profiles, load_profile
from dealerbox.domain.badges import BadgeRegistry, simulation_badges
from dealerbox.domain.decks import DeckRegistry, simulation_registry
from dealerbox.resources import data_dir, is_inside_package, user_state_dir
from dealerbox.tomlfile import read_toml
from dealerbox.service.uplink import FloorSettings
from dealerbox.service.journal import SYNC_POLICIES, Journal
from dealerbox.options import (BAD, ZONES, Choice, Flag, Integer, Number, Pin, PinBook, PinTable, Text, is_bad,
                     markdown_table, option, options_of, read_fields, suggest, take_pins, unknown_keys)

__all__ = [
    "DEFAULT_CONFIG", "TABLES_DIR", "ZONES", "READER_KINDS", "BACKENDS", "BUILTIN_SIM_REGISTRY",
    "TableSection", "JournalSection", "GpioSection", "ReaderSection", "PresenceSection", "LcdConfig",
    "PanelConfig", "ReaderConfig", "TableConfig", "SECTIONS", "register_section",
    "load_config", "check_config", "reference_markdown",
    # for sections declared elsewhere
    "option", "Text", "Integer", "Number", "Choice", "Flag", "Pin", "PinTable",
]

TABLES_DIR = data_dir("tables")
DEFAULT_CONFIG = TABLES_DIR / "sim.toml"

REQUIRED_ZONES = ("shoe", "board")
READER_KINDS = tuple(_KINDS)
BUILTIN_SIM_REGISTRY = "builtin:sim"
LCD_SIZES = ((20, 4), (16, 2))
LCD_CHARMAPS = ("A00", "A02")

# Where device nodes are looked for; tests point it at a folder of stand-ins.
_DEV = Path("/dev")

_READER_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
_BUTTON_NAMES = PANEL_BUTTON_ORDER


# -- the sections ----------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class TableSection:
    """The table, its rules and where its state lives."""

    name: str = option(Text(doc="the table's name (logs, LCD, STATUS=)", max_len=40))
    profile: str = option(Text(doc="the rule profile: a shipped name, or a path to a profile file (relative "
                                   "to the config's folder)",
                               expect=f"one of {', '.join(available_profiles())}, or a path to a profile .toml",
                               bounds_doc=f"{', '.join(available_profiles())}, or a path ending in .toml"))
    language: str = option(Choice(doc="language of the LCD texts and the decisions", choices=LANGUAGES), "en")
    registry: str = option(Text(doc="the deck registry: the built-in simulation decks, or a file (relative to "
                                    "the config's folder)",
                                expect=f"{BUILTIN_SIM_REGISTRY!r} or a path to a deck registry file",
                                bounds_doc=f'"{BUILTIN_SIM_REGISTRY}" or a path'))
    state_dir: str = option(Text(doc="journal and state; relative to the config's folder",
                                 expect="a path to the state folder", bounds_doc="a path"))
    tick_s: float = option(Number(doc="period of the `tick` events (CONTRACT.md)", lo=0.05, hi=2.0), 0.25)


@dataclass(frozen=True, kw_only=True)
class JournalSection:
    """How the journal is written (see dealerbox/service/journal/__init__.py)."""

    sync: str = option(Choice(doc="fsync policy", choices=SYNC_POLICIES), "event")
    keep_days: int = option(Integer(doc="days of journal files kept after daily rotation", lo=1, hi=3650), 90)
    group_window_s: float = option(Number(doc='with `sync = "group"`: longest an event stays unsynced',
                                          lo=0.001, hi=5.0), 0.05)
    group_events: int = option(Integer(doc='with `sync = "group"`: fsync at least every N events',
                                       lo=1, hi=100_000), 64)

    queue_lines: int = option(Integer(doc="lines held in memory while the disk cannot be written; past that a "
                                          "`gap` line records what was lost", lo=2, hi=1_000_000), 20_000)
    retry_s: float = option(Number(doc="how often a failed journal write is tried again", lo=0.01, hi=60.0), 0.5)

    def open(self, directory, **overrides):
        """The :class:`~dealerbox.service.journal.Journal` in *directory*, written as this section says.

        *overrides* are Journal keyword arguments a caller sets itself (tests, ``keep_from_seq``)."""
        options = dict(sync=self.sync, keep_days=self.keep_days, group_window=self.group_window_s,
                       group_events=self.group_events, queue_lines=self.queue_lines, retry_s=self.retry_s)
        options.update(overrides)
        return Journal(directory, **options)


@dataclass(frozen=True, kw_only=True)
class GpioSection:
    """The pin factory of the real GPIO devices."""

    factory: str = option(Choice(doc='gpiozero pin factory of the real GPIO devices (`auto`: RPi.GPIO on a '
                                     'Pi 3/4, lgpio on a Pi 5); `mock` only when every GPIO device is `sim`',
                                 choices=PIN_FACTORY_KINDS))


@dataclass(frozen=True, kw_only=True)
class ReaderSection:
    """The keys every reader has; its kind adds its own (below)."""

    kind: str = option(Choice(doc="the driver (its keys below)", choices=READER_KINDS))
    backend: str = option(Choice(doc="the chip emulator or the real device", choices=BACKENDS))
    poll_s: float = option(Number(doc="poll period of this reader: polls start on a fixed grid, a late poll "
                                      "skips the slots it missed", lo=0.001, hi=1.0), 0.01)


@dataclass(frozen=True, kw_only=True)
class PresenceSection:
    """How polls become card events (defaults justified in dealerbox/hw/presence.py)."""

    shoe_rearm_s: float = option(Number(doc="a card read again after this long is a new draw", lo=0.0, hi=10.0),
                                 SHOE_REARM_S)
    board_dropout_s: float = option(Number(doc="a board card unseen this long is `board_off`", lo=0.0, hi=10.0),
                                    0.5)
    zone_dropout_s: float = option(Number(doc="the same for the other zones", lo=0.0, hi=10.0), 0.5)
    settle_s: float = option(Number(doc="a card must be seen this long before it is `on`", lo=0.0, hi=5.0),
                             SETTLE_S)

    def tracker(self, *, mouth_window: float | None = None, max_tags: int | None = None):
        """A :class:`~dealerbox.hw.presence.PresenceTracker` with these timings."""
        return PresenceTracker(shoe_rearm=self.shoe_rearm_s, board_dropout=self.board_dropout_s,
                               zone_dropout=self.zone_dropout_s, settle=self.settle_s,
                               mouth_window=mouth_window, max_tags=max_tags)


@dataclass(frozen=True, kw_only=True)
class MouthSensorSection:
    """[mouth_sensor]: the photo-interrupter counting cards at the shoe's mouth (dealerbox/hw/mouth.py;
    none when the section is left out or its pin is "none"). A sensor on a pin says its `backend`, as
    every device does. Wiring: firmware_config/tables/README.md."""

    backend: str | None = option(Choice(doc="gpiozero MockFactory or `gpio.factory`; required with a `pin`",
                                        choices=BACKENDS), None)
    pin: int | None = option(Pin(doc="the sensor's output", none_word="none", none_means="no sensor"), None)
    read_window_s: float = option(Number(doc="a tag read belongs to a count this close; none: `unread`",
                                         lo=0.02, hi=1.0), 0.15)
    blocked_level: str = option(Choice(doc="the output's level while a card breaks the beam",
                                       choices=("low", "high")), "low")

    @staticmethod
    def validate(values: dict, fail) -> None:
        # Nothing is simulated unless the file says so: a sensor with no backend is never taken as "sim".
        if values.get("pin") is not None and values.get("backend") is None:
            fail("backend", f"{' or '.join(BACKENDS)}: a mouth sensor on a pin says which", found=False)


@dataclass(frozen=True, kw_only=True)
class LcdConfig:
    """The character LCD on its PCF8574 I2C backpack."""

    backend: str = option(Choice(doc="I2C emulator or `/dev/i2c-<port>`", choices=BACKENDS))
    port: int = option(Integer(doc="I2C bus number", lo=0, hi=20, expect="an I2C bus number from 0 to 20"), 1)
    address: int = option(Integer(doc="the PCF8574 backpack's address", lo=0x03, hi=0x77, hex=True,
                                  expect="a 7-bit I2C address from 0x03 to 0x77 (usually 0x27 or 0x3F)"), 0x27)
    cols: int = option(Integer(doc="the glass: 20x4 or 16x2", lo=1, hi=40), 20)
    rows: int = option(Integer(doc="rows of the glass", lo=1, hi=4), 4)
    charmap: str = option(Choice(doc="the module's character ROM", choices=LCD_CHARMAPS), "A00")

    @staticmethod
    def validate(values: dict, fail) -> None:
        cols, rows = values.get("cols"), values.get("rows")
        if cols is not None and rows is not None and (cols, rows) not in LCD_SIZES:
            fail("rows", f"a 20x4 or a 16x2 display (cols x rows), not {cols}x{rows}", rows)

    @property
    def device_node(self) -> str:
        return f"/dev/i2c-{self.port}"

    def open(self, bus):
        """The :class:`~dealerbox.hw.lcd.PanelLcd` on I2C *bus* (what :meth:`Buses.i2c` handed out)."""
        return PanelLcd(bus=bus, cols=self.cols, rows=self.rows, port=self.port, address=self.address,
                        charmap=self.charmap)


@dataclass(frozen=True, kw_only=True)
class PanelConfig:
    """LEDs, buzzer and buttons."""

    backend: str = option(Choice(doc="gpiozero MockFactory or `gpio.factory`", choices=BACKENDS))
    leds: dict = option(PanelPins.LEDS)
    buzzer: int | None = option(PanelPins.BUZZER, None)
    buttons: dict = option(PanelPins.BUTTONS, {})
    debounce_s: float = option(Number(doc="a button edge counts after this much quiet", lo=0.001, hi=0.5), 0.03)
    floor_hold_s: float = option(Number(doc="a FLOOR press this long sends `misdeal`", lo=0.3, hi=10.0), 1.5)
    players: int = option(Integer(doc="player count at start (the players button steps it)", lo=2, hi=10), 6)
    hole_cards: int = option(Integer(doc="`hole_cards` of `new_hand`", lo=2, hi=4, only=(2, 4), expect="2 or 4",
                                     bounds_doc="2 or 4"), 2)

    @property
    def pins(self) -> PanelPins:
        return PanelPins(leds=dict(self.leds), buttons=dict(self.buttons), buzzer=self.buzzer)

    def open(self, *, pin_factory, sink, **runtime):
        """The :class:`~dealerbox.hw.gpio_panel.PanelGpio` on *pin_factory*; *runtime* are its other
        arguments (``clock``, ``on_players``, ``poll_interval_s``...)."""
        return PanelGpio(self.pins, pin_factory=pin_factory, sink=sink, debounce_s=self.debounce_s,
                         floor_hold_s=self.floor_hold_s, players=self.players, hole_cards=self.hole_cards,
                         **runtime)


@dataclass(frozen=True)
class ReaderConfig:
    """One ``[readers.NAME]`` section: the common keys and the kind's typed options."""

    name: str
    kind: str
    backend: str
    poll_s: float
    options: Any                  # the kind's options dataclass (dealerbox.service.kinds)

    @property
    def zones(self) -> tuple[str, ...]:
        """The zones this reader serves, in antenna order."""
        return tuple(reader_kind(self.kind).zone_keys(self.options))

    @property
    def device_node(self) -> str | None:
        """The device node a real reader opens, or None (a pyserial URL, or no URL)."""
        node = reader_kind(self.kind).node(self.options)
        return node.node if node is not None else None

    @property
    def drives_gpio(self) -> bool:
        """True when this reader, on real hardware, drives GPIO pins (an RC522's reset line)."""
        return reader_kind(self.kind).gpio(self.options)

    @property
    def driver(self) -> str:
        """Dotted name of the driver class."""
        return reader_kind(self.kind).driver


@dataclass(frozen=True)
class _Registered:
    name: str
    cls: type
    required: bool


#: The declared sections in the order they are checked (``[readers.*]`` is read between gpio and presence).
SECTIONS: dict[str, _Registered] = {}


def register_section(name: str, cls: type, *, required: bool = False) -> None:
    """Declare section ``[name]`` with the options of dataclass *cls* (see the module docstring)."""
    if name in SECTIONS or name == "readers":
        raise ValueError(f"section [{name}] is declared already")
    SECTIONS[name] = _Registered(name, cls, required)


register_section("table", TableSection, required=True)
register_section("journal", JournalSection)
register_section("gpio", GpioSection, required=True)
register_section("presence", PresenceSection)
register_section("mouth_sensor", MouthSensorSection)
register_section("lcd", LcdConfig, required=True)
register_section("panel", PanelConfig, required=True)
register_section("floor", FloorSettings)  # floor reporting: docs/floor/install.md


@dataclass(frozen=True, kw_only=True)
class BadgesSection:
    """[badges]: the dealers' badges, which sign a dealer in when held to the shoe reader between hands
    (`dealerbox badge register`)."""

    registry: str = option(Text(doc="the badge registry: a file (relative to the config's folder; while it does "
                                    "not exist no badge is known, and the first `dealerbox badge register` makes "
                                    f"it), or `{BUILTIN_SIM_REGISTRY}`, the simulated table's badges",
                                expect=f"{BUILTIN_SIM_REGISTRY!r} or a path to a badge registry file",
                                bounds_doc=f'"{BUILTIN_SIM_REGISTRY}" or a path'), "badges.toml")


register_section("badges", BadgesSection)


def _top_sections() -> tuple[str, ...]:
    names = list(SECTIONS)
    names.insert(names.index("gpio") + 1, "readers")
    return tuple(names)


@dataclass(frozen=True)
class TableConfig:
    """A validated table config. ``sections`` holds every declared section by name
    (``cfg.presence`` is ``cfg.sections["presence"]``; sections declared with
    :func:`register_section` are attributes the same way)."""

    path: Path
    name: str
    profile: Profile
    language: str
    registry: DeckRegistry | None
    registry_source: str           # "builtin:sim" or the registry file's absolute path
    state_dir: Path
    tick_s: float
    gpio_factory: str
    readers: dict[str, ReaderConfig]
    sections: dict[str, Any] = field(repr=False)
    #: The dealers' badges ([badges]); empty while the registry file does not exist.
    badge_registry: BadgeRegistry = field(default_factory=BadgeRegistry, repr=False)
    badge_source: str = BUILTIN_SIM_REGISTRY   # "builtin:sim" or the badge registry file's absolute path

    def __getattr__(self, name: str):
        sections = self.__dict__.get("sections")
        if sections is not None and name in sections:
            return sections[name]
        raise AttributeError(f"{type(self).__name__!r} has no attribute or section {name!r}")

    @property
    def device_backends(self) -> dict[str, str]:
        """Config key of each device (``readers.NAME``, ``panel``, ``lcd``) -> its ``backend``."""
        out = {f"readers.{n}": r.backend for n, r in self.readers.items()}
        out["panel"] = self.panel.backend
        out["lcd"] = self.lcd.backend
        return out

    @property
    def simulated_devices(self) -> tuple[str, ...]:
        """Config keys of the devices on the simulated backend (for a start-up log line)."""
        return tuple(k for k, b in self.device_backends.items() if simulated(b))

    @property
    def real_devices(self) -> tuple[str, ...]:
        """Config keys of the devices on the box's own hardware."""
        return tuple(k for k, b in self.device_backends.items() if not simulated(b))

    @property
    def device_nodes(self) -> tuple[str, ...]:
        """Device nodes the real devices open (what systemd's ``DeviceAllow=`` needs)."""
        real = set(self.real_devices)
        nodes = [r.device_node for n, r in self.readers.items() if f"readers.{n}" in real and r.device_node]
        if "lcd" in real:
            nodes.append(self.lcd.device_node)
        return tuple(dict.fromkeys(nodes))

    def zone_readers(self) -> dict[str, str]:
        """Zone -> name of the reader serving it."""
        return {z: r.name for r in self.readers.values() for z in r.zones}

    @property
    def deck_reader(self) -> str:
        """The reader ``deck register`` and ``deck check`` use on this table: the one
        serving the board, where a deck is laid card by card (every valid table has one)."""
        return self.zone_readers()["board"]


# -- collecting errors --------------------------------------------------------------

class _Stop(Exception):
    """Raised when collecting to abandon what cannot be checked further."""


class _Errors:
    """Raises at the first error (``collect=False``) or gathers them all."""

    def __init__(self, file: Path, collect: bool):
        self.file = file
        self.collect = collect
        self.found: list[ConfigError] = []

    def fail(self, key: str, expected: str, value=None, *, found: bool = True):
        return self.add(ConfigError(self.file, key, expected, value, found=found))

    def add(self, error: ConfigError):
        if not self.collect:
            raise error
        self.found.append(error)
        return BAD


# -- loading ------------------------------------------------------------------------

def load_config(path=DEFAULT_CONFIG, *, check_devices: bool = True) -> TableConfig:
    """Read and validate a table config; raise the first :class:`ConfigError`.

    Relative paths inside the file (``state_dir``, ``registry``, a profile file)
    are relative to the file's folder, wherever the command runs; a ``state_dir``
    among the shipped files is moved (:func:`writable_state_dir`).
    ``check_devices=False`` skips the checks of what exists only on the box
    (device nodes; a registry file not there yet).
    """
    return _Loader(Path(path), collect=False, check_devices=check_devices).run()


def writable_state_dir(state_dir: Path) -> Path:
    """*state_dir* (resolved), unless it lies among the shipped files, where nothing
    is written: a shipped table's ``state_dir = "state"`` goes to the checkout's
    ``state/`` when run from a checkout, and to the user's state folder
    (:func:`dealerbox.resources.user_state_dir`) when the package is installed."""
    if is_inside_package(state_dir):
        return user_state_dir()
    shipped = TABLES_DIR.resolve()
    if state_dir.is_relative_to(shipped):
        return shipped.parents[1] / "state"     # the checkout's top folder: firmware_config/tables/../..
    return state_dir


def check_config(path, *, check_devices: bool = True) -> list[ConfigError]:
    """Every error :func:`load_config` would meet, one per broken key.

    The order is fixed, and its first error is the one :func:`load_config`
    raises: unknown sections, then section by section ([table], [journal],
    [gpio], [readers.*], [presence], [lcd], [panel], then sections registered
    later), then the cross checks (gpio factory, zones), the device nodes, and
    last the profile and registry files. A broken value is reported once; checks
    that depend on it (a pin used twice when the pin itself is not a pin) are
    skipped. A file that is not readable TOML, or has no [table], gives one
    error. An empty list means the file loads.
    """
    loader = _Loader(Path(path), collect=True, check_devices=check_devices)
    try:
        loader.run()
    except _Stop:
        pass
    return loader.errors.found


class _Loader:
    """Checks one file against the declared sections; the context options report through."""

    def __init__(self, path: Path, *, collect: bool, check_devices: bool):
        self.path = path
        self.folder = path.resolve().parent
        self.errors = _Errors(path, collect)
        self.check_devices = check_devices
        self.pins = PinBook(self.fail)
        self.ports: dict[str, str] = {}       # device node or URL -> key of the reader using it

    # -- what options and reader kinds call ---------------------------------------------
    def fail(self, key: str, expected: str, value=None, *, found: bool = True):
        return self.errors.fail(key, expected, value, found=found)

    def take_pin(self, pin: int, key: str, who: str | None = None) -> bool:
        """A BCM pin is used once: a second user is an error naming the first."""
        return self.pins.take(pin, key, who)

    def take_bus_pins(self, key: str, bus_name: str, pins) -> None:
        # Several devices share a bus's data lines; only a second *kind* of user conflicts.
        for signal, pin in pins.items():
            who = f"{bus_name} {signal}"
            first = self.pins.users.get(pin)
            if first is not None and first.endswith(f"({who})"):
                continue
            self.take_pin(pin, key, f"{key} ({who})")

    def claim_port(self, port: str, key: str, value) -> bool:
        """One reader per SPI chip select or serial port; False (and an error) for a second."""
        first = self.ports.get(port)
        if first is not None:
            self.fail(key, f"a port no other reader uses ({port} is already {first})", value)
            return False
        self.ports[port] = key
        return True

    def check_url(self, key: str, url: str) -> bool:
        import serial  # pyserial: a dependency of the serial drivers, light to import

        try:
            # Opens nothing; rejects a URL scheme pyserial does not know.
            serial.serial_for_url(url, do_not_open=True)
        except (ValueError, TypeError, AttributeError) as exc:
            self.fail(key, f"a serial device path or a URL pyserial knows ({exc})", url)
            return False
        return self.claim_port(url, key, url)

    # -- the file ----------------------------------------------------------------------
    def stop(self) -> None:
        if self.errors.found:
            raise _Stop

    def resolve(self, text: str) -> Path:
        p = Path(text).expanduser()
        return (p if p.is_absolute() else self.folder / p).resolve()

    def read(self) -> dict:
        try:
            return read_toml(self.path, "table config")
        except ConfigError as exc:
            self.fail(exc.key, exc.expected, exc.value)
            raise _Stop from exc

    def run(self) -> TableConfig:
        data = self.read()
        top = _top_sections()
        for key, value in data.items():
            if key not in top:
                self.fail(key, f"a known section{suggest(key, top)}; the sections are "
                          f"{', '.join('[' + s + ']' for s in top)}", value)
        sections: dict[str, Any] = {}
        readers = BAD
        for name, reg in SECTIONS.items():
            sections[name] = self.read_section(data, reg)
            if name == "table" and sections[name] is BAD and "table" not in data:
                raise _Stop          # only when collecting: otherwise the error was raised
            if name == "gpio":
                readers = self.read_readers(data)
        table = self.table_extras(sections["table"])
        gpio, panel, lcd = sections["gpio"], sections["panel"], sections["lcd"]
        gpio_factory = gpio.factory if gpio is not BAD else BAD
        real = self.real_devices(readers, panel, lcd)
        if gpio_factory is not BAD and readers is not BAD and panel is not BAD:
            self.check_gpio_factory(gpio_factory, readers, real)
        if readers is not BAD:
            self.check_zones(readers)
        if self.check_devices:
            self.check_device_nodes(readers, lcd, gpio_factory, real)
        # Files outside this one last: their errors name their own file.
        profile = self.load_profile(table["profile"]) if table["profile"] is not BAD else None
        registry = self.load_registry(table) if table["registry_source"] is not BAD else None
        badges = self.load_badges(sections["badges"], registry) if sections["badges"] is not BAD else None
        self.stop()
        t = sections["table"]
        return TableConfig(
            path=self.path.resolve(), name=t.name, profile=profile, language=t.language, registry=registry,
            registry_source=table["registry_source"], state_dir=writable_state_dir(self.resolve(t.state_dir)),
            tick_s=t.tick_s, gpio_factory=gpio_factory, readers=readers, sections=sections,
            badge_registry=badges[0], badge_source=badges[1])

    # -- sections ------------------------------------------------------------------------
    def read_section(self, data: dict, reg: _Registered):
        """A declared section: its keys checked, its pins taken, its own checks run; or BAD."""
        if reg.name not in data:
            if reg.required:
                return self.fail(f"[{reg.name}]", "a section (it is required)", found=False)
            body = {}
        else:
            body = data[reg.name]
            if not isinstance(body, dict):
                return self.fail(reg.name, "a table", body)
        unknown_keys(self, reg.name, body, [k for k, _o, _d in options_of(reg.cls)])
        values = read_fields(self, reg.name, body, reg.cls)
        if reg.name == "lcd" and values["port"] in I2C_PINS:
            self.take_bus_pins(f"{reg.name}.port", f"I2C{values['port']}", I2C_PINS[values["port"]])
        return self.finish(reg.name, reg.cls, values)

    def finish(self, prefix: str, cls, values: dict):
        """Take the pins of *values*, run the section's ``validate``, build it; the section or BAD."""
        pins_ok = take_pins(self, prefix, cls, values)
        good = {k: v for k, v in values.items() if not is_bad(v)}
        before = len(self.errors.found)
        validate = getattr(cls, "validate", None)
        if validate is not None:
            validate(good, lambda key, expected, value=None, **kw: self.fail(f"{prefix}.{key}", expected, value, **kw))
        if not pins_ok or len(good) < len(values) or len(self.errors.found) > before:
            return BAD
        return cls(**values)

    def table_extras(self, t) -> dict:
        """What [table] needs beyond its declared types: the profile, language and registry looked up."""
        if t is BAD:
            return {"profile": BAD, "registry_source": BAD}
        out = {"profile": t.profile, "registry_source": BAD}
        profiles = available_profiles()
        if not t.profile.endswith(".toml") and t.profile not in profiles:
            out["profile"] = self.fail("table.profile", f"one of {', '.join(profiles)}, or a path to a profile "
                                       f".toml{suggest(t.profile, profiles)}", t.profile)
        elif t.profile.endswith(".toml") and not self.resolve(t.profile).is_file():
            out["profile"] = self.fail("table.profile",
                                       f"an existing profile file ({self.resolve(t.profile)} is not one)", t.profile)
        try:
            load_messages(t.language)
        except ConfigError as exc:
            self.errors.add(exc)
        if t.registry == BUILTIN_SIM_REGISTRY:
            out["registry_source"] = t.registry
        elif t.registry.startswith("builtin:"):
            self.fail("table.registry", f"the only built-in registry is {BUILTIN_SIM_REGISTRY!r}, or a path to a "
                      "deck registry file", t.registry)
        else:
            out["registry_source"] = str(self.resolve(t.registry))
        out["registry"] = t.registry
        return out

    def read_readers(self, data: dict):
        if "readers" not in data:
            return self.fail("[readers.NAME]", "at least one reader section", found=False)
        body = data["readers"]
        if not isinstance(body, dict) or not body or not all(isinstance(v, dict) for v in body.values()):
            return self.fail("readers", "one [readers.NAME] table per reader", body)
        readers: dict[str, ReaderConfig] = {}
        ok = True
        for name, section in body.items():
            reader = self.read_reader(name, section)
            if reader is BAD:
                ok = False
            else:
                readers[name] = reader
        return readers if ok else BAD

    def read_reader(self, name: str, body: dict):
        base = f"readers.{name}"
        if not _READER_NAME.fullmatch(name):
            return self.fail(base, "a reader name of a-z, 0-9, _ and - (up to 32 characters)", name)
        common = [k for k, _o, _d in options_of(ReaderSection)]
        kind = _KINDS.get(body.get("kind"))
        if kind is not None:
            known = common + [k for k, _o, _d in options_of(kind.options)]
        else:
            known = list(dict.fromkeys(common + [k for kd in _KINDS.values() for k, _o, _d in options_of(kd.options)]))
        unknown_keys(self, base, body, known)
        head = read_fields(self, base, body, ReaderSection)
        if kind is None:
            return BAD
        values = read_fields(self, base, body, kind.options)
        if any(is_bad(v) for v in values.values()):
            take_pins(self, base, kind.options, values)
            return BAD
        options = kind.options(**values)
        claimed = kind.claim(self, base, options, head["backend"])
        pins_ok = take_pins(self, base, kind.options, values)
        if not claimed or not pins_ok or any(is_bad(v) for v in head.values()):
            return BAD
        return ReaderConfig(name=name, kind=head["kind"], backend=head["backend"], poll_s=head["poll_s"],
                            options=options)

    # -- cross checks ---------------------------------------------------------------------
    @staticmethod
    def real_devices(readers, panel, lcd) -> set[str]:
        """Keys of the devices (of those that loaded) on real hardware."""
        backends = {f"readers.{n}": r.backend for n, r in readers.items()} if readers is not BAD else {}
        backends.update({key: dev.backend for key, dev in (("panel", panel), ("lcd", lcd)) if dev is not BAD})
        return {key for key, backend in backends.items() if not simulated(backend)}

    def check_gpio_factory(self, factory: str, readers: dict, real: set[str]) -> None:
        if factory != "mock":
            return
        users = [f"readers.{r.name}" for r in readers.values() if f"readers.{r.name}" in real and r.drives_gpio]
        if "panel" in real:
            users.insert(0, "panel")
        if users:
            self.fail("gpio.factory", f"auto, rpigpio or lgpio: {', '.join(users)} drive real GPIO pins "
                      "(\"mock\" only when every GPIO device is sim)", factory)

    def check_zones(self, readers: dict) -> None:
        served: dict[str, str] = {}
        for reader in readers.values():
            keys = reader_kind(reader.kind).zone_keys(reader.options)
            for zone, key in keys.items():
                key = f"readers.{reader.name}.{key}"
                if zone in served:
                    self.fail(key, f"a zone no other reader serves ({zone!r} is served by {served[zone]})", zone)
                else:
                    served[zone] = key
        for zone in REQUIRED_ZONES:
            if zone not in served:
                self.fail("readers", f"a reader serving the {zone!r} zone (the readers serve only "
                          f"{', '.join(served) or 'nothing'})", sorted(served))

    def check_device_nodes(self, readers, lcd, gpio_factory, real: set[str]) -> None:
        def need(key: str, value, node: str, hint: str) -> None:
            local = _DEV / Path(node).relative_to("/dev") if node.startswith("/dev/") else Path(node)
            if not os.path.exists(local):
                self.fail(key, f"an existing device node {node} ({hint})", value)

        real_readers = [r for r in readers.values() if f"readers.{r.name}" in real] if readers is not BAD else []
        for r in real_readers:
            node = reader_kind(r.kind).node(r.options)
            if node is not None:
                need(f"readers.{r.name}.{node.key}", node.value, node.node, node.hint)
        if "lcd" in real:
            need("lcd.port", lcd.port, lcd.device_node, "enable I2C: dtparam=i2c_arm=on")
        real_gpio = "panel" in real or any(r.drives_gpio for r in real_readers)
        if real_gpio and gpio_factory is not BAD:
            if not (list(_DEV.glob("gpiochip*")) or (_DEV / "gpiomem").exists()):
                self.fail("gpio.factory", "a machine with GPIO (no /dev/gpiochip* or /dev/gpiomem here)",
                          gpio_factory)

    # -- files outside this one -------------------------------------------------------------
    def load_profile(self, profile_name: str):
        try:
            return load_profile(self.resolve(profile_name) if profile_name.endswith(".toml") else profile_name)
        except ConfigError as exc:
            return self.errors.add(exc)

    def load_registry(self, table: dict):
        source = table["registry_source"]
        registry = None
        if source == BUILTIN_SIM_REGISTRY:
            registry = simulation_registry()
        elif not Path(source).exists():
            if self.check_devices:
                self.fail("table.registry", f"an existing deck registry file ({source} is missing)",
                          table["registry"])
        else:
            try:
                registry = DeckRegistry.load(source)
            except ConfigError as exc:
                self.errors.add(exc)
            except RegistryError as exc:
                self.fail("table.registry", f"a valid deck registry ({exc})", table["registry"])
        return registry


    def load_badges(self, section, decks: DeckRegistry | None):
        """(the badge registry, where it comes from); a tag both a badge and a card is refused."""
        value = section.registry
        if value == BUILTIN_SIM_REGISTRY:
            return simulation_badges(), value
        if value.startswith("builtin:"):
            self.fail("badges.registry", f"the only built-in badges are {BUILTIN_SIM_REGISTRY!r}, or a path to a "
                      "badge registry file", value)
            return BadgeRegistry(), value
        source = self.resolve(value)
        badges = BadgeRegistry()
        if source.exists():
            try:
                badges = BadgeRegistry.load(source)
            except ConfigError as exc:
                self.errors.add(exc)
        for uid in badges.by_uid():
            tag = decks.lookup(uid) if decks is not None else None
            if tag is not None:
                self.fail("badges.registry", f"badges that are no cards (badge {uid} of dealer "
                          f"{badges.dealer_of(uid)} is {tag.card} of deck {tag.deck} in the deck registry)", value)
                break
        return badges, str(source)


# -- the reference --------------------------------------------------------------------------

_REFERENCE_HEAD = """# Table config reference

<!-- Generated from the declarations in dealerbox/service/config.py and dealerbox/service/kinds.py by
     `python -m dealerbox.service.config > docs/CONFIG.md`; tests/service/test_config.py fails when it is stale. -->

One TOML file per table says what is wired where (`firmware_config/tables/*.toml`).
`dealerbox check-config FILE` lists every error at once, each naming the file, the
dotted key, the value found and what was expected; an unknown key is a typo and the
closest known key is suggested. Durations end in `_s` and are seconds; "req." means
required (no default). Nothing is simulated unless the file says so: `backend` has
no default on any device (the mouth sensor's is required once it has a `pin`).

A relative path (`state_dir`, `registry`, a profile file) starts from the folder of
the config file, never from the working folder: `state_dir = "state"` is the folder
`state/` beside the file, wherever the file is copied. Nothing is written among the
shipped files: a shipped table's relative `state_dir` (`sim.toml`'s `"state"`) goes
to the checkout's `state/` when run from a checkout, and to
`$XDG_STATE_HOME/dealerbox` (by default `~/.local/state/dealerbox`) when installed.
"""

_REFERENCE_TAIL = """## Zones

`shoe`, `board`, `burn`, `muck`, `seat1` .. `seat10`. One zone is served by one reader
only, and some reader must serve `shoe` and `board`.

## Cross checks

- A BCM pin is used once: LEDs, buzzer, buttons, RC522 reset pins, and the pins of
  the buses in use (SPI0: 8 (CE0), 7 (CE1), 9, 10, 11; SPI1: 18/17/16 (CE0/1/2),
  19, 20, 21; I2C port 1: 2, 3; port 0: 0, 1; UART `/dev/ttyAMA0`, `/dev/serial0`,
  `/dev/ttyS0`: 14, 15). Only the chip selects actually used are counted. Both
  users are named.
- One reader per SPI chip select (`/dev/spidev<bus>.<device>`) and per serial port
  or URL; a URL must be one pyserial knows.
- Zones as above.
- `gpio.factory = "mock"` only when no GPIO device is real. Devices with
  `backend = "sim"` always run on the simulated table's gpiozero `MockFactory`.
- Device nodes of `real` devices exist (unless checked with `check_devices=False`),
  and a GPIO chip when a real device drives GPIO pins.
- No tag is both a dealer's badge (`[badges]`) and a card of the deck registry.
"""


def _summary(cls) -> str:
    return " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())


def reference_markdown() -> str:
    """The key reference made from the declarations (what docs/CONFIG.md holds)."""
    parts = [_REFERENCE_HEAD]
    for name in _top_sections():
        if name == "readers":
            parts.append(f"## `[readers.NAME]` (at least one)\n\n{_summary(ReaderSection)} NAME: a-z, 0-9, `_`, "
                         "`-`, up to 32 characters; it goes into `reader_fault`/`reader_ok`.\n\n"
                         + markdown_table(ReaderSection) + "\n")
            for kind in _KINDS.values():
                parts.append(f"### `kind = \"{kind.name}\"`\n\n{kind.doc[0].upper()}{kind.doc[1:]} "
                             f"(`{kind.driver}`).\n\n" + markdown_table(kind.options) + "\n")
            continue
        reg = SECTIONS[name]
        state = "required" if reg.required else "optional: left out, every key takes its default"
        parts.append(f"## `[{name}]` ({state})\n\n{_summary(reg.cls)}\n\n" + markdown_table(reg.cls) + "\n")
    parts.append(_REFERENCE_TAIL)
    return "\n".join(parts)


if __name__ == "__main__":
    sys.stdout.write(reference_markdown())
