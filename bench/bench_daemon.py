"""The full daemon on the simulated table: latency from the RF field to the LED, and memory.

- ``e2e_latency_ms_p50`` / ``e2e_latency_ms_p99``: a tag enters the emulated shoe
  field (the card after the deal: EXTRA_CARD) until the amber LED pin changes,
  through the real RC522 driver, presence tracking, the queue, the journal (fsync
  per event) and the engine. 100 samples. Goal: p99 at most 20 ms here. Baseline:
  a card stays in the field 30-100 ms, so the box must answer within that.
- ``e2e_latency_ms_p50_sd`` / ``e2e_latency_ms_p99_sd``: the same with every
  ``fsync`` costing 20 ms more, as on a Pi's SD card (a cost model: the real
  fsync, then a 20 ms sleep, in the journal writer's thread). The journal's
  writer commits off the LED path, so this must stay close to the figure
  above. Goal: p99 at most 15 ms once the RC522 emulator charges a Pi 4's bus
  time. Baseline (fsync before the LED, issue 13): p50 25.5 / p99 31.8 ms.
- ``e2e_latency_ms_p50_pi4_sd`` / ``e2e_latency_ms_p99_pi4_sd``: the same again
  with every RC522 emulator charging a Pi 4's bus time
  (:func:`hardware_sim.rc522.charge_bus_time`) and five cards lying on the
  board antenna all along (placed before the first hand, so the engine takes
  them as lying there), as issue 13 asks. Goal: p99 at most 15 ms; baseline
  about 32 ms (fsync before the LED, no bus time, empty board).
- ``daemon_rss_mb``: peak resident memory (VmHWM) of a ``dealerbox run`` process
  that replays the demo session through the all-simulated table. Goal: at most 60 MB.
"""

from __future__ import annotations

import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpiozero.pins.mock import MockFactory, MockPin

from dealerbox.rules.cards import DECK_52
from dealerbox.service.config import DEFAULT_CONFIG, load_config
from dealerbox.service.daemon import Daemon
from hardware_sim.table import SimulatedTable

SAMPLES = 100
REPO = Path(__file__).resolve().parent.parent


class TimedPin(MockPin):
    """A mock pin that notes when it changes (perf_counter seconds)."""

    def _change_state(self, value):
        changed = super()._change_state(value)
        if changed:
            self.changes = getattr(self, "changes", [])
            self.changes.append((time.perf_counter(), value))
        return changed


def _config(tmp: Path) -> Path:
    text = re.sub(r'state_dir = "[^"]*"', f'state_dir = "{tmp / "state"}"', DEFAULT_CONFIG.read_text())
    path = tmp / "table.toml"
    path.write_text(text)
    return path


def _wait(predicate, timeout=5.0):
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        if predicate():
            return True
        time.sleep(0.0005)
    raise RuntimeError("the daemon did not answer in time")


SD_FSYNC_S = 0.020


class _SlowFsync:
    """``os.fsync`` costing *extra_s* more (an SD card), while in the ``with``."""

    def __init__(self, extra_s: float):
        self.extra_s = extra_s
        self.calls = 0

    def __enter__(self):
        self._real = os.fsync

        def fsync(fd):
            self._real(fd)
            self.calls += 1
            time.sleep(self.extra_s)
        os.fsync = fsync
        return self

    def __exit__(self, *exc):
        os.fsync = self._real


# Five board cards no hand of the bench deals (the deals take DECK_52[0:45]): they lie on the
# board antenna all along, so the board reader checks five cards on every poll.
BOARD_CARDS = DECK_52[45:50]


