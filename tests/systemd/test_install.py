"""systemd/install.sh, run for real in a fake root, as a normal user.

The installer writes every file under ``--root DIR``; the system commands it
calls (apt-get, systemctl, useradd, getent, raspi-config...) are recorders
first on PATH. When the tests run as root they drop to ``nobody`` with
``setpriv``, so a path the installer forgot to put under the root fails with a
permission error instead of touching this machine. Each install builds a real
venv with ``/usr/bin/python3`` from a wheelhouse, with no index.

Wheels: the checkout's version, a newer one, and a newer one that dropped the
``tda-2019`` profile the installed table config uses (its check-config fails).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest

from dealerbox import __version__
from tests.systemd.support import path_without

ROOT = Path(__file__).resolve().parents[2]
#: What install.sh reads from its checkout ($REPO), beside itself.
INSTALLER_PARTS = ("systemd", "docs", "firmware_config/tables", "README.md", "pyproject.toml")
SYSTEM_PYTHON = "/usr/bin/python3"
TIMEOUT = 300
NOBODY = 65534
RECORDED = ("apt-get", "systemctl", "useradd", "usermod", "userdel", "groupadd")


def missing(reason: str):
    """What this machine lacks fails the tests in CI and skips them elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def sh(*argv, **kw):
    result = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=TIMEOUT,
                            stdin=subprocess.DEVNULL, **kw)
    assert result.returncode == 0, f"{argv}\n{result.stdout}\n{result.stderr}"
    return result


