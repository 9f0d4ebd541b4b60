"""The pit boss's charts, drawn on the server as SVG with pygal: no script, no CDN,
so the pages work on a closed casino network. Each chart is inline SVG whose
``<style>`` carries the page's CSP nonce.

Drawn to be read: bars from zero (never a y axis that starts at 50), every series in
the legend under its full name (one with no hands says so), x labels in the floor's
zone and never more than :data:`MAX_LABELS` of them, hours grouped into days when a
range is longer than :data:`HOURLY_UP_TO_S`. A range with no hands gets a sentence
instead of an empty chart; one with hands in only one hour (day), a sentence under its bar.
"""

from __future__ import annotations

import math
import re
import sys

import pygal
from babel.dates import format_skeleton
from markupsafe import escape
from pygal.style import DarkStyle

from dealerbox.floor.telling.catalogs import SOURCE_LANGUAGE
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.figure_text import decimal_in
from dealerbox.floor.telling.language import Language
from dealerbox.floor.telling.moment_words import zone as zone_in

# pygal puts an import hook on sys.meta_path for its map plugins (pygal.maps.*), one with
# no find_spec: every later import that misses (fpdf2's optional uharfbuzz) then warns
# (ImportWarning). The floor draws no maps: take the hook off again.
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__module__ != "pygal"]

__all__ = ["hands_per_hour_chart", "irregularity_chart", "buckets", "y_labels", "thinned", "MAX_LABELS",
           "HOURLY_UP_TO_S", "LINE_RUNS", "marks_thinned"]

#: At most this many labels on the x axis (the others are left out, the bars stay).
MAX_LABELS = 12
#: A range up to this long is charted per hour; a longer one per day.
HOURLY_UP_TO_S = 48 * 3600.0
#: A line over many hands is drawn from at most this many runs of them (two points a run): a
#: chart 760 pixels wide shows no more, and pygal's cost is per point (a shift's 30 dealers'
#: charts of some 670 hands each took most of the Surveillance page's 11 s on a loaded floor).
LINE_RUNS = 80
#: The series' colours: distinct on the dark page, and for the common colour blindnesses.
COLOURS = ("#56b4e9", "#e69f00", "#cc79a7", "#009e73")

_SCRIPT = re.compile(r"<script\b.*?</script>", re.S)
_TOOLTIP = re.compile(r'<g [^>]*class="tooltip">.*?<g class="text" /></g>', re.S)
_STYLE = DarkStyle(colors=COLOURS, background="#111", plot_background="#181818", font_family="sans-serif",
                   foreground="#eee", foreground_strong="#fff", foreground_subtle="#888",
                   title_font_size=16, legend_font_size=14, label_font_size=12,
                   major_label_font_size=12, value_font_size=12)


def _reader(clock: FloorClock, language: Language | None) -> Language:
    """Whoever reads the chart: *language*, else English in *clock*'s zone."""
    return language if language is not None else Language(SOURCE_LANGUAGE, clock)


def _day_label(language: Language, moment) -> str:
    # English keeps ``Fri 27 Nov``; the others the locale's short day (``pá 27. 11.``, ``Fr., 27. Nov.``).
    if language.code == SOURCE_LANGUAGE:
        return f"{moment:%a %d %b}"
    return format_skeleton("MMMEd", moment, locale=language.forms.locale)


def buckets(hours: list[dict], clock: FloorClock, language: Language | None = None) -> tuple[list[dict], str]:
    """*hours* (``figures.hourly``) as the chart's bars: per hour, or per local day when
    they span more than :data:`HOURLY_UP_TO_S`; each with its label in the floor's zone
    (in *language*, the reader's; none: English), its hands and its rates recomputed from its
    sums. Also the axis' name (``hour (CET)``, ``hodina (SEČ)``)."""
    language = _reader(clock, language)
    if not hours:
        return [], ""
    daily = hours[-1]["hour"] - hours[0]["hour"] >= HOURLY_UP_TO_S
    groups: dict[str, dict] = {}
    for h in hours:
        moment = clock.at(h["hour"])
        label = _day_label(language, moment) if daily else f"{moment:%H:%M}"
        key = f"{moment:%Y-%m-%d}" if daily else str(h["hour"])
        group = groups.setdefault(key, {"start": h["hour"], "label": label, "hands": 0,
                                        "dealing_seconds": 0.0, "irregularities": 0})
        group["hands"] += h["hands"]
        group["dealing_seconds"] += h["dealing_seconds"]
        group["irregularities"] += h["irregularities"]
    out = list(groups.values())
    for g in out:
        g["hands_per_hour"] = g["hands"] * 3600.0 / g["dealing_seconds"] if g["dealing_seconds"] > 0 else None
        g["irregularities_per_100_hands"] = g["irregularities"] * 100.0 / g["hands"] if g["hands"] else None
    zone = zone_in(language, hours[0]["hour"])
    _ = language.gettext
    return out, (_("day (%(zone)s)") if daily else _("hour (%(zone)s)")) % {"zone": zone}


