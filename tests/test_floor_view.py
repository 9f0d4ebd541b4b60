"""The floor view: the collector's web page with server-sent events (in a real
headless Chromium), its HTTP API and the Textual screen."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import threading
import urllib.error
import urllib.request

import pytest

from test_floor_support import (  # noqa: F401
    append_lines, broker, identity, need, open_journal, pki, settings, wait_for)
from dealerbox.floor.broker import stop_process
from dealerbox.floor.collector import Collector
from dealerbox.floor.publisher import Publisher
from dealerbox.floor.store import Store
from dealerbox.floor.view import sse_events
from dealerbox.floor.web import FloorWeb

FOUR_CARD_FLOP = {"t": 12.0, "verdict": "floor", "irregularity": "FOUR_CARD_FLOP",
                  "cards": ["Ah", "Kd", "7c", "2s"], "rule": "002 r39, OP14",
                  "steps": ["Call the floor", "The floor decides"], "step": 0, "phase": "flop"}


@pytest.fixture
def floor(broker, pki, tmp_path):
    """A collector with its web view, and tables T01 (clean) and T02."""
    journals = {t: open_journal(tmp_path / t) for t in ("T01", "T02")}
    with Store(tmp_path / "floor.sqlite") as store, \
            Collector(identity(pki, broker, "floor-collector"), store) as collector, \
            FloorWeb(collector, "127.0.0.1", 0) as web:
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


def post(url, body, headers=None):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def raise_floor_call(floor, table="T02"):
    floor["journals"][table].append_decision(FOUR_CARD_FLOP)
    floor["pubs"][table].notify()


def test_the_api_shows_the_tables_and_an_alert_arrives_over_sse_until_cleared(floor):
    url = floor["web"].url
    snap = get(url + "api/floor")
    assert {t["table"]: t["colour"] for t in snap["tables"]} == {"T01": "green", "T02": "green"}
    stop, seen = threading.Event(), []

    def read():
        for name, data in sse_events(url + "events", stop):
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
    wait_for(lambda: {t["table"]: t["colour"] for t in get(url + "api/floor")["tables"]}["T02"] == "red",
             "T02 red")
    with pytest.raises(urllib.error.HTTPError) as err:
        post(url + f"api/alerts/{alert['id']}/clear", {})
    assert err.value.code == 400
    err.value.close()
    cleared = post(url + f"api/alerts/{alert['id']}/clear", {"who": "ignored"},
                   {"X-Remote-User": "floor manager Dvorak"})
    assert cleared["cleared_by"] == "floor manager Dvorak"
    assert get(url + "api/floor")["alerts"] == []
    audit = get(url + "api/audit")["audit"]
    assert audit[-1]["who"] == "floor manager Dvorak" and audit[-1]["alert"] == alert["id"]


class Chromium:
    """Headless Chromium driven over the DevTools protocol (websocket-client)."""

    def __init__(self, binary, profile):
        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
             f"--user-data-dir={profile}", "--remote-debugging-port=0", "--window-size=1200,800",
             "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        wait_for(lambda: port_file.exists() and len(port_file.read_text().split()) >= 2,
                 "Chromium's DevTools port")
        port = int(port_file.read_text().split()[0])
        targets = wait_for(lambda: [t for t in get(f"http://127.0.0.1:{port}/json")
                                    if t["type"] == "page"], "a page target")
        import websocket
        self.ws = websocket.create_connection(targets[0]["webSocketDebuggerUrl"], timeout=30,
                                              suppress_origin=True)
        self.ids = 0

    def call(self, method, **params):
        self.ids += 1
        self.ws.send(json.dumps({"id": self.ids, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.ids:
                if "error" in msg:
                    raise AssertionError(f"{method}: {msg['error']}")
                return msg["result"]

    def js(self, expression):
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def close(self):
        try:
            self.ws.close()
        finally:
            stop_process(self.proc)


def test_the_web_view_in_headless_chromium_shows_the_floor_and_an_alert_arriving(floor, tmp_path):
    binary = need("chromium", "chromium")
    browser = Chromium(binary, tmp_path / "profile")
    try:
        browser.call("Page.enable")
        browser.call("Page.navigate", url=floor["web"].url)
        wait_for(lambda: browser.js("document.querySelectorAll('#grid .table').length") == 2,
                 "two tables drawn")
        assert browser.js("document.getElementById('conn').textContent") == "live"
        assert browser.js("document.getElementById('table-T01').className") == "table green"
        assert browser.js("document.querySelectorAll('.alert').length") == 0
        raise_floor_call(floor)
        # Pushed over SSE: the page is never reloaded.
        text = wait_for(lambda: browser.js("(document.querySelector('.alert') || {}).textContent"),
                        "the alert to arrive in the page")
        assert "T02 floor: FOUR_CARD_FLOP" in text
        wait_for(lambda: browser.js("document.getElementById('table-T02').className") == "table red",
                 "T02 red, blinking")
        assert "FOUR_CARD_FLOP" in browser.js("document.getElementById('table-T02').textContent")
        shot = base64.b64decode(browser.call("Page.captureScreenshot", format="png")["data"])
        assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 5000
        out = os.environ.get("FLOOR_SCREENSHOT") or str(tmp_path / "floor.png")
        with open(out, "wb") as f:
            f.write(shot)
        # Clearing from the page takes the alert away, with who in the audit.
        browser.js("document.getElementById('who').value = 'pit boss Svoboda'")
        browser.js("document.querySelector('.alert button').click()")
        wait_for(lambda: browser.js("document.querySelectorAll('.alert').length") == 0, "the alert cleared")
        assert floor["store"].audit()[-1]["who"] == "pit boss Svoboda"
    finally:
        browser.close()


def test_the_textual_view_shows_the_grid_and_alerts(floor):
    from dealerbox.floor.view import FloorView, TableTile

    async def run():
        app = FloorView(floor["web"].url, who="pit boss Kral")
        async with app.run_test(size=(120, 40)) as pilot:
            for _ in range(200):
                if len(app.query(TableTile)) == 2:
                    break
                await pilot.pause(0.05)
            tiles = {t.id: t for t in app.query(TableTile)}
            assert tiles["t-T01"].has_class("green") and tiles["t-T02"].has_class("green")
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
            await pilot.press("c")
            for _ in range(200):
                if not app.alerts:
                    break
                await pilot.pause(0.05)
            assert app.alerts == {}
    asyncio.run(run())
    assert floor["store"].audit()[-1]["who"] == "pit boss Kral"
