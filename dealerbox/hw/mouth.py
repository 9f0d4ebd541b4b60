"""The optional mouth sensor: a photo-interrupter across the shoe's mouth, on one GPIO pin.

Every card that leaves the stub breaks the beam once, read or not, so the box
knows how many cards came out even when a tag read fails (RULES.md, sensing
faults). The count is handed to the shoe reader's presence tracker
(:meth:`dealerbox.hw.presence.PresenceTracker.count`), which pairs each count with
the tag read that names it, or reports the card as ``unread``.

The pin is read through gpiozero's :class:`~gpiozero.DigitalInputDevice`, so it
runs on any pin factory (lgpio on a Pi 5, RPi.GPIO, the MockFactory in tests and
on the simulated table). The module's output needs its own pull resistor (most
breakout boards have one); ``blocked_level`` says which level a broken beam gives.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from dealerbox.errors import HardwareError
from dealerbox.hw.device import Device


class MouthSensor(Device):
    """Counts cards leaving the shoe: one count per beam break, timed by *clock*.

    :param pin: the GPIO (BCM number or gpiozero pin name).
    :param blocked_level: ``"low"`` or ``"high"``, the level while a card blocks the beam.
    :param min_gap_s: a beam break closer than this to the previous one is the same
        card's edge chattering, not a new card. Two cards drawn together are still
        a few ms apart, so keep it at 1 ms or so.
    :param clock: event time in seconds (the daemon's ``now``).

    Counts wait in :meth:`take` for the reader thread that owns the tracker.
    Counters: ``counts`` (beam breaks counted), ``chatter`` (breaks ignored).
    """

    def __init__(self, pin, *, pin_factory=None, blocked_level: str = "low", min_gap_s: float = 0.001,
                 clock: Callable[[], float] = time.monotonic):
        if blocked_level not in ("low", "high"):
            raise ValueError(f"blocked_level must be 'low' or 'high', not {blocked_level!r}")
        from gpiozero import DigitalInputDevice
        from gpiozero.exc import GPIOZeroError

        self._clock = clock
        self.min_gap_s = min_gap_s
        self._lock = threading.Lock()
        self._pending: list[float] = []
        self._last: float | None = None
        self.counts = 0
        self.chatter = 0
        try:
            self._input = DigitalInputDevice(pin, pull_up=None, active_state=blocked_level == "high",
                                             pin_factory=pin_factory)
        except GPIOZeroError as exc:
            raise HardwareError(f"mouth sensor on pin {pin}: {exc}") from exc
        self._input.when_activated = self._on_break

    def _on_break(self) -> None:
        t = self._clock()
        with self._lock:
            if self._last is not None and t - self._last < self.min_gap_s:
                self.chatter += 1
                return
            self._last = t
            self.counts += 1
            self._pending.append(t)

    def take(self) -> list[float]:
        """The times of the cards counted since the last call, oldest first."""
        with self._lock:
            out, self._pending = self._pending, []
        return out

    @property
    def blocked(self) -> bool:
        """A card (or a finger) is in the beam now."""
        return bool(self._input.value)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._input.close()