def wheel_of(version: str, where: Path, *, drop_profile: str | None = None) -> Path:
    """A dealerbox wheel of the checkout with *version* (and one profile less), built
    from a copy: a build writes build/ and *.egg-info beside its source, and other
    tests (on other xdist workers) build from the checkout at the same moment."""
    src = where / f"src-{version}"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in ("dealerbox", "hardware_sim", "firmware_config"):
        shutil.copytree(ROOT / part, src / part, ignore=ignore)
    for part in ("README.md", "MANIFEST.in"):
        shutil.copy(ROOT / part, src / part)
    for name, old, new in (("pyproject.toml", f'version = "{__version__}"', f'version = "{version}"'),
                           ("dealerbox/__init__.py", f'"{__version__}"', f'"{version}"')):
        text = (ROOT / name).read_text()
        assert text.count(old) == 1
        (src / name).write_text(text.replace(old, new))
    if drop_profile:
        (src / "firmware_config" / "rules" / f"{drop_profile}.toml").unlink()
    sh(sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", where, src, cwd=where)
    (wheel,) = where.glob(f"dealerbox-{version}-*.whl")
    return wheel


def readable_by_all(top: Path) -> None:
    """Every file under *top* readable, every folder open, for ``nobody``."""
    for path in [top, *top.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o044 | (0o011 if path.is_dir() else 0))


def installer_copy(checkout: Path, dest: Path) -> Path:
    """The installer and what it reads from *checkout*, copied to *dest* for all to
    read; returns the script. The tests run the copy: ``nobody`` cannot reach a
    checkout under a private folder (``mktemp -d``, a home of mode 0700)."""
    for part in INSTALLER_PARTS:
        src, target = checkout / part, dest / part
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(src, target)
    readable_by_all(dest)
    return dest / "systemd" / "install.sh"


@pytest.fixture(scope="module")
def kit():
    """Wheels, a wheelhouse and recorders in a folder ``nobody`` can read."""
    if not Path(SYSTEM_PYTHON).exists() or subprocess.run([SYSTEM_PYTHON, "-c", "import ensurepip, venv"],
                                                          capture_output=True).returncode != 0:
        missing(f"{SYSTEM_PYTHON} cannot make venvs (Debian packages python3, python3-venv)")
    as_root = os.geteuid() == 0
    if as_root and shutil.which("setpriv") is None:
        missing("running as root and setpriv (Debian package util-linux) is missing: cannot run as a normal user")
    top = Path(tempfile.mkdtemp(prefix="dealerbox-install-"))
    top.chmod(0o755)
    wheels = top / "wheels"
    wheels.mkdir()
    current = wheel_of(__version__, wheels)
    newer = wheel_of(__version__ + ".1", wheels)
    broken = wheel_of(__version__ + ".2", wheels, drop_profile="tda-2019")
    house = top / "wheelhouse"
    sh(sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", house, f"{current}[pi]", cwd=top)
    recorders = top / "recorders"
    recorders.mkdir()
    for name in RECORDED + ("getent", "raspi-config"):
        # getent answers "no such user or group": the installer then creates them.
        code = 2 if name == "getent" else 0
        (recorders / name).write_text(f'#!/bin/sh\necho "{name} $*" >> "$DEALERBOX_TEST_CALLS"\nexit {code}\n')
        (recorders / name).chmod(0o755)
    install = installer_copy(ROOT, top / "checkout")
    readable_by_all(top)
    yield {"top": top, "current": current, "newer": newer, "broken": broken, "house": house,
           "recorders": recorders, "as_root": as_root, "install": install}
    shutil.rmtree(top, ignore_errors=True)


class Box:
    """A fake root and the installer run on it."""

    def __init__(self, kit, name: str, *, model: bytes | None = None, boot_config: str | None = "",
                 raspi_config: bool = False):
        self.kit = kit
        self.root = kit["top"] / name
        self.root.mkdir()
        self.calls = self.root.parent / f"{name}-calls.log"
        self.path_dir = kit["top"] / f"{name}-bin"
        self.path_dir.mkdir()
        for recorder in kit["recorders"].iterdir():
            if recorder.name != "raspi-config" or raspi_config:
                (self.path_dir / recorder.name).symlink_to(recorder)
        if model is not None:
            (self.root / "proc" / "device-tree").mkdir(parents=True)
            (self.root / "proc" / "device-tree" / "model").write_bytes(model)
        if boot_config is not None:
            (self.root / "boot" / "firmware").mkdir(parents=True)
            (self.config_txt).write_text(boot_config)
        (kit["top"] / f"{name}-home").mkdir()
        if kit["as_root"]:
            for path in [self.root, *self.root.rglob("*"), kit["top"] / f"{name}-home"]:
                os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
            self.calls.touch()
            os.chown(self.calls, NOBODY, NOBODY)

    def put(self, relative: str, text: str) -> None:
        """Write a file under the root as the service would, owned like the rest."""
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if self.kit["as_root"]:
            for p in (path, path.parent):
                os.chown(p, NOBODY, NOBODY)

    @property
    def config_txt(self) -> Path:
        return self.root / "boot" / "firmware" / "config.txt"

    @property
    def venv(self) -> Path:
        return self.root / "opt" / "dealerbox" / ".venv"

    def install(self, *args, ok=True):
        system = path_without("/usr/bin:/bin", self.kit["top"] / f"{self.root.name}-system")
        env = {"PATH": f"{self.path_dir}:{system}", "HOME": str(self.kit["top"] / f"{self.root.name}-home"),
               "LANG": "C.UTF-8", "PIP_CONFIG_FILE": os.devnull, "PIP_NO_CACHE_DIR": "1",
               "DEALERBOX_PYTHON": SYSTEM_PYTHON, "DEALERBOX_TEST_CALLS": str(self.calls)}
        argv = ["bash", str(self.kit["install"]), "--root", str(self.root), "--wheelhouse", str(self.kit["house"]),
                *args]
        if self.kit["as_root"]:
            argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]
        result = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=TIMEOUT,
                                stdin=subprocess.DEVNULL)
        if ok:
            assert result.returncode == 0, result.stdout + result.stderr
        return result

    def ran(self) -> list[str]:
        """The recorded system commands since the last call, and forget them."""
        lines = self.calls.read_text().splitlines() if self.calls.exists() else []
        self.calls.write_text("")
        return lines

    def files(self) -> dict[str, str]:
        """Every file and symlink under the root: path -> SHA-256 (or link target)."""
        out = {}
        for path in sorted(self.root.rglob("*")):
            key = str(path.relative_to(self.root))
            if path.is_symlink():
                out[key] = "-> " + os.readlink(path)
            elif path.is_file():
                out[key] = hashlib.sha256(path.read_bytes()).hexdigest()
        return out

    def dealerbox(self, *args):
        return subprocess.run([str(self.venv / "bin" / "dealerbox"), *map(str, args)], capture_output=True,
                              text=True, timeout=TIMEOUT, cwd=self.kit["top"], stdin=subprocess.DEVNULL)


