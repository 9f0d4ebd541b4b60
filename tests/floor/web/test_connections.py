"""What a connection costs whatever it opens with, and what a client leaves in the
log when it goes (issue 32): the HTTP/2 preface alone held a connection for ever;
a client gone in the middle of its body left the framework's traceback."""

from __future__ import annotations

import shutil
import socket
import ssl
import struct
import time

import pytest

from tests.floor.support import pki  # noqa: F401
from tests.floor.web.test_app import WebProcess, add_users, call, sign_in, web_cert  # noqa: F401
from dealerbox.floor.web.http11 import HTTP2_REFUSAL

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
TIMEOUT_S = 2


@pytest.fixture(params=["tcp", "tls"])
def served(request, tmp_path):
    store = tmp_path / "floor.sqlite"
    add_users(store)
    tls = None
    if request.param == "tls":
        tls = request.getfixturevalue("web_cert")
        shutil.copy(request.getfixturevalue("pki") / "ca.crt", tmp_path / "ca.crt")
    with WebProcess(tmp_path, store, tls=tls, request_timeout_s=TIMEOUT_S) as web:
        yield web


def opened(web, alpn=("http/1.1",), linger_zero=False):
    """A connected socket (TLS-wrapped when the view serves TLS) and its raw socket."""
    raw = socket.create_connection(("127.0.0.1", web.port), timeout=30)
    if linger_zero:  # close() sends a reset, as a client that vanishes does
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    if not web.tls:
        return raw
    ctx = ssl.create_default_context(cafile=str(web.directory / "ca.crt"))
    ctx.set_alpn_protocols(list(alpn))
    return ctx.wrap_socket(raw, server_hostname="127.0.0.1")


def read_to_close(sock) -> bytes:
    out = b""
    try:
        while chunk := sock.recv(4096):
            out += chunk
    except (ConnectionResetError, ssl.SSLError):
        pass
    return out


@pytest.mark.parametrize("alpn", [("http/1.1",), ("h2", "http/1.1")], ids=["alpn-http1", "alpn-h2"])
def test_ten_idle_http2_preface_connections_are_refused_and_closed_within_the_timeout(served, alpn):
    if not served.tls and alpn != ("http/1.1",):
        pytest.skip("ALPN is TLS's")
    socks = []
    for _ in range(10):
        s = opened(served, alpn)
        if served.tls:
            assert s.selected_alpn_protocol() in (None, "http/1.1")  # h2 is never agreed
        s.sendall(PREFACE)
        socks.append(s)
    start = time.monotonic()
    for s in socks:
        assert read_to_close(s) == HTTP2_REFUSAL  # SETTINGS, then GOAWAY HTTP_1_1_REQUIRED
        s.close()
    assert time.monotonic() - start < TIMEOUT_S
    assert call(served, "GET", "/healthz")[0] == 200


def test_an_h2c_upgrade_is_answered_in_http11(served):
    s = opened(served)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade, HTTP2-Settings\r\n"
              b"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n")
    answer = s.recv(4096)
    s.close()
    assert answer.startswith(b"HTTP/1.1 200"), answer[:100]


def test_clients_that_close_abruptly_leave_one_line_each_at_most(served):
    cookie, _csrf = sign_in(served, "vera")
    before = served.log.read_text().count("\n")
    clients = 0
    for linger_zero in (True, False):
        # In the middle of a body, of a page, of an event stream, of a TLS handshake, of a head.
        s = opened(served, linger_zero=linger_zero)
        s.sendall(b"POST /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n{\"user\"")
        time.sleep(0.2)
        s.close()
        for path in ("/report.csv", "/events", "/"):
            s = opened(served, linger_zero=linger_zero)
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n\r\n".encode())
            s.recv(10)
            s.close()
        s = opened(served, linger_zero=linger_zero)
        s.sendall(b"GET / HTTP/1.1\r\nHost: 1")
        s.close()
        raw = socket.create_connection(("127.0.0.1", served.port))
        raw.sendall(b"\x16\x03\x01\x00\xc8\x01\x00\x00\xc4\x03\x03")  # half a ClientHello
        raw.close()
        clients += 6
    time.sleep(1.0)
    assert call(served, "GET", "/healthz")[0] == 200
    text = served.log.read_text()
    added = text.count("\n") - before
    assert "Traceback" not in text and added <= clients, text
    assert "closed its connection before its body arrived" in text
