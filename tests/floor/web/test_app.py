"""The floor's web view as a server: ``dealerbox floor web`` in its own process,
as its unit runs it. Connections that never finish cost no thread and are
closed; malformed requests get a proper 400; TLS with the casino CA's
certificate; the collector republishes the alerts after a clear here.

The helpers here (:class:`WebProcess`, :func:`call`, :func:`sign_in`) serve the
other web tests too (tests/floor/test_accounts.py, tests/floor/test_view.py).
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.floor.support import broker, identity, pki, wait_for  # noqa: F401
from dealerbox.errors import ConfigError
from dealerbox.floor.operating.accounts import Accounts
from dealerbox.floor.operating.broker import MAKE_CA, free_port, stop_process
from dealerbox.floor.operating.settings import load_web
from dealerbox.floor.store import Store

ROOT = Path(__file__).resolve().parents[3]
PASSWORDS = {"vera": "viewer password 1", "sam": "supervisor password 1", "ada": "admin password 12"}
ROLES = {"vera": "viewer", "sam": "supervisor", "ada": "admin"}


def add_users(store_path: Path, names=("vera", "sam", "ada")) -> None:
    with Store(store_path) as store:
        accounts = Accounts(store)
        for name in names:
            accounts.add(name, ROLES[name], PASSWORDS[name])


@pytest.fixture(scope="session")
def web_cert(pki):
    """The web view's server certificate from the casino CA (make-ca.sh web)."""
    if not (pki / "floor-web.crt").exists():
        subprocess.run(["sh", str(MAKE_CA), str(pki), "web", "localhost", "127.0.0.1"], check=True,
                       capture_output=True)
    return pki / "floor-web.crt", pki / "floor-web.key"


