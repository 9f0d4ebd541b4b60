"""Where the data that ships with dealerbox is found: the one place that knows.

The rule profiles, message catalogs and table configs live in the top-level
``firmware_config/`` folder of the checkout, the folder a technician edits. The
build installs that folder as the package ``dealerbox.firmware_config`` (a
``package-dir`` mapping in ``pyproject.toml``), and the demo session is package
data of ``hardware_sim``. Everything is found through :mod:`importlib.resources`,
so it is read the same way from an editable checkout, an installed wheel, or a
zip on ``sys.path``.

Callers get plain :class:`pathlib.Path` objects, because they glob folders and name
files in their error messages. When the package is not on a file system (a zip),
the folder is copied out once into a temporary directory that lives as long as
the process.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import tempfile
from importlib import resources
from pathlib import Path

__all__ = ["data_dir", "demo_session", "installed_config", "user_state_dir", "is_inside_package"]

_DATA_PACKAGE = "dealerbox.firmware_config"
# The config of an installed box (systemd/install.sh writes it); used when no
# --config and no $DEALERBOX_CONFIG is given and the file exists.
INSTALLED_CONFIG = Path("/etc/dealerbox/table.toml")
CONFIG_ENV = "DEALERBOX_CONFIG"
_extracted = contextlib.ExitStack()
atexit.register(_extracted.close)


def _as_path(traversable) -> Path:
    if isinstance(traversable, Path):
        return traversable
    # Not on a file system: copy it out. (as_file takes folders only from 3.12.)
    where = Path(_extracted.enter_context(tempfile.TemporaryDirectory(prefix="dealerbox-"))) / traversable.name
    _copy_out(traversable, where)
    return where


def _copy_out(traversable, dest: Path) -> None:
    if traversable.is_dir():
        dest.mkdir()
        for child in traversable.iterdir():
            _copy_out(child, dest / child.name)
    else:
        dest.write_bytes(traversable.read_bytes())


@functools.cache
def data_dir(kind: str = "") -> Path:
    """The shipped data folder ``firmware_config/KIND`` (``rules``, ``messages``,
    ``tables``), or ``firmware_config`` itself when *kind* is empty."""
    root = resources.files(_DATA_PACKAGE)
    return _as_path(root / kind if kind else root)


@functools.cache
def demo_session() -> Path:
    """The bundled demo session (``hardware_sim/demo_session.jsonl``)."""
    return _as_path(resources.files("hardware_sim") / "demo_session.jsonl")


def installed_config(environ=os.environ) -> Path | None:
    """The table config a command uses when given none: ``$DEALERBOX_CONFIG``, else
    ``/etc/dealerbox/table.toml`` on an installed box, else None."""
    if environ.get(CONFIG_ENV):
        return Path(environ[CONFIG_ENV])
    return INSTALLED_CONFIG if INSTALLED_CONFIG.is_file() else None


def user_state_dir(environ=os.environ) -> Path:
    """Where state goes for a user's own runs of a shipped table config:
    ``$XDG_STATE_HOME/dealerbox``, by default ``~/.local/state/dealerbox``."""
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "dealerbox"


def is_inside_package(path: Path) -> bool:
    """True when *path* lies inside the installed ``dealerbox`` package, where
    nothing may be written (a shipped config's relative ``state_dir`` lands there
    when the package is installed rather than checked out)."""
    package = Path(__file__).resolve().parent
    return Path(path).resolve().is_relative_to(package)
