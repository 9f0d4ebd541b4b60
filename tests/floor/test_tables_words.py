"""The tables page's marks, a reader's figures and a commissioning record in each of the
floor's languages (issue 45): the reader's words, decimal commas, the language's plurals (Czech
and Slovak have three forms), moments in the language's form with the zone; English as before."""

from __future__ import annotations

import time

import pytest

from dealerbox.floor.telling import commissioning as C
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.language import Language
from dealerbox.floor.telling.tables_step import room_tables
from dealerbox.floor.web.tables_pages import offset_words, rate_words
from tests.floor.commission_support import record

CLOCK = FloorClock("Europe/Prague")
#: 2 December 2026, 14:05:00 in Prague (CET).
NOON = 1796216700.0


def _row(table_id: str, **health) -> dict:
    health = {"version": "1.0.0", "profile": "tda-2019", "readers": {}, **health}
    return {"table_id": table_id, "online": 1, "status": {"online": True}, "seen": 1.0, "clock_offset": 0.1,
            "health": health}


def _marks(code: str, **health) -> list[str]:
    rows = [_row("A"), _row("B"), _row("C", **health)]
    checks, _room = room_tables(rows, floor_version="1.0.0", floor_registry=0, language=Language(code, CLOCK))
    return {c.table_id: c.marks for c in checks}["C"]


@pytest.mark.parametrize("code, lines", [
    ("cs", ("1 řádek deníku ještě není v sále", "3 řádky deníku ještě nejsou v sále",
            "5 řádků deníku ještě není v sále")),
    ("sk", ("1 riadok denníka ešte nie je v sále", "3 riadky denníka ešte nie sú v sále",
            "5 riadkov denníka ešte nie je v sále")),
    ("de", ("1 Journalzeile noch nicht im Saal", "3 Journalzeilen noch nicht im Saal",
            "5 Journalzeilen noch nicht im Saal")),
    ("en", ("1 journal line not yet on the floor", "3 journal lines not yet on the floor",
            "5 journal lines not yet on the floor")),
])
def test_a_backlog_is_counted_by_the_languages_plural_rules(code, lines):
    assert [_marks(code, backlog=n) for n in (1, 3, 5)] == [[line] for line in lines]


@pytest.mark.parametrize("code, fails, ahead", [
    ("cs", "čtečka shoe selhává u 2,5\u00a0% čtení", "o 2,5 s napřed"),
    ("sk", "čítačka shoe zlyháva pri 2,5\u00a0% čítaní", "o 2,5 s napred"),
    ("de", "Leser shoe versagt bei 2,5\u00a0% seiner Lesungen", "2,5 s vor"),
    ("en", "reader shoe fails 2.5% of its reads", "2.5 s ahead"),
])
def test_a_readers_failures_and_a_clocks_offset_have_the_languages_decimals(code, fails, ahead):
    marks = _marks(code, readers={"shoe": {"faulted": False, "error_rate": 0.025, "last_seen_s": 0.2}})
    assert marks == [fails]
    language = Language(code, CLOCK)
    assert offset_words(2.46, language) == ahead
    assert rate_words(0.1, language) == {"cs": "10,0\u00a0% čtení selhalo", "sk": "10,0\u00a0% čítaní zlyhalo",
                                         "de": "10,0\u00a0% der Lesungen fehlgeschlagen",
                                         "en": "10.0% of reads failed"}[code]


@pytest.mark.parametrize("code, title, never", [
    ("cs", "Uvedení stolu T07 do provozu, středa 2. 12. 2026 14:05 SEČ: nevyhovuje",
     "nikdy neuveden do provozu: do sálu nedorazil žádný záznam o uvedení do provozu"),
    ("sk", "Uvedenie stola T07 do prevádzky, streda 2. 12. 2026 14:05 SEČ: nevyhovuje",
     "nikdy neuvedený do prevádzky: do sály neprišiel žiadny záznam o uvedení do prevádzky"),
    ("de", "Inbetriebnahme von Tisch T07, Mittwoch 02.12.2026, 14:05 MEZ: nicht bestanden",
     "nie in Betrieb genommen: kein Protokoll einer Inbetriebnahme hat den Saal erreicht"),
    ("en", "Commissioning of table T07, Wed 02 Dec 2026, 14:05 CET: failed",
     "never commissioned: no commissioning record has reached the floor"),
])
def test_a_commissioning_record_is_titled_and_judged_in_the_readers_language(code, title, never):
    language = Language(code, CLOCK)
    run = record(NOON, shoe_fails=True)
    rec = {"table": "T07", "seq": 3, "at": NOON, "at_text": run["at"], "zone": run["zone"], "filed": NOON + 5,
           "technician": "tomáš", "version": run["version"], "config": run["config"], "ok": run["ok"],
           "devices": run["devices"], "clock_offset": None, "clock_offset_at": None}
    assert C.record_title(rec, CLOCK, language) == title
    assert C.commission_check(None, time.time(), C.CommissionLimit(), language).mark == never
    sections = C.record_sections(rec, CLOCK, language)
    # A figure the box names from the shared vocabulary is read in the reader's language; one the
    # floor does not know (a newer box's) is kept as the box said it, marked as its English.
    shoe = next(s for s in sections if s["id"] == "figures-shoe")
    assert shoe["rows"][0][0]["text"] == {"cs": "přečtené karty", "sk": "prečítané karty", "de": "gelesene Karten",
                                          "en": "cards read"}[code]
    assert shoe["rows"][0][0]["lang"] is None
    assert shoe["rows"][1][0]["text"] == "time to first read, slowest card"
    assert shoe["rows"][1][0]["lang"] == (None if code == "en" else "en")
    # Forty-five and a half days: one decimal in the language's form.
    assert C.age_words(45.5, language) == {"cs": "45,5 dne", "sk": "45,5 dňa", "de": "45,5 Tage",
                                           "en": "45.5 days"}[code]
