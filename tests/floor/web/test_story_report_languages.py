"""A hand's story and the shift report as a Czech, a Slovak and a German pit boss read them (the
pages, and in Czech their PDFs, every letter drawn by the embedded font), and the floor map in
Slovak and German (tests/floor/web/test_floor_map_czech.py reads it in Czech),
in Debian's chromium driven by Playwright at desktop and tablet sizes.

Each reader has their own language (the room's is English): sam reads Czech, vera Slovak, ada
German. Every page's text holds none of the English catalog's page words that the reader's
catalog words differently, its numbers have decimal commas, its moments the language's form with
the zone's local name (``2. 12. 2026 14:05 SEČ``, ``02.12.2026, 14:05 MEZ``), ``<html lang>`` is
the reader's, and axe-core finds no serious or critical violation. What a table recorded in its
own words (a step's text, a rule's reference) is told as recorded: these tables speak English. The screenshots are kept
($FLOOR_SCREENSHOTS, else the test's tmp)."""

from __future__ import annotations

import io
import re
import time

import pytest
from fontTools.ttLib import TTFont
from pypdf import PdfReader
from sqlalchemy import select

from dealerbox.floor.store import Store, store_engine
from dealerbox.floor.telling.figures import store_lines
from dealerbox.floor.telling.language import Language
from dealerbox.floor.telling.story_pdf import find_font

from tests.floor.web.browser import SIZES, serious_violations, shot_path
from tests.floor.web.browser import chromium as launched_chromium
from tests.floor.web.test_app import connection, sign_in
from tests.floor.web.test_floor_map import ZONE, open_floor
from tests.floor.web.test_floor_map import room  # noqa: F401 (the room the floor map's tests deal)
from tests.floor.web.test_floor_map_czech import english_in, english_page_words

#: Who reads which language, and their browser's locale.
READERS = {"cs": "sam", "sk": "vera", "de": "ada"}
LOCALES = {"cs": "cs-CZ", "sk": "sk-SK", "de": "de-DE"}
#: A moment with its date and zone, and a time of day with its zone, as each language writes it.
MOMENT = {"cs": r"\d{1,2}\. \d{1,2}\. \d{4},? \d{1,2}:\d\d(:\d\d)? SEL?Č",
          "sk": r"\d{1,2}\. \d{1,2}\. \d{4},? \d{1,2}:\d\d(:\d\d)? SEL?Č",
          "de": r"\d\d\.\d\d\.\d{4}, \d\d:\d\d(:\d\d)? MES?Z"}
CLOCK = {"cs": r"\d{1,2}:\d\d:\d\d SEL?Č", "sk": r"\d{1,2}:\d\d:\d\d SEL?Č", "de": r"\d\d:\d\d:\d\d MES?Z"}
#: A day's short name in each language, as a title's range starts with it.
WEEKDAY = {"cs": r"(po|út|st|čt|pá|so|ne)", "sk": r"(po|ut|st|št|pi|so|ne)",
           "de": r"(Mo|Di|Mi|Do|Fr|Sa|So)\.?"}
ENGLISH_DATES = re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Oct|Nov|Dec|CET|CEST)\b")
#: Dealers' names with the letters a pit boss's PDF must show (the room's dealers, renamed).
NAMES = {"1042": "Jiří Šťastný", "2077": "Věra Ďurďová", "3001": "Ondřej Růžička"}


@pytest.fixture(scope="module")
def readers_room(room):  # noqa: F811
    with Store(room.store_path) as store:
        for lang, user in READERS.items():
            store.set_user_language(user, lang, 1.0)
        for badge, name in NAMES.items():
            store.set_dealer_name(badge, name, time.time())
    engine = store_engine(room.store_path)
    try:
        with engine.connect() as conn:
            # T02's hand: a four-card flop, the floor called, each step seen done.
            room.hand = conn.execute(select(store_lines.c.seq).where(
                store_lines.c.table_id == "T02", store_lines.c.line.like('%"new_hand"%'))
                .order_by(store_lines.c.seq)).scalars().first()
    finally:
        engine.dispose()
    assert room.hand is not None
    return room


