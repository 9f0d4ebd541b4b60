"""The audit trail as an auditor reads it (issue 41): over a range of days, every time with
its date and zone, each alert in the floor's words with its table and a link to its hand,
the shift presets and a range picker, and the same rows as CSV, PDF and JSON."""

from __future__ import annotations

import csv
import datetime as _dt
import html as html_module
import io
import re
import sqlite3
import time

import pytest

from pypdf import PdfReader

from dealerbox.floor.bridge_alerts import BLIND_KIND, bridge_alert_table
from dealerbox.floor.store import Store
from dealerbox.floor.telling import audit_files as AF
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.floor_words import FloorWords
from dealerbox.floor.telling.report import iso

from tests.floor.registry_support import deck_tags
from tests.floor.test_story import _filed, _played
from tests.floor.web.test_app import WebProcess, add_users, call, sign_in

ZONE = "Europe/Prague"
CLOCK = FloorClock(ZONE)
#: A date with the local time written as a person reads it: ``Thu 26 Nov 2026, 23:52:01 CET``.
FULL = re.compile(r"\w{3} \d{2} \w{3} \d{4}, \d{2}:\d{2}:\d{2} \S+")


def _local(day: _dt.date, hhmmss: str) -> float:
    return CLOCK.parse_local(f"{day.isoformat()}T{hhmmss}")


#: Two days of the trail: the evening of DAY and the morning after, and one clear long before.
DAY = CLOCK.at(time.time()).date() - _dt.timedelta(days=3)
NEXT = DAY + _dt.timedelta(days=1)
#: (table, kind, text, seq, raised, cleared at, by, note)
CLEARS = [
    ("T01", "floor", "FOUR_CARD_FLOP: the floor is needed at the table", 1, _local(DAY, "23:40:00"),
     _local(DAY, "23:52:01"), "sam", "flop burned and dealt again"),
    ("T02", "tamper", "line 7 changed after it was filed", None, _local(NEXT, "00:03:10"),
     _local(NEXT, "00:07:30"), "ada", "chain checked with the technician"),
    (bridge_alert_table("north"), BLIND_KIND, "the bridge to north is down", None, _local(NEXT, "08:55:00"),
     _local(NEXT, "09:15:45"), "sam", "north's link back"),
    ("T01", "offline", "T01 went offline", None, _local(DAY - _dt.timedelta(days=2), "12:00:00"),
     _local(DAY - _dt.timedelta(days=2), "12:30:00"), "sam", "long before the range"),
]
START, END = _local(DAY, "22:00:00"), _local(NEXT, "10:00:00")
EARLIER_NOTE = "the hand's own floor call"


def two_days_of_clears(path) -> None:
    """Alerts raised and cleared at the times of :data:`CLEARS`: the store stamps a clear with
    the moment it is made, so each clear's time is set afterwards to the one it stands for."""
    with Store(path) as store:
        # The hand filed before raised its own floor call: cleared long before the range, so
        # that the range's floor call at T01 is one of its own.
        for alert in store.alerts():
            store.clear_alert(alert["id"], "sam", EARLIER_NOTE)
            with sqlite3.connect(path) as db:
                db.execute("UPDATE audit SET at = ? WHERE alert_id = ?", (CLEARS[3][5] - 3600, alert["id"]))
            db.close()
        for table, kind, text, seq, raised, cleared, who, note in CLEARS:
            with store.lock:
                store.begin()
                alert = store.raise_alert(table, kind, text, seq, now=raised)
                store.commit()
            store.clear_alert(alert["id"], who, note)
            with sqlite3.connect(path) as db:
                db.execute("UPDATE alerts SET cleared_at = ? WHERE id = ?", (cleared, alert["id"]))
                db.execute("UPDATE audit SET at = ? WHERE alert_id = ?", (cleared, alert["id"]))
            db.close()


#: The room's registry changed after the clears' range (issue 40): a deck's life and a badge's.
REG_START, REG_END = _local(NEXT, "10:30:00"), _local(NEXT, "13:00:00")


