"""Every page of the floor checked with axe-core (axe-playwright-python) in Debian's
chromium, driven by Playwright (never a downloaded browser), at desktop and tablet
sizes, signed in as each role: no serious or critical violation; a screenshot of
each is kept under the test's tmp dir."""

from __future__ import annotations

import time

import os

import pytest

from dealerbox.floor.store import Store

from tests.floor.test_accounts import open_alert
from tests.floor.test_story import _filed, _played
from tests.floor.web.test_app import WebProcess, add_users, sign_in

os.environ["PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD"] = "1"
sync_api = pytest.importorskip("playwright.sync_api")
axe_api = pytest.importorskip("axe_playwright_python.sync_playwright")

CHROMIUM = "/usr/bin/chromium"
SIZES = {"desktop": (1400, 1000), "tablet": (1024, 768)}
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
    name, value = cookie.split("=", 1)
    axe = axe_api.Axe()
    failures = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for size, (width, height) in SIZES.items():
                context = browser.new_context(viewport={"width": width, "height": height})
                context.add_cookies([{"name": name, "value": value, "url": web.url}])
                page = context.new_page()
                for path in [*PAGES, "/login"]:
                    if path == "/login":
                        context.clear_cookies()
                    page.goto(web.url.rstrip("/") + path, wait_until="load")
                    shot = tmp_path / f"{size}-{path.strip('/').replace('/', '_') or 'floor'}.png"
                    page.screenshot(path=str(shot), full_page=True)
                    assert shot.stat().st_size > 1000
                    results = axe.run(page)
                    for v in results.response["violations"]:
                        if v["impact"] in ("serious", "critical"):
                            failures.append(f"{role} {size} {path}: {v['id']} ({v['impact']}): "
                                            f"{v['help']}: {[n['target'] for n in v['nodes']][:3]}")
                context.close()
        finally:
            browser.close()
    print(f"screenshots in {tmp_path}")
    assert not failures, "\n".join(failures)
