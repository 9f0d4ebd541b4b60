"""Storage faults and damaged journals, as real as the faults: a full tmpfs
mounted by the test, read-only mounts, ``ulimit -f`` on a daemon process,
journals damaged at random, and garbage fed to ``replay``.

The box must judge and show whatever the disk does, hold what it cannot write
and write it, chain intact, when the disk is back; start on any journal; and
answer garbage with one line, never a traceback.
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bench.bench_reliability import (
    DAMAGE_KINDS, build_journal, check_damaged_start, reference_decisions, run_on_failing_disk,
    session,
)
from dealerbox.cli import main
from dealerbox.errors import EventError
from dealerbox.domain.events import Event, EventFile
from dealerbox.service.config import load_config
from dealerbox.service.daemon import Daemon
from dealerbox.service.journal import Journal, journal_files, read_entries, verify
from hardware_sim.table import SimulatedTable

REPO = Path(__file__).resolve().parents[2]
SIM_CONFIG = REPO / "firmware_config" / "tables" / "sim.toml"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mounts, rlimits and /proc")


def wait_for(predicate, what: str, timeout: float = 30.0):
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def write_config(state_dir: Path, where: Path) -> Path:
    text = SIM_CONFIG.read_text(encoding="utf-8")
    text = re.sub(r'(?m)^state_dir = "[^"]*"', f'state_dir = "{state_dir}"', text)
    path = where / "table.toml"
    path.write_text(text, encoding="utf-8")
    return path


def mount_tmpfs(where: Path, *options: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(("size=256k",) + options), "tmpfs",
                           str(where)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.strip() or proc.returncode}): "
                    "needs root or CAP_SYS_ADMIN")


@pytest.fixture
def tmpfs(tmp_path):
    mnt = tmp_path / "mnt"
    mount_tmpfs(mnt)
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def fill(directory: Path) -> Path:
    """Fill the file system under *directory*; return the filler file."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    return filler


class InProcessBox:
    """The daemon in this process on the simulated table, fed *events* as ``--input``."""

    def __init__(self, config_path: Path, events, **journal_options):
        self.config = load_config(config_path)
        self.table = SimulatedTable(self.config).__enter__()
        self.decisions: list[dict] = []
        self.daemon = Daemon(self.config, table=self.table, input_events=events,
                             on_decision=self.decisions.append,
                             journal_options={"retry_s": 0.02, **journal_options})

    def __enter__(self):
        self.daemon.start()
        return self

    def __exit__(self, *exc):
        self.daemon.close()
        self.table.close()


def plain(decisions):
    return [{k: v for k, v in d.items() if k != "seq"} for d in decisions]


def no_tracebacks(caplog):
    bad = [r for r in caplog.records if r.exc_info]
    assert not bad, [r.getMessage() for r in bad]


# --------------------------------------------------------------------------
# A full disk


def test_a_full_disk_blinds_nothing_and_loses_nothing(tmpfs, tmp_path, caplog):
    caplog.set_level(logging.INFO)
    events = session()
    ref = reference_decisions(events)
    state = tmpfs / "state"
    (state / "journal").mkdir(parents=True)
    filler = fill(tmpfs)
    config = write_config(state, tmp_path)
    with InProcessBox(config, events) as box:
        d = box.daemon
        # Every decision is shown while nothing can be written.
        wait_for(lambda: len(box.decisions) >= len(ref), "every decision shown")
        assert plain(box.decisions) == ref
        assert d.journal.fault is not None and "No space left" in d.journal.fault
        wait_for(lambda: "STORAGE FAULT" in d.view.lines[-1], "the technician line")
        assert "STORAGE FAULT" in d._status() and d.stats.storage_faults == 1
        assert d.stats.storage_fault is not None and d.journal.queued > 0
        assert box.table.glass()[-1].startswith("STORAGE FAULT") or d.lcd is None
        # Space comes back: the queue is written in order, its chain intact.
        filler.unlink()
        wait_for(lambda: d.journal.fault is None and d.journal.queued == 0, "the queue written")
        wait_for(lambda: "STORAGE FAULT" not in d.view.lines[-1], "the technician line cleared")
    jdir = state / "journal"
    entries = list(read_entries(jdir))
    assert [e.event.to_dict() for e in entries] == [e.to_dict() for e in events]
    report = verify(jdir)
    assert report.ok, [str(p) for p in report.problems]
    # One line when it starts, one when it ends; no traceback per event.
    text = caplog.text
    assert text.count("cannot write") == 1 and text.count("writing again") == 1
    no_tracebacks(caplog)