@pytest.fixture
def chromium():
    with launched_chromium() as browser:
        yield browser


def open_page(browser, web, lang: str, size: str, path: str):
    user = READERS[lang]
    width, height = SIZES[size]
    # The reader's browser speaks their language too: its date inputs show the locale's form.
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=size == "tablet",
                                  locale=LOCALES[lang])
    name, value = sign_in(web, user)[0].split("=", 1)
    context.add_cookies([{"name": name, "value": value, "url": web.url}])
    page = context.new_page()
    page.goto(web.url + path.lstrip("/"), wait_until="load")
    return context, page


def read_as(page, lang: str, label: str, tmp_path, shot: str) -> str:
    """The page's text once its language, its words and axe are checked; its screenshot kept."""
    page.screenshot(path=shot_path(tmp_path, shot), full_page=True)
    assert page.locator("html").get_attribute("lang") == lang
    # What the table recorded stays as it was recorded (a step's text, a rule's reference, in the
    # table's own language: these tables speak English): the page's own words are checked.
    text = page.evaluate("""() => { const body = document.body.cloneNode(true);
        body.querySelectorAll(".recorded").forEach(e => e.remove()); document.documentElement.append(body);
        const text = body.innerText; body.remove(); return text; }""")
    leftover = english_in(text, english_page_words(lang))
    assert not leftover, f"English page words on the {label}: {leftover}"
    assert not ENGLISH_DATES.search(text), ENGLISH_DATES.findall(text)
    failures = serious_violations(page, label)
    assert not failures, "\n".join(failures)
    return text


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("lang", list(READERS))
def test_a_hands_story_in_the_readers_language(readers_room, chromium, lang, size, tmp_path):
    _ = Language(lang).gettext
    context, page = open_page(chromium, readers_room, lang, size, f"/hands/T02/{readers_room.hand}")
    try:
        text = read_as(page, lang, f"{lang} story {size}", tmp_path, f"story-{lang}-{size}.png")
        title = page.locator("#story-title").inner_text()
        # "Stůl T02, hra č. 1, st 2. 12. 2026 10:05:03 SEČ": the table, its hand, the start in full.
        assert re.fullmatch(_("Table %(table)s, %(hand)s, %(started)s") % {
            "table": "T02", "hand": re.escape(_("hand %(number)s") % {"number": 1}),
            "started": WEEKDAY[lang] + " " + MOMENT[lang]}, title), title
        for heading in ("Seats", "The board as laid", "Irregularities", "Everything the table recorded"):
            assert _(heading) in text
        assert _("seat %(number)s") % {"number": 1} in page.locator("#story-seats").inner_text()
        # One entry for the four-card flop, in the language's words, each step seen done at a local time.
        entry = page.locator("#irregularity-1").inner_text()
        name = Language(lang).messages.irregularity_name("FOUR_CARD_FLOP")
        assert "FOUR_CARD_FLOP" in entry and name.lower() in entry.lower()
        assert re.search(re.escape(_("Seen %(when)s (line %(line)s)").split("%(when)s")[0]) + CLOCK[lang], entry)
        # Every time the table recorded in the language's form with its zone.
        times = page.locator("#story-timeline tbody td:nth-child(2)").all_inner_texts()
        assert times and all(re.fullmatch(r"\d{1,2}:\d\d:\d\d", t) for t in times), times[:3]
        zone = page.locator("#story-timeline thead th:nth-child(2)").inner_text()
        assert re.fullmatch(re.escape(_("Time (%(zone)s)").split("%(zone)s")[0]) + r"(SEL?Č|MES?Z)\)", zone), zone
        whats = page.locator("#story-timeline tbody td:nth-child(3)").all_inner_texts()
        assert _("out of the shoe: %(card)s").split("%(card)s")[0] in whats[1] or any(
            _("out of the shoe: %(card)s").split("%(card)s")[0] in w for w in whats)
        assert not re.search(r"\d\.\d", page.locator("#story-seats").inner_text())
    finally:
        context.close()


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("lang", list(READERS))
def test_the_shift_report_in_the_readers_language(readers_room, chromium, lang, size, tmp_path):
    language = Language(lang)
    _ = language.gettext
    now = time.time()
    path = f"/report?from={now - 2 * 3600:.0f}&to={now + 60:.0f}"
    context, page = open_page(chromium, readers_room, lang, size, path)
    try:
        text = read_as(page, lang, f"{lang} shift report {size}", tmp_path, f"report-{lang}-{size}.png")
        title = page.locator("#report-title").inner_text()
        prefix = re.escape(_("Shift report: %(range)s").split("%(range)s")[0])
        assert re.match(prefix + WEEKDAY[lang], title) and re.search(r" (SEL?Č|MES?Z)$", title), title
        for heading in ("Tables", "Dealers", "Alerts cleared, by supervisor"):
            assert _(heading) in text
        # The figures: whole numbers grouped as the language groups them, one decimal after a comma.
        cells = page.locator("#report-tables td").all_inner_texts()
        figure = re.compile(r"\d{1,3}([\u00a0.]\d{3})*|\d+,\d|–|" + re.escape(_("no hands")))
        assert cells and all(figure.fullmatch(c) for c in cells), [c for c in cells if not figure.fullmatch(c)]
        assert any(re.fullmatch(r"\d+,\d", c) for c in cells)
        assert _("the room") in page.locator("#report-tables").inner_text()
        # The alerts raised, each at a moment in the language's form with its zone.
        raised = page.locator("#report-alerts tbody tr > :first-child").all_inner_texts()
        assert raised and all(re.fullmatch(MOMENT[lang], r) for r in raised), raised
        # Each alert's hand by its number at its table, in the reader's words: a printed report
        # names the hand its row means.
        numbered = "|".join(re.escape(_(m)).replace(re.escape("%(number)s"), r"\d+")
                            for m in ("hand %(number)s", "the first, hand %(number)s"))
        hands = page.locator("#report-alerts a[href^='/hands/']").all_inner_texts()
        assert hands and all(re.fullmatch(numbered, h) for h in hands), hands
        legend = page.locator("#report-tables ~ p.legend").first.inner_text()
        assert language.forms.decimal(0.0) in legend and "0.0" not in legend
        # The range controls: the presets and the zone in the reader's words.
        presets = page.locator("nav.presets a").all_inner_texts()
        assert presets == [_("This shift"), _("Last shift"), _("Today"), _("Yesterday")]
        assert re.search(rf"{ZONE} \((SEL?Č|MES?Z)\)", page.locator("form.range .hint").inner_text())
    finally:
        context.close()


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("lang", ["sk", "de"])
def test_the_floor_map_in_slovak_and_german(readers_room, chromium, lang, size, tmp_path):
    language = Language(lang)
    _ = language.gettext
    context, page = open_floor(chromium, readers_room, READERS[lang], size, live=_("live"))
    try:
        text = read_as(page, lang, f"{lang} floor map {size}", tmp_path, f"floor-map-{lang}-{size}.png")
        assert _("Shift report") in text and _("Audit trail") in text and _("Sign out") in text
        assert page.locator("section.pit-group h2").all_inner_texts()[-1] == _("Unplaced tables")
        floor_call = _("%(kind)s at %(where)s: %(text)s") % {
            "kind": _("Floor call"), "where": "T02", "text": language.messages.irregularity_name("FOUR_CARD_FLOP")}
        assert floor_call in page.locator(".alert .text").all_inner_texts()
        rate = re.escape(_("%(rate)s hands/h")).replace(re.escape("%(rate)s"), r"(\d+[.,]\d+)")
        rates = re.findall(rate, text)
        assert rates and all(re.fullmatch(r"\d+,\d", r) for r in rates), rates
        quiet = _("Quiet since %(when)s").split("%(when)s")[0]
        assert re.search(re.escape(quiet) + MOMENT[lang], page.locator("#table-T04").inner_text())
        assert page.locator("#language").input_value() == lang
    finally:
        context.close()


