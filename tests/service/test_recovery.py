"""Crash recovery and signals of ``dealerbox run``, each daemon a real process.

The reference for every check is the uninterrupted run, computed in this
process: the same events fed through :class:`dealerbox.rules.engine.HandEngine`
(profile tda-2019), with the daemon's one filter applied (a ``tick`` while no
grace period runs is not journaled and judges nothing). Each printed decision
carries the input ``id`` of the event that caused it, so it is compared with
the reference decision of that very event, and the journal ``seq`` of that
event's line, checked against the journal. (The journal also records the
decisions given, as lines of their own; those are checked too.)

The crash test is the issue's own: a simulated session, the daemon killed with
SIGKILL at 50 random moments (seeded) and restarted each time. Kills land in
the middle of feeding events and during start-up (journal open, recovery);
a few times a torn last line is left in the journal, as a power cut in the
middle of a write would leave it.

The tests send a signal only once the daemon's handlers are installed (read
from /proc/PID/status), so each test checks what the handler does, not a race
with start-up; ``test_a_sighup_right_after_ready_reloads_instead_of_killing``
checks that race on its own: the handlers must be in place before READY=1.
Every wait is bounded; nothing asserts on durations.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dealerbox.service.daemon import read_input_events
from dealerbox.rules.engine import HandEngine, decision_to_dict
from dealerbox.domain.events import Event
from dealerbox.service.journal import read_decisions, read_entries, verify
from dealerbox.domain.messages import load_messages
from hardware_sim.script import HandScript

REPO = Path(__file__).resolve().parents[2]
SIM_CONFIG = REPO / "firmware_config" / "tables" / "sim.toml"
PROFILE = "tda-2019"

KILLS = 50
CRASH_PACE = 0.004          # seconds between input events in the crash test
TIMEOUT = 30.0              # the bound on every single wait

RECOVERED = re.compile(r"recovered the open hand from the journal: (\d+) events replayed, "
                       r"phase (\w+), verdict (\w+)")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc and sends POSIX signals")


# --------------------------------------------------------------------------
# The session and the uninterrupted reference


def _drop_idle_ticks(events: list[dict]) -> list[dict]:
    """Leave out the ticks the daemon would not journal (no grace period running),
    so that the journal of a good run holds every input event."""
    engine = HandEngine(PROFILE)
    kept = []
    for d in events:
        if d["ev"] == "tick" and not engine.has_deadline:
            continue
        engine.feed(Event.from_dict(d))
        kept.append(d)
    return kept


def crash_session() -> list[dict]:
    """Twelve hands at one table, most of them with an irregularity the dealer corrects."""
    s = HandScript(seed=2026)
    s.full_hand(6)
    # An exposed card in the deal: it becomes the burn, the flop comes without one.
    s.new_hand(6).deal(5).button("exposed").deal(7).take().button("ack")
    s.round_done().flop(burn=False).round_done().turn().round_done().river().round_done().hand_over()
    # An extra card after the deal, then a premature flop card; the stub is reshuffled.
    s.new_hand(6).deal()
    s.draw()
    early = s.draw()
    s.on(early).off(early).put_back(early, top=False).button("ack").reshuffle_stub()
    s.tick(1.0)
    s.round_done().flop(burn=False).round_done().turn().round_done().river().round_done().hand_over()
    # A four-card flop spread on the board.
    s.new_hand(8).deal().round_done()
    s.draw()
    four = [s.draw() for _ in range(4)]
    for c in four:
        s.on(c)
    s.button("ack").off(four[2]).button("ack")
    s.round_done().turn(burn=False).round_done().river().round_done().hand_over()
    # A double burn before the flop; the second burn goes back on top.
    s.new_hand(6).deal().round_done()
    s.draw()
    second = s.draw()
    s.flop(burn=False).put_back(second).button("ack").round_done().take(second)
    s.turn(burn=False).round_done().river().round_done().hand_over()
    # A missed burn on the flop, dealt one by one.
    s.new_hand(5).deal().round_done()
    first = s.draw()
    s.on(first).off(first)
    for _ in range(3):
        s.on(s.draw())
    s.round_done().turn().round_done().river().round_done().hand_over()
    # Two extra cards: after the grace period it is a misdeal, and the hand is dealt again.
    s.new_hand(5).deal()
    s.draw()
    s.take().tick(1.0).tick(1.0).tick(1.5)
    s.full_hand(5)
    # A card exposed early in the deal: misdeal, then the hand again.
    s.new_hand(6).deal(1).button("exposed").take()
    s.full_hand(6, spread=True)
    # A boxed card in the deal.
    s.new_hand(6).deal(3)
    s.draw()
    s.button("boxed").take().deal(8)
    s.round_done().flop().round_done().turn().round_done().river().round_done().hand_over()
    # A premature turn card, set aside and reshuffled in for the river.
    s.new_hand(5).deal().round_done().flop()
    s.draw()
    early = s.draw()
    s.on(early).off(early).round_done().turn().round_done().put_back(early, top=False).reshuffle_stub()
    s.river(burn=False).round_done().hand_over()
    s.full_hand(10, spread=True)
    # Left open: the last hand stops in the middle of a correction.
    s.new_hand(4).deal()
    s.button("exposed")
    return _drop_idle_ticks([e for e in s.events if "expect" not in e])


def write_input(path: Path, events: list[dict]) -> list[Event]:
    """Write an event file without ids and read it back as ``dealerbox run --input`` does."""
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return list(read_input_events(path))


class Reference:
    """What an uninterrupted daemon journals and prints for *events*.

    ``journaled`` are the events in journal order; ``decisions[id]`` the printed
    decisions caused by the event with that id (with the ``id`` the daemon adds;
    its ``seq`` is a journal line number, checked against the journal instead,
    see :func:`plain` and :func:`check_seqs`); ``states[k]`` is ``(phase,
    verdict, open-hand length)`` after the first *k* journaled events.
    """

    def __init__(self, events: list[Event], lang: str = "en"):
        engine = HandEngine(PROFILE)
        messages = load_messages(lang)
        self.journaled: list[Event] = []
        self.decisions: dict = {}
        self.states = [(engine.phase, engine.decision.verdict, 0)]
        open_len = 0
        for event in events:
            event = Event.from_dict(event.to_dict())
            if event.ev == "tick" and not engine.has_deadline:
                continue
            self.journaled.append(event)
            out = []
            for d in engine.feed(event):
                dd = decision_to_dict(d, messages)
                dd["id"] = event.id
                out.append(dd)
            self.decisions[event.id] = out
            open_len = 1 if event.ev == "new_hand" else open_len + bool(open_len)
            self.states.append((engine.phase, engine.decision.verdict, open_len))

    def decisions_of(self, events) -> list[dict]:
        return [d for e in events for d in self.decisions[e.id]]

    def all_decisions(self) -> list[dict]:
        return self.decisions_of(self.journaled)


def plain(decisions) -> list[dict]:
    """Decisions without their ``seq`` (a journal line number, checked on its own)."""
    return [{k: v for k, v in d.items() if k != "seq"} for d in decisions]


def check_seqs(decisions, entries) -> None:
    """Each decision names, in ``seq``, the journal line of the event that caused it."""
    seq_of = {e.event.id: e.seq for e in entries}
    for d in decisions:
        assert d["seq"] == seq_of.get(d["id"]), f"seq {d['seq']} is not the line of event {d['id']}: {d}"


# --------------------------------------------------------------------------
# The daemon as a process


def write_config(tmp_path: Path, *, language: str = "en", name: str = "table.toml") -> Path:
    """The shipped all-simulated table, its state under *tmp_path* (never in the checkout)."""
    text = SIM_CONFIG.read_text(encoding="utf-8")
    text, n = re.subn(r'(?m)^state_dir = "[^"]*"', f'state_dir = "{tmp_path / "state"}"', text)
    assert n == 1
    text, n = re.subn(r'(?m)^language = "\w+"', f'language = "{language}"', text)
    assert n == 1
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def wait_for(predicate, what: str, timeout: float = TIMEOUT, alive=None):
    """Poll *predicate* until true; fail after *timeout* or when *alive* says the process died."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if alive is not None and not alive():
            raise AssertionError(f"the daemon exited while waiting for {what}")
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.002)


