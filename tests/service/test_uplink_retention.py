"""Journal retention never deletes a line the floor has not acknowledged."""

from __future__ import annotations

import json

from dealerbox.service.uplink import CURSOR_NAME, FloorSettings, Publisher
from dealerbox.domain.events import Event
from dealerbox.service.journal import Journal, journal_files, verify

DAY = 86400.0
T0 = 1795305600.0  # 2026-11-22T00:00Z


def write_days(directory, days: int) -> None:
    now = {"t": T0}
    with Journal(directory, clock=lambda: now["t"], sync="none") as j:
        for _ in range(days):
            j.append(Event(0.0, "tick"))
            now["t"] += DAY


def test_retention_keeps_every_file_holding_an_unacknowledged_line(tmp_path):
    write_days(tmp_path, 5)
    clock = lambda: T0 + 4 * DAY  # noqa: E731 - the 26th
    with Journal(tmp_path, clock=clock, keep_days=1, keep_from_seq=lambda: 2) as j:
        # Only seq 1 (the 22nd) is acknowledged: the 23rd and 24th stay although old.
        assert j.deleted == ["journal-2026-11-22.jsonl"]
    assert len(journal_files(tmp_path)) == 4
    assert verify(tmp_path).ok


def test_without_floor_reporting_retention_is_unchanged(tmp_path):
    write_days(tmp_path, 5)
    with Journal(tmp_path, clock=lambda: T0 + 4 * DAY, keep_days=1) as j:
        assert len(j.deleted) == 3


def test_the_publishers_cursor_is_what_retention_keeps(tmp_path):
    write_days(tmp_path, 5)
    (tmp_path / CURSOR_NAME).write_text(json.dumps({"acked": 2}))
    pub = Publisher(FloorSettings(enabled=True, table="T01"), tmp_path)  # not started: no network
    assert pub.keep_from_seq() == 3
    with Journal(tmp_path, clock=lambda: T0 + 4 * DAY, keep_days=1,
                 keep_from_seq=pub.keep_from_seq) as j:
        assert j.deleted == ["journal-2026-11-22.jsonl", "journal-2026-11-23.jsonl"]
    pub.close()
