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

from dealerbox.errors import JournalError
from dealerbox.service.journal.lines import (
    ANCHOR_NAME, GENESIS, TornTail, JournalLine, all_lines, read_anchor, torn_in, journal_files,
)


# How far verify looks ahead for the line a run of inserted lines skipped over.
_INSERT_LOOKAHEAD = 256


@dataclass(frozen=True, slots=True)
class VerifyProblem:
    """A break in the chain, named by the file and line number where it shows.

    ``kind`` is ``"changed"`` (this line is not what the next line vouched
    for, or is not a journal line at all), ``"removed"`` (lines are missing
    just before this line; ``line`` is the line after the gap, or the last
    line when the journal's end is missing), ``"inserted"`` (this line was
    not in the chain) or ``"ambiguous at the end"`` (the last line does not
    follow the one before it, both are well-formed, and nothing after it says
    which of the two is genuine: the last line is named, so a forged appended
    line is blamed).
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
    def __init__(self, it: Iterator[JournalLine]):
        self._it = it
        self._buf: deque[JournalLine] = deque()

    def peek(self, i: int) -> JournalLine | None:
        while len(self._buf) <= i:
            nxt = next(self._it, None)
            if nxt is None:
                return None
            self._buf.append(nxt)
        return self._buf[i]

    def pop(self) -> JournalLine | None:
        if self._buf:
            return self._buf.popleft()
        return next(self._it, None)


def _linked(a: JournalLine, b: JournalLine) -> bool:
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
        report.torn = torn_in(files[-1][1])
    try:
        anchor = read_anchor(directory)
    except JournalError as exc:
        report.problems.append(VerifyProblem("changed", ANCHOR_NAME, 1, str(exc)))
        anchor = None
    start, start_name = start_line(anchor)
    last = None
    walk = _ChainWalk(all_lines(directory), start, start_name, anchor, report.problems)
    for rec in walk:
        last = rec
        if rec.kind == "journal_damage":
            report.damage.append(rec)
    report.lines = walk.count
    if last is not None:
        report.head = (last.seq, last.hash)
    if expected_head is not None:
        _check_head(report, expected_head, directory, last)
    return report


def start_line(anchor: dict | None) -> tuple["JournalLine", str]:
    if anchor is None:
        return JournalLine("", 0, b"", GENESIS, seq=0), "the start of the journal (seq 1)"
    return (JournalLine(anchor.get("file", ""), 0, b"", anchor["hash"], seq=anchor["seq"]),
            f"the retention anchor (seq {anchor['seq']})")


class _ChainWalk:
    """Follows the chain over a stream of lines from ``start``: iterating
    yields the lines that are in the chain, in order, and appends every break
    to ``problems``; :attr:`count` is how many lines were read.

    A line is yielded once the line before it vouches for it. A line later
    found "changed" (the line after it recorded another hash) has been
    yielded already: callers that replay lines drop the ones ``problems``
    names (see :func:`checked_lines`).
    """

    def __init__(self, lines_iter: Iterator[JournalLine], start: JournalLine | None, start_name: str,
                 anchor: dict | None, problems: list[VerifyProblem]):
        self.lines = _Lookahead(lines_iter)
        self.start, self.start_name, self.anchor = start, start_name, anchor
        self.problems = problems
        self.prev: JournalLine | None = start
        self.before: JournalLine | None = None  # the line prev was checked against
        self.count = 0

    def __iter__(self) -> Iterator[JournalLine]:
        first = True
        while (cur := self.lines.pop()) is not None:
            self.count += 1
            if (first and self.anchor is not None and cur.error is None
                    and cur.seq <= self.anchor["seq"]):
                # Retention wrote the anchor but died before deleting all it meant
                # to: these old lines are checked among themselves from here.
                self.prev = None
            first = False
            if self._step(cur):
                yield cur

    def _add(self, kind: str, rec: JournalLine, detail: str) -> None:
        self.problems.append(VerifyProblem(kind, rec.file, rec.line, detail))

    def _follow(self, cur: JournalLine, before: JournalLine | None) -> bool:
        self.before, self.prev = before, cur
        return True

    def _step(self, cur: JournalLine) -> bool:
        """Check ``cur`` against the chain so far; True if it is in the chain."""
        prev = self.prev
        if cur.error is None and prev is not None and _linked(prev, cur):
            return self._follow(cur, prev)
        if prev is None:  # nothing to check this line against: resynchronise
            if cur.error is not None:
                self._add("changed", cur, cur.error)
                return False
            return self._follow(cur, None)
        # The link prev -> cur is broken. Classify it, looking ahead.
        if self._skip_inserted(cur):
            return False
        if cur.error is not None:
            self._add("changed", cur, cur.error)
            self.prev = None
            return False
        if self.before is not None and _linked(self.before, cur):
            # prev was forged to follow its predecessor, but the real next
            # line still vouches for that predecessor, not for prev.
            self._add("inserted", prev, f"not part of the chain; {_where(self.before, self.start_name)} "
                                        f"is followed by {cur.file}:{cur.line}")
            return self._follow(cur, self.before)
        return self._unlinked(cur)

    def _skip_inserted(self, cur: JournalLine) -> bool:
        """If a line ahead follows prev, ``cur`` and the lines up to it were
        inserted: report and skip them."""
        for skip in range(_INSERT_LOOKAHEAD):
            nxt = self.lines.peek(skip)
            if nxt is None:
                return False
            if _linked(self.prev, nxt):
                break
        else:
            return False
        self._add("inserted", cur, f"not part of the chain; {_where(self.prev, self.start_name)} "
                                   f"is followed by {nxt.file}:{nxt.line}")
        for _ in range(skip):
            self.count += 1
            self._add("inserted", self.lines.pop(), "not part of the chain")
        return True

    def _unlinked(self, cur: JournalLine) -> bool:
        """Name what broke the link prev -> cur when nothing was inserted."""
        prev, nxt = self.prev, self.lines.peek(0)
        if nxt is None and prev is not self.start and cur.seq == prev.seq + 1:
            # The last line does not follow the line before it, and nothing
            # after it says which of the two is genuine. Their content cannot
            # either: the walk never follows a line that fails parse_line's
            # strict check (a malformed line before the last one was named
            # "changed" and the last line taken up after it), so both are
            # well-formed here.
            self._add("ambiguous at the end", cur,
                      f"does not follow {prev.file}:{prev.line} (its prev is not that line's hash): "
                      f"either this line was appended by someone else, or that line was changed")
            return False
        if nxt is not None and nxt.error is None and not _linked(cur, nxt):
            # Both links around cur are broken: cur itself was altered.
            self._add("changed", cur, "its seq or prev field no longer fits the lines around it")
            self.prev = None
            return False
        if prev is self.start:
            self._add("removed", cur, f"lines before this one are missing: it does not follow "
                                      f"{self.start_name} (it has seq {cur.seq})")
        elif cur.seq <= prev.seq:
            self._add("inserted", cur, f"seq {cur.seq} repeats or goes back after seq {prev.seq} "
                                       f"at {prev.file}:{prev.line}")
            return False
        elif cur.seq > prev.seq + 1:
            missing = (f"seq {prev.seq + 1}" if cur.seq == prev.seq + 2
                       else f"seq {prev.seq + 1}..{cur.seq - 1}")
            self._add("removed", cur, f"{missing} missing between {prev.file}:{prev.line} and this line")
        else:
            self._add("changed", prev, f"its hash no longer matches what {cur.file}:{cur.line} recorded")
        return self._follow(cur, None)


def checked_lines(lines_iter: Iterator[JournalLine], start: JournalLine, start_name: str,
                   anchor: dict | None) -> tuple[list[JournalLine], list[VerifyProblem]]:
    """The lines the chain vouches for (a line named by a problem left out), and the problems."""
    problems: list[VerifyProblem] = []
    kept = list(_ChainWalk(lines_iter, start, start_name, anchor, problems))
    # A "removed" problem names the genuine line after a gap: it is kept.
    bad = {(p.file, p.line) for p in problems if p.kind != "removed"}
    return [rec for rec in kept if (rec.file, rec.line) not in bad], problems


def _where(rec: JournalLine, start_name: str) -> str:
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
    for rec in all_lines(directory):
        if rec.seq == want_seq:
            if rec.hash != want_hash:
                report.problems.append(VerifyProblem(
                    "changed", rec.file, rec.line, "differs from the recorded head"))
            return