def caught_signals(pid: int) -> int:
    """The mask of signals the process has handlers for (SigCgt in /proc/PID/status)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("SigCgt:"):
                    return int(line.split()[1], 16)
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def handles(pid: int, *signals) -> bool:
    mask = caught_signals(pid)
    return all(mask >> (s - 1) & 1 for s in signals)


class DaemonProcess:
    """``python -m dealerbox.cli run ... --decisions`` with its output collected by two threads."""

    def __init__(self, config: Path, input_path: Path | None = None, pace: float = 0.0, env=None, stdout=None):
        """*stdout*: a file descriptor the daemon writes its decisions to, read by the
        test itself (:meth:`decisions` is then empty); by default a pipe read here."""
        cmd = [sys.executable, "-m", "dealerbox.cli", "run", "--config", str(config), "--decisions"]
        if input_path is not None:
            cmd += ["--input", str(input_path), "--input-pace", str(pace)]
        environ = dict(os.environ)
        environ.pop("NOTIFY_SOCKET", None)
        environ.pop("WATCHDOG_USEC", None)
        environ.update(env or {})
        self.out: list[str] = []
        self.err: list[str] = []
        self.torn_out: list[str] = []
        self.proc = subprocess.Popen(cmd, cwd=REPO, env=environ, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE if stdout is None else stdout, stderr=subprocess.PIPE)
        self.pid = self.proc.pid
        self._readers = [threading.Thread(target=self._collect, args=(self.proc.stderr, self.err), daemon=True)]
        if stdout is None:
            self._readers.append(threading.Thread(target=self._collect, args=(self.proc.stdout, self.out),
                                                  daemon=True))
        for t in self._readers:
            t.start()

    def _collect(self, stream, sink: list[str]) -> None:
        for raw in stream:
            line = raw.decode("utf-8", errors="replace")
            if line.endswith("\n"):
                sink.append(line[:-1])
            else:               # cut short by the kill: never a whole decision
                self.torn_out.append(line)
        stream.close()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_lines(self, text: str) -> list[str]:
        return [line for line in list(self.err) if text in line]

    def wait_log(self, text: str, count: int = 1, timeout: float = TIMEOUT) -> str:
        wait_for(lambda: len(self.log_lines(text)) >= count, f"{text!r} in the log", timeout, alive=self.alive)
        return self.log_lines(text)[count - 1]

    def wait_decisions(self, count: int) -> None:
        """Wait until *count* decisions are printed: then the engine loop is idle, and a
        stop cannot race with it (see test_stopping_while_an_event_is_judged_loses_nothing)."""
        wait_for(lambda: len(self.out) >= count, f"{count} decisions printed", alive=self.alive)

    def wait_handlers(self) -> None:
        wait_for(lambda: handles(self.pid, signal.SIGTERM, signal.SIGHUP, signal.SIGINT),
                 "the signal handlers", alive=self.alive)

    def send(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def kill(self) -> None:
        if self.alive():
            self.proc.kill()

    def wait(self, timeout: float = TIMEOUT) -> int:
        """The exit status, once the process and both output readers are done."""
        code = self.proc.wait(timeout=timeout)
        for t in self._readers:
            t.join(timeout=timeout)
            assert not t.is_alive(), "the daemon's output did not end"
        return code

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.wait_handlers()
        self.send(sig)
        return self.wait()

    def decisions(self) -> list[dict]:
        return [json.loads(line) for line in list(self.out)]

    def close(self) -> None:
        """Kill and reap the process if it still runs (the tests' finally)."""
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=TIMEOUT)
        finally:
            for stream in (self.proc.stdout, self.proc.stderr):
                try:
                    if stream is not None:
                        stream.close()
                except Exception:
                    pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _lines(journal_dir: Path) -> list[bytes]:
    lines = []
    for path in sorted(journal_dir.glob("journal-*.jsonl")):
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        lines += data[: data.rfind(b"\n") + 1].splitlines()
    return lines