def y_labels(values) -> list[float]:
    """The y axis' labels: from 0 in a round step (1, 2 or 5 times a power of ten), five or
    six of them, the last at or a little above the highest value."""
    high = max([v for v in values if v is not None] or [0.0])
    step = 1.0
    if high > 0:
        power = 10.0 ** math.floor(math.log10(high / 5))
        step = next(m * power for m in (1, 2, 5, 10) if m * power * 5 >= high)
    top = max(step, math.ceil(high / step) * step)
    if top - high < step * 0.2 and high > 0:
        top += step
    return [round(i * step, 6) for i in range(round(top / step) + 1)]


def _tick_words(language: Language, ticks: list[float]):
    """The y labels' formatter in *language* (``0,5``): as many decimals as the step needs;
    English keeps pygal's own (``0``, ``0.5``)."""
    if language.code == SOURCE_LANGUAGE:
        return {}
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    digits = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    return {"value_formatter": lambda v: language.forms.decimal(v, digits)}


def _chart(title: str, bars: list[dict], axis: str, y_title: str, values, language: Language) -> pygal.Bar:
    every = max(1, math.ceil(len(bars) / MAX_LABELS))
    ticks = y_labels(values)
    return pygal.Bar(**_tick_words(language, ticks),
        title=title, x_labels=[b["label"] for b in bars], x_title=axis, y_title=y_title,
        range=(0, ticks[-1]), y_labels=ticks, include_x_axis=True, x_labels_major_every=every,
        show_minor_x_labels=every == 1, truncate_legend=-1, truncate_label=-1, js=[],
        style=_STYLE, height=300, width=660, show_legend=True, legend_at_bottom=True,
        x_label_rotation=0, print_values=False, explicit_size=True, disable_xml_declaration=True)


def thinned(values: list[float], runs: int = LINE_RUNS) -> list[tuple[int, float]]:
    """``(x, value)`` of a line over *values* (x from 1) with at most about ``2 * runs`` points:
    of each run of consecutive values the lowest and the highest, in their order, so that every
    peak (a chart reaching its limit) and every fall back (its restart) is drawn where it was."""
    n = len(values)
    if n <= 2 * runs:
        return [(i + 1, v) for i, v in enumerate(values)]
    size = math.ceil(n / runs)
    out = []
    for start in range(0, n, size):
        run = range(start, min(n, start + size))
        low, high = min(run, key=values.__getitem__), max(run, key=values.__getitem__)
        out.extend((i + 1, values[i]) for i in sorted({low, high}))
    return out


def marks_thinned(values: list[float], marked: list[bool], runs: int = LINE_RUNS) -> tuple[list[tuple[int, float]], int]:
    """``((x, value) of the marks, hands a mark stands for)``: each marked value (x from 1) while
    there are at most ``2 * runs`` values, as :func:`thinned` draws the line; past that one mark
    for each run of consecutive values holding a marked one, at its highest marked value. A
    chart 760 pixels wide cannot show 300 errors apart, and each mark is drawn and sent (a
    shift's Surveillance page drew 30 dealers' charts of some 100 marks each: 1.2 MB and
    50 ms of pygal a chart)."""
    n = len(values)
    if n <= 2 * runs:
        return [(i + 1, values[i]) for i in range(n) if marked[i]], 1
    size = math.ceil(n / runs)
    out = []
    for start in range(0, n, size):
        hits = [i for i in range(start, min(n, start + size)) if marked[i]]
        if hits:
            top = max(hits, key=values.__getitem__)
            out.append((top + 1, values[top]))
    return out, size


def svg(chart, nonce: str) -> str:
    svg = chart.render(is_unicode=True)
    # pygal always writes its tooltips' config as a script; the chart needs none (and the
    # page's CSP would refuse it): out it goes.
    svg = _SCRIPT.sub("", svg)
    # ... and so its tooltip, hidden by an inline style the CSP refuses too.
    svg = _TOOLTIP.sub("", svg)
    return svg.replace("<style", f'<style nonce="{nonce}"', 1).replace("<svg", '<svg role="img"', 1)


