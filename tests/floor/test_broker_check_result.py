"""The broker health check's result file as the floor view's ``/metrics`` reads it
(dealerbox/floor/operating/broker_check_metrics.py): no file is a check that never ran, a file
that is not a result is said as unreadable and logged once, never an error of the scrape; and
the view looks for it where the shipped unit has the check keep it. The values a real check
writes, read back through Debian's Prometheus, are tests/floor/test_metrics.py's."""

from __future__ import annotations

import json
import logging
import stat
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from dealerbox.errors import ConfigError, FloorError
from dealerbox.floor.operating.broker_check import REASONS, SHIPPED_RESULT, BridgeSeen, BrokerHealth
from dealerbox.floor.operating.broker_check_metrics import STATES, BrokerCheckCollector
from dealerbox.floor.operating.settings import WebSettings, load_web
from tests.systemd.test_units import unit_settings

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "dealerbox-broker-check.service"
LOGGER = "dealerbox.floor.operating.broker_check_metrics"

#: Files that are no result of the check: each must read as unreadable.
GARBAGE = {
    "not json": b"CONNACK from 127.0.0.1:8883 in 0.004 s\n",
    "not utf-8": b"\xff\xfe\x00garbage",
    "half a file": b'{"ok": true, "line": "CONNACK',
    "a list": b"[1, 2, 3]",
    "keys missing": b'{"ok": true}',
    "ok not a boolean": json.dumps({"ok": "yes", "line": "", "reason": "ok", "ran_at": 1.0, "connack_s": 0.1,
                                    "bridges": {}}).encode(),
    "ok with a failure's reason": json.dumps({"ok": True, "line": "", "reason": "no_connack", "ran_at": 1.0,
                                              "connack_s": None, "bridges": {}}).encode(),
    "an unknown reason": json.dumps({"ok": False, "line": "", "reason": "tired", "ran_at": 1.0,
                                     "connack_s": None, "bridges": {}}).encode(),
    "a time that is no number": json.dumps({"ok": True, "line": "", "reason": "ok", "ran_at": "noon",
                                            "connack_s": 0.1, "bridges": {}}).encode(),
    "no time at all": b'{"ok": true, "line": "", "reason": "ok", "ran_at": NaN, "connack_s": 0.1, "bridges": {}}',
    "bridges a list": json.dumps({"ok": True, "line": "", "reason": "ok", "ran_at": 1.0, "connack_s": 0.1,
                                  "bridges": ["north"]}).encode(),
}


def scrape(collector: BrokerCheckCollector) -> dict[tuple, float]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    text = generate_latest(registry).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def state_of(got: dict) -> dict[str, float]:
    return {dict(labels)["state"]: v for (name, labels), v in got.items() if name == "dealerbox_floor_broker_check"}


def warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno >= logging.WARNING]


def test_no_file_is_a_check_that_never_ran_said_as_such_and_not_logged(tmp_path, caplog):
    collector = BrokerCheckCollector(tmp_path / "result.json")
    for _ in range(2):
        got = scrape(collector)
        assert state_of(got) == {s: (1 if s == "never_ran" else 0) for s in STATES}
        # Nothing else is claimed: no reason, no time, no CONNACK.
        assert {name for name, _l in got} == {"dealerbox_floor_broker_check"}
    assert warnings(caplog) == []


@pytest.mark.parametrize("what", sorted(GARBAGE))
def test_a_file_that_is_no_result_is_unreadable_and_logged_once(tmp_path, caplog, what):
    path = tmp_path / "result.json"
    path.write_bytes(GARBAGE[what])
    with pytest.raises(FloorError, match=f"{path}: "):
        BrokerHealth.read(path)
    collector = BrokerCheckCollector(path)
    for _ in range(3):
        got = scrape(collector)
        assert state_of(got) == {s: (1 if s == "unreadable" else 0) for s in STATES}
        assert {name for name, _l in got} == {"dealerbox_floor_broker_check"}
    (logged,) = warnings(caplog)
    assert str(path) in logged and "unreadable" in logged


def test_unreadable_again_after_a_good_result_is_logged_again(tmp_path, caplog):
    path = tmp_path / "result.json"
    collector = BrokerCheckCollector(path)
    path.write_text("garbage")
    scrape(collector)
    scrape(collector)
    BrokerHealth(True, "CONNACK from 127.0.0.1:8883 in 0.004 s", ran_at=1700000000.0, connack_s=0.004).save(path)
    assert state_of(scrape(collector))["ok"] == 1
    path.write_text("garbage again")
    scrape(collector)
    assert len(warnings(caplog)) == 2


