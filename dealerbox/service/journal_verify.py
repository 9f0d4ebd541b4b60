"""Following the hash chain: :func:`verify` and the walk it shares with recovery.

It must only read; it names every break by file and line
(:class:`VerifyProblem`) and never repairs anything. It may be used by the
reader (recovery replays only what the chain vouches for).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ..errors import JournalError
from .journal_lines import (
    ANCHOR_NAME, GENESIS, TornTail, _INSERT_LOOKAHEAD, _Line, _all_lines, _read_anchor, _torn_in, journal_files,
)


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


