"""Setting up the floor as docs/floor/install.md says, the Debian way, and a table that
reports to it.

- systemd/install-floor.sh, run as root in a fake root (``--root``) with apt-get
  and systemctl replaced by recorders: the user, the CA and the keys with the
  owners and modes mosquitto and the collector need, the conf.d snippet, the
  units, and a second run that changes nothing.
- Debian's stock /etc/mosquitto/mosquitto.conf (checked against the checksum
  dpkg recorded for it, its directives unchanged: only the path prefixes are
  moved under the fake root) with the installed snippet, started as the
  Debian unit starts it: as root, dropping to the user mosquitto. A table with
  a certificate from the installed tool, put where install.md says, connects,
  and the installed collector, run as its service user, stores its lines;
  then the table is revoked, the broker reloaded and the table kicked.
- systemd/install.sh adds the mqtt extra to a table whose config enables the
  floor, and check-config refuses such a table without paho-mqtt.
"""

from __future__ import annotations

import grp
import hashlib
import os
import pwd
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.floor.support import Client, append_lines, need, open_journal, wait_for
from tests.systemd.support import floor_user_held
from tests.systemd.test_install import Box, installer_copy, missing, sh, wheel_of
from dealerbox import __version__
from dealerbox.link.client import Identity
from dealerbox.service.uplink import floor_settings, load_table_floor
from dealerbox.service.uplink import Publisher
from dealerbox.service.config import DEFAULT_CONFIG
from dealerbox.floor.operating.broker import stop_process

ROOT = Path(__file__).resolve().parents[2]
INSTALL_FLOOR = ROOT / "systemd" / "install-floor.sh"
SYSTEM_PYTHON = "/usr/bin/python3"
STOCK_CONF = Path("/etc/mosquitto/mosquitto.conf")
DEBIAN_UNIT = Path("/lib/systemd/system/mosquitto.service")
#: The paths of Debian's mosquitto that move under the fake root; nothing else changes.
PREFIXES = ("/etc/mosquitto", "/var/lib/mosquitto", "/var/log/mosquitto", "/run/mosquitto")
SERVICE_USER = "dealerbox-floor"
TIMEOUT = 300


def under(root: Path, text: str) -> str:
    """*text* with Debian's mosquitto paths moved under *root*."""
    for prefix in PREFIXES:
        text = re.sub(rf"(?<![\w/.-]){re.escape(prefix)}(?=/|\s|$)", f"{root}{prefix}", text)
    return text


def owner_mode(path: Path) -> tuple[str, str, str]:
    st = path.stat()
    return pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid).gr_name, oct(st.st_mode & 0o7777)


def tree(root: Path) -> dict[str, tuple]:
    """Every file, link and directory under *root*: content hash (or target), owner, group, mode."""
    out = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            out[key] = ("-> " + os.readlink(path),)
        elif path.is_file():
            out[key] = (hashlib.sha256(path.read_bytes()).hexdigest(), *owner_mode(path))
        else:
            out[key] = ("dir", *owner_mode(path))
    return out


