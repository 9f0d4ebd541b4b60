"""The room's registry in the floor view (issue 40): an admin takes one deck through its
whole life in Debian's chromium (received, registered, in play at two tables, checked,
retired, a destruction refused for a witness who is the destroyer, destroyed), and the card
control log follows it on the page, as CSV and as PDF; axe-core finds nothing serious at
desktop and tablet sizes. Roles decide: a viewer reads, a supervisor receives and retires decks,
the admin alone does the rest, every change
with the session's CSRF token and audited with the user's name."""

from __future__ import annotations

import csv
import datetime
import io
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from pypdf import PdfReader

from dealerbox.floor.collecting.registry_pass import RegistryPass
from dealerbox.floor.operating.accounts import may
from dealerbox.floor.store import Store
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.store.alerts import SIGNIN_ACTIONS
from tests.floor.registry_support import TableJournal, deck_tags, file_journal
from tests.floor.web.browser import SIZES, chromium, serious_violations, shoot, signed_in_page
from tests.floor.web.test_app import WebProcess, add_users, call, sign_in

DECK = "Red 7"
PATH = f"/registry/decks/{quote(DECK, safe='')}"


@pytest.fixture
def served(tmp_path):
    path = tmp_path / "floor.sqlite"
    add_users(path)
    with WebProcess(tmp_path, path) as web:
        yield web, path


def play(path, red: dict[str, str], start: float, scale: float = 1.0) -> list[tuple[str, int]]:
    """T01 checks the deck and deals two hands with it, T02 one (its cards by their tags), from
    *start* over ten minutes (times *scale*); the registry pass files them as the collector's
    does. Returns the hands (table, seq)."""
    t01, t02 = TableJournal("T01"), TableJournal("T02")
    t01.add(start, "deck_checked", deck=DECK, missing=["Qs"], damaged=[], ok=False)
    hands = [("T01", t01.hand(start + 60 * scale, red, deck=DECK, seconds=50 * scale)),
             ("T01", t01.hand(start + 180 * scale, red, deck=DECK, seconds=50 * scale)),
             ("T02", t02.hand(start + 600 * scale, red, by_uid=True, seconds=50 * scale))]
    with Store(path) as store:
        file_journal(store, t01)
        file_journal(store, t02)
        RegistryPass(store).catch_up()
    return hands


