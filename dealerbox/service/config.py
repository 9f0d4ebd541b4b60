"""The table config: one TOML file says what is wired where, checked strictly at start.

Modelled on Klipper's config: every option has a type and bounds, an error names
the file, the dotted key, the value found and what was expected, and an option
nobody asked for is a typo (the closest known key is suggested). Nothing is ever
simulated unless the file says so: ``backend`` has no default on any device.

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

``check_devices=False`` skips what exists only on the installed box, so a Pi's
config can be checked on a laptop: the device nodes (``/dev/spidev*``,
``/dev/i2c-*``, serial devices, GPIO chips) and a deck registry *file that does
not exist yet* (then ``TableConfig.registry`` is None; a registry file that
exists is always checked).

The objects are frozen dataclasses. The dicts they hold (``params``,
``presence``, ``journal``) are the exact keyword arguments of the driver they
feed; treat them as read-only::

    cfg = load_config(path)
    Journal(cfg.state_dir / "journal", **cfg.journal)
    PresenceTracker(**cfg.presence)
    RC522Reader(**cfg.readers["board"].params, pin_factory=factory)
    PepperC1Reader(**cfg.readers["c1"].params)       # url, antennas, name, baudrate, ...
    PanelGpio(cfg.panel.pins, pin_factory=..., sink=q, **cfg.panel.kwargs())
    PanelLcd(**cfg.lcd.kwargs())

Which pin factory: devices with ``backend = "sim"`` always run on a gpiozero
``MockFactory``; ``gpio.factory`` names the factory of the ``real`` ones. It may
be ``"mock"`` only when no GPIO device (panel, RC522 reset pin) is real.

The keys
========

Durations end in ``_s`` and are seconds. "req." = required (no default).

``[table]`` (required)

========== ======= ============ ============================== ==================================================
key        type    default      bounds                         meaning
========== ======= ============ ============================== ==================================================
name       str     req.         1..40 characters               the table's name (logs, LCD, STATUS=)
profile    str     req.         ``tda-2019``, ``cz-c40``, or   the rule profile: a shipped name, or a path to a
                                a path ending in ``.toml``     profile file (relative to the config's folder)
language   str     ``"en"``     ``en``, ``cs``, ``de``, ``sk`` language of the LCD texts and the decisions
registry   str     req.         ``"builtin:sim"`` or a path    the deck registry: the built-in simulation decks,
                                                               or a file (relative to the config's folder)
state_dir  str     req.         a path                         journal and state; relative to the config's folder
tick_s     float   0.25         0.05 .. 2                      period of the ``tick`` events (CONTRACT.md)
========== ======= ============ ============================== ==================================================

``[journal]`` (optional) -> ``TableConfig.journal``, kwargs of :class:`dealerbox.service.journal.Journal`

============== ===== =========== =================== =====================================================
key            type  default     bounds              meaning
============== ===== =========== =================== =====================================================
sync           str   ``"event"`` event, group, none  fsync policy (see dealerbox/service/journal.py)
keep_days      int   90          1 .. 3650           days of journal files kept after daily rotation
group_window_s float 0.05        0.001 .. 5          with ``sync = "group"``: longest an event stays unsynced
group_events   int   64          1 .. 100000         with ``sync = "group"``: fsync at least every N events
============== ===== =========== =================== =====================================================

``[gpio]`` (required)

======= ==== ======= =============================== =====================================================
key     type default bounds                          meaning
======= ==== ======= =============================== =====================================================
factory str  req.    mock, auto, rpigpio, lgpio      gpiozero pin factory of the real GPIO devices
                                                     (``auto``: RPi.GPIO on a Pi 3/4, lgpio on a Pi 5);
                                                     ``mock`` only when every GPIO device is ``sim``
======= ==== ======= =============================== =====================================================

``[readers.NAME]`` (at least one; NAME: a-z, 0-9, ``_``, ``-``, up to 32 characters,
it goes into ``reader_fault``/``reader_ok``) -> ``TableConfig.readers[NAME]``

=========== ===== ========= ========================== ===================================================
key         type  default   bounds                     meaning
=========== ===== ========= ========================== ===================================================
kind        str   req.      rc522, pepper_c1,          the driver
                            shoe_line
backend     str   req.      sim, real                  the chip emulator or the real device
poll_s      float 0.01      0.001 .. 1                 pause between two polls of this reader
=========== ===== ========= ========================== ===================================================

``kind = "rc522"`` (:class:`dealerbox.hw.rc522.RC522Reader`):

=========== ========== ========= ========================== ==============================================
zone        str        req.      a zone (below)             what the antenna watches
bus         int        req.      0 .. 6                     SPI bus: ``/dev/spidev<bus>.<device>``
device      int        req.      0 .. 2                     chip select on that bus
reset_pin   int | str  req.      BCM 0 .. 27, or ``"none"`` GPIO wired to RST; ``"none"`` if RST is tied high
spi_hz      int        1000000   10000 .. 10000000          SPI clock
timeout_us  int|float  500       25 .. 50000                the chip's timer: the wait for a tag's answer
max_tags    int        6         1 .. 16                    stop an inventory after this many tags
=========== ========== ========= ========================== ==============================================

``kind = "pepper_c1"`` (:class:`~dealerbox.hw.serial_reader.PepperC1Reader`) and
``kind = "shoe_line"`` (:class:`~dealerbox.hw.serial_reader.ShoeLineReader`):

================== ===== ========= ====================== ===============================================
url                str   req.      a path or pyserial URL ``/dev/ttyAMA0``, ``/dev/serial/by-id/...``,
                                                          ``socket://host:port``, ``loop://``. With
                                                          ``backend = "sim"`` it may be left out: the
                                                          daemon supplies the emulator's port
                                                          (``params["url"]`` is then None)
baudrate           int   115200    1200 .. 4000000        serial speed
antennas           table req.      keys "1" .. "8"        antenna number -> zone, e.g. ``{"1" = "shoe"}``;
                                                          several antennas of one reader may serve a zone
response_timeout_s float 0.5       0.01 .. 10             pepper_c1: wait for each answer
retries            int   1         0 .. 10                pepper_c1: resends before a fault
antenna_select     bool  true                             pepper_c1: drive the antenna multiplexer
stall_timeout_s    float 2.0       0.1 .. 60              shoe_line: silence before a fault
backoff_max_s      float 30.0      1 .. 600               longest wait between two reconnections
================== ===== ========= ====================== ===============================================

Zones: ``shoe``, ``board``, ``burn``, ``muck``, ``seat1`` .. ``seat10``. One zone is
served by one reader only, and some reader must serve ``shoe`` and ``board``.

``[presence]`` (optional) -> ``TableConfig.presence``, kwargs of
:class:`~dealerbox.hw.presence.PresenceTracker` (defaults justified there)

=============== ===== ======= ========= ===================================================
shoe_rearm_s    float 1.0     0 .. 10   a card read again after this long is a new draw
board_dropout_s float 0.5     0 .. 10   a board card unseen this long is ``board_off``
zone_dropout_s  float 0.5     0 .. 10   the same for the other zones
settle_s        float 0.15    0 .. 5    a card must be seen this long before it is ``on``
=============== ===== ======= ========= ===================================================

``[mouth_sensor]`` (optional; no section: the table has none) -> :class:`MouthSensorConfig`,
the photo-interrupter of :mod:`dealerbox.hw.mouth` (docs/NOISE.md)

============= ===== ======= ============= ======================================================
backend       str   req.    sim, real     gpiozero MockFactory or ``gpio.factory``
pin           int   req.    BCM 0 .. 27   the sensor's output
read_window_s float 0.15    0.02 .. 1     a tag read belongs to a count this close; none: ``unread``
blocked_level str   low     low, high     the output's level while a card breaks the beam
============= ===== ======= ============= ======================================================

``[panel]`` (required) -> :class:`PanelConfig`

============ ===== ======= ===================== ===================================================
backend      str   req.    sim, real             gpiozero MockFactory or ``gpio.factory``
leds         table req.    green, amber, red     BCM pin of each LED (all three)
buzzer       int   none    BCM 0 .. 27           optional active buzzer
buttons      table ``{}``  name = BCM pin        any of new_hand, round_done, exposed, boxed, ack,
                                                 reshuffled, premature, misdeal, floor, hand_over,
                                                 players, players_down
debounce_s   float 0.03    0.001 .. 0.5          a button edge counts after this much quiet
floor_hold_s float 1.5     0.3 .. 10             a FLOOR press this long sends ``misdeal``
players      int   6       2 .. 10               player count at start (the players button steps it)
hole_cards   int   2       2 or 4                ``hole_cards`` of ``new_hand``
============ ===== ======= ===================== ===================================================

``[lcd]`` (required) -> :class:`LcdConfig`

======= ===== ======= ======================== ============================================
backend str   req.    sim, real                I2C emulator or ``/dev/i2c-<port>``
port    int   1       0 .. 20                  I2C bus number
address int   0x27    0x03 .. 0x77             the PCF8574 backpack's address
cols    int   20      20x4 or 16x2             the glass
rows    int   4
charmap str   "A00"   A00, A02                 the module's character ROM
======= ===== ======= ======================== ============================================

Cross checks
============

- A BCM pin is used once: LEDs, buzzer, buttons, RC522 reset pins, and the pins of
  the buses in use (SPI0: 8 (CE0), 7 (CE1), 9, 10, 11; SPI1: 18/17/16 (CE0/1/2),
  19, 20, 21; I2C port 1: 2, 3; port 0: 0, 1; UART ``/dev/ttyAMA0``,
  ``/dev/serial0``, ``/dev/ttyS0``: 14, 15). Only the chip selects actually used
  are counted. Both users are named.
- One reader per SPI chip select (``/dev/spidev<bus>.<device>``) and per serial
  port or URL; a URL must be one pyserial knows.
- Zones as above.
- ``gpio.factory = "mock"`` only when no GPIO device is real.
- Device nodes of ``real`` devices exist (when ``check_devices``), and a GPIO chip
  when a real device drives GPIO pins.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..errors import ConfigError, RegistryError
from ..rules.events import BUTTONS, ZONES as _EVENT_ZONES
from ..hw.gpio_panel import LED_COLOURS, PANEL_BUTTONS, PIN_FACTORY_KINDS, PanelPins
from ..hw.presence import SETTLE_S, SHOE_REARM_S
from .journal import SYNC_POLICIES
from ..rules.messages import LANGUAGES, load_messages
from ..rules.profiles import Profile, available_profiles, load_profile
from ..rules.registry import DeckRegistry, simulation_registry
from ..resources import data_dir
from ..tomlfile import read_toml

__all__ = [
    "DEFAULT_CONFIG", "TABLES_DIR", "ZONES", "READER_KINDS", "BACKENDS", "BUILTIN_SIM_REGISTRY",
    "ReaderConfig", "PanelConfig", "LcdConfig", "TableConfig", "load_config", "check_config",
]

TABLES_DIR = data_dir("tables")
DEFAULT_CONFIG = TABLES_DIR / "sim.toml"

ZONES = ("shoe", "board", "burn", "muck") + tuple(f"seat{i}" for i in range(1, 11))
assert set(ZONES) == {"shoe", "board"} | _EVENT_ZONES  # keep in step with CONTRACT.md
REQUIRED_ZONES = ("shoe", "board")
READER_KINDS = ("rc522", "pepper_c1", "shoe_line")
BACKENDS = ("sim", "real")
BUILTIN_SIM_REGISTRY = "builtin:sim"
LCD_SIZES = ((20, 4), (16, 2))
LCD_CHARMAPS = ("A00", "A02")
BCM_PINS = range(0, 28)
SERIAL_MAX_ANTENNA = 8

# Where device nodes are looked for; tests point it at a folder of stand-ins.
_DEV = Path("/dev")

# Pins a bus takes once it is in use. Chip selects are added per device used.
_SPI_PINS = {0: {"MISO": 9, "MOSI": 10, "SCLK": 11}, 1: {"MISO": 19, "MOSI": 20, "SCLK": 21}}
_SPI_CE = {0: (8, 7), 1: (18, 17, 16)}
_I2C_PINS = {0: {"SDA": 0, "SCL": 1}, 1: {"SDA": 2, "SCL": 3}}
_UART_NODES = {"/dev/ttyAMA0", "/dev/serial0", "/dev/ttyS0"}
_UART_PINS = {"TXD": 14, "RXD": 15}
_SPI_HINT = {0: "enable SPI0: dtparam=spi=on in config.txt",
             1: "enable SPI1: dtoverlay=spi1-1cs in config.txt"}

_TOP_SECTIONS = ("table", "journal", "gpio", "readers", "presence", "mouth_sensor", "panel", "lcd")
_READER_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
_PYSERIAL_URL = re.compile(r"[a-z][a-z0-9+.-]*://", re.IGNORECASE)


# -- the result ---------------------------------------------------------------------

@dataclass(frozen=True)
class ReaderConfig:
    """One ``[readers.NAME]`` section.

    ``params`` are the exact keyword arguments of the driver (``name`` included);
    for ``rc522`` the daemon adds ``pin_factory``. ``zones`` lists the zones this
    reader serves, in antenna order.
    """

    name: str
    kind: str
    backend: str
    poll_s: float
    zones: tuple[str, ...]
    params: dict[str, Any]

    @property
    def device_node(self) -> str | None:
        """The device node a real reader opens, or None (a pyserial URL, or no URL)."""
        if self.kind == "rc522":
            return f"/dev/spidev{self.params['bus']}.{self.params['device']}"
        url = self.params.get("url")
        if url is None or _PYSERIAL_URL.match(url):
            return None
        return url

    @property
    def driver(self) -> str:
        """Dotted name of the driver class ``params`` are meant for."""
        return {"rc522": "dealerbox.hw.rc522.RC522Reader",
                "pepper_c1": "dealerbox.hw.serial_reader.PepperC1Reader",
                "shoe_line": "dealerbox.hw.serial_reader.ShoeLineReader"}[self.kind]


@dataclass(frozen=True)
class PanelConfig:
    """The ``[panel]`` section: LEDs, buzzer and buttons."""

    backend: str
    pins: PanelPins
    debounce_s: float = 0.03
    floor_hold_s: float = 1.5
    players: int = 6
    hole_cards: int = 2

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :class:`~dealerbox.hw.gpio_panel.PanelGpio` besides pins, pin_factory, sink."""
        return {"debounce_s": self.debounce_s, "floor_hold_s": self.floor_hold_s,
                "players": self.players, "hole_cards": self.hole_cards}


