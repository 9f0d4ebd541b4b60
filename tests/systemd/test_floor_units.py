"""The floor server's systemd units, the collector's and the web view's,
checked with systemd-analyze (offline)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.systemd.test_units import analyze, systemd_analyze, unit_settings  # noqa: F401

SYSTEMD = Path(__file__).resolve().parents[2] / "systemd"
DEALERBOX = "/opt/dealerbox/.venv/bin/dealerbox"
UNITS = {
    "dealerbox-floor.service": f"{DEALERBOX} floor collect --config /etc/dealerbox/floor.toml",
    "dealerbox-floor-web.service": f"{DEALERBOX} floor web --config /etc/dealerbox/floor.toml",
}


def runnable_copy(tmp_path: Path, name: str) -> Path:
    stub = tmp_path / "dealerbox"
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    text = (SYSTEMD / name).read_text()
    assert text.count(f"ExecStart={UNITS[name]}\n") == 1
    copy = tmp_path / name
    copy.write_text(text.replace(DEALERBOX, str(stub)))
    return copy


@pytest.mark.parametrize("name", UNITS)
def test_floor_unit_verifies_without_a_word(tmp_path, systemd_analyze, name):  # noqa: F811
    result = analyze(systemd_analyze, "verify", "--man=no", str(runnable_copy(tmp_path, name)), cwd=tmp_path)
    assert result.stdout + result.stderr == ""
    assert result.returncode == 0


@pytest.mark.parametrize("name", UNITS)
def test_floor_unit_exposure_is_at_most_2(tmp_path, systemd_analyze, name):  # noqa: F811
    result = analyze(systemd_analyze, "security", "--offline=yes", str(runnable_copy(tmp_path, name)),
                     cwd=tmp_path)
    m = re.search(rf"Overall exposure level for {re.escape(name)}: (\d+(?:\.\d+)?)", result.stdout)
    assert m, result.stdout + result.stderr
    assert float(m.group(1)) <= 2.0


@pytest.mark.parametrize("name", UNITS)
def test_floor_unit_runs_its_command_as_the_floor_user(name):
    s = unit_settings((SYSTEMD / name).read_text())
    assert s[("Service", "ExecStart")] == [UNITS[name]]
    assert s[("Service", "User")] == ["dealerbox-floor"]
    assert s[("Service", "StateDirectory")] == ["dealerbox-floor"]
    assert s[("Service", "Restart")] == ["always"]


def test_the_collector_waits_for_mosquitto_and_the_view_for_the_collector():
    collector = unit_settings((SYSTEMD / "dealerbox-floor.service").read_text())
    web = unit_settings((SYSTEMD / "dealerbox-floor-web.service").read_text())
    assert "mosquitto.service" in " ".join(collector[("Unit", "After")])
    assert "dealerbox-floor.service" in " ".join(web[("Unit", "After")])
    # Not Requires=: a collector restart must not take the view down with it.
    assert ("Unit", "Requires") not in web and ("Unit", "BindsTo") not in web


# -- the template unit: one more collector per instance (install-floor.sh --collector NAME)

TEMPLATE = "dealerbox-floor-collector@.service"


def instance_copy(tmp_path: Path, instance: str) -> Path:
    """The template, runnable (its program a stub), as the unit file of *instance*."""
    stub = tmp_path / "dealerbox"
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    text = (SYSTEMD / TEMPLATE).read_text().replace(DEALERBOX, str(stub))
    (tmp_path / TEMPLATE).write_text(text)
    unit = tmp_path / f"dealerbox-floor-collector@{instance}.service"
    unit.write_text(text)
    return unit


def test_the_collector_template_verifies_without_a_word(tmp_path, systemd_analyze):  # noqa: F811
    unit = instance_copy(tmp_path, "floor-collector-2")
    result = analyze(systemd_analyze, "verify", "--man=no", str(unit), cwd=tmp_path)
    assert result.stdout + result.stderr == ""
    assert result.returncode == 0
    security = analyze(systemd_analyze, "security", "--offline=yes", str(unit), cwd=tmp_path)
    m = re.search(r"Overall exposure level for \S+: (\d+(?:\.\d+)?)", security.stdout)
    assert m and float(m.group(1)) <= 2.0, security.stdout + security.stderr


def test_the_collector_template_is_the_collector_unit_but_for_its_instance():
    template = unit_settings((SYSTEMD / TEMPLATE).read_text())
    collector = unit_settings((SYSTEMD / "dealerbox-floor.service").read_text())
    assert template[("Service", "ExecStart")] == [f"{DEALERBOX} floor collect --config /etc/dealerbox/%i.toml"]
    differ = {key for key in set(template) | set(collector) if template.get(key) != collector.get(key)}
    # Everything that hardens and restarts it is the collector's own, so the two cannot drift.
    assert differ == {("Unit", "Description"), ("Service", "ExecStart"), ("Service", "SyslogIdentifier")}
