"""The bench a commissioning run works on: the table's config, its devices opened through the
real drivers, the technician and their hands.

Every device is opened when the first step needs it, on the buses the config names
(:func:`dealerbox.hw.buses.buses_for`: the Pi's own, or the simulated table's chip
emulators), and :meth:`Bench.close` closes everything that was opened, whatever
happened (a failed step, Ctrl-C). The wiring advice of every step names pins as
:func:`dealerbox.hw.header.pin_words` does, from the config's BCM numbers.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import Callable

from dealerbox.hw.buses import SPI_CE, SPI_PINS, RealBuses, buses_for
from dealerbox.hw.header import pin_words
from dealerbox.hw.mouth import MouthSensor
from dealerbox.service.daemon import make_reader
from dealerbox.tools.commission_terminal import Hands, Technician

log = logging.getLogger("dealerbox")

__all__ = ["Bench", "StateDisk", "reader_wiring", "hardware_advice"]


class StateDisk:
    """The state directory's disk, as the ``state`` step measures it. A simulated table may hand
    in another (:mod:`hardware_sim.noise`: a full disk); subclasses override both methods."""

    def free_bytes(self, path) -> int:
        """Bytes free for the box's user on *path*'s file system."""
        st = os.statvfs(path)
        return st.f_bavail * st.f_frsize

    def fsync_seconds(self, path, size: int = 4096) -> float:
        """Write *size* bytes to a scratch file in *path*, fsync it, remove it: the seconds the fsync took."""
        scratch = path / ".commission-fsync"
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, b"\0" * size)
            start = time.perf_counter()
            os.fsync(fd)
            return time.perf_counter() - start
        finally:
            os.close(fd)
            scratch.unlink(missing_ok=True)


def reader_wiring(config, name: str) -> str:
    """Where reader *name* is wired, as its advice names it (docs/WIRING.md's table, from the config)."""
    rc = config.readers[name]
    o = rc.options
    if rc.kind == "rc522":
        pins = SPI_PINS.get(o.bus, {})
        parts = [f"{signal} {pin_words(pin)}" for signal, pin in pins.items()]
        if o.bus in SPI_CE and o.device < len(SPI_CE[o.bus]):
            parts.append(f"SDA/NSS {pin_words(SPI_CE[o.bus][o.device])}")
        if o.reset_pin is not None:
            parts.append(f"RST {pin_words(o.reset_pin)}")
        return f"the RC522 {name!r} on SPI{o.bus} CE{o.device}: " + ", ".join(parts) + ", 3.3 V (never 5 V)"
    url = getattr(o, "url", None)
    return f"the {rc.kind} reader {name!r} on {url or 'its serial port'} (its cable, its power)"


@dataclass
class Bench:
    """What the steps share. *table* is the simulated table serving the devices marked ``sim``
    (None for an all-real config); *disk* the state directory's :class:`StateDisk`;
    *clock_synchronised* returns the kernel's NTP state (True, False, or None when unknown)."""

    config: object
    technician: Technician
    hands: Hands
    clock_synchronised: Callable[[], bool | None]
    table: object | None = None
    disk: StateDisk = field(default_factory=StateDisk)
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    #: How long a step waits for the technician's first action before it gives up.
    patience_s: float = 60.0
    #: What the steps of one device kind share (the panel the LED and button steps both use).
    shared: dict = field(default_factory=dict)
    _real: RealBuses | None = None
    _opened: list = field(default_factory=list)
    _readers: dict = field(default_factory=dict)

    def buses(self, backend: str, key: str):
        """The buses of a device with *backend* (config key *key* named in errors)."""
        if self._real is None:
            self._real = RealBuses(self.config.gpio_factory)
        return buses_for(self.config, backend, key=key, real_buses=self._real,
                         sim_buses=self.table.buses if self.table is not None else None)

    def keep(self, device):
        """Close *device* with the bench."""
        self._opened.append(device)
        return device

    def reader(self, name: str):
        """Reader *name* of the config, opened once through its driver (ReaderError when it cannot be)."""
        if name not in self._readers:
            rc = self.config.readers[name]
            self._readers[name] = self.keep(make_reader(self.config, name,
                                                        buses=self.buses(rc.backend, f"readers.{name}.backend")))
        return self._readers[name]

    def mouth_sensor(self) -> MouthSensor:
        """The config's mouth sensor, opened once through its driver (HardwareError when it cannot be)."""
        if "mouth" not in self.shared:
            ms = self.config.mouth_sensor
            factory = self.buses(ms.backend, "mouth_sensor.backend").pin_factory()
            self.shared["mouth"] = self.keep(MouthSensor(ms.pin, pin_factory=factory,
                                                         blocked_level=ms.blocked_level, clock=self.clock))
        return self.shared["mouth"]

    def deck(self) -> dict[str, str]:
        """The active deck's tags (UID -> card), in the registry's order; empty without a registry."""
        registry = self.config.registry
        if registry is None or registry.active is None or not registry.has_deck(registry.active):
            return {}
        return {uid: tag.card for uid, tag in registry.cards_of(registry.active).items()}

    def until(self, done: Callable[[], bool], timeout_s: float, poll=None) -> bool:
        """Wait until *done()* (True) or *timeout_s* passed (False); with *poll*, call it on the way."""
        end = self.clock() + timeout_s
        while not done():
            if self.clock() >= end:
                return False
            if poll is not None:
                poll()
            self.sleep(0.005)
        return True

    def close(self) -> None:
        """Close every device opened (newest first), the hands and the box's own buses. Safe twice."""
        self.hands.close()
        while self._opened:
            device = self._opened.pop()
            try:
                device.close()
            except Exception:   # closing goes on for the other devices
                log.exception("commission: closing %r failed", device)
        self._readers.clear()
        real, self._real = self._real, None
        if real is not None:
            real.close()


def hardware_advice(exc: Exception) -> str:
    """What a device that cannot be opened says, in a sentence (a GPIO held by another process: the box)."""
    text = str(exc)
    if "busy" in text.lower() or "in use" in text.lower():
        return f"{text}: is the box running? stop it first (sudo systemctl stop dealerbox)"
    return text

