"""The shift report: every table and dealer of a shift, their figures, and the
alerts raised in it with who cleared them; as a dict (the JSON), as CSV for the
casino's spreadsheets (the API's raw values), and for people as labelled sections
(:func:`report_sections`) that the page, the standalone HTML file and the PDF
(dealerbox/floor/telling/report_pdf.py) all draw, so their rows and columns say the same.

Every figure is the pit boss's (dealerbox/floor/telling/figures.py), read from the
incremental aggregate, so the report of a whole shift is a handful of queries.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import math

import jinja2

from dealerbox.floor.telling import figures as F
from dealerbox.floor.telling import report_pdf as PDF
from dealerbox.floor.telling.catalogs import N_, SOURCE_LANGUAGE
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.figure_text import NOTHING, duration
from dealerbox.floor.telling.language import Language
from dealerbox.floor.telling.moment_words import span

__all__ = ["shift_report", "report_csv", "report_pdf", "report_html", "report_sections", "report_title",
           "stamp", "iso", "CSV_COLUMNS", "FIGURE_COLUMNS"]

#: The CSV's columns after ``kind`` and ``id``: every figure the API gives a table, a dealer
#: and the room, in the API's order; then a count column per irregularity id of the report
#: (``irregularities:<ID>``), since the API's by-id figures are nested.
CSV_COLUMNS = tuple(k for k, v in F.empty_figures().items() if not isinstance(v, dict))


def shift_report(conn, alerts: list[dict], start: float, end: float) -> dict:
    """The report of ``[start, end)``: *conn* reads the figures (their tables brought
    up to date first by the caller), *alerts* are the store's, open and cleared."""
    room = F.room_figures(conn, start, end)
    raised = [a for a in alerts if start <= a["raised"] < end]
    raised = numbered_alerts(conn, raised)
    return {"from": start, "to": end, "tables": room["tables"], "dealers": room["dealers"],
            "room": room["room"], "clearing": F.alert_clearing(conn, start, end),
            "sensing": F.sensing_faults(conn, start, end),
            "alerts_open": [a for a in raised if a["cleared_at"] is None],
            "alerts_cleared": [a for a in raised if a["cleared_at"] is not None]}


def numbered_alerts(conn, alerts: list[dict]) -> list[dict]:
    """*alerts*, each with the number of its hand at its table (``hand_number``: None for no
    hand, or one the figures have not filed), so that a printed report or trail names the hand
    its row means, as its story page does."""
    numbers = F.hand_numbers(conn, [(a["table"], a["seq"]) for a in alerts if a.get("seq")])
    return [{**a, "hand_number": numbers.get((a["table"], a.get("seq")))} for a in alerts]


def alert_hand_words(alert: dict, language: Language) -> str:
    """What a row says of an alert's hand (the link's text): ``hand 2``, ``the first, hand 2``
    for a folded alert, or ``the hand``/``the first hand`` when its number is not known."""
    _ = language.gettext
    folded, number = (alert.get("count") or 1) > 1, alert.get("hand_number")
    if number is not None:
        return (_("the first, hand %(number)s") if folded else _("hand %(number)s")) % {"number": number}
    return _("the first hand") if folded else _("the hand")


def _rows(report: dict):
    for row in report["tables"]:
        yield "table", row["table"], row
    for row in report["dealers"]:
        yield "dealer", row["dealer"] if row["dealer"] is not None else "(nobody signed in)", row
    yield "room", "", report["room"]


def report_csv(report: dict) -> str:
    """One line per table, per dealer and for the room: :data:`CSV_COLUMNS`, then the count of each
    irregularity id."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    ids = sorted({i for _kind, _ident, row in _rows(report) for i in row.get("irregularities_by_id", {})})
    writer.writerow(("kind", "id", *CSV_COLUMNS, *(f"irregularities:{i}" for i in ids)))
    for kind, ident, row in _rows(report):
        by_id = row.get("irregularities_by_id", {})
        writer.writerow((kind, ident, *("" if row.get(c) is None else row[c] for c in CSV_COLUMNS),
                         *(by_id[i]["count"] if i in by_id else 0 for i in ids)))
    return out.getvalue()


#: The figures' columns people read: (heading, key of a figures dict).
FIGURE_COLUMNS = (
    (N_("hands"), "hands"),
    (N_("hands per hour"), "hands_per_hour"),
    (N_("players per hand"), "players_per_hand"),
    (N_("seconds per hand"), "mean_seconds_per_hand"),
    (N_("irregularities per 100 hands"), "irregularities_per_100_hands"),
    (N_("misdeals per 100 hands"), "misdeals_per_100_hands"),
    (N_("void hands per 100 hands"), "voids_per_100_hands"),
    (N_("wrong corrections per 100 corrections"), "wrong_corrections_per_100_corrections"),
)


def stamp(ts, clock: FloorClock | None = None) -> str:
    """A time as the report prints it: the date and minute in the floor's zone (*clock*;
    the machine's zone without one), with the zone named."""
    return (clock or FloorClock()).stamp(ts)