@pytest.mark.parametrize("lang", list(READERS))
def test_a_tiles_moment_stays_inside_its_tile_at_tablet_size(readers_room, chromium, lang, tmp_path):
    # "2. 12. 2026 20:07 SEČ" is wider than a tablet's tile: it breaks between the date and the time.
    context, page = open_floor(chromium, readers_room, READERS[lang], "tablet", live=Language(lang).gettext("live"))
    try:
        for table in ("T04", "T05"):
            tile = page.locator(f"#table-{table}").bounding_box()
            for part in page.locator(f"#table-{table} .when > span").all():
                box = part.bounding_box()
                assert tile["x"] <= box["x"] and box["x"] + box["width"] <= tile["x"] + tile["width"], (table, box, tile)
        page.locator("#table-T04").screenshot(path=shot_path(tmp_path, f"tile-T04-{lang}-tablet.png"))
    finally:
        context.close()


def _pdf_text(web, path: str, user: str) -> str:
    status, headers, body = call_raw(web, path, sign_in(web, user)[0])
    assert status == 200 and headers["Content-Type"] == "application/pdf", body[:200]
    reader = PdfReader(io.BytesIO(body))
    return re.sub(r"\s+", " ", " ".join(page.extract_text() for page in reader.pages))


def call_raw(web, path: str, cookie: str):
    conn = connection(web)
    try:
        conn.request("GET", path, headers={"Cookie": cookie})
        resp = conn.getresponse()
        return resp.status, resp.headers, resp.read()
    finally:
        conn.close()