@dataclass(frozen=True)
class LcdConfig:
    """The ``[lcd]`` section."""

    backend: str
    port: int = 1
    address: int = 0x27
    cols: int = 20
    rows: int = 4
    charmap: str = "A00"

    @property
    def device_node(self) -> str:
        return f"/dev/i2c-{self.port}"

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :class:`~dealerbox.hw.lcd.PanelLcd` (add ``bus=`` for the emulator)."""
        return {"cols": self.cols, "rows": self.rows, "port": self.port,
                "address": self.address, "charmap": self.charmap}


@dataclass(frozen=True)
class MouthSensorConfig:
    """``[mouth_sensor]``: the photo-interrupter that counts cards at the shoe's mouth."""

    backend: str
    pin: int
    read_window_s: float = 0.15
    blocked_level: str = "low"


@dataclass(frozen=True)
class TableConfig:
    """A validated table config. See the module docstring for every key."""

    path: Path
    name: str
    profile: Profile
    language: str
    registry: DeckRegistry | None
    registry_source: str           # "builtin:sim" or the registry file's absolute path
    state_dir: Path
    tick_s: float
    journal: dict[str, Any]        # Journal(directory, **journal)
    gpio_factory: str
    readers: dict[str, ReaderConfig]
    presence: dict[str, float]     # PresenceTracker(**presence)
    panel: PanelConfig
    lcd: LcdConfig
    mouth_sensor: "MouthSensorConfig | None" = None   # the table has none without the section

    @property
    def simulated_devices(self) -> tuple[str, ...]:
        """Config keys of the devices on the simulated backend (for a start-up log line)."""
        out = [f"readers.{n}" for n, r in self.readers.items() if r.backend == "sim"]
        if self.panel.backend == "sim":
            out.append("panel")
        if self.lcd.backend == "sim":
            out.append("lcd")
        return tuple(out)

    @property
    def device_nodes(self) -> tuple[str, ...]:
        """Device nodes the real devices open (what systemd's ``DeviceAllow=`` needs)."""
        nodes = [r.device_node for r in self.readers.values() if r.backend == "real" and r.device_node]
        if self.lcd.backend == "real":
            nodes.append(self.lcd.device_node)
        return tuple(dict.fromkeys(nodes))

    def zone_readers(self) -> dict[str, str]:
        """Zone -> name of the reader serving it."""
        return {z: r.name for r in self.readers.values() for z in r.zones}


