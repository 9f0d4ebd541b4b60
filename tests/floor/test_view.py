"""The floor view: the web view (its own process, signed in) in Debian's headless
chromium driven by Playwright, its HTTP API through :class:`FloorClient`, and the
Textual screen."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import urllib.request

import pytest

from tests.floor.support import (  # noqa: F401
    append_lines, broker, identity, need, open_journal, pki, settings, wait_for)
from tests.floor.web.test_app import PASSWORDS, WebProcess, add_users
from tests.floor.web.browser import chromium, shot_path  # noqa: F401 (shot_path: test_demo_room's)
from dealerbox.floor.operating.broker import free_port
from dealerbox.floor.collecting.collector import Collector
from dealerbox.service.uplink import Publisher
from dealerbox.floor.store import Store
from dealerbox.floor.terminal.view import FloorClient, SigninError
from dealerbox.floor.store.alerts import SIGNIN_ACTIONS

sync_api = pytest.importorskip("playwright.sync_api")

#: Debian's chromium, never a browser Playwright downloads.

FOUR_CARD_FLOP = {"t": 12.0, "verdict": "floor", "irregularity": "FOUR_CARD_FLOP",
                  "cards": ["Ah", "Kd", "7c", "2s"], "rule": "002 r39, OP14",
                  "steps": ["Call the floor", "The floor decides"], "step": 0, "phase": "flop"}


@pytest.fixture
def floor(broker, pki, tmp_path):
    """The collector, the web view beside it (``floor web``, its own process, the
    same store), a viewer, a supervisor and an admin, and tables T01 and T02."""
    journals = {t: open_journal(tmp_path / t) for t in ("T01", "T02")}
    store_path = tmp_path / "floor.sqlite"
    add_users(store_path)
    with Store(store_path) as store, \
            Collector(identity(pki, broker, "floor-collector"), store) as collector, \
            WebProcess(tmp_path, store_path) as web:
        pubs = {t: Publisher(settings(pki, broker, t), tmp_path / t).start() for t in journals}
        for t, j in journals.items():
            append_lines(j, 5)
        wait_for(lambda: all(p.acked == 5 for p in pubs.values()), "both tables reporting")
        yield {"web": web, "collector": collector, "store": store, "journals": journals, "pubs": pubs}
        for p in pubs.values():
            p.close()
    for j in journals.values():
        j.close()


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def raise_floor_call(floor, table="T02"):
    floor["journals"][table].append_decision(FOUR_CARD_FLOP)
    floor["pubs"][table].notify()


def signed_in(floor, name) -> FloorClient:
    client = FloorClient(floor["web"].url)
    client.sign_in(name, PASSWORDS[name])
    return client


def test_the_api_shows_the_tables_and_an_alert_arrives_over_sse_until_cleared(floor):
    with pytest.raises(SigninError, match="401"):
        FloorClient(floor["web"].url).sign_in("sam", "not sam's password")
    sam = signed_in(floor, "sam")
    snap = sam.get("api/floor")
    assert {t["table"]: t["colour"] for t in snap["tables"]} == {"T01": "green", "T02": "green"}
    stop, seen = threading.Event(), []

    def read():
        for name, data in sam.events(stop):
            seen.append((name, data))
            if name == "alert":
                return
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    wait_for(lambda: seen and seen[0][0] == "snapshot", "the SSE snapshot")
    raise_floor_call(floor)
    reader.join(30)
    stop.set()
    alert = seen[-1][1]["alert"]
    assert seen[-1][0] == "alert" and alert["table"] == "T02" and alert["kind"] == "floor"
    assert "FOUR_CARD_FLOP" in alert["text"]
    wait_for(lambda: {t["table"]: t["colour"] for t in sam.get("api/floor")["tables"]}["T02"] == "red",
             "T02 red")
    with pytest.raises(OSError, match="400"):
        sam.clear(alert["id"], "")
    cleared = sam.clear(alert["id"], "the flop was dealt again")
    assert cleared["cleared_by"] == "sam" and cleared["note"] == "the flop was dealt again"
    wait_for(lambda: sam.get("api/floor")["alerts"] == [], "the alert gone from the snapshot", 10)
    audit = sam.get("api/audit")["audit"]
    assert audit[-1]["who"] == "sam" and audit[-1]["alert"] == alert["id"]
    sam.sign_out()
    with pytest.raises(SigninError, match="401"):
        sam.get("api/floor")


class Browser:
    """Headless Debian chromium driven by Playwright for Python (never a downloaded
    browser), with the few moves the floor's browser tests make."""

    def __init__(self, page):
        self.page = page

    def go(self, url):
        self.page.goto(url, wait_until="commit")

    def js(self, expression):
        """The value of *expression* in the page; None while the page is between two documents."""
        try:
            return self.page.evaluate(expression)
        except sync_api.Error as exc:
            # A navigation (a redirect to the sign-in page, a form posted) destroys the
            # context mid-call: the caller's wait_for asks again.
            if "context was destroyed" in str(exc) or "navigat" in str(exc):
                return None
            raise

    def location(self):
        return self.js("location.pathname")

    def sign_in(self, url, user, password):
        """Through the real sign-in page, as a person does."""
        self.go(url)
        wait_for(lambda: self.location() == "/login" and self.js("!!document.getElementById('user')"),
                 "the sign-in page")
        self.page.fill("#user", user)
        self.page.fill("#password", password)
        self.page.click("#signin-button", no_wait_after=True)

    def screenshot(self, path):
        shot = self.page.screenshot(path=path)
        assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 5000
        return path


