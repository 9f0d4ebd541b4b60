"""The systemd unit and the installer, checked without touching this machine.

``systemd-analyze verify`` exits 0 even when it rejects a value (it logs the
problem and ignores the line), so the unit must verify with *no output at
all*. The tools come from Debian packages: ``systemd`` (systemd-analyze) and
``shellcheck``. Missing tools fail the tests in CI and skip them elsewhere.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.systemd.support import path_without

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "dealerbox.service"
INSTALL = ROOT / "systemd" / "install.sh"
LIB = ROOT / "systemd" / "lib.sh"
EXEC_START = "/opt/dealerbox/.venv/bin/dealerbox"
DEVICES = {
    "/dev/spidev0.0", "/dev/spidev1.0", "/dev/i2c-1", "/dev/gpiochip0", "/dev/gpiochip4",
    "/dev/gpiomem", "/dev/ttyAMA0",
}
TIMEOUT = 120


def tool(name, package):
    path = shutil.which(name)
    if path is None:
        message = f"{name} is not installed (Debian package: {package})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def systemd_analyze():
    return tool("systemd-analyze", "systemd")


def unit_settings(text):
    """{(section, key): [values]} of a unit file (keys may repeat)."""
    out, section = {}, None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        out.setdefault((section, key), []).append(value)
    return out


def runnable_copy(tmp_path, text=None):
    """The unit in tmp with only ExecStart's program pointed at a stub that
    exists here: verify checks that the program is executable, and
    /opt/dealerbox is only there on an installed box."""
    text = UNIT.read_text() if text is None else text
    stub = tmp_path / "dealerbox"
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    before = f"ExecStart={EXEC_START} "
    assert text.count(before) == 1
    copy = tmp_path / "dealerbox.service"
    copy.write_text(text.replace(before, f"ExecStart={stub} "))
    return copy


def analyze(systemd_analyze, *args, cwd):
    return subprocess.run([systemd_analyze, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT, env={**os.environ, "SYSTEMD_COLORS": "0",
                                                "SYSTEMD_PAGER": "", "PAGER": "cat"})


def test_copy_differs_only_in_the_program(tmp_path):
    original = UNIT.read_text().splitlines()
    copy = runnable_copy(tmp_path).read_text().splitlines()
    changed = [(a, b) for a, b in zip(original, copy) if a != b]
    assert len(original) == len(copy) and len(changed) == 1
    assert changed[0][0] == f"ExecStart={EXEC_START} run --config /etc/dealerbox/table.toml"


def test_unit_verifies_without_a_word(tmp_path, systemd_analyze):
    result = analyze(systemd_analyze, "verify", "--man=no", str(runnable_copy(tmp_path)), cwd=tmp_path)
    assert result.stdout + result.stderr == ""
    assert result.returncode == 0


@pytest.mark.parametrize("bad", [
    ("WatchdogSec=10s", "WatchdogSec=ten"),
    ("ProtectSystem=strict", "ProtectSystem=stricct"),
    ("DevicePolicy=closed", "DevicePolicy=shut"),
])
def test_verify_check_sees_an_invalid_value(tmp_path, systemd_analyze, bad):
    """The check above is meaningful: a bad value produces output even where
    systemd-analyze still exits 0."""
    old, new = bad
    text = UNIT.read_text()
    assert text.count(old + "\n") == 1
    copy = runnable_copy(tmp_path, text.replace(old + "\n", new + "\n"))
    result = analyze(systemd_analyze, "verify", "--man=no", str(copy), cwd=tmp_path)
    assert new.split("=")[1] in result.stdout + result.stderr


def test_unit_exposure_is_at_most_3(tmp_path, systemd_analyze):
    result = analyze(systemd_analyze, "security", "--offline=yes", str(runnable_copy(tmp_path)),
                     cwd=tmp_path)
    m = re.search(r"Overall exposure level for dealerbox\.service: (\d+(?:\.\d+)?)", result.stdout)
    assert m, result.stdout + result.stderr
    assert float(m.group(1)) <= 3.0


def test_unit_has_what_the_box_needs():
    s = unit_settings(UNIT.read_text())
    svc = lambda key: s.get(("Service", key), [])  # noqa: E731
    assert svc("Type") == ["notify"]
    assert svc("WatchdogSec") and svc("Restart") == ["on-failure"]
    assert svc("User") == ["dealerbox"]
    assert set(" ".join(svc("SupplementaryGroups")).split()) == {"gpio", "spi", "i2c", "dialout"}
    assert svc("StateDirectory") == ["dealerbox"]
    assert svc("WorkingDirectory") == ["/var/lib/dealerbox"]
    assert svc("ExecStart") == [f"{EXEC_START} run --config /etc/dealerbox/table.toml"]
    assert "-HUP" in svc("ExecReload")[0] and "$MAINPID" in svc("ExecReload")[0]
    assert svc("DevicePolicy") == ["closed"]
    assert {v.split()[0] for v in svc("DeviceAllow")} - {"char-rtc"} == DEVICES
    assert svc("ProtectSystem") == ["strict"] and svc("NoNewPrivileges") == ["yes"]
    # These would hide or break the hardware: /dev nodes, /proc/cpuinfo and
    # /proc/device-tree (board detection in RPi.GPIO and gpiozero).
    assert svc("PrivateDevices") in ([], ["no"])
    assert svc("ProcSubset") in ([], ["all"])
    assert s.get(("Install", "WantedBy")) == ["multi-user.target"]


# -- install.sh, only ever with --dry-run, in a fake root

MUTATING = ["apt-get", "groupadd", "useradd", "usermod", "systemctl", "install", "python3",
            "pip", "pip3", "cp", "mv", "mkdir", "chown", "chmod", "ln", "rm", "sed", "tee",
            "touch", "raspi-config"]


def dry_run(tmp_path, *args, raspi_config=False, boot_config_text=None, model=b"Raspberry Pi 4 Model B Rev 1.5\0"):
    """Run install.sh --dry-run on a board of *model* with every command that
    could change the system replaced by a stub that records the call and fails.

    It runs in the fake root ``tmp_path/root`` (what is installed on this machine
    plays no part) and getent knows no user or group there, as on a fresh image."""
    stubs = tmp_path / "stubs"
    stubs.mkdir(exist_ok=True)
    calls = tmp_path / "calls.log"
    for name in MUTATING:
        if name == "raspi-config" and not raspi_config:
            continue
        stub = stubs / name
        stub.write_text(f'#!/bin/sh\necho "{name} $*" >> "{calls}"\nexit 1\n')
        stub.chmod(0o755)
    (stubs / "getent").write_text("#!/bin/sh\nexit 2\n")
    (stubs / "getent").chmod(0o755)
    root = fake_root(tmp_path)
    root.mkdir(exist_ok=True)
    boot = tmp_path / "config.txt"
    model_file = tmp_path / "model"
    if model is not None and not model_file.exists():
        model_file.write_bytes(model)
    if boot_config_text is not None:
        boot.write_text(boot_config_text)
    system = path_without(os.environ["PATH"], tmp_path / "system")
    env = {**os.environ, "PATH": f"{stubs}:{system}",
           "DEALERBOX_BOOT_CONFIG": str(boot), "DEALERBOX_MODEL_FILE": str(tmp_path / "model")}
    result = subprocess.run(["bash", str(INSTALL), "--dry-run", "--root", str(root), *args], capture_output=True,
                            text=True, env=env, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    ran = calls.read_text() if calls.exists() else ""
    assert list(root.iterdir()) == []
    return result, ran


def fake_root(tmp_path):
    """Where :func:`dry_run` points install.sh's ``--root``."""
    return tmp_path / "root"