# -- collecting errors --------------------------------------------------------------

class _Bad:
    """Stands for a value that failed its check (only seen when collecting)."""

    def __repr__(self) -> str:
        return "<bad>"


BAD = _Bad()
_NO_DEFAULT = object()


class _Stop(Exception):
    """Raised when collecting to abandon what cannot be checked further."""


class _Errors:
    """Raises at the first error (``collect=False``) or gathers them all."""

    def __init__(self, file: Path, collect: bool):
        self.file = file
        self.collect = collect
        self.found: list[ConfigError] = []

    def fail(self, key: str, expected: str, value=None, *, found: bool = True) -> _Bad:
        return self.add(ConfigError(self.file, key, expected, value, found=found))

    def add(self, error: ConfigError) -> _Bad:
        if not self.collect:
            raise error
        self.found.append(error)
        return BAD


def _fmt(x) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def _suggest(key: str, known) -> str:
    """`` (did you mean 'x'?)`` for the closest of *known*, or nothing."""
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


class _Section:
    """Typed access to one TOML table; unknown keys are reported when it is opened."""

    def __init__(self, errors: _Errors, name: str, data: Mapping, known):
        self.errors, self.name, self.data = errors, name, data
        known = tuple(known)
        for key, value in data.items():
            if key not in known:
                errors.fail(self.key(key),
                            f"a key of [{name}]{_suggest(key, known)}; its keys are {', '.join(known)}",
                            value)

    def key(self, k: str) -> str:
        return f"{self.name}.{k}"

    def has(self, k: str) -> bool:
        return k in self.data

    def raw(self, k: str, default=None):
        return self.data.get(k, default)

    def _take(self, k, default):
        if k in self.data:
            return True, self.data[k]
        if default is _NO_DEFAULT:
            return False, None
        return False, default

    def missing(self, k: str, expected: str) -> _Bad:
        return self.errors.fail(self.key(k), expected, found=False)

    def choice(self, k: str, choices, default=_NO_DEFAULT):
        expected = "one of " + ", ".join(repr(c) for c in choices)
        given, value = self._take(k, default)
        if not given and default is _NO_DEFAULT:
            return self.missing(k, expected)
        if not given:
            return value
        if not isinstance(value, str) or value not in choices:
            extra = _suggest(value, choices) if isinstance(value, str) else ""
            return self.errors.fail(self.key(k), expected + extra, value)
        return value

    def string(self, k: str, default=_NO_DEFAULT, *, max_len: int = 4096, expected: str | None = None):
        expected = expected or f"a string of 1 to {max_len} characters"
        given, value = self._take(k, default)
        if not given:
            return self.missing(k, expected) if default is _NO_DEFAULT else value
        if not isinstance(value, str) or not value.strip() or len(value) > max_len:
            return self.errors.fail(self.key(k), expected, value)
        return value

    def integer(self, k: str, default=_NO_DEFAULT, *, minval: int, maxval: int, expected: str | None = None):
        expected = expected or f"an integer from {minval} to {maxval}"
        given, value = self._take(k, default)
        if not given:
            return self.missing(k, expected) if default is _NO_DEFAULT else value
        if isinstance(value, bool) or not isinstance(value, int) or not minval <= value <= maxval:
            return self.errors.fail(self.key(k), expected, value)
        return value

    def number(self, k: str, default=_NO_DEFAULT, *, minval: float, maxval: float, unit: str = "seconds"):
        expected = f"a number of {unit} from {_fmt(minval)} to {_fmt(maxval)}"
        given, value = self._take(k, default)
        if not given:
            return self.missing(k, expected) if default is _NO_DEFAULT else value
        if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
                or not minval <= value <= maxval):
            return self.errors.fail(self.key(k), expected, value)
        return float(value)

    def boolean(self, k: str, default=_NO_DEFAULT):
        given, value = self._take(k, default)
        if not given:
            return self.missing(k, "true or false") if default is _NO_DEFAULT else value
        if not isinstance(value, bool):
            return self.errors.fail(self.key(k), "true or false", value)
        return value

    def table(self, k: str, *, required: bool = True, expected: str = "a table"):
        given, value = self._take(k, _NO_DEFAULT if required else {})
        if not given:
            return self.missing(k, expected) if required else value
        if not isinstance(value, dict):
            return self.errors.fail(self.key(k), expected, value)
        return value


