"""A refusal a person meets is a page of the site in their language; a program keeps the English
JSON (issue 45; dealerbox/floor/web/refusal_page.py). Czech readers (the room's language is
English) ask for a hand the floor does not hold, for a change their role may not make, for a
range that ends before it starts, and for a badge the registry refuses: a browser's request
(``Accept: text/html``) gets an HTML page with ``lang="cs"``, the Czech words and the status;
the same request without HTML, and the JSON API's, get ``{"error": ...}`` in English. Every
refusal of the web view and of the registry is worded as a catalog message (the one way)."""

from __future__ import annotations

import ast
import html
import re
from pathlib import Path
from urllib.parse import quote

import pytest

from dealerbox.floor.store import Store
from tests.floor.web.test_app import ROOT, WebProcess, add_users, call, sign_in

#: What a browser sends for a page: HTML first (Chromium's Accept), Czech asked for.
BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
           "Accept-Language": "cs-CZ,cs;q=0.9,en;q=0.8"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
ZONE = "Europe/Prague"


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    """The web view over an empty store in Prague's zone, its room English; vera the viewer and
    ada the admin read Czech, sam the supervisor the room's English."""
    directory = tmp_path_factory.mktemp("refusals")
    store = directory / "floor.sqlite"
    add_users(store)
    with Store(store) as opened:
        opened.set_user_language("vera", "cs", 0.0)
        opened.set_user_language("ada", "cs", 0.0)
    with WebProcess(directory, store, time_zone=ZONE, request_timeout_s=5) as served:
        yield served


def page_of(body: str) -> dict:
    """The refusal page's parts: ``lang``, its heading, the reason, the link back (unescaped)."""
    assert isinstance(body, str) and body.startswith("<!doctype html>"), body

    def one(pattern):
        found = re.search(pattern, body, re.S)
        assert found, (pattern, body)
        return html.unescape(found.group(1))
    return {"lang": one(r'<html lang="([^"]+)"'), "title": one(r'<h2 id="refused-title">(.*?)</h2>'),
            "reason": one(r'<p class="error" id="refused-reason">(.*?)</p>'),
            "back": one(r'<a href="([^"]+)" id="refused-back">'), "head": one(r"<title>(.*?)</title>"),
            "back_words": one(r'id="refused-back">(.*?)</a>')}


def test_a_missing_hand_is_a_czech_page_for_a_czech_reader_and_english_json_for_a_program(web):
    cookie = sign_in(web, "vera")[0]
    status, headers, body = call(web, "GET", "/hands/T01/999", headers=BROWSER, cookie=cookie)
    assert status == 404 and headers["Content-Type"].startswith("text/html")
    page = page_of(body)
    assert page == {"lang": "cs", "title": "Nenalezeno", "reason": "stůl T01 takovou hru nemá", "back": "/",
                    "head": "Nenalezeno: dealerbox – herní sál", "back_words": "Zpět na mapu sálu"}, page
    assert 'id="who">vera (pozorovatel)' in body   # the site's header, the user signed in
    # A program asks for the same, or for the JSON of it: the English it has always read.
    assert call(web, "GET", "/hands/T01/999", cookie=cookie)[::2] == (
        404, {"error": "table T01 has no such hand"})
    assert call(web, "GET", "/api/hands/T01/999", headers=BROWSER, cookie=cookie)[::2] == (
        404, {"error": "table T01 has no such hand"})
    # A table id of the wrong shape: a 400 in words, the value given shown.
    status, _h, body = call(web, "GET", "/hands/bad%20id/1", headers=BROWSER, cookie=cookie)
    page = page_of(body)
    assert status == 400 and page["title"] == "Chybný požadavek"
    assert page["reason"] == "'bad id' není označení stolu", page


