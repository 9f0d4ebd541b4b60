"""The panel's commissioning steps: the LEDs and the buzzer (the technician confirms), and every
button asked for in turn, its pin and its bounce measured, the long FLOOR press.

Both steps run on one :class:`~dealerbox.hw.gpio_panel.PanelGpio`, the driver the box
uses, opened with the config's ``[panel]``. Its edge observer gives each raw edge of a
button's line with its time, before the driver's debounce judges it: a contact's
bounce is the span of the edges of one press (or release), and it must stay within
the config's ``debounce_s``, or the box would count one press twice or drop one.
"""

from __future__ import annotations

import threading

from dealerbox.domain import commission_advice as A
from dealerbox.domain import commission_figures as F
from dealerbox.errors import HardwareError
from dealerbox.hw.gpio_panel import LED_COLOURS, PANEL_BUTTON_ORDER, PanelGpio
from dealerbox.hw.header import GROUND_PINS, pin_words
from dealerbox.service.panel import PanelView
from dealerbox.tools.commission_bench import Bench, hardware_advice
from dealerbox.tools.commission_record import DeviceResult, Figure

__all__ = ["PanelProbe", "check_leds", "check_buttons", "BURST_GAP_S", "label"]

#: Edges closer than this belong to one burst (a contact's bounce); a person's press lasts longer.
BURST_GAP_S = 0.025
#: The line must stay quiet this long after a release before the press is judged.
QUIET_S = 0.3
_GROUND = ", ".join(str(p) for p in GROUND_PINS)


def label(button: str) -> str:
    """A button as its cap reads: ``ROUND DONE``."""
    return button.replace("_", " ").upper()


class PanelProbe:
    """The panel driver opened for measuring: its events and every raw edge, with their times."""

    def __init__(self, bench: Bench):
        config = bench.config
        self.pins = config.panel.pins
        self.events: list = []
        self.edges: list[tuple[str, bool, float]] = []
        self._lock = threading.Lock()
        factory = bench.buses(config.panel.backend, "panel.backend").pin_factory()
        self.panel: PanelGpio = bench.keep(config.panel.open(pin_factory=factory, sink=self._event,
                                                             clock=bench.clock, edge_observer=self._edge))

    def _event(self, event) -> None:
        with self._lock:
            self.events.append(event)

    def _edge(self, name: str, pressed: bool, t: float) -> None:
        with self._lock:
            self.edges.append((name, pressed, t))

    def clear(self) -> None:
        with self._lock:
            self.events.clear()
            self.edges.clear()

    def taken(self) -> tuple[list, list]:
        with self._lock:
            return list(self.events), list(self.edges)


def _probe(bench: Bench) -> PanelProbe:
    if "panel" not in bench.shared:
        bench.shared["panel"] = PanelProbe(bench)
    return bench.shared["panel"]


def _panel_failed(device: str, exc: Exception) -> DeviceResult:
    return DeviceResult(device, "fail", f"the panel's GPIO pins cannot be opened: {hardware_advice(exc)}",
                        [Figure.exactly(F.GPIO_OPEN, 0, 1)])


def _show_emulated(bench: Bench) -> None:
    """On the emulators, which emulated LEDs are lit: the technician confirms that instead."""
    lamps = bench.hands.lamps()
    if lamps is not None:
        bench.technician.say("  (the emulated LEDs: " + ", ".join(f"{c} {'ON' if on else 'off'}"
                                                                for c, on in lamps.items()) + ")")


def check_leds(bench: Bench) -> DeviceResult:
    """Each colour alone, the blink, the buzzer's beep; the technician confirms each."""
    try:
        probe = _probe(bench)
    except HardwareError as exc:
        return _panel_failed("leds", exc)
    say, confirm = bench.technician.say, bench.technician.confirm
    panel, pins = probe.panel, probe.pins
    figures, advice = [], []
    say("The LEDs and the buzzer.")
    for colour in LED_COLOURS:
        panel.show(PanelView((), colour))
        _show_emulated(bench)
        lit = confirm(f"Is the {colour} LED lit, and only it? ({pin_words(pins.leds[colour])})")
        figures.append(Figure.confirmed(F.LED_ALONE.format(colour=colour), lit))
        if not lit:
            advice.append(f"the {colour} LED: check its wire from {pin_words(pins.leds[colour])} through "
                          "330 ohm to the LED's anode (long leg), its cathode to GND")
    panel.show(PanelView((), "red", blink=True))
    blinks = confirm("Is the red LED blinking, about once a second?")
    figures.append(Figure.confirmed(F.RED_BLINKS, blinks))
    if not blinks:
        advice.append(f"the red LED does not blink: check its wire from {pin_words(pins.leds['red'])}")
    if pins.buzzer is None:
        say("  no buzzer in the config ([panel] buzzer): not checked")
    else:
        panel.show(PanelView((), "green", beep=True))
        beeped = confirm("Did the buzzer beep once, short?")
        figures.append(Figure.confirmed(F.BUZZER_BEEPS, beeped))
        if not beeped:
            advice.append(f"the buzzer: check its + wire from {pin_words(pins.buzzer)} and that it is an "
                          "active buzzer (it sounds on DC)")
    panel.show(PanelView((), "green"))
    return DeviceResult.judged("leds", figures, advice)


