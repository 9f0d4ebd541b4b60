"""The journal's last two lines when the chain cannot say which of them changed.

The last line of the newest file vouches for the line before it, and nothing
vouches for the last line. When the two no longer link, the chain alone
cannot tell a changed last-but-one line from a forged last line; the lines'
own content can: a line that fails the journal's strict check (``parse_line``:
the line format, the wall time, the event or decision as CONTRACT.md defines
it) is the damaged one. Only when both lines are well-formed is the end truly
ambiguous, and then both stay on record: the last-but-one in the file, the
last in the quarantine.

Each check runs the box's own start path on the journal: opening it (the
damage scan, :class:`~dealerbox.service.journal.damage.DamageScan`, cuts,
quarantines and says where the chain goes on) and reading the open hand to
replay (:meth:`Journal.open_hand`, what
:meth:`~dealerbox.service.recovery.StartupRecovery.replay` feeds the engine).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from bench.bench_reliability import start_daemon_on, write_config
from dealerbox.domain.events import Event
from dealerbox.domain.messages import load_messages
from dealerbox.link.chain import line_hash
from dealerbox.rules.engine import HandEngine
from dealerbox.service.config import load_config
from dealerbox.service.journal import Journal, journal_files, verify
from dealerbox.service.journal.lines import QUARANTINE_DIR, parse_line
from dealerbox.service.output import decision_record

DAY = 86400.0
T0 = 1795341600.0  # 2026-11-22 10:00 UTC
PROFILE = "tda-2019"

_DEAL = [Event(0.0, "new_hand", players=3)] + [Event(1.0 + i, "shoe", card=c)
                                                for i, c in enumerate(["Ah", "Kd", "7c", "2s", "9h"])]
#: The journal ends in two event lines: the last-but-one is replayed if it is kept.
ENDS_IN_EVENTS = _DEAL
#: The journal ends in a decision line (the exposed card's correction) and a tick that decides nothing
#: (an ACK there would be a decision of its own: "finish the deal" is no step ACK answers).
ENDS_IN_DECISION = _DEAL + [Event(7.0, "button", name="exposed"), Event(8.0, "tick")]


def build(directory: Path, events: list[Event]) -> None:
    """What a healthy box writes for *events*: each event's line, then its decisions'
    lines; the first four events on one day, the rest on the next."""
    clock = [T0]
    engine = HandEngine(PROFILE)
    messages = load_messages("en")
    with Journal(directory, clock=lambda: clock[0], sync="none") as j:
        for i, e in enumerate(events):
            clock[0] = T0 + (DAY if i >= 4 else 0.0) + i
            seq = j.append(e)
            for d in engine.feed(Event.from_dict(e.to_dict())):
                j.append_decision(decision_record(d, messages, seq, e))


@dataclasses.dataclass
class Template:
    """A journal as bytes, and its last two lines."""

    files: dict[str, bytes]
    newest: str
    third_last: bytes
    before_last: bytes
    last: bytes

    def write(self, directory: Path, before_last: bytes) -> None:
        """The journal into *directory*, its last-but-one line replaced by *before_last*."""
        directory.mkdir(parents=True)
        for name, data in self.files.items():
            if name == self.newest:
                data = data[: -len(self.before_last) - len(self.last) - 2] + before_last + b"\n" + self.last + b"\n"
            (directory / name).write_bytes(data)


def template(tmp_path: Path, events: list[Event], before_last_kind: str) -> Template:
    directory = tmp_path / "template"
    build(directory, events)
    files = {p.name: p.read_bytes() for _d, p in journal_files(directory)}
    newest = max(files)
    *_, third_last, before_last, last = b"".join(files[name] for name in sorted(files)).split(b"\n")[:-1]
    assert files[newest].endswith(before_last + b"\n" + last + b"\n")
    assert parse_line("", 0, before_last).kind == before_last_kind
    assert parse_line("", 0, last).kind == "event"
    assert verify(directory).ok
    return Template(files, newest, third_last, before_last, last)


@dataclasses.dataclass
class Start:
    """What the box's start path made of a journal."""

    replayed: list[tuple[int, dict]]   # (seq, event) of the open hand, as replayed
    head: tuple[int, str]              # where the chain goes on
    damage: list[dict]                 # what the damage scan found
    newest_lines: list[bytes]          # the newest file after the start
    quarantined: bytes                 # every byte copied to the quarantine


def start(directory: Path) -> Start:
    """Open the journal as the daemon does and read the open hand it would replay."""
    with Journal(directory, clock=lambda: T0 + 2 * DAY, sync="none") as j:
        replayed = [(e.seq, e.event.to_dict()) for e in j.open_hand()]
        head, damage = j.head, j.damage
    newest = journal_files(directory)[-1][1]
    qdir = directory / QUARANTINE_DIR
    quarantined = b"".join(p.read_bytes() for p in sorted(qdir.glob("*.bin"))) if qdir.is_dir() else b""
    return Start(replayed, head, damage, newest.read_bytes().split(b"\n")[:-1], quarantined)