def _sentence(title: str, text: str) -> str:
    return f'<p class="chart-note"><strong>{escape(title)}:</strong> {escape(text)}</p>'


def _with_hands(bars: list[dict]) -> list[dict]:
    return [b for b in bars if b["hands"]]


def _sparse(title: str, bars: list[dict], daily: bool, zone: str, say, language: Language) -> tuple[str | None, str]:
    """``(sentence instead of the chart, note under it)``: a sentence alone when no bar has
    hands; a note with the chart when only one has (a lone bar reads as a trend otherwise)."""
    _ = language.gettext
    dealt = _with_hands(bars)
    if not dealt:
        return _sentence(title, _("no hands in this range, so nothing to chart.")), ""
    if len(dealt) == 1:
        only = (_("only one day of this range has hands, %(when)s: %(figures)s.") if daily
                else _("only one hour of this range has hands, %(when)s: %(figures)s."))
        return None, _sentence(title, only % {"when": f"{dealt[0]['label']} {zone}", "figures": say(dealt[0])})
    return None, ""


def _legend_name(name: str, bars: list[dict], language: Language) -> str:
    return name if _with_hands(bars) else language.gettext("%(name)s (no hands)") % {"name": name}


def _shape(hours: list[dict], clock: FloorClock, language: Language) -> tuple[bool, str]:
    """Whether the bars are days, and the zone their labels are in."""
    if not hours:
        return False, ""
    return (hours[-1]["hour"] - hours[0]["hour"] >= HOURLY_UP_TO_S,
            zone_in(language, hours[0]["hour"]))


def hands_per_hour_chart(hours: list[dict], nonce: str, clock: FloorClock, *, title: str,
                         language: Language | None = None) -> str:
    """Bars of hands per hour, one per clock hour (or day) of the range (``figures.hourly``);
    a sentence instead when no hour has hands, and under the chart when only one has. In
    *language*, the reader's (none: English): its words, its numbers' and its days' forms."""
    language = _reader(clock, language)
    _ = language.gettext
    bars, axis = buckets(hours, clock, language)
    daily, zone = _shape(hours, clock, language)
    sentence, note = _sparse(title, bars, daily, zone, lambda b: language.ngettext(
        "%(rate)s hands per hour (%(count)s hand)", "%(rate)s hands per hour (%(count)s hands)", b["hands"]) % {
        "rate": decimal_in(language, b["hands_per_hour"]), "count": language.forms.integer(b["hands"])}, language)
    if sentence is not None:
        return sentence
    values = [b["hands_per_hour"] for b in bars]
    chart = _chart(title, bars, axis, _("hands per hour"), values, language)
    chart.add(_("hands per hour"), values)
    return svg(chart, nonce) + note


def irregularity_chart(hours: list[dict], room_hours: list[dict], nonce: str, clock: FloorClock, *,
                       title: str, who: str, language: Language | None = None) -> str:
    """Irregularities per 100 hands per clock hour (or day): *who*'s bars beside the room's;
    a sentence instead when *who* has no hands, and under the chart when hands in one hour only.
    In *language*, the reader's (none: English)."""
    language = _reader(clock, language)
    _ = language.gettext
    bars, axis = buckets(hours, clock, language)
    daily, zone = _shape(hours, clock, language)
    room_bars, _axis = buckets(room_hours, clock, language)
    room_at = {b["label"]: b for b in room_bars}

    def say(b):
        room = room_at.get(b["label"])
        return _("%(who)s %(mine)s, the room %(room)s") % {
            "who": who, "mine": decimal_in(language, b["irregularities_per_100_hands"]),
            "room": decimal_in(language, room["irregularities_per_100_hands"] if room else None)}
    sentence, note = _sparse(title, bars, daily, zone, say, language)
    if sentence is not None:
        return sentence
    mine = [b["irregularities_per_100_hands"] for b in bars]
    room = [room_at[b["label"]]["irregularities_per_100_hands"] if b["label"] in room_at else None for b in bars]
    chart = _chart(title, bars, axis, _("per 100 hands"), mine + room, language)
    chart.add(_legend_name(who, bars, language), mine)
    chart.add(_legend_name(_("the room"), [room_at[b["label"]] for b in bars if b["label"] in room_at], language),
              room)
    return svg(chart, nonce) + note
