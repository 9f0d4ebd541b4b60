"""The mouth sensor on gpiozero's MockFactory, and what its counts do to presence."""

from __future__ import annotations

import pytest
from gpiozero.pins.mock import MockFactory

from dealerbox.errors import HardwareError
from dealerbox.hw.mouth import MouthSensor
from dealerbox.hw.presence import PresenceTracker
from hardware_sim.mouth import PhotoInterrupterEmulator

A, B = "04A3C6CAE26180", "04A3C6CAE26181"
PIN = 21


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


@pytest.fixture
def factory():
    f = MockFactory()
    yield f
    f.close()


@pytest.mark.parametrize("level", ["low", "high"])
def test_each_card_breaking_the_beam_is_one_count(factory, level):
    clock = Clock()
    beam = PhotoInterrupterEmulator(factory, PIN, level)
    with MouthSensor(PIN, pin_factory=factory, blocked_level=level, clock=clock) as sensor:
        assert not sensor.blocked
        for t in (1.0, 1.004, 2.5):           # two cards drawn 4 ms apart, then one more
            clock.t = t
            beam.card_passes()
        assert sensor.take() == [1.0, 1.004, 2.5]
        assert sensor.take() == []
        assert sensor.counts == 3


def test_a_chattering_edge_is_one_card(factory):
    clock = Clock()
    beam = PhotoInterrupterEmulator(factory, PIN)
    with MouthSensor(PIN, pin_factory=factory, clock=clock) as sensor:
        clock.t = 3.0
        beam.card_passes(chatter=3)
        assert sensor.take() == [3.0]
        assert sensor.chatter == 3


def test_close_is_safe_twice_and_frees_the_pin(factory):
    sensor = MouthSensor(PIN, pin_factory=factory)
    sensor.close()
    sensor.close()
    MouthSensor(PIN, pin_factory=factory).close()


def test_a_pin_in_use_is_a_hardware_error(factory):
    with MouthSensor(PIN, pin_factory=factory):
        with pytest.raises(HardwareError, match="mouth sensor on pin 21"):
            MouthSensor(PIN, pin_factory=factory)


def test_a_bad_level_is_refused(factory):
    with pytest.raises(ValueError, match="blocked_level"):
        MouthSensor(PIN, pin_factory=factory, blocked_level="dark")


# -- counts and reads through presence ------------------------------------------------------
def feed(tracker, polls, counts=()):
    """Polls ``[(t, [uids])]`` of the shoe and mouth counts, merged by time; the events."""
    items = sorted([(t, 0, None) for t in counts] + [(t, 1, uids) for t, uids in polls], key=lambda x: x[:2])
    out = []
    for t, kind, uids in items:
        if kind == 0:
            tracker.count(t)
        else:
            out += [(e.t, e.uid, e.unread) for e in tracker.update(t, {"shoe": uids})]
    return out


def sensor_tracker():
    return PresenceTracker(mouth_window=0.15)


def test_a_count_with_a_read_is_one_shoe():
    got = feed(sensor_tracker(), [(1.00, [A]), (1.01, [A]), (1.02, [])], counts=[0.999])
    assert got == [(1.0, A, None)]


def test_a_read_just_before_its_count_is_one_shoe():
    got = feed(sensor_tracker(), [(1.00, [A]), (1.01, [A]), (1.30, [])], counts=[1.004])
    assert got == [(1.0, A, None)]


def test_a_count_with_no_read_in_the_window_is_an_unread_card():
    got = feed(sensor_tracker(), [(1.0, []), (1.1, []), (1.16, []), (1.2, [])], counts=[1.0])
    assert got == [(1.16, None, True)]


def test_an_unread_card_keeps_its_place_before_the_next_card():
    # The burn is not read; the card after it is read 0.1 s later: the unread one comes first.
    got = feed(sensor_tracker(), [(1.0, []), (1.1, [B]), (1.12, [B]), (1.2, [])], counts=[1.0, 1.1])
    assert [u for _, u, _ in got] == [None, B]


def test_a_tag_lingering_at_the_mouth_is_no_new_draw():
    polls = [(1.0, [A]), (1.02, [A])] + [(1.0 + n * 0.3, [A] if n % 2 else []) for n in range(1, 12)]
    assert feed(sensor_tracker(), polls, counts=[1.0]) == [(1.0, A, None)]


