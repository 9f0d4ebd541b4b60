"""An emulated photo-interrupter at the shoe's mouth, on a gpiozero MockFactory pin."""

from __future__ import annotations


class PhotoInterrupterEmulator:
    """Drives the mock pin a :class:`dealerbox.hw.mouth.MouthSensor` reads, as a card breaking the beam would.

    *pin_factory* is a :class:`gpiozero.pins.mock.MockFactory`; the module's own
    pull resistor holds the line at the unblocked level.
    """

    def __init__(self, pin_factory, pin, blocked_level: str = "low"):
        self.pin = pin_factory.pin(pin)
        self.blocked_level = blocked_level
        self._release()

    def _block(self) -> None:
        self.pin.drive_low() if self.blocked_level == "low" else self.pin.drive_high()

    def _release(self) -> None:
        self.pin.drive_high() if self.blocked_level == "low" else self.pin.drive_low()

    def card_passes(self, chatter: int = 0) -> None:
        """One card crosses the beam; *chatter* extra edges as its edge wobbles."""
        self._block()
        for _ in range(chatter):
            self._release()
            self._block()
        self._release()