@pytest.fixture(scope="module")
def kit():
    """A dealerbox wheel of this checkout and a wheelhouse with the extras pi, mqtt and collector,
    in a directory every user can traverse (mosquitto and the service user read from it)."""
    if not Path(SYSTEM_PYTHON).exists() or subprocess.run([SYSTEM_PYTHON, "-c", "import ensurepip, venv"],
                                                          capture_output=True).returncode != 0:
        missing(f"{SYSTEM_PYTHON} cannot make venvs (Debian packages python3, python3-venv)")
    top = Path(tempfile.mkdtemp(prefix="dealerbox-floor-install-"))
    top.chmod(0o755)
    wheels = top / "wheels"
    wheels.mkdir()
    wheel = wheel_of(__version__, wheels)
    house = top / "wheelhouse"
    sh(sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", house, f"{wheel}[pi,mqtt,collector]", cwd=top)
    recorders = top / "recorders"
    recorders.mkdir()
    for name in ("apt-get", "systemctl", "useradd", "usermod", "userdel", "groupadd", "getent", "raspi-config"):
        code = 2 if name == "getent" else 0
        (recorders / name).write_text(f'#!/bin/sh\necho "{name} $*" >> "$DEALERBOX_TEST_CALLS"\nexit {code}\n')
        (recorders / name).chmod(0o755)
    # The table installer runs as a copy every user can reach (as in test_install).
    install = installer_copy(ROOT, top / "checkout")
    for path in top.rglob("*"):
        path.chmod(path.stat().st_mode | 0o044 | (0o011 if path.is_dir() else 0))
    yield {"top": top, "house": house, "recorders": recorders, "as_root": os.geteuid() == 0, "install": install}
    shutil.rmtree(top, ignore_errors=True)


def test_the_floor_installer_passes_shellcheck():
    shellcheck = need("shellcheck", "shellcheck")
    # -x: checked with the lib.sh it sources (test_units checks lib.sh on its own).
    proc = subprocess.run([shellcheck, "-x", str(INSTALL_FLOOR)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_a_dry_run_of_the_floor_installer_changes_nothing(tmp_path):
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    for name in ("apt-get", "systemctl", "useradd", "chown", "chmod", "install", "openssl", "mosquitto"):
        (stubs / name).write_text(f"#!/bin/sh\necho 'dry run ran {name}' >&2\nexit 1\n")
        (stubs / name).chmod(0o755)
    root = tmp_path / "root"
    root.mkdir()
    result = subprocess.run(["bash", str(INSTALL_FLOOR), "--dry-run", "--root", str(root), "--broker-name",
                             "floor.casino.example", "--broker-ip", "10.0.0.5"],
                            capture_output=True, text=True, timeout=120,
                            env={"PATH": f"{stubs}:/usr/bin:/bin", "LANG": "C.UTF-8"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "dry run ran" not in result.stderr
    assert list(root.iterdir()) == []
    out = result.stdout
    assert "+ apt-get install -y --no-install-recommends mosquitto openssl python3-venv fonts-dejavu-core" in out
    assert "broker floor.casino.example 127.0.0.1 10.0.0.5" in out
    assert "+ systemctl enable mosquitto.service dealerbox-floor.service dealerbox-floor-web.service" in out
    assert "+ systemctl enable --now dealerbox-broker-check.timer" in out  # the broker's health check
    assert f"{root}/etc/systemd/system/mosquitto.service.d/dealerbox.conf" in out  # and its stop bounded


def test_a_collector_the_broker_would_not_let_read_is_refused(tmp_path):
    """A collector's name needs its block in the shipped ACL: one without would connect,
    subscribe, receive nothing and file nothing, with no word said."""
    acl = (ROOT / "firmware_config/floor/acl").read_text()
    readers = re.findall(r"^user (floor-collector[\w.-]*)\ntopic read dealerbox/v1/tables/#$", acl, re.M)
    assert readers == ["floor-collector", *(f"floor-collector-{n}" for n in range(2, 10))]
    for name, ok in (("floor-collector-9", True), ("floor-collector-10", False), ("floor-collectorx", False)):
        result = subprocess.run(["bash", str(INSTALL_FLOOR), "--dry-run", "--root", str(tmp_path),
                                 "--broker-name", "localhost", "--collector", name],
                                capture_output=True, text=True, timeout=120,
                                env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"})
        assert (result.returncode == 0) == ok, result.stdout + result.stderr
        if not ok:
            (line,) = result.stderr.splitlines()
            assert f"--collector {name}: the broker's ACL" in line and "floor-collector-2 " in line, line
            assert line.endswith("floor-collector-9 only"), line


def _stock_conf() -> str:
    """Debian's mosquitto.conf as the package installed it (dpkg's checksum says so)."""
    listing = subprocess.run(["dpkg-query", "-W", "-f=${Conffiles}\n", "mosquitto"], capture_output=True,
                             text=True).stdout
    sums = dict(line.split()[:2] for line in listing.splitlines() if len(line.split()) >= 2)
    data = STOCK_CONF.read_bytes()
    if sums.get(str(STOCK_CONF)) != hashlib.md5(data).hexdigest():
        missing(f"{STOCK_CONF} is not the one the mosquitto package installed (changed on this machine)")
    return data.decode()


def _unit_lines(key: str) -> list[str]:
    return [line.split("=", 1)[1] for line in DEBIAN_UNIT.read_text().splitlines() if line.startswith(key + "=")]


def _uids(pid: int) -> set[int]:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return {int(x) for x in line.split()[1:]}
    return set()


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def test_a_bare_debian_floor_server_takes_its_first_table(kit):
    if not kit["as_root"]:
        missing("the floor installer's test runs as root (as CI does): it makes a user and chowns to mosquitto")
    for binary, package in (("mosquitto", "mosquitto"), ("mosquitto_ctrl", "mosquitto"), ("setpriv", "util-linux"),
                            ("dpkg-query", "dpkg"), ("openssl", "openssl")):
        need(binary, package)
    if not DEBIAN_UNIT.exists():
        missing(f"no {DEBIAN_UNIT} (Debian package mosquitto)")
    stock = _stock_conf()
    if not _port_free(8883):
        missing("port 8883 is in use on this machine: the shipped listener needs it")
    top = kit["top"]
    root = top / "server"
    root.mkdir()
    calls = top / "server-calls.log"
    bin_dir = top / "server-bin"
    bin_dir.mkdir()
    for name in ("apt-get", "systemctl"):   # useradd, chown and the rest run for real
        (bin_dir / name).symlink_to(kit["recorders"] / name)
    env = {"PATH": f"{bin_dir}:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(top), "LANG": "C.UTF-8",
           "PIP_CONFIG_FILE": os.devnull, "PIP_NO_CACHE_DIR": "1", "DEALERBOX_PYTHON": SYSTEM_PYTHON,
           "DEALERBOX_TEST_CALLS": str(calls)}
    with floor_user_held():
        _bare_debian_floor_server(kit, root, top, calls, env, stock)


def _bare_debian_floor_server(kit, root, top, calls, env, stock):
    made_user = subprocess.run(["getent", "passwd", SERVICE_USER], capture_output=True).returncode != 0
    procs: list[subprocess.Popen] = []

    def install():
        result = subprocess.run(["bash", str(INSTALL_FLOOR), "--root", str(root), "--wheelhouse", str(kit["house"]),
                                 "--extras", "collector", "--broker-name", "localhost"],
                                capture_output=True, text=True, env=env, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        assert result.returncode == 0, result.stdout + result.stderr
        ran = calls.read_text().splitlines() if calls.exists() else []
        calls.write_text("")
        return result, ran

    try:
        _first, ran = install()
        ca = root / "etc/mosquitto/dealerbox"
        ident = root / "etc/dealerbox/floor"
        assert owner_mode(ca) == ("root", "mosquitto", "0o750")
        assert owner_mode(ca / "broker.key") == ("root", "mosquitto", "0o640")
        for key in ("ca.key", "floor-collector.key", "floor-admin.key"):
            assert owner_mode(ca / key) == ("root", "root", "0o600"), key
        assert owner_mode(ident) == ("root", SERVICE_USER, "0o750")
        assert owner_mode(ident / "floor-collector.key") == ("root", SERVICE_USER, "0o640")
        assert (ident / "ca.crt").read_bytes() == (ca / "ca.crt").read_bytes()
        assert owner_mode(root / "var/lib/mosquitto/dealerbox-dynsec.json")[:2] == ("mosquitto", "mosquitto")
        snippet = (root / "etc/mosquitto/conf.d/dealerbox.conf").read_text()
        assert "@MULTIARCH@" not in snippet and Path(re.search(r"^plugin (\S+)", snippet, re.M).group(1)).exists()
        for unit in ("dealerbox-floor.service", "dealerbox-floor-web.service"):
            assert (root / "etc/systemd/system" / unit).read_bytes() == (ROOT / "systemd" / unit).read_bytes()
        assert (root / "etc/dealerbox/floor.toml").read_bytes() == \
            (ROOT / "firmware_config/floor/floor.toml").read_bytes()
        wrapper = (root / "usr/local/sbin/dealerbox-floor-ca").read_text()
        assert "exec /opt/dealerbox/floor/make-ca.sh /etc/mosquitto/dealerbox " in wrapper
        assert not [c for c in ran if c.startswith("apt-get")]      # offline: --wheelhouse
        assert "systemctl daemon-reload" in ran
        assert "systemctl enable mosquitto.service dealerbox-floor.service dealerbox-floor-web.service" in ran
        assert "systemctl try-restart mosquitto.service" in ran     # the new listener
        san = subprocess.run(["openssl", "x509", "-in", str(ca / "broker.crt"), "-noout", "-ext", "subjectAltName"],
                             capture_output=True, text=True, check=True).stdout
        assert "DNS:localhost" in san and "IP Address:127.0.0.1" in san

        # A second run changes nothing: no file, no owner, no mode, no restart.
        before = tree(root)
        _second, ran = install()
        assert tree(root) == before
        assert not [c for c in ran if "restart" in c or "reload" in c]

        # Debian's mosquitto.conf, untouched but for the prefixes, with the snippet it includes.
        (root / "etc/mosquitto/mosquitto.conf").write_text(under(root, stock))
        conf_d = root / "etc/mosquitto/conf.d/dealerbox.conf"
        conf_d.write_text(under(root, conf_d.read_text()))
        for line in _unit_lines("ExecStartPre"):
            subprocess.run(shlex.split(under(root, line)), check=True)
        (start,) = _unit_lines("ExecStart")
        with open(top / "mosquitto.out", "wb") as out:
            broker = subprocess.Popen(shlex.split(under(root, start)), stdout=out, stderr=out, start_new_session=True)
        procs.append(broker)
        log = root / "var/log/mosquitto/mosquitto.log"

        def listening():
            assert broker.poll() is None, f"mosquitto exited: {(top / 'mosquitto.out').read_text()} {log.read_text()}"
            try:
                socket.create_connection(("127.0.0.1", 8883), timeout=1).close()
                return True
            except OSError:
                return False

        wait_for(listening, "mosquitto listening on 8883")
        mosquitto_uid = pwd.getpwnam("mosquitto").pw_uid
        assert _uids(broker.pid) == {mosquitto_uid}, "mosquitto did not drop to its own user"

        # The table's certificate, from the installed tool, where install.md puts it on the table.
        make_ca = root / "opt/dealerbox/floor/make-ca.sh"
        sh("sh", make_ca, ca, "client", "T01")
        table = top / "table"
        floor_dir = table / "etc/dealerbox/floor"
        floor_dir.mkdir(parents=True)
        shutil.copy(ca / "ca.crt", floor_dir / "ca.crt")
        shutil.copy(ca / "T01.crt", floor_dir / "table.crt")
        shutil.copy(ca / "T01.key", floor_dir / "table.key")
        table_toml = table / "etc/dealerbox/table.toml"
        table_toml.write_text(f'[floor]\nenabled = true\ntable = "T01"\nhost = "localhost"\nport = 8883\n'
                              f'ca = "{floor_dir}/ca.crt"\ncert = "{floor_dir}/table.crt"\n'
                              f'key = "{floor_dir}/table.key"\nack_timeout_s = 3\n')

        # The installed collector, as its service user, on the installed floor.toml (its store
        # where systemd's StateDirectory= puts it, under the fake root; the web view elsewhere).
        state = root / "var/lib/dealerbox-floor"
        assert owner_mode(state) == (SERVICE_USER, SERVICE_USER, "0o750")   # the installer made it
        floor_toml = (root / "etc/dealerbox/floor.toml").read_text()
        floor_toml = floor_toml.replace('"/var/lib/dealerbox-floor/', f'"{state}/').replace("port = 8080", "port = 0")
        test_toml = root / "etc/dealerbox/floor-test.toml"
        test_toml.write_text(floor_toml)
        as_service = ["setpriv", f"--reuid={SERVICE_USER}", f"--regid={SERVICE_USER}", "--init-groups"]
        dealerbox = str(root / "opt/dealerbox/.venv/bin/dealerbox")
        collector_out = top / "collector.out"
        with open(collector_out, "wb") as out:
            collector = subprocess.Popen([*as_service, dealerbox, "floor", "collect", "--config", str(test_toml)],
                                         stdout=out, stderr=out, cwd=top)
        procs.append(collector)

        settings = load_table_floor(table_toml)
        jdir = table / "var/lib/dealerbox/journal"
        with open_journal(jdir) as journal, Publisher(settings, jdir) as pub:
            append_lines(journal, 20)
            wait_for(lambda: pub.acked == 20 or collector.poll() is not None, "T01's 20 lines acknowledged")
            assert collector.poll() is None, collector_out.read_text()

            # Revoked as security.md says: revoke, reload (the unit's ExecReload: SIGHUP), kick.
            sh("sh", make_ca, ca, "revoke", "T01")
            (reload,) = _unit_lines("ExecReload")
            assert reload == "/bin/kill -HUP $MAINPID"
            broker.send_signal(signal.SIGHUP)
            kicked = subprocess.run(["sh", str(make_ca), str(ca), "kick", "T01"], capture_output=True, text=True,
                                    timeout=60)
            assert kicked.returncode == 0, kicked.stderr
            wait_for(lambda: not pub.connected, "T01's session ended by the kick", timeout=20)
            again = Client(Identity("localhost", 8883, floor_dir / "ca.crt", floor_dir / "table.crt",
                                    floor_dir / "table.key"), "T01")
            try:
                assert not again.connect(8883, timeout=10), "a revoked certificate connected"
            finally:
                again.client.loop_stop()
            assert broker.poll() is None
        collector.send_signal(signal.SIGTERM)
        assert collector.wait(timeout=60) == 0, collector_out.read_text()
        verify = subprocess.run([*as_service, dealerbox, "floor", "verify", "--store", str(state / "floor.sqlite")],
                                capture_output=True, text=True, timeout=60, cwd=top)
        assert verify.stdout == "T01: 20 lines, chain ok\n", verify.stdout + verify.stderr
    finally:
        for proc in procs:
            stop_process(proc, timeout=20)
        if made_user:
            subprocess.run(["userdel", SERVICE_USER], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def _floor_section(table: str = "T01") -> str:
    return (f'\n[floor]\nenabled = true\ntable = "{table}"\nhost = "floor.casino.example"\n'
            'ca = "/etc/dealerbox/floor/ca.crt"\ncert = "/etc/dealerbox/floor/table.crt"\n'
            'key = "/etc/dealerbox/floor/table.key"\n')


def _imports_paho(box: Box) -> bool:
    return subprocess.run([str(box.venv / "bin" / "python"), "-c", "import paho.mqtt"],
                          capture_output=True).returncode == 0


def test_install_sh_gives_a_floor_table_the_mqtt_extra(kit):
    if kit["as_root"] and shutil.which("setpriv") is None:
        missing("running as root and setpriv (Debian package util-linux) is missing: cannot run as a normal user")
    # A table installed without the floor, whose technician turns it on later, and runs install.sh again.
    box = Box(kit, "later", model=None)
    box.install("--extras", "")
    assert not _imports_paho(box)
    with (box.root / "etc/dealerbox/table.toml").open("a") as fh:
        fh.write(_floor_section())
    refused = box.dealerbox("check-config", "--fresh-install", box.root / "etc/dealerbox/table.toml")
    assert refused.returncode == 2 and "mqtt extra" in refused.stderr
    again = box.install("--extras", "")
    assert "[floor] is enabled" in again.stdout
    assert _imports_paho(box)
    check = box.dealerbox("check-config", "--fresh-install", box.root / "etc/dealerbox/table.toml")
    assert check.returncode == 0, check.stderr

    # A table installed with the floor on from the start.
    table = kit["top"] / "floor-table.toml"
    table.write_text((ROOT / "firmware_config/tables/pi4-rc522.toml").read_text() + _floor_section())
    table.chmod(0o644)
    fresh = Box(kit, "fresh", model=None)
    out = fresh.install("--extras", "", "--table", table).stdout
    assert "with extras [mqtt]" in out
    assert _imports_paho(fresh)


NO_PAHO = """
import sys

class NoPaho:
    # paho-mqtt as if it were not installed
    def find_spec(self, name, path=None, target=None):
        if name == "paho" or name.startswith("paho."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoPaho())
from dealerbox.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_check_config_refuses_the_floor_without_paho_in_one_line(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(DEFAULT_CONFIG.read_text() + _floor_section())
    argv = [sys.executable, "-c", NO_PAHO, "check-config", "--no-devices", str(path)]
    refused = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    (line,) = refused.stderr.splitlines()
    assert line.startswith(f"{path}: floor.enabled = True: expected paho-mqtt installed")
    assert "mqtt extra" in line and "install.sh" in line
    # The same file with paho-mqtt there, or with the floor off, passes.
    assert subprocess.run(argv[:1] + ["-m", "dealerbox.cli", *argv[3:]], capture_output=True).returncode == 0
    path.write_text(DEFAULT_CONFIG.read_text() + _floor_section().replace("enabled = true", "enabled = false"))
    off = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert off.returncode == 0, off.stderr


def test_the_table_floor_example_in_the_install_page_is_whole_and_valid():
    text = (ROOT / "docs/floor/install.md").read_text()
    block = re.search(r"```toml\n(\[floor\]\n.*?)```", text, re.S)
    assert block, "docs/floor/install.md has no ```toml [floor] example"
    import tomllib
    data = tomllib.loads(block.group(1))["floor"]
    settings = floor_settings(Path("install.md"), data)
    assert settings.enabled and settings.table
    from dealerbox.options import options_of
    from dealerbox.service.uplink import FloorSettings
    keys = {k for k, _o, _d in options_of(FloorSettings)} - {"will_delay_s"}
    assert set(data) == keys
