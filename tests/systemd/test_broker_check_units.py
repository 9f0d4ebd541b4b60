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
from tests.floor.support import identity
from dealerbox.floor.broker import Broker, make_pki, render_bridge
from dealerbox.floor.broker_check import check_broker

ROOT = Path(__file__).resolve().parents[2]
SYSTEMD = ROOT / "systemd"
DEALERBOX = "/opt/dealerbox/.venv/bin/dealerbox"
SERVICE = "dealerbox-broker-check.service"
TIMER = "dealerbox-broker-check.timer"
CHECK = (f"{DEALERBOX} floor broker-check --timeout 5 --bridge-blind-s 300 "
         f"--state %S/dealerbox-broker-check/bridges.json")


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
    bridge = render_bridge(property_name="north", group_host="127.0.0.1", group_port=refusing, pki=pki)
    state = tmp_path / "bridges.json"
    with Broker(tmp_path / "north", pki, extra=bridge) as broker:
        admin = identity(pki, broker, "floor-admin")
        first = check_broker(admin, timeout=5, blind_restart_s=60, state=state, now=1000.0)
        assert first.ok and "north down for 0 s" in first.line, first.line
        assert check_broker(admin, timeout=5, blind_restart_s=60, state=state, now=1050.0).ok
        late = check_broker(admin, timeout=5, blind_restart_s=60, state=state, now=1061.0)
        assert not late.ok
        assert late.line == ("the bridge to the group (north) has been down for more than 60 s: "
                             "mosquitto is restarted to make it try again")
        # Restarted: the next failure comes a whole period later, not at the next check.
        assert check_broker(admin, timeout=5, blind_restart_s=60, state=state, now=1090.0).ok
        assert not check_broker(admin, timeout=5, blind_restart_s=60, state=state, now=1122.0).ok
        # Not watched: the CONNACK alone decides.
        assert check_broker(admin, timeout=5, now=2000.0).ok


def test_a_bridge_that_is_up_passes_the_check_and_forgets_its_down_time(tmp_path):
    need("mosquitto", "mosquitto")
    need("openssl", "openssl")
    pki = make_pki(tmp_path / "pki", ["floor-admin", "bridge-north"])
    state = tmp_path / "bridges.json"
    state.write_text('{"north": 10.0}')          # down long ago, by an earlier check
    with Broker(tmp_path / "group", pki) as group:
        bridge = render_bridge(property_name="north", group_host="127.0.0.1", group_port=group.port, pki=pki)
        with Broker(tmp_path / "north", pki, extra=bridge) as broker:
            admin = identity(pki, broker, "floor-admin")
            deadline = 30
            health = check_broker(admin, timeout=5, blind_restart_s=60, state=state, now=1000.0)
            while "north up" not in health.line and deadline:
                deadline -= 1
                health = check_broker(admin, timeout=5, blind_restart_s=60, state=state, now=1000.0)
            assert health.ok and health.line.endswith("bridges: north up"), health.line
            assert state.read_text() == "{}"
