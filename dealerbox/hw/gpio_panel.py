"""The panel's LEDs, buzzer and buttons, through gpiozero.

:class:`PanelGpio` drives three LEDs (green, amber, red; red blinks for
``floor``) and an optional active buzzer from a :class:`dealerbox.service.panel.PanelView`,
and turns button presses into CONTRACT.md events::

    Event(t, "button", name="round_done")
    Event(t, "new_hand", players=6, hole_cards=2)

Buttons: every ``button`` name of CONTRACT.md (``round_done``, ``exposed``,
``boxed``, ``ack``, ``reshuffled``, ``premature``, ``misdeal``, ``floor``,
``hand_over``) and ``new_hand`` may be wired; each is optional. The player
count is set with a ``players`` button that steps 2, 3, .. 10, 2, .. (and an
optional ``players_down`` button that steps back). The count survives from
hand to hand; ``new_hand`` sends it. ``on_players`` is called with the new
count so the daemon can put it on the LCD.

A long press on ``floor`` (``floor_hold_s``) sends ``misdeal`` instead of
``floor``: as soon as the hold time is reached while the button is still down,
or at release at the latest. A short press sends ``floor`` at release.

Debouncing: gpiozero's ``bounce_time`` is passed to the pin, but it cannot be
relied on. Its mock pins ignore it (``MockPin._set_bounce`` only stores the
value), RPi.GPIO's ``bouncetime`` drops edges after an accepted one, which can
leave the reported level wrong, and only lgpio debounces the level itself. So
each button also has its own guard, timed by the injected ``clock``: an edge
counts only when the line was quiet for ``debounce_s`` before it; otherwise it
is rejected (``bounces_rejected``). When the line has been quiet for
``debounce_s`` and its level differs from the accepted one (the edge that ended
a storm was rejected), the level is taken over then. That check runs on every
edge and in :meth:`poll`, which a background thread calls every
``poll_interval_s`` (pass ``None`` and call :meth:`poll` yourself for
deterministic tests).

Pin factories: :func:`make_pin_factory` picks RPi.GPIO on a Pi 3/4 and lgpio on
a Pi 5 (``"auto"``), or what you name. gpiozero's MockFactory is used only when
``"mock"`` is named; a machine that is not a Pi gets an error, never a mock.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Mapping

from dealerbox.errors import ConfigError, HardwareError
from dealerbox.hw.device import Device
from dealerbox.domain.events import BUTTONS, Event
from dealerbox.options import Pin, PinTable, RaisingReporter

log = logging.getLogger(__name__)

LED_COLOURS = ("green", "amber", "red")
#: Buttons that step the player count instead of sending an event.
PLAYER_BUTTONS = ("players", "players_down")
PANEL_BUTTONS = frozenset(BUTTONS) | frozenset(PLAYER_BUTTONS)
#: The button names in the order messages and the reference list them: CONTRACT.md's first.
PANEL_BUTTON_ORDER = tuple(sorted(PANEL_BUTTONS, key=lambda b: (b not in BUTTONS, b)))
PIN_FACTORY_KINDS = ("auto", "rpigpio", "lgpio", "mock")
PLAYERS_MIN, PLAYERS_MAX = 2, 10
_MODEL_PATH = "/proc/device-tree/model"


# -- pin factories ----------------------------------------------------------------

def read_pi_model(path: str = _MODEL_PATH) -> str | None:
    """The board's model string from the device tree, or None when there is none."""
    try:
        with open(path, "rb") as f:
            return f.read().rstrip(b"\x00\n").decode("ascii", "replace")
    except OSError:
        return None


def pin_factory_kind_for(model: str | None) -> str:
    """``lgpio`` for a Pi 5 family board, ``rpigpio`` for older Pis; HardwareError otherwise."""
    if not model or "Raspberry Pi" not in model:
        raise HardwareError(
            f"this machine is not a Raspberry Pi (model {model!r}); "
            "choose pin_factory = \"mock\" explicitly to run the panel simulated")
    if re.search(r"Raspberry Pi (5|500|Compute Module 5)\b", model):
        return "lgpio"
    return "rpigpio"


