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
import json
import logging
import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from ..errors import JournalError
from ..rules.events import Event
from .journal_lines import (
    ANCHOR_NAME, BODY_KINDS, Entry, GENESIS, LOCK_NAME, QUARANTINE_DIR, SYNC_POLICIES, TornTail,
    _file_name, _hash, _iter_file, _last_line, _read_anchor, _torn_in, _utc_day, _utc_text, journal_files,
)
from .journal_verify import (
    VerifyProblem, VerifyReport, verify,
)
from .journal_read import (
    _check_recent, _open_hand_file, checked_open_hand, find_open_hand, read_decisions, read_entries,
)

__all__ = [
    "GENESIS", "Journal", "Entry", "TornTail", "VerifyProblem", "VerifyReport",
    "verify", "read_entries", "read_decisions", "find_open_hand", "checked_open_hand",
    "journal_files", "BODY_KINDS",
]

log = logging.getLogger(__name__)



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
