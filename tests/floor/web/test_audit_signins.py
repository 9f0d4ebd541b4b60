"""Sign-ins on the audit trail (issue 47, item 4): every sign-in, failed sign-in and sign-out
of the web view, by password or through the trusted proxy, is a row of the store's audit
table, and the trail's page, CSV, PDF and JSON show it with the page's range: who (for a
failure the name tried, escaped), when, how, and why a failure failed, in plain words."""

from __future__ import annotations

import csv
import io
import time

import pytest
from pypdf import PdfReader

from dealerbox.floor.store import Store
from dealerbox.floor.telling import audit_files as AF
from tests.floor.web.test_app import WebProcess, add_users, call, connection, sign_in

#: A name tried by somebody probing the form: markup, a right-to-left override and a NUL.
PROBE = "<b>mallory</b>\u202e\x00=cmd"
#: How the trail shows it: the NUL as the store keeps it (its escape), the rest escaped too.
PROBE_SHOWN = "<b>mallory</b>\\u202e\\\\x00=cmd"


def _bytes(web, path: str, cookie: str) -> bytes:
    conn = connection(web)
    conn.request("GET", path, headers={"Cookie": cookie})
    response = conn.getresponse()
    assert response.status == 200
    body = response.read()
    conn.close()
    return body


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    """A web view where sam signed in and out with a password, somebody failed as PROBE, vera
    came through the proxy and the proxy named mallory, who is no user; ada reads the trail."""
    directory = tmp_path_factory.mktemp("signins")
    store = directory / "floor.sqlite"
    add_users(store)
    start = time.time() - 1
    with WebProcess(directory, store, trusted_proxies=["127.0.0.2"]) as web:
        cookie, csrf = sign_in(web, "sam")
        assert call(web, "DELETE", "/api/session", cookie=cookie, headers={"X-CSRF-Token": csrf})[0] == 204
        status, _h, answer = call(web, "POST", "/api/session", {"user": PROBE, "password": "guess"})
        assert status == 401, answer
        status, _h, _me = call(web, "GET", "/api/session", headers={"X-Remote-User": "vera"}, source="127.0.0.2")
        assert status == 200
        status, _h, _a = call(web, "GET", "/api/floor", headers={"X-Remote-User": "mallory"}, source="127.0.0.2")
        assert status == 403
        reader = sign_in(web, "ada")[0]
        end = time.time() + 1
        query = f"from={start!r}&to={end!r}"
        yield web, reader, query, store


def test_each_sign_in_is_a_row_of_the_audit_table_with_how_and_why(signed):
    _web, _cookie, _query, store = signed
    with Store(store) as s:
        rows = [r for r in s.audit() if r["action"] in ("signin", "signin_failed", "signout")]
    assert [(r["who"], r["action"]) for r in rows] == [
        ("sam", "signin"), ("sam", "signout"), ("<b>mallory</b>\u202e\\x00=cmd", "signin_failed"),
        ("vera", "signin"), ("mallory", "signin_failed"), ("ada", "signin")]
    details = [r["detail"] for r in rows]
    assert '"via": "password"' in details[0] and '"address": "127.0.0.1"' in details[0]
    assert '"why": "wrong_password"' in details[2] and '"via": "proxy"' in details[3]
    assert '"why": "proxy_user_unknown"' in details[4] and '"address": "127.0.0.2"' in details[4]


def test_the_json_and_the_page_word_them(signed):
    web, cookie, query, _store = signed
    status, _h, trail = call(web, "GET", f"/api/audit?{query}", cookie=cookie)
    assert status == 200
    said = [(s["name"], s["did"], s["how"], s["why_words"]) for s in trail["signins"]]
    assert said == [
        ("sam", "signed in", "with a password", ""),
        ("sam", "signed out", "with a password", ""),
        (PROBE_SHOWN, "failed to sign in", "with a password", "the password was wrong, or no user has that name"),
        ("vera", "signed in", "through the proxy", ""),
        ("mallory", "failed to sign in", "through the proxy", "the proxy named someone who is not a user of the floor"),
        ("ada", "signed in", "with a password", "")]
    status, _h, html = call(web, "GET", f"/audit?{query}", cookie=cookie)
    assert status == 200
    section = html.split('id="signins"')[1].split("</table>")[0]
    assert "&lt;b&gt;mallory&lt;/b&gt;\\u202e" in section and "<b>mallory" not in section
    assert "\u202e" not in html and "Sign-ins and sign-outs (6)" in html
    # Outside the range: none of them.
    status, _h, earlier = call(web, "GET", "/api/audit?from=1000000000&to=1000086400", cookie=cookie)
    assert status == 200 and earlier["signins"] == []


def test_the_csv_has_a_line_for_each_with_its_via_address_and_why(signed):
    web, cookie, query, _store = signed
    text = _bytes(web, f"/audit.csv?{query}", cookie).decode("utf-8")
    rows = [r for r in csv.DictReader(io.StringIO(text)) if r["action"] in ("signin", "signin_failed", "signout")]
    assert [(r["who"], r["action"], r["via"]) for r in rows] == [
        ("sam", "signin", "password"), ("sam", "signout", "password"),
        (PROBE_SHOWN, "signin_failed", "password"), ("vera", "signin", "proxy"),
        ("mallory", "signin_failed", "proxy"), ("ada", "signin", "password")]
    failed = rows[2]
    assert failed["what"] == "failed to sign in with a password" and failed["address"] == "127.0.0.1"
    assert failed["note"] == "the password was wrong, or no user has that name"
    assert failed["at"].endswith("Z") and failed["at_local"].endswith(" UTC"), failed


def test_the_pdf_shows_them_as_the_page_does(signed):
    web, cookie, query, _store = signed
    pdf = _bytes(web, f"/audit.pdf?{query}", cookie)
    text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages).replace("\n", " ")
    assert "Sign-ins and sign-outs (6)" in text
    for words in ("signed out", "failed to sign in", "through the proxy",
                  "the password was wrong, or no user has that name", "<b>mallory</b>"):
        assert words in text, words


def test_a_name_tried_is_shown_safely():
    assert AF.shown_name("sam") == "sam"
    assert AF.shown_name("a\x1b[31mred") == "a\\x1b[31mred"
    assert AF.shown_name("x" * 100) == "x" * 64 + "... (100 characters)"
    assert AF.shown_name("=HYPERLINK(1)") == "'=HYPERLINK(1)" and AF.shown_name("@sum") == "'@sum"
    assert AF.shown_name("Zdeněk") == "Zdeněk"
