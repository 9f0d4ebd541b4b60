"""The floor's metrics (issue 41): ``/metrics`` in Prometheus's text format, behind a bearer
token. Debian's own ``prometheus`` scrapes the web view over TLS with the scrape config the
project ships (firmware_config/floor/prometheus.yml, shown in docs/floor/metrics.md) and loads the
shipped alerting rules; the series read back through Prometheus's HTTP API equal what the
store holds, counted here with SQL of the test's own, and what the real broker health check,
run against the tests' mosquitto, kept in its result file."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from dealerbox.errors import ConfigError
from dealerbox.floor.collecting.filing import Filing
from dealerbox.floor.collecting.message import Message
from dealerbox.floor.operating.broker import free_port, stop_process
from dealerbox.floor.operating.broker_check import REASONS
from dealerbox.floor.operating.broker_check_metrics import STATES
from dealerbox.floor.operating.settings import WebSettings
from dealerbox.floor.store import Store, store_engine
from dealerbox.floor.web.app import FloorApp
from dealerbox.link import protocol as P
from tests.floor.conftest import need
from tests.floor.support import append_lines, broker, open_journal, pki, wait_for  # noqa: F401
from tests.floor.web.test_app import WebProcess, add_users, call, sign_in, web_cert  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
SCRAPE_CONFIG = ROOT / "firmware_config" / "floor" / "prometheus.yml"
RULES = ROOT / "firmware_config" / "floor" / "prometheus-rules.yml"
METRICS_MD = ROOT / "docs" / "floor" / "metrics.md"
TOKEN = "metrics-token-" + "7" * 40
#: The broker health check's result file the served view reads (``[web] broker_check_result``).
CHECK_RESULT = "broker-check-result.json"


def journal_lines(directory: Path, count: int) -> list[str]:
    with open_journal(directory) as journal:
        append_lines(journal, count)
    return [line for path in sorted(directory.glob("journal-*.jsonl")) for line in path.read_text().splitlines()]


def file_messages(store: Store, table: str, *payloads: tuple[str, bytes]) -> None:
    filing = Filing(store)
    now = time.time()
    filing.store_batch([Message.on_table_topic(f"{P.ROOT}/tables/{table}/{kind}", payload, now)
                        for kind, payload in payloads], now)


def room(directory: Path) -> Path:
    """T01: 30 lines filed, its health saying 40 (10 behind) and 12 unacknowledged; T02: 10 lines,
    a forged 11th (it breaks the chain: quarantined) and a health the floor cannot use (refused);
    two properties' bridges, one connected and one blind."""
    path = directory / "floor.sqlite"
    t01, t02 = journal_lines(directory / "T01", 30), journal_lines(directory / "T02", 11)
    forged = json.loads(t02[10])
    forged["prev"] = "0" * 64
    with Store(path) as store:
        file_messages(store, "T01", ("journal", P.encode({"table": "T01", "boot": 1, "oldest": 1, "lines": t01})),
                      ("status", P.encode({"table": "T01", "online": True, "why": "birth", "boot": 1, "conn": 1})),
                      ("health", P.encode({"table": "T01", "head": 40, "acked": 28, "backlog": 12})))
        file_messages(store, "T02", ("journal", P.encode({"table": "T02", "boot": 1, "oldest": 1,
                                                          "lines": t02[:10]})))
        file_messages(store, "T02", ("journal", P.encode({"table": "T02", "boot": 1, "oldest": 1,
                                                          "lines": [json.dumps(forged, separators=(",", ":"))]})),
                      ("health", P.encode({"table": "T02", "backlog": "lots"})))
        store.note_bridge("north", True)
        store.note_bridge("south", False, time.time() - 600)
    add_users(path)
    return path