def _bad(*values) -> bool:
    return any(v is BAD for v in values)


class _PinBook:
    """Who uses each BCM pin; a second user is an error naming the first."""

    def __init__(self, errors: _Errors):
        self.errors = errors
        self.users: dict[int, str] = {}

    def take(self, pin: int, key: str, who: str | None = None) -> None:
        who = who or key
        first = self.users.get(pin)
        if first is not None:
            self.errors.fail(key, f"a BCM pin not already used by {first}", pin)
            return
        self.users[pin] = who


# -- loading ------------------------------------------------------------------------

def load_config(path=DEFAULT_CONFIG, *, check_devices: bool = True) -> TableConfig:
    """Read and validate a table config; raise the first :class:`ConfigError`.

    Relative paths inside the file (``state_dir``, ``registry``, a profile file)
    are relative to the file's folder. ``check_devices=False`` skips the checks of
    what exists only on the box (device nodes; a registry file not there yet).
    """
    return _Loader(Path(path), collect=False, check_devices=check_devices).run()


def check_config(path, *, check_devices: bool = True) -> list[ConfigError]:
    """Every error :func:`load_config` would meet, one per broken key.

    The order is fixed, and its first error is the one :func:`load_config`
    raises: unknown sections, then section by section ([table], [journal],
    [gpio], [readers.*], [presence], [lcd], [panel]), then the cross checks
    (gpio factory, zones), the device nodes, and last the profile and registry
    files. A broken value is reported once; checks that depend on it (a pin used
    twice when the pin itself is not a pin) are skipped. A file that is not
    readable TOML, or has no [table], gives one error. An empty list means the
    file loads.
    """
    loader = _Loader(Path(path), collect=True, check_devices=check_devices)
    try:
        loader.run()
    except _Stop:
        pass
    return loader.errors.found