def latency(fsync_extra_s: float = 0.0, *, pi4_bus: bool = False, board_cards: int = 0,
            samples_wanted: int = SAMPLES) -> list[float]:
    with _SlowFsync(fsync_extra_s), tempfile.TemporaryDirectory() as tmp:
        config = load_config(_config(Path(tmp)))
        table = SimulatedTable(config, dwell_s=0.04)
        table.pin_factory.close()
        table.pin_factory = MockFactory(pin_class=TimedPin)
        if pi4_bus:
            from hardware_sim.rc522 import PI4, charge_bus_time

            charge_bus_time(table.chips.values(), PI4)
        with table:
            daemon = Daemon(config, table=table)
            daemon.start()
            try:
                amber = table.pin_factory.pin(config.panel.pins.leds["amber"])
                shoe = table.chips["shoe"]
                for card in BOARD_CARDS[:board_cards]:
                    table.place(card)       # before any hand: the engine takes them as lying there
                if board_cards:
                    _wait(lambda: daemon.stats.per_reader.get("board", {}).get("events", 0) >= board_cards)
                table.set_players(2)
                samples = []
                i = 0
                setups_missed = 0
                while len(samples) < samples_wanted:
                    i += 1
                    table.press("new_hand", hold_s=0.04)
                    _wait(lambda: daemon.engine.phase == "deal" and daemon.engine.decision.verdict == "ok")
                    deal = DECK_52[(i * 5) % 45:(i * 5) % 45 + 5]   # every hand starts with a full stub
                    for card in deal[:4]:
                        table.draw(card)
                    try:
                        _wait(lambda: daemon.engine.phase == "preflop")
                    except RuntimeError:
                        # A deal card slid by unseen (a loaded machine starves the
                        # reader thread): not the moment measured; deal again.
                        setups_missed += 1
                        if setups_missed > samples_wanted // 2:
                            raise
                        continue
                    uid = table.uid_of(deal[4])
                    before = len(getattr(amber, "changes", []))
                    t0 = time.perf_counter()
                    shoe.place(uid)
                    _wait(lambda: len(getattr(amber, "changes", [])) > before)
                    samples.append((amber.changes[before][0] - t0) * 1000)
                    shoe.remove(uid)
                    time.sleep(0.02)
                return samples
            finally:
                daemon.close()


def _p99(samples: list[float]) -> float:
    return samples[min(len(samples) - 1, int(round(0.99 * (len(samples) - 1))))]


def rss_mb() -> float:
    from hardware_sim.demo import SESSION_FILE

    with tempfile.TemporaryDirectory() as tmp:
        path = _config(Path(tmp))
        n = sum(1 for line in SESSION_FILE.read_text().splitlines() if line.strip())
        proc = subprocess.Popen([sys.executable, "-m", "dealerbox.cli", "run", "--config", str(path),
                                 "--input", str(SESSION_FILE)], cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            from dealerbox.service.journal import read_entries

            end = time.monotonic() + 60
            while time.monotonic() < end:
                try:
                    if sum(1 for _ in read_entries(Path(tmp) / "state" / "journal")) >= n:
                        break
                except Exception:
                    pass
                time.sleep(0.2)
            status = Path(f"/proc/{proc.pid}/status").read_text()
            return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=20)


def run() -> dict:
    samples = sorted(latency())
    sd = sorted(latency(SD_FSYNC_S))
    pi4_sd = sorted(latency(SD_FSYNC_S, pi4_bus=True, board_cards=5))
    return {
        "e2e_latency_ms_p50": round(statistics.median(samples), 2),
        "e2e_latency_ms_p99": round(_p99(samples), 2),
        "e2e_latency_samples": len(samples),
        "e2e_latency_ms_p99_goal": 20,
        "e2e_latency_ms_p50_sd": round(statistics.median(sd), 2),
        "e2e_latency_ms_p99_sd": round(_p99(sd), 2),
        "e2e_latency_ms_p99_sd_baseline_fsync_before_led": 31.8,
        "e2e_latency_ms_p50_pi4_sd": round(statistics.median(pi4_sd), 2),
        "e2e_latency_ms_p99_pi4_sd": round(_p99(pi4_sd), 2),
        "e2e_latency_ms_p99_pi4_sd_goal": 15,
        "e2e_latency_ms_p99_pi4_sd_baseline": 32,
        "daemon_rss_mb": round(rss_mb(), 1),
        "daemon_rss_mb_goal": 60,
    }


if __name__ == "__main__":
    print(run())
    os._exit(0)
