"""The panel's LEDs, buzzer and buttons on gpiozero's MockFactory."""

from __future__ import annotations

import queue
import time

import pytest
from gpiozero import Button, Device
from gpiozero.pins.mock import MockFactory

from dealerbox.errors import ConfigError, HardwareError
from dealerbox.domain.events import Event
from dealerbox.hw.gpio_panel import (
    PanelGpio,
    PanelPins,
    make_pin_factory,
    pin_factory_kind_for,
)
from dealerbox.service.panel import LED_FOR_VERDICT, PanelView

LEDS = {"green": 17, "amber": 27, "red": 22}
BUZZER = 18
BUTTONS = {
    "round_done": 5, "exposed": 6, "boxed": 13, "ack": 19, "reshuffled": 26,
    "premature": 12, "misdeal": 16, "floor": 20, "hand_over": 21,
    "new_hand": 23, "players": 24, "players_down": 25,
}
PINS = PanelPins(leds=LEDS, buttons=BUTTONS, buzzer=BUZZER)
LINES = ("x" * 20,) * 4
DEBOUNCE = 0.03


class FakeClock:
    """Seconds that move only when a test says so."""

    def __init__(self, t: float = 100.0):
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, dt: float) -> None:
        self.t += dt


@pytest.fixture
def factory():
    """A fresh MockFactory as gpiozero's default; the previous one is put back."""
    previous = Device.pin_factory
    mock = MockFactory()
    Device.pin_factory = mock
    try:
        yield mock
    finally:
        mock.reset()
        Device.pin_factory = previous


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def events():
    return []


@pytest.fixture
def panel(factory, clock, events):
    with PanelGpio(PINS, pin_factory=factory, sink=events.append, clock=clock,
                   debounce_s=DEBOUNCE, floor_hold_s=1.5, poll_interval_s=None,
                   blink_on_s=0.01, blink_off_s=0.01, beep_s=0.01) as p:
        yield p


def press(factory, clock, pin: int, hold: float = 0.1) -> None:
    """A clean press and release, with quiet time around it."""
    factory.pin(pin).drive_low()
    clock.advance(hold)
    factory.pin(pin).drive_high()
    clock.advance(0.1)


def wait_until(condition, timeout: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.005)
    return condition()


def lit(factory) -> dict[str, bool]:
    return {colour: bool(factory.pin(pin).state) for colour, pin in LEDS.items()}


# -- LEDs and buzzer --------------------------------------------------------------

@pytest.mark.parametrize("verdict", ["ok", "correct", "misdeal", "void"])
def test_one_led_per_verdict(panel, factory, verdict):
    colour, blink = LED_FOR_VERDICT[verdict]
    panel.show(PanelView(LINES, colour, blink))
    assert lit(factory) == {c: c == colour for c in LEDS}


def test_floor_blinks_red_and_a_later_verdict_stops_it(panel, factory):
    colour, blink = LED_FOR_VERDICT["floor"]
    assert (colour, blink) == ("red", True)
    panel.show(PanelView(LINES, "amber"))
    red = factory.pin(LEDS["red"])
    red.clear_states()
    panel.show(PanelView(LINES, colour, blink))
    assert wait_until(lambda: len(red.states) >= 5)
    red.assert_states([False, True, False, True, False])
    assert not factory.pin(LEDS["amber"]).state and not factory.pin(LEDS["green"]).state

    panel.show(PanelView(LINES, "green"))
    settled = len(red.states)
    time.sleep(0.05)
    assert len(red.states) == settled and not red.state
    assert lit(factory) == {"green": True, "amber": False, "red": False}


def test_the_same_frame_again_does_not_touch_the_leds(panel, factory):
    panel.show(PanelView(LINES, "amber"))
    amber = factory.pin(LEDS["amber"])
    amber.clear_states()
    panel.show(PanelView(LINES, "amber"))
    assert len(amber.states) == 1 and amber.state


