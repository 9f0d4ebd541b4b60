"""The panel LCD driver against the PCF8574/HD44780 emulator on a simulated I2C bus."""

from __future__ import annotations

import errno

import pytest
import RPLCD.i2c
import smbus2

from dealerbox.domain.cards import SUIT_GLYPH, lcd_card
from dealerbox.errors import HardwareError
from dealerbox.hw.lcd import SUIT_BITMAPS, PanelLcd
from dealerbox.service.panel import PanelView
from hardware_sim.i2c_lcd import Pcf8574Lcd, SimulatedI2cBus

OK = PanelView(("OK          preflop ", "Hand 12   6 players ", "Board " + lcd_card("Ah") + " "
                + lcd_card("Ks") + " " + lcd_card("7d") + " " + lcd_card("2c") + "   ",
                "                    "), "green")
CORRECTION = PanelView(("EXPOSED CARD    1/3 ", "Finish the deal,    ", "then give seat 3 the",
                        "top card of the stub"), "amber", beep=True)
NON_BLANK = sum(ch != " " for line in CORRECTION.lines for ch in line)


@pytest.fixture
def bus():
    """A fresh I2C bus with a 20x4 LCD module at 0x27."""
    return SimulatedI2cBus.with_lcd(20, 4, address=0x27)


@pytest.fixture
def lcd(bus):
    with PanelLcd(cols=20, rows=4, bus=bus) as panel_lcd:
        yield panel_lcd


def test_glass_shows_exactly_the_view_lines_with_suit_glyphs(lcd, bus):
    assert lcd.show(OK) > 0
    assert bus.lcd.glass() == list(OK.lines)
    assert "\x02" in bus.lcd.glass()[2]  # the heart is CGRAM slot 2, not a space
    for suit, slot in SUIT_GLYPH.items():
        assert bus.lcd.cgram[ord(slot)] == SUIT_BITMAPS[suit]
    assert lcd.show(CORRECTION) > 0
    assert bus.lcd.glass() == list(CORRECTION.lines)
    assert lcd.lines == list(CORRECTION.lines)
    assert bus.lcd.backlight is True


def test_the_byte_stream_respects_hd44780_setup_and_hold(lcd, bus):
    lcd.show(OK)
    lcd.show(CORRECTION)
    assert bus.lcd.data_writes > 80
    assert bus.lcd.setup_violations == 0
    assert bus.lcd.hold_violations == 0


def test_only_changed_cells_are_written(lcd, bus):
    lcd.show(OK)
    bus.reset_counters()
    assert lcd.show(OK) == 0
    assert bus.bytes_written == 0

    full = lcd.repaint(CORRECTION)
    # After re-initialising, the cleared glass already holds most spaces (a
    # space between two changed cells is rewritten: cheaper than a cursor move).
    assert NON_BLANK <= full < 80
    repaint_bytes = bus.bytes_written

    bus.reset_counters()
    step2 = PanelView(("EXPOSED CARD    2/3 ",) + CORRECTION.lines[1:], "amber")
    assert lcd.show(step2) == 1
    one_cell_bytes = bus.bytes_written
    assert bus.lcd.glass() == list(step2.lines)
    # One cell: a cursor move and one character, about 10 expander bytes.
    assert 0 < one_cell_bytes <= 12
    assert one_cell_bytes * 20 < repaint_bytes


def test_a_one_cell_gap_is_rewritten_rather_than_skipped(lcd, bus):
    lcd.show(CORRECTION)
    bus.reset_counters()
    view = PanelView(("EXPOSED CARD    1/3 ", "Finish the deal,    ", "then give seat 3 the",
                      "Xop card of the stuX"), "amber")
    # Two changed cells far apart: two runs, two cursor moves.
    assert lcd.show(view) == 2
    bus.reset_counters()
    bus.lcd.reset_counters()
    view2 = PanelView(view.lines[:3] + ("YoY card of the stuX",), "amber")
    # Cells 0 and 2 change; writing the unchanged cell 1 costs less than a second move.
    assert lcd.show(view2) == 3
    assert bus.lcd.glass() == list(view2.lines)
    assert bus.lcd.instructions == 1


