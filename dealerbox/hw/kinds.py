"""The registry of reader kinds: for each ``kind`` of ``[readers.NAME]``, its driver and its emulator.

A :class:`ReaderKind` says everything the box needs about one kind of card reader:

- ``open(reader_config, buses)``: the driver, opened on the buses it is handed
  (:mod:`dealerbox.hw.buses`), real or emulated alike;
- ``emulate(reader_config)``: the chip or device emulator the simulated table
  puts behind those buses (an :class:`EmulatedReader`);
- ``device_node(reader_config)``: the node a real one opens (systemd's
  ``DeviceAllow=``, the config's device check), or None;
- ``gpio(reader_config)``: True when a real one drives GPIO pins.

Adding a kind is one entry in :data:`READER_KINDS` (and its options in the
config schema); nothing else dispatches on ``kind``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

__all__ = ["ReaderKind", "EmulatedReader", "READER_KINDS", "reader_kind", "open_reader"]


class EmulatedReader:
    """What the simulated table needs of an emulator: tags in and out of an antenna's field.

    Subclasses must override :meth:`put`, :meth:`unplug` and :meth:`plug`, and set
    either :attr:`spi_address` (an emulated SPI chip, handed out as the SPI bus) or
    :attr:`port` (a serial device, handed out as the port to open). They may override
    :meth:`close` (safe twice).
    """

    #: (bus, device) of an emulated SPI chip; :attr:`spi` is the chip itself.
    spi_address: tuple[int, int] | None = None
    spi = None
    #: The port a serial driver opens.
    port: str | None = None

    def put(self, antenna: int | None, uid: str, present: bool) -> None:
        raise NotImplementedError

    def unplug(self) -> None:
        raise NotImplementedError

    def plug(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Stop the emulator; the default has nothing to stop."""


@dataclass(frozen=True)
class ReaderKind:
    """One kind of card reader (see the module docstring)."""

    name: str
    driver: str                                   # dotted name of the driver class
    open: Callable                                # (ReaderConfig, Buses) -> TagReader
    emulate: Callable                             # (ReaderConfig) -> EmulatedReader
    device_node: Callable                         # (ReaderConfig) -> str | None
    gpio: Callable = lambda rc: False             # (ReaderConfig) -> bool


# -- rc522 ----------------------------------------------------------------------------------

def _open_rc522(rc, buses):
    from .rc522 import RC522Reader

    p = rc.params
    return RC522Reader(rc.name, zone=p["zone"], bus=p["bus"], device=p["device"], reset_pin=p["reset_pin"],
                       spi_hz=p["spi_hz"], timeout_us=p["timeout_us"], max_tags=p["max_tags"],
                       pin_factory=buses.pin_factory(), spi=buses.spi(p["bus"], p["device"]))


class _EmulatedRC522(EmulatedReader):
    def __init__(self, rc):
        from hardware_sim.table import LockedRC522Emulator

        self.spi_address = (rc.params["bus"], rc.params["device"])
        self.spi = self.chip = LockedRC522Emulator(*self.spi_address)

    def put(self, antenna, uid, present):
        self.chip.place(uid) if present else self.chip.remove(uid)

    def unplug(self):
        self.chip.unplug()

    def plug(self):
        self.chip.plug()


# -- serial readers ---------------------------------------------------------------------------

def _serial_opener(class_name: str, extra: tuple[str, ...]):
    def open_serial(rc, buses):
        from . import serial_reader

        p = rc.params
        cls = getattr(serial_reader, class_name)
        return cls(buses.serial_url(rc.name, p["url"]), p["antennas"], name=rc.name, baudrate=p["baudrate"],
                   backoff_max=p["backoff_max"], **{k: p[k] for k in extra})
    return open_serial


class _EmulatedSerial(EmulatedReader):
    def __init__(self, rc, class_name: str):
        from hardware_sim import serial_sim

        self.device = getattr(serial_sim, class_name)()
        self.port = self.device.port

    def put(self, antenna, uid, present):
        self.device.place_tag(antenna, uid) if present else self.device.remove_tag(antenna, uid)

    def unplug(self):
        self.device.unplug()

    def plug(self):
        self.device.plug()

    def close(self):
        self.device.close()


_PYSERIAL_URL = re.compile(r"[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def _serial_node(rc):
    url = rc.params.get("url")
    return None if url is None or _PYSERIAL_URL.match(url) else url


READER_KINDS: dict[str, ReaderKind] = {k.name: k for k in (
    ReaderKind("rc522", "dealerbox.hw.rc522.RC522Reader", _open_rc522, _EmulatedRC522,
               device_node=lambda rc: f"/dev/spidev{rc.params['bus']}.{rc.params['device']}",
               gpio=lambda rc: rc.params["reset_pin"] is not None),
    ReaderKind("pepper_c1", "dealerbox.hw.serial_reader.PepperC1Reader",
               _serial_opener("PepperC1Reader", ("response_timeout", "retries", "antenna_select")),
               lambda rc: _EmulatedSerial(rc, "PepperC1Emulator"), device_node=_serial_node),
    ReaderKind("shoe_line", "dealerbox.hw.serial_reader.ShoeLineReader",
               _serial_opener("ShoeLineReader", ("stall_timeout",)),
               lambda rc: _EmulatedSerial(rc, "ShoeLineEmulator"), device_node=_serial_node),
)}


def reader_kind(kind: str) -> ReaderKind:
    """The registered kind *kind* (KeyError names the known ones)."""
    try:
        return READER_KINDS[kind]
    except KeyError:
        raise KeyError(f"no reader kind {kind!r}; the kinds are {', '.join(READER_KINDS)}") from None


def open_reader(rc, buses):
    """Open the driver of reader config *rc* on *buses*."""
    return reader_kind(rc.kind).open(rc, buses)
