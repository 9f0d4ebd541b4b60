"""The tamper-evident, append-only journal of every event the box sees.

Every event (CONTRACT.md) the engine judges is recorded here, with the
decisions the box showed, and replaying the journal from the start of the open
hand puts the engine back in the state it had. The daemon queues lines for a
writer thread (:meth:`Journal.start_writer`) so the fsync is never between a
card and the LED; docs/JOURNAL.md says why that loses no more than before, and
what happens when the disk fails or the file is damaged.

Files
-----
One JSON Lines file per UTC day in the journal directory (the service's state
directory)::

    journal-2026-11-22.jsonl
    journal-2026-11-23.jsonl
    journal-anchor.json        (only once retention has deleted a file)
    journal.lock               (held by the one writing process)

The day comes from the injected wall clock (``clock``, POSIX seconds; the
daemon passes ``time.time``), never from the event's ``t``, which counts
seconds since the daemon started. Files are taken in name order, which is
date order, which is the order they were written: if the clock goes back
(a Pi has no RTC and may boot with a stale time) the journal keeps appending
to the newest file rather than reopen an older one.

Line format (stable: add keys, never rename one)
------------------------------------------------
Each line is one compact JSON object, keys in this order::

    {"seq":17,"prev":"<64 hex>","wall":"2026-11-22T03:43:10.123456Z","event":{"t":9.6,"ev":"board_on","card":"Ah"}}

- ``seq``: 1, 2, 3, ... without gaps across all files, for ever (it does not
  restart in a new file).
- ``prev``: SHA-256, in hex, of the previous line's bytes as stored (UTF-8,
  without its newline). The very first line has 64 zeros (``GENESIS``). The
  first line of a new day's file chains to the last line of the file before.
- ``wall``: the wall-clock time the line was written, UTC, for auditors.
- ``event``: ``Event.to_dict()``.

In place of ``event`` a line carries exactly one of: ``decision`` (below),
``gap`` (lines the writer lost while the disk failed and its queue was full:
``events``, ``other_lines``, ``reason``, ``first_wall``/``last_wall``,
``first_t``/``last_t``) or ``journal_damage`` (damage found and quarantined at
a start, see below).

A line may instead carry ``decision`` (a CONTRACT.md decision, as the daemon
showed it, with the ``seq`` of the event that caused it) in place of ``event``:
the box's answers are on record as given, even if the profile changes later.
They are chained like every line but not fsync-ed on their own (replaying the
events gives them again; the next event's fsync carries them). Readers of
events skip them; :func:`read_decisions` reads them.

Hashing the stored bytes (not a re-serialisation) means verifying never
depends on how JSON is formatted: any changed byte changes the hash.

What the chain proves
---------------------
:func:`verify` walks every line and names, by file and line number, the line
that was changed, the lines that were removed and the lines that were inserted.
A hash chain kept on the same disk cannot reveal a forger who rewrites every
line after his edit, nor a change to (or removal of) the very last lines, which
no later line vouches for yet. Both are caught by comparing with a head
``(seq, hash)`` kept elsewhere (floor reporting can publish :meth:`Journal.head`)
and passing it to ``verify(expected_head=...)``.

fsync policy
------------
With the writer thread (the daemon): :meth:`Journal.submit` queues a line and
returns its ``seq`` at once; the thread writes everything queued meanwhile
with one ``write()`` and, unless ``sync="none"``, one ``fsync()`` (group
commit), in queue order. A failed write is taken back and retried every
``retry_s``; at most ``queue_lines`` lines wait, more are lost and a ``gap``
line records them. :attr:`Journal.fault` says why the disk cannot be written.

Without it (:meth:`Journal.append`), ``sync="event"`` (the default): every
append is written with one ``write()`` and ``fsync()``-ed before it returns.
It costs one flash write per event (see ``bench/bench_journal.py``).

``sync="group"``: the fsync is shared by up to ``group_events`` events and
delayed by at most ``group_window`` seconds (a background thread enforces the
window when appends stop). A power cut can then lose the last window of events;
use it only if the disk cannot keep up. ``sync="none"`` leaves flushing to the
OS (tests, benchmarks).

A new file's directory entry is fsync-ed too, so a new day's file survives a
power cut.

A torn last line
----------------
A power cut during a write can leave the newest file ending in bytes after
its last newline (a partial line), or in a line of NUL bytes (a block the file
system allocated but never filled). Nothing else can be a torn append: a
complete line that does not parse is damage (below), never cut off. The torn
tail was never durable, so it is not tampering: on opening for append it is
cut off (and fsync-ed), logged, and reported in :attr:`Journal.torn`;
:func:`verify` reports it in ``VerifyReport.torn`` and does not count it as a
problem.

Damage
------
On opening, the chain is followed from the open hand's file to the end. Lines
it does not vouch for are copied byte for byte to ``quarantine/`` with a note
of where they were (:attr:`Journal.damage`); those after the newest file's
last good line are then moved aside (the file is cut back to it, so the chain
goes on from a good line). The open hand is replayed from good lines only
(:func:`checked_open_hand`). The daemon records :meth:`Journal.damage_record`
as a ``journal_damage`` line.

Retention
---------
A day's file is deleted once its date is more than ``keep_days`` (90) days
before the clock's current UTC date; the newest file is never deleted.
Retention runs when a new day's file is started and when the journal is
opened, but only if the clock moved on by at most a day since the newest file:
a Pi has no RTC, and a clock that jumps months ahead must not wipe the
journal (after a real gap the next midnight's rotation prunes). Before
deleting, the hash and seq of the last deleted line go into
``journal-anchor.json`` (written atomically), so :func:`verify` still checks
that the oldest remaining line follows what was deleted. ``keep_from_seq``
(a callable) keeps every file holding a line not yet acknowledged elsewhere.

Reading back
------------
:func:`read_entries` (or :meth:`Journal.entries`) yields :class:`Entry`
objects from a given ``seq``; :func:`find_open_hand` returns the ``seq`` of the
last ``new_hand`` event, searching the newest file first and going back day by
day, so the daemon can replay the open hand after a crash.
"""

from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import hashlib
import json
import logging
import os
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from ..errors import EventError, JournalError
from ..rules.events import Event

__all__ = [
    "GENESIS", "Journal", "Entry", "TornTail", "VerifyProblem", "VerifyReport",
    "verify", "read_entries", "read_decisions", "find_open_hand", "checked_open_hand",
    "journal_files", "BODY_KINDS",
]

log = logging.getLogger(__name__)

GENESIS = "0" * 64
SYNC_POLICIES = ("event", "group", "none")
ANCHOR_NAME = "journal-anchor.json"
LOCK_NAME = "journal.lock"
_FILE_RE = re.compile(r"^journal-(\d{4}-\d{2}-\d{2})\.jsonl$")
# How far verify looks ahead for the line a run of inserted lines skipped over.
_INSERT_LOOKAHEAD = 256
#: What a line can carry besides seq, prev and wall: exactly one of these objects.
BODY_KINDS = ("event", "decision", "gap", "journal_damage")
QUARANTINE_DIR = "quarantine"


