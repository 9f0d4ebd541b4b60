"""The technicians' tables page (issue 41): every table's software, config, profile, registry,
readers, clock, backlog, last heard, uptime and restarts, the tables out of step with the room
marked in plain words and listed first. The tables' health is what the box's own publisher
builds, filed by the collector's filing as it comes off the broker; the page is served by the
real web view and checked with axe-core in Debian's chromium at desktop and tablet sizes."""

from __future__ import annotations

import re
from pathlib import Path
import time

import pytest

from dealerbox.floor.collecting.filing import Filing
from dealerbox.floor.collecting.message import Message
from dealerbox.floor.store import Store
from dealerbox.floor.telling.tables_step import room_tables
from dealerbox.floor.web.tables_pages import offset_words, rate_words
from dealerbox.link import protocol as P
from dealerbox.service.health import reader_errors
from dealerbox.service.uplink import FloorSettings, Publisher
from tests.floor.web.browser import SIZES, chromium, serious_violations, shoot, shot_path, signed_in_page
from tests.floor.web.test_app import WebProcess, add_users, call, sign_in

FINGERPRINT = "3f" * 32
REGISTRY = {"version": 5, "fingerprint": "a1" * 32}
READERS_OK = {"shoe": {"last_seen_s": 0.2, "faulted": False, **reader_errors({"polls": 5000})},
              "board": {"last_seen_s": 0.3, "faulted": False, **reader_errors({"polls": 4990, "faults": 1})}}


def health_of(directory, table: str, *, clock_ahead_s: float = 0.0, readers=READERS_OK, **box) -> bytes:
    """The retained health *table*'s publisher sends (its own code builds it), with *box* as
    what the box reports of itself; the wall clock *clock_ahead_s* ahead of the floor's."""
    publisher = Publisher(FloorSettings(enabled=True, table=table), directory / table,
                          readers=lambda: readers, box=lambda: box,
                          clock=lambda: time.time() + clock_ahead_s, clock_synchronised=lambda: True)
    return P.encode(publisher.health())


def file_table(store: Store, directory, table: str, **health) -> None:
    """A table's birth and health, filed as the collector files them when they come live."""
    filing = Filing(store)
    now = time.time()
    birth = P.encode({"table": table, "online": True, "why": "birth", "boot": 1, "conn": 1, "wall": now})
    filing.store_batch([Message.on_table_topic(P.status_topic(table), birth, now),
                        Message.on_table_topic(P.health_topic(table), health_of(directory, table, **health),
                                               time.time())], time.time())


def room(directory) -> object:
    """Four tables: T01 and T02 in step; T03 out of step in every way (an older version,
    another profile, an older registry, its clock 2.5 s ahead, its shoe reader down); T04 an
    older box that says nothing of what it runs, with a reader's garbage."""
    path = directory / "floor.sqlite"
    running = {"version": "0.1.0", "config_fingerprint": FINGERPRINT, "profile": "tda-2019", "registry": REGISTRY}
    with Store(path) as store:
        file_table(store, directory, "T01", **running)
        file_table(store, directory, "T02", **running)
        file_table(store, directory, "T03", clock_ahead_s=2.5,
                   readers={**READERS_OK, "shoe": {"last_seen_s": 40.0, "faulted": True,
                                                   **reader_errors({"polls": 900, "faults": 100})}},
                   version="0.0.9", config_fingerprint="77" * 32, profile="cz-c40",
                   registry={"version": 4, "fingerprint": "b2" * 32})
        file_table(store, directory, "T04", readers={"shoe": 5, "board": {"error_rate": "lots"}})
        # An older box: its health lacks what it runs (filed as it came, without those keys).
    add_users(path)
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tables")
    path = room(directory)
    with WebProcess(directory, path) as web:
        yield web, path


# -- words, worked by hand


def test_offsets_and_rates_read_in_plain_words_with_one_decimal():
    assert offset_words(None) == "not measured yet"
    assert offset_words(0.02) == "0.0 s (in step)"
    assert offset_words(2.46) == "2.5 s ahead" and offset_words(-1.04) == "1.0 s behind"
    assert rate_words(None) == "no read tried yet" and rate_words(0.1) == "10.0% of reads failed"


