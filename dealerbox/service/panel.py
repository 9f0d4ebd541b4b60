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
    printable ASCII plus the suit glyphs of :data:`dealerbox.domain.cards.SUIT_GLYPH`
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


def _wrap(text: str, cols: int, rows: int) -> list[str]:
    """Word-wrap *text* into at most *rows* lines of *cols*; cut the last line if it must."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        while len(word) > cols:
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:cols])
            word = word[cols:]
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= cols:
            line += " " + word
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines[:rows]


def render(decision, messages, *, cols: int = 20, rows: int = 4, previous=None, phase: str | None = None) -> PanelView:
    """The panel frame for *decision*: title and step counter on top, the step below.

    ``beep`` is set when *decision* shows an irregularity that *previous* did not.
    *phase* (where the hand stands now) replaces the decision's own on an ``ok`` frame:
    decisions are written only when the verdict or the step changes.
    """
    led, blink = LED_FOR_VERDICT[decision.verdict]
    title = messages.title(decision.irregularity, decision.verdict)
    if decision.steps and decision.step < len(decision.steps):
        body = messages.lcd(decision.steps[decision.step], cols)
        counter = f"{decision.step + 1}/{len(decision.steps)}"
    elif decision.verdict == "ok" and decision.irregularity is None:
        body = messages.ok["lcd" if cols >= 20 else "lcd16"]
        counter = messages.phases.get(phase or decision.phase, phase or decision.phase)
    else:
        body = ""
        counter = ""
    room = cols - len(counter) - 1
    top = (title[:room].ljust(room) + " " + counter) if counter else title[:cols]
    lines = [top] + _wrap(body, cols, rows - 1)
    lines = [ln[:cols].ljust(cols) for ln in lines] + [" " * cols] * (rows - len(lines))
    beep = decision.irregularity is not None and (previous is None or previous.irregularity != decision.irregularity)
    return PanelView(tuple(lines[:rows]), led, blink, beep)


def technician_line(view: PanelView, note: str, *, storage_fault: bool = False, beep: bool | None = None) -> PanelView:
    """*view* with *note* on its last line, the technician's line.

    With ``storage_fault`` a green LED turns amber: the box judges on, but
    what it sees is not on record until the disk takes writes again. A red
    or amber verdict keeps its colour: the dealer's correction comes first.
    """
    cols = view.cols
    lines = list(view.lines)
    lines[-1] = note[:cols].ljust(cols)
    led = "amber" if storage_fault and view.led == "green" else view.led
    return PanelView(tuple(lines), led, view.blink, view.beep if beep is None else beep)
