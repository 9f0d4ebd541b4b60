"""The box's devices other than its readers: the panel, the LCD and the mouth sensor."""

from __future__ import annotations

import logging
import threading

from dealerbox.errors import HardwareError
from dealerbox.hw.buses import RealBuses, buses_for
from dealerbox.hw.mouth import MouthSensor

log = logging.getLogger("dealerbox")


class TableDevices:
    """Owns the buses the table's devices run on and the devices that are not readers:
    the panel (LEDs and buttons), the LCD and the optional mouth sensor.

    :meth:`open` opens them as a config says, :meth:`close` closes them (safe
    twice), and a reload does one and then the other while the box's threads
    run on. The panel and the LCD each sit behind a lock of their own, so that
    a hung LCD never holds up the LEDs. The readers open their own drivers on
    :meth:`buses_of` (see :class:`~dealerbox.service.polling.ReaderPolling`).
    """

    def __init__(self, table=None):
        #: The :class:`hardware_sim.table.SimulatedTable` serving the devices marked ``sim``, or None.
        self.table = table
        self.config = None
        self.panel = None
        self.lcd = None
        self.mouth = None
        self._real_buses = None
        self._panel_lock = threading.RLock()
        self._lcd_lock = threading.RLock()

    def open(self, config, *, sink, clock) -> None:
        """Open the panel, the LCD and the mouth sensor of *config*.

        *sink* takes the panel's button events, *clock* gives event time. Every
        device's backend is checked first: one marked ``sim`` with no simulated
        table is refused before anything opens.
        """
        self.config = config
        for key, backend in config.device_backends.items():
            self.buses_of(backend, key)
        with self._panel_lock:
            pin_factory = self.buses_of(config.panel.backend, "panel.backend").pin_factory()
            self.panel = config.panel.open(pin_factory=pin_factory, sink=sink, clock=clock,
                                           on_players=_players_changed)
        with self._lcd_lock:
            self.lcd = self._open_lcd(config.lcd)
        self.mouth = self._open_mouth_sensor(config.mouth_sensor, clock)

    def buses_of(self, backend: str, key: str):
        """The buses a device with *backend* runs on: the simulated table's or the box's own."""
        if self._real_buses is None:
            self._real_buses = RealBuses(self.config.gpio_factory)
        return buses_for(self.config, backend, key=key, real_buses=self._real_buses,
                         sim_buses=self.table.buses if self.table is not None else None)

    def _open_lcd(self, lc):
        try:
            return lc.open(self.buses_of(lc.backend, "lcd.backend").i2c(lc.port))
        except HardwareError as exc:
            # The box still judges and lights the LEDs without its LCD.
            log.error("LCD not available: %s", exc)
            return None

    def _open_mouth_sensor(self, ms, clock):
        """The optional photo-interrupter at the shoe's mouth; its counts go to the shoe's tracker."""
        if ms.pin is None:
            return None
        factory = self.buses_of(ms.backend, "mouth_sensor.backend").pin_factory()
        return MouthSensor(ms.pin, pin_factory=factory, blocked_level=ms.blocked_level, clock=clock)

    def show_leds(self, view) -> None:
        """Light the panel's LEDs for *view* (instant), if the panel is open."""
        with self._panel_lock:
            if self.panel is not None:
                self.panel.show(view)

    def show_lcd(self, view) -> None:
        """Write *view* to the LCD (slow; the caller's own thread), if there is one."""
        with self._lcd_lock:
            if self.lcd is not None:
                self.lcd.show(view)

    def close(self) -> None:
        """Close the mouth sensor, the panel, the LCD and the box's own buses. Safe twice.

        The readers must be stopped first: they run on these buses.
        """
        mouth, self.mouth = self.mouth, None
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
        buses, self._real_buses = self._real_buses, None
        if buses is not None:
            buses.close()   # the box's own pin factory and I2C buses; the table closes its own


def _players_changed(players: int) -> None:
    log.info("players set to %d", players)
