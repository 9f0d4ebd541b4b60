"""`make floor`'s room, as a newcomer meets it: started by the project's own runner,
signed in from headless Chromium, the floor map with the dealers and their hands per
hour, a dealer's page with its charts, and a hand's story reached from an alert.
Screenshots are taken and checked."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import pytest

from tests.floor.support import need, wait_for
from tests.floor.test_view import browser, get, shot_path  # noqa: F401


@pytest.fixture
def room(tmp_path):
    need("mosquitto", "mosquitto")
    proc = subprocess.Popen([sys.executable, "-m", "dealerbox.floor.demo_room", "--dir", str(tmp_path / "room"),
                             "--port", "0", "--pace", "0.05", "--for", "600"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)
    lines = []
    try:
        while len(lines) < 2:
            line = proc.stdout.readline()
            assert line, f"the room did not start: {''.join(lines)}"
            lines.append(line)
        url = re.search(r"the floor: (\S+)", lines[0]).group(1)
        password = re.search(r"sign in as demo with the password (\S+)", lines[1]).group(1)
        yield {"url": url, "password": password, "dir": tmp_path / "room", "proc": proc}
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=90)
        assert proc.returncode == 0, out
        assert "the room is stopped" in out


def test_a_newcomer_signs_in_and_sees_the_room_a_dealer_and_a_hands_story(room, browser, tmp_path):
    url = room["url"]
    def healthy():
        try:
            return get(url + "healthz") == {"ok": True}
        except OSError:  # not listening yet
            return False
    wait_for(healthy, "the web view up")
    browser.sign_in(url, "demo", room["password"])
    wait_for(lambda: browser.location() == "/" and
             browser.js("document.querySelectorAll('#grid .table').length") == 3, "three tables on the floor", 90)
    # Hands are dealt and counted: each tile names its dealer (with the name: a supervisor)
    # and its hands per hour.
    wait_for(lambda: browser.js("[...document.querySelectorAll('#grid .pit')].every("
                                "p => /dealer \\d+ .+, \\d+ hands\\/h/.test(p.textContent))"),
             "every tile with its dealer and hands per hour", 120)
    pit = browser.js("document.querySelector('#table-T01 .pit').textContent")
    assert re.search(r"dealer (1042 Jana Novakova|2077 Petr Svoboda)", pit), pit
    browser.screenshot(shot_path(tmp_path, "room-floor.png"))
    # A dealer's page from the tile: the figures and two charts drawn on the server.
    dealer = re.search(r"dealer (\d+)", pit).group(1)
    browser.go(url + f"dealers/{dealer}")
    wait_for(lambda: browser.location() == f"/dealers/{dealer}" and
             browser.js("document.querySelectorAll('figure.chart svg').length") == 2, "the dealer's charts")
    assert browser.js("document.getElementById('pit-title').textContent").startswith(f"Dealer {dealer}")
    assert browser.js("document.querySelectorAll('figure.chart svg rect, figure.chart svg path').length") > 5
    browser.screenshot(shot_path(tmp_path, "room-dealer.png"))
    # A hand's story from an alert of the floor page.
    browser.go(url)
    link = wait_for(lambda: browser.js("(document.querySelector('.alert a.story') || {}).href"),
                    "an alert with its hand", 120)
    browser.go(link)
    wait_for(lambda: browser.location().startswith("/hands/") and
             browser.js("!!document.getElementById('story-shoe')"), "the hand's story")
    assert browser.js("document.querySelectorAll('#story-shoe li').length") >= 8
    assert browser.js("document.querySelectorAll('.decision').length") >= 1
    assert "seen done" in browser.js("document.body.textContent")
    browser.screenshot(shot_path(tmp_path, "room-story.png"))
