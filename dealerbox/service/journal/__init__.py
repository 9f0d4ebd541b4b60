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
(:func:`checked_open_hand`). The chain never follows a line that fails
:func:`~dealerbox.service.journal.lines.parse_line`'s strict check, so at the
end of the newest file a malformed last-but-one line is blamed and the good
last line kept; only two well-formed lines that do not link are ambiguous (the
last one is then moved aside, both stay on record). The daemon records
:meth:`Journal.damage_record` as a ``journal_damage`` line.

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

Where each part lives
---------------------
This module is the :class:`Journal` facade. The line format and the file
helpers are in ``journal_lines``, following the chain in ``journal_verify``,
reading back in ``journal_read``; the writing side is split into the day file
and its fsync policy (``day_file``), the writer thread
(``journal_writer``), retention (``journal_retention``) and what opening
finds and sets aside (``journal_damage``).
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from pathlib import Path
from typing import Callable, Iterator

from dealerbox.errors import JournalError
from dealerbox.domain.events import Event
from dealerbox.service.journal.day_file import ChainFile
from dealerbox.service.journal.damage import DamageScan, damage_record
from dealerbox.service.journal.lines import (
    ANCHOR_NAME, BODY_KINDS, GENESIS, LOCK_NAME, SYNC_POLICIES, Entry, TornTail, utc_day, journal_files,
)
from dealerbox.service.journal.read import checked_open_hand, find_open_hand, read_decisions, read_entries
from dealerbox.service.journal.retention import Retention
from dealerbox.service.journal.verify import VerifyProblem, VerifyReport, verify
from dealerbox.service.journal.writer import JournalWriter

__all__ = [
    "GENESIS", "Journal", "Entry", "TornTail", "VerifyProblem", "VerifyReport",
    "verify", "read_entries", "read_decisions", "find_open_hand", "checked_open_hand",
    "journal_files", "BODY_KINDS", "ANCHOR_NAME",
]

log = logging.getLogger(__name__)