def test_a_queue_too_small_for_the_outage_leaves_a_gap_line(tmpfs, tmp_path, caplog):
    events = session()
    ref = reference_decisions(events)
    state = tmpfs / "state"
    (state / "journal").mkdir(parents=True)
    filler = fill(tmpfs)
    with InProcessBox(write_config(state, tmp_path), events, queue_lines=20) as box:
        d = box.daemon
        wait_for(lambda: len(box.decisions) >= len(ref), "every decision shown")
        assert plain(box.decisions) == ref           # the panel never depended on the disk
        lost = d.journal.lost_events
        assert lost > 0 and "events lost" in d._status()
        filler.unlink()
        wait_for(lambda: d.journal.fault is None and d.journal.queued == 0, "the queue written")
    lines = [json.loads(x) for _d, p in journal_files(state / "journal") for x in p.read_bytes().splitlines()]
    gaps = [x["gap"] for x in lines if "gap" in x]
    assert len(gaps) == 1
    gap = gaps[0]
    assert gap["events"] == lost and "No space left" in gap["reason"]
    assert gap["first_wall"] <= gap["last_wall"] and gap["first_t"] <= gap["last_t"]
    kept = [x["event"] for x in lines if "event" in x]
    assert len(kept) + lost == len(events)
    assert kept == [e.to_dict() for e in events[:len(kept)]]    # the oldest are kept, in order
    assert verify(state / "journal").ok


def test_ulimit_f_on_the_daemon_process(tmp_path):
    """``ulimit -f 0``: every journal write fails with EFBIG. The process shows
    every decision, logs the fault once, and stops cleanly, saying what it
    could not write."""
    events = session(hands=2)
    ref = reference_decisions(events)
    decisions, journal, err = run_on_failing_disk(tmp_path, events)
    assert plain(decisions) == ref
    assert journal == []
    assert "Traceback" not in err
    assert err.count("cannot write") == 1 and "File too large" in err
    assert re.search(r"stopping with \d+ line\(s\) not written", err)


