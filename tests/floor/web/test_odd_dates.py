"""Dates at the ends of Python's calendar, asked of the card control log and the audit trail:
a 400 that says which years are asked for, never a 500 (an OverflowError or a year 0
worked out from them)."""

from __future__ import annotations

import urllib.parse

import pytest

from dealerbox.floor.store import Store
from tests.floor.web.test_app import WebProcess, add_users, call, sign_in
from tests.floor.web.test_odd_requests import assert_no_traceback


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    directory = tmp_path_factory.mktemp("dates")
    path = directory / "floor.sqlite"
    with Store(path):
        pass
    add_users(path)
    # West of UTC: the first day of year 1 in UTC is still year 0 here.
    with WebProcess(directory, path, time_zone="America/New_York") as web:
        yield web, sign_in(web, "ada")[0]


@pytest.mark.parametrize("day", ["9999-12-31", "0001-01-01", "0001-01-02", "3000-01-01", "1969-12-31"])
@pytest.mark.parametrize("what", ["/registry/log", "/registry/log.csv", "/registry/log.pdf"])
def test_a_day_outside_the_logs_years_is_a_400_naming_them(served, what, day):
    web, cookie = served
    status, _h, body = call(web, "GET", f"{what}?day={day}", cookie=cookie)
    assert status == 400, (what, day, status)
    assert f"day='{day}': expected a day from 2000-01-01 to 2999-12-31" in str(body)


@pytest.mark.parametrize("day", ["2000-01-01", "2999-12-31", "2026-11-29"])
def test_a_day_inside_them_is_shown_with_its_neighbours(served, day):
    web, cookie = served
    status, _h, body = call(web, "GET", f"/registry/log?day={day}", cookie=cookie)
    assert status == 200, body


@pytest.mark.parametrize("query", [
    {"from": "0001-01-01T00:00:00+14:00", "to": "0001-01-01T12:00:00+14:00"},
    {"from": "0001-01-01T00:00:00Z", "to": "0001-01-02T00:00:00Z"},
    {"from": "1969-12-31T00:00:00Z", "to": "1969-12-31T10:00:00Z"},
    {"to": "0001-01-01T10:00:00Z"},
    {"start": "0001-01-01T00:00", "end": "0001-01-01T10:00"},
    {"from": "9999-12-31T00:00:00Z", "to": "9999-12-31T10:00:00Z"},
])
@pytest.mark.parametrize("what", ["/audit", "/audit.csv", "/audit.pdf", "/api/audit"])
def test_an_audit_range_outside_the_years_is_a_400(served, what, query):
    web, cookie = served
    status, _h, body = call(web, "GET", f"{what}?{urllib.parse.urlencode(query)}", cookie=cookie)
    assert status == 400, (what, query, status, body)
    assert "expected" in str(body), body      # names the parameter and what it takes


def test_no_traceback_was_logged(served):
    web, cookie = served
    assert call(web, "GET", "/audit?from=2026-11-28T00:00:00Z&to=2026-11-29T00:00:00Z", cookie=cookie)[0] == 200
    assert_no_traceback(web)