def test_a_16x2_lcd_shows_its_lines():
    bus = SimulatedI2cBus.with_lcd(16, 2, address=0x3F)
    with PanelLcd(cols=16, rows=2, address=0x3F, bus=bus) as lcd:
        short = PanelView(("EXPOSED " + lcd_card("Qh") + "   1/3", "Finish the deal "), "amber")
        lcd.show(short)
        assert bus.lcd.glass() == list(short.lines)
        assert bus.lcd.cgram[2] == SUIT_BITMAPS["h"]
        lcd.show(PanelView(("OK       preflop", "                "), "green"))
        assert bus.lcd.glass() == ["OK       preflop", " " * 16]


def test_unmapped_characters_show_as_question_marks_not_spaces(lcd, bus):
    # The A00 ROM has no backslash or tilde; RPLCD would silently print spaces.
    view = PanelView(("a~b\\c" + " " * 15,) + OK.lines[1:], "green")
    lcd.show(view)
    assert bus.lcd.glass()[0].startswith("a?b?c ")
    assert lcd.unmapped_chars == 2
    assert lcd.lines[0].startswith("a?b?c")


def test_a_view_of_the_wrong_size_is_fitted_and_counted(lcd, bus):
    lcd.show(PanelView(("much too long for a twenty column row", "short"), "red"))
    assert bus.lcd.glass() == ["much too long for a ", "short" + " " * 15, " " * 20, " " * 20]
    assert lcd.bad_views == 1
    lcd.show(object())  # no lines at all: blank, counted, no crash
    assert bus.lcd.glass() == [" " * 20] * 4
    assert lcd.bad_views == 2


def test_the_driver_opens_smbus2_so_a_stand_in_bus_can_replace_it(monkeypatch):
    bus = SimulatedI2cBus.with_lcd(20, 4, port=1)
    monkeypatch.setattr(smbus2, "SMBus", bus.open)
    lcd = PanelLcd(port=1, address=0x27)
    lcd.show(OK)
    assert bus.opens == 1
    assert bus.lcd.glass() == list(OK.lines)
    lcd.close()
    assert bus.closed  # the driver opened the bus, so it closes it
    lcd.close()


def test_a_bus_passed_in_stays_open_after_close(bus):
    lcd = PanelLcd(bus=bus)
    lcd.close()
    lcd.close()
    assert lcd.closed and not bus.closed
    with pytest.raises(HardwareError):
        lcd.show(OK)


def test_no_lcd_at_the_address_is_a_hardware_error():
    bus = SimulatedI2cBus(port=1, devices={})
    with pytest.raises(HardwareError) as info:
        PanelLcd(bus=bus, address=0x27)
    assert isinstance(info.value, OSError)
    assert "0x27" in str(info.value)


def test_a_bus_error_is_counted_and_the_next_frame_recovers(lcd, bus):
    lcd.show(OK)
    bus.inject_failures(1, after_bytes=7)  # cut off mid-character: nibble sync is lost
    assert lcd.show(CORRECTION) == 0
    assert lcd.bus_errors == 1
    assert NON_BLANK <= lcd.show(CORRECTION) < 80
    assert bus.lcd.glass() == list(CORRECTION.lines)


def test_repaint_recovers_a_display_that_lost_power(lcd, bus):
    lcd.show(OK)
    bus.lcd.power_cycle()
    assert bus.lcd.glass() == [" " * 20] * 4  # display off after power-on
    lcd.repaint(OK)
    assert bus.lcd.glass() == list(OK.lines)
    assert bus.lcd.cgram[3] == SUIT_BITMAPS["s"]