def test_a_new_irregularity_beeps_once(panel, factory):
    buzzer = factory.pin(BUZZER)
    buzzer.clear_states()
    panel.show(PanelView(LINES, "amber"))
    assert len(buzzer.states) == 1
    panel.show(PanelView(LINES, "amber", beep=True))
    assert wait_until(lambda: len(buzzer.states) >= 3)
    buzzer.assert_states([False, True, False])
    assert panel.beeps == 1


def test_an_unknown_colour_shows_red_blinking_and_is_counted(panel, factory):
    panel.show(PanelView(LINES, "purple"))
    assert panel.bad_views == 1
    assert wait_until(lambda: len(factory.pin(LEDS["red"]).states) >= 3)
    assert not factory.pin(LEDS["green"]).state


# -- buttons ----------------------------------------------------------------------

def test_each_button_sends_its_contract_event_at_the_clock_time(panel, factory, clock, events):
    names = ["round_done", "exposed", "boxed", "ack", "reshuffled", "premature",
             "misdeal", "hand_over"]
    expected = []
    for name in names:
        expected.append(Event(clock.t, "button", name=name))
        press(factory, clock, BUTTONS[name])
    assert events == expected
    for event in events:  # what the daemon journals must read back the same
        assert Event.from_dict(event.to_dict()) == event
    assert panel.presses == len(names) and panel.bounces_rejected == 0


def test_events_can_go_to_a_queue(factory, clock):
    q: queue.Queue = queue.Queue()
    with PanelGpio(PINS, pin_factory=factory, sink=q, clock=clock, poll_interval_s=None) as p:
        press(factory, clock, BUTTONS["ack"])
        assert q.get(timeout=1) == Event(100.0, "button", name="ack")
        assert p.events_sent == 1


def test_a_storm_of_200_edges_is_one_press(panel, factory, clock, events):
    pin = factory.pin(BUTTONS["exposed"])
    for i in range(200):  # a contact bouncing for 2 ms: low, high, low, ... ends high
        clock.advance(0.00001)
        (pin.drive_low if i % 2 == 0 else pin.drive_high)()
    assert events == [Event(pytest.approx(100.00001), "button", name="exposed")]
    assert panel.bounces_rejected == 199
    clock.advance(DEBOUNCE)
    panel.poll()  # the line has been quiet: its level (released) is taken over
    press(factory, clock, BUTTONS["exposed"])
    assert [e.name for e in events] == ["exposed", "exposed"]


def test_gpiozero_bounce_time_alone_does_not_debounce_mock_pins(factory):
    # Why the panel has its own guard: MockPin stores bounce but ignores it.
    presses = []
    with Button(BUTTONS["ack"], bounce_time=0.5, pin_factory=factory) as button:
        button.when_pressed = lambda: presses.append(1)
        assert button.pin.bounce == 0.5
        for _ in range(100):
            button.pin.drive_low()
            button.pin.drive_high()
    assert len(presses) == 100


def test_bounce_time_is_handed_to_gpiozero(panel, factory):
    assert factory.pin(BUTTONS["floor"]).bounce == pytest.approx(0.01)


def test_a_storm_that_ends_pressed_is_settled_by_the_next_edge(panel, factory, clock, events):
    pin = factory.pin(BUTTONS["ack"])
    for i in range(7):  # press, then bounces; ends low (pressed)
        (pin.drive_low if i % 2 == 0 else pin.drive_high)()
        clock.advance(0.0001)
    clock.advance(0.5)
    pin.drive_high()  # a clean release after a quiet time
    clock.advance(0.5)
    pin.drive_low()  # and a second press: no poll was needed in between
    assert [e.name for e in events] == ["ack", "ack"]
    assert panel.bounces_rejected == 6


def test_a_short_floor_press_sends_floor_on_release(panel, factory, clock, events):
    pin = factory.pin(BUTTONS["floor"])
    pin.drive_low()
    assert events == []  # it could still become a long press
    clock.advance(0.4)
    panel.poll()
    pin.drive_high()
    assert events == [Event(100.4, "button", name="floor")]


def test_a_long_floor_press_sends_misdeal_while_still_held(panel, factory, clock, events):
    pin = factory.pin(BUTTONS["floor"])
    pin.drive_low()
    clock.advance(1.0)
    panel.poll()
    assert events == []
    clock.advance(0.6)
    panel.poll()
    assert events == [Event(101.6, "button", name="misdeal")]
    clock.advance(1.0)
    panel.poll()
    pin.drive_high()
    assert len(events) == 1  # the release adds nothing


