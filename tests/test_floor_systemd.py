"""The floor collector's systemd unit, checked with systemd-analyze (offline)."""

from __future__ import annotations

import re
from pathlib import Path

from test_systemd import analyze, systemd_analyze, unit_settings  # noqa: F401

UNIT = Path(__file__).resolve().parent.parent / "systemd" / "dealerbox-floor.service"
EXEC = "/opt/dealerbox/.venv/bin/dealerbox floor collect --config /etc/dealerbox/floor.toml"


def runnable_copy(tmp_path: Path) -> Path:
    stub = tmp_path / "dealerbox"
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    text = UNIT.read_text()
    assert text.count(f"ExecStart={EXEC}\n") == 1
    copy = tmp_path / "dealerbox-floor.service"
    copy.write_text(text.replace("/opt/dealerbox/.venv/bin/dealerbox", str(stub)))
    return copy


def test_floor_unit_verifies_without_a_word(tmp_path, systemd_analyze):  # noqa: F811
    result = analyze(systemd_analyze, "verify", "--man=no", str(runnable_copy(tmp_path)), cwd=tmp_path)
    assert result.stdout + result.stderr == ""
    assert result.returncode == 0


def test_floor_unit_exposure_is_at_most_2(tmp_path, systemd_analyze):  # noqa: F811
    result = analyze(systemd_analyze, "security", "--offline=yes", str(runnable_copy(tmp_path)),
                     cwd=tmp_path)
    m = re.search(r"Overall exposure level for dealerbox-floor\.service: (\d+(?:\.\d+)?)", result.stdout)
    assert m, result.stdout + result.stderr
    assert float(m.group(1)) <= 2.0


def test_floor_unit_runs_the_collector_as_its_own_user():
    s = unit_settings(UNIT.read_text())
    assert s[("Service", "ExecStart")] == [EXEC]
    assert s[("Service", "User")] == ["dealerbox-floor"]
    assert s[("Service", "StateDirectory")] == ["dealerbox-floor"]
    assert s[("Service", "Restart")] == ["always"]