def make_pin_factory(kind: str = "auto", *, model_path: str = _MODEL_PATH):
    """Create a gpiozero pin factory.

    ``kind``: ``auto`` (RPi.GPIO on a Pi 3/4, lgpio on a Pi 5), ``rpigpio``,
    ``lgpio`` or ``mock`` (gpiozero's MockFactory, for simulation and tests).

    On kernels 6.6 and later RPi.GPIO's edge detection fails; install
    ``rpi-lgpio`` in its place (same ``RPi.GPIO`` module name) and keep
    ``rpigpio``. lgpio writes notification files into the working directory,
    so the daemon needs a writable ``WorkingDirectory=``.
    """
    if kind not in PIN_FACTORY_KINDS:
        raise ValueError(f"pin factory must be one of {', '.join(PIN_FACTORY_KINDS)}, not {kind!r}")
    if kind == "mock":
        from gpiozero.pins.mock import MockFactory
        return MockFactory()
    if kind == "auto":
        kind = pin_factory_kind_for(read_pi_model(model_path))
    try:
        if kind == "rpigpio":
            # RPi.GPIO raises RuntimeError, not ImportError, off a Pi.
            from gpiozero.pins.rpigpio import RPiGPIOFactory
            return RPiGPIOFactory()
        from gpiozero.pins.lgpio import LGPIOFactory
        return LGPIOFactory()
    except (ImportError, RuntimeError, OSError) as exc:
        raise HardwareError(f"cannot open the {kind} GPIO pin factory: {exc}") from exc


# -- configuration ----------------------------------------------------------------

@dataclass(frozen=True)
class PanelPins:
    """BCM pin numbers of the panel, as a pin-map config gives them.

    ``leds`` maps ``green``/``amber``/``red`` to pins (all three required),
    ``buttons`` maps names of :data:`PANEL_BUTTONS` to pins (any subset),
    ``buzzer`` is a pin or None.
    """

    leds: Mapping[str, int]
    buttons: Mapping[str, int] = field(default_factory=dict)
    buzzer: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping, *, file: str = "<panel config>", section: str = "panel") -> "PanelPins":
        """Validate a ``[panel]``-like table: ``leds``, ``buttons``, ``buzzer``; typos are errors."""
        if not isinstance(d, Mapping):
            raise ConfigError(file, section, "a table", d)
        extra = set(d) - {"leds", "buttons", "buzzer"}
        if extra:
            raise ConfigError(file, f"{section}.{sorted(extra)[0]}", "one of leds, buttons, buzzer",
                              d[sorted(extra)[0]])
        leds = d.get("leds")
        if not isinstance(leds, Mapping):
            raise ConfigError(file, f"{section}.leds", "a table of green, amber, red pins", leds,
                              found="leds" in d)
        buttons = d.get("buttons", {})
        if not isinstance(buttons, Mapping):
            raise ConfigError(file, f"{section}.buttons", "a table of button pins", buttons)
        pins = cls(leds=dict(leds), buttons=dict(buttons), buzzer=d.get("buzzer"))
        pins.check(file=file, section=section)
        return pins

    # The panel's pin options, declared once: [panel] of the table config uses them too.
    LEDS = PinTable(doc="BCM pin of each LED (all three)", names=LED_COLOURS, all_required=True,
                    expect="a table of green, amber and red pins")
    BUZZER = Pin(doc="optional active buzzer")
    BUTTONS = PinTable(doc=f"any of {', '.join(PANEL_BUTTON_ORDER)}", names=PANEL_BUTTON_ORDER,
                       expect="a table of button name = BCM pin")

    def check(self, *, file: str = "<panel config>", section: str = "panel") -> None:
        """Raise :class:`ConfigError` for a missing LED, an unknown button, a bad or shared pin.

        The same options and pin book as the table config's ``[panel]``: a driver
        built by hand is held to the rules a config file is.
        """
        ctx = RaisingReporter(file)
        for key, opt, value in (("leds", self.LEDS, dict(self.leds)), ("buzzer", self.BUZZER, self.buzzer),
                                ("buttons", self.BUTTONS, dict(self.buttons))):
            if value is None:
                continue
            value = opt.convert(ctx, f"{section}.{key}", value)
            opt.take_pins(ctx, f"{section}.{key}", value)


