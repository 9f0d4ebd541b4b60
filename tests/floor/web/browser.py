"""What the floor's browser tests share: Debian's chromium driven by Playwright (launched
through ``executable_path``, never a downloaded browser), the sizes a pit boss reads the
pages at, a page signed in with a session cookie, and axe-core's serious findings."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

os.environ["PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD"] = "1"

CHROMIUM = "/usr/bin/chromium"
#: A desktop in the surveillance room and a tablet carried on the floor.
SIZES = {"desktop": (1400, 1000), "tablet": (1024, 768)}


@contextlib.contextmanager
def chromium():
    """Debian's chromium, headless, closed on leaving; the test skips without Playwright."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def signed_in_page(browser, size: str, url: str, cookie: str | None):
    """A page at *size* (a key of :data:`SIZES`) carrying *cookie* (``name=value``) for *url*."""
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height})
    if cookie:
        name, value = cookie.split("=", 1)
        context.add_cookies([{"name": name, "value": value, "url": url}])
    try:
        yield context.new_page()
    finally:
        context.close()


def shot_path(tmp_path, name: str) -> str:
    """Where a screenshot goes: $FLOOR_SCREENSHOTS (a directory) to keep them, else the test's tmp."""
    directory = os.environ.get("FLOOR_SCREENSHOTS") or str(tmp_path)
    os.makedirs(directory, exist_ok=True)
    return os.path.join(directory, name)


def shoot(page, path: Path) -> Path:
    """A full-page screenshot kept at *path* (tests print where, people look at them)."""
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 1000
    return path


def serious_violations(page, label: str) -> list[str]:
    """axe-core's serious and critical findings on *page*, one line each, led by *label*."""
    axe_api = pytest.importorskip("axe_playwright_python.sync_playwright")
    return [f"{label}: {v['id']} ({v['impact']}): {v['help']}: {[n['target'] for n in v['nodes']][:3]}"
            for v in axe_api.Axe().run(page).response["violations"] if v["impact"] in ("serious", "critical")]
