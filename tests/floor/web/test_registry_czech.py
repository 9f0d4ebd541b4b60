"""The registry, a deck's page, the card control log and the audit trail as a Czech auditor
reads them, in Debian's chromium driven by Playwright at desktop and tablet sizes: an admin
whose own language is Czech (the room's is English) opens each. Its text holds none of the
English catalog's page words, its numbers have decimal commas, its moments the Czech form with
the zone (``2. 12. 2026 14:05 SEČ``), ``<html lang="cs">``, and axe-core finds no serious or
critical violation. A Slovak and a German reader open the card control log the same way, and
the card control log's PDF in Czech holds every letter of its words, diacritics and all (read
back with pypdf). The screenshots are kept ($FLOOR_SCREENSHOTS, else tmp)."""

from __future__ import annotations

import datetime as _dt
import io
import re
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from babel.messages.pofile import read_po
from pypdf import PdfReader

from dealerbox.floor.store import Store
from dealerbox.floor.telling.clock import FloorClock

from tests.floor.registry_support import deck_tags
from tests.floor.web.browser import SIZES, serious_violations, shot_path, signed_in_page
from tests.floor.web.browser import chromium as launched_chromium
from tests.floor.web.test_app import WebProcess, add_users, sign_in
from tests.floor.web.test_floor_map_czech import LOCALE, PLACEHOLDER, english_in
from tests.floor.web.test_registry_pages import DECK, PATH, play

ZONE = "Europe/Prague"
CLOCK = FloorClock(ZONE)
#: The deck retired and destroyed, beside Red 7 in play.
OLD = "Modrý 3"
#: Why Modrý 3 left play, in the words of the supervisor who retired it.
WHY = "stížnost hráče Koňaříka, úřední kontrola: podezření na značené karty"
#: A moment as cs and sk write it, and as de does (``02.12.2026, 14:05 MEZ``).
SLAVIC_MOMENT = re.compile(r"\d{1,2}\. \d{1,2}\. \d{4} \d{1,2}:\d\d(:\d\d)? SEL?Č")
GERMAN_MOMENT = re.compile(r"\d{2}\.\d{2}\.\d{4}, \d{2}:\d\d(:\d\d)? MES?Z")
ENGLISH_DATES = re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Oct|Nov|Dec|CET|CEST)\b")
#: Who reads which language (the room's is English): ada the admin Czech, vera Slovak, sam German.
READERS = {"cs": "ada", "sk": "vera", "de": "sam"}


def page_words(lang: str) -> list[str]:
    """The English catalog's words that *lang* words differently: each message's literal parts
    (between its placeholders) that hold a word (test_floor_map_czech's way, for any language)."""
    with open(LOCALE / lang / "LC_MESSAGES" / "floor.po", "rb") as po:
        catalog = read_po(po, locale=lang)
    words = set()
    for m in catalog:
        if not m.id:
            continue
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        for english in ids:
            if english in strings:
                continue
            for part in PLACEHOLDER.split(english):
                if re.search(r"[A-Za-z]{2}", part):
                    words.add(part)
    return sorted(words)