def iso(ts) -> str:
    """A time as the API takes it back: ISO 8601 in UTC."""
    return _dt.datetime.fromtimestamp(ts, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if ts else ""


def _reader(clock: FloorClock | None, language: Language | None) -> Language:
    """Whoever reads the report: *language*, else English in *clock*'s zone."""
    if language is not None:
        return language
    return Language(SOURCE_LANGUAGE, clock or FloorClock())


def _linker(base_url: str | None):
    """A page's path as a link: after *base_url*; no link at all when it is None."""
    return (lambda path: None) if base_url is None else (lambda path: base_url.rstrip("/") + path)


def _cell(text, href: str | None = None, *, none: bool = False, figure: bool = False) -> dict:
    return {"text": str(text), "href": href, "none": none, "figure": figure}


def _decimal(language: Language, value) -> str:
    """One decimal in the reader's form (``329,5``); :data:`NOTHING` for nothing to count."""
    if value is None or isinstance(value, bool) or not math.isfinite(float(value)):
        return NOTHING
    value = float(value)
    return language.forms.decimal(0.0 if round(value, 1) == 0 else value, 1)


def _figure_cells(row: dict, language: Language) -> list[dict]:
    hands = row.get("hands") or 0
    cells = [_cell(language.forms.integer(hands)) if hands
             else _cell(language.gettext("no hands"), none=True, figure=True)]
    for _heading, key in FIGURE_COLUMNS[1:]:
        value = row.get(key)
        cells.append(_cell(_decimal(language, value), none=value is None))
    return cells


def _nothing_legend(language: Language) -> str:
    return language.gettext("%(nothing)s nothing to count: no hands in the range (for wrong corrections: no "
                            "corrections made); %(zero)s is a real zero.") % {
        "nothing": NOTHING, "zero": language.forms.decimal(0.0, 1)}


def _dealer_words(dealer, names: dict[str, str], language: Language) -> str:
    if dealer is None:
        return language.gettext("nobody signed in")
    return f"{dealer} {names[dealer]}" if names.get(dealer) else str(dealer)


def _alert_rows(report: dict, language: Language, base_url: str | None, words) -> list[list[dict]]:
    link = _linker(base_url)
    _, ngettext, when = language.gettext, language.ngettext, language.forms.stamp
    rows = []
    for a in report["alerts_open"] + report["alerts_cleared"]:
        what = words(a) if words is not None else f"{a['kind']}: {a['text']}"
        times = a.get("count") or 1
        if times > 1:
            # The floor map's words for a folded alert, as its alerts say it.
            what += " " + ngettext("(%(count)s time, the last %(last)s)", "(%(count)s times, the last %(last)s)",
                                   times) % {"count": times, "last": when(a["last_raised"])}
        hand = (_cell(alert_hand_words(a, language), link(f"/hands/{a['table']}/{a['seq']}")) if a.get("seq")
                else _cell(_("no hand"), none=True))
        cleared = a["cleared_at"] is not None
        rows.append([_cell(when(a["raised"])), _cell(a["table"], link(f"/tables/{a['table']}")),
                     _cell(what), hand,
                     _cell(a["cleared_by"]) if cleared else _cell(_("still open"), none=True),
                     _cell(when(a["cleared_at"])) if cleared else _cell(NOTHING, none=True),
                     _cell(a.get("note") or "")])
    return rows


def report_title(report: dict, clock: FloorClock | None = None, language: Language | None = None) -> str:
    """``Shift report: Thu 26 Nov 2026, 06:00 to 14:00 CET`` (in *language*, else English)."""
    language = _reader(clock, language)
    return language.gettext("Shift report: %(range)s") % {"range": span(language, report["from"], report["to"])}


def report_sections(report: dict, clock: FloorClock | None = None, names: dict[str, str] | None = None,
                    base_url: str | None = "", alert_words=None, language: Language | None = None) -> list[dict]:
    """The report as people read it: sections of ``id``, ``heading``, ``columns``, ``rows``
    (cells of ``text``, ``href``, ``none``: nothing to count, and ``figure``: a figure's
    column), ``empty`` (what an empty table says) and ``notes``. The first cell of a row
    names it. Links are the floor's paths after *base_url* (``""``: the paths alone, as the
    page has them; ``None``: no links, for a file). *alert_words* (an alert → what it says, as
    the floor map words it) replaces ``KIND: text``. Everything is worded in *language*
    (whoever reads it; without one, English in *clock*'s zone)."""
    language = _reader(clock, language)
    _, ngettext = language.gettext, language.ngettext
    names = names or {}
    link = _linker(base_url)
    figure_heads = [_(h) for h, _k in FIGURE_COLUMNS]
    legend = _nothing_legend(language)
    tables = [[_cell(r["table"], link(f"/tables/{r['table']}")), *_figure_cells(r, language)]
              for r in report["tables"]]
    tables.append([_cell(_("the room")), *_figure_cells(report["room"], language)])
    dealers = [[_cell(_dealer_words(r["dealer"], names, language),
                      link(f"/dealers/{r['dealer']}") if r["dealer"] is not None else None),
                *_figure_cells(r, language)] for r in report["dealers"]]
    cleared = [c for c in report["clearing"] if c["cleared_by"] is not None]
    still_open = sum(c.get("open", 0) for c in report["clearing"] if c["cleared_by"] is None)
    clearing_notes = [ngettext("Still open: %(num)d alert raised in this range (listed under the alerts below).",
                               "Still open: %(num)d alerts raised in this range (listed under the alerts below).",
                               still_open) % {"num": still_open}] if still_open else []
    alerts_heading = _("Alerts raised (%(open)s still open, %(cleared)s cleared)") % {
        "open": language.forms.integer(len(report["alerts_open"])),
        "cleared": language.forms.integer(len(report["alerts_cleared"]))}
    integer = language.forms.integer
    return [
        {"id": "report-tables", "heading": _("Tables"), "columns": [_("table"), *figure_heads], "rows": tables,
         "empty": _("No table dealt in this range."), "notes": [legend]},
        {"id": "report-dealers", "heading": _("Dealers"), "columns": [_("dealer"), *figure_heads], "rows": dealers,
         "empty": _("No dealer dealt in this range."), "notes": [legend]},
        {"id": "report-clearing", "heading": _("Alerts cleared, by supervisor"),
         "columns": [_("supervisor"), _("alerts cleared"), _("mean time to clear"), _("median time"),
                     _("longest time")],
         "rows": [[_cell(c["cleared_by"]), _cell(integer(c["count"])), _cell(duration(c["mean_s"])),
                   _cell(duration(c["p50_s"])), _cell(duration(c["max_s"]))] for c in cleared],
         "empty": _("No alert raised in this range was cleared."), "notes": clearing_notes},
        {"id": "report-alerts", "heading": alerts_heading,
         "columns": [_("raised"), _("table"), _("what"), _("hand"), _("cleared by"), _("cleared at"), _("note")],
         "rows": _alert_rows(report, language, base_url, alert_words),
         "empty": _("No alert was raised in this range."), "notes": []},
        {"id": "report-sensing", "heading": _("Sensing faults (which antenna needs service)"),
         "columns": [_("table"), _("hands"), _("unread cards per 100 hands"), _("reader degraded per 100 hands"),
                     _("reader faults per 100 hands")],
         "rows": [[_cell(r["table"], link(f"/tables/{r['table']}")), _cell(integer(r["hands"])),
                   _cell(_decimal(language, r["unread_cards_per_100_hands"])),
                   _cell(_decimal(language, r["reader_degraded_per_100_hands"])),
                   _cell(_decimal(language, r["reader_faults_per_100_hands"]))] for r in report["sensing"]],
         "empty": _("No hands, so no sensing to judge."), "notes": []},
    ]


def _templates() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("dealerbox.floor", "templates"),
                              autoescape=jinja2.select_autoescape(["html"]))