def _bursts(edges: list[tuple[bool, float]]) -> list[list[tuple[bool, float]]]:
    bursts: list[list] = []
    for edge in edges:
        if bursts and edge[1] - bursts[-1][-1][1] < BURST_GAP_S:
            bursts[-1].append(edge)
        else:
            bursts.append([edge])
    return bursts


def _press_over(probe: PanelProbe, bench: Bench) -> bool:
    _events, edges = probe.taken()
    # Emulated hands say when they let go; a person's are judged by the quiet line.
    quiet = 2 * BURST_GAP_S if bench.hands.done else QUIET_S
    return bool(edges) and not edges[-1][1] and bench.clock() - edges[-1][2] >= quiet


def _one_press(bench: Bench, probe: PanelProbe, button: str, hold_s: float) -> list | None:
    """The edges of the next press (any button), or None when nothing was pressed in time."""
    probe.clear()
    bench.hands.press(button, hold_s)
    if not bench.until(lambda: bool(probe.taken()[1]), bench.patience_s):
        return None
    bench.until(lambda: _press_over(probe, bench), hold_s + 10.0)
    return probe.taken()[1]


def check_buttons(bench: Bench) -> DeviceResult:
    """Every wired button in turn: its pin, its bounce, one press counted; then FLOOR held."""
    config = bench.config
    buttons = config.panel.pins.buttons
    if not buttons:
        return DeviceResult.skipped("buttons", A.NO_BUTTONS)
    try:
        probe = _probe(bench)
    except HardwareError as exc:
        return _panel_failed("buttons", exc)
    say = bench.technician.say
    debounce_ms = config.panel.debounce_s * 1000
    figures, advice = [], []
    say(f"The buttons, one at a time ({len(buttons)} wired); each press is timed, its bounce measured.")
    for button in (b for b in PANEL_BUTTON_ORDER if b in buttons):
        name, pin = label(button), buttons[button]
        own, counted = None, 0
        for attempt in (1, 2):
            say(f"Press {name} ({pin_words(pin)}) once{' again' if attempt == 2 else ''}.")
            before = probe.panel.presses
            edges = _one_press(bench, probe, button, 0.15)
            # The driver's count of accepted presses is the one the box lives by.
            counted = probe.panel.presses - before
            if edges is None:
                break
            first = edges[0][0]
            if first == button:
                own = [(pressed, t) for who, pressed, t in edges if who == button]
                break
            say(f"  that was {label(first)} ({pin_words(buttons[first])}), not {name}")
        else:
            figures.append(Figure.exactly(F.ON_ITS_PIN.format(button=name), 0, 1))
            advice.append(f"{name} was asked for and {label(first)}'s pin, {pin_words(buttons[first])}, "
                          f"answered twice: {name}'s wire is on that pin, or the two wires are swapped; it "
                          f"belongs on {pin_words(pin)}")
            continue
        if own is None:
            figures.append(Figure.exactly(F.ON_ITS_PIN.format(button=name), 0, 1))
            advice.append(f"no edge on {pin_words(pin)} in {bench.patience_s:g} s when {name} was asked for: "
                          f"check its wire to that pin and its other wire to GND (pins {_GROUND})")
            continue
        bounce = max((burst[-1][1] - burst[0][1]) * 1000 for burst in _bursts(own))
        figures.append(Figure.at_most(F.BOUNCE.format(button=name), round(bounce, 1), debounce_ms, "ms"))
        figures.append(Figure.exactly(F.PRESSES_COUNTED.format(button=name), counted, 1))
        say(f"  {figures[-2].line().strip()}")
        say(f"  {figures[-1].line().strip()}")
        if bounce > debounce_ms or counted != 1:
            advice.append(f"{name}'s contact bounces for {bounce:.1f} ms (the box counted {counted} press(es)), "
                          f"longer than the {debounce_ms:g} ms debounce: replace the switch, or look for a loose "
                          f"joint on its wire to {pin_words(pin)}")
    if "floor" in buttons and config.panel.floor_hold_s is not None:
        hold = config.panel.floor_hold_s
        say(f"Hold FLOOR ({pin_words(buttons['floor'])}) for {hold + 0.5:g} seconds, then let go "
            "(a long press is MISDEAL).")
        edges = _one_press(bench, probe, "floor", hold + 0.5)
        events, _ = probe.taken()
        own = [(pressed, t) for who, pressed, t in edges or () if who == "floor"]
        downs = [t for pressed, t in own if pressed]
        ups = [t for pressed, t in own if not pressed]
        held = round((ups[-1] - downs[0]) * 1000, 1) if downs and ups else None
        misdeal = sum(1 for e in events if e.ev == "button" and e.name == "misdeal")
        figures.append(Figure.at_least(F.FLOOR_HELD, held, hold * 1000, "ms"))
        figures.append(Figure.exactly(F.FLOOR_MISDEAL, misdeal, 1))
        say(f"  {figures[-1].line().strip()}")
        if misdeal != 1:
            advice.append(f"holding FLOOR did not send one MISDEAL: check its wire on {pin_words(buttons['floor'])} "
                          "(a contact that lets go while held)")
    return DeviceResult.judged("buttons", figures, advice)
