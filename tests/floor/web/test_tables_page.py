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

from dealerbox import __version__ as FLOOR_VERSION
from dealerbox.floor.collecting.filing import Filing
from dealerbox.floor.collecting.registry_pass import RegistryPass
from dealerbox.floor.collecting.message import Message
from dealerbox.floor.store import Store
from dealerbox.floor.telling.tables_step import room_tables
from dealerbox.floor.web.tables_pages import offset_words, rate_words
from dealerbox.link import protocol as P
from dealerbox.service.health import reader_errors
from dealerbox.service.uplink import FloorSettings, Publisher
from tests.floor.commission_support import record
from tests.floor.registry_support import TableJournal, file_journal
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


def commissioned(store: Store, journal: TableJournal, at: float, **kw) -> None:
    """A ``dealerbox commission`` run ending at *at*, added to the table's *journal* and filed
    as the collector files it (its new line, then the registry pass)."""
    filed = len(journal.lines)
    journal.add(at, "commissioned", **record(at, **kw))
    file_journal(store, journal, filed)
    RegistryPass(store).catch_up()


def room(directory) -> object:
    """Four tables: T01 and T02 in step (commissioned a day ago); T03 out of step in every way
    (an older version, another profile, an older registry, its clock 2.5 s ahead, its shoe
    reader down, never commissioned); T04 an older box that says nothing of what it runs, with a
    reader's garbage."""
    path = directory / "floor.sqlite"
    running = {"version": FLOOR_VERSION, "config_fingerprint": FINGERPRINT, "profile": "tda-2019",
               "registry": REGISTRY}
    with Store(path) as store:
        # The floor's own registry is at version 5, the one T01 and T02 judge with.
        for i in range(REGISTRY["version"]):
            store.register_badge(f"08A1B2{i:02X}", f"10{i:02d}", "ada")
        assert store.registry_version() == REGISTRY["version"]
        file_table(store, directory, "T01", **running)
        file_table(store, directory, "T02", **running)
        file_table(store, directory, "T03", clock_ahead_s=2.5,
                   readers={**READERS_OK, "shoe": {"last_seen_s": 40.0, "faulted": True,
                                                   **reader_errors({"polls": 900, "faults": 100})}},
                   version="0.0.9", config_fingerprint="77" * 32, profile="cz-c40",
                   registry={"version": 4, "fingerprint": "b2" * 32})
        file_table(store, directory, "T04", readers={"shoe": 5, "board": {"error_rate": "lots"}})
        for table in ("T01", "T02"):
            commissioned(store, TableJournal(table), time.time() - 86400)
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
        checks, shown_room = room_tables(store.tables(), floor_version=FLOOR_VERSION,
                                         floor_registry=store.registry_version())
    assert (shown_room.version, shown_room.usual_profile, shown_room.registry, shown_room.floor_version) == (
        FLOOR_VERSION, "tda-2019", 5, FLOOR_VERSION)
    assert [c.table_id for c in checks] == ["T03", "T04", "T01", "T02"]
    by_id = {c.table_id: c for c in checks}
    assert by_id["T01"].marks == [] and by_id["T02"].marks == []      # no false alarm
    assert by_id["T01"].clock_offset is not None and abs(by_id["T01"].clock_offset) < 1.0
    marks = by_id["T03"].marks
    assert "its clock is 2.5 s ahead of the floor's" in marks
    assert "reader shoe is not working" in marks
    assert f"runs version 0.0.9, older than most tables' {FLOOR_VERSION}" in marks
    assert "deals by profile cz-c40, while most tables deal by tda-2019" in marks
    assert "judges cards with registry version 4, older than the floor's 5" in marks
    t04 = by_id["T04"]
    assert t04.version is None and [r.error_rate for r in t04.readers] == [None, None]
    assert f"does not say its version (most tables run {FLOOR_VERSION})" in t04.marks
    assert "judges cards without the room's registry (the floor's is version 5)" in t04.marks


def test_a_room_of_one_profile_each_marks_no_profile_and_an_offline_table_comes_first(tmp_path):
    base = {"table_id": "A", "online": 1, "status": {"online": True}, "seen": 1.0, "clock_offset": 0.1,
            "health": {"version": "1.0.0", "profile": "tda-2019", "readers": {}}}
    rows = [base, {**base, "table_id": "B", "health": {**base["health"], "profile": "cz-c40"}},
            {**base, "table_id": "C", "online": 0, "status": {"online": False},
             "health": {**base["health"], "profile": None}}]
    checks, _room = room_tables(rows, floor_version="1.0.0", floor_registry=0)
    assert [c.table_id for c in checks] == ["C", "A", "B"]
    assert checks[0].marks == ["offline: the floor does not hear this table"]
    # One table each of two profiles: neither is "another profile than most".
    assert checks[1].marks == [] and checks[2].marks == []


def _table(table_id: str, version: str | None, registry: int | None) -> dict:
    health = {"version": version, "profile": "tda-2019", "readers": {}}
    if registry is not None:
        health["registry"] = {"version": registry, "fingerprint": "a1" * 32}
    return {"table_id": table_id, "online": 1, "status": {"online": True}, "seen": 1.0, "clock_offset": 0.1,
            "health": health}


