"""Signing in to the floor's web view, tried as an attacker would: no session,
the wrong role, no or a foreign CSRF token, a foreign Origin, a text/plain
cross-site POST, a forged proxy header, brute force, session fixation, a
stolen cookie after sign-out; and the users CLI."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
import time

import pytest

from tests.floor.web.test_app import (PASSWORDS, WebProcess, add_users, call, connection, session_cookie,  # noqa: F401
                            sign_in, web)
from dealerbox.floor.operating.accounts import ROLES, SESSIONS_PER_USER, may
from dealerbox.floor.operating.settings import WebSettings
from dealerbox.floor.store import Store
from dealerbox.floor.store.alerts import SIGNIN_ACTIONS
from dealerbox.floor.web.refusal_page import for_people


def open_alert(web, table="T02", kind="floor", text="FOUR_CARD_FLOP at T02") -> int:
    from dealerbox.floor.operating.settings import load_web
    with Store(load_web(web.config).store) as store, store.lock:
        store.begin()
        alert = store.raise_alert(table, kind, text, 12)
        store.commit()
    return alert["id"]


def is_open(web, alert_id) -> bool:
    """From the store itself (the event streams' snapshot follows it within 0.2 s)."""
    status, _h, audit = call(web, "GET", "/api/audit", cookie=sign_in(web, "vera")[0])
    return alert_id in [a["id"] for a in audit["alerts"] if a["cleared_at"] is None]


def clear(web, alert_id, cookie, csrf, **kw):
    headers = {"X-CSRF-Token": csrf, **kw.pop("headers", {})}
    return call(web, "POST", f"/api/alerts/{alert_id}/clear", kw.pop("body", {"note": "checked"}),
                cookie=cookie, headers=headers, **kw)


def test_no_page_or_api_answers_without_a_session_but_sign_in_and_health(web, tmp_path):
    from dealerbox.floor.web.app import FloorApp
    app = FloorApp(WebSettings(store=tmp_path / "other.sqlite"))
    routes = app.routes()
    app.store.close()
    public = {(p, m) for p, m, _h, permission, _b in routes if permission is None}
    # /metrics asks for its bearer token itself (tests/floor/test_metrics.py): a scraper has no session.
    assert public == {("/healthz", "GET"), ("/login", "GET"), ("/login", "POST"), ("/api/session", "POST"),
                      ("/metrics", "GET")}
    alert_id = open_alert(web)
    for path, method, _h, permission, body in routes:
        if permission is None:
            continue
        path = (path.replace("{alert_id:int}", str(alert_id)).replace("{name}", "sam")
                .replace("{table_id}", "T01").replace("{seq:int}", "1").replace("{dealer_id}", "1042"))
        payload = {"note": "x", "name": "eve", "role": "admin", "password": "x" * 20} if body == "json" else None
        for accept in ("application/json", "text/html"):
            status, headers, answer = call(web, method, path, payload, headers={"Accept": accept})
            if method == "GET" and accept == "text/html":
                assert status == 303 and headers["Location"] == "/login", (path, status)
            elif accept == "text/html" and for_people(path):
                # A form sent without a session: the refusal page, which leads to the sign-in page.
                assert status == 401 and 'id="refused-reason">sign in first<' in answer, (method, path, answer)
                assert '<a href="/login" id="refused-back">' in answer, (method, path, answer)
            else:
                assert status == 401 and answer == {"error": "sign in first"}, (method, path, status, answer)
    assert is_open(web, alert_id)
    # A session id nobody issued is no session.
    assert call(web, "GET", "/api/floor", cookie="dealerbox-session=" + "A" * 43)[0] == 401


def test_the_sign_in_page_itself_shows_nothing_of_the_floor(web):
    open_alert(web)
    status, _h, page = call(web, "GET", "/login", headers={"Accept": "text/html"})
    assert status == 200 and 'name="password"' in page
    assert "FOUR_CARD_FLOP" not in page and "T02" not in page


def test_each_role_may_do_what_its_row_says_and_no_more(web):
    assert [r for r in ROLES if may(r, "clear")] == ["supervisor", "admin"]
    alert_id = open_alert(web)
    vera = sign_in(web, "vera")
    status, _h, answer = clear(web, alert_id, *vera)
    assert status == 403 and "viewer" in answer["error"]
    assert is_open(web, alert_id)
    assert call(web, "GET", "/api/users", cookie=vera[0])[0] == 403
    sam = sign_in(web, "sam")
    assert call(web, "GET", "/api/users", cookie=sam[0])[0] == 403
    status, _h, _a = call(web, "POST", "/api/users", {"name": "eve", "role": "admin", "password": "e" * 20},
                          cookie=sam[0], headers={"X-CSRF-Token": sam[1]})
    assert status == 403
    status, _h, cleared = clear(web, alert_id, *sam, body={"note": "recounted the flop"})
    assert status == 200 and cleared["cleared_by"] == "sam" and cleared["note"] == "recounted the flop"
    ada = sign_in(web, "ada")
    status, _h, users = call(web, "GET", "/api/users", cookie=ada[0])
    assert status == 200 and {u["name"]: u["role"] for u in users["users"]} == {
        "vera": "viewer", "sam": "supervisor", "ada": "admin"}
    assert not [u for u in users["users"] if "hash" in u]
    status, _h, _a = call(web, "POST", "/api/users", {"name": "eve", "role": "viewer", "password": "eve's long pw"},
                          cookie=ada[0], headers={"X-CSRF-Token": ada[1]})
    assert status == 201
    assert call(web, "POST", "/api/session", {"user": "eve", "password": "eve's long pw"})[0] == 200
    assert call(web, "DELETE", "/api/users/eve", cookie=ada[0], headers={"X-CSRF-Token": ada[1]})[0] == 204
    assert call(web, "POST", "/api/session", {"user": "eve", "password": "eve's long pw"})[0] == 401


def test_the_audit_names_the_signed_in_user_and_a_typed_name_is_refused(web):
    alert_id = open_alert(web)
    sam = sign_in(web, "sam")
    status, _h, answer = clear(web, alert_id, *sam, body={"who": "the pit boss", "note": "x"})
    assert status == 400 and "'who'" in answer["error"]
    status, _h, answer = clear(web, alert_id, *sam, body={"note": "  "})
    assert status == 400 and "note" in answer["error"]
    status, _h, answer = clear(web, alert_id, *sam, body={"note": "cards counted"},
                               headers={"X-Remote-User": "the pit boss"})
    assert status == 200
    audit = call(web, "GET", "/api/audit", cookie=sam[0])[2]["audit"]
    assert [(a["who"], a["alert"], a["detail"]) for a in audit if a["action"] not in SIGNIN_ACTIONS] == [
        ("sam", alert_id, "cards counted")]
    assert clear(web, alert_id, *sam)[0] == 404  # cleared once


def test_a_state_change_without_the_sessions_csrf_token_is_refused(web):
    alert_id = open_alert(web)
    cookie, csrf = sign_in(web, "sam")
    other_cookie, other_csrf = sign_in(web, "ada")
    for token in ("", "forged-token", other_csrf, csrf[:-1]):
        status, _h, answer = clear(web, alert_id, cookie, token)
        assert status == 403 and "CSRF" in answer["error"], token
    status, _h, _a = call(web, "POST", f"/api/alerts/{alert_id}/clear", {"note": "x"}, cookie=cookie)
    assert status == 403
    # Signing out is a state change too.
    assert call(web, "DELETE", "/api/session", cookie=cookie)[0] == 403
    assert call(web, "POST", "/logout", raw=b"csrf=nope", cookie=cookie,
                headers={"Content-Type": "application/x-www-form-urlencoded"})[0] == 403
    assert call(web, "GET", "/api/session", cookie=cookie)[0] == 200  # still signed in
    assert is_open(web, alert_id)


@pytest.mark.parametrize("headers", [
    {"Origin": "http://evil.example"},
    {"Origin": "null"},
    {"Referer": "http://evil.example/page.html"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
], ids=["origin", "null-origin", "referer", "fetch-cross-site", "fetch-same-site"])
def test_a_request_from_another_origin_is_refused_even_with_the_token(web, headers):
    alert_id = open_alert(web)
    cookie, csrf = sign_in(web, "sam")
    status, _h, answer = clear(web, alert_id, cookie, csrf, headers=headers)
    assert status == 403 and ("origin" in answer["error"] or "another site" in answer["error"])
    assert is_open(web, alert_id)
    # The same request from the page's own origin goes through.
    own = {"Origin": f"http://127.0.0.1:{web.port}", "Sec-Fetch-Site": "same-origin"}
    assert clear(web, alert_id, cookie, csrf, headers=own)[0] == 200


def test_a_text_plain_cross_site_post_clears_nothing(web):
    """What a form on another site can send without CORS: text/plain, no custom header."""
    alert_id = open_alert(web)
    cookie, csrf = sign_in(web, "sam")
    for headers in ({"Content-Type": "text/plain", "Origin": "http://evil.example"},
                    {"Content-Type": "text/plain"},
                    {"Content-Type": "text/plain", "X-CSRF-Token": csrf}):
        status, _h, answer = call(web, "POST", f"/api/alerts/{alert_id}/clear",
                                  raw=b'{"note": "pwned"}', cookie=cookie, headers=headers)
        assert status in (403, 415), (headers, status, answer)
    status, _h, answer = call(web, "POST", f"/api/alerts/{alert_id}/clear", raw=b'{"note": "pwned"}',
                              cookie=cookie, headers={"Content-Type": "text/plain", "X-CSRF-Token": csrf})
    assert status == 415 and "application/json" in answer["error"]
    assert is_open(web, alert_id)


def test_a_proxy_user_header_counts_only_from_a_trusted_proxy_and_for_a_known_user(tmp_path):
    store = tmp_path / "floor.sqlite"
    add_users(store, ("vera", "sam"))
    with WebProcess(tmp_path, store, trusted_proxies=["127.0.0.2"]) as web:
        alert_id = open_alert(web)
        # From an address that is not the proxy: the header is ignored.
        status, _h, _a = call(web, "GET", "/api/floor", headers={"X-Remote-User": "sam"}, source="127.0.0.1")
        assert status == 401
        status, _h, _a = call(web, "POST", f"/api/alerts/{alert_id}/clear", {"note": "x"},
                              headers={"X-Remote-User": "sam"}, source="127.0.0.3")
        assert status == 401
        # From the proxy, for a user that is not a local one: refused.
        status, _h, answer = call(web, "GET", "/api/floor", headers={"X-Remote-User": "mallory"},
                                  source="127.0.0.2")
        assert status == 403 and "not a user" in answer["error"]
        # From the proxy, a known user: signed in with the local role and a session.
        status, headers, me = call(web, "GET", "/api/session", headers={"X-Remote-User": "vera"},
                                   source="127.0.0.2")
        assert status == 200 and (me["user"], me["role"]) == ("vera", "viewer")
        vera_cookie = session_cookie(headers)
        assert clear(web, alert_id, vera_cookie, me["csrf"], source="127.0.0.2",
                     headers={"X-Remote-User": "vera"})[0] == 403  # a viewer, whatever the proxy says
        # Through the proxy a state change still needs the session's CSRF token.
        status, _h, _a = call(web, "POST", f"/api/alerts/{alert_id}/clear", {"note": "x"},
                              headers={"X-Remote-User": "sam"}, source="127.0.0.2")
        assert status == 403, _a
        assert is_open(web, alert_id)
        status, headers, me = call(web, "GET", "/api/session", headers={"X-Remote-User": "sam"},
                                   source="127.0.0.2")
        sam_cookie = session_cookie(headers)
        status, _h, cleared = clear(web, alert_id, sam_cookie, me["csrf"], source="127.0.0.2",
                                    headers={"X-Remote-User": "sam"})
        assert status == 200 and cleared["cleared_by"] == "sam"
        # A cookie of vera's sent through the proxy naming sam is not vera's session any more.
        status, headers, me = call(web, "GET", "/api/session", cookie=vera_cookie,
                                   headers={"X-Remote-User": "sam"}, source="127.0.0.2")
        assert me["user"] == "sam" and session_cookie(headers) != vera_cookie
        assert call(web, "GET", "/api/session", cookie=vera_cookie)[0] == 401
        assert "not a trusted proxy" in web.log.read_text()


def test_requests_through_the_proxy_without_a_cookie_leave_at_most_the_cap_of_sessions(tmp_path):
    # A script behind the proxy keeps no cookie: each request signs in afresh. The user's
    # sessions stay at the cap, and the newest works.
    store = tmp_path / "floor.sqlite"
    add_users(store, ("vera",))
    with WebProcess(tmp_path, store, trusted_proxies=["127.0.0.2"]) as web:
        for _ in range(SESSIONS_PER_USER + 5):
            status, headers, _me = call(web, "GET", "/api/floor", headers={"X-Remote-User": "vera"},
                                        source="127.0.0.2")
            assert status == 200
        newest = session_cookie(headers)
        assert call(web, "GET", "/api/session", cookie=newest)[0] == 200
        with Store(store) as floor:
            assert [u["sessions"] for u in floor.users()] == [SESSIONS_PER_USER]
        assert f"more than {SESSIONS_PER_USER} sessions open" in web.log.read_text()


def test_sign_in_attempts_are_limited_per_user_and_per_address(tmp_path):
    store = tmp_path / "floor.sqlite"
    add_users(store, ("vera", "sam"))
    with WebProcess(tmp_path, store, signin_limit_user=3, signin_limit_address=5,
                    signin_window_s=120) as web:
        def attempt(user, password, source="127.0.0.1"):
            return call(web, "POST", "/api/session", {"user": user, "password": password}, source=source)
        for _ in range(3):
            assert attempt("sam", "guess guess guess")[0] == 401
        # The user is locked: even the right password is not looked at now.
        status, headers, answer = attempt("sam", PASSWORDS["sam"])
        assert status == 429 and "too many" in answer["error"] and 1 <= int(headers["Retry-After"]) <= 120
        status, _h, _a = attempt("sam", PASSWORDS["sam"], source="127.0.0.4")
        assert status == 429  # per user, from anywhere
        # The address: two more failures with other names, then nobody from it.
        assert attempt("vera", "wrong wrong wrong")[0] == 401
        assert attempt("nobody", "wrong wrong wrong")[0] == 401
        assert attempt("vera", PASSWORDS["vera"])[0] == 429
        # Another address may still sign vera in.
        assert attempt("vera", PASSWORDS["vera"], source="127.0.0.5")[0] == 200
        # The sign-in form is limited the same way, and says so on the page.
        conn = connection(web, "127.0.0.1")
        conn.request("GET", "/login")
        page = conn.getresponse()
        token_cookie = page.headers["Set-Cookie"].split(";")[0]
        token = page.read().decode().split('name="csrf" value="')[1].split('"')[0]
        conn.close()
        status, _h, html = call(web, "POST", "/login", raw=f"csrf={token}&user=vera&password=x".encode(),
                                cookie=token_cookie, headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 429 and "too many failed sign-ins" in html


def test_a_session_id_planted_before_sign_in_is_never_the_signed_in_one(web):
    """Session fixation: the attacker's own session id, or one made up, set in the
    victim's browser before the victim signs in."""
    attacker_cookie, _ = sign_in(web, "vera")
    for planted in (attacker_cookie, "dealerbox-session=chosen-by-the-attacker-0123456789"):
        status, headers, me = call(web, "POST", "/api/session", {"user": "sam", "password": PASSWORDS["sam"]},
                                   cookie=planted)
        assert status == 200 and me["user"] == "sam"
        new = session_cookie(headers)
        assert new != planted
        status, _h, who = call(web, "GET", "/api/session", cookie=planted)
        assert status == 401  # the planted id is not sam's session, nor anyone's any more
        assert call(web, "GET", "/api/session", cookie=new)[2]["user"] == "sam"


def test_sign_out_ends_the_session_and_its_event_stream(web):
    cookie, csrf = sign_in(web, "vera")
    conn = connection(web)
    conn.request("GET", "/events", headers={"Cookie": cookie, "Accept": "text/event-stream"})
    resp = conn.getresponse()
    assert resp.status == 200 and resp.readline().startswith(b"event: snapshot")
    assert call(web, "DELETE", "/api/session", cookie=cookie, headers={"X-CSRF-Token": csrf})[0] == 204
    # The stolen cookie is worth nothing now...
    assert call(web, "GET", "/api/floor", cookie=cookie)[0] == 401
    # ...and the open stream says so and ends within a few seconds.
    start, lines = time.monotonic(), []
    for raw in resp:
        lines.append(raw.decode().strip())
        if "event: signedout" in lines:
            break
    assert "event: signedout" in lines and time.monotonic() - start < 15
    conn.close()


def test_a_password_change_or_a_removed_user_ends_their_sessions(web):
    sam_cookie, _ = sign_in(web, "sam")
    vera_cookie, _ = sign_in(web, "vera")
    cli(web, "passwd", "sam", stdin="a brand new password\n")
    assert call(web, "GET", "/api/floor", cookie=sam_cookie)[0] == 401
    assert call(web, "POST", "/api/session", {"user": "sam", "password": "a brand new password"})[0] == 200
    cli(web, "remove", "vera")
    assert call(web, "GET", "/api/floor", cookie=vera_cookie)[0] == 401


def test_sessions_end_when_idle_and_after_their_absolute_limit(tmp_path):
    store = tmp_path / "floor.sqlite"
    add_users(store, ("vera",))
    with WebProcess(tmp_path, store, session_idle_s=2, session_max_s=4) as web:
        idle, _ = sign_in(web, "vera")
        busy, _ = sign_in(web, "vera")
        start = time.monotonic()
        while time.monotonic() - start < 3:
            assert call(web, "GET", "/api/session", cookie=busy)[0] == 200  # used: stays
            time.sleep(0.4)
        assert call(web, "GET", "/api/session", cookie=idle)[0] == 401  # idle past 2 s
        while time.monotonic() - start < 4.5:
            time.sleep(0.4)
            call(web, "GET", "/api/session", cookie=busy)
        assert call(web, "GET", "/api/session", cookie=busy)[0] == 401  # past 4 s, busy or not


def test_the_session_cookie_and_what_the_store_keeps(web):
    status, headers, me = call(web, "POST", "/api/session", {"user": "sam", "password": PASSWORDS["sam"]})
    cookie = headers["Set-Cookie"]
    attributes = {a.strip().lower() for a in cookie.split(";")[1:]}
    assert {"httponly", "samesite=strict", "path=/"} <= attributes
    assert "secure" not in attributes  # plain HTTP here (test_floor_web checks TLS)
    token = cookie.split(";")[0].split("=", 1)[1]
    assert len(token) >= 43  # 256 bits
    from dealerbox.floor.operating.settings import load_web
    db = sqlite3.connect(load_web(web.config).store)
    try:
        keys = [k for (k,) in db.execute("SELECT key FROM sessions")]
        hashes = [h for (h,) in db.execute("SELECT hash FROM users")]
    finally:
        db.close()
    assert hashlib.sha256(token.encode()).hexdigest() in keys and token not in keys
    assert all(h.startswith("$argon2id$") for h in hashes) and len(hashes) == 3


def cli(web, *args, stdin=""):
    result = subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", "user", *args,
                             "--config", str(web.config)], input=stdin, capture_output=True, text=True,
                            timeout=60)
    return result


def test_the_users_cli(web):
    r = cli(web, "add", "kim", "--role", "supervisor", stdin="kim's long password\n")
    assert r.returncode == 0, r.stderr
    r = cli(web, "list")
    rows = {line.split("\t")[0]: line.split("\t")[1] for line in r.stdout.splitlines()}
    assert rows == {"ada": "admin", "kim": "supervisor", "sam": "supervisor", "vera": "viewer"}
    assert "kim's long password" not in r.stdout + r.stderr
    assert call(web, "POST", "/api/session", {"user": "kim", "password": "kim's long password"})[0] == 200
    for args, stdin, says in [
        (("add", "kim", "--role", "viewer"), "another password\n", "exists already"),
        (("add", "bad name", "--role", "viewer"), "another password\n", "user name"),
        (("add", "lou", "--role", "viewer"), "short\n", "12 to 256"),
        (("passwd", "nobody"), "another password\n", "no user"),
        (("remove", "nobody"), "", "no user"),
    ]:
        r = cli(web, *args, stdin=stdin)
        assert r.returncode == 2 and says in r.stderr and r.stderr.count("\n") == 1, (args, r.stderr)
    # The password is never an argument.
    r = cli(web, "add", "lou", "--role", "viewer", "--password", "in the process list")
    assert r.returncode == 2 and "unrecognized arguments" in r.stderr
    r = cli(web, "add", "lou", "--role", "root")
    assert r.returncode == 2 and "invalid choice" in r.stderr
