"""No request of any shape gets a 500: odd path segments and query values thrown at
every route of the web view (signed in as an admin, who may reach them all), and
the log never holds a traceback. The faults found by hand first (issue 32): a
journal line or alert number past SQLite's 64-bit integers, and a time past
Python's year 9999."""

from __future__ import annotations

import http.client
import json
import re
import urllib.parse

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dealerbox.floor.operating.settings import load_web
from dealerbox.floor.web.app import FloorApp
from tests.floor.test_figures import T0
from tests.floor.test_story import _filed, _played
from tests.floor.web.test_app import WebProcess, add_users, sign_in

#: Routes that end the session the test runs in.
SIGNS_OUT = {("/logout", "POST"), ("/api/session", "DELETE")}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The web view over a store with a hand and its alert at T01 (dealer 2077), an
    admin's session, and the routes' table."""
    directory = tmp_path_factory.mktemp("odd")
    store = directory / "floor.sqlite"
    _filed(store, "T01", _played(directory, "exposed_deal_then_flop_burned_anyway", "2077"))
    add_users(store)
    with WebProcess(directory, store, request_timeout_s=2) as web:
        floor_app = FloorApp(load_web(web.config))
        try:
            routes = [(path, method) for path, method, *_ in floor_app.routes()
                      if (path, method) not in SIGNS_OUT]
        finally:
            floor_app.figures.close()
            floor_app.store.close()
        cookie, csrf = sign_in(web, "ada")
        yield web, routes, cookie, csrf


ODD_TEXT = st.sampled_from([
    "9223372036854775807", "9223372036854775808", "1" + "0" * 26, "-1", "-9223372036854775809",
    "0", "00", "1e13", "1e308", "inf", "-inf", "nan", "NaN", "", " ", "..", ".", "%00", "%2F",
    "T10", "T01", "1042", "x" * 300, "é", "\u202e", "\x00", "\ud800", "<script>", "'; DROP TABLE lines;--",
    "9999-12-31T23:59:59Z", "10000-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "2026-11-24T18:00:00",
    "2026-11-24T18:00:00+23:59", "2026-02-30T00:00:00Z", "253402300800", "32503680001", "1e-300",
    "0x10", "1_000", "١٢٣", "2077", "1", "2", "12", "30", str(T0), str(T0 + 3600), str(T0 - 3600),
]) | st.text(max_size=30) | st.integers(min_value=-(2 ** 70), max_value=2 ** 70).map(str) \
    | st.floats(allow_nan=True, allow_infinity=True).map(repr)

QUERY_KEYS = st.sampled_from(["from", "to", "table", "dealer", "from", "to", "seq", "x"])


def quoted(text: str) -> str:
    return urllib.parse.quote(text.encode("utf-8", "surrogatepass"), safe="")


def ask(web, method: str, target: str, cookie: str, csrf: str) -> int:
    """The status of one request; an event stream's body is not waited for."""
    conn = (http.client.HTTPConnection("127.0.0.1", web.port, timeout=20))
    headers = {"Cookie": cookie, "X-CSRF-Token": csrf, "Origin": web.url.rstrip("/")}
    body = None
    if method in ("POST", "DELETE"):
        body = json.dumps({"note": "odd"}).encode()
        headers["Content-Type"] = "application/json"
    try:
        conn.putrequest(method, target, skip_accept_encoding=True)
        for k, v in headers.items():
            conn.putheader(k, v)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        if "text/event-stream" not in resp.headers.get("content-type", ""):
            resp.read()
        return resp.status
    finally:
        conn.close()


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), query=st.lists(st.tuples(QUERY_KEYS, ODD_TEXT), max_size=4))
@example(data=None, query=[("from", "1e13"), ("to", "1e13")])
def test_no_request_of_any_shape_gets_a_500(served, data, query):
    web, routes, cookie, csrf = served
    if data is None:  # the explicit example: the faults found by hand, on every route
        picks = [(path, method, {}) for path, method in routes]
        fills = ["9223372036854775808", "1" + "0" * 26]
    else:
        path, method = data.draw(st.sampled_from(routes))
        picks = [(path, method, {})]
        fills = [data.draw(ODD_TEXT)]
    for path, method, _ in picks:
        for fill in fills:
            target = re.sub(r"\{[^}]+\}", quoted(fill), path)
            if query:
                target += "?" + "&".join(f"{quoted(k)}={quoted(v)}" for k, v in query)
            status = ask(web, method, target, cookie, csrf)
            assert status < 500, f"{method} {target} -> {status}"
    assert_no_traceback(web)


def assert_no_traceback(web) -> None:
    text = web.log.read_text(errors="replace")
    assert "Traceback" not in text and " 500 " not in text, text[-3000:]


def test_the_faults_found_by_hand_are_a_400_or_404_and_leave_no_traceback(served):
    web, _routes, cookie, csrf = served
    for target in ("/hands/T10/9223372036854775808", "/api/hands/T10/" + "1" + "0" * 26,
                   "/hands/T10/9223372036854775807"):
        assert ask(web, "GET", target, cookie, csrf) == 404, target
    for target in ("/tables/T10?from=1e13&to=1.00001e13", "/report?from=1e13&to=1.00001e13",
                   "/api/report?from=1e13", "/report.csv?to=1e13", "/dealers/1042?to=253402300800",
                   "/api/figures/room?from=9999-12-31T00:00:00Z&to=9999-12-31T23:00:00Z"):
        assert ask(web, "GET", target, cookie, csrf) == 400, target
    assert ask(web, "POST", "/api/alerts/99999999999999999999/clear", cookie, csrf) == 404
    assert ask(web, "GET", "/tables/T10?to=1", cookie, csrf) == 200  # from defaults to 0, not before
    assert ask(web, "GET", "/hands/T01/1", cookie, csrf) == 200  # the filed hand is there to be told
    assert_no_traceback(web)