def registry_changes(path) -> None:
    """A deck received, registered, limited, retired and destroyed, a badge registered and
    revoked, by the admin ada, between :data:`REG_START` and :data:`REG_END`."""
    at = iter(_local(NEXT, f"11:{m:02d}:00") for m in range(0, 60, 5))
    with Store(path) as store:
        store.receive_deck("B 2", "blue", 54, "ada", now=next(at))
        store.register_deck("B 2", "blue", deck_tags("B 2"), "ada", now=next(at))
        store.set_deck_limit("B 2", 8, 500, "ada", now=next(at))
        store.register_badge("08A1B2C3", "1042", "ada", now=next(at))
        store.issue_deck("B 2", "T01", "ada", now=next(at))
        store.issue_deck("B 2", "T02", "ada", "sam", now=next(at))
        store.retire_deck("B 2", "ada", "marked cards suspected", now=next(at))
        store.destroy_deck("B 2", "ada", "sam", now=next(at))
        store.revoke_badge("08A1B2C3", "ada", "left the house", now=next(at))


#: The changes of :func:`registry_changes` as the page words them, oldest first.
REGISTRY_WORDS = ["received deck B 2 (sealed, 54 cards, back blue)", "registered deck B 2 (54 tags, back blue)",
                  "set deck B 2's limit to 8 hours in play or 500 hands", "registered badge 08A1B2C3 to dealer 1042",
                  "issued deck B 2 to T01", "issued deck B 2 to T02, moved from T01, witnessed by sam",
                  "retired deck B 2: marked cards suspected", "destroyed deck B 2, witnessed by sam",
                  "revoked badge 08A1B2C3 of dealer 1042: left the house"]


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    directory = tmp_path_factory.mktemp("audit")
    path = directory / "floor.sqlite"
    _filed(path, "T01", _played(directory, "exposed_deal_then_flop_burned_anyway", "2077"))
    add_users(path, ("vera", "sam", "ada"))
    two_days_of_clears(path)
    registry_changes(path)
    with WebProcess(directory, path, time_zone=ZONE) as w:
        yield w


def _range() -> str:
    return f"start={CLOCK.input_value(START)}&end={CLOCK.input_value(END)}"


