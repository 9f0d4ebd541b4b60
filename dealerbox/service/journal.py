"""The tamper-evident, append-only journal of every event the box sees.

Every event (CONTRACT.md) is appended here *before* the engine sees it, so a
crash or a power cut loses nothing the box acted on, and replaying the journal
from the start of the open hand puts the engine back in the state it had.

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
``sync="event"`` (the default): every append is written with one ``write()``
and ``fsync()``-ed before :meth:`Journal.append` returns. The daemon gives the
engine an event only after the append returned, so a power cut at any moment
loses no event the box acted on. It costs one flash write per event (see
``bench/bench_journal.py``); a table sees a few events per second, far below
what even an SD card sustains.

``sync="group"``: the fsync is shared by up to ``group_events`` events and
delayed by at most ``group_window`` seconds (a background thread enforces the
window when appends stop). A power cut can then lose the last window of events;
use it only if the disk cannot keep up. ``sync="none"`` leaves flushing to the
OS (tests, benchmarks).

A new file's directory entry is fsync-ed too, so a new day's file survives a
power cut.

A torn last line
----------------
A power cut during a write can leave the newest file ending in a partial line
(no newline, or bytes that do not parse, or zeros the file system allocated but
never filled). That line's append had not returned, so the engine never saw
the event: dropping it loses nothing the box acted on, and the reader that saw
the card will see it again. It is therefore not tampering. On opening for
append the torn tail is cut off (and fsync-ed), logged, and reported in
:attr:`Journal.torn`; :func:`verify` reports it in ``VerifyReport.torn`` and
does not count it as a problem. Only the end of the newest file can be torn:
damage anywhere else is reported as a changed line.

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
that the oldest remaining line follows what was deleted.

Reading back
------------
:func:`read_entries` (or :meth:`Journal.entries`) yields :class:`Entry`
objects from a given ``seq``; :func:`find_open_hand` returns the ``seq`` of the
last ``new_hand`` event, searching the newest file first and going back day by
day, so the daemon can replay the open hand after a crash.
"""

from __future__ import annotations

import datetime as _dt
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
    "verify", "read_entries", "find_open_hand", "journal_files",
]

log = logging.getLogger(__name__)

GENESIS = "0" * 64
SYNC_POLICIES = ("event", "group", "none")
ANCHOR_NAME = "journal-anchor.json"
LOCK_NAME = "journal.lock"
_FILE_RE = re.compile(r"^journal-(\d{4}-\d{2}-\d{2})\.jsonl$")
# How far verify looks ahead for the line a run of inserted lines skipped over.
_INSERT_LOOKAHEAD = 256


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
    line when the journal's end is missing) or ``"inserted"`` (this line was
    not in the chain).
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


def _parse(file: str, lineno: int, raw: bytes) -> _Line:
    rec = _Line(file, lineno, raw, _hash(raw))
    try:
        d = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        rec.error = f"not JSON ({getattr(exc, 'msg', exc)})"
        return rec
    if not isinstance(d, dict):
        rec.error = "not a JSON object"
        return rec
    seq, prev, event, decision = d.get("seq"), d.get("prev"), d.get("event"), d.get("decision")
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        rec.error = f"'seq' must be a positive whole number, not {seq!r}"
    elif not isinstance(prev, str) or len(prev) != 64:
        rec.error = f"'prev' must be 64 hex digits, not {prev!r}"
    elif not isinstance(event, dict) and not (event is None and isinstance(decision, dict)):
        rec.error = "'event' (or 'decision') must be an object"
    else:
        rec.seq, rec.prev, rec.event, rec.decision = seq, prev, event, decision
        wall = d.get("wall")
        rec.wall = wall if isinstance(wall, str) else None
    return rec


