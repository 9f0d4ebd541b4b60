"""The floor map as a Czech pit boss reads it, in Debian's chromium driven by Playwright, at
desktop and tablet sizes: a supervisor whose own language is Czech (the room's is English)
signs in and opens the floor map. Its text holds none of the English catalog's page words
(those the Czech catalog words differently), its numbers have decimal commas, its moments the
Czech form with the zone (``2. 12. 2026 14:05 SEČ``), ``<html lang="cs">``, and axe-core finds
no serious or critical violation. The screenshots are kept ($FLOOR_SCREENSHOTS, else tmp)."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from dealerbox.floor.store import Store

from tests.floor.web.browser import SIZES, serious_violations, shot_path
from tests.floor.web.browser import chromium as launched_chromium
from tests.floor.web.test_floor_map import open_floor
from tests.floor.web.test_floor_map import room  # noqa: F401 (the room the floor map's tests deal)

LOCALE = Path(__file__).resolve().parents[3] / "dealerbox" / "floor" / "locale"
PLACEHOLDER = re.compile(r"%\(\w+\)s")
CZECH_MOMENT = re.compile(r"\d{1,2}\. \d{1,2}\. \d{4} \d{1,2}:\d\d(:\d\d)? SEL?Č")


@functools.cache
def english_page_words(lang: str = "cs") -> list[str]:
    """The English catalog's words that *lang* words differently: each message's literal
    parts (between its placeholders) that hold a word and that no translation uses itself
    (German calls the floor person "Floor"; Czech writes "by" and "to")."""
    with open(LOCALE / lang / "LC_MESSAGES" / "floor.po", "rb") as po:
        catalog = read_po(po, locale=lang)
    words = set()
    translated = " ".join(s for m in catalog if m.id
                          for s in (m.string if isinstance(m.string, tuple) else (m.string,)))
    for m in catalog:
        if not m.id:
            continue
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        for english in ids:
            if english in strings:
                continue  # the same in Czech ("Misdeal", "%(verdict)s: %(irregularity)s")
            for part in PLACEHOLDER.split(english):
                # A part the translations use themselves as a word of their language ("(limit"
                # in Czech: "(limit provozovny") is no English left on the page.
                if re.search(r"[A-Za-z]{2}", part) and not english_in(translated, [part]):
                    words.add(part)
    return sorted(words)


@pytest.fixture(scope="module")
def czech_room(room):  # noqa: F811
    with Store(room.store_path) as store:
        store.set_user_language("sam", "cs", 1.0)
    return room


@pytest.fixture
def chromium():
    with launched_chromium() as browser:
        yield browser


def english_in(text: str, words: list[str]) -> list[str]:
    found = []
    for word in words:
        stripped = word.strip()
        if len(stripped) < 2:
            continue
        # A whole word or phrase, as written (a Czech "floormana" is not the English "Floor").
        if re.search(r"(?<![\w])" + re.escape(stripped) + r"(?![\w])", text):
            found.append(stripped)
    return found


@pytest.mark.parametrize("size", list(SIZES))
def test_a_czech_pit_boss_reads_the_floor_map_in_czech(czech_room, chromium, size, tmp_path):
    context, page = open_floor(chromium, czech_room, "sam", size, live="živě")
    try:
        assert page.locator("html").get_attribute("lang") == "cs"
        text = page.locator("body").inner_text()
        words = english_page_words()
        assert len(words) > 50
        leftover = english_in(text, words)
        assert not leftover, f"English page words on the Czech floor map: {leftover}"
        # The header, the pits, the tiles and the alerts in Czech.
        assert "Zpráva o směně" in text and "Auditní záznam" in text and "Odhlásit" in text
        assert page.locator("#who").inner_text() == "sam (inspektor)"
        assert page.locator("section.pit-group h2").all_inner_texts() == ["Pit 1", "Pit 2", "Neumístěné stoly"]
        assert "Volání floormana: flop o čtyřech kartách" in page.locator("#table-T02").inner_text()
        assert "Oprava: karta lícem nahoru v balíčku" in page.locator("#table-T03").inner_text()
        assert "Žádný krupiér přihlášen" in page.locator("#table-T06").inner_text()
        headlines = page.locator(".alert .text").all_inner_texts()
        assert headlines == ["Volání floormana u T02: flop o čtyřech kartách",
                             "Mimo spojení u T05: stůl ztratil spojení se sálem",
                             "Špatné hodiny u T01: hodiny stolu jdou špatně"], headlines
        # Decimal commas, never a decimal dot in a rate.
        rates = re.findall(r"(\d+[.,]\d+) her/h", text)
        assert rates and all(re.fullmatch(r"\d+,\d", r) for r in rates), rates
        # Czech moments with the zone: the quiet and the offline tiles, the alerts in full.
        assert re.search(r"Ticho od " + CZECH_MOMENT.pattern, page.locator("#table-T04").inner_text())
        assert re.search(r"Mimo spojení, naposledy ozván " + CZECH_MOMENT.pattern,
                         page.locator("#table-T05").inner_text())
        raised = page.locator(".alert .raised").first.inner_text()
        assert re.match(r"(po|út|st|čt|pá|so|ne) " + CZECH_MOMENT.pattern + r" \(před \d+ (s|min)\) Průběh hry",
                        raised), raised
        assert not re.search(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun|CET|CEST)\b", text)
        # The header's language form: this user's own choice shown, the room's offered.
        assert page.locator("#language").input_value() == "cs"
        page.screenshot(path=shot_path(tmp_path, f"floor-map-cs-{size}.png"), full_page=True)
        failures = serious_violations(page, f"Czech floor map {size}")
        assert not failures, "\n".join(failures)
    finally:
        context.close()


def test_the_sign_in_page_in_czech_for_a_czech_browser(czech_room, chromium, tmp_path):
    context = chromium.new_context(viewport={"width": 1024, "height": 768}, locale="cs-CZ")
    page = context.new_page()
    try:
        page.goto(czech_room.url + "login", wait_until="load")
        assert page.locator("html").get_attribute("lang") == "cs"
        page.fill("#user", "sam")
        page.fill("#password", "not the password")
        page.click("#signin-button")
        assert page.locator("#error").inner_text() == "Chybné jméno uživatele nebo heslo."
        text = page.locator("body").inner_text()
        assert not english_in(text, english_page_words()), text
        assert "slovenčina" in text and "Deutsch" in text and "English" in text
        page.screenshot(path=shot_path(tmp_path, "signin-cs-tablet.png"), full_page=True)
        failures = serious_violations(page, "Czech sign-in page")
        assert not failures, "\n".join(failures)
    finally:
        context.close()
