"""The tables page, a table's page, a dealer's page and a table's commissioning record as a
Czech pit boss reads them (issue 45), in Debian's chromium driven by Playwright at desktop and
tablet sizes: a supervisor whose own language is Czech (the room's is English) opens each. Its
text holds none of the English catalog's page words, its numbers have decimal commas (never a
decimal dot), its moments the Czech form with the zone (``2. 12. 2026 14:05 SEČ``), no English
weekday, month or zone, ``<html lang="cs">``, and axe-core finds no serious or critical
violation. The commissioning record's PDF in Czech carries its diacritics (read back with pypdf).
The screenshots are kept ($FLOOR_SCREENSHOTS, else tmp)."""

from __future__ import annotations

import io
import re
import time

import pytest
from pypdf import PdfReader

from dealerbox import __version__ as FLOOR_VERSION
from dealerbox.floor.store import Store
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.service.health import reader_errors

from tests.floor.registry_support import TableJournal
from tests.floor.test_figures import T0, filled_store, room  # noqa: F401 (the hands the figures' tests deal)
from tests.floor.web.browser import SIZES, chromium, serious_violations, shot_path, signed_in_page
from tests.floor.web.test_app import WebProcess, add_users, connection, sign_in
from tests.floor.web.test_floor_map_czech import CZECH_MOMENT, english_in, english_page_words
from tests.floor.web.test_tables_page import FINGERPRINT, READERS_OK, REGISTRY, commissioned, file_table

ZONE = "Europe/Prague"
DAY = 86400.0
START, END = T0 - 600.0, T0 + 11 * 3600.0
#: A decimal dot in a number a person reads (a version's ``1.4.0`` is not one: it has two).
DECIMAL_DOT = re.compile(r"(?<![\d.])\d+\.\d+(?![\d.])")
ENGLISH_MOMENT = re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Oct|Nov|Dec|CET|CEST)\b")


@pytest.fixture(scope="module")
def web(tmp_path_factory, room):  # noqa: F811
    """The figures' room (T01 to T03 dealt, dealer 1042 Jana Nováková) with the tables'
    health: T07 in step, its last commissioning two days ago failing the shoe reader; T08 out
    of step in every way (an older version, another profile and registry, its clock 2.5 s
    ahead, its shoe reader down, never commissioned). Sam, a supervisor, reads Czech."""
    directory = tmp_path_factory.mktemp("pit-czech")
    path = filled_store(directory / "floor.sqlite", room)
    running = {"version": FLOOR_VERSION, "config_fingerprint": FINGERPRINT, "profile": "tda-2019",
               "registry": REGISTRY}
    now = time.time()
    with Store(path) as store:
        for i in range(REGISTRY["version"]):
            store.register_badge(f"08A1B2{i:02X}", f"10{i:02d}", "ada")
        file_table(store, directory, "T07", **running)
        file_table(store, directory, "T08", clock_ahead_s=2.5,
                   readers={**READERS_OK, "shoe": {"last_seen_s": 40.0, "faulted": True,
                                                   **reader_errors({"polls": 900, "faults": 100})}},
                   version="0.0.9", config_fingerprint="77" * 32, profile="cz-c40",
                   registry={"version": 4, "fingerprint": "b2" * 32})
        journal = TableJournal("T07")
        commissioned(store, journal, now - 50 * DAY, technician="jana")
        commissioned(store, journal, now - 2 * DAY, technician="tomáš", shoe_fails=True, box=True)
        store.set_dealer_name("1042", "Jana Nováková", START)
    add_users(path)
    with Store(path) as store:
        store.set_user_language("sam", "cs", 1.0)
    with WebProcess(directory, path, time_zone=ZONE) as w:
        yield w, path


def _pages() -> dict[str, str]:
    clock = FloorClock(ZONE)
    local = f"start={clock.input_value(START)}&end={clock.input_value(END)}"
    return {"tables": "/tables", "table": f"/tables/T01?{local}", "dealer": f"/dealers/1042?{local}",
            "commissioned-table": "/tables/T07?preset=today", "commissioning": "/tables/T07/commissioning",
            "never-commissioned": "/tables/T08/commissioning"}


def _czech_text_faults(what: str, text: str, words: list[str]) -> list[str]:
    faults = [f"{what}: English page words {found}" for found in [english_in(text, words)] if found]
    dots = DECIMAL_DOT.findall(text)
    if dots:
        faults.append(f"{what}: decimal dots {dots[:5]}")
    english = ENGLISH_MOMENT.findall(text)
    if english:
        faults.append(f"{what}: English dates or zones {english[:5]}")
    return faults


