"""The pit boss's charts, drawn on the server as SVG with pygal: no script, no CDN,
so the pages work on a closed casino network. Each chart is inline SVG whose
``<style>`` carries the page's CSP nonce."""

from __future__ import annotations

import datetime as _dt
import re

import sys

import pygal
from pygal.style import DarkStyle

# pygal puts an import hook on sys.meta_path for its map plugins (pygal.maps.*), one with
# no find_spec: every later import that misses (fpdf2's optional uharfbuzz) then warns
# (ImportWarning). The floor draws no maps: take the hook off again.
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__module__ != "pygal"]

__all__ = ["hands_per_hour_chart", "irregularity_chart"]

_SCRIPT = re.compile(r"<script\b.*?</script>", re.S)


def _config(title: str, hours: list[dict]) -> dict:
    labels = [_dt.datetime.fromtimestamp(h["hour"]).strftime("%H:%M") for h in hours]
    return {"title": title, "x_labels": labels, "js": [], "style": DarkStyle, "height": 260,
            "width": 760, "show_legend": True, "legend_at_bottom": True, "x_label_rotation": 0,
            "print_values": False, "explicit_size": True, "disable_xml_declaration": True}


def _svg(chart, nonce: str) -> str:
    svg = chart.render(is_unicode=True)
    # pygal always writes its tooltips' config as a script; the chart needs none (and the
    # page's CSP would refuse it): out it goes.
    svg = _SCRIPT.sub("", svg)
    return svg.replace("<style", f'<style nonce="{nonce}"')


def hands_per_hour_chart(hours: list[dict], nonce: str, *, title: str) -> str:
    """Bars of hands per hour, one per clock hour of the shift (``figures.hourly``)."""
    chart = pygal.Bar(**_config(title, hours))
    chart.add("hands per hour", [h["hands_per_hour"] for h in hours])
    return _svg(chart, nonce)


def irregularity_chart(hours: list[dict], room_hours: list[dict], nonce: str, *, title: str, who: str) -> str:
    """Irregularities per 100 hands per clock hour: *who*'s beside the room's."""
    chart = pygal.Line(**_config(title, hours))
    chart.add(who, [h["irregularities_per_100_hands"] for h in hours])
    chart.add("the room", [h["irregularities_per_100_hands"] for h in room_hours])
    return _svg(chart, nonce)
