"""The buses and pins a table's devices run on, handed to the drivers like gpiozero's pin factory.

A driver never opens a bus by itself. It is given a :class:`Buses` and asks it for
what it needs:

- :meth:`Buses.spi` ``(bus, device)``: an object with ``spidev.SpiDev``'s API, not
  yet opened (the driver calls ``open(bus, device)``, ``xfer2``, ``close``);
- :meth:`Buses.i2c` ``(port)``: an open ``smbus2.SMBus``-like bus;
- :meth:`Buses.serial_url` ``(reader, url)``: the port a serial reader opens with
  pyserial's ``serial_for_url``;
- :meth:`Buses.pin_factory`: the gpiozero pin factory of the LEDs, buttons and
  reset lines.

:class:`RealBuses` wraps spidev, smbus2, pyserial and gpiozero's factories; the
simulated table (:class:`hardware_sim.table.SimulatedTable`) has a
:class:`Buses` of its own that hands out the chip emulators. Which of the two a
device gets is decided in exactly one place, :func:`buses_for`, from the device's
``backend`` in the table config; nothing else in the box tests "sim" against
"real".

Subclasses must override :meth:`~Buses.spi`, :meth:`~Buses.i2c`,
:meth:`~Buses.serial_url` and :meth:`~Buses.pin_factory`; they may override
:meth:`~Buses.close` (release what they opened; safe twice).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod

from dealerbox.errors import ConfigError, HardwareError, ReaderError
from dealerbox.hw.gpio_panel import make_pin_factory

__all__ = ["Buses", "RealBuses", "buses_for", "simulated", "SIMULATED", "REAL", "BACKENDS"]

# The Pi's buses and the BCM pins each takes once in use (chip selects per device used).
SPI_PINS = {0: {"MISO": 9, "MOSI": 10, "SCLK": 11}, 1: {"MISO": 19, "MOSI": 20, "SCLK": 21}}
SPI_CE = {0: (8, 7), 1: (18, 17, 16)}
SPI_HINT = {0: "enable SPI0: dtparam=spi=on in config.txt",
            1: "enable SPI1: dtoverlay=spi1-1cs in config.txt"}
I2C_PINS = {0: {"SDA": 0, "SCL": 1}, 1: {"SDA": 2, "SCL": 3}}
UART_NODES = frozenset({"/dev/ttyAMA0", "/dev/serial0", "/dev/ttyS0"})
UART_PINS = {"TXD": 14, "RXD": 15}

SIMULATED = "sim"
REAL = "real"
BACKENDS = (SIMULATED, REAL)


def simulated(backend: str) -> bool:
    """True when a device's ``backend`` puts it on the simulated table: the one test of sim against real."""
    return backend == SIMULATED


class Buses(ABC):
    """Hands out the buses and the pin factory of one kind of hardware (real or emulated)."""

    #: True for the emulators of the simulated table.
    simulated = False

    @abstractmethod
    def spi(self, bus: int, device: int):
        """An unopened ``spidev.SpiDev``-like object for ``/dev/spidev<bus>.<device>``."""

    @abstractmethod
    def i2c(self, port: int):
        """An open ``smbus2.SMBus``-like bus ``/dev/i2c-<port>``; it stays this object's to close."""

    @abstractmethod
    def serial_url(self, reader: str, url: str | None) -> str:
        """The port (device path or pyserial URL) reader *reader* opens; *url* is its config's."""

    @abstractmethod
    def pin_factory(self):
        """The gpiozero pin factory of the GPIO devices on these buses."""

    def close(self) -> None:
        """Release what was opened here. Safe twice."""


class RealBuses(Buses):
    """The Pi's own buses: spidev, smbus2, pyserial ports and the gpiozero factory *factory*.

    Libraries are imported when a bus is asked for, so a laptop can build one.
    """

    def __init__(self, factory: str = "auto"):
        self.factory_kind = factory
        self._lock = threading.Lock()   # reader threads ask for the pin factory at the same time
        self._factory = None
        self._i2c: dict[int, object] = {}
        self._closed = False

    def spi(self, bus: int, device: int):
        try:
            import spidev
        except ImportError as exc:
            raise ReaderError(f"spidev is not installed ({exc}); /dev/spidev{bus}.{device} cannot be opened") from exc
        return spidev.SpiDev()

    def i2c(self, port: int):
        with self._lock:
            bus = self._i2c.get(port)
            if bus is None:
                import smbus2

                try:
                    bus = smbus2.SMBus(port)
                except OSError as exc:
                    raise HardwareError(f"cannot open /dev/i2c-{port}: {exc}") from exc
                self._i2c[port] = bus
            return bus

    def serial_url(self, reader: str, url: str | None) -> str:
        if url is None:
            raise ReaderError(f"reader {reader!r}: a real serial reader needs a url")
        return url

    def pin_factory(self):
        with self._lock:
            if self._factory is None:
                self._factory = make_pin_factory(self.factory_kind)
            return self._factory

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            buses, self._i2c = list(self._i2c.values()), {}
        for bus in buses:
            bus.close()
        factory, self._factory = self._factory, None
        if factory is not None:
            factory.close()


def buses_for(config, backend: str, *, sim_buses: Buses | None, real_buses: Buses | None,
              key: str = "backend") -> Buses:
    """The buses of a device whose config says *backend*: the one place that tells sim from real.

    *sim_buses* are the simulated table's (None when no table was started: the
    simulator is never picked by default), *real_buses* the box's. *key* is the
    config key named in the error when the device's buses are missing.
    """
    if backend not in BACKENDS:
        raise ConfigError(config.path, key, f"one of {', '.join(BACKENDS)}", backend)
    if simulated(backend):
        if sim_buses is None:
            raise ConfigError(config.path, key, "a simulated table for the devices marked sim "
                              "(dealerbox run starts one for an all-simulated config)", backend)
        return sim_buses
    if real_buses is None:
        raise ConfigError(config.path, key, "the box's own buses for a real device", backend)
    return real_buses
