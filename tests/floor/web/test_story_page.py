"""A hand's story as the pit boss opens it in the web view, and as the PDF surveillance
files: the table's hand number and the date and time in the floor's zone, each seat
and street in the decisions' card notation, one entry per irregularity with when each
step was seen done, links to the hands around it, a permalink, print and PDF; odd ids
are a 400 or a 404, never a 500; axe-core and screenshots at desktop and tablet sizes.

The store holds three hands played through the simulated table's engine, journaled as
a real table sends them (the board gathered after HAND OVER)."""

from __future__ import annotations

import io
import json
import re
import time

import pytest
from pypdf import PdfReader

from dealerbox.floor.telling import story as S
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.hands import wall_seconds
from dealerbox.floor.store import Store
from dealerbox.floor.telling.story_pdf import FontMissing, find_font
from tests.floor.test_figures import T0, journal_lines, scenario, session
from tests.floor.test_story import _filed, _swept
from tests.floor.web.browser import SIZES, chromium, serious_violations, shoot, signed_in_page
from tests.floor.web.test_app import WebProcess, add_users, connection, sign_in


ZONE = "Europe/Prague"
HANDS = ("seats_clean_hand", "four_card_flop_spread", "unread_hole_card_mouth_sensor",
         "exposed_deal_then_flop_burned_anyway")


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    directory = tmp_path_factory.mktemp("story")
    store = directory / "floor.sqlite"
    parts = [("dealer", "2077")] + [_swept(scenario(name)) for name in HANDS]
    lines = journal_lines("T01", session(*parts), T0, directory / "journal")
    _filed(store, "T01", lines)
    add_users(store)
    with Store(store) as filed:
        filed.set_dealer_name("2077", "Eva Nováková", time.time())
    starts = [json.loads(line)["seq"] for line in lines if '"new_hand"' in line]
    with WebProcess(directory, store, time_zone=ZONE) as web:
        yield web, lines, starts


def _get(web, path: str, cookie: str | None) -> tuple[int, dict, bytes]:
    conn = connection(web)
    try:
        conn.request("GET", path, headers={"Cookie": cookie} if cookie else {})
        resp = conn.getresponse()
        return resp.status, resp.headers, resp.read()
    finally:
        conn.close()


def _hand_of(lines: list[str], start: int) -> list[str]:
    seqs = [json.loads(line)["seq"] for line in lines]
    i = seqs.index(start)
    end = next((k for k in range(i + 1, len(lines)) if '"new_hand"' in lines[k]), len(lines))
    return lines[i:end]