def well_formed(line: bytes) -> bool:
    """The contract's verdict on a stored line (a flip to a newline makes two lines, neither whole)."""
    pieces = line.split(b"\n")
    return len(pieces) == 1 and parse_line("", 0, line).error is None


def intact_open_hand(t: Template) -> list[tuple[int, dict]]:
    lines = [raw for name in sorted(t.files) for raw in t.files[name].split(b"\n")[:-1]]
    recs = [parse_line("", n, raw) for n, raw in enumerate(lines, 1)]
    return [(r.seq, Event.from_dict(r.event).to_dict()) for r in recs if r.event is not None]


def plainly_malformed(line: bytes) -> bool:
    """What this test sees on its own, without the product's check: not a JSON
    object, a wall that is not a time, an event CONTRACT.md refuses."""
    try:
        d = json.loads(line)
        _dt.datetime.strptime(d["wall"], "%Y-%m-%dT%H:%M:%S.%fZ")
        if "event" in d:
            Event.from_dict(d["event"])
    except (ValueError, TypeError, KeyError):  # EventError is a ValueError
        return True
    return False


def follows(line: bytes, earlier: bytes) -> bool:
    """The chain's own verdict: *line* names *earlier* as the line before it."""
    a, b = parse_line("", 0, earlier), parse_line("", 0, line)
    return b.prev == a.hash and b.seq == a.seq + 1


def check_start(t: Template, s: Start, flipped: bytes, where: str) -> str:
    """Check the start's outcome for one flipped last-but-one line; return what
    decided which line is damaged: "content" (the contract refuses the flipped
    line), "chain" (a well-formed line that no longer follows the line before it:
    its seq or prev changed) or "ambiguous" (nothing can say)."""
    intact = intact_open_hand(t)
    before_seq = parse_line("", 0, t.before_last).seq
    last_seq = parse_line("", 0, t.last).seq
    kinds = [d["kind"] for d in s.damage]
    decided_by = ("content" if not well_formed(flipped)
                  else "chain" if not follows(flipped, t.third_last) else "ambiguous")
    assert decided_by == "content" or not plainly_malformed(flipped), where
    if decided_by != "ambiguous":
        # The flipped line is the damaged one: it is never replayed, it is on record in
        # the quarantine, and the good last line stays where it is and carries the chain.
        assert s.replayed == [(seq, e) for seq, e in intact if seq != before_seq], where
        assert s.newest_lines[-1] == t.last, where
        assert s.head == (last_seq, line_hash(t.last)), where
        assert t.last not in s.quarantined, where
        assert flipped + b"\n" in s.quarantined, where
        assert kinds == ["changed"] * len(kinds) and kinds, where
        return decided_by
    # Both lines are well-formed: nothing says which one changed. Both stay on
    # record: the last-but-one in the file (the chain goes on from it), the last
    # line in the quarantine, named as the ambiguous end.
    assert kinds == ["ambiguous at the end"], where
    assert (s.damage[0]["sha256"], s.damage[0]["moved"]) == (line_hash(t.last), True), where
    assert s.newest_lines[-1] == flipped and s.quarantined == t.last + b"\n", where
    assert s.head == (before_seq, line_hash(flipped)), where
    flipped_event = parse_line("", 0, flipped).event
    expected = [(seq, e) for seq, e in intact if seq < before_seq]
    if flipped_event is not None:
        expected.append((before_seq, Event.from_dict(flipped_event).to_dict()))
    assert s.replayed == expected, where
    return "ambiguous"


@pytest.fixture
def quiet():
    """The damage scan logs an error per damaged journal: thousands here, all expected."""
    logging.disable(logging.CRITICAL)
    yield
    logging.disable(logging.NOTSET)


