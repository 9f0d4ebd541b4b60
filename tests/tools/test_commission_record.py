"""The commissioning record: figures beside their bounds, the record checked as the
``commissioned`` event, kept atomically in the state directory and read back."""

from __future__ import annotations

import hashlib
import os
import pwd
from datetime import datetime, timedelta, timezone

import pytest

from dealerbox.errors import EventError
from dealerbox.tools.commission_record import (RECORD_NAME, DeviceResult, Figure, format_record, load_record,
                                               local_zone, make_record, save_record, technician)


def test_a_figure_is_judged_by_its_bound_and_printed_beside_it():
    assert Figure.at_most("fsync", 12.5, 100, "ms") == Figure("fsync", 12.5, "ms", "<= 100 ms", True)
    assert not Figure.at_most("fsync", 120.0, 100, "ms").ok
    assert not Figure.at_least("free space", None, 500, "MB").ok      # nothing measured is not a pass
    assert Figure.exactly("missed reads", 0, 0, "cards").bound == "= 0 cards"
    assert Figure.confirmed("green LED alone", False).to_dict() == {
        "name": "green LED alone", "value": 0, "unit": "", "bound": "= 1 (yes)", "ok": False}
    line = Figure.at_most("bounce", 41.25, 30, "ms").line()
    assert "41.2 ms" in line and "<= 30 ms" in line and line.endswith("OUT OF BOUND")


def test_a_device_fails_with_advice_only_when_a_figure_is_out_of_bound():
    good = [Figure.at_most("bounce", 3.0, 30, "ms")]
    assert DeviceResult.judged("buttons", good, ["never said"]).to_dict() == {
        "device": "buttons", "verdict": "pass", "advice": "", "figures": [good[0].to_dict()]}
    bad = DeviceResult.judged("buttons", good + [Figure.exactly("ACK presses counted", 2, 1)], [])
    assert bad.verdict == "fail" and "ACK presses counted" in bad.advice


def test_the_record_is_kept_atomically_and_read_back(tmp_path):
    config = tmp_path / "table.toml"
    config.write_bytes(b"[table]\nname = 'x'\n")
    ended = datetime(2026, 12, 2, 7, 41, 5, tzinfo=timezone(timedelta(hours=1)))
    results = [DeviceResult("shoe", "fail", "replace the tag of Qs", [Figure.exactly("missed reads", 1, 0)]),
               DeviceResult.skipped("mouth", "no mouth sensor")]
    record = make_record(results, config_path=config, ended=ended, zone="Europe/Prague", who="jana")
    assert record["at"] == "2026-12-02T07:41:05+01:00" and record["ok"] is False
    assert record["config"] == hashlib.sha256(config.read_bytes()).hexdigest()
    path = save_record(tmp_path / "state", record)
    assert path.name == RECORD_NAME and load_record(tmp_path / "state") == record
    assert not [p for p in path.parent.iterdir() if p != path]   # no temporary file left beside it
    text = format_record(record)
    assert "by jana" in text and "(Europe/Prague)" in text and "shoe     FAIL: replace the tag of Qs" in text
    assert load_record(tmp_path / "nowhere") is None
    path.write_text('{"technician": "jana"}')
    with pytest.raises(EventError, match="not a commissioning record"):
        load_record(tmp_path / "state")


def test_the_zone_is_named_from_the_system_or_left_empty(tmp_path, monkeypatch):
    monkeypatch.delenv("TZ", raising=False)
    link = tmp_path / "localtime"
    link.symlink_to("/usr/share/zoneinfo/Europe/Prague")
    assert local_zone(link, tmp_path / "timezone") == "Europe/Prague"
    (tmp_path / "timezone").write_text("Europe/Bratislava\n")
    assert local_zone(tmp_path / "none", tmp_path / "timezone") == "Europe/Bratislava"
    assert local_zone(tmp_path / "none", tmp_path / "no-file") == ""
    monkeypatch.setenv("TZ", "America/Chicago")
    assert local_zone(tmp_path / "none", tmp_path / "no-file") == "America/Chicago"


def test_the_technician_is_the_effective_user_or_through_sudo_the_person_sudo_let_in():
    me = pwd.getpwuid(os.geteuid())
    # Not root: $SUDO_UID and $USER say nothing (the caller sets them to anything).
    someone = next((p for p in pwd.getpwall() if p.pw_uid not in (0, me.pw_uid)), None)
    assert someone is not None
    assert technician(someone.pw_uid, {"SUDO_UID": "0", "USER": "jana"}) == someone.pw_name
    # Root through sudo: the user sudo let in, by number.
    assert technician(0, {"SUDO_UID": str(someone.pw_uid), "USER": "root"}) == someone.pw_name
    # Root with no sudo, garbage, or a uid that is no user of the box: root.
    root = pwd.getpwuid(0).pw_name
    assert technician(0, {}) == root
    assert technician(0, {"SUDO_UID": "jana"}) == root
    unused = max(p.pw_uid for p in pwd.getpwall()) + 12345
    assert technician(0, {"SUDO_UID": str(unused)}) == root
