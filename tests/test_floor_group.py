"""Several collectors on one floor: an MQTT v5 shared subscription spreads the
tables' messages over them, each files into the one store, and one of them
SIGKILLed mid-stream costs no line, stores none twice."""

from __future__ import annotations

import signal
import subprocess
import sys

from test_floor_support import (TABLES, broker, open_journal, pki, settings, wait_for,  # noqa: F401
                                write_collector_config)
from test_floor_faults import Dealer, seqs
from dealerbox.floor.publisher import Publisher
from dealerbox.floor.store import Store

DEALERBOX = [sys.executable, "-m", "dealerbox.cli"]
COLLECTORS = ("floor-collector", "floor-collector-2", "floor-collector-3")
LINES = 400


def _collect(config) -> subprocess.Popen:
    return subprocess.Popen([*DEALERBOX, "floor", "collect", "--config", str(config)], stderr=subprocess.DEVNULL)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_three_collectors_share_the_tables_and_one_sigkilled_costs_nothing(broker, pki, tmp_path):
    db = tmp_path / "floor.sqlite"
    configs = [write_collector_config(tmp_path / f"{c}.toml", pki, broker, db, collector=c) for c in COLLECTORS]
    journals = {t: open_journal(tmp_path / t) for t in TABLES}
    procs = [_collect(c) for c in configs]
    pubs = {}
    try:
        pubs = {t: Publisher(settings(pki, broker, t, batch=8, window=32), tmp_path / t).start() for t in TABLES}
        with Dealer(journals["T01"], LINES, 0.01), Dealer(journals["T02"], LINES, 0.01), \
                Dealer(journals["T03"], LINES, 0.01):
            wait_for(lambda: all(p.acked >= 50 for p in pubs.values()), "the collectors filing")
            procs[0].send_signal(signal.SIGKILL)
            assert procs[0].wait(timeout=30) == -signal.SIGKILL
            # The two left carry on alone: every table moves on while the first is dead.
            at_kill = {t: p.acked for t, p in pubs.items()}
            wait_for(lambda: all(p.acked >= at_kill[t] + 50 for t, p in pubs.items()),
                     "every table acknowledged by the two collectors left")
            procs[0] = _collect(configs[0])
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
        # Four lives of collectors on this store, each its own boot: three, and the one started again.
        assert store.meta("collector_boot") == "4"


def test_a_share_group_that_is_no_mqtt_group_name_is_refused(tmp_path):
    from dealerbox.errors import ConfigError
    from dealerbox.floor.config import load_collector

    path = tmp_path / "floor.toml"
    path.write_text('[broker]\nca = "ca.crt"\ncert = "c.crt"\nkey = "c.key"\n[store]\npath = "f.sqlite"\n'
                    '[collector]\nshare_group = "a/b"\n')
    try:
        load_collector(path)
    except ConfigError as exc:
        assert "collector.share_group" in str(exc) and str(path) in str(exc)
    else:
        raise AssertionError("a share group with a slash was taken")
