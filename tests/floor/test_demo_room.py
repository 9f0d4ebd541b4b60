"""`make floor`'s room, as a newcomer meets it: started by the project's own runner
(accelerated, and saying so), signed in from headless Chromium, the floor map with
three dealers with names at three tables and their hands per hour, a dealer relieved
one table at a time and never at two tables at once, a dealer's page with its charts,
and a hand's story reached from an alert. Screenshots are taken and checked. (The
room's schedule on a simulated clock, hours of it: tests/tools/test_demo_room_table.py.)"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

import pytest

from dealerbox.floor.operating.demo_room import DEMO_USER, DemoRoom
from dealerbox.floor.store import Store

from tests.floor.support import need, wait_for
from tests.floor.test_view import browser, get, shot_path  # noqa: F401


@pytest.fixture
def room(tmp_path):
    need("mosquitto", "mosquitto")
    proc = subprocess.Popen([sys.executable, "-m", "dealerbox.floor.operating.demo_room", "--dir", str(tmp_path / "room"),
                             "--port", "0", "--speed", "60", "--irregular-per-100", "20", "--for", "600"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)
    lines = []
    try:
        while len(lines) < 3:
            line = proc.stdout.readline()
            assert line, f"the room did not start: {''.join(lines)}"
            lines.append(line)
        url = re.search(r"the floor: (\S+)", lines[0]).group(1)
        password = re.search(r"sign in as demo with the password (\S+)", lines[1]).group(1)
        assert "ACCELERATED 60 times a live table's pace" in lines[2], lines[2]
        assert "about 20 irregular hands per 100" in lines[2] and "every 20 seconds" in lines[2], lines[2]
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
    # The room as it stands: two pits, each table in its place, none left unplaced.
    assert browser.js("[...document.querySelectorAll('section.pit-group.placed')].map(s => s.dataset.pit + ': ' + "
                      "[...s.querySelectorAll('.table')].map(t => t.dataset.key).join(' '))") == \
        ["Pit A: T01 T02", "Pit B: T03"]
    assert browser.js("document.getElementById('pit-unplaced').hidden")
    # Hands are dealt and counted: each tile names its dealer (by name and badge id: a
    # supervisor) and its hands per hour.
    wait_for(lambda: browser.js("[...document.querySelectorAll('#grid .table')].every(t => "
                                "/^[A-Z][a-z]+ [A-Z][a-z]+ \\(\\d+\\)$/.test((t.querySelector('.dealer') || {}).textContent) "
                                "&& /\\d+(\\.\\d)? hands\\/h/.test((t.querySelector('.rate') || {}).textContent))"),
             "every tile with its dealer and hands per hour", 120)
    pit = browser.js("document.querySelector('#table-T01 .dealer').textContent")
    assert pit in ("Jana Novakova (1042)", "Tomas Horak (4208)"), pit
    # Each table its own dealer; every 20 s (20 minutes at a live pace) one table gets
    # the dealer back from break; nobody ever deals at two tables.
    seen, reliefs, previous = [], 0, None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and reliefs < 2:
        at = browser.js("fetch('/api/floor').then(r => r.json()).then(s => "
                        "Object.fromEntries(s.tables.map(t => [t.table, t.dealer])))")
        if at and all(at.get(t) for t in ("T01", "T02", "T03")):
            assert len(set(at.values())) == 3, at
            if previous is not None and at != previous:
                assert sum(at[t] != previous[t] for t in at) == 1, (previous, at)
                reliefs += 1
            previous = at
            seen.append(at)
        time.sleep(0.25)
    assert reliefs >= 1, seen[-3:]
    names = browser.js("[...document.querySelectorAll('#grid .dealer')].map(p => p.textContent).join(' ')")
    assert len(set(re.findall(r"[A-Z][a-z]+ [A-Z][a-z]+ \((\d+)\)", names))) == 3, names
    browser.screenshot(shot_path(tmp_path, "room-floor.png"))
    # A dealer's page from the tile: the figures and two charts drawn on the server.
    dealer = re.search(r"\((\d+)\)", pit).group(1)
    browser.go(url + f"dealers/{dealer}")
    wait_for(lambda: browser.location() == f"/dealers/{dealer}" and
             browser.js("document.querySelectorAll('.charts figure.chart svg').length") == 2, "the dealer's charts")
    assert browser.js("document.getElementById('pit-title').textContent").startswith(f"Dealer {dealer}")
    assert browser.js("document.querySelectorAll('.charts figure.chart svg rect, .charts figure.chart svg path').length") > 5
    browser.screenshot(shot_path(tmp_path, "room-dealer.png"))
    # A hand's story from an alert of the floor page.
    browser.go(url)
    link = wait_for(lambda: browser.js("(document.querySelector('.alert a.story') || {}).href"),
                    "an alert with its hand", 120)
    browser.go(link)
    wait_for(lambda: browser.location().startswith("/hands/") and
             browser.js("!!document.getElementById('story-shoe')"), "the hand's story")
    assert browser.js("document.querySelectorAll('#story-shoe li').length") >= 8
    # The seats with their hole cards (two at least: a hand), and the board line agreeing
    # with the streets' table: a card laid on any street means a board to show.
    assert browser.js("[...document.querySelectorAll('#story-seats tbody tr')]"
                      ".filter(r => r.querySelector('th') && /^seat \\d+$/.test(r.querySelector('th').textContent)).length") >= 2
    laid = browser.js("[...document.querySelectorAll('#story-board tbody tr')]"
                      ".some(r => !['', 'none'].includes(r.cells[2].textContent.trim()))")
    assert browser.js("document.getElementById('story-board-line').textContent").startswith(
        "Board:" if laid else "No card was laid")
    # One entry per irregularity, each step with when it was seen done.
    assert browser.js("document.querySelectorAll('section.irregularity').length") >= 1
    assert "seen done" in browser.js("document.body.textContent").lower()
    browser.screenshot(shot_path(tmp_path, "room-story.png"))


def test_a_czech_demo_room_has_a_czech_supervisor_and_says_so_once_on_the_audit_trail(tmp_path):
    """`make floor FLOOR_ARGS="--language cs"`: the room's language and the demo supervisor's own."""
    demo = DemoRoom(tmp_path, language="cs")
    store_path = tmp_path / "floor.sqlite"
    demo._demo_user(store_path)
    demo._demo_user(store_path)  # a second start: the same choice, no second audit row
    with Store(store_path) as store:
        assert store.user(DEMO_USER)["language"] == "cs"
        assert [(r["who"], r["detail"]) for r in store.audit() if r["action"] == "language"] == \
            [(DEMO_USER, "room -> cs")]
