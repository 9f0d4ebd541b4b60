"""The technician's side of a commissioning run: what they are told, what they answer, what their hands do.

A step *says* what to do and what was measured (:meth:`Technician.say`), *asks*
what the technician sees or hears (:meth:`Technician.confirm`), and asks their
hands to act (:class:`Hands`): press a button, draw cards through the mouth, lay
cards on an antenna. At a real table the hands are the technician's own, so
:class:`TechnicianHands` does nothing but let the person act; on the emulators a
simulated dealer's hands act on the chip emulators instead
(:mod:`dealerbox.tools.commission_emulation`).

:class:`TerminalTechnician` reads the answers from the terminal;
:class:`ScriptedTechnician` gives one fixed answer to every question, for an
emulated run, and only when it was chosen explicitly (``--answers yes``).
"""

from __future__ import annotations

import sys
from typing import TextIO

__all__ = ["Technician", "TerminalTechnician", "ScriptedTechnician", "Hands", "TechnicianHands", "no_terminal"]


def no_terminal(stdin=None, stdout=None) -> str | None:
    """Why a guided run cannot start here (no terminal to ask in), or None."""
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    if not (stdin is not None and stdin.isatty() and stdout is not None and stdout.isatty()):
        return ("dealerbox commission: needs a terminal to ask the technician in (ssh -t, not a pipe or a "
                "script); --report prints the last record without one")
    return None


class Technician:
    """Who the run talks to. Subclasses must override :meth:`confirm`; they may override
    :meth:`say` (the default prints to *out*)."""

    def __init__(self, out: TextIO | None = None):
        self.out = out or sys.stdout

    def say(self, text: str = "") -> None:
        """Tell the technician something: an instruction, a figure, a verdict."""
        self.out.write(text + "\n")
        self.out.flush()

    def confirm(self, question: str) -> bool:
        """Ask a yes/no question about what the technician sees or hears."""
        raise NotImplementedError


class TerminalTechnician(Technician):
    """Asks in the terminal: ``y`` or ``n`` then Enter (an empty answer asks again)."""

    def __init__(self, out: TextIO | None = None, inp: TextIO | None = None):
        super().__init__(out)
        self.inp = inp or sys.stdin

    def confirm(self, question: str) -> bool:
        while True:
            self.out.write(f"{question} [y/n] ")
            self.out.flush()
            line = self.inp.readline()
            if not line:
                raise EOFError("the terminal closed")
            answer = line.strip().lower()
            if answer in ("y", "yes"):
                return True
            if answer in ("n", "no"):
                return False
            self.say("  answer y (yes) or n (no)")


class ScriptedTechnician(Technician):
    """Gives *answer* to every question and prints it: the emulated run's technician (``--answers``)."""

    def __init__(self, answer: bool, out: TextIO | None = None):
        super().__init__(out)
        self.answer = answer

    def confirm(self, question: str) -> bool:
        self.say(f"{question} [y/n] {'y' if self.answer else 'n'}  (scripted answer)")
        return self.answer


class Hands:
    """What the technician's hands do when a step asks. Every method returns at once; the
    step measures what the devices see meanwhile.

    Subclasses may override every action (the default does nothing: a person acts),
    :attr:`done` (True once the last action asked for has been carried out; the default,
    False, leaves the step to end on its own quiet time), :meth:`glass`, :meth:`backlight` and :meth:`lamps`
    (what emulated devices show) and :meth:`close`.
    """

    @property
    def done(self) -> bool:
        return False

    def press(self, button: str, hold_s: float = 0.15) -> None:
        """Press *button* and let go after *hold_s*."""

    def draw(self, uids: list[str], pace_s: float) -> None:
        """Draw the cards of these tags out of the shoe, one every *pace_s*."""

    def lay(self, uids: list[str], zone: str) -> None:
        """Lay the cards of these tags on *zone*'s antenna and leave them there."""

    def lift(self, uids: list[str], zone: str) -> None:
        """Take these cards off *zone*'s antenna."""

    def slide(self, uid: str, zone: str) -> None:
        """Slide one card across *zone*'s antenna without stopping."""

    def glass(self) -> list[str] | None:
        """What an emulated LCD's glass shows, for a technician who cannot look at it; None at a real table."""
        return None

    def backlight(self) -> bool | None:
        """Whether an emulated LCD's backlight is on; None at a real table."""
        return None

    def lamps(self) -> dict[str, bool] | None:
        """Which emulated LEDs are lit, likewise; None at a real table."""
        return None

    def close(self) -> None:
        """Stop acting (Ctrl-C): nothing is left half-done by the hands."""


class TechnicianHands(Hands):
    """A real table: the technician's own hands act; nothing to do here."""
