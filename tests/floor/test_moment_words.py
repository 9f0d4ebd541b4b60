"""A moment's time with its zone and a range of moments in each of the floor's languages: the
story's times beside each line and the shift report's title (dealerbox/floor/telling/moment_words.py)."""

from __future__ import annotations

import datetime as _dt

import pytest

from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.figure_text import span as english_span
from dealerbox.floor.telling.language import Language
from dealerbox.floor.telling.moment_words import span, time_with_zone, zone

PRAGUE = FloorClock("Europe/Prague")
WINTER = _dt.datetime(2026, 12, 2, 6, 0, tzinfo=PRAGUE.zone).timestamp()   # a Wednesday
SUMMER = _dt.datetime(2026, 7, 1, 14, 5, 3, tzinfo=PRAGUE.zone).timestamp()


@pytest.mark.parametrize(("code", "winter", "summer"), [
    ("cs", "SEČ", "SELČ"), ("sk", "SEČ", "SELČ"), ("de", "MEZ", "MESZ"), ("en", "CET", "CEST")])
def test_the_zone_is_named_as_the_language_names_it_in_winter_and_in_summer(code, winter, summer):
    language = Language(code, PRAGUE)
    assert (zone(language, WINTER), zone(language, SUMMER)) == (winter, summer)
    assert time_with_zone(language, SUMMER) == f"14:05:03 {summer}"


def test_a_range_within_a_day_names_the_day_once_and_the_zone_at_its_end():
    eight_hours = (WINTER, WINTER + 8 * 3600)
    assert span(Language("cs", PRAGUE), *eight_hours) == "st 2. 12. 2026, 6:00–14:00 SEČ"
    assert span(Language("sk", PRAGUE), *eight_hours) == "st 2. 12. 2026, 6:00 – 14:00 SEČ"
    assert span(Language("de", PRAGUE), *eight_hours) == "Mi. 02.12.2026, 06:00–14:00 MEZ"
    # English keeps the floor's forms from before.
    assert span(Language("en", PRAGUE), *eight_hours) == english_span(PRAGUE, *eight_hours)


def test_a_range_over_midnight_gives_both_ends_in_full():
    night = (WINTER - 8 * 3600, WINTER)
    assert span(Language("cs", PRAGUE), *night) == "út 1. 12. 2026 22:00 SEČ – st 2. 12. 2026 6:00 SEČ"
    assert span(Language("de", PRAGUE), *night) == "Di. 01.12.2026 22:00 MEZ bis Mi. 02.12.2026 06:00 MEZ"
