"""The property broker's health check: dealerbox-broker-check.service (a oneshot that
restarts mosquitto when the check fails) and its timer, checked with systemd-analyze
(offline); and the check itself against a real mosquitto, answering, then stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.floor.support import need
from tests.systemd.test_units import analyze, systemd_analyze, unit_settings  # noqa: F401
from tests.conftest import worker_free_port
from tests.systemd.test_install import missing
from tests.systemd.test_install_floor import DEBIAN_UNIT
from tests.floor.support import identity
from dealerbox.floor.operating.broker import SHIPPED_ACL, Broker, bridge_acl, make_pki, render_bridge
from dealerbox.floor.operating.broker_check import bridge_states, check_broker

ROOT = Path(__file__).resolve().parents[2]
SYSTEMD = ROOT / "systemd"
DEALERBOX = "/opt/dealerbox/.venv/bin/dealerbox"
#: The property broker's own bridges in these tests (on a property, its conf.d names them).
OWN = ("north",)
SERVICE = "dealerbox-broker-check.service"
TIMER = "dealerbox-broker-check.timer"
CHECK = (f"{DEALERBOX} floor broker-check --timeout 5 --bridge-blind-s 300 "
         f"--state %S/dealerbox-broker-check/bridges.json --result %S/dealerbox-broker-check/result.json")


def runnable_copies(tmp_path: Path) -> list[Path]:
    """The two units, the service's program a stub that exists (verify checks it does)."""
    stub = tmp_path / "dealerbox"
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    text = (SYSTEMD / SERVICE).read_text()
    assert text.count(f"ExecStart={CHECK}\n") == 1
    (tmp_path / SERVICE).write_text(text.replace(DEALERBOX, str(stub)))
    (tmp_path / TIMER).write_text((SYSTEMD / TIMER).read_text())
    return [tmp_path / SERVICE, tmp_path / TIMER]


def test_the_check_and_its_timer_verify_without_a_word(tmp_path, systemd_analyze):  # noqa: F811
    result = analyze(systemd_analyze, "verify", "--man=no", *map(str, runnable_copies(tmp_path)), cwd=tmp_path)
    assert result.stdout + result.stderr == ""
    assert result.returncode == 0


def test_mosquitto_with_the_drop_in_verifies_and_is_killed_10_s_after_its_sigterm(tmp_path, systemd_analyze):  # noqa: F811
    """Debian's mosquitto.service with dealerbox's drop-in: a wedged 2.0.11 ignores the SIGTERM
    of the check's restart, and systemd's default would wait 90 s before its SIGKILL."""
    need("mosquitto", "mosquitto")
    if not DEBIAN_UNIT.exists():
        missing(f"no {DEBIAN_UNIT} (Debian package mosquitto)")
    drop_in = (SYSTEMD / "mosquitto-dealerbox.conf").read_text()
    assert unit_settings(drop_in) == {("Service", "TimeoutStopSec"): ["10s"]}
    # A drop-in's lines read as if at the end of the unit: verified so, an unknown key would say so.
    unit = tmp_path / "mosquitto.service"
    unit.write_text(DEBIAN_UNIT.read_text() + "\n" + drop_in)
    result = analyze(systemd_analyze, "verify", "--man=no", str(unit), cwd=tmp_path)
    assert result.stdout + result.stderr == ""
    assert result.returncode == 0
    # Within the check's own budget: the next check (30 s on) finds the broker back.
    assert "KillMode" not in drop_in and "SendSIGKILL" not in drop_in  # systemd's defaults: SIGKILL after it
    installer = (ROOT / "systemd/install-floor.sh").read_text()
    assert "BROKER_DROPIN=mosquitto.service.d/dealerbox.conf" in installer
    assert '"$REPO/systemd/mosquitto-dealerbox.conf" "$UNIT_DIR/$BROKER_DROPIN"' in installer


