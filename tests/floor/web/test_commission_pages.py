"""The tables' commissioning in the browser (issue 48): the tables page marks a table never
commissioned, one whose last run failed and one whose last run is older than the house's
limit (``[commission] max_age_days``), and leaves a table commissioned within it unmarked;
a table's commissioning page shows the run as a regulator reads it, lists the table's earlier
runs, and gives it as CSV and as a PDF (read back with pypdf). Served by the real web view,
in Debian's chromium with axe-core at desktop and tablet sizes, with screenshots."""

from __future__ import annotations

import csv
import io
import time
from datetime import datetime
from pathlib import Path

import pytest
from pypdf import PdfReader

from dealerbox.floor.store import Store
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.commissioning import CSV_HEADER
from tests.floor.commission_support import CONFIG
from tests.floor.registry_support import TableJournal
from tests.floor.web.browser import SIZES, chromium, serious_violations, shoot, shot_path, signed_in_page
from tests.floor.web.test_app import WebProcess, add_users, call, sign_in
from tests.floor.web.test_tables_page import FINGERPRINT, REGISTRY, commissioned, file_table
from dealerbox import __version__ as FLOOR_VERSION

DAY = 86400.0
#: The house's limit in these tests (floor.toml's [commission]).
MAX_AGE_DAYS = 30
ZONE = "Europe/Prague"


def as_written(record: dict) -> str:
    """The run's end as the table's clock wrote it, as an English reader reads it: its own offset and zone."""
    moment = datetime.fromisoformat(record["at_text"])
    return f"{moment:%a %d %b %Y, %H:%M:%S} UTC{moment.isoformat()[-6:]} ({record['zone']})"


def room(directory) -> Path:
    """Four tables in step with the room otherwise: T01 commissioned 2 days ago; T02 never;
    T03 commissioned 45 days ago (past the 30-day limit); T04 passed 60 days ago, failed its
    shoe reader yesterday."""
    path = directory / "floor.sqlite"
    running = {"version": FLOOR_VERSION, "config_fingerprint": FINGERPRINT, "profile": "tda-2019",
               "registry": REGISTRY}
    now = time.time()
    with Store(path) as store:
        for i in range(REGISTRY["version"]):
            store.register_badge(f"08A1B2{i:02X}", f"10{i:02d}", "ada")
        for table in ("T01", "T02", "T03", "T04"):
            file_table(store, directory, table, **running)
        journals = {t: TableJournal(t) for t in ("T01", "T03", "T04")}
        commissioned(store, journals["T01"], now - 2 * DAY, technician="tomas")
        commissioned(store, journals["T03"], now - 45 * DAY, technician="jana")
        commissioned(store, journals["T04"], now - 60 * DAY, technician="jana")
        commissioned(store, journals["T04"], now - DAY, technician="tomas", shoe_fails=True)
        assert store.alerts() == []
    add_users(path)
    return path


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    directory = tmp_path_factory.mktemp("commissioning")
    path = room(directory)
    web = WebProcess(directory, path, time_zone=ZONE)
    web.config.write_text(web.config.read_text() + f"[commission]\nmax_age_days = {MAX_AGE_DAYS}\n")
    with web:
        yield web, path


def test_the_tables_page_marks_never_failed_and_outdated_and_not_the_table_commissioned_in_time(served):
    web, _path = served
    cookie = sign_in(web, "vera")[0]
    status, _h, body = call(web, "GET", "/tables", cookie=cookie)
    assert status == 200, body
    cards = {t: body[body.index(f'id="tables-{t}"'):] for t in ("T01", "T02", "T03", "T04")}
    for t in cards:
        cards[t] = cards[t][:cards[t].index("</article>")]
    assert "Table T01</a>: in step" in cards["T01"] and 'class="marks"' not in cards["T01"]   # no false alarm
    assert 'class="commission passed"' in cards["T01"] and "by tomas" in cards["T01"]
    assert "never commissioned: no commissioning record has reached the floor" in cards["T02"]
    assert "last commissioned 45.0 days ago, longer than the house&#39;s limit of 30 days" in cards["T03"]
    assert "older than the house's 30 days" in cards["T03"] and "45.0 days ago" in cards["T03"]
    assert "by jana" in cards["T03"]
    assert "its last commissioning failed: Shoe reader" in cards["T04"] and "by tomas" in cards["T04"]
    # The failed table first, then the never and the outdated (by id), the one in step last.
    assert sorted(cards, key=lambda t: body.index(f'id="tables-{t}"')) == ["T04", "T02", "T03", "T01"]
    assert "more than 30 days old" in body and "3 need attention" in body
    zone = FloorClock(ZONE).at(time.time()).strftime("%Z")
    assert f" {zone} (" in cards["T01"]                          # local time with the zone
    status, _h, data = call(web, "GET", "/api/tables", cookie=cookie)
    states = {t["table_id"]: t["commissioning"]["state"] for t in data["tables"]}
    assert states == {"T01": "passed", "T02": "never", "T03": "outdated", "T04": "failed"}


