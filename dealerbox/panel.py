"""What the dealer's panel shows: LED state and LCD lines. Pure; drivers display it."""

from __future__ import annotations

from dataclasses import dataclass

#: LED colour for each verdict (RULES.md, "Verdicts").
LED_FOR_VERDICT = {
    "ok": ("green", False),
    "correct": ("amber", False),
    "misdeal": ("red", False),
    "void": ("red", False),
    "floor": ("red", True),
}


@dataclass(frozen=True, slots=True)
class PanelView:
    """One frame of the panel.

    ``lines`` has exactly ``rows`` strings of exactly ``cols`` characters each,
    printable ASCII plus the suit glyphs of :data:`dealerbox.cards.SUIT_GLYPH`
    (``\\x00``..``\\x03``, HD44780 CGRAM slots). ``led`` is ``green``, ``amber``
    or ``red``; ``blink`` is set for ``floor``; ``beep`` is set on the frame
    that first shows a new irregularity.
    """

    lines: tuple[str, ...]
    led: str
    blink: bool = False
    beep: bool = False

    @property
    def cols(self) -> int:
        return len(self.lines[0]) if self.lines else 0

    @property
    def rows(self) -> int:
        return len(self.lines)
