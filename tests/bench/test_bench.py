"""The benches' own machinery: what `make bench` installs, the stock mfrc522 baseline, the Pi 4 path costs.

No figure is asserted against a goal here (that is the benches' business): these
tests check that each bench measures what it says it measures.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_DEPS_RECIPE = 'missing=""; for pair in'


@pytest.mark.parametrize("target", ["test", "bench"])
def test_make_installs_the_debian_packages_for_tests_and_benches_alike(target):
    # make -n prints what the target would run without running it: the system-deps recipe
    # must be among it, so the floor bench has its mosquitto as the floor tests do.
    out = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         check=True).stdout
    assert SYSTEM_DEPS_RECIPE in out


def test_the_stock_mfrc522_baseline_polls_the_same_emulator():
    from bench import bench_rc522

    figures = bench_rc522.stock_figures()
    assert 1900 <= figures["rc522_spi_per_empty_poll_stock"] <= 2100      # its wait loop never sees the timer
    assert figures["rc522_pi4_ms_empty_poll_stock"] > 100
    assert figures["rc522_uid4_read_pct_stock"] == 50.0                   # a strict tag answers every other poll
    assert figures["rc522_uid7_read_stock"].startswith("cannot: reads 88")  # cascade level 1 only
    # The stand-ins lived for the block only: nothing else ever sees them.
    assert "mfrc522" not in sys.modules
    stand_ins = [name for name in ("spidev", "RPi.GPIO")
                 if "bench/stock_mfrc522.py" in (getattr(sys.modules.get(name), "__doc__", None) or "")]
    assert stand_ins == []
    # printed beside the driver's figure, in the same run
    keys = list(bench_rc522.GOALS)
    assert keys[keys.index("rc522_spi_per_empty_poll") + 1] == "rc522_spi_per_empty_poll_stock"


def test_the_pi4_factor_runs_the_n_body_benchmark_of_its_source():
    from bench import cpu_scale

    # The Benchmarks Game's published output for 1000 steps: the same algorithm and data.
    assert f"{cpu_scale.nbody(0):.9f}" == "-0.169075164"
    assert f"{cpu_scale.nbody(1000):.9f}" == "-0.169087605"
    assert cpu_scale.PI4_US_PER_STEP == pytest.approx(31.65, abs=0.01)
    assert cpu_scale.pi4_cpu_factor(steps=500, runs=1) > 0


def test_the_path_clock_costs_each_sample_from_its_parts():
    from bench import bench_daemon

    wall, parts = bench_daemon.latency(pi4_bus=True, board_cards=5, samples_wanted=3, path_clock=True)
    assert len(wall) == len(parts) == 3
    for part in bench_daemon.pi4_costs(parts, 2.0):
        assert 0 < part["cpu_ms"] and part["cpu_pi4_ms"] == pytest.approx(2.0 * part["cpu_ms"])
        # the poll that read a 7-byte tag: REQA, two cascade levels, HLTA on a Pi 4 bus, air time inside it
        assert 2.0 < part["bus_ms"] < 20.0 and 0 < part["air_ms"] < part["bus_ms"]
        assert part["wait_ms"] == pytest.approx(3.0 + 1.0)       # sim.toml's shoe poll_s, the tag's power-up
        assert part["total_ms"] == pytest.approx(part["cpu_pi4_ms"] + part["bus_ms"] + part["wait_ms"])