@pytest.fixture
def browser():
    need("chromium", "chromium")
    with chromium() as launched:
        context = launched.new_context(viewport={"width": 1200, "height": 800})
        yield Browser(context.new_page())
        context.close()


def test_in_chromium_a_wrong_password_then_a_supervisor_signs_in_and_clears_an_alert_with_a_note(
        floor, browser, tmp_path):
    url = floor["web"].url
    browser.go(url)
    wait_for(lambda: browser.location() == "/login", "the sign-in page for a browser without a session")
    browser.sign_in(url, "sam", "not the password at all")
    wait_for(lambda: browser.js("(document.getElementById('error') || {}).textContent"), "the error")
    assert browser.js("document.getElementById('error').textContent") == "wrong user name or password"
    assert browser.location() == "/login"
    assert "FOUR_CARD_FLOP" not in browser.js("document.body.textContent")
    browser.screenshot(shot_path(tmp_path, "floor-signin-refused.png"))
    browser.sign_in(url, "sam", PASSWORDS["sam"])
    wait_for(lambda: browser.location() == "/" and
             browser.js("document.querySelectorAll('#grid .table').length") == 2, "two tables drawn")
    wait_for(lambda: browser.js("document.getElementById('conn').textContent") == "live", "the stream live")
    assert browser.js("document.getElementById('who').textContent") == "sam (supervisor)"
    assert browser.js("document.getElementById('table-T01').className") == "table green"
    assert browser.js("document.querySelectorAll('.alert').length") == 0
    # HttpOnly: the page's scripts cannot read the session cookie.
    assert "dealerbox-session" not in browser.js("document.cookie")
    raise_floor_call(floor)
    # Pushed over SSE as HTML drawn by the server: the page is never reloaded.
    text = wait_for(lambda: browser.js("(document.querySelector('.alert .text') || {}).textContent"),
                    "the alert to arrive in the page")
    # A floor call announced as one, in plain words (issue 32).
    assert text.startswith("Floor call at T02: four-card flop"), text
    wait_for(lambda: browser.js("document.getElementById('table-T02').className") == "table red",
             "T02 red, blinking")
    assert "four-card flop" in browser.js("document.getElementById('table-T02').textContent").lower()
    assert browser.js("document.getElementById('count').textContent") == "(1)"
    browser.screenshot(shot_path(tmp_path, "floor-signed-in.png"))
    # Clear without a note: the browser itself asks for one; then with a note.
    browser.js("document.querySelector('.alert form.clear button').click()")
    assert browser.js("document.querySelectorAll('.alert').length") == 1
    browser.js("document.querySelector('.alert .note').value = 'flop burned and dealt again'")
    browser.js("document.querySelector('.alert form.clear button').click()")
    wait_for(lambda: browser.js("document.querySelectorAll('.alert').length") == 0, "the alert cleared")
    audit = floor["store"].audit()[-1]
    assert (audit["who"], audit["detail"]) == ("sam", "flop burned and dealt again")
    # The audit trail page names the signed-in supervisor.
    browser.go(url + "audit")
    wait_for(lambda: browser.js("document.querySelectorAll('#audit tbody tr').length") == 1, "the audit page")
    row = browser.js("[...document.querySelectorAll('#audit tbody tr > *')].map(td => td.textContent)")
    # Each time with its date and zone, the alert in the floor's words, its table and hand (issue 41).
    assert re.fullmatch(r"\w{3} \d{2} \w{3} \d{4}, \d{2}:\d{2}:\d{2} \S+", row[0]), row
    assert row[1:3] == ["sam", f"cleared alert {audit['alert']}"]
    assert row[3].startswith("Floor call at T02: four-card flop"), row
    assert row[4:6] == ["T02", "the hand"] and row[7] == "flop burned and dealt again"
    assert re.fullmatch(r"\w{3} \d{2} \w{3} \d{4}, \d{2}:\d{2}:\d{2} \S+", row[6]), row
    assert browser.js("document.querySelector('#audit a[href^=\"/hands/T02/\"]') !== null")
    # Signing out from the page ends the session: the floor sends it to the sign-in page.
    browser.js("document.getElementById('signout').click()")
    wait_for(lambda: browser.location() == "/login", "signed out")
    browser.go(url)
    wait_for(lambda: browser.location() == "/login", "no floor after signing out")


