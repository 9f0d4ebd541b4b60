"""Replacing a file atomically: a crash leaves the old file or the new one, never half of either."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["save_atomic"]


def save_atomic(path, text: str, *, new_mode: int = 0o640, sync: bool = True) -> None:
    """Write *text* (UTF-8) to *path* through a temporary file in the same folder and
    ``os.replace``.

    The new file keeps the old one's mode and owner. A first file gets *new_mode*
    and, when root writes it, its folder's owner: a technician runs the tools as
    root while the box runs as its own user, and the box must still read the file
    on its next reload. With *sync* the data reaches the disk before the rename.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    like = path if path.exists() else path.parent
    st = like.stat()
    mode = st.st_mode & 0o7777 if like is path else new_mode
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        if os.geteuid() == 0:
            os.fchown(fd, st.st_uid, st.st_gid)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
