"""An upgrade keeps a property's bridge working on the group's floor server.

systemd/install-floor.sh replaces the shipped ACL file whenever it differs (and reloads
mosquitto): the bridge's rights written there, as the group's page once said, were gone after the
next run. ``dealerbox floor bridge add`` puts them in the dynamic security plugin's file,
which the installer makes once and leaves alone. Here, in a fake root as
tests/systemd/test_install_floor.py sets up a floor server: install, add a bridge with the
installed command, see a property's table reach the group broker through it; the installed
ACL file edited by hand (so the second run replaces it and reloads, as an upgrade does),
install again, reload or restart as it asked, and the bridge still publishes.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

from tests.conftest import worker_free_port
from tests.floor.support import Client, need, wait_for
from tests.systemd.doc_shell import start_debian_broker
from tests.systemd.support import floor_user_held
from tests.systemd.test_install import missing, sh
from tests.systemd.test_install_floor import (DEBIAN_UNIT, INSTALL_FLOOR, SERVICE_USER, SYSTEM_PYTHON, TIMEOUT,
                                              _stock_conf, kit, under)  # noqa: F401
from dealerbox.floor.operating import bridges
from dealerbox.floor.operating.broker import Broker, stop_process
from dealerbox.link import protocol as P
from dealerbox.link.client import Identity


def test_the_installer_run_twice_leaves_the_bridge_publishing(kit):  # noqa: F811
    # The test makes and removes the system user dealerbox-floor, as the installer tests do:
    # one of them at a time across xdist workers.
    with floor_user_held():
        _installer_run_twice(kit)


def _installer_run_twice(kit) -> None:
    if not kit["as_root"]:
        missing("the floor installer's test runs as root (as CI does): it makes a user and chowns to mosquitto")
    for binary, package in (("mosquitto", "mosquitto"), ("mosquitto_ctrl", "mosquitto"), ("openssl", "openssl")):
        need(binary, package)
    if not DEBIAN_UNIT.exists():
        missing(f"no {DEBIAN_UNIT} (Debian package mosquitto)")
    stock = _stock_conf()
    top = kit["top"]
    root = top / "bridge-server"
    root.mkdir()
    calls = top / "bridge-server-calls.log"
    bin_dir = top / "bridge-server-bin"
    bin_dir.mkdir()
    for name in ("apt-get", "systemctl"):
        (bin_dir / name).symlink_to(kit["recorders"] / name)
    env = {"PATH": f"{bin_dir}:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(top), "LANG": "C.UTF-8",
           "PIP_CONFIG_FILE": os.devnull, "PIP_NO_CACHE_DIR": "1", "DEALERBOX_PYTHON": SYSTEM_PYTHON,
           "DEALERBOX_TEST_CALLS": str(calls)}
    made_user = subprocess.run(["getent", "passwd", SERVICE_USER], capture_output=True).returncode != 0
    port = worker_free_port()  # not the shipped 8883: another test's floor server may have it
    ca = root / "etc/mosquitto/dealerbox"
    snippet = root / "etc/mosquitto/conf.d/dealerbox.conf"
    dealerbox = str(root / "opt/dealerbox/.venv/bin/dealerbox")
    group: list[subprocess.Popen] = []
    prop = None

    def install() -> list[str]:
        result = subprocess.run(["bash", str(INSTALL_FLOOR), "--root", str(root), "--wheelhouse", str(kit["house"]),
                                 "--extras", "collector", "--broker-name", "localhost"],
                                capture_output=True, text=True, env=env, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        assert result.returncode == 0, result.stdout + result.stderr
        ran = calls.read_text().splitlines() if calls.exists() else []
        calls.write_text("")
        # What the fake root needs of Debian's paths, and a port of this test's own.
        (root / "etc/mosquitto/mosquitto.conf").write_text(under(root, stock))
        snippet.write_text(under(root, snippet.read_text()).replace("listener 8883", f"listener {port}"))
        return ran

    def start_group() -> None:
        group.append(start_debian_broker(root, port, top / "bridge-mosquitto.out"))

    def reaches_the_group(n: int) -> None:
        """A line of the property's table T01, published on the property's broker, on the group's."""
        floor = root / "etc/dealerbox/floor"
        watcher = Client(Identity("127.0.0.1", port, floor / "ca.crt", floor / "floor-collector.crt",
                                  floor / "floor-collector.key"), "floor-collector")
        table = Client(Identity("127.0.0.1", prop.port, ca / "ca.crt", ca / "T01.crt", ca / "T01.key"), "T01")
        try:
            assert watcher.connect(port)
            watcher.subscribe(P.journal_topic("T01"))
            assert table.connect(prop.port)
            payload = f"line {n}".encode()
            # Again until it comes: the bridge may still be on its way back.
            wait_for(lambda: (table.publish(P.journal_topic("T01"), payload), (P.journal_topic("T01"), payload)
                              in watcher.messages)[1], f"line {n} through the bridge", 60)
        finally:
            watcher.close()
            table.close()

    try:
        install()
        start_group()
        sh("sh", root / "opt/dealerbox/floor/make-ca.sh", ca, "client", "bridge-north", "T01")
        added = sh(dealerbox, "floor", "bridge", "add", "north", "--tables", "T01", "--broker-port", str(port),
                   "--pki", ca)
        assert "bridge-north may now publish for T01" in added.stderr
        conf_d = top / "bridge-property-conf.d"
        conf_d.mkdir()
        shutil.copy(ca / "ca.crt", ca / bridges.GROUP_CA)  # the property's broker shares the group's CA here
        conf = bridges.write_property_side("north", "127.0.0.1", port, conf_dir=conf_d, pki=ca)
        prop = Broker(top / "bridge-property", ca, extra=conf.read_text())
        prop.directory.mkdir()
        prop.start()
        reaches_the_group(1)

        # An upgrade: the installed ACL differs from the shipped one, so the installer replaces it.
        acl = ca / "acl"
        acl.write_text(acl.read_text() + "\n# an older release's line\n")
        ran = install()
        assert "# an older release's line" not in acl.read_text()
        assert any("reload" in c or "restart" in c for c in ran), ran
        if any("restart" in c for c in ran):
            stop_process(group.pop())
            start_group()
        else:
            group[-1].send_signal(signal.SIGHUP)
        reaches_the_group(2)
        listed = sh(dealerbox, "floor", "bridge", "list", "--broker-port", str(port), "--pki", ca)
        assert listed.stdout == "north\tT01\n"
    finally:
        if prop is not None:
            prop.stop()
        for proc in group:
            stop_process(proc)
        if made_user:
            subprocess.run(["userdel", SERVICE_USER], capture_output=True)