def test_a_second_count_with_the_same_uid_is_a_second_shoe():
    # A clone (or the card drawn again after a correction): two counts, one UID.
    polls = [(1.0, [A]), (1.02, []), (1.3, [A]), (1.32, []), (1.5, [])]
    assert [u for _, u, _ in feed(sensor_tracker(), polls, counts=[1.0, 1.3])] == [A, A]


def test_a_new_tag_wins_a_count_over_a_lingering_one():
    polls = [(1.0, [A]), (1.02, []), (1.6, [A, B]), (1.62, [B]), (1.9, [])]
    assert [u for _, u, _ in feed(sensor_tracker(), polls, counts=[1.0, 1.6])] == [A, B]


def test_a_read_the_sensor_missed_is_still_a_card():
    polls = [(1.0, [A]), (1.02, []), (1.3, [])]
    assert [u for _, u, _ in feed(sensor_tracker(), polls)] == [A]


def test_no_sensor_no_counts():
    with pytest.raises(ValueError, match="no mouth sensor"):
        PresenceTracker().count(1.0)


# -- the daemon on the simulated table with a mouth sensor ----------------------------------------
MOUTH_SECTION = '\n[mouth_sensor]\nbackend = "sim"\npin = 1\nread_window_s = 0.15\n'


def _config(tmp_path, extra=MOUTH_SECTION):
    import re

    from dealerbox.service.config import DEFAULT_CONFIG, load_config

    text = re.sub(r'state_dir = "[^"]*"', f'state_dir = "{tmp_path / "state"}"', DEFAULT_CONFIG.read_text())
    (tmp_path / "table.toml").write_text(text + extra)
    return load_config(tmp_path / "table.toml")


def test_the_config_says_whether_a_table_has_a_mouth_sensor(tmp_path):
    from dealerbox.errors import ConfigError

    assert _config(tmp_path, "").mouth_sensor.pin is None          # no section: no sensor
    ms = _config(tmp_path).mouth_sensor
    assert (ms.backend, ms.pin, ms.read_window_s, ms.blocked_level) == ("sim", 1, 0.15, "low")
    with pytest.raises(ConfigError, match=r"22"):
        _config(tmp_path, MOUTH_SECTION.replace("pin = 1", "pin = 22"))   # a panel button's pin
    with pytest.raises(ConfigError, match=r"mouth_sensor.read_window_s = 3"):
        _config(tmp_path, MOUTH_SECTION.replace("0.15", "3"))


def test_a_mouth_sensor_on_a_pin_must_say_its_backend(tmp_path):
    """Nothing is simulated unless the file says so: a sensor wired on a pin with no
    backend is refused, never quietly put on a mock pin that counts nothing."""
    from dealerbox.errors import ConfigError

    with pytest.raises(ConfigError, match=r"mouth_sensor\.backend is missing: expected sim or real"):
        _config(tmp_path, "\n[mouth_sensor]\npin = 1\n")
    assert _config(tmp_path, '\n[mouth_sensor]\npin = "none"\n').mouth_sensor.pin is None   # no sensor, no backend
    assert _config(tmp_path, '\n[mouth_sensor]\nbackend = "real"\npin = 1\n').mouth_sensor.backend == "real"


def test_the_daemon_counts_cards_and_reports_an_unread_one(tmp_path):
    from dealerbox.service.daemon import Daemon
    from hardware_sim.script import HandScript, TableDealer, VirtualClock
    from hardware_sim.table import SimulatedTable

    config = _config(tmp_path)
    clock = VirtualClock()
    events = []
    with SimulatedTable(config) as table:
        daemon = Daemon(config, table=table, input_events=[], clock=clock)
        real_put = daemon._put
        daemon._put = lambda e: (events.append(e), real_put(e))
        daemon.start()
        try:
            dealer = TableDealer(table, daemon, clock)
            s = HandScript(seed=3)
            s.new_hand(2).deal(2)
            dealer.play(s.events)
            dealer.advance(0.5)
            table.mouth.card_passes()            # a card leaves the stub; its tag is never read
            dealer.until_reported("shoe")
            dealer.play([{"t": s.t + 1.0, "ev": "shoe", "card": s.stub[0]}])
        finally:
            daemon.close()
    new_hand = next(e for e in events if e.ev == "new_hand")
    assert new_hand.mouth_sensor is True
    shoes = [e for e in events if e.ev == "shoe"]
    assert [bool(e.unread) for e in shoes] == [False, False, True, False]
