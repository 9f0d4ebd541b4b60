"""Who reads which language (dealerbox/floor/web/language.py): the room's ``[web] language``
by default; a user's own, chosen from the page header's form with the session's CSRF token,
kept with the user, on the audit trail with who changed what; nobody changes another's; the
sign-in page follows the browser's Accept-Language and offers the other three; ``<html lang>``
is the page's language, and so is the floor map's JSON's words."""

from __future__ import annotations

import re
import urllib.parse

import pytest

from dealerbox.floor.store import Store

from tests.floor.web.test_app import WebProcess, add_users, call, sign_in

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture
def web(tmp_path):
    store = tmp_path / "floor.sqlite"
    add_users(store)
    with Store(store) as s:
        s.raise_alert("T05", "offline", "the table lost its connection to the floor", None, 1796211000.0)
    with WebProcess(tmp_path, store, time_zone="Europe/Prague", language="sk") as w:
        w.store_path = store
        yield w


def choose(web, user: str, fields: dict, *, csrf: str | None = None, cookie: str | None = None):
    """POST /language as *user* (their own session) with *fields* and their CSRF token."""
    if cookie is None:
        cookie, csrf = sign_in(web, user)
    body = urllib.parse.urlencode({"csrf": csrf, **fields}).encode()
    return call(web, "POST", "/language", raw=body, cookie=cookie,
                headers={**FORM, "Origin": web.url.rstrip("/")})


def page(web, path: str, cookie: str | None = None, **headers):
    status, _h, html = call(web, "GET", path, cookie=cookie, headers={"Accept": "text/html", **headers})
    return status, html


def lang_of(html: str) -> str:
    return re.search(r'<html lang="(\w+)">', html).group(1)


def test_a_user_reads_the_rooms_language_until_they_choose_their_own_and_the_change_is_audited(web):
    cookie, csrf = sign_in(web, "vera")
    status, html = page(web, "/", cookie)
    assert status == 200 and lang_of(html) == "sk" and "Odhlásiť" in html and "Mimo spojenia pri T05" in html
    status, headers, _ = choose(web, "vera", {"language": "cs", "back": "/audit"}, csrf=csrf, cookie=cookie)
    assert status == 303 and headers["Location"] == "/audit"
    status, html = page(web, "/", cookie)
    assert lang_of(html) == "cs" and "Odhlásit" in html and "Mimo spojení u T05" in html
    assert 'value="cs" lang="cs" selected' in html  # the header's menu shows the choice
    with Store(web.store_path) as store:
        assert store.user("vera")["language"] == "cs" and store.user("sam")["language"] is None
        (row,) = [r for r in store.audit() if r["action"] == "language"]
    assert (row["who"], row["detail"]) == ("vera", "room -> cs")
    # The audit trail names the user and the change.
    status, _h, trail = call(web, "GET", "/api/audit", cookie=cookie)
    assert [(c["who"], c["words"]) for c in trail["accounts"]] == [("vera", "changed their language from room to cs")]
    status, audit_html = page(web, "/audit", cookie)
    # The page in the reader's own language: hers is Czech now, the room's (sk) and hers named in it.
    assert "změnil(a) jazyk: jazyk herního sálu → čeština" in audit_html
    # Back to the room's: the menu's first entry.
    choose(web, "vera", {"language": "room"}, csrf=csrf, cookie=cookie)
    assert lang_of(page(web, "/", cookie)[1]) == "sk"
    # The floor map's JSON tells its readable fields in the reader's language; its keys stay.
    choose(web, "vera", {"language": "de"}, csrf=csrf, cookie=cookie)
    _s, _h, floor = call(web, "GET", "/api/floor", cookie=cookie)
    assert floor["alerts"][0]["headline"] == "Offline bei T05: der Tisch hat die Verbindung zum Saal verloren"
    assert floor["alerts"][0]["kind"] == "offline"


def test_nobody_changes_another_users_language(web):
    # The form takes no user: a viewer naming the admin is refused, and nothing changes.
    status, _h, answer = choose(web, "vera", {"language": "de", "user": "ada"})
    assert status == 400 and "only their own" in answer["error"]
    status, _h, answer = choose(web, "vera", {"language": "de", "name": "ada"})
    assert status == 400
    with Store(web.store_path) as store:
        assert store.user("ada")["language"] is None and store.user("vera")["language"] is None
        assert not [r for r in store.audit() if r["action"] == "language"]
    # Without the session's CSRF token, or from another site, or signed out: refused.
    cookie, _csrf = sign_in(web, "vera")
    assert choose(web, "vera", {"language": "de"}, csrf="wrong", cookie=cookie)[0] == 403
    assert call(web, "POST", "/language", raw=b"language=de", headers=FORM)[0] == 401
    # A language the floor does not speak, and a way back to another site.
    status, _h, answer = choose(web, "sam", {"language": "fr"})
    assert status == 400 and "expected one of" in answer["error"]
    status, headers, _ = choose(web, "sam", {"language": "de", "back": "//evil.example/"})
    assert status == 303 and headers["Location"] == "/"


@pytest.mark.parametrize("accept, lang, words", [
    ("cs-CZ,cs;q=0.9,en;q=0.5", "cs", "Přihlásit"),
    ("de-AT,de;q=0.9", "de", "Anmelden"),
    ("en-US,en;q=0.9", "en", "Sign in"),
    ("fr-FR", "sk", "Prihlásiť"),  # none of the four: the room's
])
def test_the_sign_in_page_follows_the_browser_and_offers_the_other_languages(web, accept, lang, words):
    status, html = page(web, "/login", **{"Accept-Language": accept})
    assert status == 200 and lang_of(html) == lang and f">{words}</button>" in html
    offered = re.findall(r'<a href="/login\?lang=(\w+)" lang="\w+" hreflang="\w+">', html)
    assert sorted(offered) == sorted({"en", "cs", "sk", "de"} - {lang})
    status, html = page(web, f"/login?lang={offered[0]}", **{"Accept-Language": accept})
    assert lang_of(html) == offered[0]


def test_the_sign_in_pages_errors_are_in_its_language(web):
    status, _h, html = call(web, "GET", "/login", headers={"Accept-Language": "cs"})
    token = html.split('name="csrf" value="')[1].split('"')[0]
    cookie = f"dealerbox-signin={token}"
    status, _h, html = call(web, "POST", "/login", raw=f"csrf={token}&user=vera&password=nope".encode(),
                            cookie=cookie, headers={**FORM, "Accept-Language": "cs"})
    assert status == 401 and "Chybné jméno uživatele nebo heslo." in html and lang_of(html) == "cs"
    status, _h, html = call(web, "POST", "/login", raw=b"csrf=stale&user=vera&password=nope",
                            cookie=cookie, headers={**FORM, "Accept-Language": "de"})
    assert status == 403 and "Das Anmeldeformular war abgelaufen" in html
