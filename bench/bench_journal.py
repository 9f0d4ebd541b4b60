"""Journal benchmark: how many events per second the hash-chained journal appends.

Each run opens a fresh :class:`dealerbox.service.journal.Journal` in a temporary
directory on this machine's disk (under ``/var/tmp``, which stays on disk where
``/tmp`` may be a RAM disk) and appends a realistic mix of events (``shoe``,
``board_on``, ``tick``). The figure is the median of several runs.

``journal_fsync_events_per_s``
    The default policy, ``sync="event"``: one ``fsync()`` per event, so no
    acknowledged event is lost in a power cut. Goal: well above what a table
    produces (a busy table: a few card events per second plus a tick every
    250 ms, under 10 events/s). On a Pi's SD card expect a few hundred per
    second at best. Baseline on the development VM (ext4 on a virtual disk):
    1,500 to 3,200 per second, varying with the host's disk.
``journal_nofsync_events_per_s``
    The same with ``sync="none"``: the cost of JSON encoding and hashing
    alone, for comparison (what fsync costs is the difference). Baseline on
    the development VM: 28,000 to 41,000 per second (25 to 35 us per event).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

from dealerbox.domain.events import Event
from dealerbox.service.journal import Journal

RUNS = 5
FSYNC_EVENTS = 300
NOFSYNC_EVENTS = 5000


def _events(n):
    cards = ["Ah", "Kd", "7c", "Ts", "2h", "Qs", "9d", "joker"]
    out = [Event(0.0, "new_hand", players=6, hole_cards=2)]
    for i in range(1, n):
        t = i * 0.25
        if i % 3 == 0:
            out.append(Event(t, "tick"))
        elif i % 3 == 1:
            out.append(Event(t, "shoe", card=cards[i % len(cards)]))
        else:
            out.append(Event(t, "board_on", uid="04A3C6CAE26180"))
    return out


def _scratch_dir() -> str | None:
    return "/var/tmp" if os.path.isdir("/var/tmp") and os.access("/var/tmp", os.W_OK) else None


def _rate(sync: str, n: int) -> float:
    events = _events(n)
    with tempfile.TemporaryDirectory(prefix="dealerbox-bench-", dir=_scratch_dir()) as d:
        with Journal(d, sync=sync) as journal:
            journal.append(events[0])  # creating the file is not what we measure
            start = time.perf_counter()
            for e in events[1:]:
                journal.append(e)
            elapsed = time.perf_counter() - start
    return (n - 1) / elapsed


def run() -> dict:
    fsync = statistics.median(_rate("event", FSYNC_EVENTS) for _ in range(RUNS))
    nofsync = statistics.median(_rate("none", NOFSYNC_EVENTS) for _ in range(RUNS))
    return {
        "journal_fsync_events_per_s": round(fsync, 1),
        "journal_nofsync_events_per_s": round(nofsync, 1),
    }


if __name__ == "__main__":
    print(run())
