"""The refusal page as a Czech reader's browser shows it: Debian's chromium driven by Playwright
at desktop and tablet sizes opens a hand the floor does not hold and a range that ends before it
starts. The page is a 404 (a 400), ``<html lang="cs">``, in Czech words, fits the screen, leads
back to the floor map, and axe-core finds no serious or critical violation. The screenshots are
kept ($FLOOR_SCREENSHOTS, else tmp)."""

from __future__ import annotations

import pytest

from dealerbox.floor.store import Store
from tests.floor.web.browser import SIZES, chromium, serious_violations, shot_path, signed_in_page
from tests.floor.web.test_app import WebProcess, add_users, sign_in

#: What a Czech reader opens, the status it is refused with, and the words the page says.
REFUSED = {
    "missing-hand": ("/hands/T01/999", 404, ("Nenalezeno", "stůl T01 takovou hru nemá")),
    "backwards-range": ("/report?start=2026-11-27T10:00&end=2026-11-26T10:00", 400, (
        "Chybný požadavek",
        "začátek období (27. 11. 2026 10:00 SEČ) musí být před jeho koncem (26. 11. 2026 10:00 SEČ)")),
}


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    """The web view in Prague's zone, its room English, vera the viewer reading Czech."""
    directory = tmp_path_factory.mktemp("refusals-browser")
    store = directory / "floor.sqlite"
    add_users(store, ("vera",))
    with Store(store) as opened:
        opened.set_user_language("vera", "cs", 0.0)
    with WebProcess(directory, store, time_zone="Europe/Prague") as served:
        yield served


@pytest.mark.parametrize("size", list(SIZES))
def test_a_czech_reader_is_refused_on_a_czech_page_that_axe_finds_no_fault_in(web, size, tmp_path):
    cookie = sign_in(web, "vera")[0]
    failures = []
    with chromium() as browser, signed_in_page(browser, size, web.url, cookie) as page:
        for name, (where, status, words) in REFUSED.items():
            response = page.goto(web.url.rstrip("/") + where, wait_until="load")
            assert response.status == status, (where, response.status)
            assert page.locator("html").get_attribute("lang") == "cs", where
            assert page.locator("#refused-title").inner_text() == words[0], where
            assert page.locator("#refused-reason").inner_text() == words[1], where
            back = page.locator("#refused-back")
            assert back.inner_text() == "Zpět na mapu sálu" and back.get_attribute("href") == "/", where
            assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size][0], (where, size)
            page.screenshot(path=shot_path(tmp_path, f"refused-cs-{name}-{size}.png"), full_page=True)
            failures += serious_violations(page, f"cs {size} {where}")
        # The way back works: the floor map, in Czech.
        page.click("#refused-back")
        page.wait_for_url(web.url)
        assert page.locator("html").get_attribute("lang") == "cs"
    assert not failures, "\n".join(failures)