@pytest.fixture
def scratch(tmp_path):
    """Where the thousands of starts run: a folder of the test's own in /dev/shm where
    the machine has that tmpfs (every start fsyncs its quarantine copy, free there),
    else tmp_path. Nothing is mounted: a test changes no more of the machine than a folder."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        where = Path(tempfile.mkdtemp(prefix="dealerbox-flips-", dir=shm))
        yield where
        shutil.rmtree(where, ignore_errors=True)
    else:
        where = tmp_path / "scratch"
        where.mkdir()
        yield where


@pytest.mark.parametrize("events, kind", [(ENDS_IN_EVENTS, "event"), (ENDS_IN_DECISION, "decision")],
                         ids=["event-before-the-last", "decision-before-the-last"])
def test_every_bit_of_the_line_before_the_last_flipped(tmp_path, scratch, quiet, events, kind):
    """Each byte of the last-but-one line, each of its 8 bits, one at a time: the box
    never replays a line that fails the contract, never quarantines the good last
    line after a malformed one, and keeps both lines on record when both are
    well-formed."""
    t = template(tmp_path, events, kind)
    outcomes = {"content": 0, "chain": 0, "ambiguous": 0}
    began = time.monotonic()
    for i in range(len(t.before_last)):
        for bit in range(8):
            flipped = t.before_last[:i] + bytes([t.before_last[i] ^ (1 << bit)]) + t.before_last[i + 1:]
            directory = scratch / "j"
            t.write(directory, flipped)
            outcome = check_start(t, start(directory), flipped, f"byte {i} bit {bit}: {flipped!r}")
            outcomes[outcome] += 1
            shutil.rmtree(directory)
    assert sum(outcomes.values()) == 8 * len(t.before_last)
    # Most flips leave a line the contract refuses; some (a digit of a time, a card's
    # suit, a letter of a step's text) leave another well-formed line.
    assert outcomes["content"] > outcomes["ambiguous"] > 0 and outcomes["chain"] > 0, outcomes
    print(f"{kind}: {len(t.before_last)} bytes, {outcomes} in {time.monotonic() - began:.1f} s")


def test_the_reported_flip_in_the_wall_time_is_blamed_on_that_line(tmp_path, quiet):
    """The bench's case: one bit turned a '0' of the wall's minute into 'p'
    ("10:p3:18"). verify names the flipped line as changed, for its wall; the
    daemon's start path replays the last line, not the flipped one, and the last
    line stays in the journal, the journal_damage record chained after it."""
    t = template(tmp_path, ENDS_IN_EVENTS, "event")
    wall = json.loads(t.before_last)["wall"]
    i = t.before_last.index(wall.encode()) + wall.index(":") + 1
    flipped = t.before_last[:i] + bytes([t.before_last[i] ^ 0x40]) + t.before_last[i + 1:]
    assert json.loads(flipped)["wall"] == wall[:14] + "p" + wall[15:]
    config = load_config(write_config(tmp_path), check_devices=False)
    directory = config.state_dir / "journal"
    t.write(directory, flipped)
    before, last = parse_line("", 0, t.before_last), parse_line("", 0, t.last)
    problems = verify(directory).problems
    assert [(p.kind, p.line) for p in problems] == [("changed", len(t.files[t.newest].split(b"\n")) - 2)]
    assert problems[0].detail.startswith("'wall' must be a UTC time") and ":p" in problems[0].detail
    daemon = start_daemon_on(config, directory)
    good = [e for seq, e in intact_open_hand(t) if seq != before.seq]
    assert daemon.stats.recovered_events == len(good) == len(ENDS_IN_EVENTS) - 1
    assert daemon.engine.decision == _engine_after(good)
    assert (directory / t.newest).read_bytes().split(b"\n")[-3:-1] == [flipped, t.last]  # nothing cut off
    damage_line = journal_files(directory)[-1][1].read_bytes().split(b"\n")[-2]
    assert parse_line("", 0, damage_line).kind == "journal_damage"
    assert daemon.journal.head[0] == last.seq + 1
    assert verify(directory).damage[0].body["lines"][0]["kind"] == "changed"


def test_two_well_formed_lines_at_the_end_are_both_kept_on_record(tmp_path, quiet):
    """The truly ambiguous end: the last-but-one event's card changed from 2s to 2c
    (one bit), still a CONTRACT.md event. Whether it was changed or the last line
    was forged, nothing on the disk can say: verify names the last line, the start
    goes on from the last-but-one (the chain vouches for it) and moves the last
    line to the quarantine, byte for byte, with a note; neither is lost."""
    t = template(tmp_path, ENDS_IN_EVENTS, "event")
    changed = t.before_last.replace(b'"card":"2s"', b'"card":"2c"')
    assert changed != t.before_last and well_formed(changed) and follows(changed, t.third_last)
    directory = tmp_path / "journal"
    t.write(directory, changed)
    last_line_no = len(t.files[t.newest].split(b"\n")) - 1
    assert [(p.kind, p.line) for p in verify(directory).problems] == [("ambiguous at the end", last_line_no)]
    s = start(directory)
    assert [(d["kind"], d["line"], d["moved"]) for d in s.damage] == [("ambiguous at the end", last_line_no, True)]
    assert s.newest_lines[-1] == changed and s.quarantined == t.last + b"\n"
    assert s.replayed[-1] == (parse_line("", 0, changed).seq, {"t": 4.0, "ev": "shoe", "card": "2c"})
    [note] = (directory / QUARANTINE_DIR).glob("*.json")
    assert json.loads(note.read_bytes())["lines"][0]["sha256"] == line_hash(t.last)


def _engine_after(events: list[dict]):
    engine = HandEngine(PROFILE)
    for e in events:
        engine.feed(Event.from_dict(e))
    return engine.decision
