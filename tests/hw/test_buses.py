"""Buses handed in, the reader kinds registry and the fixed poll period."""

from __future__ import annotations

import sys

import pytest

from dealerbox.errors import ConfigError
from dealerbox.hw.buses import RealBuses, buses_for
from dealerbox.service.kinds import READER_KINDS, open_reader
from dealerbox.hw.reader import PollSchedule
from dealerbox.service.config import DEFAULT_CONFIG, READER_KINDS as CONFIG_KINDS, load_config
from hardware_sim.table import SimulatedTable


@pytest.fixture
def sim_config():
    return load_config(DEFAULT_CONFIG)


def test_sim_or_real_is_decided_by_buses_for(sim_config):
    real = RealBuses("mock")
    with SimulatedTable(sim_config) as table:
        assert buses_for(sim_config, "sim", sim_buses=table.buses, real_buses=real) is table.buses
        assert buses_for(sim_config, "real", sim_buses=table.buses, real_buses=real) is real
    with pytest.raises(ConfigError, match="simulated table") as info:
        buses_for(sim_config, "sim", sim_buses=None, real_buses=real, key="lcd.backend")
    assert info.value.key == "lcd.backend"
    real.close()
    real.close()


def test_the_simulated_table_hands_out_its_emulators(sim_config):
    with SimulatedTable(sim_config) as table:
        buses = table.buses
        assert buses.spi(0, 0) is table.chips["shoe"] and buses.spi(1, 0) is table.chips["board"]
        assert buses.i2c(1) is table.i2c
        assert buses.pin_factory() is table.pin_factory


def test_an_rc522_runs_on_its_emulator_with_no_module_swapped(sim_config):
    names = ("spidev", "RPi", "RPi.GPIO", "mfrc522")
    with SimulatedTable(sim_config) as table:
        table.place("AS", zone="board")
        with open_reader(sim_config.readers["board"], table.buses) as reader:
            assert reader.poll() == {"board": frozenset({table.uid_of("AS")})}
            # Whatever of these is imported is the installed library, never a stand-in module.
            stand_ins = [n for n in names if n in sys.modules and getattr(sys.modules[n], "__file__", None) is None]
            assert stand_ins == []
        table.unplug("board")
        with pytest.raises(OSError):
            open_reader(sim_config.readers["board"], table.buses)


def test_the_config_knows_exactly_the_registered_kinds():
    assert CONFIG_KINDS == tuple(READER_KINDS)
    for kind in READER_KINDS.values():
        assert kind.driver.rsplit(".", 1)[1] in ("RC522Reader", "PepperC1Reader", "ShoeLineReader")


# -- the poll period ---------------------------------------------------------------------------
def test_polls_keep_to_the_grid_however_long_each_poll_takes():
    schedule = PollSchedule(0.01, now=100.0)
    now = 100.0
    slots = []
    for took in [0.001, 0.009, 0.0, 0.005, 0.0099] * 20:
        now += took                    # the poll itself
        now += schedule.next_wait(now)  # the wait the loop does
        slots.append(now)
    assert slots[-1] == pytest.approx(100.0 + 0.01 * len(slots))
    assert schedule.skipped == 0


def test_an_overrun_skips_the_missed_slots_instead_of_bursting():
    schedule = PollSchedule(0.01, now=0.0)
    wait = schedule.next_wait(0.035)       # the poll took 3.5 periods
    assert wait == pytest.approx(0.005)     # next slot on the grid: 0.04
    assert schedule.skipped == 3            # the slots at 0.01, 0.02, 0.03
    assert schedule.next_wait(0.041) == pytest.approx(0.009)
    schedule.restart(1.0)
    assert schedule.next_wait(1.0) == pytest.approx(0.01)


def test_a_period_must_be_positive():
    with pytest.raises(ValueError):
        PollSchedule(0.0, now=0.0)


# -- one fault contract, one owner of reopening --------------------------------------------------
class StepClock:
    def __init__(self):
        self.now = 50.0

    def __call__(self):
        return self.now


def test_an_unplugged_rc522_is_reported_once_reopened_with_backoff_and_reported_back(sim_config):
    from dealerbox.service.kinds import supervise
    from dealerbox.hw.reader import ReaderSupervisor

    clock = StepClock()
    calls = []
    tries = []
    rc = sim_config.readers["board"]
    with SimulatedTable(sim_config) as table:
        kind_made = supervise(rc, table.buses)
        assert (kind_made.backoff_initial, kind_made.backoff_max) == (0.1, 5.0)      # the rc522 kind's backoff
        kind_made.close()

        def open_board():
            tries.append(clock.now)
            return open_reader(rc, table.buses)

        table.place("AS", zone="board")
        # Powers of two, so the float sums on the clock are exact.
        with ReaderSupervisor("board", open_board, clock=clock, backoff_initial=0.125, backoff_max=5.0,
                              on_status=lambda *a: calls.append(a[:2])) as sup:
            assert sup.poll() == ({"board": frozenset({table.uid_of("AS")})}, [])
            table.unplug("board")
            assert sup.poll() == (None, ["reader_fault"]) and sup.reader is None
            fault_at = clock.now
            while len(tries) < 8:                    # every try fails and is not reported again
                clock.now += 0.0625
                assert sup.poll() == (None, [])
            gaps = [b - a for a, b in zip([fault_at] + tries[1:], tries[1:])]
            assert gaps == [0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 5.0]
            table.replug("board")
            clock.now += 5.0
            zones, reports = sup.poll()
            assert reports == ["reader_ok"] and zones == {"board": frozenset({table.uid_of("AS")})}
            assert (sup.faults, sup.recoveries, sup.status) == (1, 1, "ok")
    assert calls == [("board", False), ("board", True)]


def test_a_reader_that_crashes_is_reopened_quickly_without_a_fault_report():
    from dealerbox.hw.reader import ReaderSupervisor, TagReader

    class Flaky(TagReader):
        zones = ("board",)
        polls = 0

        def _poll(self):
            Flaky.polls += 1
            if Flaky.polls == 2:
                raise RuntimeError("a bug in a driver")
            return {"board": frozenset()}

    clock = StepClock()
    opened = []
    sup = ReaderSupervisor("pad", lambda: opened.append(Flaky("pad")) or opened[-1], clock=clock)
    assert sup.poll() == ({"board": frozenset()}, [])
    assert sup.poll() == (None, []) and sup.restarts == 1 and opened[0].closed
    clock.now += 0.02
    assert sup.poll() == ({"board": frozenset()}, []) and len(opened) == 2
    assert sup.faults == 0
    sup.close()
    sup.close()
    assert opened[1].closed
    with pytest.raises(OSError):
        sup.poll()


def test_serial_readers_back_off_as_their_config_says(tmp_path):
    from dealerbox.service.kinds import supervise

    text = DEFAULT_CONFIG.read_text().replace(
        '[readers.board]', '[readers.c1]\nkind = "shoe_line"\nbackend = "sim"\nantennas = { "1" = "burn" }\n'
        'backoff_max_s = 7.5\n\n[readers.board]')
    path = tmp_path / "t.toml"
    path.write_text(text.replace('state_dir = "../../state"', f'state_dir = "{tmp_path}"')
                    .replace('registry = "builtin:sim"', 'registry = "builtin:sim"'))
    config = load_config(path)
    with SimulatedTable(config) as table:
        sup = supervise(config.readers["c1"], table.buses)
        assert (sup.backoff_initial, sup.backoff_max) == (0.5, 7.5)
        sup.close()
