"""Buses handed in, the reader kinds registry and the fixed poll period."""

from __future__ import annotations

import sys

import pytest

from dealerbox.errors import ConfigError
from dealerbox.hw.buses import RealBuses, buses_for
from dealerbox.hw.kinds import READER_KINDS, open_reader
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
