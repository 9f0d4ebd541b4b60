"""The stock ``mfrc522`` 0.0.7 library, unchanged, polling the RC522 chip emulator: the driver's baseline.

The stock class cannot be handed a bus: its ``__init__`` calls ``spidev.SpiDev()``
and opens ``/dev/spidevB.D`` itself, and its module imports ``RPi.GPIO`` first
thing, whose real module raises RuntimeError anywhere but on a Pi. So for the
time of a ``with stock_library(chip) as mfrc522:`` block, ``sys.modules`` holds
two stand-ins, and only then:

- ``spidev``: its ``SpiDev().open(bus, device)`` reaches the emulator *chip*
  (any other bus or chip select fails as a missing device node does);
- ``RPi.GPIO``: takes the few calls the stock class makes (``getmode``,
  ``setmode``, ``setup``, ``output``, ``cleanup``) and drives nothing; the
  emulator has no reset line, so the stock reset pin is not modelled.

``mfrc522`` is imported inside the block and evicted from ``sys.modules`` on
both sides, and whatever ``spidev``/``RPi`` were there before come back, so no
other code (the dealerbox driver included) ever sees the stand-ins. This shim
is the bench's alone: dealerbox and hardware_sim never swap a module.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import sys
import types


def _evict_mfrc522() -> None:
    for name in [n for n in sys.modules if n == "mfrc522" or n.startswith("mfrc522.")]:
        del sys.modules[name]


class _InertGPIO(types.ModuleType):
    """``RPi.GPIO`` as far as the stock ``mfrc522`` calls it; no pin is driven."""

    BOARD, BCM, OUT, IN, LOW, HIGH = 10, 11, 0, 1, 0, 1

    def __init__(self):
        super().__init__("RPi.GPIO", "The bench's inert RPi.GPIO for the stock mfrc522 (bench/stock_mfrc522.py).")
        self._mode = None

    def getmode(self):
        return self._mode

    def setmode(self, mode):
        self._mode = mode

    def setwarnings(self, flag):
        pass

    def setup(self, channel, direction, pull_up_down=None, initial=None):
        pass

    def output(self, channel, value):
        pass

    def cleanup(self, channel=None):
        self._mode = None


def _spidev_for(chip) -> types.ModuleType:
    module = types.ModuleType("spidev", "The bench's spidev: SpiDev opens the RC522 emulator (bench/stock_mfrc522.py).")

    class SpiDev:
        """``spidev.SpiDev`` whose ``open`` reaches *chip* at its own bus and chip select."""

        def __init__(self, bus=None, device=None):
            object.__setattr__(self, "_chip", None)
            if bus is not None:
                self.open(bus, device or 0)

        def open(self, bus, device):
            if (bus, device) != (chip.bus, chip.device):
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", f"/dev/spidev{bus}.{device}")
            chip.open(bus, device)
            object.__setattr__(self, "_chip", chip)

        def __getattr__(self, name):       # xfer2, close, max_speed_hz, mode: the emulator's
            return getattr(self._chip, name)

        def __setattr__(self, name, value):
            setattr(self._chip, name, value)

    module.SpiDev = SpiDev
    return module


@contextlib.contextmanager
def stock_library(chip):
    """The stock ``mfrc522`` module, bound to *chip* (an :class:`~hardware_sim.rc522.RC522Emulator`) for the block."""
    names = ("spidev", "RPi", "RPi.GPIO")
    saved = {name: sys.modules.get(name) for name in names}
    logger = logging.getLogger("mfrc522Logger")
    handlers = list(logger.handlers)    # each stock instance adds one: take them back
    gpio = _InertGPIO()
    package = types.ModuleType("RPi")
    package.__path__ = []                # a package, so "import RPi.GPIO" resolves through sys.modules
    package.GPIO = gpio
    _evict_mfrc522()
    sys.modules.update({"spidev": _spidev_for(chip), "RPi": package, "RPi.GPIO": gpio})
    try:
        import mfrc522

        yield mfrc522
    finally:
        _evict_mfrc522()
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
        logger.handlers[:] = handlers
