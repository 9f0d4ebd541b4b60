"""The panel's LCD glass and LED printed on a terminal, frame by frame.

What ``dealerbox demo`` and ``dealerbox run --demo`` print: the glass's lines
in a frame (suit glyph slots as suit symbols, :func:`dealerbox.domain.cards.glass_symbols`)
with the lit LED beside it, and the irregularity's id (as README.md and RULES.md
name it) beside the LED, since the glass has room for a 15-letter label only
(``EXTRA BOARD CRD`` is ``FOUR_CARD_FLOP``).
"""

from __future__ import annotations

import sys
import time

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
    """Prints the emulated LCD's glass and the LED pins of a running daemon, when
    what the dealer must do changes: a new irregularity, its next step, or back to
    play on (a new street of a clean hand changes nothing the dealer must do)."""

    #: Wall seconds the LCD's thread gets to write the daemon's frame to the emulated glass.
    GLASS_WAIT_S = 1.0

    def __init__(self, table, daemon, out=None):
        self.table, self.daemon = table, daemon
        self.out = out or sys.stdout
        self._shown = None

    def frame(self):
        """(glass lines, lit LED colour or None, LED label) read off the emulated devices."""
        lit = [colour for colour, on in self.table.leds().items() if on]
        view = self.daemon.view
        if view is not None and view.blink:
            return tuple(self.table.glass()), "red", "RED (blinking)"
        return tuple(self.table.glass()), (lit[0] if lit else None), (", ".join(c.upper() for c in lit) or "off")

    def show(self, cause: str | None = None) -> bool:
        """Print the box (after *cause*, the line saying what the dealer did) if it
        changes what the dealer must do; True when it was printed."""
        decision = self.daemon.engine.decision
        if decision.same_as(self._shown):
            return False
        self._shown = decision
        view = self.daemon.view
        deadline = time.monotonic() + self.GLASS_WAIT_S
        # The LCD's own thread writes the glass: wait for it to show the daemon's frame.
        while view is not None and tuple(self.table.glass()) != tuple(view.lines) and time.monotonic() < deadline:
            time.sleep(0.005)
        glass, led, label = self.frame()
        if not glass:
            return False
        if cause:
            self.out.write(f"dealer: {cause}\n")
        if decision.irregularity:
            label += f"  {decision.irregularity}"
        draw_glass(glass, led, label, color=self.out.isatty(), out=self.out)
        return True