def test_in_chromium_a_viewer_sees_the_floor_and_cannot_clear(floor, browser, tmp_path):
    raise_floor_call(floor)
    alert = wait_for(lambda: [a for a in floor["store"].alerts() if a["kind"] == "floor"], "the alert stored")[0]
    browser.sign_in(floor["web"].url, "vera", PASSWORDS["vera"])
    wait_for(lambda: browser.location() == "/" and browser.js("document.querySelectorAll('.alert').length") == 1,
             "the floor with its alert")
    assert browser.js("document.getElementById('who').textContent") == "vera (viewer)"
    assert browser.js("document.querySelectorAll('form.clear').length") == 0
    assert "a supervisor clears alerts" in browser.js("document.getElementById('alerts').textContent")
    # Trying it from the page's own scripts anyway (with the page's CSRF token): refused.
    tried = browser.js("""
        fetch('/api/alerts/%d/clear', {method: 'POST', headers: {'Content-Type': 'application/json',
            'X-CSRF-Token': document.querySelector('meta[name="csrf-token"]').content},
            body: JSON.stringify({note: 'a viewer tries'})}).then(r => r.status)""" % alert["id"])
    assert tried == 403
    assert [a["kind"] for a in floor["store"].alerts()] == ["floor"]
    browser.screenshot(shot_path(tmp_path, "floor-viewer.png"))


EVIL_PAGE = """<!doctype html><html><body><h1>Free chips</h1>
<form id="f" method="post" enctype="text/plain" action="{target}">
<input name='{{"note": "pwned", "x": "' value='"}}'></form>
<script>
fetch("{target}", {{method: "POST", mode: "no-cors", credentials: "include",
  headers: {{"Content-Type": "text/plain"}}, body: JSON.stringify({{note: "pwned"}})}})
  .then(() => {{ document.title = "fetched"; document.getElementById("f").submit(); }},
        () => {{ document.title = "fetched"; document.getElementById("f").submit(); }});
</script></body></html>"""