class Journal:
    """The journal of one directory, opened for append: the one object the daemon holds.

    It owns the lock that makes this process the directory's only writer and
    puts the parts together: the check on opening (:class:`DamageScan`), the
    day file and its fsync policy (:class:`ChainFile`), retention
    (:class:`Retention`) and the writer thread (:class:`JournalWriter`).

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
        _check_options(sync, group_window, group_events, keep_days, queue_lines, retry_s)
        self.directory = Path(directory)
        self.sync = sync
        self._clock = clock
        self._lock_fd = self._take_lock()
        try:
            self._retention = Retention(self.directory, int(keep_days), keep_from_seq=keep_from_seq,
                                        durable=sync != "none")
            scan = DamageScan(self.directory, clock)
            head = scan.run()
            self._prune_on_opening()
        except OSError as exc:
            os.close(self._lock_fd)
            raise self._cannot_write(exc) from exc
        except BaseException:
            os.close(self._lock_fd)
            raise
        #: The torn tail cut off when opening, or None.
        self.torn: TornTail | None = scan.torn
        #: Damage found when opening and not recorded before: one dict per
        #: problem (file, line, kind, detail, moved, quarantine). See
        #: :meth:`damage_record`.
        self.damage: list[dict] = scan.damage
        self._chain = ChainFile(self.directory, head, self._retention, sync=sync,
                                group_window=float(group_window), group_events=int(group_events),
                                monotonic=monotonic)
        self._writer = JournalWriter(self._chain, queue_lines=int(queue_lines), retry_s=float(retry_s),
                                     clock=clock, monotonic=monotonic)

    def _take_lock(self) -> int:
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o750)
            lock_fd = os.open(self.directory / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o640)
        except OSError as exc:
            raise self._cannot_write(exc) from exc
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(lock_fd)
            raise JournalError(f"{self.directory}: another process is writing this journal") from exc
        return lock_fd

    def _cannot_write(self, exc: OSError) -> JournalError:
        return JournalError(f"{self.directory}: cannot write the journal there "
                            f"({exc.strerror or exc}); the box runs as user {_user()}")

    def _prune_on_opening(self) -> None:
        files = journal_files(self.directory)
        try:
            self._retention.prune(utc_day(self._clock()), files[-1][0] if files else None)
        except OSError as exc:  # a full disk must not stop the start; the next day's rotation retries
            log.error("journal: retention could not run (%s)", exc.strerror or exc)

    # -- what the parts keep, as the journal's own attributes

    @property
    def head(self) -> tuple[int, str]:
        """``(seq, hash)`` of the last line written: record it elsewhere to
        make the end of the journal tamper-evident too."""
        return self._chain.seq, self._chain.prev

    @property
    def queued(self) -> int:
        """Lines waiting for the writer thread."""
        return self._writer.queued

    @property
    def fault(self) -> str | None:
        """Why the disk cannot be written now (the writer thread), or None."""
        return self._writer.fault

    @property
    def faults(self) -> int:
        """Storage faults (each a run of failed writes) since opening."""
        return self._writer.faults

    @property
    def lost_events(self) -> int:
        """Events lost because the queue was full while the disk failed."""
        return self._writer.lost_events

    @property
    def lost_other(self) -> int:
        """Other lines (decisions...) lost the same way."""
        return self._writer.lost_other

    @property
    def durable_seq(self) -> int:
        """The last seq known to be on disk (fsync-ed unless sync is "none")."""
        return self._writer.durable_seq

    @property
    def deleted(self) -> list[str]:
        """Day files deleted by retention since opening, oldest first."""
        return self._retention.deleted

    @property
    def keep_days(self) -> int:
        """Retention deletes day files more than this many days old."""
        return self._retention.keep_days

    def damage_record(self) -> dict | None:
        """The body of a ``journal_damage`` line for :attr:`damage` (None when there is none)."""
        return damage_record(self.damage, self._clock())

    # -- writing

    def append(self, event: Event) -> int:
        """Append one event; return its ``seq``.

        With ``sync="event"`` the line is on disk when this returns. With the
        writer thread running, the event is queued and this waits for it.
        """
        if not isinstance(event, Event):
            raise TypeError(f"append() takes an Event, not {type(event).__name__}")
        if self._writer.running:
            seq = self.submit(event)
            if seq is None:
                raise JournalError(f"{self.directory}: the journal's queue is full ({self.fault})")
            self.wait_written(seq)
            return seq
        return self._append("event", event.to_dict(), sync=True)

    def append_decision(self, decision: dict) -> int:
        """Record a decision the box gave (not fsync-ed on its own: it can be derived again)."""
        if self._writer.running:
            return self.submit_record("decision", dict(decision))
        return self._append("decision", dict(decision), sync=False)

    def _append(self, kind: str, body: dict, *, sync: bool) -> int:
        seq = self._chain.append(kind, body, self._clock(), sync=sync)
        self._writer.appended(seq, durable=sync)
        return seq

    def start_writer(self, on_change: Callable[[str | None], None] | None = None) -> None:
        """Write from now on in a thread of its own: :meth:`submit` queues a
        line and returns at once; the thread writes everything queued
        meanwhile with one ``write()`` and one ``fsync()`` (group commit), in
        queue order. While the disk fails it holds the lines (at most
        ``queue_lines``) and retries every ``retry_s``; ``on_change`` is called
        from that thread with the fault's text when writes start failing and
        with None when they work again."""
        self._writer.start(on_change)

    def submit(self, event: Event) -> int | None:
        """Queue an event for the writer thread; return its ``seq``, or None
        when the queue is full (the loss goes into a ``gap`` line)."""
        return self.submit_record("event", event.to_dict(), t=event.t)

    def submit_record(self, kind: str, body: dict, *, t: float | None = None) -> int | None:
        """Queue a line of any kind (``decision``, ``journal_damage``...)."""
        if kind not in BODY_KINDS:
            raise ValueError(f"kind must be one of {BODY_KINDS}, not {kind!r}")
        return self._writer.submit(kind, body, t)

    def wait_written(self, seq: int, timeout: float | None = None) -> bool:
        """Wait until the line ``seq`` is on disk; False on timeout."""
        return self._writer.wait_written(seq, timeout)

    def flush(self) -> None:
        """fsync whatever is written and not yet synced (any policy)."""
        self._chain.flush()

    def close(self, *, drain_s: float = 2.0) -> None:
        """Write what is queued (trying for at most ``drain_s`` while the disk
        fails), sync and close; safe to call more than once."""
        self._writer.stop(drain_s)
        if not self._chain.close(timeout=drain_s + 5):
            # The writer hangs inside a write or an fsync (a dead disk): the
            # process may still exit; the kernel closes the files.
            log.error("journal: the disk does not answer; closing without the last fsync")
            return
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- reading this journal back

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


def _check_options(sync, group_window, group_events, keep_days, queue_lines, retry_s) -> None:
    if sync not in SYNC_POLICIES:
        raise ValueError(f"sync must be one of {SYNC_POLICIES}, not {sync!r}")
    if not (group_window > 0 and group_events >= 1):
        raise ValueError("group_window must be > 0 and group_events >= 1")
    if keep_days < 1:
        raise ValueError(f"keep_days must be at least 1, not {keep_days!r}")
    if queue_lines < 2 or not retry_s > 0:
        raise ValueError("queue_lines must be at least 2 and retry_s > 0")


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return f"uid {os.geteuid()}"