def _cells(html: str, table_id: str = "audit") -> list[list[str]]:
    body = html.split(f'<table id="{table_id}"', 1)[1].split("</table>", 1)[0]
    return [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", body.split("<tbody>", 1)[1])]


def test_the_page_shows_two_days_of_clears_each_time_with_its_date_and_zone(web):
    cookie = sign_in(web, "vera")[0]
    status, _h, html = call(web, "GET", f"/audit?{_range()}", cookie=cookie)
    assert status == 200
    # The title states the range with both dates and the zone.
    title = re.search(r'<h2 id="audit-title">(.*?)</h2>', html).group(1)
    assert title == f"Audit trail: {CLOCK.at(START):%a %d %b %Y, %H:%M %Z} to {CLOCK.at(END):%a %d %b %Y, %H:%M %Z}"
    rows = _cells(html)
    # Newest first; the clear long before the range is not there.
    assert [r[1] for r in rows] == ["sam", "ada", "sam"]
    assert [r[0] for r in rows] == [CLOCK.full(c[5]) for c in reversed(CLEARS[:3])]
    for row in rows:
        assert FULL.fullmatch(row[0]) and FULL.fullmatch(row[6]), row
    # Two dates: the evening's clear and the morning's.
    assert f"{DAY:%d %b %Y}, 23:52:01" in rows[2][0] and f"{NEXT:%d %b %Y}, 00:07:30" in rows[1][0]
    floor_call, tamper, blind = rows[2], rows[1], rows[0]
    # The floor's words, never the raw text.
    assert floor_call[3] == "Floor call at T01: four-card flop"
    assert "FOUR_CARD_FLOP" not in html and "floor is needed" not in html
    assert floor_call[4:6] == ["T01", "the hand"] and floor_call[7] == "flop burned and dealt again"
    assert '<a href="/hands/T01/1">the hand</a>' in html and '<a href="/tables/T01">T01</a>' in html
    assert tamper[3] == "Journal tampered with at T02: line 7 changed after it was filed"
    assert tamper[5] == "no hand"
    # A blind bridge names its property, and has no table page and no hand.
    assert blind[3].startswith("Property blind at property north") and blind[4:6] == ["property north", "no hand"]
    assert floor_call[2].startswith("cleared alert ")
    # The range picker and the presets, as the report's; the files for exactly this range.
    assert 'id="range-start"' in html and 'href="?preset=last_shift"' in html
    assert f"/audit.csv?from={START!r}&amp;to={END!r}" in html and "/audit.pdf?" in html


def test_the_default_range_and_the_presets_leave_the_old_clears_out(web):
    cookie = sign_in(web, "vera")[0]
    status, _h, html = call(web, "GET", "/audit", cookie=cookie)
    assert status == 200 and "Nobody cleared an alert in this range." in html
    for preset in ("this_shift", "last_shift", "today", "yesterday"):
        status, _h, html = call(web, "GET", f"/audit?preset={preset}", cookie=cookie)
        assert status == 200 and 'aria-current="page"' in html, preset
    status, _h, answer = call(web, "GET", "/audit?preset=last_week", cookie=cookie)
    assert status == 400 and "preset" in str(answer)
    status, _h, answer = call(web, "GET", f"/api/audit?from={END}&to={START}", cookie=cookie)
    assert status == 400 and "must be before" in answer["error"]


def test_the_api_gives_the_range_it_was_asked_for(web):
    cookie = sign_in(web, "vera")[0]
    status, _h, answer = call(web, "GET", f"/api/audit?from={iso(START)}&to={iso(END)}", cookie=cookie)
    assert status == 200 and (answer["from"], answer["to"]) == (START, END)
    assert [(a["who"], a["detail"]) for a in answer["audit"]] == [(c[6], c[7]) for c in CLEARS[:3]]
    assert {a["id"] for a in answer["alerts"]} == {a["alert"] for a in answer["audit"]}
    status, _h, wide = call(web, "GET", f"/api/audit?from={START - 4 * 86400}&to={END}", cookie=cookie)
    assert [a["detail"] for a in wide["audit"]] == [EARLIER_NOTE, "long before the range",
                                                    *(c[7] for c in CLEARS[:3])]


def test_the_csv_and_the_pdf_hold_the_same_rows(web):
    cookie = sign_in(web, "vera")[0]
    query = f"from={START!r}&to={END!r}"
    status, headers, text = call(web, "GET", f"/audit.csv?{query}", cookie=cookie)
    assert status == 200 and headers["Content-Type"].startswith("text/csv")
    name = f"audit-trail-{CLOCK.at(START):%Y-%m-%d-%H%M}-to-{CLOCK.at(END):%Y-%m-%d-%H%M}"
    assert headers["Content-Disposition"] == f'attachment; filename="{name}.csv"'
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["note"] for r in rows] == [c[7] for c in CLEARS[:3]]
    first = rows[0]
    assert first["at"] == iso(CLEARS[0][5]) and first["at_local"] == CLOCK.full(CLEARS[0][5])
    assert (first["who"], first["action"], first["table"], first["kind"]) == ("sam", "clear", "T01", "floor")
    assert first["what"] == "Floor call at T01: four-card flop" and first["hand"] == "/hands/T01/1"
    assert rows[2]["hand"] == "" and rows[2]["table"] == "bridge-north"
    status, headers, body = call(web, "GET", f"/audit.pdf?{query}", cookie=cookie)
    assert status == 200 and headers["Content-Type"] == "application/pdf"
    assert headers["Content-Disposition"] == f'attachment; filename="{name}.pdf"'
    assert isinstance(body, str) and body.startswith("%PDF-")


def test_the_pdf_says_what_the_page_says_with_its_dates_zones_and_links_to_the_hands():
    alerts = [{"id": i, "table": t, "kind": k, "text": x, "seq": q, "raised": r, "cleared_by": who,
               "cleared_at": at, "note": n, "count": 1, "last_seq": q, "last_text": x, "last_raised": r}
              for i, (t, k, x, q, r, at, who, n) in enumerate(CLEARS, 1)]
    audit = [{"at": a["cleared_at"], "who": a["cleared_by"], "action": "clear", "alert": a["id"],
              "detail": a["note"]} for a in alerts]
    trail = AF.audit_trail(audit, alerts, START, END)
    pdf = AF.audit_pdf(trail, CLOCK, "https://floor.example", FloorWords("en", CLOCK).first_headline)
    reader = PdfReader(io.BytesIO(pdf))
    text = " ".join(page.extract_text() for page in reader.pages).replace("\n", " ")
    assert AF.audit_title(trail, CLOCK) in text
    for c in CLEARS[:3]:
        assert CLOCK.full(c[5]) in text and c[7] in text
    assert "long before the range" not in text
    assert "Floor call at T01: four-card flop" in text and "property north" in text
    links = {a.get_object()["/A"]["/URI"] for page in reader.pages for a in page.get("/Annots", [])}
    assert "https://floor.example/hands/T01/1" in links and "https://floor.example/tables/T02" in links


