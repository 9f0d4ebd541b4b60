"""The daemon with ``[floor]`` on: SIGKILLed mid-session (the recovery tests'
kill harness), it resumes reporting from its cursor and the floor's store ends
with exactly the journal's lines."""

from __future__ import annotations

import json
import signal

from tests.floor.support import broker, identity, pki, wait_for  # noqa: F401
from tests.service.test_recovery import DaemonProcess, crash_session, write_config, write_input
from dealerbox.floor.collecting.collector import Collector
from dealerbox.service.uplink import CURSOR_NAME
from dealerbox.floor.store import Store


def journal_raw(jdir):
    out = []
    for path in sorted(jdir.glob("journal-*.jsonl")):
        out += path.read_text().splitlines()
    return out


def _readers_seen(store):
    """The table's health once every reader in it has had a good poll, else None."""
    row = {t["table_id"]: t for t in store.tables()}.get("T01")
    health = (row or {}).get("health") or {}
    readers = health.get("readers") or {}
    if readers and all(r.get("last_seen_s") is not None for r in readers.values()):
        return health
    return None


def test_a_sigkilled_daemon_resumes_reporting_from_its_cursor(broker, pki, tmp_path):
    session = tmp_path / "session.jsonl"
    events = write_input(session, crash_session())
    config = write_config(tmp_path)
    with open(config, "a") as f:
        f.write(f'\n[floor]\nenabled = true\ntable = "T01"\nhost = "localhost"\nport = {broker.port}\n'
                f'ca = "{pki / "ca.crt"}"\ncert = "{pki / "T01.crt"}"\nkey = "{pki / "T01.key"}"\n'
                f"keepalive_s = 5\nack_timeout_s = 3\nhealth_interval_s = 1\n"
                f"window = 20\nbatch = 5\n")
    jdir = tmp_path / "state" / "journal"
    with Store(tmp_path / "floor.sqlite") as store, \
            Collector(identity(pki, broker, "floor-collector"), store) as collector:
        with DaemonProcess(config, session, 0.01) as d:
            d.wait_log("dealerbox started")
            wait_for(lambda: len(store.lines("T01")) >= 40, "40 lines on the floor")
            health = wait_for(lambda: _readers_seen(store), "health naming both readers as polling")
            assert set(health["readers"]) == {"shoe", "board"}
            assert not any(r["faulted"] for r in health["readers"].values())
            assert health["storage_fault"] is None and health["journal_lost_events"] == 0
            d.kill()
            assert d.wait() == -signal.SIGKILL
        cursor = json.loads((jdir / CURSOR_NAME).read_text())["acked"]
        assert cursor > 0
        with DaemonProcess(config, session, 0.0) as d:
            wait_for(lambda: sum(1 for line in journal_raw(jdir) if '"event"' in line) >= len(events),
                     "the whole session journaled")
            wait_for(lambda: len(store.lines("T01")) == len(journal_raw(jdir)), "every line on the floor")
            assert d.stop() == 0
        raw = journal_raw(jdir)
        assert [line for _s, line in store.lines("T01")] == raw
        assert [s for s, _l in store.lines("T01")] == list(range(1, len(raw) + 1))
        assert store.verify("T01") == []
        # Resumed from the cursor: at most what was in flight came twice.
        assert collector.duplicates.get("T01", 0) <= 2 * 20
        row = {t["table_id"]: t for t in store.tables()}["T01"]
        assert row["status"]["why"] == "stopped" and row["boot"] == 2
