"""Reliability: a full disk, a damaged journal or garbage input never blinds or stops the box.

- ``storage_full_decisions_kept_pct``: ``dealerbox run --input --decisions`` with
  the journal unable to take a single byte (``RLIMIT_FSIZE`` 0, so every write
  fails with EFBIG as a full disk fails with ENOSPC): the decisions shown, as a
  percentage of the same session's decisions on a healthy disk. Goal: 100.
- ``storage_events_lost_after_recovery``: the same, but the limit is lifted
  (``prlimit``) half-way through the session, as space coming back: events of
  the session missing from the journal once the box has caught up. Goal: 0
  (the default queue of 20,000 lines holds the outage).
- ``journal_damage_start_pct``: journals of a multi-day session damaged at
  random (torn, flipped, removed, inserted, duplicated, appended, a whole day
  file gone), at least 500: the share on which the daemon's start path (open,
  check the chain from the open hand, quarantine, replay, record the damage)
  runs without an exception, keeps every line the damage did not touch, has
  the damage named by ``verify`` (with the head recorded before the damage)
  and replays exactly the good lines of the open hand. Goal: 100.
- ``fuzz_tracebacks``: generated inputs (random bytes, mutated event lines,
  huge numbers, deep nesting, long lines, bad UTF-8, BOMs), at least 100,000,
  each read through the reader of ``replay`` and fed to the engine, plus a few
  hundred through ``dealerbox replay`` as a process: anything but one clear
  error line counts. Goal: 0.

Baseline (before storage faults and damage were handled): 0 of 16 decisions on a full disk; a damaged
line stopped the start; a 401-digit ``t`` was a traceback.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dealerbox.errors import DealerboxError
from dealerbox.rules.engine import HandEngine, decision_to_dict
from dealerbox.domain.events import Event, stream_events
from dealerbox.domain.messages import load_messages
from dealerbox.service.journal import Journal, journal_files, verify
from hardware_sim.script import HandScript

REPO = Path(__file__).resolve().parent.parent
SIM_CONFIG = REPO / "firmware_config" / "tables" / "sim.toml"
PROFILE = "tda-2019"
DAMAGED_JOURNALS = 500
FUZZ_INPUTS = 100_000
FUZZ_PROCESSES = 100
DAMAGE_KINDS = ("torn", "flipped", "removed", "inserted", "duplicated", "appended", "file_gone")
T0 = 1795341600.0  # 2026-11-22 10:00 UTC
DAY = 86400.0


# --------------------------------------------------------------------------
# A session and what a healthy box makes of it


def session(seed: int = 8, hands: int = 4) -> list[Event]:
    """A few hands with irregularities; ticks the daemon would not journal left
    out; each event's ``id`` is its line number, as ``run --input`` gives it."""
    s = HandScript(seed=seed)
    for i in range(hands):
        players = 3 + i % 5
        s.new_hand(players).deal(players).button("exposed").deal(players + 2).take().button("ack")
        s.round_done().flop(burn=False).round_done().turn().round_done().river().round_done().hand_over()
    s.new_hand(4).deal(3).button("exposed")
    engine = HandEngine(PROFILE)
    out = []
    for n, d in enumerate((e for e in s.events if "expect" not in e), 1):
        e = Event.from_dict(d)
        if e.ev == "tick" and not engine.has_deadline:
            continue
        engine.feed(e)
        e.id = n
        out.append(e)
    return out


def reference_decisions(events, lang: str = "en") -> list[dict]:
    """What a healthy box prints for *events* (``--decisions``, without ``seq``)."""
    engine = HandEngine(PROFILE)
    messages = load_messages(lang)
    out = []
    for e in events:
        for d in engine.feed(Event.from_dict(e.to_dict())):
            dd = decision_to_dict(d, messages)
            dd["id"] = e.id
            out.append(dd)
    return out


def write_input(path: Path, events) -> Path:
    path.write_text("".join(json.dumps({k: v for k, v in e.to_dict().items() if k != "id"}) + "\n"
                            for e in events), encoding="utf-8")
    return path


def write_config(tmp: Path) -> Path:
    text = SIM_CONFIG.read_text(encoding="utf-8")
    text = re.sub(r'(?m)^state_dir = "[^"]*"', f'state_dir = "{tmp / "state"}"', text)
    path = tmp / "table.toml"
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------
# Storage faults: the daemon as a process, its file size limited


