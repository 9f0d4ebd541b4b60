"""FLOOR.md's and GROUP.md's install commands, taken from the docs as written (so the
docs and this test cannot drift), run on a root shell in a fake root.

What the test changes, and only that:
- ``--root`` and ``--wheelhouse`` are added to each ``install-floor.sh`` line (a fake
  root; no package index), and the paths of the installed system (``/etc/dealerbox``,
  ``/etc/mosquitto``, ``/opt/dealerbox``, ``/var/lib/...``, the checkout's
  ``/usr/local/src/dealerbox``) are moved under the fake root, in the commands and in
  the installed ``dealerbox-floor`` and ``dealerbox-floor-ca`` tools;
- ``apt-get``, ``git`` and ``systemctl`` are recorders;
- the first ``python3`` on PATH is not Debian's: it fails loudly, so an installer that
  made its venv with it, or a tool that ran it, fails the test.

Then the three collectors are started from the installed units as systemd would (each
``ExecStart`` of ``dealerbox-floor.service`` and of ``dealerbox-floor-collector@.service``
with its instance, as the unit's ``User=``), on Debian's mosquitto with the installed
snippet, and a table's lines are stored once.
"""

from __future__ import annotations

import os
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

from tests.floor.support import append_lines, need, open_journal, wait_for
from tests.systemd.support import floor_user_held
from tests.systemd.test_install import missing, wheel_of
from tests.systemd.test_install_floor import _stock_conf, _unit_lines, owner_mode, DEBIAN_UNIT
from dealerbox import __version__
from dealerbox.service.uplink import Publisher, load_table_floor
from dealerbox.floor.broker import stop_process

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SERVICE_USER = "dealerbox-floor"
SYSTEM_PYTHON = "/usr/bin/python3"
CHECKOUT = "/usr/local/src/dealerbox"
#: The installed system's folders, moved under the fake root.
MOVED = ("/etc/dealerbox", "/etc/mosquitto", "/opt/dealerbox", "/var/lib/dealerbox-floor", "/var/lib/mosquitto",
         "/var/log/mosquitto", "/run/mosquitto", "/etc/systemd/system")
TIMEOUT = 600


def section(doc: str, title: str) -> str:
    """The text under the heading *title* (any level) up to the next heading of its level or higher."""
    lines = (DOCS / doc).read_text(encoding="utf-8").split("\n")
    start = next(n for n, line in enumerate(lines) if re.fullmatch(rf"#+ {re.escape(title)}", line))
    level = len(lines[start].split(" ")[0])
    fenced = False
    for end in range(start + 1, len(lines)):
        if lines[end].lstrip().startswith("```"):
            fenced = not fenced
        heading = re.match(r"(#+) ", lines[end])
        if not fenced and heading and len(heading.group(1)) <= level:
            break
    else:
        end = len(lines)
    return "\n".join(lines[start:end]) + "\n"


def sh_blocks(doc: str, title: str) -> list[list[str]]:
    """The ```sh blocks of a section, each as its command lines (continuations joined)."""
    out = []
    for block in re.findall(r"^ *```sh\n(.*?)^ *```", section(doc, title), re.S | re.M):
        text = re.sub(r"\\\n\s*", "", "\n".join(line.strip() for line in block.splitlines()))
        out.append([line for line in text.splitlines() if line and not line.startswith("#")])
    return out


def moved(root: Path, text: str) -> str:
    """*text* with the installed system's paths under *root*."""
    text = text.replace(CHECKOUT, str(ROOT))
    for prefix in MOVED:
        text = re.sub(rf"(?<![\w/.-]){re.escape(prefix)}(?=/|\s|$|\"|')", f"{root}{prefix}", text)
    return text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def house():
    """A wheelhouse with dealerbox's floor extra (what FLOOR.md's install command installs)."""
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


