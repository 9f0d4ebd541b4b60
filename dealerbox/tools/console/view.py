"""What the sim console's screen shows, read from the emulators and the daemon.

Pure text: each function takes the console's session (its simulated table,
its daemon, its decisions) and returns the lines or the styled text of one box
of the screen. The table view (where the box believes every card is), the LCD
glass, the LEDs and the decision log; the app only places them.
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING

from rich.text import Text

from dealerbox.domain.cards import JOKER, glass_symbols
from dealerbox.rules.tracker import UNREAD_PREFIX

if TYPE_CHECKING:
    from dealerbox.tools.console.app import ConsoleSession

LED_STYLE = {"green": "bold green", "amber": "bold yellow", "red": "bold red"}


def _label(key: str) -> str:
    """A card as the table view spells it: a card that left the stub unread has no name yet."""
    if key.startswith(UNREAD_PREFIX):
        return "(unread)"
    return JOKER if key.startswith("joker:") else key


def table_lines(session: ConsoleSession) -> list[str]:
    """Where the box believes the cards are: stub count, seats, board, burns, aside, muck."""
    engine = session.daemon.engine
    where = session.where()
    order = {c: i for i, c in enumerate(list(engine.deal_cards))}
    by_place: dict[str, list[str]] = collections.defaultdict(list)
    for key, place in where.items():
        by_place[place].append(key)
    panel = session.daemon.panel
    players = panel.players if panel is not None else session.config.panel.players
    lines = [f"{session.config.name} · {session.config.profile.name} · phase {engine.phase} · "
             f"panel players {players} · hand players {engine.players or '-'}",
             f"stub   {len(by_place.get('stub', []))} cards" + (
                 f"   drawn, not placed: {' '.join(_label(k) for k in by_place['hand'])}" if by_place.get("hand") else "")]
    seats = sorted((p for p in by_place if p.startswith("seat")), key=lambda p: int(p[4:]))
    for seat in seats:
        cards = sorted(by_place[seat], key=lambda c: order.get(c, 99))
        lines.append(f"seat {int(seat[4:]):<2} {' '.join(_label(c) for c in cards)}")
    if not seats:
        lines.append("seats  -")
    for place in ("board", "burn", "aside", "muck"):
        cards = by_place.get(place, [])
        name = "burns" if place == "burn" else place
        lines.append(f"{name:<6} {' '.join(_label(c) for c in cards) or '-'}")
    felt = list(session.hands.on_felt.values())
    lines.append(f"felt   {' '.join(felt) or '-'}   (lying on the board antenna)")
    readers = "  ".join(f"{n} {'UNPLUGGED' if n in session.hands.unplugged else r.backend}"
                        for n, r in session.config.readers.items())
    lines.append(f"readers {readers}")
    return lines


def glass_lines(session: ConsoleSession) -> tuple[str, list[str]]:
    """(title, LCD lines with suit symbols): the emulated glass, or the frame sent to a real LCD."""
    glass = session.table.glass()
    if glass:
        return "LCD", [glass_symbols(line) for line in glass]
    view = session.daemon.view
    lines = list(view.lines) if view is not None else []
    return "LCD (real; frame sent)", [glass_symbols(line) for line in lines]


def leds_text(session: ConsoleSession) -> Text:
    """The LED pins as lit now; a floor verdict's red is marked blinking."""
    view = session.daemon.view
    blink = bool(view is not None and view.blink)
    pins = session.table.leds()
    text = Text()
    if not pins:
        text.append("panel real; the box drives ")
        if view is not None:
            text.append(view.led.upper() + (" (blinking)" if blink else ""), style=LED_STYLE.get(view.led, ""))
        return text
    for colour in ("green", "amber", "red"):
        lit = pins.get(colour, False) or (blink and colour == "red")
        text.append("\u25cf " if lit else "\u25cb ", style=LED_STYLE[colour] if lit else "dim")
        label = colour.upper() if lit else colour
        if colour == "red" and blink:
            label += " (blinking)"
        text.append(label + "   ", style=LED_STYLE[colour] if lit else "dim")
    return text


def decision_lines(session: ConsoleSession, n: int = 6) -> list[str]:
    """The last decisions, newest last, and the step the dealer must do now."""
    out = []
    decisions = session.last_decisions(n)
    for d in decisions:
        steps = d.get("steps") or []
        counter = f" step {d['step'] + 1}/{len(steps)}" if steps and d["step"] < len(steps) else ""
        cards = f" [{' '.join(d.get('cards') or [])}]" if d.get("cards") else ""
        out.append(f"t={d['t']:9.2f}  {d['verdict']:<7} {d.get('irregularity') or '-'}{cards}{counter}")
    if decisions:
        d = decisions[-1]
        steps = d.get("steps") or []
        if steps and d["step"] < len(steps):
            out.append(f"now: {steps[d['step']]}")
        if d.get("rule"):
            out.append(f"rule: {d['rule']}")
    return out or ["no decision yet"]