def store_says(path: Path) -> dict:
    """What the store holds, counted with the test's own SQL."""
    db = sqlite3.connect(path)
    try:
        q = db.execute
        return {
            "filed": dict(q("SELECT table_id, count(*) FROM lines GROUP BY table_id")),
            "chain": dict(q("SELECT table_id, sum(times) FROM quarantine GROUP BY table_id")),
            "protocol": dict(q("SELECT table_id, sum(count) FROM alerts WHERE kind = 'protocol' GROUP BY table_id")),
            "open": dict(q("SELECT kind, count(*) FROM alerts WHERE cleared_at IS NULL GROUP BY kind")),
            "bridges": {n: int(c) for n, c in q("SELECT name, connected FROM bridges")},
            "last_seq": dict(q("SELECT table_id, last_seq FROM tables")),
        }
    finally:
        db.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory, web_cert):  # noqa: F811
    directory = tmp_path_factory.mktemp("metrics")
    path = room(directory)
    token_file = directory / "metrics.token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    # The casino CA that signed the view's certificate: the test's client and Prometheus check it.
    shutil.copy(web_cert[0].parent / "ca.crt", directory / "ca.crt")
    with WebProcess(directory, path, tls=web_cert, metrics_token_file=str(token_file),
                    broker_check_result=str(directory / CHECK_RESULT)) as web:
        yield web, path, directory


def scrape(web, token: str | None = TOKEN, **kw):
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return call(web, "GET", "/metrics", headers=headers, **kw)


