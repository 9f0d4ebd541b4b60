"""A tiny stand-in for ``RPi.GPIO``, just enough to import and run the stock ``mfrc522``.

``mfrc522`` imports ``RPi.GPIO`` at import time, and the real module raises
RuntimeError anywhere but on a Pi. The dealerbox driver never calls RPi.GPIO (its
reset pin goes through gpiozero); this stand-in exists so the stock library can
be imported in CI and so tests can see what the stock library does to the pins
(``calls`` records every call, e.g. its ``cleanup()`` of every pin on close).

Nothing here is installed by default: a test or the bench puts the modules from
:func:`modules` into ``sys.modules`` explicitly.
"""

from __future__ import annotations

import types

BOARD = 10
BCM = 11
OUT = 0
IN = 1
LOW = 0
HIGH = 1
PUD_OFF = 20
PUD_DOWN = 21
PUD_UP = 22


class GPIOStandIn(types.ModuleType):
    """A module object that records calls and keeps pin modes and levels."""

    BOARD, BCM, OUT, IN, LOW, HIGH = BOARD, BCM, OUT, IN, LOW, HIGH
    PUD_OFF, PUD_DOWN, PUD_UP = PUD_OFF, PUD_DOWN, PUD_UP
    RPI_INFO = {"P1_REVISION": 3, "TYPE": "simulated"}
    VERSION = "0.7.1-standin"

    def __init__(self, name: str = "RPi.GPIO"):
        super().__init__(name, "Recording stand-in for RPi.GPIO (hardware_sim.rpi_gpio).")
        self.calls: list[tuple] = []
        self.mode: int | None = None
        self.functions: dict[int, int] = {}
        self.levels: dict[int, int] = {}

    def getmode(self):
        self.calls.append(("getmode",))
        return self.mode

    def setmode(self, mode):
        self.calls.append(("setmode", mode))
        if mode not in (BOARD, BCM):
            raise ValueError("an invalid mode was passed to setmode()")
        self.mode = mode

    def setwarnings(self, flag):
        self.calls.append(("setwarnings", flag))

    def setup(self, channel, direction, pull_up_down=PUD_OFF, initial=None):
        self.calls.append(("setup", channel, direction))
        if self.mode is None:
            raise RuntimeError("Please set pin numbering mode using GPIO.setmode(GPIO.BOARD) or GPIO.setmode(GPIO.BCM)")
        self.functions[channel] = direction
        if initial is not None:
            self.levels[channel] = int(initial)

    def output(self, channel, value):
        self.calls.append(("output", channel, int(value)))
        if self.functions.get(channel) != OUT:
            raise RuntimeError("The GPIO channel has not been set up as an OUTPUT")
        self.levels[channel] = int(value)

    def input(self, channel):
        self.calls.append(("input", channel))
        return self.levels.get(channel, LOW)

    def cleanup(self, channel=None):
        """Like the real one: with no argument every pin this process set up is reset."""
        self.calls.append(("cleanup",) if channel is None else ("cleanup", channel))
        if channel is None:
            self.functions.clear()
            self.levels.clear()
            self.mode = None
        else:
            for ch in channel if isinstance(channel, (list, tuple)) else (channel,):
                self.functions.pop(ch, None)
                self.levels.pop(ch, None)


def modules() -> dict[str, types.ModuleType]:
    """Fresh ``{'RPi': ..., 'RPi.GPIO': ...}`` for ``sys.modules`` (patch both)."""
    gpio = GPIOStandIn()
    package = types.ModuleType("RPi", "Stand-in package for RPi.GPIO (hardware_sim.rpi_gpio).")
    package.__path__ = []  # a package, so "import RPi.GPIO" resolves through sys.modules
    package.GPIO = gpio
    return {"RPi": package, "RPi.GPIO": gpio}