def _text(html: bytes) -> str:
    """The page's words, tags out, spaces folded."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html.decode()))


def test_the_title_is_the_table_its_hand_number_and_the_local_date_and_time(room):
    web, lines, starts = room
    cookie = sign_in(web, "sam")[0]
    clock = FloorClock(ZONE)
    for number, start in enumerate(starts, 1):
        middle = json.loads(_hand_of(lines, start)[5])["seq"]  # any line of the hand opens it
        status, _h, page = _get(web, f"/hands/T01/{middle}", cookie)
        assert status == 200
        started = wall_seconds(json.loads(_hand_of(lines, start)[0])["wall"])
        title = f"Table T01, hand {number}, {clock.full(started)}"
        assert re.search(r"(CET|CEST)$", clock.full(started))
        assert f'<h2 id="story-title">{title}</h2>' in page.decode()
        assert f"<title>{title}: dealerbox floor</title>" in page.decode()
        assert f'value="{web.url.rstrip("/")}/hands/T01/{start}"' in page.decode()  # the permalink
        assert f'href="/hands/T01/{start}.pdf"' in page.decode()
        assert "journal line" not in _text(page).split("Journal lines")[0]


def test_previous_and_next_hand_links_walk_the_tables_hands(room):
    web, _lines, starts = room
    cookie = sign_in(web, "vera")[0]
    pages = [_get(web, f"/hands/T01/{s}", cookie)[2].decode() for s in starts]
    assert 'id="story-prev"' not in pages[0] and "no earlier hand on the floor" in pages[0]
    assert 'id="story-next"' not in pages[-1] and "no later hand yet" in pages[-1]
    for k in range(1, len(starts)):
        assert f'id="story-next" href="/hands/T01/{starts[k]}"' in pages[k - 1]
        assert f'id="story-prev" href="/hands/T01/{starts[k - 1]}"' in pages[k]


def test_the_page_shows_seats_streets_and_one_entry_per_irregularity_in_one_notation(room):
    web, lines, starts = room
    cookie = sign_in(web, "ada")[0]
    seats, four, unread, exposed = (_text(_get(web, f"/hands/T01/{s}", cookie)[2]) for s in starts)
    assert "seat 1 Q♠ J♦ seat 4 J♣ 4♣ seat 8 K♥ A♥" in seats
    assert "flop 8♦ K♣ J♥ 7♣ none turn 5♥ A♠ none river 6♠ 4♦ none" in seats
    assert "Board: K♣ J♥ 7♣ A♠ 4♦" in seats and "No card was laid on the board" not in seats
    assert "No irregularity" in seats
    # One FOUR_CARD_FLOP, though the box wrote four decision lines about it.
    assert four.count("FOUR_CARD_FLOP: FLOOR") == 1 and four.count("Seen done") == 4
    assert "flop T♠ T♦ 3♠ A♣ 2♠" in four
    assert "Not seen done." in exposed and "EXPOSED_DEAL" in exposed
    assert "2077 (Eva Nováková)" in exposed
    for page in (seats, four, unread, exposed):  # one notation: the decisions' (T♦), never the wire's (Td)
        assert not re.search(r"\b[2-9TJQKA][cdhs]\b", page), re.findall(r"\b[2-9TJQKA][cdhs]\b", page)
    # Times are local with their zone.
    assert re.search(r"Seen done \d\d:\d\d:\d\d CET, on button ACK \(line \d+\)", four)
    # A card the box never read keeps its place and shows no face.
    page = _get(web, f"/hands/T01/{starts[2]}", cookie)[2].decode()
    assert '<span class="card unread" title="a card the box never read">unread</span>' in page
    assert "No correction asked: the box said play on." in unread and "Not seen done" not in unread


def test_the_pdf_tells_the_same_story_with_the_suits(room):
    web, lines, starts = room
    cookie = sign_in(web, "sam")[0]
    status, headers, body = _get(web, f"/hands/T01/{starts[1]}.pdf", cookie)
    assert status == 200 and headers["Content-Type"] == "application/pdf"
    assert f'filename="hand-T01-{starts[1]}.pdf"' in headers["Content-Disposition"]
    reader = PdfReader(io.BytesIO(body))
    text = re.sub(r"\s+", " ", " ".join(page.extract_text() for page in reader.pages))
    clock = FloorClock(ZONE)
    started = wall_seconds(json.loads(_hand_of(lines, starts[1])[0])["wall"])
    assert f"Table T01, hand 2, {clock.full(started)}" in text
    assert "Q♠ J♥" in text and "T♦ 3♠ A♣ K♠ 9♦" in text  # a seat, the board
    assert text.count("FOUR_CARD_FLOP: FLOOR") == 1 and text.count("Seen done") == 4
    assert "2077 (Eva Nováková)" in text
    assert f"{web.url.rstrip('/')}/hands/T01/{starts[1]}" in text
    story = S.tell("T01", _hand_of(lines, starts[1]))
    assert len([e for e in story["timeline"] if str(e["seq"]) in text]) == len(story["timeline"])


def test_a_viewer_without_names_sees_badge_ids_only_and_no_one_signed_out_gets_the_pdf(room):
    web, _lines, starts = room
    status, _h, _b = _get(web, f"/hands/T01/{starts[0]}.pdf", None)
    assert status == 401
    cookie = sign_in(web, "vera")[0]
    text = _text(_get(web, f"/hands/T01/{starts[0]}", cookie)[2])
    assert "Dealer 2077 Players" in text and "Nováková" not in text
    status, _h, body = _get(web, f"/hands/T01/{starts[0]}.pdf", cookie)
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(body)).pages)
    assert status == 200 and "2077" in text and "Nováková" not in text


@pytest.mark.parametrize("path, status", [
    ("/hands/T01/9223372036854775808", 404), ("/hands/T01/9223372036854775808.pdf", 404),
    (f"/hands/T01/{10 ** 26}.pdf", 404), ("/hands/T01/999999.pdf", 404), ("/hands/T99/1.pdf", 404),
    ("/hands/T01/-1.pdf", 404), ("/hands/T01/1x.pdf", 404), ("/hands/bad%20id/1.pdf", 400),
    ("/hands/bad%20id/1", 400), ("/hands/T01/999999", 404),
])
def test_odd_ids_are_a_400_or_a_404_never_a_500(room, path, status):
    web, _lines, _starts = room
    cookie = sign_in(web, "vera")[0]
    assert _get(web, path, cookie)[0] == status


def test_the_story_page_passes_axe_and_prints_black_on_white_at_desktop_and_tablet_sizes(room, tmp_path):
    web, _lines, starts = room
    cookie = sign_in(web, "sam")[0]
    failures = []
    with chromium() as browser:
        for size in SIZES:
            with signed_in_page(browser, size, web.url, cookie) as page:
                for start in starts:
                    page.goto(f"{web.url.rstrip('/')}/hands/T01/{start}", wait_until="load")
                    shoot(page, tmp_path / f"{size}-hand-{start}.png")
                    failures += serious_violations(page, f"{size} hand {start}")
                    # The page as printed: no navigation or buttons, black on white.
                    page.emulate_media(media="print")
                    printed = page.evaluate("""() => ({
                        nav: getComputedStyle(document.querySelector('header')).display,
                        links: getComputedStyle(document.querySelector('#story .links')).display,
                        body: getComputedStyle(document.body).backgroundColor,
                        text: getComputedStyle(document.querySelector('#story-title')).color})""")
                    assert printed == {"nav": "none", "links": "none", "body": "rgb(255, 255, 255)",
                                       "text": "rgb(0, 0, 0)"}
                    shoot(page, tmp_path / f"{size}-hand-{start}-print.png")
                    page.emulate_media(media="screen")
    print(f"screenshots in {tmp_path}")
    assert not failures, "\n".join(failures)


def test_the_pdf_shows_an_unread_card_as_its_place(room):
    web, _lines, starts = room
    status, _h, body = _get(web, f"/hands/T01/{starts[2]}.pdf", sign_in(web, "ada")[0])
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(body)).pages)
    assert status == 200 and "J♣ [unread]" in text and "No correction asked: the box said play on." in text


def test_without_a_font_with_the_suits_the_pdf_says_which_package_to_install(tmp_path):
    with pytest.raises(FontMissing, match="fonts-dejavu-core"):
        find_font((tmp_path,))


def test_the_lines_before_the_tables_first_hand_are_not_called_a_hand(room):
    web, _lines, starts = room
    status, _h, page = _get(web, "/hands/T01/1", sign_in(web, "vera")[0])  # the dealer's sign-in
    text = _text(page)
    assert status == 200 and "Table T01, journal lines 1 to 1, before its first hand on the floor" in text
    assert f'id="story-next" href="/hands/T01/{starts[0]}"' in page.decode()
    # Beside a dealer's sign-in line, not "nobody signed in": there is no hand to deal yet.
    assert '<td id="story-dealer">no hand dealt yet</td>' in page.decode()