def _limit_fsize(limit: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    return apply


def run_on_failing_disk(tmp: Path, events, *, lift_after: int | None = None,
                        timeout: float = 60.0) -> tuple[list[dict], list[Event], str]:
    """``dealerbox run --input --decisions`` with every journal write failing;
    with *lift_after*, space comes back after that many decisions. Returns the
    decisions printed, the events in the journal at the end and stderr."""
    config = write_config(tmp)
    infile = write_input(tmp / "in.jsonl", events)
    want = len(reference_decisions(events))
    proc = subprocess.Popen([sys.executable, "-m", "dealerbox.cli", "run", "--config", str(config),
                             "--decisions", "--input", str(infile), "--input-pace", "0.002"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_limit_fsize(0), env={**os.environ, "PYTHONPATH": str(REPO)})
    out: list[str] = []
    err: list[str] = []
    import threading

    readers = [threading.Thread(target=lambda s=s, sink=sink: sink.extend(
        line.decode("utf-8", "replace") for line in s), daemon=True)
        for s, sink in ((proc.stdout, out), (proc.stderr, err))]
    for t in readers:
        t.start()
    jdir = tmp / "state" / "journal"
    end = time.monotonic() + timeout
    try:
        lifted = lift_after is None
        while time.monotonic() < end and proc.poll() is None:
            if not lifted and len(out) >= lift_after:
                resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
                lifted = True
            if len(out) >= want and (lift_after is None or _journaled(jdir) >= len(events)):
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for t in readers:
            t.join(timeout=10)
        proc.stdout.close()
        proc.stderr.close()
    decisions = [json.loads(line) for line in out if line.startswith("{")]
    from dealerbox.service.journal import read_entries

    return decisions, [e.event for e in read_entries(jdir, skip_damaged=True)], "".join(err)


def _journaled(jdir: Path) -> int:
    count = 0
    for _d, path in journal_files(jdir):
        try:
            count += path.read_bytes().count(b',"event":{')
        except FileNotFoundError:
            pass
    return count


def _plain(decisions) -> list[dict]:
    return [{k: v for k, v in d.items() if k != "seq"} for d in decisions]


def storage_figures() -> dict:
    events = session()
    ref = reference_decisions(events)
    with tempfile.TemporaryDirectory(prefix="dealerbox-rel-") as tmp:
        decisions, _journal, _err = run_on_failing_disk(Path(tmp), events)
    shown = _plain(decisions)
    kept = sum(a == b for a, b in zip(shown, ref))
    with tempfile.TemporaryDirectory(prefix="dealerbox-rel-") as tmp:
        decisions2, journal2, _err2 = run_on_failing_disk(Path(tmp), events, lift_after=len(ref) // 2)
    on_disk = [e.to_dict() for e in journal2]
    lost = sum(1 for e in events if e.to_dict() not in on_disk)
    return {"storage_full_decisions_kept_pct": round(100.0 * kept / len(ref), 2),
            "storage_events_lost_after_recovery": lost}


# --------------------------------------------------------------------------
# Damaged journals


def build_journal(directory: Path, events, *, days: int = 3) -> None:
    """The journal a healthy daemon writes for *events*: event lines and
    decision lines, spread over *days* day files."""
    clock = [T0]
    engine = HandEngine(PROFILE)
    messages = load_messages("en")
    per_day = max(1, len(events) // days)
    with Journal(directory, clock=lambda: clock[0], sync="none") as j:
        for i, e in enumerate(events):
            clock[0] = T0 + (i // per_day) * DAY + i
            seq = j.append(e)
            for d in engine.feed(Event.from_dict(e.to_dict())):
                dd = decision_to_dict(d, messages)
                dd["seq"], dd["id"] = seq, e.id
                j.append_decision(dd)


def _all_lines(directory: Path) -> list[tuple[str, int, bytes]]:
    out = []
    for _d, path in journal_files(directory):
        for n, raw in enumerate(path.read_bytes().split(b"\n")[:-1], 1):
            out.append((path.name, n, raw))
    return out


def damage_journal(directory: Path, kind: str, rng: random.Random) -> set[bytes]:
    """Damage the journal in *directory* as *kind* says; return the original
    lines the damage touched (removed, changed or cut)."""
    files = [p for _d, p in journal_files(directory)]
    lines = _all_lines(directory)
    if kind == "file_gone":
        path = rng.choice(files)
        gone = {raw for name, _n, raw in lines if name == path.name}
        path.unlink()
        return gone
    if kind == "torn":
        path = files[-1]
        data = path.read_bytes()
        last = data.rstrip(b"\n").rsplit(b"\n", 1)[-1]
        cut = rng.randint(1, len(last))
        path.write_bytes(data[:len(data) - 1 - cut])
        return {last}
    # The line to act on; a flip spares the very last line, which nothing on
    # this disk vouches for (the head kept elsewhere does; see verify --head).
    pool = lines[:-1] if kind == "flipped" else lines
    name, n, raw = rng.choice(pool)
    path = directory / name
    file_lines = path.read_bytes().split(b"\n")[:-1]
    touched: set[bytes] = set()
    if kind == "flipped":
        i = rng.randrange(len(raw))
        changed = raw[:i] + bytes([raw[i] ^ (1 << rng.randrange(8))]) + raw[i + 1:]
        file_lines[n - 1] = changed
        touched.add(raw)
    elif kind == "removed":
        del file_lines[n - 1]
        touched.add(raw)
    elif kind == "inserted":
        forged = re.sub(rb'"t":([0-9.]+)', lambda m: b'"t":' + str(float(m[1]) + 0.5).encode(), raw, count=1)
        if forged == raw:
            forged = raw.replace(b'"wall":"', b'"wall":"1', 1)
        file_lines.insert(rng.randint(0, len(file_lines)), forged)
    elif kind == "duplicated":
        file_lines.insert(rng.randint(n - 1, len(file_lines)), raw)
    elif kind == "appended":
        path = files[-1]
        file_lines = path.read_bytes().split(b"\n")[:-1]
        last = json.loads(file_lines[-1])
        forged = {"seq": last["seq"] + 1, "prev": "%064x" % rng.getrandbits(256),
                  "wall": last["wall"], "event": {"t": 999.0, "ev": "shoe", "card": "Ah"}}
        file_lines.append(json.dumps(forged, separators=(",", ":")).encode())
    else:
        raise ValueError(kind)
    path.write_bytes(b"".join(line + b"\n" for line in file_lines))
    return touched


def _good_open_hand(lines, touched) -> list[dict]:
    """The open hand's events among the lines the damage did not touch."""
    good = [json.loads(raw) for _name, _n, raw in lines if raw not in touched]
    events = [g["event"] for g in good if "event" in g]
    starts = [i for i, e in enumerate(events) if e["ev"] == "new_hand"]
    return events[starts[-1]:] if starts else []


def start_daemon_on(config, directory: Path):
    """The daemon's start path on *directory* without its devices: open the
    journal, replay the open hand, start the writer, record the damage, stop."""
    from dealerbox.service.daemon import Daemon

    daemon = Daemon(dataclasses.replace(config, state_dir=directory.parent))
    try:
        daemon._recover()
        daemon.journal.start_writer()
        daemon._record_damage()
        return daemon
    finally:
        daemon.journal.close()


def check_damaged_start(config, template: Path, work: Path, kind: str, rng: random.Random) -> list[str]:
    """Copy *template*, damage it, start on it; return what went wrong (nothing: [])."""
    from dealerbox.service.journal import checked_open_hand

    directory = work / "state" / "journal"
    if directory.parent.exists():
        shutil.rmtree(directory.parent)
    shutil.copytree(template, directory)
    head = verify(directory).head
    lines = _all_lines(directory)
    touched = damage_journal(directory, kind, rng)
    failures = []
    report = verify(directory, expected_head=head)
    if report.ok and report.torn is None:
        failures.append(f"{kind}: verify named nothing")
    expected = _good_open_hand(lines, touched)
    replayed = [e.event.to_dict() for e in checked_open_hand(directory)]
    try:
        daemon = start_daemon_on(config, directory)
    except Exception as exc:  # the figure: any exception is a failed start
        return failures + [f"{kind}: the start failed: {type(exc).__name__}: {exc}"]
    ref = HandEngine(PROFILE)
    for e in expected:
        ref.feed(Event.from_dict(e))
    if replayed != expected:
        failures.append(f"{kind}: replayed {len(replayed)} events, not the {len(expected)} good ones")
    elif (daemon.engine.phase, daemon.engine.decision) != (ref.phase, ref.decision):
        failures.append(f"{kind}: the recovered state differs from the good lines'")
    after = {raw for _name, _n, raw in _all_lines(directory)}
    qdir = directory / "quarantine"
    if qdir.is_dir():
        for path in qdir.glob("*.bin"):
            after.update(path.read_bytes().split(b"\n"))
    missing = [raw for _name, _n, raw in lines if raw not in touched and raw not in after]
    if missing:
        failures.append(f"{kind}: {len(missing)} good line(s) gone, e.g. {missing[0][:80]!r}")
    return failures


def damage_figures(count: int = DAMAGED_JOURNALS) -> tuple[dict, list[str]]:
    from dealerbox.service.config import load_config

    rng = random.Random(1212)
    failures: list[str] = []
    started = 0
    with tempfile.TemporaryDirectory(prefix="dealerbox-rel-") as tmp:
        tmp = Path(tmp)
        config = load_config(write_config(tmp), check_devices=False)
        template = tmp / "template"
        build_journal(template, session(seed=9, hands=6), days=3)
        for i in range(count):
            kind = DAMAGE_KINDS[i % len(DAMAGE_KINDS)]
            problems = check_damaged_start(config, template, tmp / "work", kind, rng)
            started += not problems
            failures += problems
    return {"journal_damage_start_pct": round(100.0 * started / count, 2),
            "journal_damaged_journals": count}, failures


# --------------------------------------------------------------------------
# Fuzzing the event reader


_SEEDS = [
    b'{"t": 0.0, "ev": "new_hand", "players": 6}',
    b'{"t": 1.5, "ev": "shoe", "card": "Ah"}',
    b'{"t": 2.0, "ev": "board_on", "uid": "04A3C6CAE26180"}',
    b'{"t": 2.5, "ev": "zone_on", "card": "Kd", "zone": "seat3"}',
    b'{"t": 3.0, "ev": "button", "name": "exposed"}',
    b'{"t": 3.5, "ev": "reader_fault", "reader": "shoe"}',
    b'{"t": 4.0, "ev": "tick"}',
    b'{"t": 4.5, "ev": "new_hand", "players": 3, "hole_cards": 4, "seats": [1, 4, 7]}',
]
_NASTY = [b"1" * 401, b"-0", b"1e999", b"NaN", b"Infinity", b"[" * 5000, b'"' + b"A" * 5000 + b'"',
          b"null", b"true", b"{}", b"[]", b'"\\ud800"', b"\xff\xfe", b"\xef\xbb\xbf", b"\x00",
          b"04A3C", b"-1", b"3.5", b'{"t":', b"\n", b"\r\n", b"\xc3\x28", b"12345678901234567890"]


def fuzz_input(rng: random.Random) -> bytes:
    """One generated event file: a few lines, each random, mutated or nasty."""
    lines = []
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        if choice < 0.15:
            line = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 60)))
        elif choice < 0.85:
            line = bytearray(rng.choice(_SEEDS))
            for _ in range(rng.randint(1, 4)):
                op = rng.random()
                i = rng.randrange(len(line) + 1)
                if op < 0.3 and line:
                    line[min(i, len(line) - 1)] ^= 1 << rng.randrange(8)
                elif op < 0.6:
                    line[i:i] = rng.choice(_NASTY)
                elif op < 0.8 and line:
                    del line[i:i + rng.randint(1, 8)]
                else:
                    # A value swapped for a nasty one.
                    line = bytearray(re.sub(rb'(:\s*)("[^"]*"|[-0-9.eE]+|\[[^\]]*\])',
                                            lambda m: m[1] + rng.choice(_NASTY), bytes(line), count=1))
            line = bytes(line)
        else:
            # Now and then longer than the line cap (64 KiB).
            line = (rng.choice(_NASTY) * rng.choice((1, 1, 2, 20000)))[:100_000]
        lines.append(line)
    data = b"\n".join(lines) + rng.choice((b"\n", b""))
    if rng.random() < 0.05:
        data = b"\xef\xbb\xbf" + data
    return data


def fuzz_figures(count: int = FUZZ_INPUTS, processes: int = FUZZ_PROCESSES) -> tuple[dict, list[str]]:
    rng = random.Random(1213)
    tracebacks: list[str] = []
    with tempfile.TemporaryDirectory(prefix="dealerbox-fuzz-") as tmp:
        path = Path(tmp) / "fuzz.jsonl"
        engine = HandEngine(PROFILE)
        for i in range(count):
            if i % 1000 == 0:
                engine = HandEngine(PROFILE)
            try:
                # EventFile reads its file through stream_events: the same reader, minus the disk.
                for event in stream_events(io.BytesIO(fuzz_input(rng)), "fuzz.jsonl"):
                    engine.feed(event)
            except DealerboxError as exc:
                if "\n" in str(exc) or len(str(exc)) > 400:
                    tracebacks.append(f"input {i}: an error of {len(str(exc))} characters")
            except Exception as exc:  # the figure: what escapes is a traceback
                tracebacks.append(f"input {i}: {type(exc).__name__}: {exc!s:.200}")
        for i in range(processes):
            path.write_bytes(fuzz_input(rng))
            proc = subprocess.run([sys.executable, "-m", "dealerbox.cli", "replay", str(path)], cwd=REPO,
                                  capture_output=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
            err = proc.stderr.decode("utf-8", "replace")
            if proc.returncode not in (0, 2) or "Traceback" in err or err.count("\n") > 1:
                tracebacks.append(f"process {i}: exit {proc.returncode}: {err[-300:]}")
    return {"fuzz_tracebacks": len(tracebacks), "fuzz_inputs": count + processes}, tracebacks


def run() -> dict:
    figures = storage_figures()
    damage, damage_failures = damage_figures()
    figures.update(damage)
    fuzz, fuzz_failures = fuzz_figures()
    figures.update(fuzz)
    for line in (damage_failures + fuzz_failures)[:10]:
        print(f"   failure: {line}")
    print("   goals: storage_full_decisions_kept_pct 100, storage_events_lost_after_recovery 0, "
          "journal_damage_start_pct 100 (>= 500 journals), fuzz_tracebacks 0 (>= 100,000 inputs)")
    return figures


if __name__ == "__main__":
    print(run())