# -- the panel --------------------------------------------------------------------

def _check_players(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not PLAYERS_MIN <= value <= PLAYERS_MAX:
        raise ValueError(f"players must be {PLAYERS_MIN}..{PLAYERS_MAX}, not {value!r}")
    return value


@dataclass
class _ButtonState:
    name: str
    device: object
    pressed: bool = False  # the accepted (debounced) level
    raw: bool = False  # the level the latest edge reported
    last_edge_t: float = float("-inf")
    press_t: float = 0.0
    hold_fired: bool = False


class PanelGpio(Device):
    """LEDs, buzzer and buttons of the dealer's panel.

    Parameters:

    ``pins``
        a :class:`PanelPins` (or a dict for :meth:`PanelPins.from_dict`).
    ``pin_factory``
        a gpiozero pin factory, or a kind for :func:`make_pin_factory`
        (``auto``, ``rpigpio``, ``lgpio``, ``mock``). Required: nothing is
        simulated unless asked for. A factory made here is closed with the panel.
    ``sink``
        where events go: a callable taking an :class:`Event`, or a queue
        (anything with ``put_nowait``). Called from gpiozero's callback thread
        or the poll thread; for asyncio pass a function that uses
        ``loop.call_soon_threadsafe``.
    ``clock``
        seconds, never decreasing (``time.monotonic`` by default); gives ``t``
        of every event and times the debounce and the hold.
    ``debounce_s``, ``bounce_time_s``
        this panel's quiet time and the bounce time handed to gpiozero.
    ``floor_hold_s``
        a ``floor`` press at least this long sends ``misdeal``; None disables it.
    ``players``, ``hole_cards``
        initial player count (2..10) and the ``hole_cards`` of ``new_hand``.
    ``on_players``
        called with the new count when a players button steps it.
    ``blink_on_s``, ``blink_off_s``, ``beep_s``
        LED blink rhythm for ``floor`` and the buzzer's beep length.
    ``poll_interval_s``
        period of the background :meth:`poll` thread; None starts no thread.
    ``edge_observer``
        optional, for measuring the wiring (``dealerbox commission``): called with
        ``(button name, pressed, t)`` for every raw edge of a button's line, before
        the debounce judges it, from the thread that saw the edge.

    Counters: ``presses`` (accepted presses), ``bounces_rejected``,
    ``events_sent``, ``sink_errors``, ``bad_views``, ``beeps``.
    """

    def __init__(self, pins, *, pin_factory, sink, clock: Callable[[], float] = time.monotonic,
                 debounce_s: float = 0.03, bounce_time_s: float | None = 0.01,
                 floor_hold_s: float | None = 1.5, players: int = 6, hole_cards: int = 2,
                 on_players: Callable[[int], None] | None = None,
                 blink_on_s: float = 0.4, blink_off_s: float = 0.4, beep_s: float = 0.12,
                 poll_interval_s: float | None = 0.02, leds_active_high: bool = True,
                 edge_observer: Callable[[str, bool, float], None] | None = None):
        if not isinstance(pins, PanelPins):
            pins = PanelPins.from_dict(pins)
        else:
            pins.check()
        _check_players(players)
        if hole_cards not in (2, 4):
            raise ValueError(f"hole_cards must be 2 or 4, not {hole_cards!r}")
        if pin_factory is None:
            raise ValueError("name a pin factory (auto, rpigpio, lgpio or mock); none is picked silently")
        self.pins = pins
        self._clock = clock
        self.debounce_s = debounce_s
        self.floor_hold_s = floor_hold_s
        self.hole_cards = hole_cards
        self._players = players
        self._on_players = on_players
        self._blink = (blink_on_s, blink_off_s)
        self.beep_s = beep_s
        self._deliver = self._make_deliver(sink)
        self._edge_observer = edge_observer
        self._lock = threading.RLock()
        self._last_t = float("-inf")
        self._led_state: tuple[str, bool] | None = None
        self.presses = self.bounces_rejected = self.events_sent = 0
        self.sink_errors = self.bad_views = self.beeps = 0
        self._closed = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._devices: list = []
        self.leds: dict[str, object] = {}
        self.buzzer = None
        self._buttons: dict[str, _ButtonState] = {}

        self._owns_factory = isinstance(pin_factory, str)
        self.pin_factory = make_pin_factory(pin_factory) if self._owns_factory else pin_factory
        try:
            self._open_devices(leds_active_high, bounce_time_s)
        except Exception as exc:
            self.close()
            if isinstance(exc, HardwareError):
                raise
            raise HardwareError(f"cannot set up the panel's GPIO pins: {exc}") from exc
        if poll_interval_s is not None:
            self._thread = threading.Thread(target=self._poll_loop, args=(poll_interval_s,),
                                            name="panel-buttons", daemon=True)
            self._thread.start()

    def _open_devices(self, leds_active_high: bool, bounce_time_s: float | None) -> None:
        # DigitalInputDevice rather than Button: a Button starts a hold thread of
        # its own, timed by the wall clock, while the hold here is timed by the
        # injected clock; closing twelve of those threads also takes a second.
        from gpiozero import LED, Buzzer, DigitalInputDevice

        factory = self.pin_factory
        for colour in LED_COLOURS:
            led = LED(self.pins.leds[colour], active_high=leds_active_high,
                      initial_value=False, pin_factory=factory)
            self._devices.append(led)
            self.leds[colour] = led
        if self.pins.buzzer is not None:
            self.buzzer = Buzzer(self.pins.buzzer, initial_value=False, pin_factory=factory)
            self._devices.append(self.buzzer)
        for name, pin in self.pins.buttons.items():
            # Buttons switch to ground against the Pi's internal pull-up.
            button = DigitalInputDevice(pin, pull_up=True, bounce_time=bounce_time_s,
                                        pin_factory=factory)
            self._devices.append(button)
            state = _ButtonState(name, button)
            state.pressed = state.raw = bool(button.is_active)
            self._buttons[name] = state
            button.when_activated = partial(self._on_edge, name, True)
            button.when_deactivated = partial(self._on_edge, name, False)

    # -- life cycle ---------------------------------------------------------------

    def close(self) -> None:
        """Stop the poll thread, switch everything off, release the pins. Safe twice."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
        for device in reversed(self._devices):
            try:
                device.close()
            except Exception as exc:  # a pin that fails to close must not keep others open
                log.warning("panel: closing %r failed: %s", device, exc)
        self._devices.clear()
        if self._owns_factory and self.pin_factory is not None:
            self.pin_factory.close()

    # -- output -------------------------------------------------------------------

    def show(self, view) -> None:
        """Light the view's LED (blinking if ``view.blink``), beep if ``view.beep``."""
        if self._closed:
            raise HardwareError("the panel is closed")
        colour, blink = getattr(view, "led", None), bool(getattr(view, "blink", False))
        if colour not in LED_COLOURS:
            self.bad_views += 1
            log.warning("panel: unknown LED colour %r; showing red, blinking", colour)
            colour, blink = "red", True
        if (colour, blink) != self._led_state:
            for name, led in self.leds.items():
                if name != colour:
                    led.off()
            if blink:
                self.leds[colour].blink(*self._blink, background=True)
            else:
                self.leds[colour].on()
            self._led_state = (colour, blink)
        if getattr(view, "beep", False) and self.buzzer is not None:
            self.buzzer.beep(on_time=self.beep_s, off_time=self.beep_s, n=1, background=True)
            self.beeps += 1

    # -- players ------------------------------------------------------------------

    @property
    def players(self) -> int:
        """Players dealt in at the next ``new_hand`` (2..10)."""
        return self._players

    @players.setter
    def players(self, value: int) -> None:
        self._players = _check_players(value)

    def _step_players(self, step: int) -> None:
        span = PLAYERS_MAX - PLAYERS_MIN + 1
        self._players = PLAYERS_MIN + (self._players - PLAYERS_MIN + step) % span
        if self._on_players is not None:
            try:
                self._on_players(self._players)
            except Exception:
                log.exception("panel: the on_players callback failed")

    # -- input --------------------------------------------------------------------

    def poll(self) -> None:
        """Settle quiet buttons and fire a due long press. Thread-safe; cheap."""
        out: list[Event] = []
        with self._lock:
            if self._closed:
                return
            now = self._clock()
            for state in self._buttons.values():
                self._settle(state, now, out)
                self._check_hold(state, now, out)
        self._send(out)

    def _poll_loop(self, interval: float) -> None:
        while not self._stop.wait(interval):
            try:
                self.poll()
            except Exception:
                log.exception("panel: button poll failed")

    def _on_edge(self, name: str, pressed: bool) -> None:
        out: list[Event] = []
        with self._lock:
            if self._closed:
                return
            state = self._buttons[name]
            now = self._clock()
            if self._edge_observer is not None:
                self._edge_observer(name, pressed, now)
            self._settle(state, now, out)
            quiet = now - state.last_edge_t >= self.debounce_s
            state.last_edge_t, state.raw = now, pressed
            if quiet and pressed != state.pressed:
                self._accept(state, pressed, now, now, out)
            else:
                self.bounces_rejected += 1
        self._send(out)

    def _settle(self, state: _ButtonState, now: float, out: list) -> None:
        # Take over the level that ended a storm once the line has been quiet.
        if state.raw != state.pressed and now - state.last_edge_t >= self.debounce_s:
            self._accept(state, state.raw, state.last_edge_t, now, out)

    def _accept(self, state: _ButtonState, pressed: bool, edge_t: float, now: float, out: list) -> None:
        state.pressed = pressed
        name = state.name
        long_floor = name == "floor" and self.floor_hold_s is not None
        if pressed:
            self.presses += 1
            state.press_t, state.hold_fired = edge_t, False
            if name == "players":
                self._step_players(+1)
            elif name == "players_down":
                self._step_players(-1)
            elif name == "new_hand":
                out.append(self._event(now, "new_hand", players=self._players, hole_cards=self.hole_cards))
            elif not long_floor:
                out.append(self._event(now, "button", name=name))
        elif long_floor and not state.hold_fired:
            held = edge_t - state.press_t >= self.floor_hold_s
            state.hold_fired = True
            out.append(self._event(now, "button", name="misdeal" if held else "floor"))

    def _check_hold(self, state: _ButtonState, now: float, out: list) -> None:
        if (state.name == "floor" and self.floor_hold_s is not None and state.pressed
                and state.raw and not state.hold_fired and now - state.press_t >= self.floor_hold_s):
            state.hold_fired = True
            out.append(self._event(now, "button", name="misdeal"))

    def _event(self, now: float, ev: str, **fields) -> Event:
        # CONTRACT.md: t never decreases.
        self._last_t = t = max(now, self._last_t)
        return Event(t, ev, **fields)

    # -- delivery -----------------------------------------------------------------

    @staticmethod
    def _make_deliver(sink) -> Callable[[Event], None]:
        put = getattr(sink, "put_nowait", None)
        if callable(put):
            return put
        if callable(sink):
            return sink
        raise TypeError(f"sink must be a callable or a queue, not {sink!r}")

    def _send(self, events: list[Event]) -> None:
        for event in events:
            try:
                self._deliver(event)
                self.events_sent += 1
            except Exception:
                self.sink_errors += 1
                log.exception("panel: delivering %s failed", event.to_json())