def _file_name(day: _dt.date) -> str:
    return f"journal-{day.isoformat()}.jsonl"


def _utc_day(posix_seconds: float) -> _dt.date:
    return _dt.datetime.fromtimestamp(posix_seconds, _dt.timezone.utc).date()


def _utc_text(posix_seconds: float) -> str:
    stamp = _dt.datetime.fromtimestamp(posix_seconds, _dt.timezone.utc)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _hash(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def journal_files(directory) -> list[tuple[_dt.date, Path]]:
    """The day files in ``directory``, oldest first, as ``(date, path)``."""
    directory = Path(directory)
    out = []
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    for name in names:
        m = _FILE_RE.match(name)
        if not m:
            continue
        try:
            day = _dt.date.fromisoformat(m.group(1))
        except ValueError:
            continue
        out.append((day, directory / name))
    out.sort()
    return out


# --------------------------------------------------------------------------
# Small result types


@dataclass(frozen=True, slots=True)
class Entry:
    """One journal line read back."""

    seq: int
    event: Event
    wall: str
    file: str
    line: int


@dataclass(frozen=True, slots=True)
class TornTail:
    """A partial last line found at the end of the newest file."""

    file: str
    line: int
    size: int  # bytes dropped

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: torn last line ({self.size} bytes) from an interrupted write"


@dataclass(frozen=True, slots=True)
class VerifyProblem:
    """A break in the chain, named by the file and line number where it shows.

    ``kind`` is ``"changed"`` (this line is not what the next line vouched
    for, or is not a journal line at all), ``"removed"`` (lines are missing
    just before this line; ``line`` is the line after the gap, or the last
    line when the journal's end is missing), ``"inserted"`` (this line was
    not in the chain) or ``"ambiguous at the end"`` (the last line does not
    follow the one before it, and nothing after it says which of the two is
    genuine: the last line is named, so a forged appended line is blamed).
    """

    kind: str
    file: str
    line: int
    detail: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: line {self.kind}: {self.detail}"


@dataclass(slots=True)
class VerifyReport:
    """What :func:`verify` found. ``ok`` is true when no problem was found."""

    problems: list[VerifyProblem] = field(default_factory=list)
    lines: int = 0
    files: list[str] = field(default_factory=list)
    torn: TornTail | None = None
    head: tuple[int, str] | None = None
    #: The ``journal_damage`` lines in the chain: damage the box found and
    #: quarantined when it started (see :attr:`Journal.damage`).
    damage: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


# --------------------------------------------------------------------------
# Reading lines


@dataclass(slots=True)
class _Line:
    file: str
    line: int
    raw: bytes
    hash: str
    seq: int | None = None
    prev: str | None = None
    wall: str | None = None
    event: dict | None = None
    decision: dict | None = None
    error: str | None = None
    kind: str | None = None
    body: dict | None = None


def _parse(file: str, lineno: int, raw: bytes) -> _Line:
    rec = _Line(file, lineno, raw, _hash(raw))
    try:
        d = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        rec.error = f"not JSON ({getattr(exc, 'msg', exc)})"
        return rec
    except RecursionError:
        rec.error = "not a journal line: JSON nested too deeply"
        return rec
    if not isinstance(d, dict):
        rec.error = "not a JSON object"
        return rec
    seq, prev = d.get("seq"), d.get("prev")
    kinds = [k for k in BODY_KINDS if k in d]
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        rec.error = f"'seq' must be a positive whole number, not {_short(seq)}"
    elif not isinstance(prev, str) or len(prev) != 64:
        rec.error = f"'prev' must be 64 hex digits, not {_short(prev)}"
    elif len(kinds) != 1 or not isinstance(d[kinds[0]], dict):
        rec.error = "one of 'event', 'decision', 'gap' or 'journal_damage' must be an object"
    else:
        kind = kinds[0]
        body = d[kind]
        if kind == "event":
            try:
                Event.from_dict(body)
            except EventError as exc:
                rec.error = f"not a CONTRACT.md event: {exc}"
                return rec
        elif kind == "decision":
            problem = _decision_problem(body)
            if problem:
                rec.error = f"not a CONTRACT.md decision: {problem}"
                return rec
        rec.seq, rec.prev, rec.kind, rec.body = seq, prev, kind, body
        rec.event = body if kind == "event" else None
        rec.decision = body if kind == "decision" else None
        wall = d.get("wall")
        rec.wall = wall if isinstance(wall, str) else None
    return rec


_VERDICTS = frozenset({"ok", "correct", "misdeal", "void", "floor"})


def _decision_problem(d: dict) -> str | None:
    """What makes a journaled decision not one the daemon could have given (None if nothing)."""
    verdict = d.get("verdict")
    if verdict not in _VERDICTS:
        return f"'verdict' must be one of {sorted(_VERDICTS)}, not {_short(verdict)}"
    irregularity = d.get("irregularity")
    if irregularity is not None and not isinstance(irregularity, str):
        return f"'irregularity' must be a name or null, not {_short(irregularity)}"
    t = d.get("t")
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        return f"'t' must be a number, not {_short(t)}"
    seq = d.get("seq")
    if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or seq < 1):
        return f"'seq' must name a journal line, not {_short(seq)}"
    steps = d.get("steps", [])
    if not isinstance(steps, list):
        return f"'steps' must be a list, not {_short(steps)}"
    return None