def _every_letter_has_a_glyph(text: str) -> None:
    """Each character of *text* is in the font the PDFs embed: none is drawn as a blank box."""
    cmaps = [TTFont(str(face)).getBestCmap() for face in find_font()]
    missing = sorted({ch for ch in text if not ch.isspace() and any(ord(ch) not in cmap for cmap in cmaps)})
    assert not missing, missing


def test_the_story_and_the_shift_report_pdfs_in_czech_keep_every_diacritic(readers_room):
    story = _pdf_text(readers_room, f"/hands/T02/{readers_room.hand}.pdf", "sam")
    assert re.search(r"Stůl T02, hra č\. 1, " + WEEKDAY["cs"] + " " + MOMENT["cs"], story), story[:200]
    for words in ("Místa", "místo 1", "Board, jak byl vykládán", "Nesrovnalosti", "Flop o čtyřech kartách",
                  "Karty v pořadí, v jakém vyšly ze shoe", "Vše, co stůl zaznamenal", "Řádky deníku",
                  "Začátek", "2077 (Věra Ďurďová)", "stisknuto HAND OVER", "Provedení zjištěno",
                  "VOLÁNÍ FLOORMANA", "strana 1/"):
        assert words in story, words
    assert re.search(r"Začátek " + CLOCK["cs"], story)
    _every_letter_has_a_glyph(story)
    now = time.time()
    report = _pdf_text(readers_room, f"/report.pdf?from={now - 2 * 3600:.0f}&to={now + 60:.0f}", "sam")
    assert re.search(r"Zpráva o směně: " + WEEKDAY["cs"] + r" \d{1,2}\. \d{1,2}\. \d{4}, ", report), report[:200]
    for words in ("Stoly", "Krupiéři", "1042 Jiří Šťastný", "3001 Ondřej Růžička", "nikdo nepřihlášen",
                  "celý sál", "Vyřízená upozornění podle inspektora", "Chyby snímání",
                  "Volání floormana u T02: flop o čtyřech kartách", "stále otevřené", "0,0 je skutečná nula",
                  "strana 1/"):
        assert words in report, words
    assert re.search(r"\b\d+,\d\b", report) and not re.search(r"\b\d+\.\d\b", report)
    _every_letter_has_a_glyph(report)
