"""The simulated table: every simulated device of a table config, and a dealer's hands.

A :class:`SimulatedTable` owns the chip emulators the config asks for (RC522s behind
a stand-in ``spidev``, Pepper C1 / shoe line readers on pseudo-terminals, gpiozero's
MockFactory for LEDs and buttons, an I2C bus with an HD44780 glass). The daemon's
real drivers talk to those emulators exactly as to the chips. The table's methods
are what a dealer does: a card leaves the shoe (:meth:`draw`), lands on the board
(:meth:`place`), a button is pressed (:meth:`press`); and what a technician does:
unplug a reader (:meth:`unplug`). What the dealer sees comes back from the glass
(:meth:`glass`) and the LED pins (:meth:`leds`).

Nothing here is picked by default: the daemon uses it only for devices whose
config says ``backend = "sim"``.
"""

from __future__ import annotations

import contextlib
import threading
import time

from dealerbox.errors import HardwareError
from dealerbox.rules.registry import simulated_uid

from .rc522 import RC522Emulator, simulated_spi


class LockedRC522Emulator(RC522Emulator):
    """An RC522 emulator safe to use from a reader thread and a dealer thread at once."""

    def __init__(self, *args, **kwargs):
        self._lock = threading.RLock()
        super().__init__(*args, **kwargs)

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


