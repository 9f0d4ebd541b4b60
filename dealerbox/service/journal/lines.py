"""The journal's files and lines: names, hashing, parsing and raw reading.

Everything here reads or names; nothing writes a journal file except the
small helpers at the end (:func:`encode_line`, :func:`write_fd`,
:func:`write_new_file`, :func:`cut_file`, :func:`sync_dir`), which the writer,
retention and quarantine share. It must not follow the chain (that is
journal_verify) and may be used by every other journal module.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from dealerbox.link.chain import GENESIS, line_hash
from dealerbox.errors import EventError, JournalError
from dealerbox.domain.decisions import Decision
from dealerbox.domain.events import MAX_T, Event

SYNC_POLICIES = ("event", "group", "none")
ANCHOR_NAME = "journal-anchor.json"
LOCK_NAME = "journal.lock"
_FILE_RE = re.compile(r"^journal-(\d{4}-\d{2}-\d{2})\.jsonl$")
#: What a line can carry besides seq, prev and wall: exactly one of these objects.
BODY_KINDS = ("event", "decision", "gap", "journal_damage")
QUARANTINE_DIR = "quarantine"
#: How ``wall`` is written (UTC, to the microsecond): :func:`utc_text` writes it,
#: and :func:`parse_line` accepts nothing else (``_WALL_SHAPE`` is its shape, read
#: with a regular expression because ``strptime`` would double the cost of a line).
WALL_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_WALL_SHAPE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")
_HASH_SHAPE = re.compile(r"[0-9a-f]{64}")


def day_file_name(day: _dt.date) -> str:
    return f"journal-{day.isoformat()}.jsonl"


def utc_day(posix_seconds: float) -> _dt.date:
    return _dt.datetime.fromtimestamp(posix_seconds, _dt.timezone.utc).date()


def utc_text(posix_seconds: float) -> str:
    stamp = _dt.datetime.fromtimestamp(posix_seconds, _dt.timezone.utc)
    return stamp.strftime(WALL_FORMAT)


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



# --------------------------------------------------------------------------
# Reading lines


@dataclass(slots=True)
class JournalLine:
    """One stored line as read: where it is, its bytes and hash, and what it
    carries when it parses (``error`` says why it does not)."""

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


def parse_line(file: str, lineno: int, raw: bytes) -> JournalLine:
    """Parse one stored line (its bytes without the newline); a line that is
    not a journal line comes back with ``error`` saying why.

    This is the journal's one strict check of a line's own content: every
    field as the writer writes it and the event or decision as CONTRACT.md
    defines it. The chain walk never follows a line that fails it, so when two
    lines disagree at the end of the chain, a malformed one is the damaged one.
    """
    rec = JournalLine(file, lineno, raw, line_hash(raw))
    try:
        d = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        rec.error = f"not JSON ({getattr(exc, 'msg', exc)})"
        return rec
    except RecursionError:
        rec.error = "not a journal line: JSON nested too deeply"
        return rec
    rec.error = _line_problem(d)
    if rec.error is None:
        kind = next(k for k in BODY_KINDS if k in d)
        body = d[kind]
        rec.seq, rec.prev, rec.wall, rec.kind, rec.body = d["seq"], d["prev"], d["wall"], kind, body
        rec.event = body if kind == "event" else None
        rec.decision = body if kind == "decision" else None
    return rec


def _line_problem(d) -> str | None:
    """What makes parsed JSON not a journal line (None if nothing)."""
    if not isinstance(d, dict):
        return "not a JSON object"
    seq, prev = d.get("seq"), d.get("prev")
    kinds = [k for k in BODY_KINDS if k in d]
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        return f"'seq' must be a positive whole number, not {_short(seq)}"
    if not isinstance(prev, str) or not _HASH_SHAPE.fullmatch(prev):
        return f"'prev' must be 64 hex digits, not {_short(prev)}"
    problem = _wall_problem(d.get("wall"))
    if problem:
        return problem
    if len(kinds) != 1 or not isinstance(d[kinds[0]], dict):
        return "one of 'event', 'decision', 'gap' or 'journal_damage' must be an object"
    if kinds[0] == "event":
        try:
            Event.from_dict(d["event"])
        except EventError as exc:
            return f"not a CONTRACT.md event: {exc}"
    elif kinds[0] == "decision":
        problem = _decision_problem(d["decision"], seq)
        if problem:
            return f"not a CONTRACT.md decision: {problem}"
    return None


def _wall_problem(wall) -> str | None:
    """What makes ``wall`` not a time as :func:`utc_text` writes it (None if nothing)."""
    if not isinstance(wall, str) or not _WALL_SHAPE.fullmatch(wall):
        return f"'wall' must be a UTC time such as 2026-11-22T03:43:10.123456Z, not {_short(wall)}"
    try:
        _dt.datetime.fromisoformat(wall)  # the ranges: no month 13, no 25 o'clock
    except ValueError:
        return f"'wall' is not a real time: {_short(wall)}"
    return None


_VERDICTS = frozenset({"ok", "correct", "misdeal", "void", "floor"})
#: CONTRACT.md: "every decision carries every key".
_DECISION_KEYS = tuple(f.name for f in dataclasses.fields(Decision))


def _decision_problem(d: dict, line_seq: int) -> str | None:
    """What makes a journaled decision not one the daemon could have given (None if nothing).

    CONTRACT.md: every decision carries every key, with its type. The journal
    adds ``seq``, the line of the event that caused it (so an earlier line),
    and that event's ``id`` when it had one.
    """
    missing = [key for key in _DECISION_KEYS if key not in d]
    if missing:
        return f"{missing[0]!r} is missing"
    verdict = d["verdict"]
    if verdict not in _VERDICTS:
        return f"'verdict' must be one of {sorted(_VERDICTS)}, not {_short(verdict)}"
    irregularity = d["irregularity"]
    if irregularity is not None and not isinstance(irregularity, str):
        return f"'irregularity' must be a name or null, not {_short(irregularity)}"
    t = d["t"]
    # The comparison is false for NaN, so NaN is refused with the rest.
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= MAX_T:
        return f"'t' must be a number of seconds from 0 to 1e12, not {_short(t)}"
    for key in ("cards", "steps"):
        items = d[key]
        if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
            return f"{key!r} must be a list of strings, not {_short(items)}"
    for key in ("rule", "phase"):
        if not isinstance(d[key], str):
            return f"{key!r} must be a string, not {_short(d[key])}"
    step = d["step"]
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= len(d["steps"]):
        return f"'step' must be an index into 'steps' (0..{len(d['steps'])}), not {_short(step)}"
    seq = d.get("seq")
    if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or not 1 <= seq < line_seq):
        return f"'seq' must name an earlier journal line (1..{line_seq - 1}), not {_short(seq)}"
    ident = d.get("id")
    if isinstance(ident, bool) or not isinstance(ident, (int, str, type(None))):
        return f"'id' must be a number or a string, not {_short(ident)}"
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


def torn_in(path: Path) -> TornTail | None:
    """The torn tail at the end of ``path``, if any (see _split_torn)."""
    data, size = _tail_chunk(path)
    _body, tail = _split_torn(data)
    if not tail:
        return None
    return TornTail(path.name, _count_lines(path, size - len(tail)) + 1, len(tail))


def raw_lines(path: Path, *, newest: bool) -> Iterator[tuple[int, bytes]]:
    """``(line number, bytes without the newline)``, streamed; in the newest
    file a torn tail is left out."""
    limit = None
    if newest:
        torn = torn_in(path)
        if torn is not None:
            limit = path.stat().st_size - torn.size
    with open(path, "rb") as f:
        pos = 0
        for n, raw in enumerate(f, 1):
            if limit is not None and pos >= limit:
                break
            pos += len(raw)
            yield n, raw[:-1] if raw.endswith(b"\n") else raw


def iter_file(path: Path, *, newest: bool) -> Iterator[JournalLine]:
    for n, raw in raw_lines(path, newest=newest):
        yield parse_line(path.name, n, raw)


def read_anchor(directory: Path) -> dict | None:
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


def all_lines(directory: Path) -> Iterator[JournalLine]:
    files = journal_files(directory)
    for i, (_day, path) in enumerate(files):
        yield from iter_file(path, newest=i == len(files) - 1)



def last_line(path: Path) -> JournalLine | None:
    """The last complete line of a file (its ``line`` number is 0).

    Only bytes after the last newline are left out: a complete line that does
    not parse is returned, with its error, for the caller to judge.
    """
    data, _size = _tail_chunk(path)
    body = data[: data.rfind(b"\n") + 1]
    if not body:
        return None
    return parse_line(path.name, 0, body[:-1].rsplit(b"\n", 1)[-1])


# --------------------------------------------------------------------------
# Writing helpers shared by the writer, retention and quarantine


def encode_line(seq: int, prev: str, wall: float, kind: str, body: dict) -> bytes:
    """One journal line's bytes, without its newline (the stable format above)."""
    return json.dumps({"seq": seq, "prev": prev, "wall": utc_text(wall), kind: body},
                      separators=(",", ":"), ensure_ascii=True).encode("ascii")


def write_fd(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write only part)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_new_file(path: Path, data: bytes) -> None:
    """Create (or replace the bytes of) ``path`` with ``data``, fsync-ed."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o640)
    try:
        write_fd(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def cut_file(path: Path, size: int) -> None:
    """Cut ``path`` back to ``size`` bytes, fsync-ed."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_dir(directory: Path) -> None:
    """fsync a directory, so that the entries just made in it survive a power cut."""
    dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
