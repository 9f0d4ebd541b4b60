"""Every page of the floor checked with axe-core (axe-playwright-python) in Debian's
chromium, driven by Playwright (never a downloaded browser), at desktop and tablet
sizes, signed in as each role: no serious or critical violation; a screenshot of
each is kept under the test's tmp dir."""

from __future__ import annotations

import time

import pytest

from dealerbox.floor.store import Store

from tests.floor.test_accounts import open_alert
from tests.floor.test_story import _filed, _played
from tests.floor.web.browser import SIZES, chromium, serious_violations, shoot, signed_in_page
from tests.floor.web.test_app import WebProcess, add_users, sign_in

PAGES = ["/", "/audit", "/tables/T01", "/dealers/2077", "/report", "/hands/T01/1", "/surveillance"]


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    directory = tmp_path_factory.mktemp("a11y")
    store = directory / "floor.sqlite"
    _filed(store, "T01", _played(directory, "exposed_deal_then_flop_burned_anyway", "2077"))
    add_users(store)
    with Store(store) as filed:  # a group floor: one property blind, one connected
        filed.note_bridge("north", False, time.time() - 600)
        filed.note_bridge("south", True)
    with WebProcess(directory, store) as w:
        open_alert(w)
        yield w


@pytest.mark.parametrize("role", ["vera", "sam", "ada"])
def test_every_page_has_no_serious_or_critical_violation_at_desktop_and_tablet_sizes(web, role, tmp_path):
    cookie = sign_in(web, role)[0]
    failures = []
    with chromium() as browser:
        for size in SIZES:
            with signed_in_page(browser, size, web.url, cookie) as page:
                for path in PAGES:
                    page.goto(web.url.rstrip("/") + path, wait_until="load")
                    shoot(page, tmp_path / f"{size}-{path.strip('/').replace('/', '_') or 'floor'}.png")
                    failures += serious_violations(page, f"{role} {size} {path}")
            with signed_in_page(browser, size, web.url, None) as page:
                page.goto(web.url.rstrip("/") + "/login", wait_until="load")
                shoot(page, tmp_path / f"{size}-login.png")
                failures += serious_violations(page, f"{size} /login")
    print(f"screenshots in {tmp_path}")
    assert not failures, "\n".join(failures)