class SimulatedTable:
    """The simulated devices of *config* (a :class:`dealerbox.service.config.TableConfig`).

    Use it as a context manager: entering installs the stand-in ``spidev`` and
    starts the serial emulators; leaving undoes both. ``close()`` is safe twice.
    """

    def __init__(self, config, *, dwell_s: float = 0.06):
        self.config = config
        self.dwell_s = dwell_s
        self.chips: dict[str, LockedRC522Emulator] = {}
        self.serial: dict[str, object] = {}
        self._zone: dict[str, tuple[str, int | None]] = {}   # zone -> (reader, antenna)
        self._stack = contextlib.ExitStack()
        self._closed = False
        for name, rc in config.readers.items():
            if rc.backend != "sim":
                continue
            if rc.kind == "rc522":
                self.chips[name] = LockedRC522Emulator(rc.params.get("bus", 0), rc.params.get("device", 0))
                for zone in rc.zones:
                    self._zone[zone] = (name, None)
            else:
                from . import serial_sim

                cls = serial_sim.PepperC1Emulator if rc.kind == "pepper_c1" else serial_sim.ShoeLineEmulator
                self.serial[name] = cls()
                for antenna, zone in rc.params["antennas"].items():
                    self._zone.setdefault(zone, (name, int(antenna)))
        self.pin_factory = None
        if config.panel.backend == "sim":
            from gpiozero.pins.mock import MockFactory

            self.pin_factory = MockFactory()
        self.i2c = None
        if config.lcd.backend == "sim":
            from .i2c_lcd import SimulatedI2cBus

            self.i2c = SimulatedI2cBus.with_lcd(config.lcd.cols, config.lcd.rows, address=config.lcd.address,
                                                port=config.lcd.port)
        self.players = config.panel.players
        self.in_field: dict[str, set[str]] = {}   # zone -> UIDs lying on its antenna
        self.mouth = None                          # the emulated photo-interrupter, if the table has one
        ms = getattr(config, "mouth_sensor", None)
        if ms is not None and ms.backend == "sim" and self.pin_factory is not None:
            from .mouth import PhotoInterrupterEmulator

            self.mouth = PhotoInterrupterEmulator(self.pin_factory, ms.pin, ms.blocked_level)

    # -- lifetime ---------------------------------------------------------------------
    def __enter__(self) -> "SimulatedTable":
        if self.chips:
            self._stack.enter_context(simulated_spi(*self.chips.values()))
        for emu in self.serial.values():
            self._stack.enter_context(emu)
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stack.close()
        if self.pin_factory is not None:
            self.pin_factory.close()

    def url_of(self, reader: str) -> str:
        """The port a simulated serial reader's driver opens."""
        return self.serial[reader].port

    # -- the dealer's hands --------------------------------------------------------------
    def uid_of(self, card: str, deck: str | None = None, copy: int = 0) -> str:
        registry = self.config.registry
        deck = deck or (registry.active if registry else "A")
        uids = registry.uids_of(deck, card) if registry else []
        return uids[copy] if len(uids) > copy else simulated_uid(deck, card, copy)

    def _put(self, zone: str, uid: str, present: bool) -> None:
        if zone not in self._zone:
            raise HardwareError(f"no simulated antenna serves the {zone} zone")
        reader, antenna = self._zone[zone]
        lying = self.in_field.setdefault(zone, set())
        lying.add(uid) if present else lying.discard(uid)
        if reader in self.chips:
            chip = self.chips[reader]
            chip.place(uid) if present else chip.remove(uid)
        else:
            emu = self.serial[reader]
            emu.place_tag(antenna, uid) if present else emu.remove_tag(antenna, uid)

    def draw(self, card: str | None = None, *, uid: str | None = None, deck: str | None = None) -> None:
        """A card slides out of the shoe past the shoe antenna."""
        uid = uid or self.uid_of(card, deck)
        if self.mouth is not None:
            self.mouth.card_passes()
        self._put("shoe", uid, True)
        time.sleep(self.dwell_s)
        self._put("shoe", uid, False)

    def place(self, card: str | None = None, zone: str = "board", *, uid: str | None = None,
              deck: str | None = None) -> None:
        self._put(zone, uid or self.uid_of(card, deck), True)

    def lift(self, card: str | None = None, zone: str = "board", *, uid: str | None = None,
             deck: str | None = None) -> None:
        self._put(zone, uid or self.uid_of(card, deck), False)

    def sweep(self) -> None:
        """The dealer gathers every card lying on the board and the other antennas (end of a hand)."""
        for zone in list(self.in_field):
            if zone == "shoe":
                continue
            for uid in list(self.in_field[zone]):
                self._put(zone, uid, False)

    def press(self, button: str, hold_s: float = 0.15) -> None:
        """Press and release a panel button (buttons pull up: pressed is low); people hold 0.1-0.2 s."""
        pin = self.pin_factory.pin(self.config.panel.pins.buttons[button])
        pin.drive_low()
        time.sleep(hold_s)
        pin.drive_high()
        time.sleep(0.05)

    def set_players(self, players: int) -> None:
        """Step the player-count button until the panel counts *players*."""
        steps = (players - self.players) % 9
        for _ in range(steps):
            self.press("players")
        self.players = players

    def unplug(self, reader: str) -> None:
        if reader in self.chips:
            self.chips[reader].unplug()
        else:
            self.serial[reader].unplug()

    def replug(self, reader: str) -> None:
        if reader in self.chips:
            self.chips[reader].plug()
        else:
            self.serial[reader].plug()

    # -- what the dealer sees ------------------------------------------------------------
    def glass(self) -> list[str]:
        return self.i2c.lcd.glass() if self.i2c is not None else []

    def leds(self) -> dict[str, bool]:
        if self.pin_factory is None:
            return {}
        return {colour: bool(self.pin_factory.pin(pin).state)
                for colour, pin in self.config.panel.pins.leds.items()}

    def play(self, events, *, pace_s: float = 0.15, stop: threading.Event | None = None) -> None:
        """Act out CONTRACT.md events (a :class:`hardware_sim.script.HandScript`'s) at the table."""
        for e in events:
            if stop is not None and stop.is_set():
                return
            ev = e.get("ev")
            if ev == "new_hand":
                self.set_players(e["players"])
                self.press("new_hand")
            elif ev == "shoe":
                self.draw(e.get("card"), uid=e.get("uid"), deck=e.get("deck"))
            elif ev == "board_on":
                self.place(e.get("card"), uid=e.get("uid"), deck=e.get("deck"))
            elif ev == "board_off":
                self.lift(e.get("card"), uid=e.get("uid"), deck=e.get("deck"))
            elif ev == "button":
                self.press(e["name"])
                if e["name"] == "hand_over":
                    self.sweep()
            else:
                continue
            time.sleep(pace_s)
