"""The box's own commissioning steps: its clock and its state directory.

- the clock: synchronised or not (the kernel's NTP state, as the uplink reads it:
  every time the box journals and the floor shows rests on it); at a table with a
  floor, the offset is the floor's to measure (the tables page shows it), so the
  step says so rather than guess it;
- the state directory (journal, registries, this record): free space, and one
  fsync measured on it (every event is fsynced before the box shows its verdict).
"""

from __future__ import annotations

import errno

from dealerbox.domain import commission_advice as A
from dealerbox.domain import commission_figures as F
from dealerbox.tools.commission_bench import Bench
from dealerbox.tools.commission_record import DeviceResult, Figure

__all__ = ["check_clock", "check_state", "MIN_FREE_MB", "MAX_FSYNC_MS"]

#: Free space the state directory needs: some months of a busy table's journal (docs/JOURNAL.md).
MIN_FREE_MB = 500
#: The slowest fsync the box can live with: an event waits for it before the LEDs change.
MAX_FSYNC_MS = 100.0


def check_clock(bench: Bench) -> DeviceResult:
    """Synchronised or not; the floor's offset when the table reports to one."""
    say = bench.technician.say
    synced = bench.clock_synchronised()
    figures = [Figure.exactly(F.CLOCK_SYNCED, None if synced is None else int(synced), 1)]
    floor = bench.config.floor
    if floor.enabled:
        figures.append(Figure(F.FLOOR_OFFSET, None, "s", F.FLOOR_MEASURES, True))
    say("The clock.")
    for f in figures:
        say(f"  {f.line()}")
    advice = []
    if not synced:
        advice.append(A.CLOCK_NOT_SYNCED if synced is False else A.CLOCK_UNKNOWN)
    if floor.enabled:
        say(f"  the offset from the floor ({floor.host}) is on the floor's tables page once the box reports")
    return DeviceResult.judged("clock", figures, advice)


def check_state(bench: Bench) -> DeviceResult:
    """Free space on the state directory and one measured fsync there."""
    path = bench.config.state_dir
    say = bench.technician.say
    say(f"The state directory ({path}).")
    try:
        path.mkdir(parents=True, exist_ok=True)
        free_mb = round(bench.disk.free_bytes(path) / 1e6, 1)
    except OSError as exc:
        return DeviceResult("state", "fail", f"{path} cannot be used ({exc.strerror or exc}): check that it "
                            "exists and belongs to the box's user", [Figure.at_least(F.FREE_SPACE, None,
                                                                                     MIN_FREE_MB, "MB")])
    figures = [Figure.at_least(F.FREE_SPACE, free_mb, MIN_FREE_MB, "MB")]
    advice = []
    try:
        fsync_ms = round(bench.disk.fsync_seconds(path) * 1000, 1)
    except OSError as exc:
        fsync_ms = None
        full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
        advice.append(f"a write to {path} failed ({exc.strerror or exc})"
                      + (": the disk is full" if full else ""))
    figures.append(Figure.at_most(F.FSYNC, fsync_ms, MAX_FSYNC_MS, "ms"))
    for f in figures:
        say(f"  {f.line()}")
    if not figures[0].ok:
        advice.insert(0, f"only {free_mb:.1f} MB free on {path}: free space (old journal days go after "
                         "[journal] keep_days; sudo journalctl --vacuum-size for the system's logs), "
                         "or a larger SD card")
    if fsync_ms is not None and fsync_ms > MAX_FSYNC_MS:
        advice.append(A.SLOW_FSYNC.format(ms=f"{fsync_ms:g}"))
    return DeviceResult.judged("state", figures, advice)