@pytest.mark.parametrize("size", list(SIZES))
def test_a_czech_pit_boss_reads_the_tables_and_the_pit_pages_in_czech(web, size, tmp_path):
    served, _path = web
    cookie = sign_in(served, "sam")[0]
    words = english_page_words()
    assert len(words) > 200
    faults, seen = [], {}
    with chromium() as browser:
        with signed_in_page(browser, size, served.url, cookie) as page:
            for what, path in _pages().items():
                response = page.goto(served.url.rstrip("/") + path, wait_until="load")
                assert response.status == (404 if what == "never-commissioned" else 200), (what, response.status)
                assert page.locator("html").get_attribute("lang") == "cs", what
                page.screenshot(path=shot_path(tmp_path, f"cs-{what}-{size}.png"), full_page=True)
                faults += serious_violations(page, f"Czech {what} {size}")
                # The box's own words in a commissioning record (its figures' names, bounds and
                # advice, marked lang="en" as the box's tool wrote them) are not the page's.
                page.evaluate("""() => document.querySelectorAll('main [lang="en"]')
                                     .forEach(e => { e.textContent = ""; })""")
                text = page.locator("body").inner_text()
                # The charts' SVG text (titles, axes, labels, legends) is read too.
                text += "\n" + "\n".join(page.locator("svg text").all_text_contents())
                seen[what] = text
                faults += _czech_text_faults(what, text, words)
    assert not faults, "\n".join(faults)
    # What a Czech pit boss reads, in the room's words and forms.
    tables = seen["tables"]
    assert "Stoly: software a stav" in tables and "5 stolů; 5 vyžaduje pozornost" in tables, tables
    assert re.search(r"jeho hodiny jdou o 2,5 s napřed oproti hodinám sálu", tables), tables
    assert "čtečka shoe nefunguje" in tables and "nikdy neuveden do provozu" in tables
    assert re.search(r"jeho poslední uvedení do provozu neprošlo: Čtečka shoe", tables)
    assert re.search(r"Stav k " + CZECH_MOMENT.pattern, tables), tables
    table = seen["table"]
    assert "Stůl T01" in table and "her za hodinu" in table and "celý sál" in table
    assert re.search(r"\d+,\d", table) and re.search(r"hodina \(SEL?Č\)", table), table
    assert "Hry za hodinu, stůl T01" in table
    dealer = seen["dealer"]
    assert "Krupiér 1042 (Jana Nováková)" in dealer and "stoly, u kterých rozdával(a)" in dealer
    assert "Uvedení do provozu:" in seen["commissioned-table"]
    record = seen["commissioning"]
    assert re.search(r"Uvedení stolu T07 do provozu, (pondělí|úterý|středa|čtvrtek|pátek|sobota|neděle) " + CZECH_MOMENT.pattern
                     + r": nevyhovuje", record), record
    assert "Do provozu uvedl tomáš" in record and "Čtečka shoe: nevyhovuje" in record
    # The box's figures in Czech: names, numbers and bounds (what it does not know was blanked above).
    for said in ("zákmity tlačítka ROUND DONE", "FLOOR podrženo", "svítí jen červená LED", "přečtené karty",
                 "1\u00a0230 karet", "=\u00a01\u00a0234 karet", "≤\u00a025 ms", "vyžaduje senzor ústí boxu"):
        assert said in record, (said, record)
    assert "bounce" not in record and "FLOOR held" not in record and "antenna temperature" not in record
    assert re.search(r"podle zápisu hodin stolu\s+(po|út|st|čt|pá|so|ne) " + CZECH_MOMENT.pattern.split(" SE")[0]
                     + r":\d\d UTC\+0[12]:00 \(Europe/Prague\)", record), record
    assert "do sálu nedorazilo žádné uvedení stolu T08 do provozu" in seen["never-commissioned"]


def test_the_commissioning_pdf_in_czech_carries_its_diacritics_and_the_csv_stays_english(web):
    served, path = web
    cookie = sign_in(served, "sam")[0]
    with Store(path) as store:
        last = store.commissionings("T07")[0]
    status, headers, pdf = _get_bytes(served, cookie, last["seq"], "pdf")
    assert status == 200 and headers["Content-Type"] == "application/pdf"
    reader = PdfReader(io.BytesIO(pdf))
    text = "\n".join(p.extract_text() for p in reader.pages)
    # Drawn in an embedded Unicode font (DejaVu Sans), never a core font without Czech letters.
    fonts = {str(f["/BaseFont"]) for p in reader.pages for f in p["/Resources"]["/Font"].values()}
    assert fonts and all("DejaVuSans" in f for f in fonts), fonts
    for words in ("Uvedení stolu T07 do provozu", "nevyhovuje: Čtečka shoe", "Zařízení v pořadí, v jakém byla zkontrolována",
                  "hodiny stolu, jak je sál změřil před uložením běhu", "technik", "tomáš", "Tlačítka",
                  "strana 1/", "zákmity tlačítka ROUND DONE", "přečtené karty", "vyžaduje senzor ústí boxu"):
        assert words in text, (words, text[:2000])
    assert re.search(CZECH_MOMENT, text) and not ENGLISH_MOMENT.search(text), text[:2000]
    assert not re.search(r"\b(passed|failed|Devices|technician)\b", text), text[:2000]
    # The CSV is for machines: its columns and values stay as they were, whoever asks.
    status, headers, csv_text = _get_bytes(served, cookie, last["seq"], "csv")
    assert status == 200 and csv_text.decode().startswith("table,seq,run_end_utc,")
    assert ",shoe,fail," in csv_text.decode() and ",ROUND DONE bounce,3.2,ms,<= 25 ms,true" in csv_text.decode()
    assert "zákmity" not in csv_text.decode()


def _get_bytes(served, cookie: str, seq: int, ext: str):
    """``(status, headers, body as bytes)`` of T07's run at *seq* as a file (``pdf``, ``csv``)."""
    conn = connection(served)
    try:
        conn.request("GET", f"/tables/T07/commissioning/{seq}/record.{ext}", headers={"Cookie": cookie})
        response = conn.getresponse()
        return response.status, response.headers, response.read()
    finally:
        conn.close()
