"""The Surveillance page and its PDF as a Czech surveillance officer reads them (issue 45), in
Debian's chromium driven by Playwright at desktop and tablet sizes: the room's language is
English, sam's own is Czech. The room is the Surveillance page's tests' (the real pass's
shuffle, seat luck, dealer chart and missing-reference alerts), with a procedure alert filed
as the pass files one (its text and evidence), so that every kind of alert is on the page.

The page's text holds none of the English catalog's page words and no technician's word (a
``[protect]`` setting, a ``dealerbox`` command, an identifier with an underscore), its hands are
named by their numbers, its numbers have decimal commas, its moments the Czech form with the
zone; ``<html lang="cs">``, and axe-core finds no serious or critical violation. The PDF is in
Czech with every diacritic read back (pypdf), no technician's word either, and its first page
rendered to an image when pdftoppm is there. Screenshots: $FLOOR_SCREENSHOTS."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from pypdf import PdfReader

from dealerbox.floor import alert_texts as T
from dealerbox.floor.protect.floor_pass import file_alert
from dealerbox.floor.store import Store, store_engine
from dealerbox.floor.telling.catalogs import translations

from tests.floor.web.browser import SIZES, chromium, serious_violations, shoot, shot_path, signed_in_page
from tests.floor.web.test_app import WebProcess, connection, sign_in
from tests.floor.web.test_floor_map_czech import CZECH_MOMENT, english_in, english_page_words
from tests.floor.web.test_surveillance_page import RANGE, T0, room

#: Parts of the page left out of the words looked for: none now that the range form
#: (web/range_form.py, templates/_range.html) and the title's range are told in the reader's language.
RANGE_PARTS: tuple[str, ...] = ()
#: The Czech letters with a diacritic that the PDF's own words hold (its headings, columns,
#: notes and the alerts' words); the PDF must give each back as it was written.
CZECH_LETTERS = "áčéěířšůýž"


@pytest.fixture(scope="module")
def czech(tmp_path_factory):
    directory = tmp_path_factory.mktemp("surveillance-cs")
    path, journals = room(directory)
    t3 = journals["T3"].hand_seqs
    with Store(path) as store:
        engine = store_engine(store.target)
        with engine.begin() as conn:
            # A procedure alert as the pass files one: a block of E7's hands that kept too many pairs.
            text = T.PROCEDURE.write(dealer="E7", hands=len(t3), seq=t3[-1], pairs=21, p="0.00031",
                                     model="machine", threshold="0.001")
            file_alert(conn, "T3", "procedure", text, t3[-1], T0 + 3600,
                       {"dealer": "E7", "statistic": 21, "p_value": 0.00031, "hands": [["T3", s] for s in t3]})
        engine.dispose()
        store.set_user_language("sam", "cs", T0)
    web = WebProcess(directory, path, time_zone="Europe/Prague")
    with open(web.config, "a") as config:   # the web view reads [protect] as the pass was configured
        config.write('[protect]\nshuffle = "machine"\nthreshold = 0.01\nroom_rate = 0.02\nplayers = [6, 7, 9]\n'
                     'hole_cards = [2]\n')
    with web:
        yield web, journals


#: What a technician reads and a surveillance officer cannot act on: a floor.toml setting, its
#: section, a command, an identifier of the code or the store.
TECHNICIAN = re.compile(r"\[protect\]|auto_fit|reference_wait|room_rate|floor protect|dealerbox\s|"
                        r"\b[a-z]+_[a-z_]+\b")


def technician_words(text: str) -> list[str]:
    """The technician's words in *text*, the product's own name (``dealerbox floor``, as the
    page's heading and the PDF's footer name it) aside."""
    return TECHNICIAN.findall(text.replace(translations("cs").gettext("dealerbox floor"), ""))


def page_words(page) -> str:
    """The page's text without the range form's (see RANGE_PARTS)."""
    return page.evaluate("""(parts) => {
        const body = document.body.cloneNode(true);
        for (const p of parts) body.querySelectorAll(p).forEach(e => e.remove());
        document.documentElement.appendChild(body);
        const text = body.innerText;
        body.remove();
        return text;
    }""", list(RANGE_PARTS)).replace("\u00a0", " ")


@pytest.mark.parametrize("size", list(SIZES))
def test_a_czech_officer_reads_the_surveillance_page_in_czech(czech, size, tmp_path):
    web, journals = czech
    cookie = sign_in(web, "sam")[0]
    with chromium() as browser, signed_in_page(browser, size, web.url, cookie) as page:
        page.goto(web.url.rstrip("/") + "/surveillance?" + RANGE, wait_until="load")
        assert page.locator("html").get_attribute("lang") == "cs"
        text = page_words(page)
        words = english_page_words()
        assert len(words) > 300
        leftover = english_in(text, words)
        assert not leftover, f"English page words on the Czech Surveillance page: {leftover}"
        assert not technician_words(text), technician_words(text)
        # The technician's own figures stay, folded away under their summary, and say no setting either.
        assert not technician_words(" ".join(page.locator(".alert details.raw p").all_text_contents()))
        # Every kind of alert, titled in Czech, and why it fired.
        titles = page.locator(".alert h4").all_inner_texts()
        for title in ("Balíček rozdán, jako by nebyl zamíchán: stůl T1",
                      "Krupiér míchá méně, než herna deklaruje: stůl T3",
                      "Místo dostalo nepravděpodobně mnoho silných startovních karet: stůl T2",
                      "Chybovost krupiéra vybočuje z chybovosti sálu: stůl T3",
                      "Hra, jejíž rozdání se nekontrolují na míchání: stůl T4"):
            assert title in titles, (title, titles)
        shuffle = page.locator(".alert", has_text="Balíček rozdán").first.inner_text().replace("\u00a0", " ")
        assert "Jak nepravděpodobné při poctivé hře podle deklarace: méně než 1 z 1 000" in shuffle, shuffle
        assert re.search(r"\d+ dvojic\w* karet lež\w+ v rozdání této hry vedle sebe", shuffle), shuffle
        seat = page.locator(".alert", has_text="Místo dostalo").first.inner_text().replace("\u00a0", " ")
        assert "Místo 1 dostalo silné startovní karty 9× za 9 her od chvíle" in seat, seat
        # Every hand by its number at its table, as its story is headed; never by its journal line.
        assert "stůl T2, hra č. 1" in seat and "řádek" not in seat, seat
        strong = page.locator("#seats-T2 td.stories a").first
        assert strong.inner_text() == "1" and strong.get_attribute("aria-label") == "hra č. 1 u stolu T2"
        procedure = page.locator(".alert", has_text="Krupiér míchá méně").first.inner_text().replace("\u00a0", " ")
        assert "Blok krupiéra E7 o " in procedure and "ponechal celkem 21 dvojic" in procedure, procedure
        assert "zhruba 1 z 3 200" in procedure, procedure
        reference = page.locator(".alert", has_text="Hra, jejíž rozdání se nekontrolují na míchání: stůl T4").first.inner_text().replace("\u00a0", " ")
        assert "hold'em pro 7 hráčů" in reference, reference
        assert "Deklarovaný model: míchací stroj." in reference and "požádejte IT oddělení" in reference, reference
        assert "první nezkontrolovaná hra (stůl T4, hra č. 2)" in reference, reference
        # The technician's figures stay as filed, marked as English for a screen reader.
        assert page.locator(".alert details.raw p").first.get_attribute("lang") == "en"
        # Decimal commas, never a decimal dot; grouping with a space.
        assert not re.findall(r"\d\.\d", text), re.findall(r".{20}\d\.\d.{20}", text)
        assert re.search(r"\d,\d", text) and "100 800 her týdně" in text
        # Czech moments with the zone, no English day or zone name.
        raised = page.locator(".alert p", has_text="Vzniklo").first.inner_text().replace("\u00a0", " ")
        assert re.search(r"Vzniklo " + CZECH_MOMENT.pattern, raised), raised
        assert not re.search(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun|CET|CEST)\b", text)
        # The dealers' charts: Czech titles and axes, number labels with decimal commas.
        svg = page.locator("#chart-E7 svg").inner_html()
        assert "Regulační diagram chyb (CUSUM), krupiér E7 (Erin Seven)" in svg and "hodnota diagramu" in svg
        labels = re.findall(r'class="(?:major )?guide line"[^>]*>.*?<text[^>]*>([^<]+)</text>', svg, re.S)
        assert labels and not any(re.search(r"\d\.\d", t) for t in labels), labels
        assert "V tomto období mimo kontrolu: 1×." in page.locator("#chart-E7").inner_text()
        shoot(page, Path(shot_path(tmp_path, f"surveillance-cs-{size}.png")))
        page.locator(".alert details.raw").first.locator("summary").click()
        failures = serious_violations(page, f"Czech Surveillance page {size}")
        width = SIZES[size][0]
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    print(f"screenshots in {shot_path(tmp_path, '')}")
    assert not failures, "\n".join(failures)


def test_the_surveillance_pdf_in_czech_keeps_every_diacritic(czech, tmp_path):
    web, journals = czech
    cookie = sign_in(web, "sam")[0]
    conn = connection(web)
    try:
        conn.request("GET", f"/surveillance.pdf?{RANGE}", headers={"Cookie": cookie, "Host": "floor.example"})
        response = conn.getresponse()
        pdf = response.read()
    finally:
        conn.close()
    assert response.status == 200 and response.getheader("Content-Type") == "application/pdf"
    target = Path(shot_path(tmp_path, "surveillance-cs.pdf"))
    target.write_bytes(pdf)
    reader = PdfReader(io.BytesIO(pdf))
    text = " ".join(" ".join(p.extract_text().split()) for p in reader.pages)
    for heading in ("Upozornění ochrany hry a proč vznikla", "Hry bez kontroly míchání",
                    "Rozpočet falešných poplachů: falešná upozornění, která má čekat poctivý sál"):
        assert heading in text, heading
    assert "Balíček rozdán, jako by nebyl zamíchán." in text and "Zachované dvojice:" in text
    assert re.search(r"Dohled: " + CZECH_MOMENT.pattern + " až " + CZECH_MOMENT.pattern, text), text[:200]
    missing = [c for c in CZECH_LETTERS if c not in text.lower()]
    assert not missing, f"letters not read back from the Czech PDF: {missing}"
    assert "\ufffd" not in text and not re.findall(r"\d\.\d", text), re.findall(r".{20}\d\.\d.{20}", text)
    assert not technician_words(text), technician_words(text)
    assert "stůl T1, hra č. 4" in text and "řádek deníku" not in text
    links = [a.get_object()["/A"]["/URI"] for p in reader.pages for a in p.get("/Annots", [])
             if a.get_object().get("/A")]
    assert f"http://floor.example/hands/T1/{journals['T1'].hand_seqs[3]}" in links
    if shutil.which("pdftoppm"):   # the first page as an image, to look at
        subprocess.run(["pdftoppm", "-png", "-r", "80", "-f", "1", "-l", "1", str(target),
                        str(target.with_suffix(""))], check=True, timeout=60)
        assert target.with_name(target.stem + "-1.png").stat().st_size > 10_000
