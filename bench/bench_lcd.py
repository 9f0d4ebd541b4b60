"""LCD benchmark: what it costs on the I2C bus to put a new correction on the panel.

The panel shows an ``ok`` frame; a new irregularity replaces it with a four-line
correction. Both drivers run against the PCF8574/HD44780 emulator
(:mod:`hardware_sim.i2c_lcd`), which counts the bytes written.

Figures (a 20x4 LCD; ``ok`` view -> 4-line correction view):

``lcd_i2c_bytes_new_correction``
    Data bytes written to the PCF8574 by :class:`dealerbox.hw.lcd.PanelLcd`
    (address bytes not included). No goal; lower is better.
``lcd_ms_new_correction_100khz``
    The same traffic as time on the wire at 100 kHz: for each I2C write message
    a start bit, the address byte and the data bytes at nine bits each (eight
    plus ACK), and a stop bit. Goal: at most 60 ms.
``lcd_i2c_bytes_new_correction_stock``, ``lcd_ms_new_correction_100khz_stock``
    The baseline: stock RPLCD ``CharLCD`` (PCF8574 backend, its own content
    cache) writing each line with ``cursor_pos`` + ``write_string``: eight
    single-byte transactions per character. Measured: 688 bytes, 137.6 ms,
    against 332 bytes and 30.1 ms for this driver.

The times are wire time only; on a Pi, RPLCD's own sleeps (three after every
nibble in the stock backend) and the Python overhead come on top, which is
where the 160-200 ms seen on real tables for a stock repaint come from.
"""

from __future__ import annotations

from RPLCD.i2c import CharLCD

from dealerbox.hw.lcd import PanelLcd
from dealerbox.service.panel import PanelView
from hardware_sim.i2c_lcd import SimulatedI2cBus

OK_VIEW = PanelView(
    lines=("OK          preflop ", "Hand 12   6 players ", "Board: A\x02 K\x03 7\x01     ",
           "                    "),
    led="green",
)
CORRECTION_VIEW = PanelView(
    lines=("EXPOSED CARD    1/3 ", "Finish the deal,    ", "then give seat 3 the",
           "top card of the stub"),
    led="amber", beep=True,
)


def _ours() -> SimulatedI2cBus:
    bus = SimulatedI2cBus.with_lcd(20, 4)
    with PanelLcd(cols=20, rows=4, bus=bus) as lcd:
        lcd.show(OK_VIEW)
        bus.reset_counters()
        lcd.show(CORRECTION_VIEW)
        if bus.lcd.glass() != list(CORRECTION_VIEW.lines):
            raise AssertionError("the emulated glass does not show the correction")
    return bus


class _StockOnBus(CharLCD):
    """Stock RPLCD, unchanged except that it talks to the given bus."""

    def __init__(self, bus, **kwargs):
        self._sim_bus = bus
        super().__init__("PCF8574", 0x27, **kwargs)

    def _init_connection(self):
        self.bus = self._sim_bus


def _stock() -> SimulatedI2cBus:
    bus = SimulatedI2cBus.with_lcd(20, 4)
    lcd = _StockOnBus(bus, cols=20, rows=4, charmap="A00")
    try:
        for slot in range(4):
            lcd.create_char(slot, (0b11111,) * 7 + (0,))
        for row, line in enumerate(OK_VIEW.lines):
            lcd.cursor_pos = (row, 0)
            lcd.write_string(line)
        bus.reset_counters()
        for row, line in enumerate(CORRECTION_VIEW.lines):
            lcd.cursor_pos = (row, 0)
            lcd.write_string(line)
    finally:
        lcd.close()
    return bus


def run() -> dict:
    """Measure both drivers; returns the figures described in the module docstring."""
    ours, stock = _ours(), _stock()
    return {
        "lcd_i2c_bytes_new_correction": ours.bytes_written,
        "lcd_ms_new_correction_100khz": round(ours.wire_seconds(100_000) * 1000, 2),
        "lcd_i2c_bytes_new_correction_stock": stock.bytes_written,
        "lcd_ms_new_correction_100khz_stock": round(stock.wire_seconds(100_000) * 1000, 2),
    }
