"""The emulated dealer's hands of a commissioning run on the chip emulators (``sim.toml``).

Each action a step asks for is carried out on the
:class:`hardware_sim.table.SimulatedTable` from a thread of its own, in the order
asked, a moment after it was asked (the step is measuring by then): the cards'
tags go in and out of the emulated antennas' fields, the mouth sensor's line
breaks, the button's pin is driven. The box's drivers see only what the chips show.
The faults of :class:`hardware_sim.noise.TableFaults` decide what the hands and
the chips really do: a dead tag is drawn but never answers, a miswired button
drives another pin, a bouncing one chatters.

A card drawn stays in the shoe antenna's field for the table's dwell *and* until the
emulated chip has heard :data:`POLL_FRAMES` of the reader's frames (commands, for a
serial reader): the test machine,
not the table, may be too loaded to poll within a dwell, and a card lost to that is
no fault of the table's (a weak antenna still drops those frames, a dead tag still
never answers them).
"""

from __future__ import annotations

import queue
import threading
import time

from hardware_sim.noise import TableFaults
from dealerbox.tools.commission_terminal import Hands

__all__ = ["EmulatedHands", "REACTION_S"]

#: How long after being asked the emulated technician acts.
REACTION_S = 0.2
#: Reader frames (or a serial reader's commands) a drawn card stays in the field for, at least
#: (some three polls).
POLL_FRAMES = 12


class _Stopped(Exception):
    pass


class EmulatedHands(Hands):
    """Acts out each step's request at *table*, with *faults* (see the module docstring)."""

    def __init__(self, table, faults: TableFaults | None = None, *, reaction_s: float = REACTION_S):
        self.table = table
        self.faults = faults or TableFaults()
        self.reaction_s = reaction_s
        self._actions: queue.Queue = queue.Queue()
        self._pending = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name="commission-hands", daemon=True)
        self._thread.start()

    @property
    def done(self) -> bool:
        with self._lock:
            return self._pending == 0

    def _ask(self, action) -> None:
        with self._lock:
            self._pending += 1
        self._actions.put(action)

    def _work(self) -> None:
        while not self._stop.is_set():
            try:
                action = self._actions.get(timeout=0.1)
            except queue.Empty:
                continue
            try:
                self._sleep(self.reaction_s)
                action()
            except _Stopped:
                return
            finally:
                with self._lock:
                    self._pending -= 1

    def _sleep(self, seconds: float) -> None:
        if self._stop.wait(seconds):
            raise _Stopped

    def press(self, button: str, hold_s: float = 0.15) -> None:
        self._ask(lambda: self.faults.press(self.table, button, hold_s))

    def draw(self, uids: list[str], pace_s: float) -> None:
        def act() -> None:
            for uid in uids:
                if self.faults.is_dead(self.table, uid):
                    # The card leaves the stub (the mouth sensor sees it); its tag never answers.
                    if self.table.mouth is not None:
                        self.table.mouth.card_passes()
                    self._sleep(self.table.dwell_s)
                else:
                    self._draw(uid)
                self._sleep(pace_s)
        self._ask(act)

    def _heard(self) -> int | None:
        """How many frames (an RC522's) or commands (a serial reader's) the shoe's emulator has heard."""
        reader = self.table.config.zone_readers()["shoe"]
        chip = self.table.chips.get(reader)
        if chip is not None:
            return chip.frames
        device = self.table.serial.get(reader)
        for counter in ("commands", "scans_sent"):
            if device is not None and hasattr(device, counter):
                return getattr(device, counter)
        return None

    def _draw(self, uid: str) -> None:
        table = self.table
        if table.mouth is not None:
            table.mouth.card_passes()
        table.place(zone="shoe", uid=uid)
        heard = self._heard()
        self._sleep(table.dwell_s)
        end = time.monotonic() + 1.0
        while heard is not None and self._heard() - heard < POLL_FRAMES and time.monotonic() < end:
            self._sleep(0.002)
        table.lift(zone="shoe", uid=uid)

    def lay(self, uids: list[str], zone: str) -> None:
        def act() -> None:
            for uid in uids:
                if not self.faults.is_dead(self.table, uid):
                    self.table.place(zone=zone, uid=uid)
                self._sleep(0.15)
        self._ask(act)

    def lift(self, uids: list[str], zone: str) -> None:
        def act() -> None:
            for uid in uids:
                self.table.lift(zone=zone, uid=uid)
                self._sleep(0.05)
        self._ask(act)

    def slide(self, uid: str, zone: str) -> None:
        def act() -> None:
            self.table.place(zone=zone, uid=uid)
            time.sleep(0.1)
            self.table.lift(zone=zone, uid=uid)
        self._ask(act)

    def glass(self) -> list[str] | None:
        return self.table.glass() if self.table.i2c is not None else None

    def backlight(self) -> bool | None:
        return self.table.i2c.lcd.backlight if self.table.i2c is not None else None

    def lamps(self) -> dict[str, bool] | None:
        return self.table.leds() or None

    def close(self) -> None:
        """Stop acting and take every card off the antennas: nothing is left lying half-done."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self.table.sweep()
