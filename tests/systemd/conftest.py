"""Fixtures of the installer and docs tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.systemd.doc_shell import SYSTEM_PYTHON, TIMEOUT
from tests.systemd.test_install import missing, wheel_of
from dealerbox import __version__


@pytest.fixture(scope="session")
def house():
    """A wheelhouse with dealerbox's floor extra (what docs/floor/install.md's install command installs)."""
    if subprocess.run([SYSTEM_PYTHON, "-c", "import ensurepip, venv"], capture_output=True).returncode != 0:
        missing(f"{SYSTEM_PYTHON} cannot make venvs (Debian packages python3, python3-venv)")
    top = Path(tempfile.mkdtemp(prefix="dealerbox-floor-docs-"))
    top.chmod(0o755)
    wheel = wheel_of(__version__, top)
    wheels = top / "wheelhouse"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(wheels),
                    f"{wheel}[pi,mqtt,floor]"], check=True, capture_output=True, cwd=top, timeout=TIMEOUT)
    for path in top.rglob("*"):
        path.chmod(path.stat().st_mode | 0o044 | (0o011 if path.is_dir() else 0))
    yield top, wheels
    shutil.rmtree(top, ignore_errors=True)
