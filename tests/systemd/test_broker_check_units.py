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
from dealerbox.floor.broker import Broker, make_pki

ROOT = Path(__file__).resolve().parents[2]
SYSTEMD = ROOT / "systemd"
DEALERBOX = "/opt/dealerbox/.venv/bin/dealerbox"
SERVICE = "dealerbox-broker-check.service"
TIMER = "dealerbox-broker-check.timer"
CHECK = f"{DEALERBOX} floor broker-check --timeout 5"


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
