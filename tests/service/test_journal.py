"""The hash-chained journal: writing, verifying, torn lines, rotation, retention."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from dealerbox.errors import JournalError
from dealerbox.domain.events import Event
from dealerbox.service.journal import (
    ANCHOR_NAME, GENESIS, Journal, find_open_hand, journal_files, read_entries, verify,
)

DAY = 86400.0
# 2026-11-22 10:00:00 UTC
T0 = 1795341600.0


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self, now=T0):
        self.now = now

    def __call__(self):
        return self.now


def events(n, start=0.0):
    out = [Event(start, "new_hand", players=6, hole_cards=2)]
    for i in range(1, n):
        out.append(Event(start + i, "shoe", card="Ah") if i % 2 else Event(start + i, "tick"))
    return out


def write(directory, evs, clock=None, **kw):
    with Journal(directory, clock=clock or Clock(), **kw) as j:
        for e in evs:
            j.append(e)
        return j.head


def the_file(directory):
    files = journal_files(directory)
    assert len(files) == 1
    return files[0][1]


def lines_of(path):
    return path.read_bytes().split(b"\n")[:-1]


def put_lines(path, lines):
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def sha(line):
    return hashlib.sha256(line).hexdigest()


# -- writing and reading back


def test_append_and_read_back(tmp_path):
    evs = events(10)
    with Journal(tmp_path, clock=Clock()) as j:
        seqs = [j.append(e) for e in evs]
        assert seqs == list(range(1, 11))
        back = list(j.entries())
    assert [b.event for b in back] == evs
    assert [b.seq for b in back] == seqs
    assert back[0].file == "journal-2026-11-22.jsonl" and back[0].line == 1
    assert back[0].wall == "2026-11-22T10:00:00.000000Z"
    assert [b.seq for b in read_entries(tmp_path, from_seq=8)] == [8, 9, 10]


def test_line_format_is_the_documented_one(tmp_path):
    write(tmp_path, events(2))
    first, second = lines_of(the_file(tmp_path))
    d = json.loads(first)
    assert list(d) == ["seq", "prev", "wall", "event"]
    assert d["seq"] == 1 and d["prev"] == GENESIS
    assert d["event"] == {"t": 0.0, "ev": "new_hand", "players": 6, "hole_cards": 2}
    assert json.loads(second)["prev"] == sha(first)


def test_reopening_continues_the_chain(tmp_path):
    write(tmp_path, events(3))
    with Journal(tmp_path, clock=Clock()) as j:
        assert j.head[0] == 3
        assert j.append(Event(9.0, "tick")) == 4
    report = verify(tmp_path)
    assert report.ok and report.lines == 4


def test_append_takes_only_events(tmp_path):
    with Journal(tmp_path, clock=Clock()) as j:
        with pytest.raises(TypeError):
            j.append({"t": 0, "ev": "tick"})


def test_close_is_idempotent_and_append_after_close_fails(tmp_path):
    j = Journal(tmp_path, clock=Clock())
    j.append(Event(0.0, "tick"))
    j.close()
    j.close()
    with pytest.raises(JournalError):
        j.append(Event(1.0, "tick"))


def test_one_writer_per_directory(tmp_path):
    with Journal(tmp_path, clock=Clock()):
        with pytest.raises(JournalError, match="another process"):
            Journal(tmp_path, clock=Clock())
    # Released on close.
    Journal(tmp_path, clock=Clock()).close()


def test_bad_parameters_are_refused(tmp_path):
    with pytest.raises(ValueError):
        Journal(tmp_path, sync="sometimes")
    with pytest.raises(ValueError):
        Journal(tmp_path, keep_days=0)


# -- verify


def test_intact_chain_verifies(tmp_path):
    head = write(tmp_path, events(20))
    report = verify(tmp_path, expected_head=head)
    assert report.ok, report.problems
    assert report.lines == 20 and report.head == head and report.torn is None


def test_changed_event_is_named(tmp_path):
    write(tmp_path, events(10))
    path = the_file(tmp_path)
    lines = lines_of(path)
    lines[4] = lines[4].replace(b'"t":4.0', b'"t":4.5')
    put_lines(path, lines)
    [problem] = verify(tmp_path).problems
    assert (problem.kind, problem.file, problem.line) == ("changed", path.name, 5)
    assert f"{path.name}:5" in str(problem)


def test_changed_seq_field_is_named(tmp_path):
    write(tmp_path, events(10))
    path = the_file(tmp_path)
    lines = lines_of(path)
    lines[3] = lines[3].replace(b'"seq":4', b'"seq":40')
    put_lines(path, lines)
    [problem] = verify(tmp_path).problems
    assert (problem.kind, problem.line) == ("changed", 4)


def test_garbage_line_is_named(tmp_path):
    write(tmp_path, events(10))
    path = the_file(tmp_path)
    lines = lines_of(path)
    lines[6] = b"this is not json"
    put_lines(path, lines)
    [problem] = verify(tmp_path).problems
    assert (problem.kind, problem.line) == ("changed", 7)


def test_removed_line_is_named(tmp_path):
    write(tmp_path, events(10))
    path = the_file(tmp_path)
    lines = lines_of(path)
    del lines[3]  # seq 4
    put_lines(path, lines)
    [problem] = verify(tmp_path).problems
    assert (problem.kind, problem.file, problem.line) == ("removed", path.name, 4)
    assert "seq 4 missing" in problem.detail


def test_several_removed_lines_are_named_once(tmp_path):
    write(tmp_path, events(10))
    path = the_file(tmp_path)
    lines = lines_of(path)
    del lines[2:5]  # seq 3..5
    put_lines(path, lines)
    [problem] = verify(tmp_path).problems
    assert (problem.kind, problem.line) == ("removed", 3)
    assert "seq 3..5" in problem.detail


def test_removed_first_line_is_named(tmp_path):
    write(tmp_path, events(5))
    path = the_file(tmp_path)
    put_lines(path, lines_of(path)[1:])
    [problem] = verify(tmp_path).problems
    assert (problem.kind, problem.line) == ("removed", 1)


def test_forged_inserted_line_is_named(tmp_path):
    """A forger who chains his line to the one before is still caught: the
    following line vouches for the original line, not his."""
    write(tmp_path, events(10))
    path = the_file(tmp_path)
    lines = lines_of(path)
    forged = json.dumps({"seq": 4, "prev": sha(lines[2]), "wall": "2026-11-22T10:00:00.000000Z",
                         "event": {"t": 3.5, "ev": "shoe", "card": "As"}},
                        separators=(",", ":")).encode()
    lines.insert(3, forged)
    put_lines(path, lines)
    [problem] = verify(tmp_path).problems
    assert (problem.kind, problem.file, problem.line) == ("inserted", path.name, 4)


def test_copied_line_inserted_is_named(tmp_path):
    write(tmp_path, events(10))
    path = the_file(tmp_path)
    lines = lines_of(path)
    lines.insert(6, lines[1])
    put_lines(path, lines)
    [problem] = verify(tmp_path).problems
    assert (problem.kind, problem.line) == ("inserted", 7)


def test_several_problems_are_all_named(tmp_path):
    write(tmp_path, events(30))
    path = the_file(tmp_path)
    lines = lines_of(path)
    lines[4] = lines[4].replace(b'"t":4.0', b'"t":4.25')  # line 5 changed
    del lines[14]  # seq 15 removed: seq 16 is now line 15
    lines.insert(24, lines[0])  # a copy of line 1 becomes line 25
    put_lines(path, lines)
    found = [(p.kind, p.line) for p in verify(tmp_path).problems]
    assert found == [("changed", 5), ("removed", 15), ("inserted", 25)]


def test_expected_head_catches_a_removed_end(tmp_path):
    head = write(tmp_path, events(10))
    path = the_file(tmp_path)
    put_lines(path, lines_of(path)[:-2])
    assert verify(tmp_path).ok  # nothing on the disk vouches for the end ...
    [problem] = verify(tmp_path, expected_head=head).problems  # ... the head does
    assert problem.kind == "removed" and problem.line == 8


def test_expected_head_catches_a_changed_last_line(tmp_path):
    head = write(tmp_path, events(10))
    path = the_file(tmp_path)
    lines = lines_of(path)
    lines[-1] = lines[-1].replace(b'"t":9.0', b'"t":9.5')
    put_lines(path, lines)
    [problem] = verify(tmp_path, expected_head=head).problems
    assert (problem.kind, problem.line) == ("changed", 10)


# -- torn last line


@pytest.mark.parametrize("tail", [b'{"seq":11,"prev":"ab', b"\0\0\0\0\0\0\0\0", b"\0\0\0\0\n"])
def test_torn_last_line_is_reported_not_tampering(tmp_path, tail):
    write(tmp_path, events(10))
    path = the_file(tmp_path)
    with open(path, "ab") as f:
        f.write(tail)
    report = verify(tmp_path)
    assert report.ok and report.lines == 10
    assert report.torn is not None and (report.torn.file, report.torn.line) == (path.name, 11)
    assert report.torn.size == len(tail)


def test_opening_cuts_a_torn_line_and_the_chain_goes_on(tmp_path, caplog):
    write(tmp_path, events(10))
    path = the_file(tmp_path)
    size = path.stat().st_size
    with open(path, "ab") as f:
        f.write(b'{"seq":11,"prev":"0123')
    with Journal(tmp_path, clock=Clock()) as j:
        assert j.torn is not None and j.torn.line == 11
        assert path.stat().st_size == size
        assert j.append(Event(20.0, "tick")) == 11
    assert "torn" in caplog.text
    report = verify(tmp_path)
    assert report.ok and report.lines == 11 and report.torn is None


def test_torn_only_line_of_a_new_day_chains_to_the_previous_day(tmp_path):
    clock = Clock()
    write(tmp_path, events(4), clock)
    clock.now += DAY
    new = tmp_path / "journal-2026-11-23.jsonl"
    new.write_bytes(b'{"seq":5,"pre')
    with Journal(tmp_path, clock=clock) as j:
        assert j.torn is not None
        assert j.append(Event(9.0, "tick")) == 5
    assert verify(tmp_path).ok
    assert json.loads(lines_of(new)[0])["seq"] == 5


# -- rotation and retention


def test_daily_rotation_keeps_the_chain(tmp_path):
    clock = Clock()
    with Journal(tmp_path, clock=clock) as j:
        for day in range(3):
            for e in events(4, start=day * 10.0):
                j.append(e)
            clock.now += DAY
    files = journal_files(tmp_path)
    assert [p.name for _d, p in files] == [
        "journal-2026-11-22.jsonl", "journal-2026-11-23.jsonl", "journal-2026-11-24.jsonl"]
    first_of_day2 = json.loads(lines_of(files[1][1])[0])
    assert first_of_day2["seq"] == 5
    assert first_of_day2["prev"] == sha(lines_of(files[0][1])[-1])
    assert verify(tmp_path).ok
    assert [e.seq for e in read_entries(tmp_path)] == list(range(1, 13))


def test_removed_line_at_a_day_boundary_is_named_in_the_next_file(tmp_path):
    clock = Clock()
    with Journal(tmp_path, clock=clock) as j:
        for e in events(4):
            j.append(e)
        clock.now += DAY
        for e in events(4, start=10.0):
            j.append(e)
    day1 = journal_files(tmp_path)[0][1]
    put_lines(day1, lines_of(day1)[:-1])
    [problem] = verify(tmp_path).problems
    assert (problem.kind, problem.file, problem.line) == ("removed", "journal-2026-11-23.jsonl", 1)


def test_a_clock_that_goes_back_keeps_writing_the_newest_file(tmp_path):
    clock = Clock()
    with Journal(tmp_path, clock=clock) as j:
        j.append(Event(0.0, "tick"))
        clock.now -= 3 * DAY
        j.append(Event(1.0, "tick"))
    with Journal(tmp_path, clock=clock) as j:
        j.append(Event(2.0, "tick"))
    assert len(lines_of(the_file(tmp_path))) == 3
    assert verify(tmp_path).ok


def test_retention_deletes_files_older_than_90_days(tmp_path):
    clock = Clock()
    with Journal(tmp_path, clock=clock) as j:
        for day in range(100):
            j.append(Event(day * 10.0, "new_hand", players=2))
            j.append(Event(day * 10.0 + 1, "tick"))
            clock.now += DAY
        j.append(Event(5000.0, "tick"))  # day 100 opens and prunes
        deleted = list(j.deleted)
    days = [d for d, _p in journal_files(tmp_path)]
    today = days[-1]
    assert (today - days[0]).days == 90  # 90 days back is kept, 91 is not
    assert len(days) == 91
    assert deleted == [f"journal-2026-{m:02d}-{d:02d}.jsonl" for m, d in
                       [(11, 22), (11, 23), (11, 24), (11, 25), (11, 26), (11, 27), (11, 28),
                        (11, 29), (11, 30), (12, 1)]]
    assert (tmp_path / ANCHOR_NAME).exists()
    # The oldest kept line still chains to what was deleted.
    report = verify(tmp_path)
    assert report.ok, report.problems
    # Removing the oldest remaining line is still caught against the anchor.
    oldest = journal_files(tmp_path)[0][1]
    put_lines(oldest, lines_of(oldest)[1:])
    [problem] = verify(tmp_path).problems
    assert (problem.kind, problem.file, problem.line) == ("removed", oldest.name, 1)


def test_retention_runs_on_open_with_a_shorter_keep(tmp_path):
    clock = Clock()
    with Journal(tmp_path, clock=clock) as j:
        for _ in range(5):
            j.append(Event(0.0, "tick"))
            clock.now += DAY
    with Journal(tmp_path, clock=clock, keep_days=2) as j:
        # Today is the 27th: the 25th and 26th are kept, 22nd..24th go.
        assert j.deleted == ["journal-2026-11-22.jsonl", "journal-2026-11-23.jsonl",
                             "journal-2026-11-24.jsonl"]
        assert j.head[0] == 5
    assert len(journal_files(tmp_path)) == 2
    assert verify(tmp_path).ok


# -- the open hand


def test_open_hand_found_in_an_earlier_file(tmp_path):
    clock = Clock(T0 + 0.5 * DAY)  # 22:00 UTC
    with Journal(tmp_path, clock=clock) as j:
        for e in events(5):  # seq 1..5, hand 1
            j.append(e)
        j.append(Event(10.0, "new_hand", players=4))  # seq 6: the open hand
        j.append(Event(11.0, "shoe", card="Kd"))
        clock.now += 0.25 * DAY  # past midnight UTC
        for k in range(3):
            j.append(Event(12.0 + k, "tick"))  # seq 8..10 in the next file
        assert len(journal_files(tmp_path)) == 2
        assert j.open_hand_start() == 6
        replay = list(j.open_hand())
    assert [e.seq for e in replay] == [6, 7, 8, 9, 10]
    assert (replay[0].event.ev, replay[0].event.players) == ("new_hand", 4)
    assert {e.file for e in replay} == {"journal-2026-11-22.jsonl", "journal-2026-11-23.jsonl"}


def test_open_hand_in_the_newest_file_and_none(tmp_path):
    with Journal(tmp_path, clock=Clock()) as j:
        assert j.open_hand_start() is None
        assert list(j.open_hand()) == []
        j.append(Event(0.0, "tick"))
        assert j.open_hand_start() is None
        for e in events(3) + events(3, start=5.0):
            j.append(e)
    assert find_open_hand(tmp_path) == 5


def test_reading_a_damaged_line_names_it(tmp_path):
    write(tmp_path, events(5))
    path = the_file(tmp_path)
    lines = lines_of(path)
    lines[2] = b"{oops"
    put_lines(path, lines)
    with pytest.raises(JournalError, match=rf"{path.name}:3"):
        list(read_entries(tmp_path))


# -- fsync policy (os.fsync is the OS's, so counting its calls is fair)


def test_sync_event_fsyncs_every_append(tmp_path, mocker):
    with Journal(tmp_path, clock=Clock()) as j:
        j.append(Event(0.0, "tick"))  # creates the file: its fsync and the directory's
        spy = mocker.spy(os, "fsync")
        for k in range(10):
            j.append(Event(k + 1.0, "tick"))
            assert spy.call_count == k + 1  # on disk before append returns
        spy.reset_mock()
    assert spy.call_count == 1  # close syncs once more, harmlessly


def test_sync_none_never_fsyncs(tmp_path, mocker):
    spy = mocker.spy(os, "fsync")
    write(tmp_path, events(20), sync="none")
    assert spy.call_count == 0
    assert verify(tmp_path).ok


def test_sync_group_shares_fsyncs_by_count(tmp_path, mocker):
    frozen = lambda: 100.0  # noqa: E731 - the window never runs out
    with Journal(tmp_path, clock=Clock(), sync="group", group_events=4,
                 group_window=60.0, monotonic=frozen) as j:
        j.append(Event(0.0, "tick"))
        j.flush()
        spy = mocker.spy(os, "fsync")
        for k in range(8):
            j.append(Event(k + 1.0, "tick"))
        assert spy.call_count == 2
        j.append(Event(20.0, "tick"))
        assert spy.call_count == 2
    assert spy.call_count == 3  # the pending one is synced on close


def test_sync_group_window_bounds_the_delay_on_append(tmp_path, mocker):
    mono = [0.0]
    with Journal(tmp_path, clock=Clock(), sync="group", group_events=1000,
                 group_window=0.05, monotonic=lambda: mono[0]) as j:
        j.append(Event(0.0, "tick"))
        j.flush()
        spy = mocker.spy(os, "fsync")
        j.append(Event(1.0, "tick"))
        j.append(Event(2.0, "tick"))
        assert spy.call_count == 0
        mono[0] += 0.05
        j.append(Event(3.0, "tick"))
        assert spy.call_count == 1


def test_sync_group_flusher_syncs_when_appends_stop(tmp_path, mocker):
    synced = threading.Event()
    real_fsync = os.fsync

    def fsync(fd):
        real_fsync(fd)
        synced.set()

    with Journal(tmp_path, clock=Clock(), sync="group", group_events=1000,
                 group_window=0.01) as j:
        j.append(Event(0.0, "tick"))
        j.flush()
        mocker.patch("os.fsync", side_effect=fsync)
        synced.clear()
        j.append(Event(1.0, "tick"))
        assert synced.wait(timeout=10), "the flusher thread never synced"


# -- any single edit is found where it was made


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["changed", "removed", "inserted"]), where=st.integers(0, 10),
       copy_from=st.integers(0, 11))
def test_any_single_edit_is_named(tmp_path_factory, kind, where, copy_from):
    """12 lines; edit one (not the last, which no later line vouches for)."""
    directory = tmp_path_factory.mktemp("j")
    write(directory, events(12))
    path = the_file(directory)
    lines = lines_of(path)
    if kind == "changed":
        lines[where] = lines[where].replace(b'"t":', b'"t":1')
        expect_line = where + 1
        if where == 10:
            # Only the last line vouches for line 11: whether line 11 was changed
            # or line 12 was forged, nothing on this disk can tell.
            kind, expect_line = "ambiguous at the end", 12
    elif kind == "removed":
        del lines[where]
        expect_line = where + 1  # the line after the gap
    else:
        lines.insert(where + 1, lines[copy_from])
        expect_line = where + 2
    put_lines(path, lines)
    found = [(p.kind, p.line) for p in verify(directory).problems]
    if kind == "inserted" and copy_from in (where, where + 1):
        # A copy next to its original: either of the two equal lines is "the" extra one.
        twin = where + 1 if copy_from == where else where + 3
        assert found in ([(kind, expect_line)], [(kind, twin)])
    else:
        assert found == [(kind, expect_line)]


# -- failures of the disk


def test_a_failed_write_leaves_no_partial_line(tmp_path, mocker):
    import errno

    real_write = os.write
    calls = []

    def half_then_full(fd, data):
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    with Journal(tmp_path, clock=Clock()) as j:
        j.append(Event(0.0, "tick"))
        size = the_file(tmp_path).stat().st_size
        mocker.patch("os.write", side_effect=half_then_full)
        with pytest.raises(OSError):
            j.append(Event(1.0, "shoe", card="Ah"))
        mocker.stopall()
        assert the_file(tmp_path).stat().st_size == size
        assert j.append(Event(2.0, "tick")) == 2
    report = verify(tmp_path)
    assert report.ok and report.lines == 2 and report.torn is None


def test_opening_after_damaged_last_lines_keeps_going(tmp_path, caplog):
    """Complete lines that do not parse are damage, never a torn write: they
    are moved aside byte for byte, with a note of where they were, and the
    chain goes on from the last line it vouches for."""
    write(tmp_path, events(6))
    path = the_file(tmp_path)
    lines = lines_of(path)
    lines[4] = b"garbage one"
    lines[5] = b"garbage two"
    put_lines(path, lines)
    with Journal(tmp_path, clock=Clock()) as j:  # must not raise: the table runs on
        assert j.torn is None
        assert [(d["line"], d["moved"]) for d in j.damage] == [(5, True), (6, True)]
        assert j.append(Event(9.0, "tick")) == 5
        record = j.damage_record()
    assert "damaged" in caplog.text
    assert record["count"] == 2 and record["lines"][0]["file"] == path.name
    report = verify(tmp_path)
    assert report.ok and report.lines == 5
    # Kept byte for byte where the note says.
    note = json.loads(next((tmp_path / "quarantine").glob("*.json")).read_bytes())
    data = (tmp_path / note["lines"][0]["quarantine"]).read_bytes()
    assert data == b"garbage one\ngarbage two\n"
    assert [(n["line"], n["quarantine_offset"]) for n in note["lines"]] == [(5, 0), (6, 12)]


def test_reopening_a_large_file_finds_its_last_line(tmp_path):
    """The last line is found by reading backwards in growing chunks."""
    evs = events(3000)
    head = write(tmp_path, evs, sync="none")
    with open(the_file(tmp_path), "ab") as f:
        f.write(b'{"seq":3001,"prev":"')
    assert verify(tmp_path).torn.line == 3001
    with Journal(tmp_path, clock=Clock(), sync="none") as j:
        assert j.torn.line == 3001
        assert j.head == head
        assert j.append(Event(5000.0, "tick")) == 3001
    assert verify(tmp_path).ok
    assert [e.seq for e in read_entries(tmp_path, from_seq=2999)] == [2999, 3000, 3001]


def test_a_damaged_anchor_is_reported_not_raised(tmp_path):
    clock = Clock()
    with Journal(tmp_path, clock=clock, keep_days=1) as j:
        for _ in range(4):
            j.append(Event(0.0, "tick"))
            clock.now += DAY
        j.append(Event(1.0, "tick"))
        assert j.deleted
    (tmp_path / ANCHOR_NAME).write_text("{not json")
    problems = verify(tmp_path).problems
    assert problems[0].file == ANCHOR_NAME
    assert problems[1].kind == "removed" and problems[1].line == 1


def test_a_clock_jumping_ahead_does_not_wipe_the_journal(tmp_path):
    clock = Clock()
    with Journal(tmp_path, clock=clock) as j:
        for _ in range(3):
            j.append(Event(0.0, "tick"))
            clock.now += DAY
        clock.now += 200 * DAY  # a wrong clock, or a box off for months
        j.append(Event(1.0, "tick"))
        assert j.deleted == []
        assert len(journal_files(tmp_path)) == 4
        clock.now += DAY  # still that far on a day later: it was real
        j.append(Event(2.0, "tick"))
        assert len(j.deleted) == 3
    with Journal(tmp_path, clock=Clock(clock.now + 300 * DAY)) as j:
        assert j.deleted == []  # not on opening either
    assert verify(tmp_path).ok


def test_decision_lines_are_chained_and_skipped_by_event_readers(tmp_path):
    from dealerbox.service.journal import Journal, read_decisions, read_entries, verify

    with Journal(tmp_path, sync="none") as j:
        s1 = j.append(Event(1.0, "new_hand", players=2))
        j.append_decision({"t": 1.0, "verdict": "ok", "irregularity": None, "cards": [], "rule": "",
                           "steps": [], "step": 0, "phase": "deal", "seq": s1})
        s3 = j.append(Event(2.0, "shoe", card="Ah"))
    assert [e.seq for e in read_entries(tmp_path)] == [1, s3] == [1, 3]
    assert [(seq, d["verdict"], d["seq"]) for seq, _wall, d in read_decisions(tmp_path)] == [(2, "ok", 1)]
    assert verify(tmp_path).ok
    path = next(tmp_path.glob("journal-*.jsonl"))
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace('"ok"', '"void"')
    path.write_text("\n".join(lines) + "\n")
    report = verify(tmp_path)
    # Only the last line vouches for the changed decision: verify names both.
    assert not report.ok and report.problems[0].kind == "ambiguous at the end"
    assert ".jsonl:2 " in str(report.problems[0])
    # A decision that is not one the box could give is named as such.
    lines[1] = lines[1].replace('"void"', '"maybe"')
    path.write_text("\n".join(lines) + "\n")
    report = verify(tmp_path)
    assert [(p.kind, p.line) for p in report.problems][0] == ("changed", 2)
    assert "not a CONTRACT.md decision" in str(report.problems[0])


# -- the writer thread


def test_the_writer_commits_what_was_queued_meanwhile_with_one_fsync(tmp_path, mocker):
    gate = threading.Event()
    real_fsync = os.fsync
    calls = []

    def slow_fsync(fd):
        calls.append(fd)
        gate.wait(10)
        real_fsync(fd)

    with Journal(tmp_path, clock=Clock()) as j:
        j.append(Event(0.0, "new_hand", players=2))   # the day's file exists: no directory fsync
        mocker.patch("os.fsync", side_effect=slow_fsync)
        j.start_writer()
        assert j.submit(Event(0.5, "tick")) == 2
        deadline = time.monotonic() + 10
        while not calls and time.monotonic() < deadline:
            time.sleep(0.001)
        # The first line's fsync is under way: ten more queue up meanwhile.
        seqs = [j.submit(Event(float(i), "tick")) for i in range(1, 11)]
        assert seqs == list(range(3, 13)) and j.durable_seq == 1
        gate.set()
        assert j.wait_written(12, timeout=10)
        assert len(calls) == 2
        mocker.stopall()
    assert [e.seq for e in read_entries(tmp_path)] == list(range(1, 13))
    assert verify(tmp_path).ok


def test_the_writer_holds_lines_while_writes_fail_and_writes_them_in_order(tmp_path, mocker):
    import errno

    real_write = os.write
    failures = [3]
    changes = []

    def failing_write(fd, data):
        if failures[0] > 0:
            failures[0] -= 1
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    with Journal(tmp_path, clock=Clock(), retry_s=0.01) as j:
        j.start_writer(on_change=changes.append)
        mocker.patch("os.write", side_effect=failing_write)
        for i in range(5):
            j.submit(Event(float(i), "tick"))
        assert j.wait_written(5, timeout=10)
        mocker.stopall()
        deadline = time.monotonic() + 10   # the listener hears of the end just after the write
        while len(changes) < 2 and time.monotonic() < deadline:
            time.sleep(0.001)
        assert changes == ["No space left on device", None] and j.faults == 1 and j.fault is None
    assert [e.event.t for e in read_entries(tmp_path)] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert verify(tmp_path).ok


# -- the parts behind the Journal facade


def test_verify_counts_the_inserted_lines_it_skips(tmp_path):
    """The chain walk counts every line it reads, the run of inserted lines it skips over included."""
    write(tmp_path, events(10))
    path = the_file(tmp_path)
    lines = lines_of(path)
    lines[6:6] = [lines[1], lines[2]]
    put_lines(path, lines)
    report = verify(tmp_path)
    assert [(p.kind, p.line) for p in report.problems] == [("inserted", 7), ("inserted", 8)]
    assert report.lines == 12


def test_the_writer_queues_a_gap_line_for_what_a_full_queue_lost(tmp_path):
    """JournalWriter on its own: with the queue full, a line is lost and counted; the gap
    line saying so takes the next free place in the queue, before the next line."""
    from dealerbox.service.journal.day_file import ChainFile
    from dealerbox.service.journal.retention import Retention
    from dealerbox.service.journal.writer import JournalWriter

    retention = Retention(tmp_path, 90, keep_from_seq=None, durable=False)
    chain = ChainFile(tmp_path, (0, GENESIS), retention, sync="none", group_window=0.05,
                      group_events=64, monotonic=time.monotonic)
    writer = JournalWriter(chain, queue_lines=2, retry_s=0.01, clock=Clock(), monotonic=time.monotonic)
    try:
        assert [writer.submit("event", Event(float(i), "tick").to_dict(), float(i)) for i in range(3)] \
            == [1, 2, None]
        assert (writer.lost_events, writer.queued) == (1, 2)
        writer.start(None)
        assert writer.wait_written(2, timeout=10)
        assert writer.submit("event", Event(3.0, "tick").to_dict(), 3.0) == 4
        assert writer.wait_written(4, timeout=10)
    finally:
        writer.stop(drain_s=1.0)
        chain.close(timeout=5)
    bodies = [json.loads(line) for line in lines_of(the_file(tmp_path))]
    assert [b["seq"] for b in bodies] == [1, 2, 3, 4]
    assert bodies[2]["gap"] == {"reason": "the journal's queue is full", "events": 1, "other_lines": 0,
                                "first_wall": "2026-11-22T10:00:00.000000Z", "first_t": 2.0,
                                "last_wall": "2026-11-22T10:00:00.000000Z", "last_t": 2.0}
    assert verify(tmp_path).ok


def test_the_damage_scan_copies_damage_aside_and_says_where_the_chain_goes_on(tmp_path):
    """DamageScan on its own: a changed line is copied to quarantine/ and left in place; a
    damaged last line is copied and moved out (the file is cut back to its last good
    line); the scan returns that line's seq and hash."""
    from dealerbox.service.journal.damage import DamageScan, damage_record

    write(tmp_path, events(6))
    path = the_file(tmp_path)
    lines = lines_of(path)
    lines[1] = lines[1].replace(b'"Ah"', b'"Kh"')
    lines[5] = b"garbage"
    put_lines(path, lines)
    scan = DamageScan(tmp_path, Clock())
    assert scan.run() == (5, sha(lines[4]))
    assert lines_of(path) == lines[:5]
    assert [(d["line"], d["kind"], d["moved"]) for d in scan.damage] == [(2, "changed", False),
                                                                      (6, "changed", True)]
    [copy] = (tmp_path / "quarantine").glob("quarantine-*.bin")
    assert copy.read_bytes() == lines[1] + b"\n" + lines[5] + b"\n"
    record = damage_record(scan.damage, T0)
    assert record["count"] == 2 and [d["line"] for d in record["lines"]] == [2, 6]