def _reg_range() -> str:
    return f"start={CLOCK.input_value(REG_START)}&end={CLOCK.input_value(REG_END)}"


def test_the_registrys_changes_read_as_an_auditor_reads_them_in_a_section_of_their_own(web):
    """Issue 40: a deck received, retired and destroyed is no "deck_receive alert None" under
    the alerts cleared, but its own row in words, the deck linked to its page."""
    cookie = sign_in(web, "vera")[0]
    status, _h, html = call(web, "GET", f"/audit?{_reg_range()}", cookie=cookie)
    assert status == 200
    assert "Nobody cleared an alert in this range." in html and "alert None" not in html
    assert "Decks and badges changed (9)" in html
    rows = _cells(html, "registry-changes")
    assert [html_module.unescape(r[2]) for r in rows] == REGISTRY_WORDS[::-1]   # newest first
    assert {r[1] for r in rows} == {"ada"} and all(FULL.fullmatch(r[0]) for r in rows)
    assert [r[3] for r in rows][-1] == "deck B 2" and rows[0][3] == "badge 08A1B2C3"
    assert '<a href="/registry/decks/B%202">deck B 2</a>' in html
    # The clears' range shows none of them, and says so.
    status, _h, html = call(web, "GET", f"/audit?{_range()}", cookie=cookie)
    assert "Nobody changed the room's decks or badges in this range." in html_module.unescape(html)
    assert "deck_receive" not in html


def test_the_registrys_changes_are_in_the_csv_and_the_pdf_too(web):
    cookie = sign_in(web, "vera")[0]
    query = f"from={REG_START!r}&to={REG_END!r}"
    status, _h, text = call(web, "GET", f"/audit.csv?{query}", cookie=cookie)
    assert status == 200
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["what"] for r in rows] == REGISTRY_WORDS   # oldest first, as the clears are
    assert [r["action"] for r in rows][:2] == ["deck_receive", "deck_register"]
    assert {r["alert"] for r in rows} == {""} and [r["deck"] for r in rows][:3] == ["B 2"] * 3
    assert rows[3]["badge"] == "08A1B2C3" and rows[6]["note"] == "deck B 2 retired: marked cards suspected"
    status, _h, body = call(web, "GET", f"/audit.pdf?{query}", cookie=cookie)
    assert status == 200 and body.startswith("%PDF-")
    with Store(web.directory / "floor.sqlite") as store:
        trail = AF.audit_trail(store.audit(), store.alerts(open_only=False), REG_START, REG_END,
                               store.registry_steps(start=REG_START, end=REG_END))
    pdf = AF.audit_pdf(trail, CLOCK, "https://floor.example")
    reader = PdfReader(io.BytesIO(pdf))
    text = " ".join(page.extract_text() for page in reader.pages).replace("\n", " ")
    assert "Decks and badges changed (9)" in text and "retired deck B 2: marked cards suspected" in text
    links = {a.get_object()["/A"]["/URI"] for page in reader.pages for a in page.get("/Annots", [])}
    assert "https://floor.example/registry/decks/B%202" in links


def test_a_change_without_its_step_still_says_what_the_audit_row_says():
    row = {"at": 5.0, "who": "ada", "action": "deck_retire", "alert": None, "detail": "deck X retired: worn"}
    trail = AF.audit_trail([row], [], 0.0, 10.0)
    assert trail["registry"][0]["words"] == "deck retire: deck X retired: worn"
    assert AF.audit_sections(trail, CLOCK)[0]["rows"] == []   # not an alert cleared