def test_one_hostile_table_claiming_a_huge_version_or_registry_sets_no_bar_and_is_marked_itself():
    rows = [_table("A", "1.0.0", 7), _table("B", "1.0.0", 7), _table("C", "1.0.0", 7),
            _table("D", "999", 10 ** 9)]
    checks, shown = room_tables(rows, floor_version="1.0.0", floor_registry=7)
    assert (shown.version, shown.registry) == ("1.0.0", 7)
    by_id = {c.table_id: c for c in checks}
    assert by_id["A"].marks == by_id["B"].marks == by_id["C"].marks == []   # no false alarm
    assert by_id["D"].marks == [
        "runs version 999, newer than this floor's own 1.0.0: not a release the floor knows",
        "says it judges cards with registry version 1000000000, newer than the floor's own 7: "
        "not one the floor sent"]
    assert [c.table_id for c in checks][0] == "D"


def test_most_tables_newer_than_the_floor_are_marked_and_the_floor_s_version_is_the_room_s():
    rows = [_table(t, "2.0.0", None) for t in ("A", "B", "C")] + [_table("D", "1.0.0", None)]
    checks, shown = room_tables(rows, floor_version="1.0.0", floor_registry=0)
    assert shown.version == "1.0.0"
    marks = {c.table_id: c.marks for c in checks}
    assert marks["D"] == []
    assert all(marks[t] == ["runs version 2.0.0, newer than this floor's own 1.0.0: not a release the floor knows"]
               for t in "ABC")


def test_tables_behind_the_floor_s_registry_are_marked_though_none_has_it_yet():
    rows = [_table("A", "1.0.0", 7), _table("B", "1.0.0", 7), _table("C", "1.0.0", 8), _table("D", "1.0.0", None)]
    checks, shown = room_tables(rows, floor_version="1.0.0", floor_registry=9)
    assert shown.registry == 9
    marks = {c.table_id: c.marks for c in checks}
    assert marks["A"] == marks["B"] == ["judges cards with registry version 7, older than the floor's 9"]
    assert marks["C"] == ["judges cards with registry version 8, older than the floor's 9"]
    assert marks["D"] == ["judges cards without the room's registry (the floor's is version 9)"]


def test_a_floor_without_a_registry_marks_only_a_table_that_claims_one():
    rows = [_table("A", "1.0.0", None), _table("B", "1.0.0", 3)]
    checks, shown = room_tables(rows, floor_version="1.0.0", floor_registry=0)
    marks = {c.table_id: c.marks for c in checks}
    assert marks["A"] == []
    assert marks["B"] == ["says it judges cards with registry version 3, but the floor has sent no registry"]
    # Older tables than most, and the floor newer than every table: measured against most tables.
    rows = [_table("A", "0.9.0", None), _table("B", "0.9.0", None), _table("C", "0.8.0", None)]
    checks, shown = room_tables(rows, floor_version="1.0.0", floor_registry=0)
    assert shown.version == "0.9.0"
    assert {c.table_id: c.marks for c in checks} == {
        "A": [], "B": [], "C": ["runs version 0.8.0, older than most tables' 0.9.0"]}


# -- the page


def test_the_page_shows_every_table_in_order_of_attention_with_its_marks(served):
    web, _path = served
    cookie = sign_in(web, "vera")[0]
    status, _h, body = call(web, "GET", "/tables", cookie=cookie)
    assert status == 200, body
    order = [m for m in re.findall(r'id="tables-(T\d\d)"', body)]
    assert order == ["T03", "T04", "T01", "T02"]
    t03 = body[body.index('id="tables-T03"'):body.index('id="tables-T04"')]
    for words in ("Table T03</a>: needs attention", f"runs version 0.0.9, older than most tables&#39; {FLOOR_VERSION}",
                  "its clock is 2.5 s ahead of the floor&#39;s", "reader shoe is not working",
                  "10.0% of reads failed", "version 4 (b2b2b2b2b2b2)", "cz-c40", "7777777777"):
        assert words in t03, words
    t01 = body[body.index('id="tables-T01"'):body.index('id="tables-T02"')]
    assert "Table T01</a>: in step" in t01 and "marks" not in t01 and "0.0 s (in step)" in t01
    assert f"version {FLOOR_VERSION}" in t01 and "3f3f3f3f3f3f" in t01 and "tda-2019" in t01
    assert "2 need attention" in body and 'href="/tables"' in body
    # The legend states the bars: the floor's own version and the registry it sends.
    assert f"The floor runs version <strong>{FLOOR_VERSION}</strong>" in body
    assert "the floor sends room registry version <strong>5</strong>" in body and "never sets the bar" in body


def test_the_json_carries_the_same_and_only_signed_in_users_see_either(served):
    web, _path = served
    for path in ("/tables", "/api/tables"):
        assert call(web, "GET", path)[0] in (302, 303, 401)
    cookie = sign_in(web, "vera")[0]
    status, _h, data = call(web, "GET", "/api/tables", cookie=cookie)
    assert status == 200
    assert data["room"] == {"version": FLOOR_VERSION, "usual_profile": "tda-2019", "registry": 5,
                            "floor_version": FLOOR_VERSION}
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
                assert page.locator("#tables-T03 .marks li").count() == 6
                shot = shoot(page, Path(shot_path(tmp_path, f"{size}-tables-{role}.png")))
                print(f"screenshot: {shot}")
                failures += serious_violations(page, f"{role} {size}")
    assert not failures, "\n".join(failures)
