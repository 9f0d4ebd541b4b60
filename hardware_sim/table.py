"""The simulated table: every simulated device of a table config, and a dealer's hands.

A :class:`SimulatedTable` owns the chip emulators the config asks for (RC522 register
emulators, Pepper C1 / shoe line readers on pseudo-terminals, gpiozero's MockFactory
for LEDs and buttons, an I2C bus with an HD44780 glass) and hands them out through
:attr:`SimulatedTable.buses`, as :mod:`dealerbox.hw.buses` says. The daemon's real
drivers talk to those emulators exactly as to the chips. The table's methods
are what a dealer does: a card leaves the shoe (:meth:`draw`), lands on the board
(:meth:`place`), a button is pressed (:meth:`press`), a badge is held to the shoe
to sign in (:meth:`hold_badge`); and what a technician does:
unplug a reader (:meth:`unplug`). What the dealer sees comes back from the glass
(:meth:`glass`) and the LED pins (:meth:`leds`).

Nothing here is picked by default: the daemon uses it only for devices whose
config says ``backend = "sim"``.
"""

from __future__ import annotations

import threading
import time

from gpiozero.pins.mock import MockFactory

from dealerbox.errors import HardwareError, ReaderError
from dealerbox.hw.buses import Buses
from dealerbox.hw.emulation import find_emulator
from dealerbox.domain.badges import simulated_badge_uid
from dealerbox.domain.decks import simulated_uid

from hardware_sim.i2c_lcd import SimulatedI2cBus
from hardware_sim.mouth import PhotoInterrupterEmulator


class SimulatedBuses(Buses):
    """The simulated table's buses: they hand out its emulators, never a real device.

    ``spi(bus, device)`` is the RC522 emulator on that chip select, ``i2c(port)``
    the I2C bus with the HD44780 decoder, ``serial_url`` the pseudo-terminal of a
    serial reader's emulator, and ``pin_factory()`` gpiozero's MockFactory.
    """

    simulated = True

    def __init__(self, table: "SimulatedTable"):
        self._table = table

    def spi(self, bus: int, device: int):
        for emu in self._table.emulators.values():
            if emu.spi_address == (bus, device):
                return emu.spi
        raise ReaderError(f"no emulated SPI chip on /dev/spidev{bus}.{device}")

    def i2c(self, port: int):
        bus = self._table.i2c
        if bus is None or bus.port != port:
            raise HardwareError(f"no emulated I2C bus {port}")
        return bus

    def serial_url(self, reader: str, url: str | None) -> str:
        emu = self._table.emulators.get(reader)
        if emu is None or emu.port is None:
            raise ReaderError(f"no emulated serial reader {reader!r}")
        return emu.port

    def pin_factory(self):
        # The panel's factory when the panel is simulated (a bench may swap in one of its own).
        table = self._table
        return table.pin_factory if table.pin_factory is not None else table.mock_factory