def _local(day: _dt.date, hhmm: str) -> float:
    return CLOCK.parse_local(f"{day.isoformat()}T{hhmm}")


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    """A room whose registry lived a day: Red 7 received, registered, issued with a witness,
    checked and dealt at two tables, its own limit 2.5 hours; Modrý 3 retired and destroyed; a
    badge registered and revoked; a floor call cleared; each reader's language chosen."""
    directory = tmp_path_factory.mktemp("registry-czech")
    path = directory / "floor.sqlite"
    add_users(path)
    day = CLOCK.at(time.time()).date() - _dt.timedelta(days=1)
    red = deck_tags(DECK)
    with Store(path) as store:
        store.receive_deck(DECK, "červený", 54, "ada", now=_local(day, "09:00"))
        store.register_deck(DECK, "červený", red, "ada", now=_local(day, "09:10"))
        store.issue_deck(DECK, "T01", "ada", "Petr Šťastný", now=_local(day, "09:20"))
        store.set_deck_limit(DECK, 2.5, None, "ada", now=_local(day, "09:30"))
        store.receive_deck(OLD, "modrý", 54, "ada", now=_local(day, "10:00"))
        store.register_deck(OLD, "modrý", deck_tags(OLD), "ada", now=_local(day, "10:05"))
        store.retire_deck(OLD, "ada", WHY, now=_local(day, "10:30"))
        store.destroy_deck(OLD, "ada", "Petr Šťastný", now=_local(day, "11:00"))
        store.register_badge("08A1B2C3", "1042", "ada", now=_local(day, "11:10"))
        store.set_dealer_name("1042", "Jana Šťastná", time.time())
        store.revoke_badge("08A1B2C3", "ada", "ztracený průkaz", now=_local(day, "11:20"))
        for lang, user in READERS.items():
            store.set_user_language(user, lang, _local(day, "08:00"))
    hands = play(path, red, _local(day, "12:00"))
    with Store(path) as store, store.lock:
        # Raised at a line inside T01's first hand (its second), as a table's floor call is.
        first = min(seq for table, seq in hands if table == "T01")
        store.begin()
        alert = store.raise_alert("T01", "floor", "FOUR_CARD_FLOP: the floor is needed at the table", first + 1,
                                  now=_local(day, "12:01"))
        store.commit()
    with Store(path) as store:
        store.clear_alert(alert["id"], "ada", "flop spálen a rozdán znovu")
    with WebProcess(directory, path, time_zone=ZONE) as web:
        web.day = day
        yield web


@pytest.fixture
def chromium():
    with launched_chromium() as browser:
        yield browser


def _open(browser, web, user: str, size: str, where: str, tmp_path, shot: str):
    """*where* signed in as *user* at *size*: the page, its text, and axe's serious findings."""
    cookie = sign_in(web, user)[0]
    with signed_in_page(browser, size, web.url, cookie) as page:
        response = page.goto(web.url.rstrip("/") + where, wait_until="load")
        assert response.status == 200, where
        text = page.locator("body").inner_text()
        lang = page.locator("html").get_attribute("lang")
        page.screenshot(path=shot_path(tmp_path, shot), full_page=True)
        width = SIZES[size][0]
        assert page.evaluate("document.documentElement.scrollWidth") <= width, (where, size)
        return lang, text, serious_violations(page, f"{user} {size} {where}"), page.evaluate(
            "Array.from(document.querySelectorAll('th')).map(th => th.innerText)")


#: Words German writes as English does, by the glossary (GLOSSARY.md: Deck, Dealer, Hand):
#: the same word in both is no English left over.
SAME_IN = {"de": {"Deck", "Dealer", "Hand", "Person", "Tags", "Limit"}}


def _no_english(text: str, lang: str, where: str) -> None:
    words = [w for w in page_words(lang) if w.strip() not in SAME_IN.get(lang, ())]
    leftover = english_in(text, words)
    around = [text[max(0, m.start() - 60):m.end() + 60] for word in leftover
              for m in re.finditer(r"(?<![\w])" + re.escape(word) + r"(?![\w])", text)]
    assert not leftover, f"English page words on {where} in {lang}: {leftover}: {around}"
    assert not ENGLISH_DATES.search(text), ENGLISH_DATES.search(text)


def _decimals_are_commas(text: str) -> None:
    # Whole words only: an address (127.0.0.1) and a moment (2. 12. 2026) are no decimals.
    assert not re.search(r"(?<![\d.])\d+\.\d+(?![\d.])", text), re.search(r"(?<![\d.])\d+\.\d+(?![\d.])", text)