def journal_lines(journal_dir: Path) -> int:
    """Complete event lines in the journal (a cheap progress count while the daemon writes)."""
    return sum(b',"event":{' in line for line in _lines(journal_dir))


def journal_head(journal_dir: Path) -> int:
    """The seq of the last complete line, event or decision (0 when there is none)."""
    lines = _lines(journal_dir)
    return json.loads(lines[-1])["seq"] if lines else 0


def journaled_decisions(journal_dir: Path) -> list[dict]:
    return [d for _seq, _wall, d in read_decisions(journal_dir)] if journal_dir.exists() else []


def journal(journal_dir: Path):
    return list(read_entries(journal_dir)) if journal_dir.exists() else []


def same_events(entries, events) -> bool:
    return [e.event.to_dict() for e in entries] == [e.to_dict() for e in events]


def cli_verify(journal_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dealerbox.cli", "journal", "verify", str(journal_dir)],
                          cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT)


def no_errors_logged(d: DaemonProcess, *, expected: str | None = None) -> None:
    """Nothing went wrong in the daemon but the *expected* error."""
    bad = [line for line in d.err if (line.startswith(("ERROR", "CRITICAL")) or "Traceback" in line)
           and not (expected and expected in line)]
    assert not bad, "\n".join(bad)


# --------------------------------------------------------------------------
# The crash test


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    path = tmp_path_factory.mktemp("session") / "session.jsonl"
    events = write_input(path, crash_session())
    return path, events, Reference(events)


def test_the_session_is_a_long_one_with_irregularities(session):
    _path, events, ref = session
    assert 300 <= len(events) <= 600
    # Every input event is journaled by a good run; each has an id of its own.
    assert ref.journaled == events
    assert len({e.id for e in events}) == len(events)
    raised = {d["irregularity"] for d in ref.all_decisions()} - {None}
    assert {"EXPOSED_DEAL", "EXTRA_CARD", "PREMATURE_FLOP", "FOUR_CARD_FLOP", "DOUBLE_BURN",
            "MISSED_BURN", "EXTRA_CARDS", "EXPOSED_EARLY", "BOXED_CARD", "PREMATURE_TURN"} <= raised
    assert sum(e.ev == "new_hand" for e in events) == 14


def test_an_uninterrupted_run_prints_the_reference(session, tmp_path):
    path, events, ref = session
    config = write_config(tmp_path)
    jdir = tmp_path / "state" / "journal"
    with DaemonProcess(config, path) as d:
        wait_for(lambda: journal_lines(jdir) >= len(events), "the whole input journaled", alive=d.alive)
        d.wait_decisions(len(ref.all_decisions()))
        assert d.stop() == 0
    no_errors_logged(d)
    entries = journal(jdir)
    assert plain(d.decisions()) == ref.all_decisions()
    check_seqs(d.decisions(), entries)
    assert same_events(entries, ref.journaled)
    # The journal holds the decisions as given, each after its event's line.
    assert journaled_decisions(jdir) == d.decisions()
    assert verify(jdir).lines == len(events) + len(ref.all_decisions())
    assert not d.log_lines("recovered the open hand")


def _tear_the_next_line(jdir: Path, next_seq: int, rng: random.Random) -> None:
    """Leave the start of an unfinished journal line, as a power cut mid-write does."""
    newest = sorted(jdir.glob("journal-*.jsonl"))[-1]
    partial = f'{{"seq":{next_seq},"prev":"{"%064x" % rng.getrandbits(256)}","wall":"2026-'
    with open(newest, "ab") as fh:
        fh.write(partial[: rng.randint(5, len(partial))].encode("ascii"))