def test_a_change_the_role_may_not_make_is_refused_in_czech_and_in_english_to_a_program(web):
    cookie, csrf = sign_in(web, "vera")
    body = f"uid=08A1B2C3&dealer=1042&csrf={csrf}".encode()
    status, headers, page = call(web, "POST", "/registry/badges", raw=body, headers={**FORM, **BROWSER},
                                 cookie=cookie)
    assert status == 403 and headers["Content-Type"].startswith("text/html")
    assert page_of(page)["lang"] == "cs" and page_of(page)["title"] == "Nepovoleno"
    assert page_of(page)["reason"] == "vera (pozorovatel) toto udělat nesmí", page_of(page)
    assert call(web, "POST", "/registry/badges", raw=body, headers=FORM, cookie=cookie)[::2] == (
        403, {"error": "vera (viewer) may not do this"})
    # The JSON API answers a browser in JSON too: it is a program's.
    assert call(web, "GET", "/api/users", headers=BROWSER, cookie=cookie)[::2] == (
        403, {"error": "vera (viewer) may not do this"})
    # A supervisor may receive a deck but not register one: the page's own refusal, worded the same way.
    sam, sam_csrf = sign_in(web, "sam")
    body = f"action=register&name=Blue&back=blue&tags=&csrf={sam_csrf}".encode()
    status, _h, page = call(web, "POST", "/registry/decks", raw=body, headers={**FORM, **BROWSER}, cookie=sam)
    assert status == 403 and page_of(page)["lang"] == "en" and page_of(page)["title"] == "Not allowed"
    assert page_of(page)["reason"] == "sam (supervisor) may receive a sealed deck, not register its tags"


def test_a_bad_range_says_what_was_expected_in_czech_with_czech_moments(web):
    cookie = sign_in(web, "vera")[0]
    backwards = "/report?start=2026-11-27T10:00&end=2026-11-26T10:00"
    status, _h, body = call(web, "GET", backwards, headers=BROWSER, cookie=cookie)
    page = page_of(body)
    assert status == 400 and page["lang"] == "cs" and page["title"] == "Chybný požadavek"
    assert page["reason"] == ("začátek období (27. 11. 2026 10:00 SEČ) musí být před jeho koncem "
                              "(26. 11. 2026 10:00 SEČ)"), page
    status, _h, answer = call(web, "GET", backwards.replace("/report", "/api/report"), headers=BROWSER, cookie=cookie)
    assert status == 400 and re.fullmatch(r"from \(\d+\.0\) must be before to \(\d+\.0\)", answer["error"]), answer
    # A moment of the API's shape, without its offset: what is wrong, in Czech.
    status, _h, body = call(web, "GET", "/audit?to=2026-11-24T18:00:00", headers=BROWSER, cookie=cookie)
    assert status == 400 and page_of(body)["reason"] == (
        "to='2026-11-24T18:00:00': chybí posun vůči UTC: přidejte Z nebo posun, např. +01:00"), page_of(body)
    status, _h, answer = call(web, "GET", "/audit.csv?to=2026-11-24T18:00:00", cookie=cookie)
    assert status == 400 and answer == {"error": "to='2026-11-24T18:00:00': no UTC offset: add Z or one such as +01:00"}
    status, _h, body = call(web, "GET", "/registry/log?day=yesterday", headers=BROWSER, cookie=cookie)
    assert status == 400 and page_of(body)["reason"] == (
        "day='yesterday': očekáván den od 2000-01-01 do 2999-12-31, RRRR-MM-DD"), page_of(body)


def test_before_sign_in_a_page_goes_to_sign_in_and_a_form_is_refused_in_the_browsers_language(web):
    status, headers, _body = call(web, "GET", "/hands/T01/999", headers=BROWSER)
    assert status == 303 and headers["Location"] == "/login"
    status, _h, body = call(web, "POST", "/logout", raw=b"csrf=x", headers={**FORM, **BROWSER})
    page = page_of(body)
    assert status == 401 and page["lang"] == "cs" and page["title"] == "Nejste přihlášeni"
    assert page["reason"] == "nejdřív se přihlaste" and page["back"] == "/login" and page["back_words"] == "Přihlásit"
    assert call(web, "POST", "/logout", raw=b"csrf=x", headers=FORM)[::2] == (401, {"error": "sign in first"})