def _split_torn(data: bytes) -> tuple[bytes, bytes]:
    """Split a file's bytes into (complete lines, torn tail).

    The tail is whatever follows the last newline (a partial write), plus a
    last line that does not parse as a journal line or holds NUL bytes (a
    block the file system allocated but never filled).
    """
    cut = data.rfind(b"\n") + 1
    body, tail = data[:cut], data[cut:]
    if body:
        start = body.rfind(b"\n", 0, len(body) - 1) + 1
        last = body[start:-1]
        if b"\0" in last or _parse("", 0, last).error is not None:
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
    """Check the whole chain in ``directory``; never raises for damage found.

    Each problem names the file and line number where the chain breaks (see
    :class:`VerifyProblem`). A torn last line is reported in ``torn`` and is
    not a problem. ``expected_head`` is a ``(seq, hash)`` recorded elsewhere
    earlier; lines at or before it that are gone or differ are reported.
    """
    directory = Path(directory)
    files = journal_files(directory)
    report = VerifyReport(files=[p.name for _d, p in files])
    if files:
        report.torn = _torn_in(files[-1][1])
    try:
        anchor = _read_anchor(directory)
    except JournalError as exc:
        report.problems.append(VerifyProblem("changed", ANCHOR_NAME, 1, str(exc)))
        anchor = None
    if anchor is None:
        start = _Line("", 0, b"", GENESIS, seq=0)
        start_name = "the start of the journal (seq 1)"
    else:
        start = _Line(anchor.get("file", ""), 0, b"", anchor["hash"], seq=anchor["seq"])
        start_name = f"the retention anchor (seq {anchor['seq']})"
    lines = _Lookahead(_all_lines(directory))
    prev: _Line | None = start
    before: _Line | None = None  # the line prev was checked against
    first = True
    last: _Line | None = None
    problems = report.problems

    def add(kind, rec, detail):
        problems.append(VerifyProblem(kind, rec.file, rec.line, detail))

    while (cur := lines.pop()) is not None:
        report.lines += 1
        last = cur
        at_start, first = first, False
        if (at_start and anchor is not None and cur.error is None
                and cur.seq <= anchor["seq"]):
            # Retention wrote the anchor but died before deleting all it meant
            # to: these old lines are checked among themselves from here.
            prev = None
        if cur.error is None and prev is not None and _linked(prev, cur):
            before, prev = prev, cur
            continue
        if prev is None:  # nothing to check this line against: resynchronise
            if cur.error is not None:
                add("changed", cur, cur.error)
            else:
                before, prev = None, cur
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
                report.lines += 1
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
            continue
        nxt = lines.peek(0)
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
    if last is not None and last.error is None:
        report.head = (last.seq, last.hash)
    if expected_head is not None:
        _check_head(report, expected_head, directory, last)
    return report


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


def read_entries(directory, from_seq: int = 1) -> Iterator[Entry]:
    """Yield the journal's events with ``seq >= from_seq``, oldest first.

    A line that is not a valid journal line raises :class:`JournalError` naming
    the file and line: replaying past damage would give another state, so the
    caller decides (run :func:`verify`).
    """
    for rec in _records(directory, from_seq):
        if rec.error is not None:
            raise JournalError(f"{rec.file}:{rec.line}: {rec.error}")
        if rec.event is None:
            continue
        try:
            event = Event.from_dict(rec.event)
        except EventError as exc:
            raise JournalError(f"{rec.file}:{rec.line}: {exc}") from exc
        yield Entry(rec.seq, event, rec.wall or "", rec.file, rec.line)


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