@pytest.mark.parametrize("size", list(SIZES))
def test_a_czech_auditor_reads_the_registry_a_deck_the_card_control_log_and_the_audit_trail(room, chromium, size,
                                                                                            tmp_path):
    day = room.day
    # From the registry's day to tomorrow: the clear and the sign-ins are made today.
    audit = f"/audit?start={day.isoformat()}T00:00&end={(day + _dt.timedelta(days=2)).isoformat()}T00:00"
    pages = {"registry": "/registry", "deck": PATH, "log": f"/registry/log?day={day.isoformat()}", "audit": audit}
    failures = []
    seen = {}
    for name, where in pages.items():
        lang, text, found, heads = _open(chromium, room, "ada", size, where, tmp_path, f"registry-cs-{name}-{size}.png")
        assert lang == "cs", where
        _no_english(text, "cs", where)
        _decimals_are_commas(text)
        failures += found
        seen[name] = (text, heads)
    registry, _heads = seen["registry"]
    assert "Balíčky a průkazy herního sálu" in registry and "Balíčky (2)" in registry and "Průkazy (1)" in registry
    assert "ve hře" in registry and "zničený" in registry and "Převzít zapečetěný balíček" in registry
    assert "1042 Jana Šťastná" in registry and "ztracený průkaz" in registry
    assert SLAVIC_MOMENT.search(registry)
    deck, heads = seen["deck"]
    assert f"Protokol kontroly karet: balíček {DECK}" in deck
    assert re.search(rf"Balíček {DECK} je ve hře: rozdány 3 hry, \d+,\d h ve hře\.", deck), deck
    assert "Vydán ke stolu T01: tento stůl jím rozdává." in deck
    assert "Převzat zapečetěný: 54 v pečeti, rub červený" in deck and "Registrován: 54 štítků, rub červený" in deck
    assert "Vlastní limit: 2,5 h ve hře" in deck and "Kontrola balíčku: nezpůsobilý ke hře (chybí Qs)" in deck
    assert "Rozdané hry (3)" in deck and "technik u stolu T01" in deck and "nikdo nepřihlášen" in deck
    assert all(SLAVIC_MOMENT.fullmatch(h) for h in heads if re.match(r"\d", h)), heads
    log, heads = seen["log"]
    assert re.search(r"Protokol kontroly karet: (po|út|st|čt|pá|so|ne) \d{1,2}\. \d{1,2}\. \d{4} \(SEL?Č\)", log), log
    assert "Balíčky ve hře podle stolů" in log and "Zničen" in log and "Průkaz 08A1B2C3 krupiéra 1042 zneplatněn" in log
    # Each hand by its number at its table, as its story names it (T01's two, T02's one), not its line.
    assert re.findall(r"hra č\. \d+", log) == ["hra č. 1", "hra č. 2", "hra č. 1"], log
    assert "řádek deníku" not in log and "řádek deníku" not in deck
    trail, heads = seen["audit"]
    assert re.search(r"Auditní záznam: (po|út|st|čt|pá|so|ne) \d", trail), trail
    assert "vydal(a) balíček Red 7 ke stolu T01, svědek Petr Šťastný" in trail
    assert "nastavil(a) limit balíčku Red 7 na 2,5 h ve hře" in trail
    assert "zničil(a) balíček Modrý 3, svědek Petr Šťastný" in trail
    assert "změnil(a) jazyk: jazyk herního sálu → čeština" in trail
    assert "Volání floormana u T01: flop o čtyřech kartách" in trail and "přihlásil(a) se" in trail
    # The cleared floor call's hand by its number at its table, as the shift report names it.
    assert re.search(r"flop o čtyřech kartách\s+T01\s+hra č\. \d+\s", trail), trail
    assert any(re.fullmatch(r"(po|út|st|čt|pá|so|ne) " + SLAVIC_MOMENT.pattern, h) for h in heads), heads
    assert not failures, "\n".join(failures)