def test_the_record_page_csv_and_pdf_say_what_a_regulator_needs(served):
    web, path = served
    cookie = sign_in(web, "vera")[0]
    with Store(path) as store:
        last, earlier = store.commissionings("T04")
    status, _h, page = call(web, "GET", "/tables/T04/commissioning", cookie=cookie)
    assert status == 200
    clock = FloorClock(ZONE)
    for words in (f"Commissioning of table T04, {clock.at(last['at']):%a %d %b %Y, %H:%M %Z}: failed",
                  "Failed: Shoe reader", "Commissioned by <strong>tomas</strong>", CONFIG, as_written(last),
                  "failed: Shoe reader", "dealerbox 1.4.0",
                  "Shoe reader: failed", "212 ms", "at most 150 ms", "replace those two cards",
                  "Mouth sensor: skipped", "No mouth sensor in the config", "not measured",
                  f'href="/tables/T04/commissioning/{earlier["seq"]}"', "Every commissioning of table T04 (2)"):
        assert words in page, words
    status, _h, old = call(web, "GET", f"/tables/T04/commissioning/{earlier['seq']}", cookie=cookie)
    assert status == 200 and "Passed: no device failed" in old and "This is an earlier run" in old
    status, headers, text = call(web, "GET", f"/tables/T04/commissioning/{last['seq']}/record.csv", cookie=cookie)
    assert status == 200 and headers["Content-Type"].startswith("text/csv")
    assert headers["Content-Disposition"] == (f'attachment; filename="commissioning-T04-'
                                              f'{clock.at(last["at"]):%Y-%m-%d-%H%M}.csv"')
    rows = list(csv.DictReader(io.StringIO(text)))
    # The CSV keeps the table's raw ISO text for machines; the page shows it as people read it.
    assert tuple(rows[0]) == CSV_HEADER and {r["run_end_local"] for r in rows} == {last["at_text"]}
    assert last["at_text"] not in page
    assert {r["device"] for r in rows} == {"lcd", "leds", "buttons", "mouth", "shoe", "board", "clock", "state"}
    # Not found, and not a table id: said in words, never a 500.
    assert call(web, "GET", "/tables/T02/commissioning", cookie=cookie)[0] == 404
    status, _h, missing = call(web, "GET", "/tables/T02/commissioning", cookie=cookie)
    assert "no commissioning of table T02 has reached the floor" in missing
    assert call(web, "GET", "/tables/T04/commissioning/999", cookie=cookie)[0] == 404
    assert call(web, "GET", "/tables/T04/commissioning/999/record.pdf", cookie=cookie)[0] == 404
    assert call(web, "GET", "/tables/%20x/commissioning", cookie=cookie)[0] == 400
    for p in ("/tables/T04/commissioning", f"/tables/T04/commissioning/{last['seq']}/record.csv",
              f"/tables/T04/commissioning/{last['seq']}/record.pdf"):
        assert call(web, "GET", p)[0] in (302, 303, 401), p


