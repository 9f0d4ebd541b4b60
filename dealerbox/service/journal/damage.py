"""What opening a journal finds and sets aside: a torn last line, and lines the
chain does not vouch for (see "A torn last line" and "Damage" in
dealerbox/service/journal/__init__.py).
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
from pathlib import Path
from typing import Callable

from dealerbox.errors import JournalError
from dealerbox.service.journal.lines import (
    GENESIS, QUARANTINE_DIR, TornTail, line_hash, iter_file, last_line, read_anchor, torn_in, utc_text,
    cut_file, journal_files, sync_dir, write_new_file,
)
from dealerbox.service.journal.read import check_recent, open_hand_file
from dealerbox.service.journal.verify import VerifyProblem

log = logging.getLogger("dealerbox.service.journal")

#: What :func:`damage_record` keeps of each damaged line.
_RECORD_KEYS = ("file", "line", "kind", "detail", "moved", "quarantine", "sha256")


class DamageScan:
    """Owns the check a journal gets when it is opened for append.

    :meth:`run` cuts a torn tail off the newest file (:attr:`torn`), follows
    the chain from the open hand's file to the end, copies every line the
    chain does not vouch for byte for byte to ``quarantine/`` with a note of
    where it was, cuts the newest file back to its last good line
    (:attr:`damage` lists what was found), and says where the chain goes on.
    It only reads and sets aside: it never rewrites a line.
    """

    def __init__(self, directory: Path, clock: Callable[[], float]):
        self.directory = directory
        self._clock = clock
        #: The torn tail cut off, or None.
        self.torn: TornTail | None = None
        #: One dict per problem found (file, line, kind, detail, moved, quarantine...).
        self.damage: list[dict] = []

    def run(self) -> tuple[int, str]:
        """Cut a torn tail; check the chain from the open hand on; move a
        damaged end of the newest file aside; return (last seq, its hash)."""
        files = journal_files(self.directory)
        self._cut_torn(files)
        try:
            anchor = read_anchor(self.directory)
        except JournalError as exc:
            log.error("journal: %s; starting a new chain (run verify)", exc)
            anchor = None
        if not files:
            return (anchor["seq"], anchor["hash"]) if anchor else (0, GENESIS)
        index = open_hand_file(files)
        kept, problems, start = check_recent(self.directory, files, index, anchor)
        if problems:
            self._set_aside(files, kept, problems)
        if kept:
            return kept[-1].seq, kept[-1].hash
        if start is not None:
            return start.seq, start.hash
        for _day, path in reversed(files[:index]):
            if last_line(path) is not None:
                return _after_damage(path)
        return (anchor["seq"], anchor["hash"]) if anchor else (0, GENESIS)

    def _cut_torn(self, files) -> None:
        if not files:
            return
        path = files[-1][1]
        self.torn = torn_in(path)
        if self.torn is not None:
            log.warning("journal: %s; cut off", self.torn)
            cut_file(path, path.stat().st_size - self.torn.size)

    def _set_aside(self, files, kept, problems: list[VerifyProblem]) -> None:
        try:
            self._quarantine(files, kept, problems)
        except OSError as exc:
            # A full or read-only disk: nothing is moved; the chain goes on
            # from the last good line (verify names the lines left behind).
            self.damage = [_unmoved(p) for p in problems]
            log.error("journal: %d damaged line(s) found, the first at %s:%d; they could not be "
                      "copied aside (%s) and stay where they are (run verify)", len(problems),
                      problems[0].file, problems[0].line, exc.strerror or exc)

    def _quarantine(self, files, kept, problems: list[VerifyProblem]) -> None:
        """Keep a byte-for-byte copy of every line the chain does not vouch
        for, with a note of where it was; move the newest file's damaged end
        aside (the chain goes on from its last good line)."""
        newest = files[-1][1]
        cut_line = max((rec.line for rec in kept if rec.file == newest.name), default=0)
        wanted = {(p.file, p.line): p for p in problems if p.kind != "removed"}
        qdir = self.directory / QUARANTINE_DIR
        copies, cut_at = _copies(files, newest, cut_line, wanted, _known_copies(qdir))
        if not copies:
            return
        note_path = self._write_copies(qdir, copies)
        if cut_at is not None:
            # The copy is on disk before anything is moved: a cut here loses nothing.
            cut_file(newest, cut_at)
        self.damage = [n for n, _r in copies] + [_unmoved(p) for p in problems if p.kind == "removed"]
        moved = sum(n["moved"] for n in self.damage)
        log.error("journal: %d damaged line(s) found from the open hand on, the first at %s:%d (%s); "
                  "copied to %s%s (run verify)", len(self.damage), self.damage[0]["file"],
                  self.damage[0]["line"], self.damage[0]["kind"], note_path.name,
                  f", {moved} moved out of the newest file" if moved else "")

    def _write_copies(self, qdir: Path, copies: list[tuple[dict, bytes]]) -> Path:
        """Write the lines and their notes to a new pair of quarantine files; return the note's path."""
        qdir.mkdir(exist_ok=True, mode=0o750)
        stamp = _dt.datetime.fromtimestamp(self._clock(), _dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        data_path = qdir / f"quarantine-{stamp}.bin"
        note_path = qdir / f"quarantine-{stamp}.json"
        pos = 0
        for note, raw in copies:
            note["quarantine"] = f"{QUARANTINE_DIR}/{data_path.name}"
            note["quarantine_offset"] = pos
            pos += len(raw)
        write_new_file(data_path, b"".join(raw for _n, raw in copies))
        write_new_file(note_path, json.dumps({"found": utc_text(self._clock()),
                                              "lines": [n for n, _r in copies]}, indent=1).encode() + b"\n")
        sync_dir(qdir)
        return note_path


def damage_record(damage: list[dict], now: float) -> dict | None:
    """The body of a ``journal_damage`` line for ``damage`` (None when there is none)."""
    if not damage:
        return None
    return {"found": utc_text(now), "lines": [
        {k: d[k] for k in _RECORD_KEYS if k in d} for d in damage[:100]], "count": len(damage)}


def _unmoved(p: VerifyProblem) -> dict:
    return {"file": p.file, "line": p.line, "kind": p.kind, "detail": p.detail, "moved": False}


def _known_copies(qdir: Path) -> set[tuple]:
    """``(file, line, sha256)`` of every line an earlier start already quarantined."""
    known = set()
    for note in sorted(qdir.glob("quarantine-*.json")) if qdir.is_dir() else ():
        try:
            for item in json.loads(note.read_bytes()).get("lines", []):
                known.add((item.get("file"), item.get("line"), item.get("sha256")))
        except (ValueError, AttributeError, OSError):
            continue
    return known


def _copies(files, newest: Path, cut_line: int, wanted: dict, known: set):
    """The lines to quarantine as ``(note, raw bytes)``, and the offset the
    newest file is cut back to (None when its end is good)."""
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
                    note = _note(path.name, n, offset, raw, wanted.get((path.name, n)), moved)
                    if moved or (path.name, n, note["sha256"]) not in known:
                        copies.append((note, raw))
                offset += len(raw)
    return copies, cut_at


def _note(file: str, n: int, offset: int, raw: bytes, problem: VerifyProblem | None, moved: bool) -> dict:
    line = raw[:-1] if raw.endswith(b"\n") else raw
    return {"file": file, "line": n, "offset": offset, "sha256": line_hash(line), "bytes": len(raw),
            "kind": problem.kind if problem else "changed",
            "detail": problem.detail if problem else "after the damaged end",
            "moved": moved}


def _after_damage(path: Path) -> tuple[int, str]:
    """Where to go on when an older file ends in damaged lines: after
    them, numbering them as if they were intact. The box keeps running
    and verify names the damage."""
    seq, digest = 0, GENESIS
    for rec in iter_file(path, newest=False):
        seq = rec.seq if rec.error is None else seq + 1
        digest = rec.hash
    log.error("journal: %s ends in damaged lines; continuing after them "
              "(run verify)", path.name)
    return seq, digest