class WebProcess:
    """``dealerbox floor web --config floor.toml`` on a free loopback port."""

    def __init__(self, directory: Path, store: Path, *, tls=None, **web):
        self.directory = directory
        self.port = free_port()
        backend = "url" if "://" in str(store) else "path"
        lines = ["[store]", f'{backend} = "{store}"', "[web]", 'host = "127.0.0.1"', f"port = {self.port}"]
        if tls is not None:
            lines += [f'cert = "{tls[0]}"', f'key = "{tls[1]}"']
        lines += [f"{k} = {json.dumps(v)}" for k, v in web.items()]
        self.config = directory / "floor-web.toml"
        self.config.write_text("\n".join(lines) + "\n")
        self.tls = tls is not None
        self.url = f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/"
        self.log = directory / "floor-web.log"
        self.proc = None

    def start(self) -> "WebProcess":
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "dealerbox.cli", "floor", "web",
                                          "--config", str(self.config)],
                                         stdout=log, stderr=log, stdin=subprocess.DEVNULL, cwd=self.directory)
        wait_for(lambda: self._healthy(), "the web view to answer /healthz", 60)
        return self

    def _healthy(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"floor web exited {self.proc.returncode}: {self.log.read_text()}")
        try:
            return call(self, "GET", "/healthz")[0] == 200
        except OSError:
            return False

    def threads(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/task"))

    def close(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()


def connection(web: WebProcess, source: str | None = None, timeout: float = 30):
    source_address = (source, 0) if source else None
    if web.tls:
        ctx = ssl.create_default_context(cafile=str(web.directory / "ca.crt")
                                         if (web.directory / "ca.crt").exists() else None)
        return http.client.HTTPSConnection("127.0.0.1", web.port, timeout=timeout, context=ctx,
                                           source_address=source_address)
    return http.client.HTTPConnection("127.0.0.1", web.port, timeout=timeout, source_address=source_address)


def call(web: WebProcess, method: str, path: str, body=None, *, headers=None, cookie=None,
         source=None, raw: bytes | None = None):
    """``(status, headers, decoded body)`` of one request; *cookie* is the session
    cookie's ``name=value``."""
    conn = connection(web, source)
    h = dict(headers or {})
    if body is not None:
        raw = json.dumps(body).encode()
        h.setdefault("Content-Type", "application/json")
    if cookie:
        h["Cookie"] = cookie
    try:
        conn.request(method, path, body=raw, headers=h)
        resp = conn.getresponse()
        data = resp.read()
    finally:
        conn.close()
    try:
        decoded = json.loads(data) if data else None
    except ValueError:
        decoded = data.decode("utf-8", "replace")
    return resp.status, resp.headers, decoded


def session_cookie(headers) -> str:
    """``name=value`` of the session cookie a response set."""
    for value in headers.get_all("Set-Cookie") or []:
        first = value.split(";")[0]
        if "dealerbox-session=" in first and first.split("=", 1)[1]:
            return first
    raise AssertionError(f"no session cookie in {headers.get_all('Set-Cookie')}")


def sign_in(web: WebProcess, name: str, source=None) -> tuple[str, str]:
    """``(cookie, csrf token)`` of a new session of *name*."""
    status, headers, me = call(web, "POST", "/api/session", {"user": name, "password": PASSWORDS[name]},
                               source=source)
    assert status == 200, me
    return session_cookie(headers), me["csrf"]


@pytest.fixture
def web(tmp_path):
    """The web view over an empty store with a viewer, a supervisor and an admin."""
    store = tmp_path / "floor.sqlite"
    add_users(store)
    with WebProcess(tmp_path, store, request_timeout_s=2) as w:
        yield w


def test_idle_and_half_sent_requests_cost_no_thread_and_are_closed_after_the_timeout(web):
    cookie, _ = sign_in(web, "vera")
    assert call(web, "GET", "/api/floor", cookie=cookie)[0] == 200  # every worker thread there is, warm
    before = web.threads()
    socks = []
    for i in range(100):
        s = socket.create_connection(("127.0.0.1", web.port))
        # Half of them send half a request head, the others nothing at all.
        if i % 2:
            s.sendall(b"GET /api/floor HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        socks.append(s)
    opened = time.monotonic()
    during = web.threads()
    # The server still answers everyone else while they hang.
    assert call(web, "GET", "/healthz")[0] == 200
    print(f"threads: {before} before, {during} with 100 idle connections")
    assert during <= before, f"{during} threads with 100 idle connections, {before} before"
    closed_after = []
    for s in socks:
        s.settimeout(30)
        try:
            assert s.recv(1024) == b""  # closed by the server, nothing answered
        except ConnectionResetError:
            pass
        closed_after.append(time.monotonic() - opened)
        s.close()
    # request_timeout_s = 2: none was let go sooner, none kept much longer.
    assert min(closed_after) >= 1.5 and max(closed_after) < 15, (min(closed_after), max(closed_after))
    assert web.threads() <= before


def raw_exchange(web, data: bytes, timeout=20) -> tuple[bytes, float]:
    s = socket.create_connection(("127.0.0.1", web.port))
    s.settimeout(timeout)
    start = time.monotonic()
    s.sendall(data)
    out = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
    finally:
        s.close()
    return out, time.monotonic() - start


@pytest.mark.parametrize("request_bytes", [
    b"POST /api/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: -5\r\n\r\n",
    b"POST /api/session HTTP/1.1\r\nHost: x\r\nContent-Length: 5x\r\n\r\nhello",
    b"\x16\x03\x01\x02\x00junk that is no HTTP\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nno colon in this header\r\n\r\n",
], ids=["negative-length", "junk-length", "junk", "bad-header"])
def test_a_malformed_request_gets_a_400_with_a_status_line_and_is_closed(web, request_bytes):
    out, took = raw_exchange(web, request_bytes)
    assert out.startswith(b"HTTP/1.1 400"), out[:200]
    assert took < 5  # answered and closed at once, not held until a timeout


def test_a_body_sent_slowly_is_cut_with_408_and_a_big_one_refused_with_413(web):
    head = (b"POST /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n")
    out, took = raw_exchange(web, head + b'{"user": ')
    assert out.startswith(b"HTTP/1.1 408"), out[:200]
    assert 1.5 <= took < 15
    big = b"{" + b" " * (70 * 1024) + b"}"
    status, _h, body = call(web, "POST", "/api/session", raw=big, headers={"Content-Type": "application/json"})
    assert status == 413 and "at most" in body["error"]


def test_healthz_answers_without_a_session_and_tells_nothing(web):
    status, headers, body = call(web, "GET", "/healthz")
    assert status == 200 and body == {"ok": True}
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"


def test_tls_with_the_casino_ca_certificate(tmp_path, pki, web_cert):
    store = tmp_path / "floor.sqlite"
    add_users(store, ("vera",))
    (tmp_path / "ca.crt").write_bytes((pki / "ca.crt").read_bytes())
    with WebProcess(tmp_path, store, tls=web_cert) as web:
        assert web.url.startswith("https://")
        status, headers, me = call(web, "POST", "/api/session", {"user": "vera", "password": PASSWORDS["vera"]})
        assert status == 200
        cookie = headers["Set-Cookie"]
        # Under TLS: __Host- (no Domain, Path=/, Secure), HttpOnly, SameSite=Strict.
        assert cookie.startswith("__Host-dealerbox-session=")
        attributes = [a.strip().lower() for a in cookie.split(";")[1:]]
        assert {"secure", "httponly", "path=/", "samesite=strict"} <= set(attributes)
        assert not [a for a in attributes if a.startswith("domain")]
        assert headers["Strict-Transport-Security"].startswith("max-age=")
        assert call(web, "GET", "/api/floor", cookie=session_cookie(headers))[0] == 200
        # A client that does not trust the casino CA refuses the server.
        untrusting = http.client.HTTPSConnection("127.0.0.1", web.port, timeout=10,
                                                 context=ssl.create_default_context())
        with pytest.raises(ssl.SSLCertVerificationError):
            untrusting.request("GET", "/healthz")
        untrusting.close()
        # Plain HTTP to the TLS port gets nothing useful.
        out, _took = raw_exchange(web, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert b'"ok"' not in out


def test_a_missing_certificate_is_one_line_naming_the_key(tmp_path):
    config = tmp_path / "floor.toml"
    config.write_text(f'[store]\npath = "{tmp_path / "s.sqlite"}"\n[web]\nport = {free_port()}\n'
                      f'cert = "{tmp_path / "none.crt"}"\nkey = "{tmp_path / "none.key"}"\n')
    result = subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", "web", "--config", str(config)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "web.cert" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("body, key", [
    ('cert = "a.crt"', "web.key"),
    ('trusted_proxies = ["not an address"]', "web.trusted_proxies"),
    ('trusted_proxies = "10.0.0.1"', "web.trusted_proxies"),
    ('origins = ["floor.example"]', "web.origins"),
    ('session_idle_s = 0', "web.session_idle_s"),
    ('session_idle_s = 100\nsession_max_s = 50', "web.session_max_s"),
    ('signin_limit_user = 0', "web.signin_limit_user"),
    ('who = "x"', "web.who"),
])
def test_a_bad_web_value_names_the_key(tmp_path, body, key):
    path = tmp_path / "floor.toml"
    path.write_text(f'[store]\npath = "s.sqlite"\n[web]\n{body}\n')
    with pytest.raises(ConfigError) as err:
        load_web(path)
    assert str(path) in str(err.value) and key in str(err.value)


def test_the_web_section_is_read(tmp_path):
    path = tmp_path / "floor.toml"
    path.write_text('[store]\npath = "s.sqlite"\n[web]\nport = 8443\ncert = "pki/w.crt"\nkey = "pki/w.key"\n'
                    'trusted_proxies = ["10.0.0.5", "10.1.0.0/24"]\norigins = ["https://Floor.example"]\n')
    s = load_web(path)
    assert s.tls and s.cert == tmp_path / "pki/w.crt" and s.store == tmp_path / "s.sqlite"
    assert [str(n) for n in s.trusted_proxies] == ["10.0.0.5/32", "10.1.0.0/24"]
    assert s.origins == ("https://floor.example",)


def test_sigterm_with_open_event_streams_stops_the_web_view_promptly(web):
    cookie, _ = sign_in(web, "vera")
    conns = []
    for _ in range(3):
        conn = connection(web)
        conn.request("GET", "/events", headers={"Cookie": cookie, "Accept": "text/event-stream"})
        resp = conn.getresponse()
        assert resp.status == 200 and resp.readline().startswith(b"event: snapshot")
        conns.append(conn)
    start = time.monotonic()
    web.proc.send_signal(signal.SIGTERM)
    assert web.proc.wait(timeout=15) == 0
    assert time.monotonic() - start < 10
    for conn in conns:
        conn.close()
    assert "Traceback" not in web.log.read_text()


def test_the_collector_republishes_the_retained_alerts_after_a_clear_on_the_web(broker, pki, tmp_path):
    from tests.floor.support import Client
    from dealerbox.link import protocol as P
    from dealerbox.floor.collecting.collector import Collector
    store_path = tmp_path / "floor.sqlite"
    add_users(store_path, ("sam",))
    with Store(store_path) as store, Collector(identity(pki, broker, "floor-collector"), store) as col, \
            WebProcess(tmp_path, store_path) as web:
        assert col.connected.wait(30)
        with store.lock:
            store.begin()
            alert = store.raise_alert("T01", "floor", "FOUR_CARD_FLOP at T01", 7)
            store.commit()
        col._publish_alerts()  # as after any new alert
        watcher = Client(identity(pki, broker, "floor-view"), "floor-view")
        assert watcher.connect(broker.port)
        try:
            watcher.subscribe(P.ALERTS_TOPIC)

            def open_ids():
                retained = [json.loads(p) for t, p in watcher.messages if t == P.ALERTS_TOPIC]
                return [a["id"] for a in retained[-1]["open"]] if retained else None
            wait_for(lambda: open_ids() == [alert["id"]], "the retained alert")
            cookie, csrf = sign_in(web, "sam")
            status, _h, cleared = call(web, "POST", f"/api/alerts/{alert['id']}/clear", {"note": "dealt with"},
                                       cookie=cookie, headers={"X-CSRF-Token": csrf})
            assert status == 200 and cleared["cleared_by"] == "sam"
            wait_for(lambda: open_ids() == [], "the retained alerts without the cleared one", 10)
        finally:
            watcher.close()


def test_the_event_stream_follows_the_store_written_by_another_process(web):
    """Live updates come from the store (SQLite's data_version), not from the collector's memory."""
    cookie, _ = sign_in(web, "vera")
    conn = connection(web)
    conn.request("GET", "/events", headers={"Cookie": cookie, "Accept": "text/event-stream"})
    resp = conn.getresponse()
    events = []

    def read():
        name = None
        for raw in resp:
            line = raw.decode().strip()
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                events.append((name, json.loads(line[5:])))
                if name == "alert":
                    return
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    wait_for(lambda: events, "the snapshot")
    assert events[0][0] == "snapshot" and events[0][1]["tables"] == []
    store_path = load_web(web.config).store
    with Store(store_path) as store, store.lock:
        store.begin()
        store.ensure_table("T09")
        store.update_table("T09", online=1, last_seq=3)
        alert = store.raise_alert("T09", "chain", "seq 3 does not chain", 3)
        store.commit()
    reader.join(30)
    assert any(n == "alert" for n, _d in events), events
    tables = [d for n, d in events if n == "tables"]
    assert tables and tables[0]["tables"][0]["table"] == "T09" and tables[0]["tables"][0]["last_seq"] == 3
    assert [d["alert"]["id"] for n, d in events if n == "alert"] == [alert["id"]]
    conn.close()
