"""Retention: deleting day files older than ``keep_days``, and the anchor that
lets :func:`~dealerbox.service.journal.verify.verify` still check the oldest
file that remains (see "Retention" in dealerbox/service/journal/__init__.py).
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
from pathlib import Path
from typing import Callable

from dealerbox.service.journal.lines import ANCHOR_NAME, last_line, journal_files, sync_dir, write_new_file

log = logging.getLogger("dealerbox.service.journal")


class Retention:
    """Owns the deleting of old day files.

    It decides which files may go (older than ``keep_days``, never the newest,
    never one holding a line at or after ``keep_from_seq()``, and nothing when
    the clock jumped ahead), writes the anchor for the last line deleted
    before deleting, and keeps the names it deleted in :attr:`deleted`.
    ``durable`` says whether the directory is fsync-ed after deleting (not
    with ``sync="none"``).
    """

    def __init__(self, directory: Path, keep_days: int, *,
                 keep_from_seq: Callable[[], int | None] | None, durable: bool):
        self.directory = directory
        self.keep_days = keep_days
        self.keep_from_seq = keep_from_seq
        self.durable = durable
        #: Day files deleted since opening, oldest first.
        self.deleted: list[str] = []

    def prune(self, today: _dt.date, previous: _dt.date | None) -> None:
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
        doomed = self._doomed(today)
        if not doomed:
            return
        self._write_anchor(doomed[-1][1])
        for _d, path in doomed:
            path.unlink()
            self.deleted.append(path.name)
            log.info("journal: retention deleted %s", path.name)
        if self.durable:
            sync_dir(self.directory)

    def _doomed(self, today: _dt.date) -> list[tuple[_dt.date, Path]]:
        """The files that may be deleted today, oldest first."""
        cutoff = today - _dt.timedelta(days=self.keep_days)
        doomed = [(d, p) for d, p in journal_files(self.directory)[:-1] if d < cutoff]
        keep_from = self.keep_from_seq() if self.keep_from_seq is not None and doomed else None
        if keep_from is None:
            return doomed
        allowed = []
        for d, p in doomed:
            last = last_line(p)
            if last is None or last.error is not None or last.seq >= keep_from:
                break
            allowed.append((d, p))
        return allowed

    def _write_anchor(self, last_doomed: Path) -> None:
        """Record what the oldest kept line must chain to, before deleting."""
        last = last_line(last_doomed)
        if last is None or last.error is not None:
            return
        anchor = {"seq": last.seq, "hash": last.hash, "file": last_doomed.name}
        tmp = self.directory / (ANCHOR_NAME + ".tmp")
        write_new_file(tmp, json.dumps(anchor).encode() + b"\n")
        tmp.replace(self.directory / ANCHOR_NAME)