def test_a_failed_check_restarts_mosquitto_and_only_then():
    s = unit_settings((SYSTEMD / SERVICE).read_text())
    assert s[("Service", "Type")] == ["oneshot"]
    assert s[("Service", "ExecStart")] == [CHECK]
    (post,) = s[("Service", "ExecStopPost")]
    assert '"$$SERVICE_RESULT" != success' in post and "systemctl restart mosquitto.service" in post
    # A broker a person stopped stays stopped: the check does not start without it.
    assert s[("Unit", "Requisite")] == ["mosquitto.service"]
    timer = unit_settings((SYSTEMD / TIMER).read_text())
    assert timer[("Timer", "OnUnitActiveSec")] == ["30s"]
    assert timer[("Install", "WantedBy")] == ["timers.target"]


def test_the_check_passes_on_an_answering_broker_and_fails_on_a_stopped_one(tmp_path):
    need("mosquitto", "mosquitto")
    need("openssl", "openssl")
    pki = make_pki(tmp_path / "pki", ["floor-admin"])
    command = [sys.executable, "-m", "dealerbox.cli", "floor", "broker-check", "--pki", str(pki),
               "--timeout", "3"]
    with Broker(tmp_path / "broker", pki) as broker:
        command += ["--port", str(broker.port)]
        ok = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert ok.returncode == 0, ok.stderr
        assert "CONNACK from 127.0.0.1" in ok.stderr
        # Stopped, the kernel still accepts its TCP connections: only the CONNACK is missing.
        os.kill(broker.proc.pid, signal.SIGSTOP)
        try:
            wedged = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT)
        finally:
            os.kill(broker.proc.pid, signal.SIGCONT)
        assert wedged.returncode == 1
        assert wedged.stderr.strip() == f"broker-check: no CONNACK from the broker at 127.0.0.1:{broker.port} within 3 s"


def test_a_bridge_down_longer_than_allowed_fails_the_check_once_per_period(tmp_path):
    """A property broker whose bridge points at a port where nothing listens (the group's
    address refusing): its clients still get their CONNACK, but the bridge, down at every
    check for longer than --bridge-blind-s, fails it (mosquitto is restarted, so a 2.0.11
    bridge that stopped retrying tries again); the failure restarts the bridge's clock."""
    need("mosquitto", "mosquitto")
    need("openssl", "openssl")
    pki = make_pki(tmp_path / "pki", ["floor-admin", "bridge-north"])
    refusing = worker_free_port()
    bridge = render_bridge(property_name="north", group_host="127.0.0.1", group_port=refusing, pki=pki,
                           group_ca=pki / "ca.crt")
    state = tmp_path / "bridges.json"
    with Broker(tmp_path / "north", pki, extra=bridge) as broker:
        admin = identity(pki, broker, "floor-admin")
        first = check_broker(admin, timeout=5, blind_restart_s=60, state=state, bridges=OWN, now=1000.0)
        assert first.ok and "north down for 0 s" in first.line, first.line
        assert check_broker(admin, timeout=5, blind_restart_s=60, state=state, bridges=OWN, now=1050.0).ok
        late = check_broker(admin, timeout=5, blind_restart_s=60, state=state, bridges=OWN, now=1061.0)
        assert not late.ok
        assert late.line == ("the bridge to the group (north) has been down for more than 60 s: "
                             "mosquitto is restarted to make it try again")
        # Restarted: the next failure comes a whole period later, not at the next check.
        assert check_broker(admin, timeout=5, blind_restart_s=60, state=state, bridges=OWN, now=1090.0).ok
        assert not check_broker(admin, timeout=5, blind_restart_s=60, state=state, bridges=OWN, now=1122.0).ok
        # Not watched: the CONNACK alone decides.
        assert check_broker(admin, timeout=5, now=2000.0).ok