def test_a_long_floor_press_seen_only_at_release_is_still_misdeal(panel, factory, clock, events):
    press(factory, clock, BUTTONS["floor"], hold=2.0)
    assert events == [Event(102.0, "button", name="misdeal")]


def test_a_bouncing_floor_release_is_timed_from_the_real_release(panel, factory, clock, events):
    pin = factory.pin(BUTTONS["floor"])
    pin.drive_low()
    clock.advance(0.5)
    for i in range(9):  # release bounces, the last edge (high) lands in the storm
        (pin.drive_high if i % 2 == 0 else pin.drive_low)()
        clock.advance(0.001)
    assert [e.name for e in events] == ["floor"]
    clock.advance(2.0)
    panel.poll()
    assert [e.name for e in events] == ["floor"]  # the settled release is not a second press


def test_the_poll_thread_fires_a_long_press(factory, clock, events):
    with PanelGpio(PINS, pin_factory=factory, sink=events.append, clock=clock,
                   floor_hold_s=1.5, poll_interval_s=0.005) as p:
        factory.pin(BUTTONS["floor"]).drive_low()
        clock.advance(2.0)
        assert wait_until(lambda: events)
        assert events == [Event(102.0, "button", name="misdeal")]
    assert p.closed


def test_player_count_steps_wraps_and_persists_between_hands(factory, clock, events):
    shown = []
    with PanelGpio(PINS, pin_factory=factory, sink=events.append, clock=clock,
                   players=9, on_players=shown.append, poll_interval_s=None) as p:
        press(factory, clock, BUTTONS["new_hand"])
        press(factory, clock, BUTTONS["players"])
        press(factory, clock, BUTTONS["players"])  # 10 wraps to 2
        assert shown == [10, 2]
        press(factory, clock, BUTTONS["new_hand"])
        press(factory, clock, BUTTONS["new_hand"])  # the count stays for the next hand
        press(factory, clock, BUTTONS["players_down"])  # 2 wraps to 10
        press(factory, clock, BUTTONS["new_hand"])
        assert [e.players for e in events] == [9, 2, 2, 10]
        assert all(e.ev == "new_hand" and e.hole_cards == 2 for e in events)
        assert Event.from_dict({"t": 0, "ev": "new_hand", "players": 6}) == Event(
            0.0, "new_hand", players=6, hole_cards=2)
        p.players = 4
        press(factory, clock, BUTTONS["new_hand"])
        assert events[-1].players == 4
        with pytest.raises(ValueError):
            p.players = 11


def test_event_times_never_go_back(factory, events):
    times = iter([5.0, 5.0, 4.0, 4.0, 6.0, 6.0])  # a clock that steps back once
    with PanelGpio(PINS, pin_factory=factory, sink=events.append, clock=lambda: next(times),
                   debounce_s=0.0, poll_interval_s=None):
        for name in ("ack", "boxed", "exposed"):
            factory.pin(BUTTONS[name]).drive_low()
            factory.pin(BUTTONS[name]).drive_high()
    assert [e.t for e in events] == [5.0, 5.0, 6.0]


def test_a_failing_sink_is_counted_not_raised(factory, clock):
    def broken(event):
        raise RuntimeError("queue full")

    with PanelGpio(PINS, pin_factory=factory, sink=broken, clock=clock, poll_interval_s=None) as p:
        press(factory, clock, BUTTONS["ack"])
        assert p.sink_errors == 1 and p.events_sent == 0


# -- set-up, pins, life cycle ---------------------------------------------------------

def test_close_is_idempotent_and_releases_the_pins(factory, clock, events):
    p = PanelGpio(PINS, pin_factory=factory, sink=events.append, clock=clock, poll_interval_s=None)
    p.show(PanelView(LINES, "red", blink=True))
    p.close()
    p.close()
    assert p.closed and all(led.closed for led in p.leds.values())
    with pytest.raises(HardwareError):
        p.show(PanelView(LINES, "green"))
    factory.pin(BUTTONS["ack"]).drive_low()  # a closed panel hears nothing
    assert events == []
    with PanelGpio(PINS, pin_factory=factory, sink=events.append, clock=clock,
                   poll_interval_s=None) as again:
        assert not again.closed


