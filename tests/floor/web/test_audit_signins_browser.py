"""Sign-ins on the audit trail in Debian's chromium (Playwright, never a downloaded browser):
a supervisor signs in through the form, signs out, somebody fails with a name that is markup
and a right-to-left override, and the admin who signs in next reads the three (and their own
sign-in) on /audit, the name tried shown as text; axe-core finds no serious or critical
violation at desktop and tablet sizes (issue 47, item 4)."""

from __future__ import annotations

from pathlib import Path

from tests.floor.web.browser import SIZES, chromium, serious_violations, shoot, shot_path
from tests.floor.web.test_app import PASSWORDS, WebProcess, add_users

PROBE = "<i>mallory</i>\u202eevil"


def _sign_in(page, base: str, user: str, password: str) -> None:
    page.goto(base + "login", wait_until="load")
    page.get_by_label("User").fill(user)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state("load")


def test_a_sign_in_a_failed_one_and_a_sign_out_are_on_the_audit_trail(tmp_path):
    store = tmp_path / "floor.sqlite"
    add_users(store)
    failures = []
    with WebProcess(tmp_path, store) as web, chromium() as browser:
        base = web.url
        for size, (width, height) in SIZES.items():
            context = browser.new_context(viewport={"width": width, "height": height})
            page = context.new_page()
            errors = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            _sign_in(page, base, "sam", PASSWORDS["sam"])
            assert page.url == base, page.url          # the floor map: signed in
            page.get_by_role("button", name="Sign out").click()
            page.wait_for_url("**/login")
            _sign_in(page, base, PROBE, "a guess")
            assert "wrong user name or password" in page.locator("#error").inner_text()
            _sign_in(page, base, "ada", PASSWORDS["ada"])
            page.goto(base + "audit", wait_until="load")   # this shift: the range the sign-ins fall in
            shoot(page, Path(shot_path(tmp_path, f"audit-signins-{size}.png")))
            failures += serious_violations(page, f"{size} /audit")
            assert page.evaluate("document.documentElement.scrollWidth") <= width, size
            rows = page.locator("#signins tbody tr")
            # Newest first: ada's sign-in, the failure, sam's sign-out and sign-in (at desktop size,
            # the same four before them from the first round).
            mine = [[c.strip() for c in rows.nth(i).locator("th, td").all_inner_texts()] for i in range(4)]
            assert [r[1:] for r in mine] == [
                ["ada", "signed in", "with a password", "127.0.0.1", "–"],
                [PROBE.replace("\u202e", "\\u202e"), "failed to sign in", "with a password", "127.0.0.1",
                 "the password was wrong, or no user has that name"],
                ["sam", "signed out", "with a password", "127.0.0.1", "–"],
                ["sam", "signed in", "with a password", "127.0.0.1", "–"]], mine
            assert all(r[0].endswith(" UTC") and ", " in r[0] for r in mine), mine   # date, time and zone
            assert page.locator("#signins i").count() == 0                         # the markup stayed text
            heading = page.get_by_role("heading", name="Sign-ins and sign-outs", exact=False).inner_text()
            assert heading == f"Sign-ins and sign-outs ({4 if size == 'desktop' else 8})", heading
            # The failed sign-in's own answer is a 401, which chromium logs: nothing else may be.
            assert [e for e in errors if "status of 401" not in e] == [] and len(errors) <= 1, errors
            context.close()
    print(f"screenshots in {shot_path(tmp_path, '')}")
    assert not failures, "\n".join(failures)