def _short(value, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def _split_torn(data: bytes) -> tuple[bytes, bytes]:
    """Split a file's bytes into (complete lines, torn tail).

    Only what an interrupted append can leave is a torn tail: the bytes after
    the last newline (a partial write), and a last line made only of NUL bytes
    (a block the file system allocated but never filled). A complete line
    that does not parse is *damage*, never torn: it may be a line the engine
    acted on, so it is quarantined, not cut off.
    """
    cut = data.rfind(b"\n") + 1
    body, tail = data[:cut], data[cut:]
    if body:
        start = body.rfind(b"\n", 0, len(body) - 1) + 1
        last = body[start:-1]
        if last and not last.strip(b"\0"):
            body, tail = body[:start], body[start:] + tail
    return body, tail


def _tail_chunk(path: Path) -> tuple[bytes, int]:
    """The end of a file, starting at a line start and holding at least one
    complete line when the file has one, and the file's size. Reads backwards
    in growing chunks, so a day's file is never read whole for this."""
    with open(path, "rb") as f:
        size = pos = f.seek(0, os.SEEK_END)
        data = b""
        step = 4096
        while pos > 0 and data.count(b"\n") < 2:
            step = min(step * 2, pos)
            pos -= step
            f.seek(pos)
            data = f.read(step) + data
    if pos > 0:
        data = data[data.find(b"\n") + 1:]  # drop the partial first line
    return data, size


def _count_lines(path: Path, upto: int) -> int:
    count = 0
    with open(path, "rb") as f:
        while upto > 0:
            block = f.read(min(upto, 1 << 20))
            if not block:
                break
            count += block.count(b"\n")
            upto -= len(block)
    return count


def _torn_in(path: Path) -> TornTail | None:
    """The torn tail at the end of ``path``, if any (see _split_torn)."""
    data, size = _tail_chunk(path)
    _body, tail = _split_torn(data)
    if not tail:
        return None
    return TornTail(path.name, _count_lines(path, size - len(tail)) + 1, len(tail))


def _raw_lines(path: Path, *, newest: bool) -> Iterator[tuple[int, bytes]]:
    """``(line number, bytes without the newline)``, streamed; in the newest
    file a torn tail is left out."""
    limit = None
    if newest:
        torn = _torn_in(path)
        if torn is not None:
            limit = path.stat().st_size - torn.size
    with open(path, "rb") as f:
        pos = 0
        for n, raw in enumerate(f, 1):
            if limit is not None and pos >= limit:
                break
            pos += len(raw)
            yield n, raw[:-1] if raw.endswith(b"\n") else raw


def _iter_file(path: Path, *, newest: bool) -> Iterator[_Line]:
    for n, raw in _raw_lines(path, newest=newest):
        yield _parse(path.name, n, raw)


def _read_anchor(directory: Path) -> dict | None:
    try:
        with open(directory / ANCHOR_NAME, "rb") as f:
            d = json.loads(f.read())
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise JournalError(f"{directory / ANCHOR_NAME}: not valid JSON") from exc
    if not (isinstance(d, dict) and isinstance(d.get("seq"), int)
            and isinstance(d.get("hash"), str)):
        raise JournalError(f"{directory / ANCHOR_NAME}: needs 'seq' and 'hash'")
    return d


def _all_lines(directory: Path) -> Iterator[_Line]:
    files = journal_files(directory)
    for i, (_day, path) in enumerate(files):
        yield from _iter_file(path, newest=i == len(files) - 1)


# --------------------------------------------------------------------------
# Verifying


class _Lookahead:
    def __init__(self, it: Iterator[_Line]):
        self._it = it
        self._buf: deque[_Line] = deque()

    def peek(self, i: int) -> _Line | None:
        while len(self._buf) <= i:
            nxt = next(self._it, None)
            if nxt is None:
                return None
            self._buf.append(nxt)
        return self._buf[i]

    def pop(self) -> _Line | None:
        if self._buf:
            return self._buf.popleft()
        return next(self._it, None)


def _linked(a: _Line, b: _Line) -> bool:
    return (a.error is None and b.error is None
            and b.prev == a.hash and b.seq == a.seq + 1)


def verify(directory, *, expected_head: tuple[int, str] | None = None) -> VerifyReport:
    """Check the whole journal in ``directory``: the chain and every line's
    event or decision against CONTRACT.md.

    Every problem is named by file and line (see :class:`VerifyProblem`); a
    torn tail is reported in ``torn`` and is not a problem. A missing
    directory raises :class:`JournalError`. ``damage`` lists the
    ``journal_damage`` entries the box recorded (damage it found and
    quarantined at a start).
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise JournalError(f"{directory}: no journal directory there")
    files = journal_files(directory)
    report = VerifyReport(files=[p.name for _d, p in files])
    if files:
        report.torn = _torn_in(files[-1][1])
    try:
        anchor = _read_anchor(directory)
    except JournalError as exc:
        report.problems.append(VerifyProblem("changed", ANCHOR_NAME, 1, str(exc)))
        anchor = None
    start, start_name = _start_line(anchor)
    last = None
    for rec in _walk(_all_lines(directory), start, start_name, anchor, report.problems):
        last = rec
        if rec.kind == "journal_damage":
            report.damage.append(rec)
    report.lines = _walk_count[0]
    if last is not None:
        report.head = (last.seq, last.hash)
    if expected_head is not None:
        _check_head(report, expected_head, directory, last)
    return report


def _start_line(anchor: dict | None) -> tuple["_Line", str]:
    if anchor is None:
        return _Line("", 0, b"", GENESIS, seq=0), "the start of the journal (seq 1)"
    return (_Line(anchor.get("file", ""), 0, b"", anchor["hash"], seq=anchor["seq"]),
            f"the retention anchor (seq {anchor['seq']})")


# How many lines the last _walk read (verify reports it). One walk at a time
# per process is all the callers need; a list so _walk can set it.
_walk_count = [0]


def _walk(lines_iter: Iterator[_Line], start: _Line, start_name: str, anchor: dict | None,
          problems: list[VerifyProblem]) -> Iterator[_Line]:
    """Follow the chain over ``lines_iter`` from ``start``; append every break
    to ``problems`` and yield the lines that are in the chain, in order.

    A line is yielded once the line before it vouches for it. A line later
    found "changed" (the line after it recorded another hash) has been
    yielded already: callers that replay lines drop the ones ``problems``
    names (see :func:`_checked_lines`).
    """
    lines = _Lookahead(lines_iter)
    prev: _Line | None = start
    before: _Line | None = None  # the line prev was checked against
    first = True
    count = 0

    def add(kind, rec, detail):
        problems.append(VerifyProblem(kind, rec.file, rec.line, detail))

    try:
        while (cur := lines.pop()) is not None:
            count += 1
            at_start, first = first, False
            if (at_start and anchor is not None and cur.error is None
                    and cur.seq <= anchor["seq"]):
                # Retention wrote the anchor but died before deleting all it meant
                # to: these old lines are checked among themselves from here.
                prev = None
            if cur.error is None and prev is not None and _linked(prev, cur):
                before, prev = prev, cur
                yield cur
                continue
            if prev is None:  # nothing to check this line against: resynchronise
                if cur.error is not None:
                    add("changed", cur, cur.error)
                else:
                    before, prev = None, cur
                    yield cur
                continue
            # The link prev -> cur is broken. Classify it, looking ahead.
            skip = None
            for i in range(_INSERT_LOOKAHEAD):
                nxt = lines.peek(i)
                if nxt is None:
                    break
                if _linked(prev, nxt):
                    skip = i
                    break
            if skip is not None:
                add("inserted", cur, f"not part of the chain; {_where(prev, start_name)} "
                                     f"is followed by {nxt.file}:{nxt.line}")
                for _ in range(skip):
                    extra = lines.pop()
                    count += 1
                    add("inserted", extra, "not part of the chain")
                continue
            if cur.error is not None:
                add("changed", cur, cur.error)
                prev = None
                continue
            if before is not None and _linked(before, cur):
                # prev was forged to follow its predecessor, but the real next
                # line still vouches for that predecessor, not for prev.
                add("inserted", prev, f"not part of the chain; {_where(before, start_name)} "
                                      f"is followed by {cur.file}:{cur.line}")
                before, prev = before, cur
                yield cur
                continue
            nxt = lines.peek(0)
            if nxt is None and prev is not start and cur.seq == prev.seq + 1:
                # The last line does not follow the line before it, and nothing
                # after it says which of the two is genuine.
                add("ambiguous at the end", cur,
                    f"does not follow {prev.file}:{prev.line} (its prev is not that line's hash): "
                    f"either this line was appended by someone else, or that line was changed")
                continue
            if nxt is not None and nxt.error is None and not _linked(cur, nxt):
                # Both links around cur are broken: cur itself was altered.
                add("changed", cur, "its seq or prev field no longer fits the lines around it")
                prev = None
                continue
            if prev is start:
                add("removed", cur, f"lines before this one are missing: it does not follow "
                                    f"{start_name} (it has seq {cur.seq})")
            elif cur.seq <= prev.seq:
                add("inserted", cur, f"seq {cur.seq} repeats or goes back after seq {prev.seq} "
                                     f"at {prev.file}:{prev.line}")
                continue
            elif cur.seq > prev.seq + 1:
                missing = (f"seq {prev.seq + 1}" if cur.seq == prev.seq + 2
                           else f"seq {prev.seq + 1}..{cur.seq - 1}")
                add("removed", cur, f"{missing} missing between {prev.file}:{prev.line} and this line")
            else:
                add("changed", prev, f"its hash no longer matches what {cur.file}:{cur.line} recorded")
            before, prev = None, cur
            yield cur
    finally:
        _walk_count[0] = count


def _checked_lines(lines_iter: Iterator[_Line], start: _Line, start_name: str,
                   anchor: dict | None) -> tuple[list[_Line], list[VerifyProblem]]:
    """The lines the chain vouches for (a line named by a problem left out), and the problems."""
    problems: list[VerifyProblem] = []
    kept = list(_walk(lines_iter, start, start_name, anchor, problems))
    # A "removed" problem names the genuine line after a gap: it is kept.
    bad = {(p.file, p.line) for p in problems if p.kind != "removed"}
    return [rec for rec in kept if (rec.file, rec.line) not in bad], problems


def _where(rec: _Line, start_name: str) -> str:
    return start_name if rec.line == 0 else f"{rec.file}:{rec.line}"


def _check_head(report, expected_head, directory, last):
    want_seq, want_hash = expected_head
    if last is None:
        if want_seq > 0:
            report.problems.append(VerifyProblem(
                "removed", "", 0, f"the journal is empty but the recorded head is seq {want_seq}"))
        return
    if last.error is not None or last.seq < want_seq:
        report.problems.append(VerifyProblem(
            "removed", last.file, last.line,
            f"the journal ends before the recorded head (seq {want_seq})"))
        return
    for rec in _all_lines(directory):
        if rec.seq == want_seq:
            if rec.hash != want_hash:
                report.problems.append(VerifyProblem(
                    "changed", rec.file, rec.line, "differs from the recorded head"))
            return


# --------------------------------------------------------------------------
# Reading back


def _records(directory, from_seq: int) -> Iterator[_Line]:
    """Every line with ``seq >= from_seq`` (torn tail skipped, damaged lines included).

    Files that end before ``from_seq`` are skipped after reading only their last line.
    """
    files = journal_files(directory)
    for i, (_day, path) in enumerate(files):
        newest = i == len(files) - 1
        if not newest:
            tail = _last_line(path)
            if tail is not None and tail.error is None and tail.seq < from_seq:
                continue
        for rec in _iter_file(path, newest=newest):
            if rec.error is not None or rec.seq >= from_seq:
                yield rec


def read_entries(directory, from_seq: int = 1, *, skip_damaged: bool = False) -> Iterator[Entry]:
    """Yield the journal's events with ``seq >= from_seq``, oldest first.

    A line that is not a valid journal line raises :class:`JournalError` naming
    the file and line: replaying past damage would give another state, so the
    caller decides (run :func:`verify`). With ``skip_damaged`` such lines are
    left out instead (the daemon, which must run on any journal, reads so).
    """
    for rec in _records(directory, from_seq):
        if rec.error is not None:
            if skip_damaged:
                continue
            raise JournalError(f"{rec.file}:{rec.line}: {rec.error}")
        if rec.event is None:
            continue
        yield Entry(rec.seq, Event.from_dict(rec.event), rec.wall or "", rec.file, rec.line)


def read_decisions(directory, from_seq: int = 1) -> Iterator[tuple[int, str, dict]]:
    """Yield ``(seq, wall, decision)`` for the decision lines with ``seq >= from_seq``."""
    for rec in _records(directory, from_seq):
        if rec.error is None and rec.decision is not None:
            yield rec.seq, rec.wall or "", rec.decision


def find_open_hand(directory) -> int | None:
    """The ``seq`` of the last ``new_hand`` event, or None if there is none.

    Searches the newest file first and goes back a day at a time, so a hand
    that began before midnight UTC is found in the previous day's file.
    """
    files = journal_files(directory)
    for i in range(len(files) - 1, -1, -1):
        found = None
        path = files[i][1]
        for n, raw in _raw_lines(path, newest=i == len(files) - 1):
            if b"new_hand" not in raw:  # skip parsing the many other lines
                continue
            rec = _parse(path.name, n, raw)
            if rec.error is None and rec.event is not None and rec.event.get("ev") == "new_hand":
                found = rec.seq
        if found is not None:
            return found
    return None


def _last_line(path: Path) -> _Line | None:
    """The last complete line of a file (its ``line`` number is 0).

    Only bytes after the last newline are left out: a complete line that does
    not parse is returned, with its error, for the caller to judge.
    """
    data, _size = _tail_chunk(path)
    body = data[: data.rfind(b"\n") + 1]
    if not body:
        return None
    return _parse(path.name, 0, body[:-1].rsplit(b"\n", 1)[-1])


def _open_hand_file(files) -> int | None:
    """Index in ``files`` of the newest file holding a well-formed ``new_hand`` line."""
    for i in range(len(files) - 1, -1, -1):
        path = files[i][1]
        for n, raw in _raw_lines(path, newest=i == len(files) - 1):
            if b"new_hand" not in raw:  # skip parsing the many other lines
                continue
            rec = _parse(path.name, n, raw)
            if rec.error is None and rec.event is not None and rec.event.get("ev") == "new_hand":
                return i
    return None


def _check_recent(directory: Path, files, index: int, anchor: dict | None):
    """Follow the chain from ``files[index]`` to the end.

    Returns ``(kept lines, problems, start line or None)``: the start is the
    last line of the file before (what the first checked line must follow),
    None when it cannot be trusted (then the chain picks up at the first
    well-formed line).
    """
    if index == 0:
        start, start_name = _start_line(anchor)
    else:
        before = files[index - 1][1]
        last = _last_line(before)
        if last is not None and last.error is None:
            start, start_name = last, f"the last line of {before.name}"
        else:
            start, start_name = None, ""

    def lines():
        for i in range(index, len(files)):
            yield from _iter_file(files[i][1], newest=i == len(files) - 1)

    kept, problems = _checked_lines(lines(), start, start_name, anchor if index == 0 else None)
    return kept, problems, start


def checked_open_hand(directory) -> list[Entry]:
    """The events to replay after a restart: from the last ``new_hand`` the
    chain vouches for to the end, leaving out every line it does not (a
    duplicated or forged line is never replayed)."""
    directory = Path(directory)
    files = journal_files(directory)
    if not files:
        return []
    try:
        anchor = _read_anchor(directory)
    except JournalError:
        anchor = None
    index = _open_hand_file(files)
    for first in ((index if index is not None else len(files) - 1), 0):
        kept, _problems, _start = _check_recent(directory, files, first, anchor)
        starts = [i for i, rec in enumerate(kept) if rec.event is not None and rec.event.get("ev") == "new_hand"]
        if starts:
            return [Entry(rec.seq, Event.from_dict(rec.event), rec.wall or "", rec.file, rec.line)
                    for rec in kept[starts[-1]:] if rec.event is not None]
        if first == 0:
            break
    return []


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return f"uid {os.geteuid()}"


# --------------------------------------------------------------------------
# Writing


@dataclass(slots=True)
class _Pending:
    """A line waiting for the writer thread: its seq is given when it is queued."""

    seq: int
    kind: str
    body: dict
    wall: float


_QUEUE_FULL = "the journal's queue is full"


class Journal:
    """The writer: appends events, rotates daily, prunes old days.

    :param directory: where the day files live (created if missing).
    :param clock: wall clock, POSIX seconds; picks the day file. Default
        ``time.time``.
    :param sync: ``"event"`` (fsync each append, the default), ``"group"`` or
        ``"none"``; see the module docstring.
    :param group_window: with ``sync="group"``, the longest an appended event
        stays unsynced, in seconds.
    :param group_events: with ``sync="group"``, fsync at the latest after this
        many events.
    :param keep_days: delete day files more than this many days old.
    :param monotonic: the clock the group window is measured with.
    :param queue_lines: with the writer thread (:meth:`start_writer`), how many
        lines are held in memory while the disk cannot be written; more are
        lost and a ``gap`` line says so.
    :param retry_s: with the writer thread, seconds between write attempts
        while the disk fails.
    :param keep_from_seq: called by retention before deleting a day's file;
        returns the lowest ``seq`` that must be kept (lines not yet
        acknowledged elsewhere), or None. A file holding that seq or a later
        one is not deleted.

    Opening takes an exclusive lock (one writer per directory), cuts off a
    torn last line (see :attr:`torn`), checks the chain from the open hand on
    (see :attr:`damage`) and applies retention. The journal is a context
    manager; :meth:`close` flushes, syncs and is safe to call twice.
    """

    def __init__(self, directory, *, clock: Callable[[], float] = time.time,
                 sync: str = "event", group_window: float = 0.05, group_events: int = 64,
                 keep_days: int = 90, monotonic: Callable[[], float] = time.monotonic,
                 queue_lines: int = 20000, retry_s: float = 0.5,
                 keep_from_seq: Callable[[], int | None] | None = None):
        if sync not in SYNC_POLICIES:
            raise ValueError(f"sync must be one of {SYNC_POLICIES}, not {sync!r}")
        if not (group_window > 0 and group_events >= 1):
            raise ValueError("group_window must be > 0 and group_events >= 1")
        if keep_days < 1:
            raise ValueError(f"keep_days must be at least 1, not {keep_days!r}")
        if queue_lines < 2 or not retry_s > 0:
            raise ValueError("queue_lines must be at least 2 and retry_s > 0")
        self.directory = Path(directory)
        self.sync = sync
        self.group_window = float(group_window)
        self.group_events = int(group_events)
        self.keep_days = int(keep_days)
        self.queue_lines = int(queue_lines)
        self.retry_s = float(retry_s)
        self.keep_from_seq = keep_from_seq
        self._clock = clock
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._day: _dt.date | None = None
        self._unsynced = 0
        self._unsynced_since = 0.0
        self._closed = False
        self._flusher: threading.Thread | None = None
        self._wake = threading.Condition(self._lock)
        # The writer thread's queue (see start_writer); its own lock, so that
        # queueing never waits for a write in progress.
        self._queue_cond = threading.Condition(threading.Lock())
        self._pending: deque[_Pending] = deque()
        self._gap: dict | None = None
        self._writer: threading.Thread | None = None
        self._stopping = False
        self._on_change: Callable[[str | None], None] | None = None
        #: The torn tail cut off when opening, or None.
        self.torn: TornTail | None = None
        #: Day files deleted by retention since opening, oldest first.
        self.deleted: list[str] = []
        #: Damage found when opening and not recorded before: one dict per
        #: problem (file, line, kind, detail, moved, quarantine). See
        #: :meth:`damage_record`.
        self.damage: list[dict] = []
        #: Why the disk cannot be written now (the writer thread), or None.
        self.fault: str | None = None
        #: Storage faults (each a run of failed writes) since opening.
        self.faults = 0
        #: Lines lost because the queue was full while the disk failed.
        self.lost_events = 0
        self.lost_other = 0
        #: The last seq known to be on disk (fsync-ed unless sync is "none").
        self.durable_seq = 0

        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o750)
            self._lock_fd = os.open(self.directory / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o640)
        except OSError as exc:
            raise JournalError(f"{self.directory}: cannot write the journal there "
                               f"({exc.strerror or exc}); the box runs as user {_user()}") from exc
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(self._lock_fd)
            raise JournalError(f"{self.directory}: another process is writing this journal") from exc
        try:
            self._seq, self._prev = self._open_scan()
            self._next_seq = self.durable_seq = self._seq
            files = journal_files(self.directory)
            try:
                self._prune(_utc_day(self._clock()), files[-1][0] if files else None)
            except OSError as exc:  # a full disk must not stop the start; the next day's rotation retries
                log.error("journal: retention could not run (%s)", exc.strerror or exc)
        except OSError as exc:
            os.close(self._lock_fd)
            raise JournalError(f"{self.directory}: cannot write the journal there "
                               f"({exc.strerror or exc}); the box runs as user {_user()}") from exc
        except BaseException:
            os.close(self._lock_fd)
            raise
        if sync == "group":
            self._flusher = threading.Thread(target=self._flush_loop, name="journal-flush", daemon=True)
            self._flusher.start()

    # -- opening

    def _cut_torn(self, files) -> None:
        if not files:
            return
        path = files[-1][1]
        self.torn = _torn_in(path)
        if self.torn is not None:
            log.warning("journal: %s; cut off", self.torn)
            fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
            try:
                os.ftruncate(fd, os.fstat(fd).st_size - self.torn.size)
                os.fsync(fd)
            finally:
                os.close(fd)

    def _open_scan(self) -> tuple[int, str]:
        """Cut a torn tail; check the chain from the open hand on; move a
        damaged end of the newest file aside; return (last seq, its hash)."""
        files = journal_files(self.directory)
        self._cut_torn(files)
        try:
            anchor = _read_anchor(self.directory)
        except JournalError as exc:
            log.error("journal: %s; starting a new chain (run verify)", exc)
            anchor = None
        if not files:
            return (anchor["seq"], anchor["hash"]) if anchor else (0, GENESIS)
        index = _open_hand_file(files)
        index = len(files) - 1 if index is None else index
        kept, problems, start = _check_recent(self.directory, files, index, anchor)
        if problems:
            try:
                self._quarantine(files, kept, problems)
            except OSError as exc:
                # A full or read-only disk: nothing is moved; the chain goes on
                # from the last good line (verify names the lines left behind).
                self.damage = [{"file": p.file, "line": p.line, "kind": p.kind, "detail": p.detail,
                                "moved": False} for p in problems]
                log.error("journal: %d damaged line(s) found, the first at %s:%d; they could not be "
                          "copied aside (%s) and stay where they are (run verify)", len(problems),
                          problems[0].file, problems[0].line, exc.strerror or exc)
        if kept:
            return kept[-1].seq, kept[-1].hash
        if start is not None:
            return start.seq, start.hash
        for _day, path in reversed(files[:index]):
            if _last_line(path) is not None:
                return self._after_damage(path)
        return (anchor["seq"], anchor["hash"]) if anchor else (0, GENESIS)

    def _quarantine(self, files, kept, problems) -> None:
        """Keep a byte-for-byte copy of every line the chain does not vouch
        for, with a note of where it was; move the newest file's damaged end
        aside (the chain goes on from its last good line)."""
        newest = files[-1][1]
        good_lines = [rec.line for rec in kept if rec.file == newest.name]
        cut_line = max(good_lines, default=0)
        wanted = {(p.file, p.line): p for p in problems if p.kind != "removed"}
        qdir = self.directory / QUARANTINE_DIR
        known = set()
        for note in sorted(qdir.glob("quarantine-*.json")) if qdir.is_dir() else ():
            try:
                for item in json.loads(note.read_bytes()).get("lines", []):
                    known.add((item.get("file"), item.get("line"), item.get("sha256")))
            except (ValueError, AttributeError, OSError):
                continue
        copies: list[tuple[dict, bytes]] = []
        cut_at = None
        for _day, path in files:
            if not any(f == path.name for f, _l in wanted) and path != newest:
                continue
            offset = 0
            with open(path, "rb") as fh:
                for n, raw in enumerate(fh, 1):
                    moved = path == newest and n > cut_line
                    if moved and cut_at is None:
                        cut_at = offset
                    if (path.name, n) in wanted or moved:
                        problem = wanted.get((path.name, n))
                        line = raw[:-1] if raw.endswith(b"\n") else raw
                        note = {"file": path.name, "line": n, "offset": offset,
                                "sha256": _hash(line), "bytes": len(raw),
                                "kind": problem.kind if problem else "changed",
                                "detail": problem.detail if problem else "after the damaged end",
                                "moved": moved}
                        if moved or (path.name, n, note["sha256"]) not in known:
                            copies.append((note, raw))
                    offset += len(raw)
        if not copies:
            return
        qdir.mkdir(exist_ok=True, mode=0o750)
        stamp = _dt.datetime.fromtimestamp(self._clock(), _dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        data_path = qdir / f"quarantine-{stamp}.bin"
        note_path = qdir / f"quarantine-{stamp}.json"
        pos = 0
        for note, raw in copies:
            note["quarantine"] = f"{QUARANTINE_DIR}/{data_path.name}"
            note["quarantine_offset"] = pos
            pos += len(raw)
        # The copy is on disk before anything is moved: a cut here loses nothing.
        for path, data in ((data_path, b"".join(raw for _n, raw in copies)),
                           (note_path, json.dumps({"found": _utc_text(self._clock()),
                                                   "lines": [n for n, _r in copies]},
                                                  indent=1).encode() + b"\n")):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o640)
            try:
                self._write_fd(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
        self._sync_dir_always(qdir)
        if cut_at is not None:
            fd = os.open(newest, os.O_WRONLY | os.O_CLOEXEC)
            try:
                os.ftruncate(fd, cut_at)
                os.fsync(fd)
            finally:
                os.close(fd)
        self.damage = [n for n, _r in copies]
        for p in problems:
            if p.kind == "removed":
                self.damage.append({"file": p.file, "line": p.line, "kind": p.kind, "detail": p.detail,
                                    "moved": False})
        moved = sum(n["moved"] for n in self.damage)
        log.error("journal: %d damaged line(s) found from the open hand on, the first at %s:%d (%s); "
                  "copied to %s%s (run verify)", len(self.damage), self.damage[0]["file"],
                  self.damage[0]["line"], self.damage[0]["kind"], note_path.name,
                  f", {moved} moved out of the newest file" if moved else "")

    def damage_record(self) -> dict | None:
        """The body of a ``journal_damage`` line for :attr:`damage` (None when there is none)."""
        if not self.damage:
            return None
        return {"found": _utc_text(self._clock()), "lines": [
            {k: d[k] for k in ("file", "line", "kind", "detail", "moved", "quarantine", "sha256") if k in d}
            for d in self.damage[:100]], "count": len(self.damage)}

    @staticmethod
    def _after_damage(path: Path) -> tuple[int, str]:
        """Where to go on when an older file ends in damaged lines: after
        them, numbering them as if they were intact. The box keeps running
        and verify names the damage."""
        seq, digest = 0, GENESIS
        for rec in _iter_file(path, newest=False):
            seq = rec.seq if rec.error is None else seq + 1
            digest = rec.hash
        log.error("journal: %s ends in damaged lines; continuing after them "
                  "(run verify)", path.name)
        return seq, digest

    # -- public API

    @property
    def head(self) -> tuple[int, str]:
        """``(seq, hash)`` of the last line written: record it elsewhere to
        make the end of the journal tamper-evident too."""
        return self._seq, self._prev

    @property
    def queued(self) -> int:
        """Lines waiting for the writer thread."""
        return len(self._pending)

    def append(self, event: Event) -> int:
        """Append one event; return its ``seq``.

        With ``sync="event"`` the line is on disk when this returns. With the
        writer thread running, the event is queued and this waits for it.
        """
        if not isinstance(event, Event):
            raise TypeError(f"append() takes an Event, not {type(event).__name__}")
        if self._writer is not None:
            seq = self.submit(event)
            if seq is None:
                raise JournalError(f"{self.directory}: the journal's queue is full ({self.fault})")
            self.wait_written(seq)
            return seq
        return self._append("event", event.to_dict(), sync=True)

    def append_decision(self, decision: dict) -> int:
        """Record a decision the box gave (not fsync-ed on its own: it can be derived again)."""
        if self._writer is not None:
            return self.submit_record("decision", dict(decision))
        return self._append("decision", dict(decision), sync=False)

    def _append(self, kind: str, body: dict, *, sync: bool) -> int:
        with self._lock:
            if self._closed:
                raise JournalError(f"{self.directory}: journal is closed")
            now = self._clock()
            self._roll(_utc_day(now))
            seq = self._seq + 1
            line = json.dumps({"seq": seq, "prev": self._prev, "wall": _utc_text(now), kind: body},
                              separators=(",", ":"), ensure_ascii=True).encode("ascii")
            end = os.lseek(self._fd, 0, os.SEEK_END)
            try:
                self._write_all(line + b"\n")
            except OSError:
                # Disk full or failing: take back a partial line, so a later
                # append does not leave it torn in the middle of the file.
                self._take_back(end)
                raise
            # The line is in the file now, so the chain moves on even if the
            # fsync below fails.
            self._seq, self._prev = seq, _hash(line)
            self._next_seq = max(self._next_seq, seq)
            if not sync:
                return seq
            if self.sync == "event":
                os.fsync(self._fd)
            elif self.sync == "group":
                if self._unsynced == 0:
                    self._unsynced_since = self._monotonic()
                    self._wake.notify()
                self._unsynced += 1
                if (self._unsynced >= self.group_events
                        or self._monotonic() - self._unsynced_since >= self.group_window):
                    self._sync_locked()
            self.durable_seq = seq
            return seq

    # -- the writer thread

    def start_writer(self, on_change: Callable[[str | None], None] | None = None) -> None:
        """Write from now on in a thread of its own: :meth:`submit` queues a
        line and returns at once; the thread writes everything queued
        meanwhile with one ``write()`` and one ``fsync()`` (group commit), in
        queue order. While the disk fails it holds the lines (at most
        ``queue_lines``) and retries every ``retry_s``; ``on_change`` is called
        from that thread with the fault's text when writes start failing and
        with None when they work again."""
        if self._writer is not None:
            return
        self._on_change = on_change
        self._writer = threading.Thread(target=self._writer_loop, name="journal-writer", daemon=True)
        self._writer.start()

    def submit(self, event: Event) -> int | None:
        """Queue an event for the writer thread; return its ``seq``, or None
        when the queue is full (the loss goes into a ``gap`` line)."""
        return self.submit_record("event", event.to_dict(), t=event.t)

    def submit_record(self, kind: str, body: dict, *, t: float | None = None) -> int | None:
        """Queue a line of any kind (``decision``, ``journal_damage``...)."""
        if kind not in BODY_KINDS:
            raise ValueError(f"kind must be one of {BODY_KINDS}, not {kind!r}")
        with self._queue_cond:
            if self._closed or self._stopping:
                raise JournalError(f"{self.directory}: journal is closed")
            now = self._clock()
            if len(self._pending) >= self.queue_lines:
                self._lose(kind, now, t)
                return None
            self._put_gap_locked()
            self._next_seq += 1
            self._pending.append(_Pending(self._next_seq, kind, body, now))
            self._queue_cond.notify_all()
            return self._next_seq

    def wait_written(self, seq: int, timeout: float | None = None) -> bool:
        """Wait until the line ``seq`` is on disk; False on timeout."""
        with self._queue_cond:
            return self._queue_cond.wait_for(lambda: self.durable_seq >= seq or self._writer is None,
                                              timeout) and self.durable_seq >= seq

    def _lose(self, kind: str, now: float, t: float | None) -> None:
        gap = self._gap
        if gap is None:
            gap = self._gap = {"reason": self.fault or _QUEUE_FULL, "events": 0,
                               "other_lines": 0, "first_wall": _utc_text(now), "first_t": t}
            log.error("journal: the queue of %d lines is full; lines are being lost until the "
                      "disk takes writes again (a gap line will say how many)", self.queue_lines)
        gap["last_wall"] = _utc_text(now)
        if t is not None:
            gap["last_t"] = t
            if gap.get("first_t") is None:
                gap["first_t"] = t
        if kind == "event":
            gap["events"] += 1
            self.lost_events += 1
        else:
            gap["other_lines"] += 1
            self.lost_other += 1

    def _put_gap_locked(self) -> None:
        if self._gap is not None and len(self._pending) < self.queue_lines + 1:
            self._next_seq += 1
            self._pending.append(_Pending(self._next_seq, "gap", self._gap, self._clock()))
            self._gap = None

    def _writer_loop(self) -> None:
        since = 0.0
        while True:
            with self._queue_cond:
                while not self._pending and not self._stopping:
                    self._queue_cond.wait()
                if not self._pending:
                    return
                batch = list(self._pending)
            try:
                written = self._write_batch(batch)
            except Exception as exc:  # the writer must outlive anything; a bug is a fault too
                if not isinstance(exc, OSError):
                    log.exception("journal: the writer failed")
                reason = f"{getattr(exc, 'strerror', None) or exc}"
                with self._queue_cond:
                    give_up = self._stopping and self._monotonic() >= self._give_up_at
                    if self.fault is None:
                        self.fault, self.faults, since = reason, self.faults + 1, self._monotonic()
                        log.error("journal: cannot write %s (%s); holding lines in memory (up to %d) "
                                  "and retrying every %.1f s", self.directory, reason,
                                  self.queue_lines, self.retry_s)
                        changed = True
                    else:
                        self.fault, changed = reason, False
                    if self._gap is not None and self._gap["reason"] == _QUEUE_FULL:
                        # The queue may fill before this first failed write is known: the gap
                        # line should say why the disk refused, not only that the queue filled.
                        self._gap["reason"] = reason
                    if give_up:
                        lost = len(self._pending)
                        self._pending.clear()
                        self._queue_cond.notify_all()
                if changed:
                    self._notify(reason)
                if give_up:
                    log.error("journal: stopping with %d line(s) not written (%s)", lost, reason)
                    return
                with self._queue_cond:
                    self._queue_cond.wait(self.retry_s if not self._stopping else min(self.retry_s, 0.1))
                continue
            with self._queue_cond:
                for _ in range(written):
                    self._pending.popleft()
                self.durable_seq = batch[written - 1].seq
                self._put_gap_locked()
                self._queue_cond.notify_all()
                recovered, self.fault = self.fault, None
            if recovered is not None:
                log.warning("journal: writing again after %.1f s; the lines held meanwhile are on disk%s",
                            self._monotonic() - since,
                            f" ({self.lost_events} event(s) lost in all, see the gap line)"
                            if self.lost_events or self.lost_other else "")
                self._notify(None)

    def _notify(self, fault: str | None) -> None:
        if self._on_change is not None:
            try:
                self._on_change(fault)
            except Exception:  # the writer must go on whatever the listener does
                log.exception("journal: the storage fault listener failed")

    def _write_batch(self, batch: list[_Pending]) -> int:
        """Write the first lines of ``batch`` that go into one day's file with
        one write and one fsync; return how many. Raises OSError with the
        file as it was (a partial write is taken back)."""
        with self._lock:
            if self._closed:
                raise OSError(errno.EBADF, "the journal is closed")
            self._roll(_utc_day(batch[0].wall))
            day = self._day
            prev, chunks = self._prev, []
            count = 0
            for item in batch:
                if count and _utc_day(item.wall) > day:
                    break
                if item.seq != self._seq + count + 1:
                    raise AssertionError(f"journal: seq {item.seq} queued after {self._seq + count}")
                line = json.dumps({"seq": item.seq, "prev": prev, "wall": _utc_text(item.wall),
                                   item.kind: item.body},
                                  separators=(",", ":"), ensure_ascii=True).encode("ascii")
                chunks.append(line + b"\n")
                prev = _hash(line)
                count += 1
            end = os.lseek(self._fd, 0, os.SEEK_END)
            try:
                self._write_all(b"".join(chunks))
                if self.sync != "none":
                    os.fsync(self._fd)
            except OSError:
                self._take_back(end)
                raise
            self._seq, self._prev = batch[count - 1].seq, prev
            self._unsynced = 0
            return count

    def _take_back(self, end: int) -> None:
        try:
            os.ftruncate(self._fd, end)
        except OSError:
            pass

    def flush(self) -> None:
        """fsync whatever is written and not yet synced (any policy)."""
        with self._lock:
            if self._fd is not None:
                os.fsync(self._fd)
                self._unsynced = 0

    def entries(self, from_seq: int = 1, *, skip_damaged: bool = False) -> Iterator[Entry]:
        """Events from ``from_seq`` on; see :func:`read_entries`."""
        return read_entries(self.directory, from_seq, skip_damaged=skip_damaged)

    def open_hand_start(self) -> int | None:
        """``seq`` of the last ``new_hand``; see :func:`find_open_hand`."""
        return find_open_hand(self.directory)

    def open_hand(self) -> Iterator[Entry]:
        """The entries to replay after a restart: from the last ``new_hand``
        the chain vouches for on, leaving out lines it does not vouch for, or
        nothing if no hand was ever started (see :func:`checked_open_hand`)."""
        return iter(checked_open_hand(self.directory))

    def verify(self, *, expected_head: tuple[int, str] | None = None) -> VerifyReport:
        """:func:`verify` on this journal's directory."""
        return verify(self.directory, expected_head=expected_head)

    def close(self, *, drain_s: float = 2.0) -> None:
        """Write what is queued (trying for at most ``drain_s`` while the disk
        fails), sync and close; safe to call more than once."""
        writer = self._writer
        if writer is not None:
            with self._queue_cond:
                self._give_up_at = self._monotonic() + drain_s
                self._stopping = True
                self._queue_cond.notify_all()
            if writer is not threading.current_thread():
                writer.join(timeout=drain_s + 5)
            with self._queue_cond:
                self._writer = None
                self._queue_cond.notify_all()
        if not self._lock.acquire(timeout=drain_s + 5):
            # The writer hangs inside a write or an fsync (a dead disk): the
            # process may still exit; the kernel closes the files.
            log.error("journal: the disk does not answer; closing without the last fsync")
            return
        try:
            if self._closed:
                return
            self._closed = True
            self._wake.notify_all()
            try:
                if self._fd is not None:
                    if self.sync != "none":
                        try:
                            os.fsync(self._fd)
                        except OSError as exc:
                            log.error("journal: the last fsync failed (%s)", exc.strerror or exc)
                    os.close(self._fd)
            finally:
                self._fd = None
                os.close(self._lock_fd)
        finally:
            self._lock.release()
        if self._flusher is not None and self._flusher is not threading.current_thread():
            self._flusher.join(timeout=5)

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    _give_up_at = 0.0

    # -- internals

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]

    def _sync_locked(self) -> None:
        os.fsync(self._fd)
        self._unsynced = 0

    def _roll(self, today: _dt.date) -> None:
        """Open the file for ``today``, or keep the current one if the clock
        went back. Called with the lock held."""
        if self._fd is not None and today <= self._day:
            return
        files = journal_files(self.directory)
        if files and files[-1][0] >= today:
            # The clock is behind the newest file: keep appending there, so
            # file order stays write order.
            today = files[-1][0]
            if self._fd is not None and today == self._day:
                return
        if self._fd is not None:
            if self.sync != "none":
                os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None
            self._unsynced = 0
        previous = files[-1][0] if files else None
        path = self.directory / _file_name(today)
        created = not path.exists()
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640)
        self._day = today
        if created:
            self._sync_dir()
            self._prune(today, previous)

    def _sync_dir(self) -> None:
        if self.sync == "none":
            return
        self._sync_dir_always(self.directory)

    @staticmethod
    def _sync_dir_always(directory: Path) -> None:
        dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

    def _prune(self, today: _dt.date, previous: _dt.date | None) -> None:
        """Delete day files older than ``keep_days`` before ``today``.

        Only when ``today`` follows ``previous`` (the newest day written
        before) by at most a day: a clock that jumped ahead (a Pi has no RTC)
        must not wipe the journal. After a real gap, such as a box switched
        off for a week, the next midnight's rotation prunes instead. A file
        holding a line at or after ``keep_from_seq()`` is kept.
        """
        if previous is not None and (today - previous).days > 1:
            log.info("journal: the clock moved from %s to %s; retention waits for the "
                     "next day", previous, today)
            return
        cutoff = today - _dt.timedelta(days=self.keep_days)
        files = journal_files(self.directory)
        doomed = [(d, p) for d, p in files[:-1] if d < cutoff]
        keep_from = self.keep_from_seq() if self.keep_from_seq is not None and doomed else None
        if keep_from is not None:
            allowed = []
            for d, p in doomed:
                last = _last_line(p)
                if last is None or last.error is not None or last.seq >= keep_from:
                    break
                allowed.append((d, p))
            doomed = allowed
        if not doomed:
            return
        last = _last_line(doomed[-1][1])
        if last is not None and last.error is None:
            # Record what the oldest kept line must chain to before deleting.
            anchor = {"seq": last.seq, "hash": last.hash, "file": doomed[-1][1].name}
            tmp = self.directory / (ANCHOR_NAME + ".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o640)
            try:
                self._write_fd(fd, json.dumps(anchor).encode() + b"\n")
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.directory / ANCHOR_NAME)
        for _d, path in doomed:
            path.unlink()
            self.deleted.append(path.name)
            log.info("journal: retention deleted %s", path.name)
        self._sync_dir()

    @staticmethod
    def _write_fd(fd: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]

    def _flush_loop(self) -> None:
        """Group commit: fsync at most ``group_window`` after the oldest
        unsynced append, even when no further append comes."""
        with self._lock:
            while not self._closed:
                if self._unsynced == 0:
                    self._wake.wait()
                    continue
                due = self._unsynced_since + self.group_window - self._monotonic()
                if due > 0:
                    self._wake.wait(timeout=due)
                    continue
                if self._fd is not None:
                    try:
                        self._sync_locked()
                    except OSError:
                        log.exception("journal: fsync failed")
                        self._unsynced = 0