def samples(text: str) -> dict[tuple, float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


# -- refused without the token


def test_an_unauthenticated_request_is_refused(served):
    web, _path, _d = served
    assert scrape(web, None)[0] == 401
    assert scrape(web, "wrong-" + TOKEN)[0] == 401
    assert scrape(web, "")[0] == 401
    assert call(web, "GET", "/metrics", headers={"Authorization": f"Basic {TOKEN}"})[0] == 401
    status, headers, _body = scrape(web, None)
    assert headers.get("WWW-Authenticate", "").startswith("Bearer")
    # A signed-in user is no scraper: the session is not the token.
    assert scrape(web, None, cookie=sign_in(web, "ada")[0])[0] == 401


def test_without_a_token_file_there_are_no_metrics_and_a_weak_token_stops_the_view(tmp_path):
    app = FloorApp(WebSettings(store=tmp_path / "floor.sqlite"))
    try:
        assert ("/metrics", "GET") in {(p, m) for p, m, *_ in app.routes()} and app.metrics.token_file is None
    finally:
        app.figures.close()
        app.store.close()
    weak = tmp_path / "weak.token"
    weak.write_text("short\n")
    with pytest.raises(ConfigError, match=r"weak\.token: web\.metrics_token_file = '5 characters': expected"):
        FloorApp(WebSettings(store=tmp_path / "floor.sqlite", metrics_token_file=weak))
    with pytest.raises(ConfigError, match="gone.token: cannot read it"):
        FloorApp(WebSettings(store=tmp_path / "floor.sqlite", metrics_token_file=tmp_path / "gone.token"))


# -- the figures equal the store


def test_the_scrape_carries_the_stores_figures(served):
    web, path, _d = served
    for _ in range(2):
        assert call(web, "POST", "/api/session", {"user": "vera", "password": "not her password"})[0] == 401
    status, headers, body = scrape(web)
    assert status == 200 and headers["Content-Type"].startswith("text/plain; version=")
    got, want = samples(body), store_says(path)
    assert want["chain"] and want["protocol"] and want["open"]        # the room has them all
    for table, n in want["filed"].items():
        assert got[("dealerbox_floor_lines_filed_total", (("table", table),))] == n
    for why in ("chain", "protocol"):
        for table, n in want[why].items():
            assert got[("dealerbox_floor_lines_rejected_total", (("table", table), ("why", why)))] == n
    for kind, n in want["open"].items():
        assert got[("dealerbox_floor_alerts_open", (("kind", kind),))] == n
    for name, up in want["bridges"].items():
        assert got[("dealerbox_floor_bridge_connected", (("property", name),))] == up
    assert got[("dealerbox_floor_bridges", (("state", "blind"),))] == 1
    assert got[("dealerbox_floor_bridge_state_seconds", (("property", "south"),))] >= 600
    assert got[("dealerbox_floor_collector_behind_lines", (("table", "T01"),))] == 40 - want["last_seq"]["T01"]
    assert got[("dealerbox_floor_table_backlog_lines", (("table", "T01"),))] == 12
    for table, last in want["last_seq"].items():
        # The protection pass never ran here: every filed line waits for it.
        assert got[("dealerbox_floor_protection_behind_lines", (("table", table),))] == last
        assert got[("dealerbox_floor_protection_lag_seconds", (("table", table),))] > 0
    assert got[("dealerbox_floor_signins_failed_total", ())] == 2
    assert got[("dealerbox_floor_store_up", ())] == 1 and got[("dealerbox_floor_store_query_seconds", ())] > 0


# -- Debian's prometheus scrapes it


def shipped_scrape_config(web, directory: Path, ca: Path) -> Path:
    """The shipped scrape config, pointed at this web view, its token and CA, scraping every second."""
    text = SCRAPE_CONFIG.read_text()
    for old, new in (("floor.example:8443", f"127.0.0.1:{web.port}"),
                     ("/etc/prometheus/dealerbox-floor.token", str(directory / "metrics.token")),
                     ("/etc/prometheus/dealerbox-ca.crt", str(ca)),
                     ("/etc/prometheus/dealerbox-floor-rules.yml", str(RULES)),
                     ("scrape_interval: 30s", "scrape_interval: 1s"),
                     ("evaluation_interval: 30s", "evaluation_interval: 1s")):
        assert old in text, old
        text = text.replace(old, new)
    path = directory / "prometheus.yml"
    path.write_text(text)
    return path


def query(port: int, expr: str) -> list[dict]:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as resp:
        answer = json.load(resp)
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


def test_the_documented_scrape_config_is_shipped_and_shown_in_the_metrics_page():
    doc = METRICS_MD.read_text()
    for shipped in (SCRAPE_CONFIG, RULES):
        text = shipped.read_text()
        assert text.strip() in doc, f"docs/floor/metrics.md must show {shipped.name} as shipped"


def test_debian_prometheus_scrapes_the_floor_and_reads_back_the_stores_figures(
        served, web_cert, broker, pki, tmp_path):  # noqa: F811
    prometheus = need("prometheus", "prometheus")
    web, path, directory = served
    result = directory / CHECK_RESULT
    config = shipped_scrape_config(web, directory, directory / "ca.crt")
    signins_failed = samples(scrape(web)[2])[("dealerbox_floor_signins_failed_total", ())]
    check = subprocess.run(["promtool", "check", "config", str(config)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    port = free_port()
    log = tmp_path / "prometheus.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([prometheus, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                 f"--web.listen-address=127.0.0.1:{port}"], stdout=out, stderr=out,
                                stdin=subprocess.DEVNULL)
    try:
        def scraped():
            if proc.poll() is not None:
                raise AssertionError(f"prometheus exited {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                up = query(port, 'up{job="dealerbox-floor"}')
            except OSError:
                return None
            return up and up[0]["value"][1] == "1" and query(port, "dealerbox_floor_lines_filed_total")
        wait_for(scraped, "prometheus to scrape the floor", timeout=60)
        want = store_says(path)

        def series(expr: str) -> dict:
            return {tuple(sorted((k, v) for k, v in r["metric"].items() if k not in ("__name__", "job", "instance"))):
                    float(r["value"][1]) for r in query(port, expr)}
        assert series("dealerbox_floor_lines_filed_total") == {(("table", t),): n for t, n in want["filed"].items()}
        rejected = series("dealerbox_floor_lines_rejected_total")
        assert rejected == {**{(("table", t), ("why", "chain")): n for t, n in want["chain"].items()},
                            **{(("table", t), ("why", "protocol")): n for t, n in want["protocol"].items()}}
        assert series("dealerbox_floor_alerts_open") == {(("kind", k),): n for k, n in want["open"].items()}
        assert series("dealerbox_floor_bridge_connected") == {(("property", b),): up
                                                              for b, up in want["bridges"].items()}
        assert series('dealerbox_floor_bridges{state="blind"}') == {(("state", "blind"),): 1}
        assert series('dealerbox_floor_collector_behind_lines{table="T01"}') == {
            (("table", "T01"),): 40 - want["last_seq"]["T01"]}
        assert series("dealerbox_floor_protection_behind_lines") == {(("table", t),): n
                                                                     for t, n in want["last_seq"].items()}
        assert series("dealerbox_floor_signins_failed_total") == {(): signins_failed}
        assert series("dealerbox_floor_store_up") == {(): 1.0}
        assert set(series("dealerbox_floor_store_query_seconds")) == {()}
        # The shipped rules load, and the blind property's rule fires (down 600 s > 300 s).
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/rules", timeout=10) as resp:
            groups = json.load(resp)["data"]["groups"]
        names = {r["name"] for g in groups for r in g["rules"]}
        assert {"FloorCollectorBehind", "FloorBridgeBlind", "FloorLinesRejected", "FloorSignInsFailing",
                "BrokerCheckFailing", "BrokerCheckNotRunning"} <= names
        assert all(r["health"] == "ok" for g in groups for r in g["rules"]), groups

        def alerts() -> list[dict]:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/alerts", timeout=10) as resp:
                return json.load(resp)["data"]["alerts"]

        def firing():
            return {a["labels"]["alertname"] for a in alerts()}
        wait_for(lambda: "FloorBridgeBlind" in firing(), "the blind bridge's rule to fire", timeout=30)
        # T01's 10 lines behind are below the rule's 500: no false alarm.
        assert "FloorCollectorBehind" not in firing()

        # The broker health check: never ran yet (no file), said as such.
        assert series("dealerbox_floor_broker_check") == {
            (("state", s),): (1.0 if s == "never_ran" else 0.0) for s in STATES}
        assert series("dealerbox_floor_broker_check_last_run_timestamp_seconds") == {}
        # The real check against the tests' mosquitto, as the shipped unit runs it, watching a bridge
        # of the broker's own (its conf.d names north) that never connects: twice, so that the
        # second check has seen it down for a while; both pass (down less than 300 s).
        conf_d = tmp_path / "conf.d"
        conf_d.mkdir()
        (conf_d / "dealerbox-bridge-north.conf").write_text("connection north\naddress 127.0.0.1:1\n")
        watching = ("--bridge-blind-s", "300", "--state", str(tmp_path / "bridges.json"), "--conf-dir", str(conf_d))
        for _ in range(2):
            done = broker_check(pki, broker.port, result, *watching)
            assert done.returncode == 0, done.stderr
        kept = json.loads(result.read_text())
        assert kept["ok"] is True and kept["reason"] == "ok" and kept["bridges"]["north"]["connected"] is False
        assert kept["bridges"]["north"]["down_s"] > 0

        def check_seen(ran_at: float) -> bool:
            """Whether Prometheus has scraped the result of the check that ran at *ran_at*."""
            return series("dealerbox_floor_broker_check_last_run_timestamp_seconds") == {(): ran_at}
        wait_for(lambda: check_seen(kept["ran_at"]), "prometheus to read the broker check's result", timeout=30)
        assert series("dealerbox_floor_broker_check") == {
            (("state", s),): (1.0 if s == "ok" else 0.0) for s in STATES}
        assert series("dealerbox_floor_broker_check_reason") == {
            (("reason", r),): (1.0 if r == "ok" else 0.0) for r in REASONS}
        assert series("dealerbox_floor_broker_check_connack_seconds") == {(): kept["connack_s"]}
        assert series("dealerbox_floor_broker_check_bridge_connected") == {(("property", "north"),): 0.0}
        assert series("dealerbox_floor_broker_check_bridge_down_seconds") == {
            (("property", "north"),): kept["bridges"]["north"]["down_s"]}
        # A check that passed raises nothing, not even a pending alert.
        assert not {"BrokerCheckFailing", "BrokerCheckNotRunning"} & firing()

        # A broker that does not answer: the check fails (mosquitto would be restarted), and the rule fires.
        done = broker_check(pki, free_port(), result)
        assert done.returncode == 1
        kept = json.loads(result.read_text())
        assert kept["ok"] is False and kept["reason"] == "no_connack" and kept["connack_s"] is None
        wait_for(lambda: check_seen(kept["ran_at"]), "prometheus to read the failed check", timeout=30)
        assert series('dealerbox_floor_broker_check{state="failed"}') == {(("state", "failed"),): 1.0}
        assert series('dealerbox_floor_broker_check_reason{reason="no_connack"}') == {(("reason", "no_connack"),): 1.0}
        assert series("dealerbox_floor_broker_check_connack_seconds") == {}      # no CONNACK came
        wait_for(lambda: "BrokerCheckFailing" in firing(), "the failed check's rule to fire", timeout=30)
        (failing,) = [a for a in alerts() if a["labels"]["alertname"] == "BrokerCheckFailing"]
        assert failing["labels"]["reason"] == "no_connack"
    finally:
        stop_process(proc)
        result.unlink(missing_ok=True)


# -- the broker health check's result, read from its file at each scrape


def broker_check(pki: Path, port: int, result: Path, *more: str) -> subprocess.CompletedProcess:
    """``floor broker-check`` as the shipped unit runs it (its --result), as the tests' client."""
    return subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", "broker-check", "--host", "127.0.0.1",
                           "--port", str(port), "--pki", str(pki), "--cert", "floor-collector", "--timeout", "3",
                           "--result", str(result), *more], capture_output=True, text=True, timeout=60)


def check_states(got: dict) -> dict[str, float]:
    return {dict(labels)["state"]: v for (name, labels), v in got.items() if name == "dealerbox_floor_broker_check"}


def test_the_broker_checks_file_missing_or_garbage_never_fails_the_scrape(served):
    web, _path, directory = served
    result = directory / CHECK_RESULT
    status, _h, body = scrape(web)
    assert status == 200
    assert check_states(samples(body)) == {"ok": 0, "failed": 0, "never_ran": 1, "unreadable": 0}
    before = web.log.read_text().count(str(result))
    try:
        result.write_text('{"ok": true, "line": "CONNACK from')     # half a file
        for _ in range(3):
            status, _h, body = scrape(web)
            assert status == 200
            got = samples(body)
            assert check_states(got) == {"ok": 0, "failed": 0, "never_ran": 0, "unreadable": 1}
            assert ("dealerbox_floor_broker_check_last_run_timestamp_seconds", ()) not in got
            assert got[("dealerbox_floor_store_up", ())] == 1        # the rest of the scrape is whole
        # Said once in the view's log, not at every scrape.
        assert web.log.read_text().count(str(result)) - before == 1
    finally:
        result.unlink(missing_ok=True)


def test_on_postgresql_the_scrape_counts_the_stores_connections(postgres_cluster, tmp_path):
    url = postgres_cluster.database("floor_metrics")
    lines = journal_lines(tmp_path / "T01", 5)
    with Store(url) as store:
        file_messages(store, "T01", ("journal", P.encode({"table": "T01", "boot": 1, "oldest": 1, "lines": lines})))
    add_users(url, ("vera",))
    token_file = tmp_path / "metrics.token"
    token_file.write_text(TOKEN)
    with WebProcess(tmp_path, url, metrics_token_file=str(token_file),
                    broker_check_result=str(tmp_path / CHECK_RESULT)) as web:
        assert scrape(web, None)[0] == 401
        status, _h, body = scrape(web)
        assert status == 200
        got = samples(body)
        engine = store_engine(url)
        try:
            with engine.connect() as conn:
                mine = conn.exec_driver_sql(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()").scalar_one()
                filed = conn.exec_driver_sql("SELECT count(*) FROM lines WHERE table_id = 'T01'").scalar_one()
        finally:
            engine.dispose()
    assert got[("dealerbox_floor_lines_filed_total", (("table", "T01"),))] == filed == 5
    # The view's own connections at the scrape; the test's one connection more now.
    connections = got[("dealerbox_floor_store_connections", ())]
    assert connections >= 1 and abs(connections - (mine - 1)) <= 1, (connections, mine)
