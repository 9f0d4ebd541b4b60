"""The panel's LCD glass and LED printed on a terminal, frame by frame.

What ``dealerbox demo`` and ``dealerbox run --demo`` print: the glass's lines
in a frame (suit glyph slots as suit symbols, :func:`dealerbox.domain.cards.glass_symbols`)
with the lit LED beside it.
"""

from __future__ import annotations

import sys

from dealerbox.domain.cards import glass_symbols

#: ANSI colour of each LED's dot, on a terminal that shows colours.
LED_COLOUR = {"green": "\033[32m", "amber": "\033[33m", "red": "\033[31m"}


def draw_glass(lines, led: str | None, label: str, *, color: bool, out=None) -> None:
    """The LCD's lines in a frame, with the LED beside it (*led* is its colour, if lit)."""
    # Looked up at each call, not bound at import: a redirected stdout must get the frames.
    out = out or sys.stdout
    if color and led in LED_COLOUR:
        label = f"{LED_COLOUR[led]}\u25cf\033[0m {label}"
    cols = len(lines[0])
    out.write(f"+{'-' * cols}+  LED: {label}\n")
    for line in lines:
        out.write(f"|{glass_symbols(line)}|\n")
    out.write(f"+{'-' * cols}+\n")
    out.flush()


def show_panel(view, *, color: bool, out=None) -> None:
    """A panel model frame (:class:`dealerbox.service.panel.PanelView`), as the glass and the LEDs would show it."""
    label = view.led.upper() + (" (blinking)" if view.blink else "") + (" *beep*" if view.beep else "")
    draw_glass(view.lines, view.led, label, color=color, out=out)


class GlassPrinter:
    """Prints the emulated LCD's glass and the LED pins whenever either changes."""

    def __init__(self, table, daemon, out=None):
        self.table, self.daemon = table, daemon
        self.out = out or sys.stdout
        self._last = None

    def frame(self):
        """(glass lines, lit LED colour or None, LED label) read off the emulated devices."""
        lit = [colour for colour, on in self.table.leds().items() if on]
        view = self.daemon.view
        if view is not None and view.blink:
            return tuple(self.table.glass()), "red", "RED (blinking)"
        return tuple(self.table.glass()), (lit[0] if lit else None), (", ".join(c.upper() for c in lit) or "off")

    def poll(self) -> None:
        """Print the frame if it changed since the last one printed (and the glass shows anything)."""
        frame = self.frame()
        if frame == self._last or not frame[0]:
            return
        self._last = frame
        glass, led, label = frame
        draw_glass(glass, led, label, color=self.out.isatty(), out=self.out)