# --------------------------------------------------------------------------
# Writing


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
    :param keep_from_seq: returns the oldest ``seq`` retention must keep
        (floor reporting: the first line the floor has not acknowledged).

    Opening takes an exclusive lock (one writer per directory), cuts off a
    torn last line (see :attr:`torn`) and applies retention. The journal is a
    context manager; :meth:`close` flushes, syncs and is safe to call twice.
    """

    def __init__(self, directory, *, clock: Callable[[], float] = time.time,
                 sync: str = "event", group_window: float = 0.05, group_events: int = 64,
                 keep_days: int = 90, monotonic: Callable[[], float] = time.monotonic,
                 keep_from_seq: Callable[[], int] | None = None):
        if sync not in SYNC_POLICIES:
            raise ValueError(f"sync must be one of {SYNC_POLICIES}, not {sync!r}")
        if not (group_window > 0 and group_events >= 1):
            raise ValueError("group_window must be > 0 and group_events >= 1")
        if keep_days < 1:
            raise ValueError(f"keep_days must be at least 1, not {keep_days!r}")
        self.directory = Path(directory)
        self.sync = sync
        self.group_window = float(group_window)
        self.group_events = int(group_events)
        self.keep_days = int(keep_days)
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
        #: The torn tail cut off when opening, or None.
        self.torn: TornTail | None = None
        #: Day files deleted by retention since opening, oldest first.
        self.deleted: list[str] = []
        #: Retention keeps every line from this ``seq`` on, whatever its age:
        #: floor reporting sets it to the first line the floor has not
        #: acknowledged (may be set after opening).
        self.keep_from_seq = keep_from_seq

        self.directory.mkdir(parents=True, exist_ok=True, mode=0o750)
        self._lock_fd = os.open(self.directory / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o640)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(self._lock_fd)
            raise JournalError(f"{self.directory}: another process is writing this journal") from exc
        try:
            self._seq, self._prev = self._recover()
            files = journal_files(self.directory)
            self._prune(_utc_day(self._clock()), files[-1][0] if files else None)
        except BaseException:
            os.close(self._lock_fd)
            raise
        if sync == "group":
            self._flusher = threading.Thread(target=self._flush_loop, name="journal-flush", daemon=True)
            self._flusher.start()

    # -- opening

    def _recover(self) -> tuple[int, str]:
        """Cut a torn tail off the newest file; return (last seq, its hash)."""
        files = journal_files(self.directory)
        if files:
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
        for _day, path in reversed(files):
            last = _last_line(path)
            if last is None:
                continue
            if last.error is not None:
                return self._after_damage(path)
            return last.seq, last.hash
        try:
            anchor = _read_anchor(self.directory)
        except JournalError as exc:
            log.error("journal: %s; starting a new chain (run verify)", exc)
            anchor = None
        if anchor is not None:
            return anchor["seq"], anchor["hash"]
        return 0, GENESIS

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

    def append(self, event: Event) -> int:
        """Append one event; return its ``seq``.

        With ``sync="event"`` the line is on disk when this returns.
        """
        if not isinstance(event, Event):
            raise TypeError(f"append() takes an Event, not {type(event).__name__}")
        return self._append("event", event.to_dict(), sync=True)

    def append_decision(self, decision: dict) -> int:
        """Record a decision the box gave (not fsync-ed on its own: it can be derived again)."""
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
                try:
                    os.ftruncate(self._fd, end)
                except OSError:
                    pass
                raise
            # The line is in the file now, so the chain moves on even if the
            # fsync below fails.
            self._seq, self._prev = seq, _hash(line)
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
            return seq

    def flush(self) -> None:
        """fsync whatever is written and not yet synced (any policy)."""
        with self._lock:
            if self._fd is not None:
                os.fsync(self._fd)
                self._unsynced = 0

    def entries(self, from_seq: int = 1) -> Iterator[Entry]:
        """Events from ``from_seq`` on; see :func:`read_entries`."""
        return read_entries(self.directory, from_seq)

    def open_hand_start(self) -> int | None:
        """``seq`` of the last ``new_hand``; see :func:`find_open_hand`."""
        return find_open_hand(self.directory)

    def open_hand(self) -> Iterator[Entry]:
        """The entries to replay after a restart: from the last ``new_hand``
        on, or nothing if no hand was ever started."""
        start = self.open_hand_start()
        if start is None:
            return iter(())
        return self.entries(start)

    def verify(self, *, expected_head: tuple[int, str] | None = None) -> VerifyReport:
        """:func:`verify` on this journal's directory."""
        return verify(self.directory, expected_head=expected_head)

    def close(self) -> None:
        """Sync and close; safe to call more than once."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._wake.notify_all()
            try:
                if self._fd is not None:
                    if self.sync != "none":
                        os.fsync(self._fd)
                    os.close(self._fd)
            finally:
                self._fd = None
                os.close(self._lock_fd)
        if self._flusher is not None and self._flusher is not threading.current_thread():
            self._flusher.join(timeout=5)

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

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
        dfd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

    def _prune(self, today: _dt.date, previous: _dt.date | None) -> None:
        """Delete day files older than ``keep_days`` before ``today``.

        Only when ``today`` follows ``previous`` (the newest day written
        before) by at most a day: a clock that jumped ahead (a Pi has no RTC)
        must not wipe the journal. After a real gap, such as a box switched
        off for a week, the next midnight's rotation prunes instead.
        """
        if previous is not None and (today - previous).days > 1:
            log.info("journal: the clock moved from %s to %s; retention waits for the "
                     "next day", previous, today)
            return
        cutoff = today - _dt.timedelta(days=self.keep_days)
        files = journal_files(self.directory)
        doomed = [(d, p) for d, p in files[:-1] if d < cutoff]
        if doomed and self.keep_from_seq is not None:
            keep = self.keep_from_seq()
            for i, (_d, path) in enumerate(doomed):
                tail = _last_line(path)
                if tail is None or tail.error is not None or tail.seq >= keep:
                    doomed = doomed[:i]  # this file holds lines still needed
                    break
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