def _check_run(k, d: DaemonProcess, before, after, ref: Reference, *, finished: bool) -> None:
    """One run between two kills: it journaled the next events in order, printed the
    reference decisions for them, and recovered the reference state."""
    where = f"run {k}"
    assert len(d.torn_out) <= (0 if finished else 1), f"{where}: decision lines cut short: {d.torn_out}"
    # (a) The journal only grows, by the next input events in order.
    assert len(after) >= len(before), where
    assert [(e.seq, e.event.to_dict()) for e in after[:len(before)]] == \
           [(e.seq, e.event.to_dict()) for e in before], f"{where}: the journal was rewritten"
    new = after[len(before):]
    seqs = [e.seq for e in after]
    assert seqs == sorted(set(seqs)), f"{where}: seq repeats or goes back"
    assert same_events(new, ref.journaled[len(before):len(after)]), f"{where}: not the next input events"
    # (b) The decisions printed: first what recovery gives out, the last decisions of
    # the last event on record that a kill kept from the journal (and perhaps from
    # stdout); then the reference decisions of exactly the new events.
    expected = ref.decisions_of(e.event for e in new)
    on_disk = {e.event.id for e in after}
    check_seqs([x for x in d.decisions() if x["id"] in on_disk], after)
    printed = plain(d.decisions())
    owed_id = before[-1].event.id if before else None
    owed = ref.decisions[owed_id] if before else []
    recovered = list(itertools.takewhile(lambda x: x["id"] == owed_id, printed))
    assert recovered == owed[len(owed) - len(recovered):], f"{where}: recovery gave out {recovered}"
    printed = printed[len(recovered):]
    if finished:
        assert printed == expected, where
    else:
        # The panel shows before the journal's writer commits: a kill can leave
        # decisions printed for the next events, whose lines were not written.
        # They are the reference decisions of those events (fed again next run).
        ahead = printed[len(expected):]
        assert ahead == ref.decisions_of(ref.journaled[len(after):])[:len(ahead)], f"{where}: {ahead}"
        printed = printed[:len(expected)]
        # A kill between the journal append and the print loses only the last
        # event's decision(s) from stdout: the next run recovers that state.
        last = len(ref.decisions[new[-1].event.id]) if new else 0
        assert printed == expected[:len(printed)], f"{where}: a decision differs from the reference"
        if d.torn_out:
            # The kill fell inside the print: what got out is the start of the next one
            # (or of a decision recovery was giving out).
            nexts = owed[len(owed) - len(recovered):] if not printed else []
            if len(printed) < len(expected):
                nexts.append(expected[len(printed)])
            torn = re.sub(r', "seq": \d+', "", d.torn_out[0])
            assert any(line.startswith(torn) or line.startswith(torn.rsplit(", ", 1)[0])
                       for line in (json.dumps(x, ensure_ascii=False) for x in nexts)), f"{where}: {d.torn_out}"
        assert len(printed) + len(d.torn_out) >= len(expected) - last, f"{where}: decisions missing"
    # (c) The recovered state is the reference state after the journaled prefix.
    phase, verdict, open_len = ref.states[len(before)]
    lines = d.log_lines("recovered the open hand")
    if lines:
        m = RECOVERED.search(lines[0])
        assert m, lines[0]
        assert (int(m[1]), m[2], m[3]) == (open_len, phase, verdict), f"{where}: {lines[0]}"
    elif d.log_lines("dealerbox started"):
        assert open_len == 0, f"{where}: started without recovering the open hand"
    no_errors_logged(d)


def _printed_keys(d: DaemonProcess, ref: Reference) -> set:
    """Each decision *d* printed whole, as (event id, its index among that event's decisions)."""
    return {(x["id"], ref.decisions[x["id"]].index(y)) for x, y in zip(d.decisions(), plain(d.decisions()))}


