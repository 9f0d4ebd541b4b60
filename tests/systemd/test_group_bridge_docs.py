"""docs/floor/group.md's bridge, set up by its steps as written (so the steps and this test cannot
drift), between two floor servers installed as docs/floor/install.md says: the group's, and the
property ``north``'s, each a fake root with its own CA (tests/systemd/doc_shell.py says
what the shell changes in a line).

What this test changes besides:
- ``scp`` between the two servers is ``cp`` from one fake root to the other, and the
  property's ``/root`` is a folder of its fake root;
- each broker listens on a port of its own instead of 8883, so ``bridge add`` and
  ``bridge list`` get ``--broker-port``/``--group-port`` and the fake root's ``--pki``
  and ``--conf-dir``, and the group broker's name in ``--group-host`` is 127.0.0.1,
  which its certificate also names;
- ``systemctl restart mosquitto`` is recorded, and the test then starts the property's
  mosquitto as Debian's unit does.

Then a table of the property, its certificate from the property's own CA, publishes to
the property's broker, and the group's collector (``dealerbox-floor.service``'s
ExecStart, as its user) files every line through the bridge; the group floor saw the
property connected. group.md's steps to take the bridge away leave no rights and no file.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

from tests.floor.support import append_lines, need, open_journal, wait_for
from tests.systemd.doc_shell import (SERVICE_USER, Shell, free_port, instance_command, moved, section,
                                     sh_blocks, start_debian_broker)
from tests.systemd.support import floor_user_held
from tests.systemd.test_install import missing
from tests.systemd.test_install_floor import DEBIAN_UNIT, owner_mode
from tests.floor.test_faults import seqs
from dealerbox.floor.operating.broker import stop_process
from dealerbox.floor.store import Store
from dealerbox.service.uplink import Publisher, load_table_floor

STEPS = "Setting up a bridge, step by step"
LINES = 40


def test_groups_bridge_steps_as_written_bring_a_propertys_table_to_the_group_floor(house):
    if os.geteuid() != 0:
        missing("the docs' commands run on a root shell: this test runs as root (as CI does)")
    for binary, package in (("mosquitto", "mosquitto"), ("mosquitto_ctrl", "mosquitto"), ("setpriv", "util-linux"),
                            ("runuser", "util-linux"), ("openssl", "openssl")):
        need(binary, package)
    if not DEBIAN_UNIT.exists():
        missing(f"no {DEBIAN_UNIT} (Debian package mosquitto)")
    top, wheels = house
    top = Path(tempfile.mkdtemp(prefix="group-bridge-", dir=top))
    top.chmod(0o755)
    with floor_user_held():
        made_user = subprocess.run(["getent", "passwd", SERVICE_USER], capture_output=True).returncode != 0
        try:
            _follow_the_steps(Shell(top, wheels, "group"), Shell(top, wheels, "north"))
        finally:
            if made_user:
                subprocess.run(["userdel", SERVICE_USER], capture_output=True)


def _follow_the_steps(group: Shell, north: Shell) -> None:
    ports = {group: free_port(), north: free_port()}
    while ports[north] == ports[group]:
        ports[north] = free_port()
    procs: list[subprocess.Popen] = []

    def options(shell: Shell, line: str) -> str:
        """The fake root's --pki and --conf-dir, and its broker's port, on a bridge command."""
        if "floor bridge" not in line:
            return line
        line = line.replace("--group-host floor.group.example", f"--group-host 127.0.0.1 --group-port {ports[group]}")
        return (f"{line} --broker-port {ports[shell]} --pki {shell.root}/etc/mosquitto/dealerbox "
                f"--conf-dir {shell.root}/etc/mosquitto/conf.d")

    def on_north(line: str) -> str:
        return re.sub(r"(?<![\w/.-])/root/", f"{north.root}/root/", line)

    try:
        # Both servers as install.md's step 1 installs one, each with its own CA.
        (install,) = sh_blocks("floor/install.md", "1. The server")[:1]
        for shell in (group, north):
            for line in install:
                shell.run(line)
            shell.ran()
        assert (group.root / "etc/mosquitto/dealerbox/ca.crt").read_bytes() != \
            (north.root / "etc/mosquitto/dealerbox/ca.crt").read_bytes()
        (north.root / "root").mkdir()

        issue, place, grant, start, take_away_group, take_away_north = sh_blocks("floor/group.md", STEPS)

        # 1. On the group's server: the bridge's certificate, and the group CA's, sent to north.
        for line in issue:
            if line.startswith("scp "):
                line = "cp " + line.removeprefix("scp ").replace("root@north:/root/", f"{north.root}/root/")
            group.run(line)
        assert not (group.root / "etc/mosquitto/dealerbox/bridge-north.key").exists()

        # 2. On north: the files in place, the bridge written, north's own collector stopped.
        for line in place:
            north.run(options(north, on_north(line)))
        pki = north.root / "etc/mosquitto/dealerbox"
        assert owner_mode(pki / "bridge-north.key") == ("root", "mosquitto", "0o640")
        assert owner_mode(pki / "group-ca.crt") == ("root", "root", "0o644")
        assert (pki / "group-ca.crt").read_bytes() == (group.root / "etc/mosquitto/dealerbox/ca.crt").read_bytes()
        assert not (north.root / "root/bridge-north.key").exists()
        conf = north.root / "etc/mosquitto/conf.d/dealerbox-bridge-north.conf"
        assert f"address 127.0.0.1:{ports[group]}" in conf.read_text()
        assert f"bridge_cafile {pki}/group-ca.crt" in conf.read_text()
        assert "systemctl disable --now dealerbox-floor" in north.ran()

        # The group's broker and its collector, as their units start them.
        procs.append(start_debian_broker(group.root, ports[group], group.top / "group-mosquitto.out"))
        floor_toml = group.root / "etc/dealerbox/floor.toml"
        floor_toml.write_text(moved(group.root, floor_toml.read_text()).replace("port = 8883",
                                                                                  f"port = {ports[group]}"))
        state = group.root / "var/lib/dealerbox-floor"
        user, argv = instance_command(group.root, group.root / "etc/systemd/system/dealerbox-floor.service", None)
        collector_log = group.top / "group-collector.out"
        with open(collector_log, "wb") as out:
            collector = subprocess.Popen(["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", *argv],
                                         stdout=out, stderr=out, cwd=state)
        procs.append(collector)

        # 3. On the group's server: the bridge's identity and rights.
        granted, listed = (group.run(options(group, line)) for line in grant)
        assert "bridge-north may now publish for T01, T02, T03" in granted.stderr
        assert listed.stdout == "north\tT01 T02 T03\n"

        # 4. On north: mosquitto restarted (here: started) with the bridge.
        restart, list_north = start
        assert restart == "systemctl restart mosquitto"
        procs.append(start_debian_broker(north.root, ports[north], north.top / "north-mosquitto.out"))
        assert north.run(options(north, list_north)).stdout == f"north\t127.0.0.1:{ports[group]}\n"

        # A table of north's, its certificate from north's CA (install.md's step 2), filed on the group floor.
        (make_cert,) = sh_blocks("floor/install.md", "2. A certificate for each table")[0]
        north.run(make_cert.replace("T07", "T01"))
        table = north.top / "table-T01"
        table.mkdir()
        table_toml = table / "table.toml"
        table_toml.write_text(f'[floor]\nenabled = true\ntable = "T01"\nhost = "127.0.0.1"\nport = {ports[north]}\n'
                              f'ca = "{pki}/ca.crt"\ncert = "{pki}/T01.crt"\nkey = "{pki}/T01.key"\n'
                              'ack_timeout_s = 3\n')
        store_path = state / "floor.sqlite"
        with open_journal(table / "journal") as journal, \
                Publisher(load_table_floor(table_toml), table / "journal") as pub:
            append_lines(journal, LINES)

            def acked():
                assert collector.poll() is None, collector_log.read_text()
                return pub.acked == LINES

            wait_for(acked, f"T01's {LINES} lines acknowledged by the group's collector", timeout=120)
        with Store(store_path) as store:
            assert seqs(store, "T01") == list(range(1, LINES + 1))
            assert store.verify("T01") == []
            assert store.bridge("north")["connected"]

        # Taken away, as group.md says: the rights on the group's side, the file on north's.
        for line in take_away_group:
            group.run(options(group, line))
        assert group.run(options(group, grant[1])).stdout == ""
        restarted = []
        for line in take_away_north:
            if line == "systemctl restart mosquitto":
                restarted.append(line)
                continue
            north.run(options(north, line))
        assert restarted and not conf.exists()
        assert north.run(options(north, list_north)).stdout == ""
    finally:
        for proc in procs:
            stop_process(proc, timeout=20)


def test_the_bridge_steps_say_where_each_block_runs():
    """Each block of the steps follows the words naming its server: a copied block run on the
    wrong one is the mistake an operator makes."""
    steps = section("floor/group.md", STEPS)
    parts = re.split(r"^ *```sh\n.*?^ *```", steps, flags=re.S | re.M)
    servers = ["group's", "property's", "group's", "property's", "group's", "property's"]
    assert len(parts) == len(servers) + 1
    for words, server in zip(parts, servers):
        said = re.findall(r"[Oo]n the (group's|property's) (?:floor )?server", words)
        assert said and said[-1] == server, (server, words[-300:])