def test_a_table_out_of_step_is_marked_and_listed_first_and_tables_in_step_are_not(tmp_path):
    with Store(room(tmp_path)) as store:
        checks, shown_room = room_tables(store.tables())
    assert (shown_room.newest_version, shown_room.usual_profile, shown_room.newest_registry) == ("0.1.0", "tda-2019", 5)
    assert [c.table_id for c in checks] == ["T03", "T04", "T01", "T02"]
    by_id = {c.table_id: c for c in checks}
    assert by_id["T01"].marks == [] and by_id["T02"].marks == []      # no false alarm
    assert by_id["T01"].clock_offset is not None and abs(by_id["T01"].clock_offset) < 1.0
    marks = by_id["T03"].marks
    assert "its clock is 2.5 s ahead of the floor's" in marks
    assert "reader shoe is not working" in marks
    assert "runs version 0.0.9, older than the room's newest 0.1.0" in marks
    assert "deals by profile cz-c40, while most tables deal by tda-2019" in marks
    assert "judges cards with registry version 4, older than the room's newest 5" in marks
    t04 = by_id["T04"]
    assert t04.version is None and [r.error_rate for r in t04.readers] == [None, None]
    assert "does not say its version (the room's newest is 0.1.0)" in t04.marks


def test_a_room_of_one_profile_each_marks_no_profile_and_an_offline_table_comes_first(tmp_path):
    base = {"table_id": "A", "online": 1, "status": {"online": True}, "seen": 1.0, "clock_offset": 0.1,
            "health": {"version": "1.0.0", "profile": "tda-2019", "readers": {}}}
    rows = [base, {**base, "table_id": "B", "health": {**base["health"], "profile": "cz-c40"}},
            {**base, "table_id": "C", "online": 0, "status": {"online": False},
             "health": {**base["health"], "profile": None}}]
    checks, _room = room_tables(rows)
    assert [c.table_id for c in checks] == ["C", "A", "B"]
    assert checks[0].marks == ["offline: the floor does not hear this table"]
    # One table each of two profiles: neither is "another profile than most".
    assert checks[1].marks == [] and checks[2].marks == []


# -- the page


def test_the_page_shows_every_table_in_order_of_attention_with_its_marks(served):
    web, _path = served
    cookie = sign_in(web, "vera")[0]
    status, _h, body = call(web, "GET", "/tables", cookie=cookie)
    assert status == 200, body
    order = [m for m in re.findall(r'id="tables-(T\d\d)"', body)]
    assert order == ["T03", "T04", "T01", "T02"]
    t03 = body[body.index('id="tables-T03"'):body.index('id="tables-T04"')]
    for words in ("Table T03</a>: needs attention", "runs version 0.0.9, older than the room&#39;s newest 0.1.0",
                  "its clock is 2.5 s ahead of the floor&#39;s", "reader shoe is not working",
                  "10.0% of reads failed", "version 4 (b2b2b2b2b2b2)", "cz-c40", "7777777777"):
        assert words in t03, words
    t01 = body[body.index('id="tables-T01"'):body.index('id="tables-T02"')]
    assert "Table T01</a>: in step" in t01 and "marks" not in t01 and "0.0 s (in step)" in t01
    assert "version 0.1.0" in t01 and "3f3f3f3f3f3f" in t01 and "tda-2019" in t01
    assert "2 need attention" in body and 'href="/tables"' in body


def test_the_json_carries_the_same_and_only_signed_in_users_see_either(served):
    web, _path = served
    for path in ("/tables", "/api/tables"):
        assert call(web, "GET", path)[0] in (302, 303, 401)
    cookie = sign_in(web, "vera")[0]
    status, _h, data = call(web, "GET", "/api/tables", cookie=cookie)
    assert status == 200
    assert data["room"] == {"newest_version": "0.1.0", "usual_profile": "tda-2019", "newest_registry": 5}
    assert [t["table_id"] for t in data["tables"]] == ["T03", "T04", "T01", "T02"]
    assert [t["needs_attention"] for t in data["tables"]] == [True, True, False, False]


@pytest.mark.parametrize("role", ["vera", "ada"])
def test_the_page_has_no_serious_or_critical_violation_at_desktop_and_tablet_sizes(served, role, tmp_path):
    web, _path = served
    cookie = sign_in(web, role)[0]
    failures = []
    with chromium() as browser:
        for size in SIZES:
            with signed_in_page(browser, size, web.url, cookie) as page:
                page.goto(web.url.rstrip("/") + "/tables", wait_until="load")
                assert page.locator("#tables-T03 .marks li").count() == 5
                shot = shoot(page, Path(shot_path(tmp_path, f"{size}-tables-{role}.png")))
                print(f"screenshot: {shot}")
                failures += serious_violations(page, f"{role} {size}")
    assert not failures, "\n".join(failures)
