"""The Raspberry Pi's 40-pin header: which physical pin each BCM GPIO is on.

The config holds BCM numbers; a technician with a wire in hand counts header pins.
docs/WIRING.md's tables give both, and the commissioning run's advice quotes both
from here (tests/docs check that the tables agree with this map), so a pin is
named the same way everywhere. The map is the same on every Pi with a 40-pin
header (Pi 2, 3, 4, 5, Zero).
"""

from __future__ import annotations

__all__ = ["HEADER_PIN", "GROUND_PINS", "pin_words"]

#: BCM GPIO number -> physical pin of the 40-pin header.
HEADER_PIN = {
    0: 27, 1: 28, 2: 3, 3: 5, 4: 7, 5: 29, 6: 31, 7: 26, 8: 24, 9: 21, 10: 19, 11: 23, 12: 32, 13: 33,
    14: 8, 15: 10, 16: 36, 17: 11, 18: 12, 19: 35, 20: 38, 21: 40, 22: 15, 23: 16, 24: 18, 25: 22,
    26: 37, 27: 13,
}
#: The header's ground pins.
GROUND_PINS = (6, 9, 14, 20, 25, 30, 34, 39)


def pin_words(bcm: int) -> str:
    """``"BCM 23 (pin 16)"``: a GPIO as the config and the header both name it."""
    pin = HEADER_PIN.get(bcm)
    return f"BCM {bcm} (pin {pin})" if pin is not None else f"BCM {bcm}"
