"""Several collectors on one floor: an MQTT v5 shared subscription spreads the
tables' messages over them, each files into the one store (an SQLite file, or
PostgreSQL as a casino group runs it), and one of them SIGKILLed mid-stream
costs no line, stores none twice; nor does PostgreSQL killed and started again."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from tests.floor.support import (TABLES, broker, open_journal, pki, settings,  # noqa: F401
                                wait_for, write_collector_config)
from tests.floor.test_faults import Dealer, seqs
from dealerbox.service.uplink import Publisher
from dealerbox.floor.store import Store

DEALERBOX = [sys.executable, "-m", "dealerbox.cli"]
COLLECTORS = ("floor-collector", "floor-collector-2", "floor-collector-3")
LINES = 400


def _collect(config) -> subprocess.Popen:
    with open(config.with_suffix(".log"), "ab") as log:  # kept beside the config, for a failure's reader
        return subprocess.Popen([*DEALERBOX, "floor", "collect", "--config", str(config)], stderr=log)


def _told(proc: subprocess.Popen, config) -> str:
    """Whether a collector still runs, and the end of its log: what a failed wait needs."""
    state = "still running" if proc.poll() is None else f"exited with {proc.returncode}"
    log = config.with_suffix(".log").read_text(errors="replace")[-3000:]
    return f"the collector is {state}; its log ends:\n{log}"


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_target(request, tmp_path):
    if request.param == "sqlite":
        return tmp_path / "floor.sqlite"
    return request.getfixturevalue("postgres_cluster").database(f"group_{tmp_path.name[-20:]}")


def test_three_collectors_share_the_tables_and_one_sigkilled_costs_nothing(broker, pki, tmp_path, store_target):
    db = store_target
    configs = [write_collector_config(tmp_path / f"{c}.toml", pki, broker, db, collector=c) for c in COLLECTORS]
    journals = {t: open_journal(tmp_path / t) for t in TABLES}
    procs = [_collect(c) for c in configs]
    pubs = {}
    try:
        pubs = {t: Publisher(settings(pki, broker, t, batch=8, window=32), tmp_path / t).start() for t in TABLES}
        with Dealer(journals["T01"], LINES, 0.01), Dealer(journals["T02"], LINES, 0.01), \
                Dealer(journals["T03"], LINES, 0.01):
            wait_for(lambda: all(p.acked >= 50 for p in pubs.values()), "the collectors filing")
            # All three have started: on a loaded machine two can file 50 lines each before the third
            # is past its imports, and one killed before its boot would never make the fourth.
            with Store(db) as store:
                wait_for(lambda: store.meta("collector_boot") == "3", "the three collectors started", 120)
            procs[0].send_signal(signal.SIGKILL)
            assert procs[0].wait(timeout=30) == -signal.SIGKILL
            # The two left carry on alone: every table moves on while the first is dead.
            at_kill = {t: p.acked for t, p in pubs.items()}
            wait_for(lambda: all(p.acked >= at_kill[t] + 50 for t, p in pubs.items()),
                     "every table acknowledged by the two collectors left")
            procs[0] = _collect(configs[0])
            # Four lives of collectors on this store, each its own boot: three, and the one started again.
            with Store(db) as store:
                try:
                    wait_for(lambda: store.meta("collector_boot") == "4", "the killed collector started again", 120)
                except AssertionError as exc:
                    raise AssertionError(f"{exc}: {_told(procs[0], configs[0])}") from None
        wait_for(lambda: all(p.acked == LINES for p in pubs.values()), "every line acknowledged", 120)
    finally:
        for p in pubs.values():
            p.close()
        for proc in procs:
            _stop(proc)
        for j in journals.values():
            j.close()
    with Store(db) as store:
        for t in TABLES:
            assert seqs(store, t) == list(range(1, LINES + 1)), t
            assert store.verify(t) == []
        assert store.meta("collector_boot") == "4"


def test_postgresql_killed_mid_stream_costs_two_collectors_nothing(broker, pki, tmp_path, postgres_cluster):
    """The database server SIGKILLed (a power cut) and started again while two collectors file:
    the batches in flight fail and are not acknowledged, the tables send them again, the
    collectors find new connections; every line is stored once."""
    url = postgres_cluster.database("killed_mid_stream")
    configs = [write_collector_config(tmp_path / f"{c}.toml", pki, broker, url, collector=c)
               for c in COLLECTORS[:2]]
    journals = {t: open_journal(tmp_path / t) for t in TABLES}
    procs = [_collect(c) for c in configs]
    pubs = {}
    try:
        pubs = {t: Publisher(settings(pki, broker, t, batch=8, window=32), tmp_path / t).start() for t in TABLES}
        with Dealer(journals["T01"], LINES, 0.01), Dealer(journals["T02"], LINES, 0.01), \
                Dealer(journals["T03"], LINES, 0.01):
            wait_for(lambda: all(p.acked >= 50 for p in pubs.values()), "the collectors filing")
            postgres_cluster.kill()
            at_kill = {t: p.acked for t, p in pubs.items()}
            postgres_cluster.start()
            wait_for(lambda: all(p.acked >= at_kill[t] + 50 for t, p in pubs.items()),
                     "every table acknowledged again after the restart")
        wait_for(lambda: all(p.acked == LINES for p in pubs.values()), "every line acknowledged", 120)
        assert all(proc.poll() is None for proc in procs)  # neither collector gave up
    finally:
        for p in pubs.values():
            p.close()
        for proc in procs:
            _stop(proc)
        for j in journals.values():
            j.close()
    with Store(url) as store:
        for t in TABLES:
            assert seqs(store, t) == list(range(1, LINES + 1)), t
            assert store.verify(t) == []


def test_a_share_group_that_is_no_mqtt_group_name_is_refused(tmp_path):
    from dealerbox.errors import ConfigError
    from dealerbox.floor.operating.settings import load_collector

    path = tmp_path / "floor.toml"
    path.write_text('[broker]\nca = "ca.crt"\ncert = "c.crt"\nkey = "c.key"\n[store]\npath = "f.sqlite"\n'
                    '[collector]\nshare_group = "a/b"\n')
    try:
        load_collector(path)
    except ConfigError as exc:
        assert "collector.share_group" in str(exc) and str(path) in str(exc)
    else:
        raise AssertionError("a share group with a slash was taken")