def test_a_deck_through_its_whole_life_in_the_browser_with_its_log_as_html_csv_and_pdf(served, tmp_path):
    web, path = served
    red = deck_tags(DECK)
    cookie = sign_in(web, "ada")[0]
    base = web.url.rstrip("/")
    failures = []
    with chromium() as browser, signed_in_page(browser, "desktop", web.url, cookie) as page:
        page.goto(base + "/registry", wait_until="load")
        assert "No deck in the registry yet." in page.inner_text("#decks")
        page.fill("#receive-name", DECK)
        page.fill("#receive-back", "red")
        page.fill("#receive-count", "54")
        page.click("#receive")
        page.wait_for_url(base + PATH)
        assert f"Deck {DECK} is received, sealed" in page.inner_text("#deck-state")
        page.goto(base + "/registry", wait_until="load")
        page.fill("#register-name", DECK)
        page.fill("#register-back", "red")
        page.fill("#register-tags", "\n".join(f"{uid} {card}" for uid, card in red.items()))
        page.click("#register")
        page.wait_for_url(base + PATH)
        assert f"Deck {DECK} is registered" in page.inner_text("#deck-state")
        assert "Not issued to a table" in page.inner_text("#deck-issued")
        page.fill("#issue-table", "T02")
        page.fill("#issue-witness", "ada")
        page.click("#issue")
        assert "cannot witness their own issue" in page.inner_text("#refused")
        page.fill("#issue-table", "T02")
        page.fill("#issue-witness", "")
        page.click("#issue")
        page.wait_for_url(base + PATH)
        assert "Issued to T02: the deck that table deals." in page.inner_text("#deck-issued")
        # The table's steps come between the admin's: checked and dealt after the registration,
        # before the retirement (the log is in the order things happened).
        start = time.time()
        hands = play(path, red, start, scale=0.004)
        page.reload(wait_until="load")
        assert f"Deck {DECK} is in play: 3 hands dealt" in page.inner_text("#deck-state")
        assert "missing Qs" in page.inner_text("#checks") and "T01" in page.inner_text("#checks")
        for table, seq in hands:
            assert page.locator(f'#log-hands a[href="/hands/{table}/{seq}"]').count() == 1
        assert [page.inner_text(f"#log-tables tbody tr:nth-child({i}) th") for i in (1, 2)] == ["T01", "T02"]
        assert page.locator("#destroy").count() == 0   # retired first
        time.sleep(max(0.0, start + 3.0 - time.time()))
        failures += serious_violations(page, "ada desktop deck in play")
        page.fill("#retire-why", "a corner bent on the seven of clubs")
        page.click("#retire")
        page.wait_for_url(base + PATH)
        assert f"Deck {DECK} is retired" in page.inner_text("#deck-state")
        page.fill("#destroy-witness", "ada")
        page.click("#destroy")
        assert "cannot witness their own destruction" in page.inner_text("#refused")
        failures += serious_violations(page, "ada desktop refused")
        page.fill("#destroy-witness", "Bob Witness")
        page.click("#destroy")
        page.wait_for_url(base + PATH)
        assert f"Deck {DECK} is destroyed" in page.inner_text("#deck-state")
        steps = page.inner_text("#log-steps")
        for words in ("Received sealed: 54", "Registered: 54 tags", "In play: its first hand", "Deck check",
                      "Retired: a corner bent", "Destroyed", "Bob Witness"):
            assert words in steps, words
        zone = FloorClock().at(start).strftime("%Z")
        assert zone in steps   # local times with the zone
        shoot(page, tmp_path / "deck-destroyed.png")
        with page.expect_download() as got:
            page.click("#log-files a[href$='log.csv']")
        rows = list(csv.DictReader(io.StringIO(Path(got.value.path()).read_text(encoding="utf-8"))))
        with page.expect_download() as got:
            page.click("#log-files a[href$='log.pdf']")
        pdf = Path(got.value.path()).read_bytes()
        failures += serious_violations(page, "ada desktop destroyed")
        with signed_in_page(browser, "tablet", web.url, cookie) as tablet:
            tablet.goto(base + PATH, wait_until="load")
            assert f"Deck {DECK} is destroyed" in tablet.inner_text("#deck-state")
            shoot(tablet, tmp_path / "deck-destroyed-tablet.png")
            failures += serious_violations(tablet, "ada tablet destroyed")
    assert not failures, "\n".join(failures)
    steps = [r for r in rows if r["kind"] == "step"]
    assert [r["what"].split(":")[0] for r in steps] == ["Received sealed", "Registered", "Issued to T02",
                                                        "Deck check", "In play", "Retired", "Destroyed"]
    destroyed = steps[-1]
    assert (destroyed["person"], destroyed["witness"]) == ("ada", "Bob Witness") and destroyed["utc_time"].endswith("Z")
    assert steps[3]["table"] == "T01" and steps[0]["person"] == "ada"
    assert (steps[2]["table"], steps[2]["person"], steps[2]["witness"]) == ("T02", "ada", "")
    dealt = [r for r in rows if r["kind"] == "hand"]
    assert [(r["table"], int(r["hand_seq"])) for r in dealt] == hands
    assert all(r["link"].endswith(f"/hands/{r['table']}/{r['hand_seq']}") for r in dealt)
    text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)
    for words in (f"Card control log: deck {DECK}", "Received sealed", "Bob Witness", "Destroyed", "Hands dealt (3)"):
        assert words in text, words
    with Store(path) as store:
        # The registry's changes (the sign-ins' rows are the trail's too: tests/floor/web/test_audit_signins.py).
        actions = [(a["who"], a["action"]) for a in store.audit() if a["action"] not in SIGNIN_ACTIONS]
    assert actions == [("ada", "deck_receive"), ("ada", "deck_register"), ("ada", "deck_issue"),
                       ("ada", "deck_retire"), ("ada", "deck_destroy")]


def test_roles_decide_and_a_change_needs_the_sessions_token(served):
    web, path = served
    viewer, viewer_csrf = sign_in(web, "vera")
    admin, admin_csrf = sign_in(web, "ada")
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    body = f"action=receive&name=Blue&back=blue&count=54&csrf={viewer_csrf}".encode()
    assert call(web, "POST", "/registry/decks", raw=body, headers=form, cookie=viewer)[0] == 403
    body = b"action=receive&name=Blue&back=blue&count=54"
    assert call(web, "POST", "/registry/decks", raw=body, headers=form, cookie=admin)[0] == 403
    assert call(web, "GET", "/registry", cookie=None)[0] in (302, 303, 401)
    body = f"action=receive&name=Blue&back=blue&count=many&csrf={admin_csrf}".encode()
    status, _h, page = call(web, "POST", "/registry/decks", raw=body, headers=form, cookie=admin)
    assert status == 400 and "a sealed count is a whole number" in page
    body = f"action=receive&name=Blue&back=blue&count=54&csrf={admin_csrf}".encode()
    assert call(web, "POST", "/registry/decks", raw=body, headers=form, cookie=admin)[0] == 303
    status, _h, page = call(web, "GET", "/registry", cookie=viewer)
    assert status == 200 and "Blue" in page and 'id="receive"' not in page   # a viewer reads, no forms
    assert '<a href="/registry">Decks and badges</a>' in page
    assert call(web, "GET", "/registry/decks/Nope", cookie=viewer)[0] == 404
    assert call(web, "GET", "/registry/log?day=yesterday", cookie=viewer)[0] == 400
    assert call(web, "GET", "/registry/decks/Nope/log.csv", cookie=viewer)[0] == 404