@pytest.mark.parametrize("role", ["vera", "ada"])
def test_the_pages_have_no_serious_or_critical_violation_at_desktop_and_tablet_sizes(served, role, tmp_path):
    web, path = served
    with Store(path) as store:
        last = store.commissionings("T04")[0]
    cookie = sign_in(web, role)[0]
    base = web.url.rstrip("/")
    failures, pdf = [], None
    with chromium() as browser:
        for size in SIZES:
            with signed_in_page(browser, size, web.url, cookie) as page:
                page.goto(base + "/tables", wait_until="load")
                assert "never commissioned" in page.inner_text("#tables-T02-commission")
                assert "older than the house's 30 days" in page.inner_text("#tables-T03-commission")
                assert "failed" in page.inner_text("#tables-T04-commission")
                assert "passed" in page.inner_text("#tables-T01-commission")
                print(f"screenshot: {shoot(page, Path(shot_path(tmp_path, f'{size}-commission-tables-{role}.png')))}")
                failures += serious_violations(page, f"{role} {size} tables")
                page.click("#tables-T04-commission a")
                page.wait_for_url(base + "/tables/T04/commissioning")
                assert "Failed: Shoe reader" in page.inner_text("#commission-verdict")
                assert "no" in page.inner_text("#figures-shoe")
                print(f"screenshot: {shoot(page, Path(shot_path(tmp_path, f'{size}-commission-record-{role}.png')))}")
                failures += serious_violations(page, f"{role} {size} record")
                if pdf is None:
                    with page.expect_download() as got:
                        page.click("#commission-files a[href$='record.pdf']")
                    pdf = Path(got.value.path()).read_bytes()
    assert not failures, "\n".join(failures)
    pages = PdfReader(io.BytesIO(pdf)).pages
    text = " ".join(p.extract_text() for p in pages)
    assert CONFIG in "".join(text.split())                       # the whole SHA-256, wrapped in its cell
    for words in ("Commissioning of table T04", "failed", "tomas", as_written(last), "Shoe reader",
                  "time to first read, slowest card", "212 ms", "at most 150 ms", "replace those two",
                  "Mouth sensor: skipped", "State directory: passed", "page 1/"):
        assert words in text, words


def test_a_tables_own_page_says_its_last_commissioning_in_one_line_linked_to_the_record(served, tmp_path):
    """The page a supervisor opens for a table (``/tables/{id}``) says when it was last
    commissioned, by whom, passed or failed (or never, or past the house's limit), and links the
    record; in the browser at both sizes with axe, the link followed to the record."""
    web, _path = served
    cookie = sign_in(web, "sam")[0]
    lines = {}
    for table in ("T01", "T02", "T03", "T04"):
        status, _h, body = call(web, "GET", f"/tables/{table}", cookie=cookie)
        assert status == 200, body
        line = body[body.index(f'id="tables-{table}-commission"'):]
        lines[table] = line[:line.index("</p>")]
    assert "<strong>passed</strong>" in lines["T01"] and "by tomas" in lines["T01"]
    assert 'href="/tables/T01/commissioning"' in lines["T01"]
    assert "never commissioned" in lines["T02"] and "href=" not in lines["T02"]
    assert "older than the house's 30 days" in lines["T03"] and "by jana" in lines["T03"]
    assert "<strong>failed</strong>" in lines["T04"] and "by tomas" in lines["T04"]
    zone = FloorClock(ZONE).at(time.time()).strftime("%Z")
    assert f" {zone} (" in lines["T01"]                          # local time with the zone
    # A dealer's page has no such line.
    assert 'class="commission' not in call(web, "GET", "/dealers/D1", cookie=cookie)[2]
    base = web.url.rstrip("/")
    failures = []
    with chromium() as browser:
        for size in SIZES:
            with signed_in_page(browser, size, web.url, cookie) as page:
                page.goto(base + "/tables/T04", wait_until="load")
                assert "failed" in page.inner_text("#tables-T04-commission")
                print(f"screenshot: {shoot(page, Path(shot_path(tmp_path, f'{size}-commission-pit-T04.png')))}")
                failures += serious_violations(page, f"sam {size} table T04's page")
                page.get_by_role("link", name="The record of table T04's commissioning").click()
                page.wait_for_url(base + "/tables/T04/commissioning")
                assert "Failed: Shoe reader" in page.inner_text("#commission-verdict")
    assert not failures, "\n".join(failures)