def test_a_bridge_that_is_up_passes_the_check_and_forgets_its_down_time(tmp_path):
    need("mosquitto", "mosquitto")
    need("openssl", "openssl")
    pki = make_pki(tmp_path / "pki", ["floor-admin", "bridge-north"])
    state = tmp_path / "bridges.json"
    state.write_text('{"north": 10.0}')          # down long ago, by an earlier check
    with Broker(tmp_path / "group", pki) as group:
        bridge = render_bridge(property_name="north", group_host="127.0.0.1", group_port=group.port, pki=pki,
                               group_ca=pki / "ca.crt")
        with Broker(tmp_path / "north", pki, extra=bridge) as broker:
            admin = identity(pki, broker, "floor-admin")
            deadline = 30
            health = check_broker(admin, timeout=5, blind_restart_s=60, state=state, bridges=OWN, now=1000.0)
            while "north up" not in health.line and deadline:
                deadline -= 1
                health = check_broker(admin, timeout=5, blind_restart_s=60, state=state, bridges=OWN, now=1000.0)
            assert health.ok and health.line.endswith("bridges: north up"), health.line
            assert state.read_text() == "{}"


def test_a_neighbours_blind_bridge_is_no_reason_to_restart_this_broker(tmp_path):
    """Two properties bridged to one group: south's broker dies, its will (``0``) is retained
    on the group and comes down north's bridge (``floor/# in``). North's check watches north's
    own bridge only and passes; the group's broker has no bridge of its own and is not watched."""
    need("mosquitto", "mosquitto")
    need("openssl", "openssl")
    pki = make_pki(tmp_path / "pki", ["floor-admin", "bridge-north", "bridge-south"])
    state = tmp_path / "bridges.json"
    acl = tmp_path / "group-acl"
    acl.write_text("\n".join([SHIPPED_ACL.read_text(), bridge_acl("north", ["T01"]), bridge_acl("south", ["T02"])]))
    with Broker(tmp_path / "group", pki, acl=acl) as group:
        def bridged(name):
            return Broker(tmp_path / name, pki, extra=render_bridge(property_name=name, group_host="127.0.0.1",
                                                                    group_port=group.port, pki=pki,
                                                                    group_ca=pki / "ca.crt"))
        with bridged("north") as north:
            south = bridged("south").start()
            admin = identity(pki, north, "floor-admin")
            for _ in range(60):
                if bridge_states(admin).get("south") is True and bridge_states(admin).get("north") is True:
                    break
            south.kill()   # its will: south's bridge is down, retained on the group
            for _ in range(60):
                if bridge_states(admin).get("south") is False:
                    break
            assert bridge_states(admin) == {"north": True, "south": False}
            assert check_broker(admin, timeout=5, blind_restart_s=60, state=state, bridges=OWN, now=1000.0).ok
            health = check_broker(admin, timeout=5, blind_restart_s=60, state=state, bridges=OWN, now=2000.0)
            assert health.ok and health.line.endswith("bridges: north up"), health.line
            # The group's broker holds every property's state and has no bridge of its own.
            on_group = identity(pki, group, "floor-admin")
            assert check_broker(on_group, timeout=5, blind_restart_s=60, bridges=(), now=3000.0).ok


def test_the_command_watches_the_bridges_its_conf_dir_names(tmp_path):
    """``floor broker-check --conf-dir``: a property's own bridges are the
    ``dealerbox-bridge-<property>.conf`` files there; a bridge of its own that never
    connected fails the check once down past the limit, and with no such file (the
    group's broker) only the CONNACK counts."""
    need("mosquitto", "mosquitto")
    need("openssl", "openssl")
    pki = make_pki(tmp_path / "pki", ["floor-admin", "bridge-north"])
    conf_d = tmp_path / "conf.d"
    conf_d.mkdir()
    state = tmp_path / "bridges.json"
    state.write_text('{"north": 10.0}')          # down since long ago
    with Broker(tmp_path / "north", pki) as broker:   # no bridge: north's state is never heard
        command = [sys.executable, "-m", "dealerbox.cli", "floor", "broker-check", "--pki", str(pki),
                   "--port", str(broker.port), "--timeout", "3", "--bridge-blind-s", "60", "--state", str(state),
                   "--conf-dir", str(conf_d)]
        alone = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert alone.returncode == 0 and "bridges" not in alone.stderr, alone.stderr
        (conf_d / "dealerbox-bridge-north.conf").write_text("connection north\naddress 10.0.0.1:8883\n")
        own = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert own.returncode == 1 and "the bridge to the group (north)" in own.stderr, own.stderr
