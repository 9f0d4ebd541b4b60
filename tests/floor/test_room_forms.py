"""The room's own forms (dealerbox/floor/telling/room_forms.py) for each of the floor's
languages in its own zone: decimal commas and the locale's grouping (a no-break space in cs
and sk), percentages, dates and times with the zone's local name in winter and in summer,
the weekdays and months in the language; English keeps the floor's forms from before."""

from __future__ import annotations

import datetime as _dt
from zoneinfo import ZoneInfo

import pytest

from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.room_forms import RoomForms

NBSP = "\u00a0"


def at(zone: str, *moment) -> float:
    return _dt.datetime(*moment, tzinfo=ZoneInfo(zone)).timestamp()


@pytest.mark.parametrize("lang, zone, winter, summer, full", [
    ("cs", "Europe/Prague", "2. 12. 2026 14:05 SEČ", "2. 7. 2026 9:30 SELČ", "st 2. 12. 2026 14:05:03 SEČ"),
    ("sk", "Europe/Bratislava", "2. 12. 2026 14:05 SEČ", "2. 7. 2026 9:30 SELČ", "st 2. 12. 2026 14:05:03 SEČ"),
    ("de", "Europe/Berlin", "02.12.2026, 14:05 MEZ", "02.07.2026, 09:30 MESZ", "Mi. 02.12.2026, 14:05:03 MEZ"),
    ("en", "Europe/Prague", "2026-12-02 14:05 CET", "2026-07-02 09:30 CEST", "Wed 02 Dec 2026, 14:05:03 CET"),
])
def test_moments_in_the_locales_form_with_the_zones_local_name(lang, zone, winter, summer, full):
    forms = RoomForms(lang, FloorClock(zone))
    december, july = at(zone, 2026, 12, 2, 14, 5, 3), at(zone, 2026, 7, 2, 9, 30)
    assert forms.stamp(december) == winter
    assert forms.stamp(july) == summer
    assert forms.full(december) == full
    assert forms.time(december) == "14:05:03"
    assert forms.stamp(None) == forms.full(0) == forms.time(None) == ""


@pytest.mark.parametrize("lang, decimal, grouped, percent", [
    ("cs", "12,5", f"1{NBSP}234", f"12,5{NBSP}%"),
    ("sk", "12,5", f"1{NBSP}234", f"12,5{NBSP}%"),
    ("de", "12,5", "1.234", f"12,5{NBSP}%"),
    ("en", "12.5", "1,234", "12.5%"),
])
def test_numbers_with_the_locales_decimal_sign_grouping_and_percent(lang, decimal, grouped, percent):
    forms = RoomForms(lang, FloorClock("Europe/Prague"))
    assert forms.decimal(12.5) == decimal
    assert forms.decimal(12.46) == decimal  # one decimal, rounded
    assert forms.integer(1234) == grouped
    assert forms.percent(0.125) == percent
    assert forms.decimal(1234.5).startswith(grouped[:-1])  # grouped with its decimals too
    assert forms.decimal(3, digits=0) == "3"


@pytest.mark.parametrize("lang, weekday, month", [
    ("cs", "středa", "prosinec"), ("sk", "streda", "december"), ("de", "Mittwoch", "Dezember"),
    ("en", "Wednesday", "December"),
])
def test_weekdays_and_months_in_the_language(lang, weekday, month):
    forms = RoomForms(lang, FloorClock("Europe/Prague"))
    december = at("Europe/Prague", 2026, 12, 2, 14, 5)
    assert (forms.weekday(december), forms.month(december)) == (weekday, month)


def test_a_clock_change_night_keeps_its_zone_names_apart():
    # 25 Oct 2026, 02:30 happens twice in Prague: first in summer time, then in winter time.
    forms = RoomForms("cs", FloorClock("Europe/Prague"))
    first = _dt.datetime(2026, 10, 25, 0, 30, tzinfo=_dt.timezone.utc).timestamp()
    assert forms.stamp(first) == "25. 10. 2026 2:30 SELČ"
    assert forms.stamp(first + 3600) == "25. 10. 2026 2:30 SEČ"


@pytest.mark.parametrize("lang, zone", [("cs", "Europe/Prague"), ("sk", "Europe/Bratislava"),
                                        ("de", "Europe/Berlin")])
def test_a_time_of_day_told_from_its_hour_is_babels_own_through_a_year_and_both_clock_changes(lang, zone):
    forms = RoomForms(lang, FloorClock(zone))
    start = _dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc).timestamp()
    # Every 7,919.37 s for a year (every minute and second of the hour turns up), and every
    # 7th second of the three hours around each change of the clock (UTC 00:30-03:30).
    moments = [start + k * 7919.37 for k in range(4000)]
    for change in (_dt.datetime(2026, 3, 29, 0, 30), _dt.datetime(2026, 10, 25, 0, 30)):
        first = change.replace(tzinfo=_dt.timezone.utc).timestamp()
        moments += [first + s for s in range(0, 3 * 3600, 7)]
    clock = FloorClock(zone)
    for ts in moments:
        moment = clock.at(ts)
        told = {width: forms.locale.time_formats[width].apply(moment, forms.locale) for width in ("short", "medium")}
        assert forms.time(ts) == told["medium"]
        assert told["medium"] in forms.full(ts)
        assert told["short"] in forms.stamp(ts)