def test_a_pin_in_use_is_a_hardware_error_and_leaves_nothing_claimed(factory, clock):
    from gpiozero import LED

    with LED(BUTTONS["hand_over"], pin_factory=factory):
        with pytest.raises(HardwareError):
            PanelGpio(PINS, pin_factory=factory, sink=print, clock=clock, poll_interval_s=None)
    with PanelGpio(PINS, pin_factory=factory, sink=print, clock=clock, poll_interval_s=None) as p:
        assert not p.closed


def test_the_simulator_is_never_picked_silently(factory, tmp_path):
    with pytest.raises(ValueError):
        PanelGpio(PINS, pin_factory=None, sink=print)
    assert isinstance(make_pin_factory("mock"), MockFactory)
    with pytest.raises(ValueError):
        make_pin_factory("simulated")
    with pytest.raises(HardwareError):
        make_pin_factory("auto", model_path=str(tmp_path / "no-such-model"))
    laptop = tmp_path / "model"
    laptop.write_bytes(b"QEMU Virtual Machine\x00")
    with pytest.raises(HardwareError):
        make_pin_factory("auto", model_path=str(laptop))


@pytest.mark.parametrize("model, kind", [
    ("Raspberry Pi 3 Model B Plus Rev 1.3", "rpigpio"),
    ("Raspberry Pi 4 Model B Rev 1.4", "rpigpio"),
    ("Raspberry Pi Compute Module 4 Rev 1.0", "rpigpio"),
    ("Raspberry Pi 5 Model B Rev 1.0", "lgpio"),
    ("Raspberry Pi 500 Rev 1.0", "lgpio"),
])
def test_pin_factory_per_pi_model(model, kind):
    assert pin_factory_kind_for(model) == kind


def test_pin_config_errors_name_the_key():
    good = {"leds": dict(LEDS), "buttons": {"ack": 5}, "buzzer": 18}
    assert PanelPins.from_dict(good, file="pi4.toml").buttons == {"ack": 5}
    cases = [
        ({**good, "buttons": {"acknowledge": 5}}, "panel.buttons.acknowledge"),
        ({**good, "buttons": {"ack": 17}}, "panel.buttons.ack"),  # green's pin
        ({**good, "leds": {"green": 17, "amber": 27}}, "panel.leds.red"),
        ({**good, "buzzer": 40}, "panel.buzzer"),
        ({**good, "buzer": 18}, "panel.buzer"),
    ]
    for table, key in cases:
        with pytest.raises(ConfigError) as info:
            PanelPins.from_dict(table, file="pi4.toml")
        assert info.value.key == key and "pi4.toml" in str(info.value)


def test_the_edge_observer_sees_every_raw_edge_the_debounce_rejects_too(factory, clock, events):
    """``dealerbox commission`` measures a contact's bounce from the raw edges, before the debounce."""
    seen = []
    with PanelGpio(PINS, pin_factory=factory, sink=events.append, clock=clock, debounce_s=DEBOUNCE,
                   poll_interval_s=None, edge_observer=lambda *edge: seen.append(edge)) as panel:
        pin = factory.pin(BUTTONS["ack"])
        pin.drive_low()
        for _ in range(3):            # a contact chattering 2 ms apart
            clock.advance(0.002)
            pin.drive_high()
            clock.advance(0.002)
            pin.drive_low()
        clock.advance(0.1)
        pin.drive_high()
        clock.advance(0.1)
        panel.poll()
    assert [(name, pressed) for name, pressed, _t in seen] == [("ack", True)] + [("ack", False), ("ack", True)] * 3 \
        + [("ack", False)]
    assert seen[-2][2] - seen[0][2] == pytest.approx(0.012)
    assert [e.name for e in events] == ["ack"] and panel.bounces_rejected == 6
