"""The install commands of docs/floor/ (install.md, security.md, group.md), taken from
the docs as written (so the docs and this test cannot drift), run on a root shell in a fake root
(tests/systemd/doc_shell.py says what the shell changes, and only that).

Then the three collectors are started from the installed units as systemd would (each
``ExecStart`` of ``dealerbox-floor.service`` and of ``dealerbox-floor-collector@.service``
with its instance, as the unit's ``User=``), on Debian's mosquitto with the installed
snippet, and a table's lines are stored once.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from tests.floor.support import append_lines, need, open_journal, wait_for
from tests.systemd.doc_shell import (ROOT, SERVICE_USER, SYSTEM_PYTHON, TIMEOUT, Shell, free_port, instance_command,
                                     moved, section, sh_blocks, start_debian_broker)
from tests.systemd.support import floor_user_held
from tests.systemd.test_install import missing
from tests.systemd.test_install_floor import owner_mode, DEBIAN_UNIT
from dealerbox.service.uplink import Publisher, load_table_floor
from dealerbox.floor.operating.broker import stop_process


def test_floor_and_group_install_commands_as_written_give_three_collectors(house):
    if os.geteuid() != 0:
        missing("the docs' install commands run on a root shell: this test runs as root (as CI does)")
    for binary, package in (("mosquitto", "mosquitto"), ("setpriv", "util-linux"), ("runuser", "util-linux"),
                            ("openssl", "openssl"), ("dpkg-query", "dpkg")):
        need(binary, package)
    if not DEBIAN_UNIT.exists():
        missing(f"no {DEBIAN_UNIT} (Debian package mosquitto)")
    top, wheels = house
    shell = Shell(Path(tempfile.mkdtemp(prefix="floor-docs-", dir=top)), wheels)
    shell.top.chmod(0o755)
    with floor_user_held():
        _follow_the_docs(shell)


def _follow_the_docs(shell: Shell) -> None:
    root = shell.root
    made_user = subprocess.run(["getent", "passwd", SERVICE_USER], capture_output=True).returncode != 0
    procs: list[subprocess.Popen] = []
    try:
        # install.md, step 1, as written.
        (install,) = sh_blocks("floor/install.md", "1. The server")[:1]
        assert any("systemd/install-floor.sh" in line and "--web-name" in line for line in install)
        for line in install:
            shell.run(line)
        ran = shell.ran()
        assert "systemctl enable mosquitto.service dealerbox-floor.service dealerbox-floor-web.service" in ran
        drop_in = root / "etc/systemd/system/mosquitto.service.d/dealerbox.conf"
        assert "TimeoutStopSec=10s" in drop_in.read_text()  # a wedged broker killed, not waited for
        venv = root / "opt/dealerbox/.venv"
        assert os.path.realpath(venv / "bin/python").startswith("/usr/bin/"), os.readlink(venv / "bin/python")
        ident = root / "etc/dealerbox/floor"
        assert owner_mode(ident / "floor-web.key") == ("root", SERVICE_USER, "0o640")

        # group.md: three collectors on one machine, as written.
        (group,) = sh_blocks("floor/group.md", "Several collectors")[:1]
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

        # group.md: a collector on a machine of its own, as written (floor-collector-4 for -2,
        # which this broker's machine runs already; collector-2's ssh and scp reach a second fake root).
        other = Shell(shell.top, shell.wheels, "collector-2")
        _, issue, install = (block for block in sh_blocks("floor/group.md", "Several collectors"))
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

        # security.md's web users, as written, through the installed dealerbox-floor (as the service user).
        state = root / "var/lib/dealerbox-floor"
        assert owner_mode(state) == (SERVICE_USER, SERVICE_USER, "0o750")   # the installer made it
        port = free_port()
        configs = [root / "etc/dealerbox/floor.toml", *(root / f"etc/dealerbox/{n}.toml" for n in instances)]
        for config in configs:   # the store under the fake root, the broker on a free port
            config.write_text(moved(root, config.read_text()).replace("port = 8883", f"port = {port}"))
        (users,) = sh_blocks("floor/security.md", "Signing in")
        password = "correct horse battery staple\n"
        for line in users:
            out = shell.run(line, stdin=password * 2)
            if " list" in line:
                assert "dvorak" in out.stdout, out.stdout + out.stderr
        assert owner_mode(state / "floor.sqlite")[0] == SERVICE_USER     # the store stays the service user's

        # Debian's mosquitto with the installed snippet, and the three collectors from their units.
        procs.append(start_debian_broker(root, port, shell.top / "mosquitto.out"))
        units = root / "etc/systemd/system"
        collectors = []
        for unit, instance in ((units / "dealerbox-floor.service", None),
                               *((units / "dealerbox-floor-collector@.service", i) for i in instances)):
            user, argv = instance_command(root, unit, instance)
            assert user == SERVICE_USER
            log = shell.top / f"{instance or 'floor-collector'}.out"
            with open(log, "wb") as out:
                proc = subprocess.Popen(["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", *argv],
                                        stdout=out, stderr=out, cwd=state)
            procs.append(proc)
            collectors.append((proc, log))

        # A table's certificate from the installed tool, as install.md's step 2 says.
        (issue,) = sh_blocks("floor/install.md", "2. A certificate for each table")[:1]
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
                           section("floor/install.md", "4. Check").replace("\n  ", " "))
        assert verify, "install.md's step 4 names no dealerbox-floor verify"
        out = shell.run(verify.group(1))
        assert out.stdout == "T07: 60 lines, chain ok\n", out.stdout + out.stderr
    finally:
        for proc in procs:
            stop_process(proc, timeout=20)
        if made_user:
            subprocess.run(["userdel", SERVICE_USER], capture_output=True)


def test_the_three_machine_steps_name_what_the_installer_takes():
    """group.md's collectors-only steps: the installer's options as it parses them, and the
    files it asks for are the files the steps copy."""
    blocks = sh_blocks("floor/group.md", "Several collectors")
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