class Shell:
    """A root shell that runs the docs' lines in the fake root, and what it ran."""

    def __init__(self, top: Path, wheels: Path, name: str = "root"):
        self.top, self.wheels = top, wheels
        self.root = top / name
        self.root.mkdir()
        self.calls = top / f"{name}-calls.log"
        self.bin = top / f"{name}-bin"
        self.tools = top / f"{name}-tools"     # the installed tools, their paths moved under the root
        for folder in (self.bin, self.tools):
            folder.mkdir()
        for name in ("apt-get", "systemctl", "git", "journalctl"):
            (self.bin / name).write_text(f'#!/bin/sh\necho "{name} $*" >> "{self.calls}"\n')
        # Not Debian's python3, first on PATH: a venv made with it would not do; used at all, it says so.
        (self.bin / "python3").write_text("#!/bin/sh\necho 'the python3 first on PATH was used' >&2\nexit 97\n")
        for path in self.bin.iterdir():
            path.chmod(0o755)
        self.env = {"PATH": f"{self.bin}:{self.tools}:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(top),
                    "LANG": "C.UTF-8", "PIP_CONFIG_FILE": os.devnull, "PIP_NO_CACHE_DIR": "1"}

    def run(self, line: str, stdin: str = "") -> subprocess.CompletedProcess:
        line = moved(self.root, line.replace("<this repository>", str(ROOT)))
        line = re.sub(r"(^|\s)(systemd/install-floor\.sh)(?=\s|$)",
                      rf"\1\2 --root {self.root} --wheelhouse {self.wheels}", line)
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", f"cd {ROOT}; {line}"], capture_output=True,
                                text=True, env=self.env, input=stdin, timeout=TIMEOUT)
        assert result.returncode == 0, f"{line}\n{result.stdout}\n{result.stderr}"
        assert "python3 first on PATH" not in result.stderr
        self.take_tools()
        return result

    def take_tools(self) -> None:
        for installed in (self.root / "usr/local/bin/dealerbox-floor", self.root / "usr/local/sbin/dealerbox-floor-ca"):
            if installed.exists():
                (self.tools / installed.name).write_text(moved(self.root, installed.read_text()))
                (self.tools / installed.name).chmod(0o755)

    def ran(self) -> list[str]:
        lines = self.calls.read_text().splitlines() if self.calls.exists() else []
        self.calls.write_text("")
        return lines


def _instance_command(root: Path, unit: Path, instance: str | None) -> tuple[str, list[str]]:
    """The unit's User= and ExecStart (with its instance), its paths under *root*."""
    text = unit.read_text()
    if instance is not None:
        text = text.replace("%i", instance)
    (user,) = [line.split("=", 1)[1] for line in text.splitlines() if line.startswith("User=")]
    (start,) = [line.split("=", 1)[1] for line in text.splitlines() if line.startswith("ExecStart=")]
    return user, shlex.split(moved(root, start))


def test_floor_and_group_install_commands_as_written_give_three_collectors(house):
    if os.geteuid() != 0:
        missing("the docs' install commands run on a root shell: this test runs as root (as CI does)")
    for binary, package in (("mosquitto", "mosquitto"), ("setpriv", "util-linux"), ("runuser", "util-linux"),
                            ("openssl", "openssl"), ("dpkg-query", "dpkg")):
        need(binary, package)
    if not DEBIAN_UNIT.exists():
        missing(f"no {DEBIAN_UNIT} (Debian package mosquitto)")
    stock = _stock_conf()
    top, wheels = house
    shell = Shell(Path(tempfile.mkdtemp(prefix="floor-docs-", dir=top)), wheels)
    shell.top.chmod(0o755)
    with floor_user_held():
        _follow_the_docs(shell, stock)