class SimulatedTable:
    """The simulated devices of *config* (a :class:`dealerbox.service.config.TableConfig`).

    :attr:`buses` hands the emulators to the drivers (:mod:`dealerbox.hw.buses`);
    no module is swapped. Use it as a context manager; ``close()`` stops the
    emulators and is safe twice.
    """

    def __init__(self, config, *, dwell_s: float = 0.06):
        self.config = config
        self.dwell_s = dwell_s
        self.emulators: dict[str, object] = {}                 # reader name -> EmulatedReader
        self._zone: dict[str, tuple[str, int | None]] = {}   # zone -> (reader, antenna)
        self._closed = False
        self.buses = SimulatedBuses(self)
        simulated = set(config.simulated_devices)
        for name, rc in config.readers.items():
            if f"readers.{name}" not in simulated:
                continue
            # Found by the kind's name (hardware_sim.emulators registers them), as the box would.
            emu = find_emulator(rc.kind)(rc)
            self.emulators[name] = emu
            # Multiplexed readers declare an antennas table; a one-antenna reader serves its one zone.
            antennas = getattr(rc.options, "antennas", None) or {None: z for z in rc.zones}
            for antenna, zone in antennas.items():
                self._zone.setdefault(zone, (name, None if antenna is None else int(antenna)))
        # Reset lines of emulated readers and (when simulated) the panel run on one MockFactory.
        self.mock_factory = MockFactory()
        self.pin_factory = self.mock_factory if "panel" in simulated else None
        self.i2c = None
        if "lcd" in simulated:
            self.i2c = SimulatedI2cBus.with_lcd(config.lcd.cols, config.lcd.rows, address=config.lcd.address,
                                                port=config.lcd.port)
        self.players = config.panel.players
        #: The dealer whose badge was held to the shoe last (a ``"dealer": null`` event holds it again).
        self.badge_holder: str | None = None
        self.in_field: dict[str, set[str]] = {}   # zone -> UIDs lying on its antenna
        self.mouth = None                          # the emulated photo-interrupter, if the table has one
        ms = getattr(config, "mouth_sensor", None)
        if ms is not None and ms.pin is not None and ms.backend == "sim":
            self.mouth = PhotoInterrupterEmulator(self.mock_factory, ms.pin, ms.blocked_level)

    @property
    def chips(self) -> dict:
        """Reader name -> RC522 emulator, for the emulated SPI readers."""
        return {n: e.spi for n, e in self.emulators.items() if e.spi is not None}

    @property
    def serial(self) -> dict:
        """Reader name -> serial device emulator, for the emulated serial readers."""
        return {n: e.device for n, e in self.emulators.items() if e.port is not None}

    # -- lifetime ---------------------------------------------------------------------
    def __enter__(self) -> "SimulatedTable":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for emu in self.emulators.values():
            emu.close()
        for factory in {id(f): f for f in (self.pin_factory, self.mock_factory) if f is not None}.values():
            factory.close()

    def url_of(self, reader: str) -> str:
        """The port a simulated serial reader's driver opens."""
        return self.buses.serial_url(reader, None)

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
        self.emulators[reader].put(antenna, uid, present)

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

    def badge_uid(self, dealer: str) -> str:
        """The UID of *dealer*'s badge: the config's badge registry, else the simulated badge."""
        badges = self.config.badge_registry.badges_of(dealer)
        return badges[0] if badges else simulated_badge_uid(dealer)

    def hold_badge(self, dealer: str | None = None, *, uid: str | None = None, hold_s: float = 0.3) -> None:
        """A dealer holds a badge (*dealer*'s, or the tag *uid*) to the shoe reader, then takes it away."""
        uid = uid or self.badge_uid(dealer)
        self._put("shoe", uid, True)
        time.sleep(hold_s)
        self._put("shoe", uid, False)
        self.badge_holder = dealer if dealer is not None else self.config.badge_registry.dealer_of(uid)

    def sweep(self) -> None:
        """The dealer gathers every card lying on the board and the other antennas (end of a hand)."""
        for zone in list(self.in_field):
            if zone == "shoe":
                continue
            for uid in list(self.in_field[zone]):
                self._put(zone, uid, False)

    def press(self, button: str, hold_s: float = 0.15, *, pin: int | None = None, chatter_s: float = 0.0) -> None:
        """Press and release a panel button (buttons pull up: pressed is low); people hold 0.1-0.2 s.

        *pin*: the BCM pin the button's wire is really on (default: the config's). *chatter_s*: the
        contact bounces this long at the press and at the release (an edge every 4 ms)."""
        line = self.pin_factory.pin(self.config.panel.pins.buttons[button] if pin is None else pin)
        self._bounce(line, chatter_s, low=True)
        time.sleep(hold_s)
        self._bounce(line, chatter_s, low=False)
        time.sleep(0.05)

    @staticmethod
    def _bounce(line, chatter_s: float, *, low: bool) -> None:
        settle, other = (line.drive_low, line.drive_high) if low else (line.drive_high, line.drive_low)
        end = time.monotonic() + chatter_s
        settle()
        while time.monotonic() < end:
            time.sleep(0.002)
            other()
            time.sleep(0.002)
            settle()

    def set_players(self, players: int) -> None:
        """Step the player-count button until the panel counts *players*."""
        steps = (players - self.players) % 9
        for _ in range(steps):
            self.press("players")
        self.players = players

    def unplug(self, reader: str) -> None:
        self.emulators[reader].unplug()

    def replug(self, reader: str) -> None:
        self.emulators[reader].plug()

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
            elif ev == "dealer":
                # Signing out is holding one's own badge again.
                dealer = e["dealer"] if e["dealer"] is not None else self.badge_holder
                if dealer is None:
                    continue
                self.hold_badge(dealer)
            else:
                continue
            time.sleep(pace_s)