def test_ulimit_f_lifted_mid_session_loses_no_event(tmp_path):
    events = session(hands=2)
    ref = reference_decisions(events)
    decisions, journal, err = run_on_failing_disk(tmp_path, events, lift_after=len(ref) // 2)
    assert plain(decisions) == ref
    assert [e.to_dict() for e in journal] == [e.to_dict() for e in events]
    assert err.count("cannot write") == 1 and err.count("writing again") == 1
    assert verify(tmp_path / "state" / "journal").ok


def _run_cli(*args, timeout=60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dealerbox.cli", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)


def test_a_read_only_state_dir_at_start_is_one_clear_line(tmp_path):
    ro = tmp_path / "ro"
    mount_tmpfs(ro, "ro")
    try:
        proc = _run_cli("run", "--config", str(write_config(ro / "state", tmp_path)))
    finally:
        subprocess.run(["umount", "-l", str(ro)], capture_output=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert str(ro / "state") in lines[0] and "Read-only file system" in lines[0]
    assert "runs as user" in lines[0]


def test_a_state_dir_in_the_way_at_start_is_one_clear_line(tmp_path):
    blocker = tmp_path / "state"
    blocker.write_text("not a directory")
    proc = _run_cli("run", "--config", str(write_config(blocker / "inner", tmp_path)))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(blocker / "inner") in lines[0] and "runs as user" in lines[0], proc.stderr


# --------------------------------------------------------------------------
# Damaged journals


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    path = tmp_path_factory.mktemp("template") / "journal"
    build_journal(path, session(seed=9, hands=5), days=3)
    return path


@settings(max_examples=70, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(DAMAGE_KINDS), seed=st.integers(0, 2**32 - 1))
def test_the_box_starts_on_any_damaged_journal(template, tmp_path_factory, kind, seed):
    """Damage of every kind, anywhere: the start path runs; every line the
    damage did not touch is kept (in the journal or its quarantine); verify
    (with the head kept before) names the damage; the replayed open hand is
    exactly its good lines, and the engine's state is theirs."""
    logging.disable(logging.CRITICAL)
    try:
        config = load_config(write_config(Path("/nonexistent"), tmp_path_factory.mktemp("c")), check_devices=False)
        failures = check_damaged_start(config, template, tmp_path_factory.mktemp("w"), kind, random.Random(seed))
    finally:
        logging.disable(logging.NOTSET)
    assert failures == []


def _journal_with_a_duplicated_shoe_line(jdir: Path) -> tuple[int, bytes]:
    """A hand with five cards dealt; the third shoe line is duplicated at the end."""
    with Journal(jdir) as j:
        j.append(Event(0.0, "new_hand", players=2, hole_cards=2))
        for i, card in enumerate(["Ah", "Kd", "7c", "2s"]):
            j.append(Event(1.0 + i, "shoe", card=card))
    path = journal_files(jdir)[-1][1]
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines) + lines[2])
    return len(lines) + 1, lines[2]


def test_a_duplicated_shoe_line_gives_no_false_duplicate_card(tmp_path, caplog):
    caplog.set_level(logging.INFO)
    state = tmp_path / "state"
    line_no, dup = _journal_with_a_duplicated_shoe_line(state / "journal")
    report = verify(state / "journal")
    assert [(p.kind, p.line) for p in report.problems] == [("inserted", line_no)]
    config = load_config(write_config(state, tmp_path))
    with SimulatedTable(config) as table:
        daemon = Daemon(config, table=table)
        daemon.start()
        try:
            assert daemon.engine.decision.irregularity is None
            assert daemon.stats.recovered_events == 5 and daemon.stats.journal_damage == 1
            wait_for(lambda: table.glass()[-1].startswith("JOURNAL DAMAGED"), "the floor notice")
            assert "journal damage found at start" in daemon._status()
        finally:
            daemon.close()
    assert "floor notice: the journal was damaged" in caplog.text
    # The duplicate is kept byte for byte in the quarantine; the chain is whole
    # again and carries the journal_damage record, which verify reports.
    qdir = state / "journal" / "quarantine"
    assert next(qdir.glob("*.bin")).read_bytes() == dup
    note = json.loads(next(qdir.glob("*.json")).read_bytes())["lines"][0]
    assert (note["line"], note["moved"], note["kind"]) == (line_no, True, "inserted")
    report = verify(state / "journal")
    assert report.ok and len(report.damage) == 1
    proc = _run_cli("journal", "verify", str(state / "journal"))
    assert proc.returncode == 0 and "quarantined them (journal_damage" in proc.stdout


def test_a_complete_unparsable_last_line_is_damage_not_a_torn_write(tmp_path):
    with Journal(tmp_path) as j:
        for i in range(3):
            j.append(Event(float(i), "tick"))
    path = journal_files(tmp_path)[-1][1]
    data = path.read_bytes()
    flipped = data[:-10] + bytes([data[-10] ^ 0x01]) + data[-9:]
    path.write_bytes(flipped)
    report = verify(tmp_path)
    assert report.torn is None and not report.ok
    assert report.problems[0].line == 3
    proc = _run_cli("journal", "verify", str(tmp_path))
    assert proc.returncode == 1 and "first line that cannot be vouched for" in proc.stdout
    with Journal(tmp_path) as j:
        assert j.torn is None and [d["line"] for d in j.damage] == [3]
        assert j.head[0] == 2
    # Nothing was deleted: the line is in the quarantine, byte for byte.
    last = flipped.splitlines(keepends=True)[-1]
    assert next((tmp_path / "quarantine").glob("*.bin")).read_bytes() == last


def test_a_forged_appended_line_is_blamed_not_the_one_before(tmp_path):
    with Journal(tmp_path) as j:
        for i in range(3):
            j.append(Event(float(i), "tick"))
    path = journal_files(tmp_path)[-1][1]
    forged = {"seq": 4, "prev": "ab" * 32, "wall": "2026-11-23T00:00:00.000000Z",
              "event": {"t": 9.0, "ev": "shoe", "card": "Ah"}}
    with open(path, "ab") as fh:
        fh.write(json.dumps(forged, separators=(",", ":")).encode() + b"\n")
    problems = verify(tmp_path).problems
    assert [(p.kind, p.line) for p in problems] == [("ambiguous at the end", 4)]


def test_verify_a_missing_directory_is_an_error(tmp_path):
    proc = _run_cli("journal", "verify", str(tmp_path / "nowhere"))
    assert proc.returncode == 2 and "no journal directory" in proc.stderr
    assert "journal ok" not in proc.stdout


def test_retention_keeps_what_keep_from_seq_asks_for(tmp_path):
    clock = [1795341600.0]
    with Journal(tmp_path, clock=lambda: clock[0], keep_days=2) as j:
        for day in range(5):
            clock[0] = 1795341600.0 + day * 86400
            j.append(Event(float(day), "tick"))
    assert len(journal_files(tmp_path)) == 3
    with Journal(tmp_path, clock=lambda: clock[0], keep_days=2, keep_from_seq=lambda: 4) as j:
        for day in range(5, 8):
            clock[0] = 1795341600.0 + day * 86400
            j.append(Event(float(day), "tick"))
    # Without the hook only 3 days would remain; seq 4 (day 4) must stay.
    seqs = [e.seq for e in read_entries(tmp_path)]
    assert 4 in seqs and verify(tmp_path).ok


# --------------------------------------------------------------------------
# Garbage in


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400) | st.lists(st.sampled_from([
    b'{"t": 1, "ev": "shoe", "card": "Ah"}', b'{"t": ', b"\xff", b"\xef\xbb\xbf", b"1" * 401, b"[" * 3000,
    b'{"t": 1, "ev": "shoe", "uid": "04A3C"}', b"\n", b'"\\ud800"', b"{}", b'{"t": 1e999, "ev": "tick"}',
]), max_size=8).map(b"".join))
def test_replay_on_garbage_is_one_line_never_a_traceback(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "in.jsonl"
    path.write_bytes(data)
    try:
        for _event in EventFile(path):
            pass
    except EventError as exc:
        text = str(exc)
        assert "\n" not in text and len(text) < 400 and str(path) in text


@pytest.mark.parametrize("content, expected", [
    (b'{"t": ' + b"1" * 401 + b', "ev": "tick"}\n', "line 1: 't' must be a number of seconds from 0 to 1e12"),
    (b'{"t": 0, "ev": "new_hand", "players": 2}\n{"t": 1, "ev": "shoe", "card": "\xff"}\n',
     "line 2: not UTF-8"),
    (b'{"t": 0, "ev": "shoe", "uid": "' + b"A" * 10_000_001 + b'"}\n', "line 1: longer than 65536 bytes"),
    (b'{"t": 0, "ev": "shoe", "uid": "04A3C6CAE261800"}\n', "'uid' must be whole bytes"),
])
def test_each_input_error_is_one_short_line_naming_file_and_line(tmp_path, capsys, content, expected):
    path = tmp_path / "in.jsonl"
    path.write_bytes(content)
    for command in (["replay", str(path)], ["demo", str(path)]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and len(err) < 300 and str(path) in err and expected in err, err


def test_a_bom_is_accepted(tmp_path, capsys):
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"t": 0, "ev": "new_hand", "players": 2}\n')
    assert main(["replay", str(path)]) == 0


def test_a_missing_file_is_one_line(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nope.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No such file or directory" in err and "Errno" not in err


def test_run_input_errors_are_one_line_before_the_box_starts(tmp_path):
    bad = tmp_path / "in.jsonl"
    bad.write_bytes(b'{"t": 0, "ev": "new_hand", "players": 2}\n{"t": ' + b"9" * 401 + b', "ev": "tick"}\n')
    config = write_config(tmp_path / "state", tmp_path)
    proc = _run_cli("run", "--config", str(config), "--input", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"dealerbox run: {bad}: line 2: 't' must be a number of seconds from 0 to "
                                   f"1e12, not {'9' * 40}... (401 characters)")
    assert not (tmp_path / "state").exists() or not list((tmp_path / "state").rglob("journal-*"))


def test_help_documents_the_exit_codes():
    proc = _run_cli("--help")
    assert "exit status" in proc.stdout and "2  bad input or usage" in proc.stdout


def test_a_missing_config_or_profile_is_one_plain_line(tmp_path, capsys):
    assert main(["run", "--config", str(tmp_path / "nope.toml")]) == 2
    err = capsys.readouterr().err
    assert err == f"dealerbox: {tmp_path / 'nope.toml'}: cannot read it (No such file or directory): " \
                  f"expected a readable table config\n"


def test_a_bad_head_for_verify_exits_2(tmp_path, capsys):
    config = write_config(tmp_path / "state", tmp_path)
    assert main(["journal", "verify", str(tmp_path), "--head", "nonsense"]) == 2
    assert "--head must be SEQ:HASH" in capsys.readouterr().err
    assert config.exists()