def _follow_the_docs(shell: Shell, stock: str) -> None:
    root = shell.root
    made_user = subprocess.run(["getent", "passwd", SERVICE_USER], capture_output=True).returncode != 0
    procs: list[subprocess.Popen] = []
    try:
        # FLOOR.md, step 1, as written.
        (install,) = sh_blocks("FLOOR.md", "1. The server")[:1]
        assert any("systemd/install-floor.sh" in line and "--web-name" in line for line in install)
        for line in install:
            shell.run(line)
        ran = shell.ran()
        assert "systemctl enable mosquitto.service dealerbox-floor.service dealerbox-floor-web.service" in ran
        venv = root / "opt/dealerbox/.venv"
        assert os.path.realpath(venv / "bin/python").startswith("/usr/bin/"), os.readlink(venv / "bin/python")
        ident = root / "etc/dealerbox/floor"
        assert owner_mode(ident / "floor-web.key") == ("root", SERVICE_USER, "0o640")

        # GROUP.md: three collectors on one machine, as written.
        (group,) = sh_blocks("GROUP.md", "Several collectors")[:1]
        for line in group:
            shell.run(line)
        ran = shell.ran()
        instances = ["floor-collector-2", "floor-collector-3"]
        assert any(all(f"dealerbox-floor-collector@{i}.service" in c for i in instances)
                   for c in ran if c.startswith("systemctl enable"))
        for name in instances:
            assert owner_mode(ident / f"{name}.key") == ("root", SERVICE_USER, "0o640")
            config = (root / f"etc/dealerbox/{name}.toml").read_text()
            assert f'cert = "floor/{name}.crt"' in config and f'key = "floor/{name}.key"' in config

        # GROUP.md: a collector on a machine of its own, as written (floor-collector-4 for -2,
        # which this broker's machine runs already; collector-2's ssh and scp reach a second fake root).
        other = Shell(shell.top, shell.wheels, "collector-2")
        _, issue, install = (block for block in sh_blocks("GROUP.md", "Several collectors"))
        for line in issue:
            line = line.replace("floor-collector-2", "floor-collector-4")
            if line.startswith("ssh root@collector-2 "):
                line = "bash -c " + line.removeprefix("ssh root@collector-2 ")
                line = line.replace("/etc/dealerbox", f"{other.root}/etc/dealerbox")
            line = re.sub(r"^scp ", "cp ", line).replace("root@collector-2:/etc/dealerbox", f"{other.root}/etc/dealerbox")
            shell.run(line)
        assert not (root / "etc/mosquitto/dealerbox/floor-collector-4.key").exists()
        for line in install:
            other.run(line.replace("floor-collector-2", "floor-collector-4"))
        ran = other.ran()
        assert "systemctl enable dealerbox-floor-collector@floor-collector-4.service" in ran
        assert not [c for c in ran if "mosquitto" in c]
        assert not (other.root / "etc/mosquitto").exists()
        assert owner_mode(other.root / "etc/dealerbox/floor/floor-collector-4.key") == ("root", SERVICE_USER, "0o640")
        remote = (other.root / "etc/dealerbox/floor-collector-4.toml").read_text()
        assert 'host = "floor.group.example"' in remote and 'cert = "floor/floor-collector-4.crt"' in remote
        assert not (other.root / "etc/systemd/system/dealerbox-floor.service").exists()
        assert (other.root / "etc/systemd/system/dealerbox-floor-collector@.service").exists()

        # FLOOR.md's web users, as written, through the installed dealerbox-floor (as the service user).
        state = root / "var/lib/dealerbox-floor"
        assert owner_mode(state) == (SERVICE_USER, SERVICE_USER, "0o750")   # the installer made it
        port = _free_port()
        configs = [root / "etc/dealerbox/floor.toml", *(root / f"etc/dealerbox/{n}.toml" for n in instances)]
        for config in configs:   # the store under the fake root, the broker on a free port
            config.write_text(moved(root, config.read_text()).replace("port = 8883", f"port = {port}"))
        (users,) = sh_blocks("FLOOR.md", "Signing in")
        password = "correct horse battery staple\n"
        for line in users:
            out = shell.run(line, stdin=password * 2)
            if " list" in line:
                assert "dvorak" in out.stdout, out.stdout + out.stderr
        assert owner_mode(state / "floor.sqlite")[0] == SERVICE_USER     # the store stays the service user's

        # Debian's mosquitto with the installed snippet, and the three collectors from their units.
        (root / "etc/mosquitto/mosquitto.conf").write_text(moved(root, stock))
        snippet = root / "etc/mosquitto/conf.d/dealerbox.conf"
        snippet.write_text(moved(root, snippet.read_text()).replace("listener 8883", f"listener {port}"))
        for line in _unit_lines("ExecStartPre"):
            subprocess.run(shlex.split(moved(root, line)), check=True)
        (start,) = _unit_lines("ExecStart")
        with open(shell.top / "mosquitto.out", "wb") as out:
            broker = subprocess.Popen(shlex.split(moved(root, start)), stdout=out, stderr=out,
                                      start_new_session=True)
        procs.append(broker)

        def listening():
            assert broker.poll() is None, (shell.top / "mosquitto.out").read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                return False

        wait_for(listening, "mosquitto listening")
        units = root / "etc/systemd/system"
        collectors = []
        for unit, instance in ((units / "dealerbox-floor.service", None),
                               *((units / "dealerbox-floor-collector@.service", i) for i in instances)):
            user, argv = _instance_command(root, unit, instance)
            assert user == SERVICE_USER
            log = shell.top / f"{instance or 'floor-collector'}.out"
            with open(log, "wb") as out:
                proc = subprocess.Popen(["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", *argv],
                                        stdout=out, stderr=out, cwd=state)
            procs.append(proc)
            collectors.append((proc, log))

        # A table's certificate from the installed tool, as FLOOR.md's step 2 says.
        (issue,) = sh_blocks("FLOOR.md", "2. A certificate for each table")[:1]
        assert issue == ["dealerbox-floor-ca client T07"]
        made = shell.run(issue[0])
        assert "T07.crt" in made.stderr and "T07.key" in made.stderr
        ca = root / "etc/mosquitto/dealerbox"
        table = shell.top / "table"
        table.mkdir()
        table_toml = table / "table.toml"
        table_toml.write_text(f'[floor]\nenabled = true\ntable = "T07"\nhost = "127.0.0.1"\nport = {port}\n'
                              f'ca = "{ca}/ca.crt"\ncert = "{ca}/T07.crt"\nkey = "{ca}/T07.key"\n'
                              'ack_timeout_s = 3\n')
        jdir = table / "journal"
        with open_journal(jdir) as journal, Publisher(load_table_floor(table_toml), jdir) as pub:
            append_lines(journal, 60)

            def acked():
                for proc, log in collectors:
                    assert proc.poll() is None, log.read_text()
                return pub.acked == 60

            wait_for(acked, "T07's 60 lines acknowledged", timeout=120)
        for proc, log in collectors:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0, log.read_text()
        verify = re.search(r"`(dealerbox-floor verify --store\s+[^`\s]+)`",
                           section("FLOOR.md", "4. Check").replace("\n  ", " "))
        assert verify, "FLOOR.md's step 4 names no dealerbox-floor verify"
        out = shell.run(verify.group(1))
        assert out.stdout == "T07: 60 lines, chain ok\n", out.stdout + out.stderr
    finally:
        for proc in procs:
            stop_process(proc, timeout=20)
        if made_user:
            subprocess.run(["userdel", SERVICE_USER], capture_output=True)


