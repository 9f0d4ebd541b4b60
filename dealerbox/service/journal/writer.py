"""The journal's writer thread: a queue of lines written by group commit, held
and retried while the disk fails, with a ``gap`` line for what the full queue
lost (see "fsync policy" in dealerbox/service/journal/__init__.py and docs/JOURNAL.md).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Callable

from dealerbox.errors import JournalError
from dealerbox.service.journal.day_file import ChainFile, PendingLine
from dealerbox.service.journal.lines import utc_text

log = logging.getLogger("dealerbox.service.journal")

_QUEUE_FULL = "the journal's queue is full"


class JournalWriter:
    """Owns the queue between the daemon and the disk, and the thread that drains it.

    :meth:`submit` gives a line its seq and queues it at once (its own lock,
    so queueing never waits for a write in progress). Once started, the
    thread writes everything queued meanwhile to the :class:`ChainFile` with
    one write and one fsync, in queue order. While the disk fails it holds at
    most ``queue_lines`` lines and retries every ``retry_s``; what does not
    fit is counted into a ``gap`` line, queued as soon as there is room. It
    keeps the storage fault (:attr:`fault`) and the counts the daemon shows.
    """

    def __init__(self, chain: ChainFile, *, queue_lines: int, retry_s: float,
                 clock: Callable[[], float], monotonic: Callable[[], float]):
        self.chain = chain
        self.queue_lines = queue_lines
        self.retry_s = retry_s
        self._clock = clock
        self._monotonic = monotonic
        self._cond = threading.Condition(threading.Lock())
        self._pending: deque[PendingLine] = deque()
        self._gap: dict | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._give_up_at = 0.0
        self._fault_since = 0.0
        self._on_change: Callable[[str | None], None] | None = None
        self._next_seq = chain.seq
        #: Why the disk cannot be written now, or None.
        self.fault: str | None = None
        #: Storage faults (each a run of failed writes) since opening.
        self.faults = 0
        #: Lines lost because the queue was full while the disk failed.
        self.lost_events = 0
        self.lost_other = 0
        #: The last seq known to be on disk (fsync-ed unless sync is "none").
        self.durable_seq = chain.seq

    @property
    def running(self) -> bool:
        return self._thread is not None

    @property
    def queued(self) -> int:
        """Lines waiting to be written."""
        return len(self._pending)

    def appended(self, seq: int, *, durable: bool) -> None:
        """Note a line the journal appended itself, without the thread."""
        self._next_seq = max(self._next_seq, seq)
        if durable:
            self.durable_seq = seq

    def start(self, on_change: Callable[[str | None], None] | None) -> None:
        """Start the thread; ``on_change`` hears of a fault (its text) and of recovery (None)."""
        if self._thread is not None:
            return
        self._on_change = on_change
        self._thread = threading.Thread(target=self._loop, name="journal-writer", daemon=True)
        self._thread.start()

    def submit(self, kind: str, body: dict, t: float | None) -> int | None:
        """Queue a line; return its seq, or None when the queue is full (the loss goes into a gap line)."""
        with self._cond:
            if self.chain.closed or self._stopping:
                raise JournalError(f"{self.chain.directory}: journal is closed")
            now = self._clock()
            if len(self._pending) >= self.queue_lines:
                self._lose(kind, now, t)
                return None
            self._put_gap_locked()
            self._next_seq += 1
            self._pending.append(PendingLine(self._next_seq, kind, body, now))
            self._cond.notify_all()
            return self._next_seq

    def wait_written(self, seq: int, timeout: float | None = None) -> bool:
        """Wait until the line ``seq`` is on disk; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self.durable_seq >= seq or self._thread is None,
                                       timeout) and self.durable_seq >= seq

    def stop(self, drain_s: float) -> None:
        """Write what is queued, trying for at most ``drain_s`` while the disk fails, and end the thread."""
        thread = self._thread
        if thread is None:
            return
        with self._cond:
            self._give_up_at = self._monotonic() + drain_s
            self._stopping = True
            self._cond.notify_all()
        if thread is not threading.current_thread():
            thread.join(timeout=drain_s + 5)
        with self._cond:
            self._thread = None
            self._cond.notify_all()

    def _lose(self, kind: str, now: float, t: float | None) -> None:
        gap = self._gap
        if gap is None:
            gap = self._gap = {"reason": self.fault or _QUEUE_FULL, "events": 0,
                               "other_lines": 0, "first_wall": utc_text(now), "first_t": t}
            log.error("journal: the queue of %d lines is full; lines are being lost until the "
                      "disk takes writes again (a gap line will say how many)", self.queue_lines)
        gap["last_wall"] = utc_text(now)
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
            self._pending.append(PendingLine(self._next_seq, "gap", self._gap, self._clock()))
            self._gap = None

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopping:
                    self._cond.wait()
                if not self._pending:
                    return
                batch = list(self._pending)
            try:
                written = self.chain.write_batch(batch)
            except Exception as exc:  # the writer must outlive anything; a bug is a fault too
                if not isinstance(exc, OSError):
                    log.exception("journal: the writer failed")
                if self._failed(f"{getattr(exc, 'strerror', None) or exc}"):
                    return
                continue
            self._written(batch[written - 1].seq, written)

    def _failed(self, reason: str) -> bool:
        """Record a failed write and wait to retry; True when stopping gives up."""
        with self._cond:
            give_up = self._stopping and self._monotonic() >= self._give_up_at
            changed = self.fault is None
            if changed:
                self.faults, self._fault_since = self.faults + 1, self._monotonic()
                log.error("journal: cannot write %s (%s); holding lines in memory (up to %d) "
                          "and retrying every %.1f s", self.chain.directory, reason,
                          self.queue_lines, self.retry_s)
            self.fault = reason
            if self._gap is not None and self._gap["reason"] == _QUEUE_FULL:
                # The queue may fill before this first failed write is known: the gap
                # line should say why the disk refused, not only that the queue filled.
                self._gap["reason"] = reason
            if give_up:
                lost = len(self._pending)
                self._pending.clear()
                self._cond.notify_all()
        if changed:
            self._notify(reason)
        if give_up:
            log.error("journal: stopping with %d line(s) not written (%s)", lost, reason)
            return True
        with self._cond:
            self._cond.wait(self.retry_s if not self._stopping else min(self.retry_s, 0.1))
        return False

    def _written(self, last_seq: int, count: int) -> None:
        with self._cond:
            for _ in range(count):
                self._pending.popleft()
            self.durable_seq = last_seq
            self._put_gap_locked()
            self._cond.notify_all()
            recovered, self.fault = self.fault, None
        if recovered is not None:
            log.warning("journal: writing again after %.1f s; the lines held meanwhile are on disk%s",
                        self._monotonic() - self._fault_since,
                        f" ({self.lost_events} event(s) lost in all, see the gap line)"
                        if self.lost_events or self.lost_other else "")
            self._notify(None)

    def _notify(self, fault: str | None) -> None:
        if self._on_change is not None:
            try:
                self._on_change(fault)
            except Exception:  # the writer must go on whatever the listener does
                log.exception("journal: the storage fault listener failed")