def test_a_folder_where_the_file_should_be_is_unreadable_not_an_error(tmp_path, caplog):
    path = tmp_path / "result.json"
    path.mkdir()
    assert state_of(scrape(BrokerCheckCollector(path)))["unreadable"] == 1
    assert len(warnings(caplog)) == 1


def test_a_result_kept_is_the_result_read_and_readable_by_the_view(tmp_path):
    path = tmp_path / "check" / "result.json"
    kept = BrokerHealth(False, "the bridge to the group (north) has been down for more than 300 s", "bridge_stuck",
                        ran_at=1700000030.5, connack_s=0.012,
                        bridges={"north": BridgeSeen(False, 312.0), "south": BridgeSeen(True)})
    kept.save(path)
    assert BrokerHealth.read(path) == kept
    # The check runs as root, the view as dealerbox-floor: the file is open to read.
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    got = scrape(BrokerCheckCollector(path))
    assert state_of(got) == {"ok": 0, "failed": 1, "never_ran": 0, "unreadable": 0}
    assert {dict(lb)["reason"]: v for (n, lb), v in got.items() if n == "dealerbox_floor_broker_check_reason"} == {
        r: (1 if r == "bridge_stuck" else 0) for r in REASONS}
    assert got[("dealerbox_floor_broker_check_last_run_timestamp_seconds", ())] == 1700000030.5
    assert got[("dealerbox_floor_broker_check_connack_seconds", ())] == 0.012
    assert got[("dealerbox_floor_broker_check_bridge_connected", (("property", "north"),))] == 0
    assert got[("dealerbox_floor_broker_check_bridge_connected", (("property", "south"),))] == 1
    assert got[("dealerbox_floor_broker_check_bridge_down_seconds", (("property", "north"),))] == 312.0
    assert got[("dealerbox_floor_broker_check_bridge_down_seconds", (("property", "south"),))] == 0.0


def test_no_connack_exports_no_connack_time(tmp_path):
    path = tmp_path / "result.json"
    BrokerHealth(False, "no CONNACK from the broker at 127.0.0.1:8883 within 5 s", "no_connack",
                 ran_at=1700000000.0).save(path)
    got = scrape(BrokerCheckCollector(path))
    assert state_of(got)["failed"] == 1
    assert got[("dealerbox_floor_broker_check_reason", (("reason", "no_connack"),))] == 1
    assert ("dealerbox_floor_broker_check_connack_seconds", ()) not in got


def test_the_view_looks_where_the_shipped_unit_keeps_the_result(tmp_path):
    s = unit_settings(UNIT.read_text())
    (command,) = s[("Service", "ExecStart")]
    words = command.split()
    kept = words[words.index("--result") + 1]
    (directory,) = s[("Service", "StateDirectory")]
    # %S is /var/lib for a system unit (systemd.unit(5)); its StateDirectory is made there.
    assert kept.startswith(f"%S/{directory}/")
    assert Path(kept.replace("%S", "/var/lib")) == SHIPPED_RESULT
    # Open to the view's user (the unit's other files are the check's own: bridges.json is 0600).
    (mode,) = s[("Service", "StateDirectoryMode")]
    assert int(mode, 8) & 0o005 == 0o005
    assert WebSettings(store=tmp_path / "floor.sqlite").broker_check_result == SHIPPED_RESULT
    installer = (ROOT / "systemd" / "install-floor.sh").read_text()
    assert "BROKER_CHECK_UNITS=(dealerbox-broker-check.service dealerbox-broker-check.timer)" in installer
    assert 'install_file "$REPO/systemd/$unit" "$UNIT_DIR/$unit" 0644' in installer   # as shipped


def test_floor_toml_names_another_result_file_relative_to_itself(tmp_path):
    config = tmp_path / "floor.toml"
    config.write_text('[store]\npath = "floor.sqlite"\n[web]\nbroker_check_result = "check/result.json"\n')
    assert load_web(config).broker_check_result == tmp_path / "check" / "result.json"
    config.write_text('[store]\npath = "floor.sqlite"\n')
    assert load_web(config).broker_check_result == SHIPPED_RESULT
    config.write_text('[store]\npath = "floor.sqlite"\n[web]\nbroker_check_result = 3\n')
    with pytest.raises(ConfigError, match=r"web\.broker_check_result = 3: expected a file path"):
        load_web(config)
