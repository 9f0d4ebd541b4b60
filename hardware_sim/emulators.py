"""The emulator behind each kind of card reader, registered under the kind's name.

``pyproject.toml`` names each factory below in the entry-point group
``dealerbox.emulators`` under its reader kind (``rc522``, ``pepper_c1``,
``shoe_line``); the simulated table finds them there by name with
:func:`dealerbox.hw.emulation.find_emulator`, so the box knows no emulator by import.
Each factory takes the reader's config (a ``ReaderConfig`` of the table config) and
returns an :class:`EmulatedReader`. A new reader kind adds its factory here and its
line in ``pyproject.toml``.
"""

from __future__ import annotations

import threading
import time

from hardware_sim.rc522 import RC522Emulator
from hardware_sim.serial_sim import PepperC1Emulator, PtySerialDevice, ShoeLineEmulator

__all__ = ["EmulatedReader", "EmulatedRC522", "EmulatedSerialReader", "LockedRC522Emulator",
           "emulate_pepper_c1", "emulate_rc522", "emulate_shoe_line"]


class EmulatedReader:
    """What the simulated table needs of an emulator: tags in and out of an antenna's field.

    Subclasses must override :meth:`put`, :meth:`unplug` and :meth:`plug`, and set
    either :attr:`spi_address` and :attr:`spi` (an emulated SPI chip, handed out as
    the SPI bus) or :attr:`port` (a serial device: the port its driver opens). They
    may override :meth:`close` (safe twice).
    """

    spi_address: tuple[int, int] | None = None
    spi = None
    port: str | None = None

    def put(self, antenna: int | None, uid: str, present: bool) -> None:
        """Lay the tag *uid* in the field of *antenna* (None: the reader's only one), or take it away."""
        raise NotImplementedError

    def unplug(self) -> None:
        """The reader goes dead, as when its cable is pulled."""
        raise NotImplementedError

    def plug(self) -> None:
        """The reader comes back."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop the emulator; the default has nothing to stop."""


class LockedRC522Emulator(RC522Emulator):
    """An RC522 emulator safe to use from a reader thread and a dealer thread at once.

    It follows *clock* (``time.monotonic`` unless told otherwise), as a chip on a
    live table does: the host's idle time between polls passes on the chip too,
    so a tag laid down answers only after its power-up delay in real time
    (:data:`~hardware_sim.rc522.POWER_UP_US`), and timers run while nobody polls.
    Transfers are not paced (no sleeping): that is
    :func:`~hardware_sim.rc522.charge_bus_time`'s business, for benches.
    """

    def __init__(self, *args, clock=time.monotonic, **kwargs):
        self._lock = threading.RLock()
        super().__init__(*args, clock=clock, **kwargs)

    def transfer(self, *args, **kwargs):
        with self._lock:
            return super().transfer(*args, **kwargs)

    def place(self, uid, **kwargs):
        with self._lock:
            return super().place(uid, **kwargs)

    def remove(self, uid):
        with self._lock:
            super().remove(uid)

    def unplug(self, miso: int = 0x00):
        with self._lock:
            super().unplug(miso)

    def plug(self):
        with self._lock:
            super().plug()


class EmulatedRC522(EmulatedReader):
    """An RC522 on the chip select its config names (``kind = "rc522"``)."""

    def __init__(self, reader_config):
        self.spi_address = (reader_config.options.bus, reader_config.options.device)
        self.spi = LockedRC522Emulator(*self.spi_address)

    def put(self, antenna, uid, present):
        self.spi.place(uid) if present else self.spi.remove(uid)

    def unplug(self):
        self.spi.unplug()

    def plug(self):
        self.spi.plug()


class EmulatedSerialReader(EmulatedReader):
    """A serial reader's device on a pseudo-terminal; its driver opens :attr:`port`."""

    def __init__(self, device: PtySerialDevice):
        self.device = device
        self.port = device.port

    def put(self, antenna, uid, present):
        self.device.place_tag(antenna, uid) if present else self.device.remove_tag(antenna, uid)

    def unplug(self):
        self.device.unplug()

    def plug(self):
        self.device.plug()

    def close(self):
        self.device.close()


def emulate_rc522(reader_config) -> EmulatedRC522:
    """The emulator of ``kind = "rc522"``."""
    return EmulatedRC522(reader_config)


def emulate_pepper_c1(reader_config) -> EmulatedSerialReader:
    """The emulator of ``kind = "pepper_c1"``: a Pepper C1 on a pseudo-terminal."""
    return EmulatedSerialReader(PepperC1Emulator())


def emulate_shoe_line(reader_config) -> EmulatedSerialReader:
    """The emulator of ``kind = "shoe_line"``: a ``DBX1`` shoe on a pseudo-terminal."""
    return EmulatedSerialReader(ShoeLineEmulator())