def test_the_three_machine_steps_name_what_the_installer_takes():
    """GROUP.md's collectors-only steps: the installer's options as it parses them, and the
    files it asks for are the files the steps copy."""
    blocks = sh_blocks("GROUP.md", "Several collectors")
    assert len(blocks) == 3
    copy, install = blocks[1], blocks[2]
    script = (ROOT / "systemd/install-floor.sh").read_text()
    (line,) = [c for c in install if "install-floor.sh" in c]
    for option in re.findall(r"(--[a-z-]+)", line):
        assert f"        {option})" in script, option
    copied = " ".join(copy)
    for name in ("ca.crt", "floor-collector-2.crt", "floor-collector-2.key", "floor.toml"):
        assert name in copied, name
    edit = next(c for c in install if c.startswith("sed -i"))
    toml = (ROOT / "firmware_config/floor/floor.toml").read_text()
    done = subprocess.run(["sed", edit.split("'")[1]], input=toml, capture_output=True, text=True, check=True).stdout
    import tomllib
    data = tomllib.loads(done)
    assert data["broker"]["host"] == "floor.group.example" and data["web"]["host"] == "127.0.0.1"


def test_a_venv_the_service_user_cannot_run_stops_the_installer(house):
    """A python in a folder closed to the service user (as one under /root is): the venv made
    with it fails the installer's check, run as that user, and nothing is switched to it."""
    if os.geteuid() != 0:
        missing("the floor installer runs as root")
    top, wheels = house
    shell = Shell(Path(tempfile.mkdtemp(prefix="floor-python-", dir=top)), wheels)
    shell.top.chmod(0o755)
    private = shell.top / "private"
    (private / "bin").mkdir(parents=True)
    private.chmod(0o700)
    shutil.copy2(os.path.realpath(SYSTEM_PYTHON), private / "bin" / "python3")
    with floor_user_held():
        made_user = subprocess.run(["getent", "passwd", SERVICE_USER], capture_output=True).returncode != 0
        try:
            line = (f"systemd/install-floor.sh --root {shell.root} --wheelhouse {wheels} --broker-name localhost "
                    f"--python {private}/bin/python3")
            result = subprocess.run(["bash", "-c", f"cd {ROOT}; {line}"], capture_output=True, text=True,
                                    env=shell.env, timeout=TIMEOUT)
        finally:
            if made_user:
                subprocess.run(["userdel", SERVICE_USER], capture_output=True)
    assert result.returncode == 1, result.stdout + result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert f"cannot run as {SERVICE_USER}" in last and f"{private}/bin/python3" in last and "--python" in last
    assert not (shell.root / "opt/dealerbox/.venv").exists()
    assert list((shell.root / "opt/dealerbox/venvs").iterdir()) == []


def test_a_table_and_a_floor_server_refuse_each_others_machine(tmp_path):
    for installer, mine, other, args in (
            ("install-floor.sh", "floor.toml", "table.toml", ["--broker-name", "localhost"]),
            ("install.sh", "table.toml", "floor.toml", [])):
        root = tmp_path / installer
        (root / "etc/dealerbox").mkdir(parents=True)
        (root / "etc/dealerbox" / other).write_text("")
        result = subprocess.run(["bash", str(ROOT / "systemd" / installer), "--dry-run", "--root", str(root), *args],
                                capture_output=True, text=True, timeout=120,
                                env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"})
        assert result.returncode == 1, result.stdout + result.stderr
        (line,) = result.stderr.splitlines()
        assert f"{root}/etc/dealerbox/{other}" in line and "a machine of its own" in line, line
        assert "+ " not in result.stdout      # refused before it would do anything


def test_the_interpreter_is_named_by_its_path(tmp_path):
    result = subprocess.run(["bash", str(ROOT / "systemd/install-floor.sh"), "--dry-run", "--root", str(tmp_path),
                             "--broker-name", "localhost", "--python", "python3"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 1 and "absolute path" in result.stderr, result.stderr
