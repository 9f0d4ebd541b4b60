"""The registry of reader kinds: for each ``kind`` of ``[readers.NAME]``, everything the box needs.

A :class:`ReaderKind` holds, for one kind of card reader:

- ``options``: its section of the config, a frozen dataclass declared with
  :mod:`dealerbox.options` (checks and the docs/CONFIG.md table come from it);
- ``open(reader_config, buses)``: its driver, opened on the buses it is handed
  (:mod:`dealerbox.hw.buses`), real or emulated alike;
- ``claim(ctx, key, options, backend)``: the ports and pins it takes, and checks
  across its options (``ctx`` is the config loader);
- ``zone_keys(options)``: the zones it serves, each with the key naming it;
- ``node(options)``: the device node a real one opens, or None;
- ``gpio(options)``: True when a real one drives GPIO pins;
- ``backoff(options)``: the first and the longest wait before the
  :class:`~dealerbox.hw.reader.ReaderSupervisor` reopens a failed one;
- ``needs``: the modules of the ``pi`` extra its driver imports.

The emulator the simulated table puts behind a kind's buses is not named here: the
simulator registers it under the kind's name (the entry-point group of
:mod:`dealerbox.hw.emulation`), so the box never imports the simulator.

Adding a kind is one entry in :data:`READER_KINDS` (with its driver module), and its
emulator registered under its name; nothing else in the box dispatches on ``kind``.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from typing import Callable

from dealerbox.options import Antennas, Choice, Flag, Integer, Number, Pin, Text, Zone, option
from dealerbox.hw.buses import SPI_CE, SPI_HINT, SPI_PINS, UART_NODES, UART_PINS, simulated
from dealerbox.hw.rc522 import FIELD, FIELDS, MAX_TAGS, MAX_TAGS_LIMIT, SPI_HZ, TIMEOUT_US, RC522Reader
from dealerbox.hw.reader import ReaderSupervisor
from dealerbox.hw.serial.pepper import PepperC1Reader
from dealerbox.hw.serial.shoe_line import ShoeLineReader

__all__ = ["ReaderKind", "DeviceNode", "READER_KINDS", "reader_kind", "open_reader", "supervise",
           "missing_drivers",
           "RC522Options", "SerialOptions", "PepperC1Options", "ShoeLineOptions"]


@dataclass(frozen=True)
class DeviceNode:
    """The device node a real reader opens, and the key, value and hint an error about it names."""

    node: str
    key: str
    value: object
    hint: str


@dataclass(frozen=True)
class ReaderKind:
    """One kind of card reader (see the module docstring)."""

    name: str
    driver: str                  # dotted name of the driver class
    doc: str                     # one line for the reference
    options: type                # the options dataclass
    open: Callable               # (ReaderConfig, Buses) -> TagReader
    claim: Callable              # (ctx, key, options, backend) -> bool
    zone_keys: Callable          # (options) -> {zone: key below readers.NAME}
    node: Callable               # (options) -> DeviceNode | None
    gpio: Callable = lambda options: False
    #: (options) -> (first wait, longest wait) in seconds between tries to reopen a failed reader
    backoff: Callable = lambda options: (0.1, 5.0)
    #: Python modules of the ``pi`` extra its driver needs (the box refuses to start without them)
    needs: tuple[str, ...] = ()


# -- rc522 ----------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class RC522Options:
    """``kind = "rc522"``: one NXP MFRC522 on SPI watching one zone.

    The defaults are the driver's own (``SPI_HZ``, ``TIMEOUT_US``, ``MAX_TAGS`` in
    :mod:`dealerbox.hw.rc522`, where each is argued), so a config that leaves a key
    out runs the reader exactly as the driver's benchmarks measured it.
    """

    zone: str = option(Zone(doc="what the antenna watches"))
    bus: int = option(Integer(doc="SPI bus: `/dev/spidev<bus>.<device>`", lo=0, hi=6,
                              expect="an SPI bus number from 0 to 6"))
    device: int = option(Integer(doc="chip select on that bus", lo=0, hi=2,
                                 expect="a chip select number from 0 to 2"))
    reset_pin: int | None = option(Pin(doc='GPIO wired to RST; "none" if RST is tied high',
                                       none_word="none", none_means="when RST is tied high"))
    spi_hz: int = option(Integer(doc="SPI clock (the MFRC522 takes up to 10 MHz; long jumper wires want less)",
                                 lo=10_000, hi=10_000_000,
                                 expect="an SPI clock in Hz from 10000 to 10000000"), SPI_HZ)
    # Tags start answering 91 us after a frame (ISO 14443-3 FDT): a shorter timer never hears one.
    timeout_us: float = option(Number(doc="the chip's timer: how long after a frame a tag may start answering",
                                      lo=100, hi=50_000, unit="microseconds"), TIMEOUT_US)
    max_tags: int = option(Integer(doc="cards tracked at once (a full board plus a sweep of folded cards); "
                                       "cards already known are always kept",
                                   lo=1, hi=MAX_TAGS_LIMIT), MAX_TAGS)
    # A shoe card is gone 30-100 ms after it arrives; the board's lie still for minutes.
    field: str = option(Choice(doc='what crosses the antenna: `resting` cards lie still (the board: a card '
                                   'missed is checked again, and kept 3 polls); `pass_through` cards slide '
                                   'through (the shoe\'s mouth: new cards looked for first, a card missed '
                                   'once is forgotten)', choices=FIELDS), FIELD)


def _open_rc522(rc, buses):
    o = rc.options
    return RC522Reader(rc.name, zone=o.zone, bus=o.bus, device=o.device, reset_pin=o.reset_pin,
                       spi_hz=o.spi_hz, timeout_us=o.timeout_us, max_tags=o.max_tags, field=o.field,
                       pin_factory=buses.pin_factory(), spi=buses.spi(o.bus, o.device))


def _claim_rc522(ctx, key, o: RC522Options, backend) -> bool:
    if not ctx.claim_port(f"/dev/spidev{o.bus}.{o.device}", f"{key}.device", o.device):
        return False
    if o.bus in SPI_PINS:
        if o.device >= len(SPI_CE[o.bus]):
            ctx.fail(f"{key}.device", f"a chip select SPI{o.bus} has (0 to {len(SPI_CE[o.bus]) - 1})", o.device)
            return False
        # Bus pins before the reset pin: a reset pin on a bus pin names the bus as the first user.
        ctx.take_bus_pins(f"{key}.bus", f"SPI{o.bus}", SPI_PINS[o.bus])
        ctx.take_pin(SPI_CE[o.bus][o.device], f"{key}.device", f"{key}.device (SPI{o.bus} CE{o.device})")
    return True


def _rc522_node(o: RC522Options) -> DeviceNode:
    return DeviceNode(f"/dev/spidev{o.bus}.{o.device}", "bus", o.bus,
                      SPI_HINT.get(o.bus, f"enable SPI{o.bus} with its dtoverlay"))


# -- serial readers ---------------------------------------------------------------------------

_URL_EXPECTED = "a serial device path or a pyserial URL (socket://..., loop://)"
_PYSERIAL_URL = re.compile(r"[a-z][a-z0-9+.-]*://", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class SerialOptions:
    """What every reader on a serial port has."""

    url: str | None = option(Text(doc="`/dev/ttyAMA0`, `/dev/serial/by-id/...`, `socket://host:port`, `loop://`; "
                                      "required unless `backend = \"sim\"` (the emulator's port is used then)",
                                  expect=_URL_EXPECTED, bounds_doc="a path or pyserial URL"), None)
    baudrate: int = option(Integer(doc="serial speed", lo=1200, hi=4_000_000,
                                   expect="a baud rate from 1200 to 4000000"), 115200)
    antennas: dict = option(Antennas(doc='antenna number -> zone, e.g. `{"1" = "shoe"}`; several antennas '
                                         'may serve one zone'))
    backoff_max_s: float = option(Number(doc="longest wait between two reconnections", lo=1.0, hi=600.0), 30.0)


@dataclass(frozen=True, kw_only=True)
class PepperC1Options(SerialOptions):
    """``kind = "pepper_c1"``: an Eccel Pepper C1 with its antenna multiplexer."""

    response_timeout_s: float = option(Number(doc="wait for each answer", lo=0.01, hi=10.0), 0.5)
    retries: int = option(Integer(doc="resends before a fault", lo=0, hi=10), 1)
    antenna_select: bool = option(Flag(doc="drive the antenna multiplexer (needed for more than one antenna)"),
                                  True)


@dataclass(frozen=True, kw_only=True)
class ShoeLineOptions(SerialOptions):
    """``kind = "shoe_line"``: a shoe streaming the DBX1 line protocol."""

    stall_timeout_s: float = option(Number(doc="silence before a fault", lo=0.1, hi=60.0), 2.0)


def _open_serial(rc, buses):
    o = rc.options
    url = buses.serial_url(rc.name, o.url)
    common = dict(name=rc.name, baudrate=o.baudrate)
    if isinstance(o, PepperC1Options):
        return PepperC1Reader(url, o.antennas, response_timeout=o.response_timeout_s, retries=o.retries,
                              antenna_select=o.antenna_select, **common)
    return ShoeLineReader(url, o.antennas, stall_timeout=o.stall_timeout_s, **common)


def _claim_serial(ctx, key, o: SerialOptions, backend) -> bool:
    ok = True
    if o.url is None and not simulated(backend):
        ctx.fail(f"{key}.url", _URL_EXPECTED, found=False)
        ok = False
    elif o.url is not None:
        ok = ctx.check_url(f"{key}.url", o.url)
        if ok and o.url in UART_NODES:
            ctx.take_bus_pins(f"{key}.url", "UART", UART_PINS)
    if isinstance(o, PepperC1Options) and not o.antenna_select and len(o.antennas) > 1:
        ctx.fail(f"{key}.antenna_select", "true when more than one antenna is listed", False)
        ok = False
    return ok


def _serial_zone_keys(o: SerialOptions) -> dict[str, str]:
    keys: dict[str, str] = {}
    for antenna, zone in o.antennas.items():
        keys.setdefault(zone, f"antennas.{antenna}")
    return keys


def _serial_node(o: SerialOptions) -> DeviceNode | None:
    if o.url is None or _PYSERIAL_URL.match(o.url):
        return None
    return DeviceNode(o.url, "url", o.url, "is the reader plugged in and its UART enabled?")


def _serial_backoff(o: SerialOptions) -> tuple[float, float]:
    return (0.5, o.backoff_max_s)


# -- the registry ---------------------------------------------------------------------------------

READER_KINDS: dict[str, ReaderKind] = {k.name: k for k in (
    ReaderKind("rc522", "dealerbox.hw.rc522.RC522Reader", "an NXP RC522 on SPI watching one zone",
               RC522Options, _open_rc522, _claim_rc522,
               zone_keys=lambda o: {o.zone: "zone"}, node=_rc522_node,
               gpio=lambda o: o.reset_pin is not None, needs=("mfrc522",)),
    ReaderKind("pepper_c1", "dealerbox.hw.serial.pepper.PepperC1Reader",
               "an Eccel Pepper C1 on a serial port, its antennas multiplexed",
               PepperC1Options, _open_serial, _claim_serial,
               zone_keys=_serial_zone_keys, node=_serial_node, backoff=_serial_backoff),
    ReaderKind("shoe_line", "dealerbox.hw.serial.shoe_line.ShoeLineReader",
               "a shoe streaming the DBX1 line protocol on a serial port",
               ShoeLineOptions, _open_serial, _claim_serial,
               zone_keys=_serial_zone_keys, node=_serial_node, backoff=_serial_backoff),
)}


def reader_kind(kind: str) -> ReaderKind:
    """The registered kind *kind* (KeyError names the known ones)."""
    try:
        return READER_KINDS[kind]
    except KeyError:
        raise KeyError(f"no reader kind {kind!r}; the kinds are {', '.join(READER_KINDS)}") from None


def missing_drivers(readers) -> list[tuple[str, str]]:
    """``(kind, module)`` for each driver module the kinds of *readers* need that is not installed."""
    kinds = dict.fromkeys(rc.kind for rc in readers)
    return [(kind, module) for kind in kinds for module in reader_kind(kind).needs
            if importlib.util.find_spec(module) is None]


def open_reader(rc, buses):
    """Open the driver of reader config *rc* on *buses*."""
    return reader_kind(rc.kind).open(rc, buses)


def supervise(rc, buses, **kwargs):
    """A :class:`~dealerbox.hw.reader.ReaderSupervisor` for reader config *rc* on *buses*, with its kind's backoff."""
    first, longest = reader_kind(rc.kind).backoff(rc.options)
    return ReaderSupervisor(rc.name, lambda: open_reader(rc, buses), backoff_initial=first, backoff_max=longest,
                            **kwargs)