def test_an_address_no_route_has_is_a_czech_page_behind_the_sign_in_and_plain_text_to_a_program(web):
    cookie = sign_in(web, "vera")[0]
    status, _h, body = call(web, "GET", "/no/such/page", headers=BROWSER, cookie=cookie)
    page = page_of(body)
    assert status == 404 and page["lang"] == "cs" and page["title"] == "Nenalezeno"
    assert page["reason"] == "herní sál nemá stránku '/no/such/page'" and page["back"] == "/", page
    status, headers, body = call(web, "GET", "/logout", headers=BROWSER, cookie=cookie)
    assert status == 405 and headers["Allow"] == "POST" and page_of(body)["reason"] == "'/logout' nepřijímá GET"
    # Without a session, a browser goes to sign in; it learns nothing of the floor's addresses.
    status, headers, _body = call(web, "GET", "/no/such/page", headers=BROWSER)
    assert status == 303 and headers["Location"] == "/login"
    # A program, or a browser at an API address: Starlette's own plain answer, as ever.
    assert call(web, "GET", "/no/such/page", cookie=cookie)[::2] == (404, "Not Found")
    assert call(web, "GET", "/api/no/such", headers=BROWSER, cookie=cookie)[::2] == (404, "Not Found")


@pytest.mark.parametrize("fields, said", [
    ({"uid": "XYZ", "dealer": "1042"},
     "UID štítku má 4, 7 nebo 10 bajtů v šestnáctkové soustavě, např. 04A3C6CAE26180, ne 'XYZ'"),
    ({"uid": "08A1B2C3", "dealer": "no such dealer!"},
     "číslo krupiéra má 1 až 10 písmen, číslic, „-“ nebo „_“ (osobní číslo), ne 'no such dealer!'"),
])
def test_a_badge_the_registry_refuses_is_said_in_czech_on_the_registry_page(web, fields, said):
    cookie, csrf = sign_in(web, "ada")
    body = "&".join(f"{k}={quote(v)}" for k, v in {**fields, "csrf": csrf}.items()).encode()
    status, _h, page = call(web, "POST", "/registry/badges", raw=body, headers={**FORM, **BROWSER}, cookie=cookie)
    refused = re.search(r'<p class="refused" id="refused" role="alert">(.*?)</p>', page)
    assert status == 400 and '<html lang="cs">' in page and refused, page
    assert html.unescape(refused.group(1)) == f"Neprovedeno: {said}"


#: Refusals worded elsewhere, for a program's route only (``/api/users``: the accounts' English).
PROGRAMS_ONLY = {("app.py", "str(exc)")}


def _refusals(path: Path, name: str):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
            yield node


@pytest.mark.parametrize("name, files", [
    ("Refused", sorted((ROOT / "dealerbox/floor/web").glob("*.py"))),
    ("RegistryRefused", [ROOT / "dealerbox/floor/store/registry.py", ROOT / "dealerbox/floor/web/registry_pages.py"]),
])
def test_every_refusal_is_a_catalog_message_with_its_facts(name, files):
    """The one way: the message is ``N_("...")`` (or a module's constant of one, or a table of
    them), its values are keywords; never an f-string or a text made before it is told."""
    seen, odd = 0, []
    for path in files:
        for call_node in _refusals(path, name):
            message = call_node.args[1] if name == "Refused" else call_node.args[0]
            seen += 1
            if isinstance(message, ast.Call) and getattr(message.func, "id", "") == "N_" \
                    and isinstance(message.args[0], ast.Constant):
                continue
            if isinstance(message, ast.Subscript):
                message = message.value   # a table of them, one per status
            if isinstance(message, ast.Name) and (message.id.isupper() or message.id == "refusal"):
                continue
            if (path.name, ast.unparse(message)) not in PROGRAMS_ONLY:
                odd.append(f"{path.name}:{call_node.lineno}: {ast.unparse(call_node)[:100]}")
    assert seen > 20 and not odd, "\n".join(odd)