def report_html(report: dict, names: dict[str, str] | None = None, clock: FloorClock | None = None,
                base_url: str | None = None, alert_words=None, language: Language | None = None) -> str:
    """The report as one standalone HTML file that prints well (no script); *names*: dealers'
    names to show beside their ids; *clock*: the floor's zone (else the machine's); with
    *base_url* (``https://floor.example``) its links open the floor's pages (else it has none);
    *alert_words* as for :func:`report_sections`; in *language*, whoever asked for it (else English)."""
    language = _reader(clock, language)
    env = _templates()
    env.add_extension("jinja2.ext.i18n")
    env.install_gettext_callables(language.gettext, language.ngettext, newstyle=True)
    return env.get_template("report_file.html").render(
        title=report_title(report, language=language), language=language,
        sections=report_sections(report, names=names, base_url=base_url, alert_words=alert_words,
                                 language=language))


def report_pdf(report: dict, names: dict[str, str] | None = None, clock: FloorClock | None = None,
               base_url: str | None = None, alert_words=None, language: Language | None = None) -> bytes:
    """The report as a PDF (dealerbox/floor/telling/report_pdf.py): the same sections as the page,
    in *language* (whoever asked for it; else English); with *base_url*
    (``https://floor.example``) its links open the floor's pages."""
    language = _reader(clock, language)
    title = report_title(report, language=language)
    sections = report_sections(report, names=names, base_url=base_url, alert_words=alert_words, language=language)
    return PDF.floor_pdf(title, sections, language.gettext)
