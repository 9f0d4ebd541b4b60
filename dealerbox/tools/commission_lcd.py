"""The LCD's commissioning step: every character the messages put on it, each line and column, the backlight.

The test pattern is made from the message files themselves (``firmware_config/messages``):
every character of the LCD forms of the four languages (titles, verdicts, phases,
streets, the steps' ``lcd`` and ``lcd16`` forms), the card ranks, the digits of the
step counter and the four suit glyphs the driver programs into CGRAM. A character
the module's ROM lacks would show as ``?`` on the glass: the driver counts those.
The technician compares the glass with the terminal, page by page.
"""

from __future__ import annotations

import re
import time

from dealerbox.domain import commission_advice as A
from dealerbox.domain import commission_figures as F
from dealerbox.domain.cards import GLYPH_SYMBOL, SUIT_GLYPH
from dealerbox.domain.messages import LANGUAGES, load_messages
from dealerbox.errors import HardwareError
from dealerbox.hw.buses import I2C_PINS
from dealerbox.hw.header import pin_words
from dealerbox.service.panel import PanelView
from dealerbox.tools.commission_bench import Bench
from dealerbox.tools.commission_record import DeviceResult, Figure

__all__ = ["lcd_characters", "pattern_pages", "check_lcd", "FRAME_MS"]

_PLACEHOLDER = re.compile(r"\{[a-z]+\}")
_RANKS = "23456789TJQKA"
#: The longest a whole frame may take to write (the daemon shows a decision within a frame).
FRAME_MS = 250.0


def lcd_characters(languages=LANGUAGES) -> str:
    """Every character the LCD forms of *languages* use, the ranks, digits and suit glyphs, sorted."""
    chars = set(_RANKS) | set("0123456789/") | set(SUIT_GLYPH.values())
    for lang in languages:
        m = load_messages(lang)
        texts = [*m.titles.values(), *m.verdicts.values(), *m.phases.values(), *m.streets.values(),
                 m.ok["lcd"], m.ok["lcd16"]]
        for step in m.steps.values():
            texts += [step["lcd"], step["lcd16"]]
        for text in texts:
            chars |= set(_PLACEHOLDER.sub("", text))
    chars.discard(" ")
    return "".join(sorted(chars))


def pattern_pages(chars: str, cols: int, rows: int) -> list[tuple[str, ...]]:
    """The pattern's pages: *chars* cell by cell, then a ruler page (each row's number, then
    the column digits, ``#`` in the last column) that shows every line and column."""
    per_page = cols * rows
    pages = []
    for start in range(0, len(chars), per_page):
        chunk = chars[start:start + per_page].ljust(per_page)
        pages.append(tuple(chunk[r * cols:(r + 1) * cols] for r in range(rows)))
    ruler = "".join(str((c + 1) % 10) for c in range(cols))
    pages.append(tuple(f"{r + 1}{ruler[1:-1]}#" for r in range(rows)))
    return pages


def _on_terminal(line: str) -> str:
    return "".join(GLYPH_SYMBOL.get(ch, ch) for ch in line)


def _show_emulated(bench: Bench, *, backlight: bool = False) -> None:
    """On the emulators, what the emulated glass shows: the technician confirms that instead."""
    glass = bench.hands.glass()
    if glass is None:
        return
    if backlight:
        bench.technician.say(f"  (the emulated LCD's backlight is {'on' if bench.hands.backlight() else 'off'})")
        return
    bench.technician.say("  (the emulated LCD shows:)")
    for line in glass:
        bench.technician.say(f"  |{_on_terminal(line)}|")


def check_lcd(bench: Bench) -> DeviceResult:
    """Show the pattern; the technician confirms each page and the backlight."""
    lc = bench.config.lcd
    say = bench.technician.say
    bus_pins = I2C_PINS.get(lc.port, {})
    wiring = (f"I2C{lc.port} address {lc.address:#04x}: "
              + ", ".join(f"{signal} {pin_words(pin)}" for signal, pin in bus_pins.items())
              + ", VCC 5 V and GND; the backpack's address (0x27 or 0x3F, i2cdetect -y "
              + f"{lc.port}) and its contrast screw")
    say(f"The LCD ({lc.cols}x{lc.rows}, charmap {lc.charmap}) on {wiring.split(':')[0]}.")
    try:
        lcd = bench.keep(lc.open(bench.buses(lc.backend, "lcd.backend").i2c(lc.port)))
    except HardwareError as exc:
        return DeviceResult("lcd", "fail", f"the LCD does not answer ({exc}): check {wiring}.",
                            [Figure.exactly(F.ANSWERS_ON_I2C, 0, 1)])
    figures = [Figure.exactly(F.ANSWERS_ON_I2C, 1, 1)]
    advice = []
    chars = lcd_characters()
    pages = pattern_pages(chars, lc.cols, lc.rows)
    slowest = 0.0
    for n, lines in enumerate(pages, 1):
        start = time.perf_counter()
        lcd.show(PanelView(lines, "green"))
        slowest = max(slowest, (time.perf_counter() - start) * 1000)
        last = n == len(pages)
        say(f"Page {n} of {len(pages)} on the LCD should read" + (" (each line numbered, the column digits, "
            "# in the last column):" if last else f" ({len(chars)} characters of the four languages, the "
            "suits as glyphs):"))
        for line in lines:
            say(f"  |{_on_terminal(line)}|")
        _show_emulated(bench)
        seen = bench.technician.confirm("Does the LCD show exactly this, every line and column?")
        figures.append(Figure.confirmed((F.LAST_PAGE_SHOWN if last else F.PAGE_SHOWN).format(page=n), seen))
        if not seen:
            advice.append(f"page {n} did not show right: check the contrast screw and {wiring}"
                          if last else f"page {n} did not show right: a character ROM other than "
                          f"{lc.charmap} (set [lcd] charmap), or {wiring}")
    figures.append(Figure.exactly(F.UNMAPPED_CHARACTERS, lcd.unmapped_chars, 0))
    if lcd.unmapped_chars:
        advice.append(f"{lcd.unmapped_chars} character(s) are not in the {lc.charmap} ROM and show as '?': "
                      "try [lcd] charmap = \"A02\"")
    figures.append(Figure.at_most(F.SLOWEST_FRAME, round(slowest, 1), FRAME_MS, "ms"))
    lcd.backlight = False
    _show_emulated(bench, backlight=True)
    off = bench.technician.confirm("The backlight is switched off now: is it dark?")
    lcd.backlight = True
    _show_emulated(bench, backlight=True)
    on = bench.technician.confirm("And switched on again: is it lit?")
    figures.append(Figure.confirmed(F.BACKLIGHT, off and on))
    if not (off and on):
        advice.append(A.BACKLIGHT_JUMPER)
    figures.append(Figure.exactly(F.I2C_ERRORS, lcd.bus_errors, 0))
    if lcd.bus_errors:
        advice.append(f"the bus failed {lcd.bus_errors} time(s): check {wiring}")
    lcd.show(PanelView(tuple(" " * lc.cols for _ in range(lc.rows)), "green"))
    return DeviceResult.judged("lcd", figures, advice)