def version_in_use(box: Box) -> str:
    return os.readlink(box.venv).split("/")[-1]


def state_of(box: Box) -> dict[str, str]:
    return {k: v for k, v in box.files().items()
            if k.startswith(("var/lib/dealerbox/", "etc/dealerbox/"))}


def test_install_upgrade_uninstall(kit):
    box = Box(kit, "lifecycle", model=None)
    first = box.install("--extras", "pi", "--wheel", kit["current"])
    ran = box.ran()

    # The first install: a non-editable venv of this version, the unit, the table config.
    assert version_in_use(box) == __version__
    assert (box.root / "opt/dealerbox/venvs" / __version__ / "bin/dealerbox").is_file()
    site = subprocess.run([str(box.venv / "bin" / "python"), "-I", "-c", "import dealerbox; print(dealerbox.__file__)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert site.startswith(str(box.root / "opt/dealerbox/")) and str(ROOT) not in site
    assert not list((box.root / "opt").rglob("__editable__*"))
    assert (box.root / "etc/systemd/system/dealerbox.service").read_bytes() == \
        (ROOT / "systemd/dealerbox.service").read_bytes()
    assert (box.root / "etc/dealerbox/table.toml").read_bytes() == \
        (ROOT / "firmware_config/tables/pi4-rc522.toml").read_bytes()
    check = box.dealerbox("check-config", "--fresh-install", box.root / "etc/dealerbox/table.toml")
    assert check.returncode == 0, check.stderr
    assert "register the first deck" in check.stdout and "reboot" in check.stdout
    assert "register the first deck" in first.stdout          # the installer passed the to-do on
    assert "systemctl enable dealerbox.service" in ran and "systemctl daemon-reload" in ran
    assert any(c.startswith("useradd --system") for c in ran)
    assert not [c for c in ran if c.startswith("apt-get")]     # offline: --wheelhouse
    assert "systemctl restart dealerbox.service" not in ran
    # An unknown board: told so, config.txt untouched.
    assert "config.txt left alone" in first.stdout
    assert box.config_txt.read_text() == ""

    # The table's state, as a running box would have it.
    box.put("var/lib/dealerbox/journal/journal-2026-11-23.jsonl", '{"seq": 1, "ev": "new_hand"}\n')
    box.put("var/lib/dealerbox/decks.toml", '# a registry\n[decks.A]\nback = "blue"\n')
    with (box.root / "etc/dealerbox/table.toml").open("a") as fh:
        fh.write("# edited by the technician\n")
    state = state_of(box)
    before = box.files()

    # A second run changes nothing.
    box.install("--wheel", kit["current"])
    assert box.files() == before
    assert "systemctl restart dealerbox.service" not in box.ran()

    # An upgrade: a new venv, the symlink switched, the service restarted, the state kept.
    up = box.install("--upgrade", kit["newer"])
    assert version_in_use(box) == __version__ + ".1"
    assert box.dealerbox("--version").stdout.startswith(f"dealerbox {__version__}.1\n")
    assert "systemctl restart dealerbox.service" in box.ran()
    assert state_of(box) == state, up.stdout
    assert (box.root / "opt/dealerbox/venvs" / __version__).is_dir()   # kept for a rollback

    # An upgrade whose version refuses the installed table config: the old one stays in use.
    bad = box.install("--upgrade", kit["broken"], ok=False)
    assert bad.returncode != 0
    assert f"dealerbox {__version__}.1 stays in use" in bad.stderr
    assert "tda-2019" in bad.stdout + bad.stderr
    assert version_in_use(box) == __version__ + ".1"
    assert not (box.root / "opt/dealerbox/venvs" / (__version__ + ".2")).exists()
    assert "systemctl restart dealerbox.service" not in box.ran()
    assert state_of(box) == state
    assert box.dealerbox("--version").returncode == 0

    # Uninstall: the unit and the code go, the config, the journal and the registry stay.
    box.install("--uninstall")
    assert "systemctl disable --now dealerbox.service" in box.ran()
    assert not (box.root / "etc/systemd/system/dealerbox.service").exists()
    assert not (box.root / "opt/dealerbox").exists()
    assert state_of(box) == state
    box.install("--uninstall", "--purge")
    assert not (box.root / "etc/dealerbox").exists() and not (box.root / "var/lib/dealerbox").exists()


@pytest.mark.parametrize("model, lines", [
    (b"Raspberry Pi 5 Model B Rev 1.0\0", ["dtparam=spi=on", "dtparam=i2c_arm=on", "dtparam=uart0=on",
                                           "enable_uart=1"]),
    (b"Raspberry Pi 4 Model B Rev 1.5\0", ["dtoverlay=spi1-1cs", "dtoverlay=spi0-1cs", "enable_uart=0"]),
])
def test_each_board_gets_its_overlay_lines_once(kit, model, lines):
    pi4 = b"Pi 4" in model
    # On the Pi 4 raspi-config is there and enables SPI0 and I2C itself.
    box = Box(kit, "pi4" if pi4 else "pi5", model=model, boot_config="# the image's own\narm_boost=1\n",
              raspi_config=pi4)
    for _ in range(2):
        out = box.install("--extras", "").stdout
    text = box.config_txt.read_text()
    assert text.startswith("# the image's own\narm_boost=1\n")
    for line in lines:
        assert text.splitlines().count(line) == 1, text
    assert len(text.splitlines()) == 2 + len(lines)
    assert "already has" in out
    ran = box.ran()
    if pi4:
        assert "raspi-config nonint do_spi 0" in ran
    table = (box.root / "etc/dealerbox/table.toml").read_text()
    assert table == (ROOT / "firmware_config/tables" / ("pi4-rc522.toml" if pi4 else "pi5-pepper.toml")).read_text()
    # The deck step names a reader the installed table has: the Pi 5's only one is c1.
    reader = "board" if pi4 else "c1"
    assert f"sudo /opt/dealerbox/.venv/bin/dealerbox deck register --reader {reader} --deck A" in out
    assert "--reader board" not in out if not pi4 else "--reader c1" not in out


def test_the_installer_refuses_the_real_root_to_a_normal_user(kit):
    argv = ["bash", str(kit["install"]), "--wheelhouse", str(kit["house"])]
    if kit["as_root"]:
        argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode != 0
    assert result.stderr == "install.sh: run as root (sudo), or use --dry-run or --root DIR\n"


def test_install_md_names_no_reader_a_shipped_pi_table_lacks():
    # The guide serves every Pi table: a deck command names READER (the installer
    # prints it filled in), never one table's reader name.
    named = re.findall(r"deck (?:register|check) --reader (\w+)", (ROOT / "docs" / "INSTALL.md").read_text())
    assert named
    for table in ("pi4-rc522.toml", "pi5-pepper.toml"):
        readers = tomllib.loads((ROOT / "firmware_config" / "tables" / table).read_text())["readers"]
        assert {name for name in named if name != "READER"} <= set(readers), table


def test_the_installer_runs_from_a_checkout_under_a_private_directory(kit, tmp_path):
    # A checkout under `mktemp -d` or a 0700 home: nobody, the user the tests run the
    # installer as, cannot reach it; the copy the tests run can be reached.
    if not kit["as_root"]:
        pytest.skip("only root can run the installer as nobody")
    private = tmp_path / "home"
    private.mkdir(mode=0o700)
    checkout = private / "checkout"
    for part in INSTALLER_PARTS:
        src, dest = ROOT / part, checkout / part
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(src, dest) if src.is_dir() else shutil.copy(src, dest)
    as_nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "bash"]
    fake_root = kit["top"] / "private-dry-run"
    fake_root.mkdir()
    args = ["--dry-run", "--root", str(fake_root), "--wheelhouse", str(kit["house"])]

    def dry_run(script: Path):
        return subprocess.run([*as_nobody, str(script), *args], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})

    assert dry_run(checkout / "systemd" / "install.sh").returncode != 0        # out of nobody's reach
    copy = kit["top"] / "private-copy"
    script = installer_copy(checkout, copy)
    result = dry_run(script)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"install -D -m 0644 {copy}/firmware_config/tables/pi4-rc522.toml" in result.stdout
