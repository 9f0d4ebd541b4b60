"""Reading the journal back: entries, decisions and the open hand to replay.

It must only read, and must never replay a line the chain does not vouch for
(:func:`checked_open_hand`); it may raise :class:`JournalError` on damage when
the caller did not ask to skip it.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Iterator

from dealerbox.errors import JournalError
from dealerbox.domain.events import Event
from dealerbox.service.journal.lines import (
    Entry, JournalLine, iter_file, last_line, parse_line, raw_lines, read_anchor, journal_files,
)
from dealerbox.service.journal.verify import (
    checked_lines, start_line,
)


# --------------------------------------------------------------------------
# Reading back


def _records(directory, from_seq: int) -> Iterator[JournalLine]:
    """Every line with ``seq >= from_seq`` (torn tail skipped, damaged lines included).

    Files that end before ``from_seq`` are skipped after reading only their last line.
    """
    files = journal_files(directory)
    for i, (_day, path) in enumerate(files):
        newest = i == len(files) - 1
        if not newest:
            tail = last_line(path)
            if tail is not None and tail.error is None and tail.seq < from_seq:
                continue
        for rec in iter_file(path, newest=newest):
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
        yield _entry(rec)


def _entry(rec: JournalLine) -> Entry:
    return Entry(rec.seq, Event.from_dict(rec.event), rec.wall or "", rec.file, rec.line)


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
    found = _open_hand_line(journal_files(directory))
    return None if found is None else found[1].seq


def _open_hand_line(files) -> tuple[int, JournalLine] | None:
    """The newest file (its index in ``files``) holding a well-formed
    ``new_hand`` line, and the last such line in it; None if there is none."""
    for i in range(len(files) - 1, -1, -1):
        last = deque(_new_hands(files[i][1], newest=i == len(files) - 1), maxlen=1)
        if last:
            return i, last[0]
    return None


def open_hand_file(files) -> int:
    """Index in ``files`` (not empty) of the file a check of the open hand
    starts from: the newest holding a ``new_hand`` line, else the newest."""
    found = _open_hand_line(files)
    return len(files) - 1 if found is None else found[0]


def _new_hands(path: Path, *, newest: bool) -> Iterator[JournalLine]:
    """The well-formed ``new_hand`` lines of one file, in order."""
    for n, raw in raw_lines(path, newest=newest):
        if b"new_hand" not in raw:  # skip parsing the many other lines
            continue
        rec = parse_line(path.name, n, raw)
        if rec.error is None and rec.event is not None and rec.event.get("ev") == "new_hand":
            yield rec


def check_recent(directory: Path, files, index: int, anchor: dict | None):
    """Follow the chain from ``files[index]`` to the end.

    Returns ``(kept lines, problems, start line or None)``: the start is the
    last line of the file before (what the first checked line must follow),
    None when it cannot be trusted (then the chain picks up at the first
    well-formed line).
    """
    if index == 0:
        start, start_name = start_line(anchor)
    else:
        before = files[index - 1][1]
        last = last_line(before)
        if last is not None and last.error is None:
            start, start_name = last, f"the last line of {before.name}"
        else:
            start, start_name = None, ""

    def lines():
        for i in range(index, len(files)):
            yield from iter_file(files[i][1], newest=i == len(files) - 1)

    kept, problems = checked_lines(lines(), start, start_name, anchor if index == 0 else None)
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
        anchor = read_anchor(directory)
    except JournalError:
        anchor = None
    for first in (open_hand_file(files), 0):
        kept, _problems, _start = check_recent(directory, files, first, anchor)
        starts = [i for i, rec in enumerate(kept) if rec.event is not None and rec.event.get("ev") == "new_hand"]
        if starts:
            return [_entry(rec) for rec in kept[starts[-1]:] if rec.event is not None]
        if first == 0:
            break
    return []