def test_fifty_sigkills_lose_no_event_and_change_no_decision(session, tmp_path):
    path, events, ref = session
    n = len(events)
    printed: set = set()
    config = write_config(tmp_path)
    jdir = tmp_path / "state" / "journal"
    rng = random.Random(20261122)
    mid_session = torn = startup_kills = 0
    torn_left = False
    for k in range(KILLS):
        before = journal(jdir)
        with DaemonProcess(config, path, CRASH_PACE) as d:
            if rng.random() < 0.12:
                # Somewhere in start-up: opening the journal, cutting a torn line, recovering.
                startup_kills += 1
                time.sleep(rng.uniform(0.0, 0.8))
            else:
                remaining, left = n - len(before), KILLS - k
                target = min(n, len(before) + rng.randint(0, 2 * remaining // left))
                d.wait_log("dealerbox started")
                wait_for(lambda: journal_lines(jdir) >= target, f"{target} events journaled", alive=d.alive)
                time.sleep(rng.uniform(0.0, 2 * CRASH_PACE))   # anywhere inside the next event
            assert d.alive(), f"run {k} ended by itself: {d.err[-5:]}"
            d.kill()
            assert d.wait() == -signal.SIGKILL
        after = journal(jdir)
        mid_session += 0 < len(after) < n
        _check_run(k, d, before, after, ref, finished=False)
        printed |= _printed_keys(d, ref)
        if torn_left:
            # The first run to open the journal cuts the torn line off (and says so).
            if d.log_lines("torn last line"):
                torn_left = False
            else:
                assert not d.log_lines("dealerbox started"), f"run {k} did not cut the torn line off"
        if before and len(before) < len(after) and k % 9 == 4:
            # As a power cut in the middle of a write would: the next run must cut it
            # off, not count it as tampering, and journal the event again.
            torn += 1
            torn_left = True
            _tear_the_next_line(jdir, len(after) + 1, rng)
            report = verify(jdir)
            assert report.ok and report.torn is not None
            assert journal(jdir) == after
            if torn == 1:
                proc = cli_verify(jdir)
                assert proc.returncode == 0, proc.stdout + proc.stderr
                assert "torn last line" in proc.stdout
    # The last run finishes the input and is stopped cleanly.
    before = journal(jdir)
    with DaemonProcess(config, path, CRASH_PACE) as d:
        wait_for(lambda: journal_lines(jdir) >= n, "the whole input journaled", alive=d.alive)
        d.wait_decisions(len(ref.decisions_of(ref.journaled[len(before):])))
        assert d.stop() == 0
    after = journal(jdir)
    _check_run(KILLS, d, before, after, ref, finished=True)
    printed |= _printed_keys(d, ref)

    # No event lost or twice: the journal is the input, each id once, in order.
    assert same_events(after, ref.journaled)
    assert [e.event.id for e in after] == [e.id for e in events]
    assert len({e.event.id for e in after}) == n
    # The decisions on record are the reference decisions, each once: one a kill kept
    # from the journal was written by the next start's recovery.
    on_record = journaled_decisions(jdir)
    check_seqs(on_record, after)
    keys = [(x["id"], ref.decisions[x["id"]].index(y)) for x, y in zip(on_record, plain(on_record))]
    every = {(e.id, i) for e in ref.journaled for i in range(len(ref.decisions[e.id]))}
    assert len(set(keys)) == len(keys), "a decision is on record twice"
    assert set(keys) == every
    # Over fifty kills `run --decisions` missed no decision: each one was printed whole
    # by some run (a kill may make the next run print one again).
    assert every - printed == set()
    # The chain holds: a torn line cut off on open is not tampering.
    report = verify(jdir)
    assert report.ok, [str(p) for p in report.problems]
    assert report.torn is None and report.lines == n + len(on_record)
    proc = cli_verify(jdir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"journal ok: {report.lines} lines" in proc.stdout
    # The kills were spread over the session, not bunched at its end.
    assert torn >= 3 and startup_kills >= 1
    assert mid_session >= KILLS // 2, mid_session


# --------------------------------------------------------------------------
# Restart in the middle of a hand


def _two_part_session() -> tuple[list[dict], list[dict]]:
    """A clean hand, then a hand cut off just after an exposed card; and the whole of it."""
    s = HandScript(seed=7)
    s.full_hand(4)
    s.new_hand(6).deal(5).button("exposed").deal(2)
    part = [dict(e) for e in s.events]
    s.deal(5).take().button("ack")
    s.round_done().flop(burn=False).round_done().turn().round_done().river().round_done().hand_over()
    s.full_hand(3)
    return part, [dict(e) for e in s.events]


def test_a_restart_mid_hand_comes_back_in_the_state_it_left(tmp_path):
    part, whole = _two_part_session()
    part_events = write_input(tmp_path / "part.jsonl", part)
    whole_events = write_input(tmp_path / "whole.jsonl", whole)
    ref = Reference(whole_events)
    ref_part = Reference(part_events)
    config = write_config(tmp_path)
    jdir = tmp_path / "state" / "journal"

    with DaemonProcess(config, tmp_path / "part.jsonl") as first:
        wait_for(lambda: journal_lines(jdir) >= len(part), "the first part journaled", alive=first.alive)
        first.wait_decisions(len(ref_part.all_decisions()))
        assert first.stop() == 0
    assert plain(first.decisions()) == ref_part.all_decisions()
    last = first.decisions()[-1]
    assert (last["verdict"], last["irregularity"], last["phase"]) == ("correct", "EXPOSED_DEAL", "deal")

    with DaemonProcess(config, tmp_path / "whole.jsonl") as second:
        wait_for(lambda: journal_lines(jdir) >= len(whole), "the rest journaled", alive=second.alive)
        second.wait_decisions(len(ref.decisions_of(ref.journaled[len(part):])))
        assert second.stop() == 0
    # It recovered the open hand in the state the first run left it in...
    m = RECOVERED.search(second.wait_log("recovered the open hand"))
    open_hand = len(part) - max(i for i, e in enumerate(part) if e["ev"] == "new_hand")
    assert (int(m[1]), m[2], m[3]) == (open_hand, last["phase"], last["verdict"])
    # ...and went on as the uninterrupted run: together they print its decisions.
    assert plain(second.decisions()) == ref.decisions_of(ref.journaled[len(part):])
    assert plain(first.decisions() + second.decisions()) == ref.all_decisions()
    assert second.decisions()[0]["steps"] != last["steps"] or second.decisions()[0]["step"] != last["step"]
    entries = journal(jdir)
    check_seqs(first.decisions() + second.decisions(), entries)
    assert same_events(entries, ref.journaled)
    assert verify(jdir).ok
    no_errors_logged(first)
    no_errors_logged(second)


def _full_pipe() -> tuple[int, int, int]:
    """A pipe whose buffer is already full: ``(read_fd, write_fd, bytes_in_it)``.
    The next write to it waits until someone reads."""
    r, w = os.pipe()
    os.set_blocking(w, False)
    filled = 0
    try:
        while True:
            filled += os.write(w, b"x" * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(w, True)     # a flag of the pipe itself: the daemon must find it blocking
    return r, w, filled


def _drain(fd: int) -> bytes:
    os.set_blocking(fd, False)
    data = b""
    try:
        while chunk := os.read(fd, 65536):
            data += chunk
    except BlockingIOError:
        pass
    return data


def _killed_with_its_next_decision_held(config: Path, input_path: Path, jdir: Path, lines: int) -> list[dict]:
    """Run the daemon on *input_path* with a full stdout, so its next decision's print
    waits; SIGKILL it once *lines* events are journaled. Returns what it printed."""
    r, w, filled = _full_pipe()
    try:
        with DaemonProcess(config, input_path, stdout=w) as d:
            os.close(w)
            w = -1
            wait_for(lambda: journal_lines(jdir) >= lines, f"{lines} events journaled", alive=d.alive)
            d.kill()
            assert d.wait() == -signal.SIGKILL
        out = _drain(r)
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
    return [json.loads(line) for line in out[filled:].decode().splitlines()]


def _run_to_the_end(config: Path, input_path: Path, ref: Reference) -> DaemonProcess:
    with DaemonProcess(config, input_path) as d:
        last_id = ref.all_decisions()[-1]["id"]
        wait_for(lambda: any(x["id"] == last_id for x in d.decisions()), "the last decision printed", alive=d.alive)
        assert d.stop() == 0
    no_errors_logged(d)
    return d


def test_a_decision_the_kill_kept_from_stdout_is_printed_by_the_restart(tmp_path):
    """The box dies after an event's line is on disk and before its decision got out
    (here its print waits on a full stdout). The restart decides it again from the
    journal: it must print it, not only journal and show it, so that `--decisions`
    misses nothing over a crash."""
    s = HandScript(seed=5)
    s.full_hand(3)
    s.new_hand(4).deal(3).button("exposed").deal(5).take().button("ack")
    events = write_input(tmp_path / "in.jsonl", s.events)
    ref = Reference(events)
    first_decided = next(i for i, e in enumerate(ref.journaled) if ref.decisions[e.id])
    config = write_config(tmp_path)
    jdir = tmp_path / "state" / "journal"
    assert _killed_with_its_next_decision_held(config, tmp_path / "in.jsonl", jdir, first_decided + 1) == []
    assert len(journal(jdir)) == first_decided + 1

    second = _run_to_the_end(config, tmp_path / "in.jsonl", ref)
    # The restart printed the decision the kill held back, first, then the rest: every
    # decision of the session is on stdout once, with the seq of its event's line.
    assert plain(second.decisions()) == ref.all_decisions()
    check_seqs(second.decisions(), journal(jdir))
    assert journaled_decisions(jdir) == second.decisions()


def test_the_decision_of_a_new_hand_after_a_misdeal_survives_the_kill(tmp_path):
    """After a misdeal, NEW HAND turns the red LED off: a decision. Killed with that
    event on disk and its decision not out, the restart replays a hand that is only
    that new_hand, where a fresh engine changes nothing: the record before it says
    the panel showed the misdeal, so the restart still gives the decision out."""
    s = HandScript(seed=6)
    s.full_hand(3)
    s.new_hand(6).deal(1).button("exposed")
    part = [dict(e) for e in s.events]
    s.full_hand(6)
    write_input(tmp_path / "part.jsonl", part)
    events = write_input(tmp_path / "in.jsonl", s.events)
    ref = Reference(events)
    new_hand = ref.journaled[len(part)]
    assert new_hand.ev == "new_hand" and [d["verdict"] for d in ref.decisions[new_hand.id]] == ["ok"]
    assert ref.decisions_of(ref.journaled[:len(part)])[-1]["verdict"] == "misdeal"
    config = write_config(tmp_path)
    jdir = tmp_path / "state" / "journal"
    with DaemonProcess(config, tmp_path / "part.jsonl") as first:
        first.wait_decisions(len(ref.decisions_of(ref.journaled[:len(part)])))
        assert first.stop() == 0
    assert _killed_with_its_next_decision_held(config, tmp_path / "in.jsonl", jdir, len(part) + 1) == []
    assert journal(jdir)[-1].event == new_hand

    third = _run_to_the_end(config, tmp_path / "in.jsonl", ref)
    assert third.log_lines("recovered the open hand from the journal: 1 events replayed")
    assert plain(first.decisions() + third.decisions()) == ref.all_decisions()
    check_seqs(first.decisions() + third.decisions(), journal(jdir))
    assert journaled_decisions(jdir) == first.decisions() + third.decisions()


def test_a_restart_does_not_journal_old_ticks_late(tmp_path):
    """A tick the daemon left out of the journal (no grace period ran then) is not
    input it still owes the engine: after a restart, with a grace period running,
    it must not be fed again, late and out of order."""
    s = HandScript(seed=3)
    s.tick(0.25)                         # nothing runs a grace period yet: not journaled
    s.new_hand(5).deal()
    s.draw()
    s.take()                             # a second extra card: the grace period runs
    part = [dict(e) for e in s.events]
    s.tick(1.0).tick(1.0).tick(1.5)      # ...and ends in a misdeal
    ref_part = Reference(write_input(tmp_path / "part.jsonl", part))
    whole_events = write_input(tmp_path / "whole.jsonl", s.events)
    ref = Reference(whole_events)
    assert ref.journaled[0].ev == "new_hand" and ref.states[len(part) - 1][:2] == ("preflop", "correct")
    config = write_config(tmp_path)
    jdir = tmp_path / "state" / "journal"
    with DaemonProcess(config, tmp_path / "part.jsonl") as first:
        wait_for(lambda: journal_lines(jdir) >= len(part) - 1, "the first part journaled", alive=first.alive)
        first.wait_decisions(len(ref_part.all_decisions()))
        assert first.stop() == 0
    with DaemonProcess(config, tmp_path / "whole.jsonl") as second:
        wait_for(lambda: journal_lines(jdir) >= len(ref.journaled), "the rest journaled", alive=second.alive)
        assert second.stop() == 0
    entries = journal(jdir)
    times = [e.event.t for e in entries]
    assert times == sorted(times), f"t goes back in the journal: {times}"
    assert same_events(entries, ref.journaled)
    assert plain(first.decisions() + second.decisions()) == ref.all_decisions()


def test_a_second_input_file_is_fed_whole(tmp_path):
    """Resuming after a restart is for the same input file. Another recorded
    session fed later into the same state must be journaled whole, even though
    its lines are numbered 1, 2, 3... as the first file's were."""
    first = HandScript(seed=1)
    first.full_hand(3)
    second = HandScript(seed=2)
    second.full_hand(4)
    second.new_hand(4).deal(3).button("exposed")
    first_events = write_input(tmp_path / "first.jsonl", first.events)
    second_events = write_input(tmp_path / "second.jsonl", second.events)
    ref_first, ref_second = Reference(first_events), Reference(second_events)
    config = write_config(tmp_path)
    jdir = tmp_path / "state" / "journal"
    with DaemonProcess(config, tmp_path / "first.jsonl") as d:
        wait_for(lambda: journal_lines(jdir) >= len(first_events), "the first file journaled", alive=d.alive)
        d.wait_decisions(len(ref_first.all_decisions()))
        assert d.stop() == 0
    total = len(first_events) + len(second_events)
    with DaemonProcess(config, tmp_path / "second.jsonl") as d:
        # The second file ends with a decision: once it is out, everything was fed.
        d.wait_decisions(len(ref_second.all_decisions()))
        assert d.stop() == 0
    entries = journal(jdir)
    assert len(entries) == total, f"{total - len(entries)} events of the second file were skipped"
    assert same_events(entries, ref_first.journaled + ref_second.journaled)
    assert plain(d.decisions()) == ref_second.all_decisions()


# --------------------------------------------------------------------------
# Signals


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_stops_cleanly(tmp_path, sig):
    s = HandScript(seed=5)
    s.full_hand(3)
    s.new_hand(4).deal(3).button("exposed")
    events = write_input(tmp_path / "in.jsonl", s.events)
    ref = Reference(events)
    config = write_config(tmp_path)
    jdir = tmp_path / "state" / "journal"
    with DaemonProcess(config, tmp_path / "in.jsonl") as d:
        wait_for(lambda: journal_lines(jdir) >= len(events), "the input journaled", alive=d.alive)
        d.wait_decisions(len(ref.all_decisions()))
        assert d.stop(sig) == 0
    no_errors_logged(d)
    assert d.log_lines("dealerbox stopped after")
    assert plain(d.decisions()) == ref.all_decisions()
    assert same_events(journal(jdir), ref.journaled)
    report = verify(jdir)
    assert report.ok and report.torn is None
    assert cli_verify(jdir).returncode == 0
    # The journal lock went with the process: a new daemon opens the same state.
    with DaemonProcess(config) as again:
        again.wait_log("recovered the open hand")
        assert again.stop() == 0


def test_stopping_while_an_event_is_judged_loses_nothing(tmp_path):
    """SIGTERM as the last event's journal line appears (the engine thread is still
    syncing it, or judging it): the stop must let that event's decision out, not
    close the panel under the engine thread. The moment is a race, so it is tried
    several times; each try is a clean stop that must print every decision."""
    s = HandScript(seed=5)
    s.full_hand(3)
    s.new_hand(4).deal(3).button("exposed")
    events = write_input(tmp_path / "in.jsonl", s.events)
    ref = Reference(events)
    assert ref.decisions[events[-1].id], "the last event must cause a decision"
    for attempt in range(12):
        here = tmp_path / f"try{attempt}"
        here.mkdir()
        config = write_config(here)
        jdir = here / "state" / "journal"
        with DaemonProcess(config, tmp_path / "in.jsonl", pace=0.005) as d:
            d.wait_handlers()
            deadline = time.monotonic() + TIMEOUT
            while journal_lines(jdir) < len(events):     # no sleep: catch the line as it lands
                assert d.alive() and time.monotonic() < deadline, "the input was not journaled"
            d.send(signal.SIGTERM)
            assert d.wait() == 0
        no_errors_logged(d)
        assert plain(d.decisions()) == ref.all_decisions(), f"try {attempt}: a decision was lost"
        assert same_events(journal(jdir), ref.journaled)


def _signals_session() -> list[dict]:
    s = HandScript(seed=8)
    for players in (3, 5, 7, 4):
        s.new_hand(players).deal(players).button("exposed").deal(players + 2).take().button("ack")
        s.round_done().flop(burn=False).round_done().turn().round_done().river().round_done().hand_over()
    return [dict(e) for e in s.events]


def test_sighup_reloads_a_good_config_and_refuses_a_bad_one(tmp_path):
    events = write_input(tmp_path / "in.jsonl", _signals_session())
    ref_en, ref_de = Reference(events, "en"), Reference(events, "de")
    config = write_config(tmp_path)
    good_de = write_config(tmp_path, language="de", name="de.toml").read_text(encoding="utf-8")
    jdir = tmp_path / "state" / "journal"
    with DaemonProcess(config, tmp_path / "in.jsonl", pace=0.03) as d:
        d.wait_handlers()
        config.write_text(good_de, encoding="utf-8")
        d.send(signal.SIGHUP)
        d.wait_log("config reloaded")
        reloaded_at = journal_head(jdir)        # a seq: later lines were judged after the reload
        # Broken TOML, then a key that does not exist: both refused, the box runs on.
        config.write_text("[table\nname = 'sim-table'\n", encoding="utf-8")
        d.send(signal.SIGHUP)
        d.wait_log("config reload refused")
        config.write_text(good_de.replace("[lcd]", "[lcd]\ncolumns = 20"), encoding="utf-8")
        d.send(signal.SIGHUP)
        d.wait_log("config reload refused", count=2)
        assert d.alive()
        wait_for(lambda: journal_lines(jdir) >= len(events), "the whole input journaled", alive=d.alive)
        assert d.stop() == 0
    no_errors_logged(d, expected="config reload refused")
    assert journal_lines(jdir) == len(events)
    assert reloaded_at < journal_head(jdir), "the input ended before the reload: nothing to compare"
    assert "columns" in d.log_lines("config reload refused")[1]
    assert len(d.log_lines("config reloaded")) == 1
    # Every event was still judged: the decisions are the reference ones, in
    # English before the reload and in German once it was done.
    printed = d.decisions()
    check_seqs(printed, journal(jdir))
    assert [p["id"] for p in printed] == [r["id"] for r in ref_en.all_decisions()]
    for p, en, de in zip(printed, ref_en.all_decisions(), ref_de.all_decisions()):
        if p["seq"] > reloaded_at:
            assert plain([p]) == [de]
        else:
            assert plain([p])[0] in (en, de)
    assert any(p["seq"] > reloaded_at and p["steps"] for p in printed)
    assert same_events(journal(jdir), ref_en.journaled)
    assert verify(jdir).ok
    assert d.log_lines("dealerbox stopped after")


def test_a_sighup_right_after_ready_reloads_instead_of_killing(tmp_path):
    """systemd may send the reload signal (ExecReload=kill -HUP) as soon as it has
    READY=1; the daemon must handle SIGHUP by then. The notify socket is kept full,
    so the daemon waits inside the very send of READY=1 while the signal arrives."""
    sock_path = str(tmp_path / "notify.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(sock_path)
    filler = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    filler.setblocking(False)
    try:
        while True:
            filler.sendto(b"X=1", sock_path)
    except BlockingIOError:
        pass
    config = write_config(tmp_path)
    try:
        with DaemonProcess(config, env={"NOTIFY_SOCKET": sock_path}) as d:
            seen = set()

            def sending_ready():
                try:
                    with open(f"/proc/{d.pid}/wchan", encoding="ascii") as fh:
                        seen.add(fh.read().strip())
                except OSError:
                    pass
                return "unix_wait_for_peer" in seen
            try:
                wait_for(sending_ready, "the daemon to send READY=1", alive=d.alive)
            except AssertionError:
                if d.alive() and seen <= {"", "0"}:
                    pytest.skip("this kernel does not show where a process waits (/proc/PID/wchan)")
                raise
            d.send(signal.SIGHUP)
            # Let READY=1 through, and whatever follows it.
            server.setblocking(False)

            def drained_or_dead():
                try:
                    while True:
                        server.recv(4096)
                except BlockingIOError:
                    pass
                return d.log_lines("config reloaded") or not d.alive()
            wait_for(drained_or_dead, "the reload (or the daemon's death)")
            assert d.alive(), f"SIGHUP killed the daemon (exit {d.proc.returncode})"
            assert d.stop() == 0
    finally:
        server.close()
        filler.close()


# --------------------------------------------------------------------------
# A power cut between the LED and the fsync

_FSYNC_HOOK = '''
import os, time
_real_fsync = os.fsync
_hold = os.environ["DEALERBOX_TEST_FSYNC_HOLD"]
_log = os.environ["DEALERBOX_TEST_FSYNC_LOG"]

def fsync(fd):
    # While the hold file exists, every fsync waits: the disk is slow.
    while os.path.exists(_hold):
        time.sleep(0.001)
    _real_fsync(fd)
    try:
        path = os.readlink(f"/proc/self/fd/{fd}")
        size = os.fstat(fd).st_size
    except OSError:
        return
    with open(_log, "a") as fh:
        fh.write(f"{path}\\t{size}\\n")

os.fsync = fsync
'''


def _power_cut(jdir: Path, synced_log: Path) -> int:
    """Leave each day file as a power cut would: only what an fsync saw is kept
    (the worst case; the page cache may have saved more). Returns bytes lost."""
    synced: dict[str, int] = {}
    for line in synced_log.read_text().splitlines():
        path, size = line.split("\t")
        synced[path] = int(size)
    lost = 0
    for path in jdir.glob("journal-*.jsonl"):
        keep = synced.get(str(path), 0)
        size = path.stat().st_size
        assert keep <= size
        lost += size - keep
        with open(path, "r+b") as fh:
            fh.truncate(keep)
    return lost


def test_a_power_cut_between_the_led_and_the_fsync(tmp_path):
    """The panel shows before the journal's writer has its fsync. Here every
    fsync is held from some moment on (a slow disk): the box keeps judging and
    printing decisions. Then the power goes (SIGKILL, and the day file cut back
    to what the last fsync made durable). Recovery replays what is on disk, the
    input resumes after the last journaled event, and the events whose
    decisions were shown but not written are judged again: nothing is lost or
    doubled in the journal, and the decisions are the reference ones."""
    events = write_input(tmp_path / "in.jsonl", _signals_session())
    ref = Reference(events)
    config = write_config(tmp_path)
    jdir = tmp_path / "state" / "journal"
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_FSYNC_HOOK)
    hold, synced_log = tmp_path / "hold", tmp_path / "synced.log"
    env = {"PYTHONPATH": os.pathsep.join([str(hook), str(REPO)]),
           "DEALERBOX_TEST_FSYNC_HOLD": str(hold), "DEALERBOX_TEST_FSYNC_LOG": str(synced_log)}
    with DaemonProcess(config, tmp_path / "in.jsonl", pace=0.01, env=env) as first:
        first.wait_decisions(6)
        hold.touch()                     # from now on the disk does not finish a write
        shown = len(first.out)
        # The LED path does not wait for the disk: decisions keep coming.
        first.wait_decisions(shown + 6)
        first.kill()
        assert first.wait() == -signal.SIGKILL
    lost = _power_cut(jdir, synced_log)
    hold.unlink()
    durable = journal(jdir)
    on_disk = {e.event.id for e in durable}
    shown_not_kept = [x for x in first.decisions() if x["id"] not in on_disk]
    assert lost > 0 and shown_not_kept, "the kill did not fall between the LED and the fsync"
    # What was durable is the reference prefix; the first run showed its decisions.
    assert same_events(durable, ref.journaled[:len(durable)])
    printed_first = plain(first.decisions())
    assert printed_first == ref.all_decisions()[:len(printed_first)]

    # The decisions of the last durable event that the cut took off the record (its
    # decision lines are not fsync-ed on their own) are owed: the restart gives them out.
    last = durable[-1]
    kept = sum(d["seq"] == last.seq for d in journaled_decisions(jdir))
    owed = ref.decisions[last.event.id][kept:]
    rest = ref.decisions_of(ref.journaled[len(durable):])
    with DaemonProcess(config, tmp_path / "in.jsonl", pace=0.0) as second:
        wait_for(lambda: journal_lines(jdir) >= len(events), "the whole input journaled", alive=second.alive)
        second.wait_decisions(len(owed) + len(rest))
        assert second.stop() == 0
    no_errors_logged(second)
    # Recovery came back in the state of the durable prefix...
    phase, verdict, open_len = ref.states[len(durable)]
    lines = second.log_lines("recovered the open hand")
    if open_len:
        m = RECOVERED.search(lines[0])
        assert (int(m[1]), m[2], m[3]) == (open_len, phase, verdict)
    # ...it gave out what was owed, then the events shown but lost were fed again and
    # shown again, with the same decisions...
    printed_second = plain(second.decisions())
    assert printed_second == owed + rest
    again = [x for x in printed_second if x["id"] in {y["id"] for y in shown_not_kept}]
    assert again == plain(shown_not_kept)
    # ...and the journal holds every event once, in order, its chain intact.
    entries = journal(jdir)
    assert same_events(entries, ref.journaled)
    check_seqs(second.decisions(), entries)
    report = verify(jdir)
    assert report.ok, [str(p) for p in report.problems]