def test_a_refused_change_is_said_in_czech_on_the_page(room, chromium, tmp_path):
    cookie = sign_in(room, "ada")[0]
    with signed_in_page(chromium, "tablet", room.url, cookie) as page:
        page.goto(room.url.rstrip("/") + "/registry", wait_until="load")
        page.fill("#receive-name", DECK)
        page.fill("#receive-back", "červený")
        page.fill("#receive-count", "54")
        page.click("#receive")
        page.wait_for_selector("#refused")
        assert page.locator("#refused").inner_text() == f"Neprovedeno: balíček {DECK} už v registru je (ve hře)"
        page.goto(room.url.rstrip("/") + "/registry", wait_until="load")
        page.fill("#register-name", "Zelený 2")
        page.fill("#register-tags", "04A3C6CAE26180")
        page.click("#register")
        page.wait_for_selector("#refused")
        refused = page.locator("#refused").inner_text()
        assert refused == ("Neprovedeno: řádek 1 štítků, '04A3C6CAE26180': očekáváno UID a karta "
                           "(04A3C6CAE26180 Ah)"), refused
        page.screenshot(path=shot_path(tmp_path, "registry-cs-refused-tablet.png"), full_page=True)
        assert page.locator("html").get_attribute("lang") == "cs"


@pytest.mark.parametrize("lang", ["sk", "de"])
@pytest.mark.parametrize("size", list(SIZES))
def test_a_slovak_and_a_german_reader_read_the_card_control_log_in_their_language(room, chromium, lang, size,
                                                                                  tmp_path):
    where = f"/registry/log?day={room.day.isoformat()}"
    html_lang, text, failures, heads = _open(chromium, room, READERS[lang], size, where, tmp_path,
                                             f"registry-{lang}-log-{size}.png")
    assert html_lang == lang
    _no_english(text, lang, where)
    _decimals_are_commas(text)
    moment = SLAVIC_MOMENT if lang == "sk" else GERMAN_MOMENT
    stamps = [h for h in heads if re.match(r"\d", h)]
    assert stamps and all(moment.fullmatch(h) for h in stamps), stamps
    if lang == "sk":
        assert "Protokol kontroly kariet" in text and "Všetky kroky" in text and "Balíčky v hre podľa stolov" in text
        assert "Vlastný limit: 2,5 h v hre" in text and "Preukaz 08A1B2C3 krupiéra 1042 zneplatnený" in text
    else:
        assert "Kartenkontrollprotokoll" in text and "Alle Schritte" in text and "Decks im Spiel, nach Tisch" in text
        assert "Eigenes Limit: 2,5 Std. im Spiel" in text and "Ausweis 08A1B2C3 von Dealer 1042 gesperrt" in text
    assert not failures, "\n".join(failures)


def test_the_czech_card_control_log_pdf_holds_every_diacritic(room, chromium, tmp_path):
    cookie = sign_in(room, "ada")[0]
    with signed_in_page(chromium, "desktop", room.url, cookie) as page:
        response = page.request.get(room.url.rstrip("/") + PATH + "/log.pdf")
        assert response.status == 200 and response.headers["content-type"] == "application/pdf"
        pdf = response.body()
        old = page.request.get(room.url.rstrip("/") + f"/registry/decks/{quote(OLD, safe='')}/log.pdf").body()
    kept = Path(shot_path(tmp_path, "registry-cs-deck-log.pdf"))
    kept.write_bytes(pdf)
    Path(shot_path(tmp_path, "registry-cs-old-deck-log.pdf")).write_bytes(old)
    text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)
    text += " ".join(p.extract_text() for p in PdfReader(io.BytesIO(old)).pages)
    text = " ".join(text.split())  # a cell's words wrap onto lines of their own
    for words in (f"Protokol kontroly karet: balíček {DECK}", "Převzat zapečetěný", "rub červený", "Všechny kroky",
                  "Kde byl použit", "Rozdané hry (3)", "Petr Šťastný", "Vlastní limit: 2,5 h ve hře",
                  "Kontrola balíčku: nezpůsobilý ke hře", f"Vyřazen: {WHY}", "Zničen",
                  "hodiny ve hře", "svědek", "dealerbox – herní sál"):
        assert words in text, (words, text[:2000])
    # Each diacritic the Czech words of the log hold came through as itself, none as a box.
    for letter in "áčéěíňřšťúůýž":
        assert letter in text, letter
    assert "\ufffd" not in text and SLAVIC_MOMENT.search(text)
