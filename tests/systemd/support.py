"""What the installer tests share: a PATH on which this machine's own tools stay hidden.

The installers ask the system what it has (``command -v raspi-config``): on a
Raspberry Pi that is /usr/bin/raspi-config, and a test would then see another
install than the one it sets up, or run the real tool.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path

#: Tools an installer changes its course for, that a test puts on PATH itself when it wants them.
HOST_TOOLS = frozenset({"raspi-config"})


def path_without(path: str, farm: Path, hidden=HOST_TOOLS) -> str:
    """*path* (a PATH value) with each folder that holds one of *hidden* replaced by a
    folder under *farm* of symlinks to everything else in it."""
    parts = []
    for n, folder in enumerate(path.split(os.pathsep)):
        here = Path(folder)
        if not any((here / name).exists() for name in hidden):
            parts.append(folder)
            continue
        copy = farm / f"{n}{folder.replace('/', '_')}"
        copy.mkdir(parents=True, exist_ok=True)
        for entry in here.iterdir():
            if entry.name not in hidden and not (copy / entry.name).is_symlink():
                (copy / entry.name).symlink_to(entry)
        parts.append(str(copy))
    return os.pathsep.join(parts)


@contextlib.contextmanager
def floor_user_held():
    """Held while a test makes, uses and removes the system user ``dealerbox-floor`` (the floor
    installer's tests run as root, on xdist workers at once): one at a time, across processes."""
    with open(os.path.join(tempfile.gettempdir(), "dealerbox-floor-user.lock"), "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