def test_backlight_follows_the_driver(bus):
    with PanelLcd(bus=bus, backlight=False) as lcd:
        assert bus.lcd.backlight is False
        lcd.backlight = True
        assert bus.lcd.backlight is True
        lcd.show(OK)
        assert bus.lcd.glass() == list(OK.lines)
        assert bus.lcd.setup_violations == 0


def test_unsupported_geometry_and_charmap_are_refused(bus):
    with pytest.raises(ValueError):
        PanelLcd(cols=40, rows=4, bus=bus)
    with pytest.raises(ValueError):
        PanelLcd(charmap="B99", bus=bus)


# -- the emulator itself, checked against stock RPLCD ----------------------------------

def test_the_emulator_decodes_stock_rplcd(monkeypatch):
    bus = SimulatedI2cBus.with_lcd(20, 4)
    monkeypatch.setattr(RPLCD.i2c, "SMBus", bus.open)
    stock = RPLCD.i2c.CharLCD("PCF8574", 0x27, cols=20, rows=4, charmap="A00")
    try:
        stock.create_char(1, SUIT_BITMAPS["d"])
        stock.write_string("OK          preflop \r\nJ\x01 pair")
        assert bus.lcd.glass()[:2] == ["OK          preflop ", "J\x01 pair" + " " * 13]
        assert bus.lcd.cgram[1] == SUIT_BITMAPS["d"]
        stock.cursor_pos = (3, 18)
        stock.write_string("xy")
        assert bus.lcd.glass()[3] == " " * 18 + "xy"
        stock.backlight_enabled = False
        assert bus.lcd.backlight is False
    finally:
        stock.close()


def test_stock_rplcd_costs_far_more_bytes_than_this_driver(bus):
    other = SimulatedI2cBus.with_lcd(20, 4)
    with PanelLcd(bus=bus) as ours:
        ours.show(OK)
        bus.reset_counters()
        ours.show(CORRECTION)

    class Stock(RPLCD.i2c.CharLCD):
        def _init_connection(self):
            self.bus = other

    stock = Stock("PCF8574", 0x27, cols=20, rows=4, charmap="A00")
    for row, line in enumerate(OK.lines):
        stock.cursor_pos = (row, 0)
        stock.write_string(line)
    other.reset_counters()
    for row, line in enumerate(CORRECTION.lines):
        stock.cursor_pos = (row, 0)
        stock.write_string(line)
    assert other.lcd.glass() == bus.lcd.glass() == list(CORRECTION.lines)
    assert bus.wire_seconds() * 3 < other.wire_seconds()


def _send(lcd: Pcf8574Lcd, value: int, rs: int = 0, light: int = 0x08) -> None:
    for nibble in (value & 0xF0, (value << 4) & 0xF0):
        lcd.pcf8574_write(nibble | rs | light)
        lcd.pcf8574_write(nibble | rs | light | 0x04)
        lcd.pcf8574_write(nibble | rs | light)


def _to_four_bit(lcd: Pcf8574Lcd) -> None:
    for nibble in (0x30, 0x30, 0x30, 0x20):  # 8-bit mode: one nibble per instruction
        lcd.pcf8574_write(nibble | 0x08)
        lcd.pcf8574_write(nibble | 0x0C)
        lcd.pcf8574_write(nibble | 0x08)
    _send(lcd, 0x28)  # 4-bit, two lines
    _send(lcd, 0x0C)  # display on
    _send(lcd, 0x01)  # clear


def test_emulator_row_mapping_and_ddram_wrap():
    lcd = Pcf8574Lcd(20, 4)
    _to_four_bit(lcd)
    _send(lcd, 0x80 | 0x12)
    for ch in "abcd":  # 0x12, 0x13 end row 0; 0x14, 0x15 start row 2
        _send(lcd, ord(ch), rs=1)
    _send(lcd, 0x80 | 0x67)
    for ch in "yz":  # 0x67 is the last cell of row 3; line 2 then wraps to 0x00
        _send(lcd, ord(ch), rs=1)
    glass = lcd.glass()
    assert glass[0] == "z" + " " * 17 + "ab"
    assert glass[2] == "cd" + " " * 18
    assert glass[1] == " " * 20
    assert glass[3] == " " * 19 + "y"
    assert [lcd.cell_address(r, 0) for r in range(4)] == [0x00, 0x40, 0x14, 0x54]


