"""``dealerbox commission`` on the chip emulators, through the box's real drivers.

The simulated table of sim.toml (RC522 register emulators behind the SPI driver, the
HD44780/PCF8574 emulator behind the LCD driver, gpiozero's MockFactory behind the
panel driver, the photo-interrupter emulator behind the mouth sensor driver) with an
emulated dealer: a clean run passes every device, and each hardware fault of
hardware_sim.noise fails exactly its device's step, with that device's advice. The
record is kept in the state directory and journalled as ``commissioned``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dealerbox.domain import commission_advice as A
from dealerbox.domain import commission_figures as F
from dealerbox.domain.events import Event
from dealerbox.service.config import DEFAULT_CONFIG, TABLES_DIR, load_config
from dealerbox.tools.commands import emulated_commission_bench
from dealerbox.tools.commission import commission_command
from dealerbox.tools.commission_bench import StateDisk
from dealerbox.tools.commission_record import RECORD_NAME, load_record
from dealerbox.tools.commission_terminal import ScriptedTechnician

MOUTH = '\n[mouth_sensor]\nbackend = "sim"\npin = 1\nblocked_level = "high"\n'


def table_config(tmp_path: Path, extra: str = "", drop: str | None = None) -> Path:
    """sim.toml copied into *tmp_path* (its state goes to tmp_path/state), with *extra* appended."""
    text = DEFAULT_CONFIG.read_text(encoding="utf-8")
    if drop is not None:
        start = text.index(drop)
        end = text.index("\n[", start + 1)
        text = text[:start] + text[end + 1:]
    path = tmp_path / "table.toml"
    path.write_text(text + extra, encoding="utf-8")
    return path


def args(config: Path, **kw) -> argparse.Namespace:
    base = dict(config=str(config), only=None, report=False, answers="yes", fault=None)
    base.update(kw)
    return argparse.Namespace(**base)


class SteadyDisk(StateDisk):
    """This machine's state directory with its fsync taken as *seconds*: the write and the fsync
    still happen, but what the host's disk takes under a loaded parallel test run is not what
    these tests are about (an fsync of 230 ms was seen here with 8 test runs at once)."""

    def __init__(self, seconds: float = 0.002):
        self.seconds = seconds

    def fsync_seconds(self, path, size: int = 4096) -> float:
        super().fsync_seconds(path, size)
        return self.seconds


def steady_bench(disk: StateDisk):
    """The emulated bench, its state disk *disk* unless a fault has put another in its place."""
    def make(config, technician, faults, clock_synchronised, stack):
        bench = emulated_commission_bench(config, technician, faults, clock_synchronised, stack)
        if type(bench.disk) is StateDisk:
            bench.disk = disk
        return bench
    return make


def run(config: Path, capsys, disk: StateDisk | None = None, **kw) -> tuple[int, str, dict | None]:
    code = commission_command(args(config, **kw), emulated_bench=steady_bench(disk or SteadyDisk()),
                              clock_synchronised=lambda: True)
    out = capsys.readouterr()
    return code, out.out + out.err, load_record(load_config(config, check_devices=False).state_dir)


def verdicts(record: dict) -> dict[str, str]:
    return {d["device"]: d["verdict"] for d in record["devices"]}


_NUMBER_BOUND = re.compile(r"(<=|>=|=) -?[0-9.]+(?: (?P<unit>\S+))?")


def of_the_vocabulary(record: dict) -> list[dict]:
    """Every figure of *record*, each checked to be named, bounded and measured in the words the
    box and the floor share (dealerbox.domain.commission_figures): the floor translates those."""
    figures = [f for d in record["devices"] for f in d["figures"]]
    for f in figures:
        assert [t for t in F.FIGURE_NAMES if F.facts_of(t, f["name"]) is not None], f["name"]
        assert f["unit"] in F.UNITS + ("",), f
        bound = _NUMBER_BOUND.fullmatch(f["bound"])
        assert (f["bound"] == "" or (bound and bound["unit"] in (None, f["unit"]))
                or [t for t in F.FREE_BOUNDS if F.facts_of(t, f["bound"]) is not None]), f
    return figures


def journalled(config: Path) -> list[dict]:
    """The ``commissioned`` events of the table's journal."""
    state = load_config(config, check_devices=False).state_dir
    out = []
    for path in sorted((state / "journal").glob("journal-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            event = json.loads(line).get("event")
            if isinstance(event, dict) and event.get("ev") == "commissioned":
                out.append(event)
    return out


def test_every_device_passes_on_sim_toml_and_the_record_is_kept_and_journalled(tmp_path, capsys):
    config = table_config(tmp_path)
    code, out, record = run(config, capsys)
    assert code == 0, out
    assert verdicts(record) == {"lcd": "pass", "leds": "pass", "buttons": "pass", "mouth": "skipped",
                                "shoe": "pass", "board": "pass", "clock": "pass", "state": "pass"}
    mouth = next(d for d in record["devices"] if d["device"] == "mouth")
    assert mouth["advice"] == A.NO_MOUTH_SENSOR           # a shared sentence the floor reads in its language
    assert record["ok"] is True and record["technician"] and record["config"]
    shoe = {f["name"]: f for d in record["devices"] if d["device"] == "shoe" for f in d["figures"]}
    assert shoe["cards read"]["value"] == 54 and shoe["missed reads"]["value"] == 0
    board = {f["name"]: f for d in record["devices"] if d["device"] == "board" for f in d["figures"]}
    assert board["cards on"]["value"] == 5 and board["slid card counted on the board"]["value"] == 0
    # Every figure was printed beside its bound.
    assert "cards read" in out and "= 54 cards" in out and "<= 30 ms" in out
    figures = {f["name"]: f for f in of_the_vocabulary(record)}
    # A button's figures carry its cap's name as a fact of the shared pattern.
    bounces = [F.facts_of(F.BOUNCE, name)["button"] for name in figures if F.facts_of(F.BOUNCE, name)]
    assert "ROUND DONE" in bounces and figures[F.FLOOR_HELD]["bound"].startswith(">= ")
    # On record for the floor: the same record, as one journal line (through the registry outbox).
    lines = journalled(config)
    assert len(lines) == 1
    event = Event.from_dict(lines[0])
    assert {k: v for k, v in lines[0].items() if k not in ("t", "ev")} == record and event.ok
    # --report prints the last record.
    assert run(config, capsys, report=True)[0] == 0


FAULTS = [
    ("dead_tag", "shoe", ["Qs", "replace"]),
    ("weak_antenna", "shoe", ["shoe antenna", "BCM 8 (pin 24)", "distance"]),
    ("bouncing_button", "buttons", ["ACK", "bounces", "BCM 23 (pin 16)"]),
    ("wrong_pin", "buttons", ["ACK", "BOXED", "BCM 22 (pin 15)", "BCM 23 (pin 16)"]),
    ("silent_lcd", "lcd", ["does not answer", "SDA BCM 2 (pin 3)", "0x27"]),
    ("full_state_dir", "state", ["full"]),
]


@pytest.mark.parametrize("fault, device, says", FAULTS, ids=[f[0] for f in FAULTS])
def test_each_fault_fails_exactly_its_step_with_its_advice(tmp_path, capsys, fault, device, says):
    config = table_config(tmp_path)
    code, out, record = run(config, capsys, fault=[fault])
    assert code == 1, out
    failed = {d: v for d, v in verdicts(record).items() if v == "fail"}
    assert failed == {device: "fail"}, out
    advice = next(d["advice"] for d in record["devices"] if d["device"] == device)
    for word in says:
        assert word in advice
    assert record["ok"] is False and journalled(config)[-1]["ok"] is False


def test_a_slow_state_disk_fails_only_the_state_step_and_names_the_sd_card(tmp_path, capsys):
    config = table_config(tmp_path)
    code, out, record = run(config, capsys, disk=SteadyDisk(0.25), only="state,clock")
    assert code == 1, out
    assert verdicts(record) == {"state": "fail", "clock": "pass"}
    state = next(d for d in record["devices"] if d["device"] == "state")
    assert "an fsync takes 250 ms" in state["advice"] and "SD card" in state["advice"]
    fsync = next(f for f in state["figures"] if "fsync" in f["name"])
    assert fsync["value"] == 250.0 and fsync["ok"] is False and fsync["bound"] == "<= 100 ms"


def test_the_real_state_disk_measures_a_real_fsync_and_leaves_no_scratch_file(tmp_path):
    seconds = StateDisk().fsync_seconds(tmp_path)
    assert 0 < seconds < 60
    assert list(tmp_path.iterdir()) == []
    assert StateDisk().free_bytes(tmp_path) > 0


def test_a_mouth_sensor_counts_every_card_and_a_stuck_one_fails_only_the_mouth_step(tmp_path, capsys):
    config = table_config(tmp_path, MOUTH)
    code, out, record = run(config, capsys, only="mouth,shoe")
    assert code == 0, out
    assert verdicts(record) == {"mouth": "pass", "shoe": "pass"}
    shoe = {f["name"]: f for f in record["devices"][1]["figures"]}
    # With a sensor, the time from the beam break to the first read is measured against read_window_s.
    assert shoe["time to first read (slowest)"]["value"] is not None
    assert shoe["time to first read (slowest)"]["bound"] == "<= 150 ms"
    of_the_vocabulary(record)
    code, out, record = run(config, capsys, fault=["stuck_mouth"])
    assert code == 1
    assert {d: v for d, v in verdicts(record).items() if v == "fail"} == {"mouth": "fail"}, out
    assert "BCM 1 (pin 28)" in record["devices"][3]["advice"]


def test_only_runs_a_part_in_the_run_order(tmp_path, capsys):
    config = table_config(tmp_path)
    code, out, record = run(config, capsys, only="state,clock")
    assert code == 0 and [d["device"] for d in record["devices"]] == ["clock", "state"]


def test_a_device_missing_from_the_config_is_skipped_with_why(tmp_path, capsys):
    config = table_config(tmp_path, drop="[panel.buttons]")
    code, out, record = run(config, capsys, only="buttons,state")
    assert code == 0
    assert record["devices"][0] == {"device": "buttons", "verdict": "skipped", "figures": [],
                                    "advice": "the config wires no buttons ([panel.buttons])"}


class _CtrlC(ScriptedTechnician):
    """Answers yes, and presses Ctrl-C at the *at*-th question."""

    def __init__(self, at: int):
        super().__init__(True)
        self.at, self.asked = at, 0

    def confirm(self, question: str) -> bool:
        self.asked += 1
        if self.asked == self.at:
            raise KeyboardInterrupt
        return super().confirm(question)


def test_ctrl_c_leaves_nothing_half_done(tmp_path, capsys):
    config = table_config(tmp_path)
    benches = []

    def bench(*a):
        benches.append(emulated_commission_bench(*a))
        return benches[-1]

    # Pressed at the LEDs' second question: the LCD and the panel are open by then.
    code = commission_command(args(config), emulated_bench=bench, clock_synchronised=lambda: True,
                              technician=_CtrlC(at=6))
    out = capsys.readouterr()
    assert code == 130 and "nothing is recorded" in out.err
    state = load_config(config, check_devices=False).state_dir
    assert not (state / RECORD_NAME).exists() and journalled(config) == []
    assert not list(state.glob("registry-outbox/*.json"))
    made = benches[0]
    panel = made.shared["panel"].panel
    assert panel.closed and made._opened == [] and not made.hands._thread.is_alive()
    assert all(not uids for uids in made.table.in_field.values())


def _cli(*argv, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    return subprocess.run([sys.executable, "-m", "dealerbox.cli", "commission", *argv], capture_output=True,
                          text=True, timeout=120, env=env, stdin=subprocess.DEVNULL, **kw)


def test_no_terminal_is_refused_in_one_line(tmp_path):
    got = _cli("--config", str(table_config(tmp_path)))
    assert got.returncode == 2 and got.stdout == ""
    assert got.stderr.count("\n") == 1 and "needs a terminal" in got.stderr


def test_a_running_box_is_refused_and_told_to_stop_first(tmp_path):
    config = table_config(tmp_path)
    loaded = load_config(config, check_devices=False)
    journal = loaded.journal.open(loaded.state_dir / "journal")
    try:
        got = _cli("--config", str(config), "--answers", "yes")
    finally:
        journal.close()
    assert got.returncode == 2
    assert got.stderr.count("\n") == 1 and "the box is running" in got.stderr and "stop it first" in got.stderr


def test_scripted_answers_and_faults_are_for_the_emulators_only(tmp_path):
    real_lcd = table_config(tmp_path)
    real_lcd.write_text(real_lcd.read_text().replace('[lcd]\nbackend = "sim"', '[lcd]\nbackend = "real"'))
    got = _cli("--config", str(real_lcd), "--answers", "yes", "--only", "lcd")
    assert got.returncode == 2 and "--answers is for the emulated run only" in got.stderr
    got = _cli("--config", str(real_lcd), "--answers", "yes", "--only", "state", "--fault", "dead_tag")
    assert got.returncode == 2 and "--fault is for the emulators only" in got.stderr
    got = _cli("--config", str(table_config(tmp_path)), "--answers", "yes", "--only", "shoe,printer")
    assert got.returncode == 2 and "--only takes devices" in got.stderr


def test_report_without_a_record_says_so(tmp_path):
    got = _cli("--config", str(table_config(tmp_path)), "--report")
    assert got.returncode == 1 and "no commissioning recorded" in got.stderr


def test_a_multiplexed_reader_and_its_other_zones_on_their_emulator(tmp_path, capsys):
    """pi5-pepper.toml made simulated: one Pepper C1 emulator serves shoe, board and burn."""
    text = (TABLES_DIR / "pi5-pepper.toml").read_text(encoding="utf-8")
    text = re.sub(r'backend = "real"', 'backend = "sim"', text)
    text = re.sub(r'(?m)^factory = .*$', 'factory = "mock"', text)
    text = re.sub(r'(?m)^registry = ".*$', 'registry = "builtin:sim"', text)
    text = re.sub(r'(?m)^state_dir = .*$', 'state_dir = "state"', text)
    config = tmp_path / "table.toml"
    config.write_text(text, encoding="utf-8")
    code, out, record = run(config, capsys, only="shoe,board")
    assert code == 0, out
    board = {f["name"]: f["value"] for f in record["devices"][1]["figures"]}
    assert board["burn: card on"] == 1 and board["burn: card off once taken away"] == 1
    assert F.facts_of(F.ZONE_ON, "burn: card on") == {"zone": "burn"} and of_the_vocabulary(record)
