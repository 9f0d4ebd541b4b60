"""What a table tells the floor about itself in its retained ``health`` (issue 41): the
software's version, its config file's fingerprint, its rule profile, uptime and restarts,
each reader's error rate; and the floor measures its clock's offset from a health that came
live, never from a retained copy. Real broker, real collector, real daemon."""

from __future__ import annotations

import hashlib
import time

import dealerbox
from dealerbox.floor.collecting.collector import Collector
from dealerbox.floor.store import Store
from dealerbox.service.config import load_config
from dealerbox.service.health import BoxHealth, config_fingerprint, reader_errors, running
from dealerbox.service.uplink import Publisher
from tests.floor.support import broker, identity, open_journal, append_lines, pki, settings, wait_for  # noqa: F401
from tests.service.test_recovery import DaemonProcess, crash_session, write_config, write_input


def row(store: Store, table: str = "T01") -> dict:
    return {t["table_id"]: t for t in store.tables()}.get(table) or {}


def test_a_readers_error_rate_is_the_share_of_its_tries_that_failed():
    assert reader_errors({}) == {"polls": 0, "faults": 0, "restarts": 0, "error_rate": None}
    assert reader_errors({"polls": 98, "faults": 1, "restarts": 1, "last_ok": 5.0}) == {
        "polls": 98, "faults": 1, "restarts": 1, "error_rate": 0.02}
    assert reader_errors({"polls": 0, "faults": 3})["error_rate"] == 1.0


def test_the_box_reports_its_version_config_fingerprint_and_profile(tmp_path):
    path = write_config(tmp_path)
    config = load_config(path)
    health = BoxHealth(None, None, None)
    box = health.box(config)
    assert box["version"] == dealerbox.__version__
    assert box["config_fingerprint"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert box["profile"] == config.profile.name and box["profile"]
    # What the box judges with, not the file edited since: read once per loaded config.
    path.write_text(path.read_text() + "\n# edited\n")
    assert health.box(config)["config_fingerprint"] == box["config_fingerprint"]
    assert running(load_config(path))["config_fingerprint"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert config_fingerprint(tmp_path / "gone.toml") is None
    assert "version" not in health.box()  # no config: the storage figures only, as before


def test_the_floor_stores_what_the_daemon_runs_and_counts_its_restarts(broker, pki, tmp_path):
    session = tmp_path / "session.jsonl"
    write_input(session, crash_session())
    config = write_config(tmp_path)
    with open(config, "a") as f:
        f.write(f'\n[floor]\nenabled = true\ntable = "T01"\nhost = "localhost"\nport = {broker.port}\n'
                f'ca = "{pki / "ca.crt"}"\ncert = "{pki / "T01.crt"}"\nkey = "{pki / "T01.key"}"\n'
                f"keepalive_s = 5\nhealth_interval_s = 1\n")
    fingerprint = hashlib.sha256(config.read_bytes()).hexdigest()
    profile = load_config(config).profile.name
    with Store(tmp_path / "floor.sqlite") as store, \
            Collector(identity(pki, broker, "floor-collector"), store):
        for boot in (1, 2):
            with DaemonProcess(config, session, 0.01) as d:
                d.wait_log("dealerbox started")
                health = wait_for(lambda: ((row(store).get("health") or {}).get("boot") == boot
                                           and row(store)["health"]), f"the health of boot {boot}")
                d.kill()
                d.wait()
            assert health["version"] == dealerbox.__version__
            assert health["config_fingerprint"] == fingerprint
            assert health["profile"] == profile
            assert health["restarts"] == boot - 1
            assert isinstance(health["uptime_s"], float) and health["uptime_s"] >= 0
            assert set(health["readers"]) == {"shoe", "board"}
            for reader in health["readers"].values():
                assert {"polls", "faults", "restarts", "error_rate"} <= set(reader)
            # The table's clock is the floor's here: measured live, the offset is the message's
            # trip and never ahead (a loaded machine may delay the trip by seconds, never
            # make the table's clock run ahead).
            offset = row(store)["clock_offset"]
            assert offset is not None and -10.0 < offset <= 0.001


def test_the_floor_measures_a_clock_off_from_live_health_and_not_from_a_retained_copy(broker, pki, tmp_path):
    jdir = tmp_path / "T02"
    with open_journal(jdir) as journal, Store(tmp_path / "floor.sqlite") as store:
        append_lines(journal, 3)
        with Collector(identity(pki, broker, "floor-collector"), store):
            # A table whose wall clock runs 30 s ahead of the floor's; the offset measured is
            # that less the message's trip, which a loaded machine may stretch by seconds.
            with Publisher(settings(pki, broker, "T02"), jdir, clock=lambda: time.time() + 30.0):
                wait_for(lambda: row(store, "T02").get("clock_offset") is not None, "an offset measured")
                offset, at = row(store, "T02")["clock_offset"], row(store, "T02")["clock_offset_at"]
                assert 25.0 < offset <= 30.001
        measured = row(store, "T02")["clock_offset_at"]
        offset = row(store, "T02")["clock_offset"]
        assert measured >= at
        time.sleep(1.5)
        # A collector started later gets the table's retained health, seconds old: no offset from it.
        # The health is cleared first, so that its coming back says the retained copy was filed
        # (with anything it would have changed: one transaction).
        store.update_table("T02", health=None)
        with Collector(identity(pki, broker, "floor-collector"), store):
            wait_for(lambda: row(store, "T02").get("health"), "the retained health filed")
            assert row(store, "T02")["clock_offset_at"] == measured
            assert row(store, "T02")["clock_offset"] == offset
