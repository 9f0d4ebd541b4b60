"""What a page's range controls show (templates/_range.html): the shift presets as
one-click links, the ``datetime-local`` inputs' values in the floor's zone, and the
range in words for the page's title. The query they send back is read by
:func:`dealerbox.floor.web.params.page_range`.
"""

from __future__ import annotations

from urllib.parse import urlencode

from dealerbox.floor.telling.clock import PRESETS, FloorClock
from dealerbox.floor.telling.figure_text import span
from dealerbox.floor.web.params import PageRange

__all__ = ["range_controls", "PRESET_NAMES"]

#: What each preset link says.
PRESET_NAMES = {"this_shift": "This shift", "last_shift": "Last shift", "today": "Today",
                "yesterday": "Yesterday"}


def zone_name(clock: FloorClock, at: float) -> str:
    """The zone as people know it: ``Europe/Prague (CET)``, or only ``CET`` for a zone with no name."""
    short = clock.at(at).strftime("%Z")
    key = getattr(clock.zone, "key", None)
    return f"{key} ({short})" if key and key != short else short


def range_controls(clock: FloorClock, shown: PageRange) -> dict:
    """The template's ``pick``: ``presets`` (name, words, href, current), ``start`` and
    ``end`` as the inputs show them, ``zone``, ``words`` (the range for the title) and
    ``query`` (the exact range as ``from``/``to`` epoch seconds, for the files' links)."""
    return {
        "presets": [{"name": p, "words": PRESET_NAMES[p], "href": "?" + urlencode({"preset": p}),
                     "current": shown.preset == p} for p in PRESETS],
        "start": clock.input_value(shown.start), "end": clock.input_value(shown.end),
        "zone": zone_name(clock, shown.end), "words": span(clock, shown.start, shown.end),
        "preset_words": PRESET_NAMES.get(shown.preset or "", ""),
        "query": urlencode({"from": repr(float(shown.start)), "to": repr(float(shown.end))}),
    }