def test_dry_run_says_what_it_would_do_and_does_nothing(tmp_path):
    result, ran = dry_run(tmp_path)
    assert result.returncode == 0, result.stderr
    assert ran == ""
    out = result.stdout
    root = re.escape(str(fake_root(tmp_path)))
    assert re.search(r"^\+ (useradd .*|usermod .*)--groups gpio,spi,i2c,dialout dealerbox$", out, re.M)
    for group in ("gpio", "spi", "i2c", "dialout"):
        assert re.search(rf"^(\+ groupadd --system {group}|==> group {group} exists)$", out, re.M)
    boot = tmp_path / "config.txt"
    for line in ("dtparam=spi=on", "dtparam=i2c_arm=on", "dtoverlay=spi1-1cs"):
        assert f"+ echo {line} >> {boot}" in out
    # Debian's python, not the python3 first on PATH (the stub above).
    assert re.search(rf"^\+ /usr/bin/python3 -m venv {root}/opt/dealerbox/venvs/[0-9.]+$", out, re.M)
    assert re.search(r"pip install --quiet --disable-pip-version-check \S+\\\[pi\\\]$", out, re.M)
    assert re.search(rf"/bin/dealerbox check-config --fresh-install {root}/etc/dealerbox/table.toml$", out, re.M)
    assert f"+ mv -T {fake_root(tmp_path)}/opt/dealerbox/.venv.new {fake_root(tmp_path)}/opt/dealerbox/.venv" in out
    assert f"{fake_root(tmp_path)}/etc/dealerbox/table.toml" in out
    assert re.search(rf"^\+ install -D -m 0644 \S+/systemd/dealerbox.service {root}/etc/systemd/system/dealerbox.service$",
                     out, re.M)
    assert "+ systemctl enable dealerbox.service" in out
    assert not (tmp_path / "config.txt").exists()


