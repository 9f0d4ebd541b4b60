"""The floor's clock: local times with their zone, forms read back, and the shifts."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from dealerbox.floor.telling.clock import FloorClock

PRAGUE = ZoneInfo("Europe/Prague")


def _ts(*args, zone=PRAGUE) -> float:
    return dt.datetime(*args, tzinfo=zone).timestamp()


def test_times_read_in_the_floor_zone_with_the_zone_named():
    clock = FloorClock("Europe/Prague")
    winter, summer = _ts(2026, 11, 26, 19, 55, 3), _ts(2026, 7, 1, 9, 5, 0)
    assert clock.stamp(winter) == "2026-11-26 19:55 CET"
    assert clock.full(winter) == "Thu 26 Nov 2026, 19:55:03 CET"
    assert clock.time(winter) == "19:55:03"
    assert clock.stamp(summer) == "2026-07-01 09:05 CEST"
    assert clock.stamp(None) == clock.full(0) == ""


def test_a_form_date_time_is_read_in_the_floor_zone_and_shown_back_the_same():
    clock = FloorClock("Europe/Prague")
    ts = clock.parse_local("2026-11-26T19:55")
    assert ts == _ts(2026, 11, 26, 19, 55)
    assert clock.input_value(ts) == "2026-11-26T19:55"
    assert clock.parse_local("2026-11-26T19:55:30") == ts + 30


@pytest.mark.parametrize("text", ["", "1e13", "2026-11-26", "99999-01-01T00:00", "0001-01-01T00:00",
                                  "2026-11-26T19:55+01:00", "2026-13-01T00:00", None])
def test_anything_but_a_local_date_time_is_a_value_error(text):
    with pytest.raises(ValueError):
        FloorClock("Europe/Prague").parse_local(text)


def test_an_unknown_zone_or_bad_shift_start_is_a_value_error():
    with pytest.raises(ValueError, match="Mars/Olympus"):
        FloorClock("Mars/Olympus")
    for starts in ([], ["06:00", "06:00"], ["6am"], ["25:00"]):
        with pytest.raises(ValueError):
            FloorClock("UTC", starts)


def test_presets_are_this_and_last_shift_today_and_yesterday():
    clock = FloorClock("Europe/Prague")  # shifts at 06:00, 14:00, 22:00
    now = _ts(2026, 11, 26, 3, 30)  # the night shift that began yesterday at 22:00
    p = clock.presets(now)
    assert p["this_shift"] == (_ts(2026, 11, 25, 22, 0), now)
    assert p["last_shift"] == (_ts(2026, 11, 25, 14, 0), _ts(2026, 11, 25, 22, 0))
    assert p["today"] == (_ts(2026, 11, 26, 0, 0), now)
    assert p["yesterday"] == (_ts(2026, 11, 25, 0, 0), _ts(2026, 11, 26, 0, 0))


def test_a_shift_across_the_clock_change_lasts_its_real_length():
    clock = FloorClock("Europe/Prague", ["06:00", "18:00"])
    # 2026-10-25 03:00 CEST becomes 02:00 CET: the night shift is 13 hours long
    start, end = clock.shift_of(_ts(2026, 10, 25, 4, 0))
    assert (start, end) == (_ts(2026, 10, 24, 18, 0), _ts(2026, 10, 25, 6, 0))
    assert end - start == 13 * 3600