def test_in_chromium_a_page_on_another_origin_cannot_clear_an_alert(floor, browser):
    raise_floor_call(floor)
    alert = wait_for(lambda: [a for a in floor["store"].alerts() if a["kind"] == "floor"], "the alert")[0]
    # The supervisor is signed in to the floor in this browser.
    browser.sign_in(floor["web"].url, "sam", PASSWORDS["sam"])
    wait_for(lambda: browser.location() == "/" and browser.js("document.querySelectorAll('.alert').length") == 1,
             "signed in")
    target = f"{floor['web'].url}api/alerts/{alert['id']}/clear"
    page = EVIL_PAGE.format(target=target).encode()

    class Evil(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args):
            pass
    evil = http.server.HTTPServer(("127.0.0.1", free_port()), Evil)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        # "localhost" is another site than "127.0.0.1", where the floor is.
        browser.go(f"http://localhost:{evil.server_address[1]}/")
        wait_for(lambda: browser.js("document.title") == "fetched" or browser.js("location.pathname") != "/",
                 "the other site's page to try")
        wait_for(lambda: "/api/alerts/" in (browser.js("location.href") or ""), "the form posted to the floor")
        answer = browser.js("document.body.textContent")
        assert "pwned" not in answer and ("sign in first" in answer or "another site" in answer
                                          or "origin" in answer), answer
    finally:
        evil.shutdown()
        evil.server_close()
    assert [(a["id"], a["cleared_by"]) for a in floor["store"].alerts()] == [(alert["id"], None)]
    assert [a for a in floor["store"].audit() if a["action"] not in SIGNIN_ACTIONS] == []   # no clear


def test_the_textual_view_signs_in_and_clears_with_a_note(floor):
    from dealerbox.floor.terminal.view import FloorView, TableTile

    async def run():
        app = FloorView(signed_in(floor, "sam"))
        async with app.run_test(size=(120, 40)) as pilot:
            for _ in range(200):
                if len(app.query(TableTile)) == 2:
                    break
                await pilot.pause(0.05)
            tiles = {t.id: t for t in app.query(TableTile)}
            assert tiles["t-T01"].has_class("green") and tiles["t-T02"].has_class("green")
            assert app.sub_title == "sam (supervisor)"
            raise_floor_call(floor)
            for _ in range(400):
                if app.alerts:
                    break
                await pilot.pause(0.05)
            assert [a["kind"] for a in app.alerts.values()] == ["floor"]
            for _ in range(200):
                if tiles["t-T02"].has_class("red"):
                    break
                await pilot.pause(0.05)
            assert tiles["t-T02"].has_class("red")
            # In the floor map's words: what is going on and since when, the dealer; the
            # journal's sequence and backlog are a technician's, not on the tile.
            face = str(tiles["t-T02"].content)
            assert face.startswith("[b]T02[/b]") and "Floor call: " in face and "seq " not in face, face
            assert re.search(r"Floor call: .+, \d+ s", face), face
            alerts = app.query_one("#alerts")
            raised, what, waiting, _id = (str(c) for c in alerts.get_row_at(0))
            assert what.startswith("Floor call at T02: ") and re.search(r"\d{4}.*\d\d:\d\d", raised), (raised, what)
            assert re.fullmatch(r"\d+ s|\d+ min( \d+ s)?", waiting), waiting
            await pilot.press("c")
            await pilot.pause(0.2)
            await pilot.press("enter")  # no note yet: nothing happens
            await pilot.press(*"shoe checked")
            await pilot.press("enter")
            for _ in range(200):
                if not app.alerts:
                    break
                await pilot.pause(0.05)
            assert app.alerts == {}
    asyncio.run(run())
    audit = floor["store"].audit()[-1]
    assert (audit["who"], audit["detail"]) == ("sam", "shoe checked")


def test_the_terminal_view_refuses_a_wrong_password_in_one_line(floor):
    env = {**os.environ, "DEALERBOX_FLOOR_USER": "sam", "DEALERBOX_FLOOR_PASSWORD": "wrong wrong wrong"}
    result = subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", "view", "--url", floor["web"].url],
                            env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "wrong user name or password" in result.stderr