def test_dry_run_uses_raspi_config_when_there(tmp_path):
    result, ran = dry_run(tmp_path, raspi_config=True)
    assert result.returncode == 0, result.stderr
    assert ran == ""
    assert "+ raspi-config nonint do_spi 0" in result.stdout
    assert "+ raspi-config nonint do_i2c 0" in result.stdout


def test_dry_run_leaves_an_already_set_boot_config_alone(tmp_path):
    text = "dtparam=spi=on\ndtparam=i2c_arm=on\ndtoverlay=spi1-1cs\ndtoverlay=spi0-1cs\nenable_uart=0\n"
    result, ran = dry_run(tmp_path, boot_config_text=text)
    assert result.returncode == 0 and ran == ""
    assert ">> " + str(tmp_path / "config.txt") not in result.stdout
    assert result.stdout.count("already has") >= 5
    assert (tmp_path / "config.txt").read_text() == text


def test_dry_run_on_a_pi_5_swaps_in_rpi_lgpio(tmp_path):
    (tmp_path / "model").write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\0")
    result, ran = dry_run(tmp_path)
    assert result.returncode == 0 and ran == ""
    assert "pip uninstall --quiet --yes RPi.GPIO" in result.stdout
    assert re.search(r"pip install --quiet --disable-pip-version-check \S+\\\[lgpio\\\]$", result.stdout, re.M)


def test_dry_run_on_an_unknown_board_leaves_config_txt_alone(tmp_path):
    result, ran = dry_run(tmp_path, model=None, boot_config_text="arm_boost=1\n")
    assert result.returncode == 0 and ran == ""
    assert "config.txt left alone" in result.stdout
    assert ">> " not in result.stdout
    assert (tmp_path / "config.txt").read_text() == "arm_boost=1\n"


def test_dry_run_of_an_uninstall(tmp_path):
    result, ran = dry_run(tmp_path, "--uninstall")
    assert result.returncode == 0 and ran == ""
    assert f"kept: {fake_root(tmp_path)}/etc/dealerbox" in result.stdout


def test_unknown_argument_is_refused(tmp_path):
    result, ran = dry_run(tmp_path, "--frobnicate")
    assert result.returncode != 0 and ran == ""
    assert "unknown argument" in result.stderr


@pytest.mark.parametrize("script", [INSTALL, LIB], ids=lambda p: p.name)
def test_install_script_passes_shellcheck(script):
    # -x: the installer is checked with the lib.sh it sources, lib.sh also on its own.
    shellcheck = tool("shellcheck", "shellcheck")
    result = subprocess.run([shellcheck, "-x", str(script)], capture_output=True, text=True,
                            timeout=TIMEOUT)
    assert result.returncode == 0, result.stdout
    assert result.stdout == ""


def test_a_tool_of_this_machine_is_hidden_from_the_installers(tmp_path):
    system = tmp_path / "usr-bin"
    system.mkdir()
    for name in ("raspi-config", "awk"):
        (system / name).write_text("#!/bin/sh\n")
        (system / name).chmod(0o755)
    path = path_without(f"{tmp_path / 'none'}:{system}", tmp_path / "farm")
    first, second = path.split(":")
    assert first == str(tmp_path / "none")
    assert sorted(p.name for p in Path(second).iterdir()) == ["awk"]


def test_every_units_documentation_is_a_page_the_installers_put_there(tmp_path):
    """Each unit's Documentation= names a file that install_docs (lib.sh, run by both
    installers) puts under /opt/dealerbox: the floor's manual is a folder, docs/floor/."""
    prefix = tmp_path / "opt-dealerbox"
    subprocess.run(["bash", "-c", 'source "$1"; DRY_RUN=0 REPO="$2" PREFIX="$3"; install_docs', "_",
                    str(LIB), str(ROOT), str(prefix)], check=True, capture_output=True, timeout=TIMEOUT)
    units = sorted((ROOT / "systemd").glob("*.service")) + sorted((ROOT / "systemd").glob("*.timer"))
    named = [(unit.name, url) for unit in units for line in unit.read_text().splitlines()
             if line.startswith("Documentation=") for url in line.split("=", 1)[1].split()]
    assert {name for name, _ in named} >= {"dealerbox.service", "dealerbox-floor.service", "dealerbox-floor-web.service"}
    for name, url in named:
        assert url.startswith("file:///opt/dealerbox/"), (name, url)
        assert (prefix / url.removeprefix("file:///opt/dealerbox/")).is_file(), (name, url)
    assert (prefix / "docs/floor/install.md").is_file() and (prefix / "docs/INSTALL.md").is_file()
