"""The table's, the dealer's and the shift report's pages in Debian's chromium (Playwright,
never a downloaded browser) at desktop and tablet sizes: axe-core finds no serious or
critical violation, a preset is one click, the date-time inputs take a local time and
show it back, the print button is there; a screenshot of each is kept under the test's
tmp dir to be looked at."""

from __future__ import annotations

import pytest

from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.store import Store

from tests.floor.test_figures import T0, filled_store, room  # noqa: F401
from tests.floor.web.browser import SIZES, chromium, serious_violations, shoot, signed_in_page
from tests.floor.web.test_app import WebProcess, add_users, sign_in

ZONE = "Europe/Prague"
START, END = T0 - 600.0, T0 + 11 * 3600.0


@pytest.fixture(scope="module")
def web(tmp_path_factory, room):
    directory = tmp_path_factory.mktemp("figures-browser")
    path = filled_store(directory / "floor.sqlite", room)
    add_users(path, ("sam",))
    with Store(path) as store:
        store.set_dealer_name("1042", "Jana Nováková", START)
    with WebProcess(directory, path, time_zone=ZONE) as w:
        yield w


def _pages():
    clock = FloorClock(ZONE)
    local = f"start={clock.input_value(START)}&end={clock.input_value(END)}"
    return {"table": f"/tables/T01?{local}", "dealer": f"/dealers/1042?{local}", "report": f"/report?{local}",
            "empty-table": "/tables/T09?preset=yesterday"}


def test_the_figures_pages_pass_axe_and_work_by_hand_at_desktop_and_tablet_sizes(web, tmp_path):
    cookie = sign_in(web, "sam")[0]
    failures = []
    clock = FloorClock(ZONE)
    with chromium() as browser:
        for size, (width, _height) in SIZES.items():
            with signed_in_page(browser, size, web.url, cookie) as page:
                errors = []
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                for what, path in _pages().items():
                    response = page.goto(web.url.rstrip("/") + path, wait_until="load")
                    assert response.status == 200, (what, response.status)
                    shoot(page, tmp_path / f"{size}-{what}.png")
                    failures += serious_violations(page, f"{size} {what}")
                    # Nothing runs off the side of a tablet: the page is no wider than the screen.
                    assert page.evaluate("document.documentElement.scrollWidth") <= width, (size, what)
                # A preset is one click; the title says it and the inputs show its range.
                page.goto(web.url.rstrip("/") + _pages()["table"], wait_until="load")
                page.get_by_role("link", name="Today").click()
                page.wait_for_url("**preset=today")
                assert "Table T01, today: " in page.locator("#pit-title").inner_text()
                assert page.locator("#range-start").input_value().endswith("T00:00")
                # A local date-time typed in is read in the floor's zone and shown back.
                page.locator("#range-start").fill(clock.input_value(START))
                page.locator("#range-end").fill(clock.input_value(END))
                page.get_by_role("button", name="Show").click()
                page.wait_for_load_state("load")
                assert page.locator("#range-start").input_value() == clock.input_value(START)
                assert "CET" in page.locator("#pit-title").inner_text()
                page.goto(web.url.rstrip("/") + _pages()["report"], wait_until="load")
                assert page.get_by_role("button", name="Print").is_visible()
                assert page.get_by_role("link", name="Download PDF").is_visible()
                assert page.locator("#report-alerts a", has_text="hand").count() > 0
                page.emulate_media(media="print")
                shoot(page, tmp_path / f"{size}-report-print.png")
                assert not page.locator("form.range").is_visible() and not page.locator("#report-files").is_visible()
                assert not errors, errors
    print(f"screenshots in {tmp_path}")
    assert not failures, "\n".join(failures)
