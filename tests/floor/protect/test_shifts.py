"""The house's shifts in its own zone, across a change of the clock."""

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from dealerbox.errors import UsageError
from dealerbox.floor.protect.shifts import shift_of

PRAGUE = ZoneInfo("Europe/Prague")


def at(*args, zone=PRAGUE):
    return dt.datetime(*args, tzinfo=zone).timestamp()


def test_a_shift_starts_at_the_house_s_hours_not_at_utc_windows():
    shift = shift_of(at(2026, 11, 29, 13, 59), PRAGUE)
    assert (shift.start, shift.end) == (at(2026, 11, 29, 6), at(2026, 11, 29, 14))
    assert shift.label == "2026-11-29 06:00 to 14:00 CET"
    night = shift_of(at(2026, 11, 30, 1, 30), PRAGUE)
    assert (night.start, night.end) == (at(2026, 11, 29, 22), at(2026, 11, 30, 6))


def test_the_night_the_clocks_go_back_has_a_nine_hour_shift():
    night = shift_of(at(2026, 10, 25, 3, 30), PRAGUE)
    assert night.end - night.start == 9 * 3600


def test_bad_starts_are_refused():
    with pytest.raises(UsageError, match="local hours"):
        shift_of(0.0, PRAGUE, starts=(25,))
