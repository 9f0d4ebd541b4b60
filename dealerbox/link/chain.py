"""The journal's chain: how one line is hashed into the next line's ``prev``.

The table writes the chain (:mod:`dealerbox.service.journal`) and the floor checks
it as lines are filed (:mod:`dealerbox.floor.collecting.filing`). Both call :func:`line_hash`,
so the two can never disagree on a line's bytes.
"""

from __future__ import annotations

import hashlib

__all__ = ["GENESIS", "line_hash"]

#: ``prev`` of the very first line of a journal: no line before it.
GENESIS = "0" * 64


def line_hash(line: bytes | str) -> str:
    """SHA-256, in hex, of one journal line as stored: its UTF-8 bytes without the newline."""
    if isinstance(line, str):
        line = line.encode("utf-8")
    return hashlib.sha256(line).hexdigest()