def test_emulator_entry_mode_shift_and_cgram():
    lcd = Pcf8574Lcd(16, 2)
    _to_four_bit(lcd)
    _send(lcd, 0x04)  # entry mode: decrement, no shift
    _send(lcd, 0x80 | 0x05)
    for ch in "abc":
        _send(lcd, ord(ch), rs=1)
    assert lcd.glass()[0] == "   cba" + " " * 10
    _send(lcd, 0x18)  # shift the display left by one
    assert lcd.glass()[0] == "  cba" + " " * 11
    _send(lcd, 0x02)  # home undoes the shift
    assert lcd.glass()[0] == "   cba" + " " * 10
    _send(lcd, 0x06)  # increment again
    _send(lcd, 0x40 | (3 << 3))
    for row in SUIT_BITMAPS["s"]:
        _send(lcd, row, rs=1)
    _send(lcd, 0x80 | 0x40)
    _send(lcd, 0x03, rs=1)
    _send(lcd, 0x0B, rs=1)  # 0x08..0x0F mirror the CGRAM slots
    assert lcd.cgram[3] == SUIT_BITMAPS["s"]
    assert lcd.glass()[1] == "\x03\x03" + " " * 14
    _send(lcd, 0x08)  # display off
    assert lcd.glass() == [" " * 16] * 2


def test_emulator_counts_a_naive_stream_that_raises_e_with_rs():
    lcd = Pcf8574Lcd(20, 4)
    _to_four_bit(lcd)
    lcd.pcf8574_write(0x08)
    lcd.pcf8574_write(0x40 | 0x01 | 0x08 | 0x04)  # RS and E rise together
    assert lcd.setup_violations == 1


def test_the_bus_behaves_like_smbus2_for_errors():
    bus = SimulatedI2cBus.with_lcd(20, 4)
    with pytest.raises(OSError) as info:
        bus.write_byte(0x3F, 0x08)
    assert info.value.errno == errno.EREMOTEIO
    with pytest.raises(ValueError):
        bus.write_i2c_block_data(0x27, 0x08, [0x08] * 33)
    bus.write_i2c_block_data(0x27, 0x08, [0x08] * 3)
    assert bus.bytes_written == 4 and bus.transactions == 1
    assert bus.wire_bits == 1 + 9 * 5 + 1
    with pytest.raises(FileNotFoundError):
        bus.open(2)
    bus.close()
    with pytest.raises(OSError):
        bus.write_byte(0x27, 0x08)


@pytest.mark.parametrize("stray_nibbles", [0, 1])
def test_a_restarted_daemon_resynchronises_a_display_left_in_four_bit_mode(bus, stray_nibbles):
    with PanelLcd(bus=bus) as first:
        first.show(CORRECTION)
    for _ in range(stray_nibbles):  # killed between the two halves of a byte
        for out in (0x58, 0x5C, 0x58):
            bus.lcd.pcf8574_write(out)
    assert bus.lcd.eight_bit is False
    with PanelLcd(bus=bus) as second:
        second.show(OK)
        assert bus.lcd.glass() == list(OK.lines)
        assert bus.lcd.cgram[0] == SUIT_BITMAPS["c"]


def test_a_bus_opened_for_a_missing_lcd_is_closed_again(monkeypatch):
    bus = SimulatedI2cBus(port=1, devices={})
    monkeypatch.setattr(smbus2, "SMBus", bus.open)
    with pytest.raises(HardwareError):
        PanelLcd(port=1)
    assert bus.opens == 1 and bus.closed
