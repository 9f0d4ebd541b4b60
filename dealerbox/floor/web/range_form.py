"""What a page's range controls show (templates/_range.html): the shift presets as
one-click links, the ``datetime-local`` inputs' values in the floor's zone, and the
range in words for the page's title. The query they send back is read by
:func:`dealerbox.floor.web.params.page_range`.
"""

from __future__ import annotations

from urllib.parse import urlencode

from dealerbox.floor.telling.catalogs import N_
from dealerbox.floor.telling.clock import PRESETS, FloorClock
from dealerbox.floor.telling.figure_text import span as english_span
from dealerbox.floor.telling.language import Language
from dealerbox.floor.telling.moment_words import span, zone
from dealerbox.floor.web.params import PageRange

__all__ = ["range_controls", "PRESET_NAMES"]

#: What each preset link says (in English: the template says it in its reader's language).
PRESET_NAMES = {"this_shift": N_("This shift"), "last_shift": N_("Last shift"), "today": N_("Today"),
                "yesterday": N_("Yesterday")}


def zone_name(clock: FloorClock, at: float, language: Language | None = None) -> str:
    """The zone as people know it: ``Europe/Prague (CET)``, ``Europe/Prague (SEČ)`` for a Czech
    reader, or only the short name for a zone with no name."""
    short = zone(language, at) if language is not None else clock.at(at).strftime("%Z")
    key = getattr(clock.zone, "key", None)
    return f"{key} ({short})" if key and key != short else short


def range_controls(clock: FloorClock, shown: PageRange, language: Language | None = None) -> dict:
    """The template's ``pick``: ``presets`` (name, words, href, current), ``start`` and
    ``end`` as the inputs show them, ``zone``, ``words`` (the range for the title, in
    *language*: the reader's; else English) and ``query`` (the exact range as ``from``/``to``
    epoch seconds, for the files' links). The presets' words are the catalog's English: the
    template says them in its reader's language."""
    return {
        "presets": [{"name": p, "words": PRESET_NAMES[p], "href": "?" + urlencode({"preset": p}),
                     "current": shown.preset == p} for p in PRESETS],
        "start": clock.input_value(shown.start), "end": clock.input_value(shown.end),
        "zone": zone_name(clock, shown.end, language),
        "words": span(language, shown.start, shown.end) if language is not None
        else english_span(clock, shown.start, shown.end),
        "preset_words": PRESET_NAMES.get(shown.preset or "", ""),
        "query": urlencode({"from": repr(float(shown.start)), "to": repr(float(shown.end))}),
    }
