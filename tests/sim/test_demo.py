"""The scripted dealer at the simulated table: the same verdicts at any pace, and as the replay."""

from __future__ import annotations

import re
import threading
from pathlib import Path

from dealerbox.rules.engine import HandEngine
from dealerbox.domain.events import Event, read_events
from dealerbox.service.config import DEFAULT_CONFIG, load_config
from dealerbox.service.daemon import Daemon
from dealerbox.service.journal import read_entries
from hardware_sim.demo import SESSION_FILE, demo_script, play_demo
from hardware_sim.script import HandScript, TableDealer, VirtualClock
from hardware_sim.table import SimulatedTable


def _config(tmp_path: Path):
    text = re.sub(r'state_dir = "[^"]*"', f'state_dir = "{tmp_path / "state"}"', DEFAULT_CONFIG.read_text())
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "table.toml"
    path.write_text(text)
    return load_config(path)


def replayed(events) -> list[tuple]:
    """(verdict, irregularity, step) of every decision of a pure replay."""
    engine = HandEngine()
    out = []
    for e in events:
        out += [(d.verdict, d.irregularity, d.step) for d in engine.feed(Event.from_dict(e) if isinstance(e, dict) else e)]
    return out


def at_the_table(tmp_path: Path, play) -> tuple[list[tuple], int]:
    """Run *play(table, daemon, clock)* on the simulated table; (decisions, journaled events)."""
    config = _config(tmp_path)
    decisions: list[dict] = []
    clock = VirtualClock()
    with SimulatedTable(config) as table:
        daemon = Daemon(config, table=table, input_events=[], clock=clock, on_decision=decisions.append)
        daemon.start()
        try:
            play(table, daemon, clock)
        finally:
            daemon.close()
    journaled = sum(1 for _ in read_entries(config.state_dir / "journal"))
    return [(d["verdict"], d["irregularity"], d["step"]) for d in decisions], journaled


def test_run_demo_at_pace_zero_decides_what_the_replay_decides(tmp_path):
    want = replayed(read_events(SESSION_FILE.read_text().splitlines()))
    got, journaled = at_the_table(tmp_path / "a", lambda t, d, c: play_demo(t, d, c, pace_s=0.0))
    assert got == want
    assert {"MISSED_BURN", "PREMATURE_FLOP", "FOREIGN_CARD"} <= {irr for _, irr, _ in got}


def hands_that_raced_real_time() -> HandScript:
    """The demo's premature flop and its missed burn: at pace 0 they once became DOUBLE_BURN and nothing."""
    full = demo_script()
    starts = [i for i, e in enumerate(full.events) if e.get("ev") == "new_hand"]
    s = HandScript()
    s.events = full.events[starts[2]:starts[3]] + full.events[starts[4]:starts[5]]
    return s


def test_the_verdicts_do_not_depend_on_the_pace(tmp_path):
    script = hands_that_raced_real_time()
    want = replayed(script.events)
    runs = [at_the_table(tmp_path / str(pace), lambda t, d, c: TableDealer(t, d, c, pace_s=pace).play(script.events))
            for pace in (0.0, 0.25)]
    for got, _ in runs:
        assert got == want
        assert {"PREMATURE_FLOP", "MISSED_BURN"} <= {irr for _, irr, _ in got}
    # The same journal line count too: nothing depends on the threads' timing.
    assert runs[0][1] == runs[1][1]


def test_a_stopped_dealer_stops_between_moves(tmp_path):
    stop = threading.Event()
    stop.set()
    got, journaled = at_the_table(tmp_path, lambda t, d, c: TableDealer(t, d, c, stop=stop).play(demo_script().events))
    assert (got, journaled) == ([], 0)