class _Loader:
    def __init__(self, path: Path, *, collect: bool, check_devices: bool):
        self.path = path
        self.folder = path.resolve().parent
        self.errors = _Errors(path, collect)
        self.check_devices = check_devices
        self.pins = _PinBook(self.errors)
        self.ports: dict[str, str] = {}  # device node or URL -> key of the reader using it

    def claim_port(self, port: str, key: str, value) -> bool:
        """One reader per SPI chip select or serial port; False (and an error) for a second."""
        first = self.ports.get(port)
        if first is not None:
            self.fail(key, f"a port no other reader uses ({port} is already {first})", value)
            return False
        self.ports[port] = key
        return True

    def fail(self, *args, **kwargs) -> _Bad:
        return self.errors.fail(*args, **kwargs)

    def stop(self) -> None:
        if self.errors.found:
            raise _Stop

    def resolve(self, text: str) -> Path:
        p = Path(text).expanduser()
        return (p if p.is_absolute() else self.folder / p).resolve()

    # -- the file ------------------------------------------------------------------
    def read(self) -> dict:
        try:
            return read_toml(self.path, "table config")
        except ConfigError as exc:
            self.fail(exc.key, exc.expected, exc.value)
            raise _Stop from exc

    def section(self, data: dict, name: str, known, *, required: bool = True) -> _Section | None:
        if name not in data:
            if required:
                self.fail(f"[{name}]", "a section (it is required)", found=False)
            return None
        body = data[name]
        if not isinstance(body, dict):
            self.fail(name, "a table", body)
            return None
        return _Section(self.errors, name, body, known)

    def run(self) -> TableConfig:
        data = self.read()
        for key, value in data.items():
            if key not in _TOP_SECTIONS:
                self.fail(key, f"a known section{_suggest(key, _TOP_SECTIONS)}; the sections are "
                          f"{', '.join('[' + s + ']' for s in _TOP_SECTIONS)}", value)

        table = self.read_table(data)
        journal = self.read_journal(data)
        gpio_factory = self.read_gpio(data)
        readers = self.read_readers(data)
        presence = self.read_presence(data)
        mouth_sensor = self.read_mouth_sensor(data)
        lcd = self.read_lcd(data)
        panel = self.read_panel(data)
        if gpio_factory is not BAD and readers is not BAD and panel is not BAD:
            self.check_gpio_factory(gpio_factory, readers, panel)
        if readers is not BAD:
            self.check_zones(readers)
        if self.check_devices:
            self.check_device_nodes(readers, lcd, panel, gpio_factory)
        # Files outside this one last: their errors name their own file.
        profile, registry = self.load_outside(table)
        self.stop()
        return TableConfig(
            path=self.path.resolve(), name=table["name"], profile=profile, language=table["language"],
            registry=registry, registry_source=table["registry_source"], state_dir=table["state_dir"],
            tick_s=table["tick_s"], journal=journal, gpio_factory=gpio_factory, readers=readers,
            presence=presence, panel=panel, lcd=lcd, mouth_sensor=mouth_sensor)

    # -- sections -----------------------------------------------------------------
    def read_table(self, data: dict) -> dict:
        sec = self.section(data, "table", ("name", "profile", "language", "registry", "state_dir", "tick_s"))
        if sec is None:  # only when collecting: otherwise the error was raised
            raise _Stop
        out = {
            "name": sec.string("name", max_len=40),
            "profile": sec.string("profile", expected=(
                f"one of {', '.join(available_profiles())}, or a path to a profile .toml")),
            "language": sec.choice("language", LANGUAGES, "en"),
            "registry": sec.string("registry", expected=f"{BUILTIN_SIM_REGISTRY!r} or a path to a deck registry file"),
            "state_dir": sec.string("state_dir", expected="a path to the state folder"),
            "tick_s": sec.number("tick_s", 0.25, minval=0.05, maxval=2.0),
        }
        profile = out["profile"]
        if profile is not BAD and not profile.endswith(".toml") and profile not in available_profiles():
            out["profile"] = self.fail(sec.key("profile"), f"one of {', '.join(available_profiles())}, or a "
                                       f"path to a profile .toml{_suggest(profile, available_profiles())}", profile)
        elif profile is not BAD and profile.endswith(".toml") and not self.resolve(profile).is_file():
            out["profile"] = self.fail(sec.key("profile"),
                                       f"an existing profile file ({self.resolve(profile)} is not one)", profile)
        if out["language"] is not BAD:
            try:
                load_messages(out["language"])
            except ConfigError as exc:
                out["language"] = self.errors.add(exc)
        out["state_dir"] = BAD if out["state_dir"] is BAD else self.resolve(out["state_dir"])
        reg = out["registry"]
        if reg is BAD:
            out["registry_source"] = BAD
        elif reg == BUILTIN_SIM_REGISTRY:
            out["registry_source"] = reg
        elif reg.startswith("builtin:"):
            out["registry_source"] = self.fail(sec.key("registry"), f"the only built-in registry is "
                                               f"{BUILTIN_SIM_REGISTRY!r}, or a path to a deck registry file", reg)
        else:
            out["registry_source"] = str(self.resolve(reg))
        return out

    def read_journal(self, data: dict) -> dict:
        sec = self.section(data, "journal", ("sync", "keep_days", "group_window_s", "group_events"),
                           required=False)
        if sec is None:
            sec = _Section(self.errors, "journal", {}, ())
        return {
            "sync": sec.choice("sync", SYNC_POLICIES, "event"),
            "group_window": sec.number("group_window_s", 0.05, minval=0.001, maxval=5.0),
            "group_events": sec.integer("group_events", 64, minval=1, maxval=100_000),
            "keep_days": sec.integer("keep_days", 90, minval=1, maxval=3650),
        }

    def read_gpio(self, data: dict):
        sec = self.section(data, "gpio", ("factory",))
        if sec is None:
            return BAD
        return sec.choice("factory", PIN_FACTORY_KINDS)

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
        common = ("kind", "backend", "poll_s")
        rc522 = ("zone", "bus", "device", "reset_pin", "spi_hz", "timeout_us", "max_tags")
        serial_common = ("url", "baudrate", "antennas", "backoff_max_s")
        per_kind = {"rc522": rc522,
                    "pepper_c1": serial_common + ("response_timeout_s", "retries", "antenna_select"),
                    "shoe_line": serial_common + ("stall_timeout_s",)}
        kind = body.get("kind")
        known = common + per_kind[kind] if kind in per_kind else tuple(dict.fromkeys(
            common + rc522 + per_kind["pepper_c1"] + per_kind["shoe_line"]))
        sec = _Section(self.errors, base, body, known)
        kind = sec.choice("kind", READER_KINDS)
        backend = sec.choice("backend", BACKENDS)
        poll_s = sec.number("poll_s", 0.01, minval=0.001, maxval=1.0)
        if kind is BAD:
            return BAD
        if kind == "rc522":
            params, zones = self.read_rc522(sec, name)
        else:
            params, zones = self.read_serial(sec, name, kind, backend)
        if params is BAD or _bad(backend, poll_s):
            return BAD
        return ReaderConfig(name=name, kind=kind, backend=backend, poll_s=poll_s, zones=zones, params=params)

    def zone(self, sec: _Section, key: str, value, *, index_key: str | None = None):
        full = index_key or sec.key(key)
        if not isinstance(value, str) or value not in ZONES:
            hint = _suggest(value, ZONES) if isinstance(value, str) else ""
            return self.fail(full, f"a zone: one of {', '.join(ZONES)}{hint}", value)
        return value

    def read_rc522(self, sec: _Section, name: str):
        zone = sec.raw("zone")
        zone = (self.zone(sec, "zone", zone) if sec.has("zone")
                else sec.missing("zone", f"a zone: one of {', '.join(ZONES)}"))
        bus = sec.integer("bus", minval=0, maxval=6, expected="an SPI bus number from 0 to 6")
        device = sec.integer("device", minval=0, maxval=2, expected="a chip select number from 0 to 2")
        reset = sec.raw("reset_pin")
        reset_expected = 'a BCM GPIO number from 0 to 27, or "none" when RST is tied high'
        if not sec.has("reset_pin"):
            reset = sec.missing("reset_pin", reset_expected)
        elif reset == "none":
            reset = None
        elif isinstance(reset, bool) or not isinstance(reset, int) or reset not in BCM_PINS:
            reset = self.fail(sec.key("reset_pin"), reset_expected, reset)
        spi_hz = sec.integer("spi_hz", 1_000_000, minval=10_000, maxval=10_000_000,
                             expected="an SPI clock in Hz from 10000 to 10000000")
        timeout_us = sec.number("timeout_us", 500.0, minval=25, maxval=50_000, unit="microseconds")
        max_tags = sec.integer("max_tags", 6, minval=1, maxval=16)
        if not _bad(bus, device) and not self.claim_port(f"/dev/spidev{bus}.{device}", sec.key("device"), device):
            device = BAD
        # Bus pins first: a reset pin on a bus pin names the bus as the first user.
        if not _bad(bus, device) and bus in _SPI_PINS:
            if device >= len(_SPI_CE[bus]):
                self.fail(sec.key("device"), f"a chip select SPI{bus} has (0 to {len(_SPI_CE[bus]) - 1})", device)
                device = BAD
            else:
                self.take_bus_pins(sec.key("bus"), f"SPI{bus}", _SPI_PINS[bus])
                self.pins.take(_SPI_CE[bus][device], sec.key("device"), f"{sec.key('device')} (SPI{bus} CE{device})")
        if reset is not None and not _bad(reset):
            self.pins.take(reset, sec.key("reset_pin"))
        if _bad(zone, bus, device, reset, spi_hz, timeout_us, max_tags):
            return BAD, ()
        params = {"name": name, "zone": zone, "bus": bus, "device": device, "reset_pin": reset,
                  "spi_hz": spi_hz, "timeout_us": timeout_us, "max_tags": max_tags}
        return params, (zone,)

    def take_bus_pins(self, key: str, bus_name: str, pins: Mapping[str, int]) -> None:
        # Several devices share a bus's data lines; only a second *kind* of user conflicts.
        for signal, pin in pins.items():
            who = f"{bus_name} {signal}"
            first = self.pins.users.get(pin)
            if first is not None and first.endswith(f"({who})"):
                continue
            self.pins.take(pin, key, f"{key} ({who})")

    def read_serial(self, sec: _Section, name: str, kind: str, backend):
        url_expected = "a serial device path or a pyserial URL (socket://..., loop://)"
        if sec.has("url") or backend != "sim":
            url = sec.string("url", expected=url_expected)
        else:
            url = None
        baudrate = sec.integer("baudrate", 115200, minval=1200, maxval=4_000_000,
                               expected="a baud rate from 1200 to 4000000")
        backoff_max = sec.number("backoff_max_s", 30.0, minval=1.0, maxval=600.0)
        antennas_in = sec.table("antennas", expected='a table of antenna number = zone, e.g. {"1" = "shoe"}')
        antennas: dict[int, str] | _Bad = {}
        if antennas_in is BAD:
            antennas = BAD
        elif not antennas_in:
            antennas = self.fail(sec.key("antennas"), "at least one antenna", antennas_in)
        else:
            for number, zone in antennas_in.items():
                key = f"{sec.key('antennas')}.{number}"
                if not (number.isdigit() and 1 <= int(number) <= SERIAL_MAX_ANTENNA):
                    self.fail(key, f"an antenna number from 1 to {SERIAL_MAX_ANTENNA} as the key", number)
                    antennas = BAD
                    continue
                zone = self.zone(sec, "antennas", zone, index_key=key)
                if zone is BAD:
                    antennas = BAD
                elif antennas is not BAD:
                    antennas[int(number)] = zone
        if kind == "pepper_c1":
            extra = {"response_timeout": sec.number("response_timeout_s", 0.5, minval=0.01, maxval=10.0),
                     "retries": sec.integer("retries", 1, minval=0, maxval=10),
                     "antenna_select": sec.boolean("antenna_select", True)}
            if (extra["antenna_select"] is False and antennas is not BAD and len(antennas) > 1):
                extra["antenna_select"] = self.fail(
                    sec.key("antenna_select"), "true when more than one antenna is listed", False)
        else:
            extra = {"stall_timeout": sec.number("stall_timeout_s", 2.0, minval=0.1, maxval=60.0)}
        if isinstance(url, str):
            url = self.check_url(sec.key("url"), url)
        if isinstance(url, str) and url in _UART_NODES:
            self.take_bus_pins(sec.key("url"), "UART", _UART_PINS)
        if _bad(url, baudrate, backoff_max, antennas, *extra.values()):
            return BAD, ()
        antennas = dict(sorted(antennas.items()))
        params = {"url": url, "antennas": antennas, "name": name, "baudrate": baudrate,
                  "backoff_max": backoff_max, **extra}
        return params, tuple(dict.fromkeys(antennas.values()))

    def check_url(self, key: str, url: str):
        import serial  # pyserial: a dependency of the serial drivers, light to import

        try:
            # Opens nothing; rejects a URL scheme pyserial does not know.
            serial.serial_for_url(url, do_not_open=True)
        except (ValueError, TypeError, AttributeError) as exc:
            return self.fail(key, f"a serial device path or a URL pyserial knows ({exc})", url)
        if not self.claim_port(url, key, url):
            return BAD
        return url

    def read_presence(self, data: dict) -> dict:
        keys = {"shoe_rearm_s": ("shoe_rearm", SHOE_REARM_S, 10.0), "board_dropout_s": ("board_dropout", 0.5, 10.0),
                "zone_dropout_s": ("zone_dropout", 0.5, 10.0), "settle_s": ("settle", SETTLE_S, 5.0)}
        sec = self.section(data, "presence", keys, required=False) or _Section(self.errors, "presence", {}, ())
        return {arg: sec.number(k, default, minval=0.0, maxval=top) for k, (arg, default, top) in keys.items()}

    def read_mouth_sensor(self, data: dict):
        sec = self.section(data, "mouth_sensor", ("backend", "pin", "read_window_s", "blocked_level"),
                           required=False)
        if sec is None:
            return None
        backend = sec.choice("backend", BACKENDS)
        pin = sec.raw("pin")
        if not self.take_pins("mouth_sensor", {"pin": pin}):
            pin = BAD
        window = sec.number("read_window_s", 0.15, minval=0.02, maxval=1.0)
        level = sec.choice("blocked_level", ("low", "high"), "low")
        if _bad(backend, pin, window, level):
            return BAD
        return MouthSensorConfig(backend=backend, pin=pin, read_window_s=window, blocked_level=level)

    def read_lcd(self, data: dict):
        sec = self.section(data, "lcd", ("backend", "port", "address", "cols", "rows", "charmap"))
        if sec is None:
            return BAD
        backend = sec.choice("backend", BACKENDS)
        port = sec.integer("port", 1, minval=0, maxval=20, expected="an I2C bus number from 0 to 20")
        address = sec.integer("address", 0x27, minval=0x03, maxval=0x77,
                              expected="a 7-bit I2C address from 0x03 to 0x77 (usually 0x27 or 0x3F)")
        cols = sec.integer("cols", 20, minval=1, maxval=40)
        rows = sec.integer("rows", 4, minval=1, maxval=4)
        charmap = sec.choice("charmap", LCD_CHARMAPS, "A00")
        if not _bad(cols, rows) and (cols, rows) not in LCD_SIZES:
            rows = self.fail(sec.key("rows") if sec.has("rows") else sec.key("cols"),
                             f"a 20x4 or a 16x2 display (cols x rows), not {cols}x{rows}", rows)
        if port is not BAD and port in _I2C_PINS:
            self.take_bus_pins(sec.key("port"), f"I2C{port}", _I2C_PINS[port])
        if _bad(backend, port, address, cols, rows, charmap):
            return BAD
        return LcdConfig(backend=backend, port=port, address=address, cols=cols, rows=rows, charmap=charmap)

    def read_panel(self, data: dict):
        sec = self.section(data, "panel", ("backend", "leds", "buzzer", "buttons", "debounce_s",
                                           "floor_hold_s", "players", "hole_cards"))
        if sec is None:
            return BAD
        backend = sec.choice("backend", BACKENDS)
        pin_expected = "a BCM GPIO number from 0 to 27"
        ok = True
        leds = sec.table("leds", expected="a table of green, amber and red pins")
        if leds is BAD:
            ok = False
        else:
            _Section(self.errors, sec.key("leds"), leds, LED_COLOURS)
            for colour in LED_COLOURS:
                if colour not in leds:
                    self.fail(f"{sec.key('leds')}.{colour}", pin_expected, found=False)
                    ok = False
            ok = self.take_pins(sec.key("leds"), {c: p for c, p in leds.items() if c in LED_COLOURS}) and ok
            if set(leds) - set(LED_COLOURS):
                ok = False
        buzzer = sec.raw("buzzer")
        if buzzer is not None:
            ok = self.take_pins("panel", {"buzzer": buzzer}) and ok
        buttons = sec.table("buttons", required=False, expected="a table of button name = BCM pin")
        button_names = tuple(sorted(PANEL_BUTTONS, key=lambda b: (b not in BUTTONS, b)))
        if buttons is BAD:
            ok = False
        else:
            before = len(self.errors.found)
            _Section(self.errors, sec.key("buttons"), buttons, button_names)
            ok = ok and len(self.errors.found) == before
            ok = self.take_pins(sec.key("buttons"), {n: p for n, p in buttons.items() if n in PANEL_BUTTONS}) and ok
        debounce = sec.number("debounce_s", 0.03, minval=0.001, maxval=0.5)
        floor_hold = sec.number("floor_hold_s", 1.5, minval=0.3, maxval=10.0)
        players = sec.integer("players", 6, minval=2, maxval=10)
        hole_cards = sec.integer("hole_cards", 2, minval=2, maxval=4, expected="2 or 4")
        if hole_cards == 3:
            hole_cards = self.fail(sec.key("hole_cards"), "2 or 4", 3)
        if not ok or _bad(backend, debounce, floor_hold, players, hole_cards):
            return BAD
        pins = PanelPins(leds=dict(leds), buttons=dict(buttons), buzzer=buzzer)
        try:
            pins.check(file=str(self.path), section="panel")  # the driver's own check, as a last guard
        except ConfigError as exc:
            self.errors.add(exc)
            return BAD
        return PanelConfig(backend=backend, pins=pins, debounce_s=debounce, floor_hold_s=floor_hold,
                           players=players, hole_cards=hole_cards)

    def take_pins(self, prefix: str, pins: Mapping[str, Any]) -> bool:
        ok = True
        for name, pin in pins.items():
            key = f"{prefix}.{name}"
            if isinstance(pin, bool) or not isinstance(pin, int) or pin not in BCM_PINS:
                self.fail(key, "a BCM GPIO number from 0 to 27", pin)
                ok = False
                continue
            before = len(self.errors.found)
            self.pins.take(pin, key)
            ok = ok and len(self.errors.found) == before
        return ok

    # -- cross checks -------------------------------------------------------------
    def check_gpio_factory(self, factory: str, readers: dict, panel: PanelConfig) -> None:
        if factory != "mock":
            return
        real = [f"readers.{r.name}" for r in readers.values()
                if r.kind == "rc522" and r.backend == "real" and r.params["reset_pin"] is not None]
        if panel.backend == "real":
            real.insert(0, "panel")
        if real:
            self.fail("gpio.factory", f"auto, rpigpio or lgpio: {', '.join(real)} drive real GPIO pins "
                      "(\"mock\" only when every GPIO device is sim)", factory)

    def check_zones(self, readers: dict) -> None:
        served: dict[str, str] = {}
        for reader in readers.values():
            if reader.kind == "rc522":
                keys = {reader.zones[0]: f"readers.{reader.name}.zone"}
            else:
                keys = {}
                for antenna, zone in reader.params["antennas"].items():
                    keys.setdefault(zone, f"readers.{reader.name}.antennas.{antenna}")
            for zone, key in keys.items():
                if zone in served:
                    self.fail(key, f"a zone no other reader serves ({zone!r} is served by {served[zone]})", zone)
                else:
                    served[zone] = key
        for zone in REQUIRED_ZONES:
            if zone not in served:
                self.fail("readers", f"a reader serving the {zone!r} zone (the readers serve only "
                          f"{', '.join(served) or 'nothing'})", sorted(served))

    def check_device_nodes(self, readers, lcd, panel, gpio_factory) -> None:
        def need(key: str, value, node: str, hint: str) -> None:
            local = _DEV / Path(node).relative_to("/dev") if node.startswith("/dev/") else Path(node)
            if not os.path.exists(local):
                self.fail(key, f"an existing device node {node} ({hint})", value)

        if readers is not BAD:
            for r in readers.values():
                if r.backend != "real":
                    continue
                node = r.device_node
                if r.kind == "rc522":
                    need(f"readers.{r.name}.bus", r.params["bus"], node, _SPI_HINT.get(
                        r.params["bus"], f"enable SPI{r.params['bus']} with its dtoverlay"))
                elif node is not None:
                    need(f"readers.{r.name}.url", node, node, "is the reader plugged in and its UART enabled?")
        if lcd is not BAD and lcd.backend == "real":
            need("lcd.port", lcd.port, lcd.device_node, "enable I2C: dtparam=i2c_arm=on")
        real_gpio = (panel is not BAD and panel.backend == "real") or (readers is not BAD and any(
            r.kind == "rc522" and r.backend == "real" and r.params["reset_pin"] is not None
            for r in readers.values()))
        if real_gpio and gpio_factory is not BAD:
            if not (list(_DEV.glob("gpiochip*")) or (_DEV / "gpiomem").exists()):
                self.fail("gpio.factory", "a machine with GPIO (no /dev/gpiochip* or /dev/gpiomem here)",
                          gpio_factory)

    def load_outside(self, table: dict):
        profile_name = table["profile"]
        profile = registry = None
        if profile_name is BAD:
            pass
        else:
            profile = self.load_profile(profile_name)
        if table["registry_source"] is not BAD:
            registry = self.load_registry(table)
        return profile, registry

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
