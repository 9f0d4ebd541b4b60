"""The open day file and the head of the chain: appending lines, rotating at
UTC midnight and the fsync policy (see "fsync policy" in
dealerbox/service/journal/__init__.py).
"""

from __future__ import annotations

import datetime as _dt
import errno
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dealerbox.errors import JournalError
from dealerbox.service.journal.lines import day_file_name, line_hash, utc_day, encode_line, journal_files, sync_dir, write_fd
from dealerbox.service.journal.retention import Retention

log = logging.getLogger("dealerbox.service.journal")


@dataclass(slots=True)
class PendingLine:
    """A line waiting for the writer thread: its seq is given when it is queued."""

    seq: int
    kind: str
    body: dict
    wall: float


class ChainFile:
    """Owns the day file being appended to and the chain's head.

    It rolls to a new day's file when the clock's UTC date moves on (never
    back to an older file; a new file's directory entry is fsync-ed and
    retention runs), writes each line or batch with one ``write()`` (a partial
    write is taken back, so no torn line is left in the middle of a file),
    and fsyncs as ``sync`` says, with a flusher thread that enforces the
    group window for ``sync="group"``. All of it under one lock.
    """

    def __init__(self, directory: Path, head: tuple[int, str], retention: Retention, *,
                 sync: str, group_window: float, group_events: int,
                 monotonic: Callable[[], float]):
        self.directory = directory
        self.sync = sync
        self.group_window = group_window
        self.group_events = group_events
        self.retention = retention
        self._monotonic = monotonic
        self.seq, self.prev = head
        self.closed = False
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._fd: int | None = None
        self._day: _dt.date | None = None
        self._unsynced = 0
        self._unsynced_since = 0.0
        self._flusher: threading.Thread | None = None
        if sync == "group":
            self._flusher = threading.Thread(target=self._flush_loop, name="journal-flush", daemon=True)
            self._flusher.start()

    def append(self, kind: str, body: dict, now: float, *, sync: bool) -> int:
        """Append one line written at wall time ``now``; return its seq.

        With ``sync`` the line is made durable as the policy says; a line
        that can be derived again (a decision) waits for the next sync.
        """
        with self._lock:
            if self.closed:
                raise JournalError(f"{self.directory}: journal is closed")
            self._roll(utc_day(now))
            seq = self.seq + 1
            line = encode_line(seq, self.prev, now, kind, body)
            # Disk full or failing: a partial line is taken back, so a later
            # append does not leave it torn in the middle of the file.
            self._write_or_take_back(line + b"\n", fsync=False)
            # The line is in the file now, so the chain moves on even if the
            # fsync below fails.
            self.seq, self.prev = seq, line_hash(line)
            if sync:
                self._sync_policy()
            return seq

    def _sync_policy(self) -> None:
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

    def write_batch(self, batch: list[PendingLine]) -> int:
        """Write the first lines of ``batch`` that go into one day's file with
        one write and one fsync; return how many. Raises OSError with the
        file as it was (a partial write is taken back)."""
        with self._lock:
            if self.closed:
                raise OSError(errno.EBADF, "the journal is closed")
            self._roll(utc_day(batch[0].wall))
            prev, chunks = self.prev, []
            for item in batch:
                if chunks and utc_day(item.wall) > self._day:
                    break
                if item.seq != self.seq + len(chunks) + 1:
                    raise AssertionError(f"journal: seq {item.seq} queued after {self.seq + len(chunks)}")
                line = encode_line(item.seq, prev, item.wall, item.kind, item.body)
                chunks.append(line + b"\n")
                prev = line_hash(line)
            self._write_or_take_back(b"".join(chunks), fsync=self.sync != "none")
            self.seq, self.prev = batch[len(chunks) - 1].seq, prev
            self._unsynced = 0
            return len(chunks)

    def _write_or_take_back(self, data: bytes, *, fsync: bool) -> None:
        end = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            write_fd(self._fd, data)
            if fsync:
                os.fsync(self._fd)
        except OSError:
            try:
                os.ftruncate(self._fd, end)
            except OSError:
                pass
            raise

    def flush(self) -> None:
        """fsync whatever is written and not yet synced (any policy)."""
        with self._lock:
            if self._fd is not None:
                self._sync_locked()

    def close(self, timeout: float) -> bool:
        """Sync and close the file; False if the lock was not free within
        ``timeout`` (a write hangs on a dead disk). Safe to call twice."""
        if not self._lock.acquire(timeout=timeout):
            return False
        try:
            if self.closed:
                return True
            self.closed = True
            self._wake.notify_all()
            self._close_fd()
        finally:
            self._lock.release()
        if self._flusher is not None and self._flusher is not threading.current_thread():
            self._flusher.join(timeout=5)
        return True

    def _close_fd(self) -> None:
        if self._fd is None:
            return
        try:
            if self.sync != "none":
                try:
                    os.fsync(self._fd)
                except OSError as exc:
                    log.error("journal: the last fsync failed (%s)", exc.strerror or exc)
        finally:
            os.close(self._fd)
            self._fd = None

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
        path = self.directory / day_file_name(today)
        created = not path.exists()
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640)
        self._day = today
        if created:
            if self.sync != "none":
                sync_dir(self.directory)
            self.retention.prune(today, previous)

    def _flush_loop(self) -> None:
        """Group commit: fsync at most ``group_window`` after the oldest
        unsynced append, even when no further append comes."""
        with self._lock:
            while not self.closed:
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
