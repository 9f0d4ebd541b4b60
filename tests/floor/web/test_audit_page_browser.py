"""The audit trail over two days in Debian's chromium (Playwright, never a downloaded
browser) at desktop and tablet sizes: axe-core finds no serious or critical violation,
each time shows its date and zone, a hand's link opens its story, a preset is one click,
and the files' links carry the range shown. Screenshots are kept to be looked at
($FLOOR_SCREENSHOTS, else the test's tmp dir)."""

from __future__ import annotations

from pathlib import Path

from tests.floor.web.browser import SIZES, chromium, serious_violations, shoot, shot_path, signed_in_page
from tests.floor.web.test_app import sign_in
from tests.floor.web.test_audit_page import CLEARS, CLOCK, DAY, END, FULL, NEXT, START, web  # noqa: F401


def test_the_audit_trail_over_two_days_passes_axe_and_reads_as_an_auditor_needs(web, tmp_path):
    cookie = sign_in(web, "sam")[0]
    failures = []
    path = f"/audit?start={CLOCK.input_value(START)}&end={CLOCK.input_value(END)}"
    with chromium() as browser:
        for size, (width, _height) in SIZES.items():
            with signed_in_page(browser, size, web.url, cookie) as page:
                errors = []
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                response = page.goto(web.url.rstrip("/") + path, wait_until="load")
                assert response.status == 200
                shoot(page, Path(shot_path(tmp_path, f"audit-{size}.png")))
                failures += serious_violations(page, f"{size} /audit")
                assert page.evaluate("document.documentElement.scrollWidth") <= width, size
                title = page.locator("#audit-title").inner_text()
                assert f"{DAY:%d %b %Y}" in title and f"{NEXT:%d %b %Y}" in title and "CET" in title, title
                rows = page.locator("#audit tbody tr")
                assert rows.count() == 3
                whens = [rows.nth(i).locator("th").inner_text() for i in range(3)]
                assert whens == [CLOCK.full(c[5]) for c in reversed(CLEARS[:3])]
                assert all(FULL.fullmatch(w) for w in whens), whens
                # The evening's clear on one date, the morning's on the next.
                assert {w.split(",")[0][4:] for w in whens} == {f"{DAY:%d %b %Y}", f"{NEXT:%d %b %Y}"}
                assert page.get_by_role("cell", name="Floor call at T01: four-card flop").count() == 1
                # The files carry exactly the range shown.
                href = page.get_by_role("link", name="Download CSV").get_attribute("href")
                assert href == f"/audit.csv?from={START!r}&to={END!r}"
                assert page.get_by_role("link", name="Download PDF").is_visible()
                # The hand's link opens its story.
                page.get_by_role("link", name="the hand").click()
                page.wait_for_url("**/hands/T01/1")
                assert page.locator("main").inner_text().strip()
                # A preset is one click, and says so.
                page.goto(web.url.rstrip("/") + path, wait_until="load")
                page.get_by_role("link", name="Yesterday").click()
                page.wait_for_url("**preset=yesterday")
                assert "(yesterday)" in page.locator("#audit-title").inner_text()
                assert page.locator("#range-start").input_value().endswith("T00:00")
                failures += serious_violations(page, f"{size} /audit?preset=yesterday")
                assert not errors, errors
    print(f"screenshots in {shot_path(tmp_path, '')}")
    assert not failures, "\n".join(failures)