def test_a_supervisor_receives_and_retires_decks_and_only_the_admin_does_the_rest(served):
    """``deck_custody`` (a supervisor and the admin): receive a sealed deck, retire one;
    ``manage_registry`` (the admin alone): a deck's tags, its limit, its destruction, badges."""
    assert may("supervisor", "deck_custody") and may("admin", "deck_custody") and not may("viewer", "deck_custody")
    assert may("admin", "manage_registry") and not may("supervisor", "manage_registry")
    web, path = served
    sam, sam_csrf = sign_in(web, "sam")
    form = {"Content-Type": "application/x-www-form-urlencoded"}

    def post(where, fields):
        body = "&".join(f"{k}={quote(str(v))}" for k, v in {**fields, "csrf": sam_csrf}.items()).encode()
        return call(web, "POST", where, raw=body, headers=form, cookie=sam)[0]
    red = deck_tags(DECK)
    tags = "\n".join(f"{uid} {card}" for uid, card in red.items())
    assert post("/registry/decks", {"action": "receive", "name": DECK, "back": "red", "count": 54}) == 303
    assert post("/registry/decks", {"action": "register", "name": DECK, "back": "red", "tags": tags}) == 403
    status, _h, page = call(web, "GET", "/", cookie=sam)
    assert '<a href="/registry">Decks and badges</a>' in page   # the nav leads every role to it
    status, _h, page = call(web, "GET", "/registry", cookie=sam)
    assert status == 200 and 'id="receive"' in page and 'id="register"' not in page and 'id="add-badge"' not in page
    assert post("/registry/badges", {"uid": "08A1B2C3", "dealer": "1042"}) == 403
    with Store(path) as store:
        store.register_deck(DECK, "red", red, "ada")
        store.register_badge("08A1B2C3", "1042", "ada")
    status, _h, page = call(web, "GET", PATH, cookie=sam)
    assert 'id="retire"' in page and 'id="set-limit"' not in page and 'id="issue"' in page
    assert post(f"{PATH}/issue", {"table": "T02", "witness": "Bob Witness"}) == 303   # custody: issued to a table
    assert post(f"{PATH}/limit", {"hours": 8, "hands": ""}) == 403
    assert post("/registry/badges/08A1B2C3/revoke", {"why": "left"}) == 403
    assert post(f"{PATH}/retire", {"why": "marked cards suspected"}) == 303
    status, _h, page = call(web, "GET", PATH, cookie=sam)
    assert 'id="destroy"' not in page and "Change this deck" not in page
    assert post(f"{PATH}/destroy", {"witness": "Bob Witness"}) == 403
    with Store(path) as store:
        assert store.deck(DECK)["state"] == "retired" and store.badges()[0]["revoked_at"] is None
        assert [(a["who"], a["action"]) for a in store.audit() if a["action"] not in SIGNIN_ACTIONS] == [
            ("sam", "deck_receive"), ("ada", "deck_register"), ("ada", "badge_register"), ("sam", "deck_issue"),
            ("sam", "deck_retire")]


@pytest.mark.parametrize("who", ["vera", "ada"])
def test_the_registry_pages_have_no_serious_or_critical_violation_at_desktop_and_tablet_sizes(served, who, tmp_path):
    web, path = served
    red = deck_tags(DECK)
    with Store(path) as store:
        store.receive_deck(DECK, "red", 54, "ada")
        store.register_deck(DECK, "red", red, "ada")
        store.register_badge("08A1B2C3", "1042", "ada")
        store.set_dealer_name("1042", "Dana Dealer", time.time())
    # Yesterday at noon, local time: the day's hands are all in one day, whenever the test runs.
    clock = FloorClock()
    yesterday = clock.at(time.time()).date() - datetime.timedelta(days=1)
    start = datetime.datetime.combine(yesterday, datetime.time(12), clock.zone).timestamp()
    play(path, red, start)
    day = yesterday.isoformat()
    cookie = sign_in(web, who)[0]
    failures = []
    with chromium() as browser:
        for size in SIZES:
            with signed_in_page(browser, size, web.url, cookie) as page:
                for where in ("/registry", PATH, f"/registry/log?day={day}"):
                    page.goto(web.url.rstrip("/") + where, wait_until="load")
                    shoot(page, tmp_path / f"{who}-{size}-{where.strip('/').replace('/', '-')[:40]}.png")
                    failures += serious_violations(page, f"{who} {size} {where}")
                page.goto(web.url.rstrip("/") + f"/registry/log?day={day}", wait_until="load")
                assert page.locator("#log-hands tbody tr").count() == 3
                assert "Deck check" in page.inner_text("#log-steps")
    assert not failures, "\n".join(failures)
