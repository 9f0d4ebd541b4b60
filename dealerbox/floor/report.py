"""The shift report: every table and dealer of a shift, their figures, and the
alerts raised in it with who cleared them; as a dict (the page and the JSON), as
CSV for the casino's spreadsheets, and as PDF (fpdf2, pure Python) for the file.

Every figure is the pit boss's (dealerbox/floor/figures.py), read from the
incremental aggregate, so the report of a whole shift is a handful of queries.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io

from dealerbox.floor import figures as F

__all__ = ["shift_report", "report_csv", "report_pdf", "report_html", "stamp", "iso", "CSV_COLUMNS"]

#: The CSV's columns after ``kind`` and ``id``: every figure the API gives a table, a dealer
#: and the room, in the API's order; then a count column per irregularity id of the report
#: (``irregularities:<ID>``), since the API's by-id figures are nested.
CSV_COLUMNS = tuple(k for k, v in F.empty_figures().items() if not isinstance(v, dict))


def shift_report(conn, alerts: list[dict], start: float, end: float) -> dict:
    """The report of ``[start, end)``: *conn* reads the figures (their tables brought
    up to date first by the caller), *alerts* are the store's, open and cleared."""
    room = F.room_figures(conn, start, end)
    raised = [a for a in alerts if start <= a["raised"] < end]
    return {"from": start, "to": end, "tables": room["tables"], "dealers": room["dealers"],
            "room": room["room"], "clearing": F.alert_clearing(conn, start, end),
            "sensing": F.sensing_faults(conn, start, end),
            "alerts_open": [a for a in raised if a["cleared_at"] is None],
            "alerts_cleared": [a for a in raised if a["cleared_at"] is not None]}


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


def _when(ts) -> str:
    return _dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else ""


def stamp(ts) -> str:
    """A time as the report prints it: the floor server's local date and minute."""
    return _when(ts)


def iso(ts) -> str:
    """A time as the report's range form takes it back: ISO 8601 in UTC."""
    return _dt.datetime.fromtimestamp(ts, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if ts else ""


def report_html(report: dict, names: dict[str, str] | None = None) -> str:
    """The report as one standalone HTML file that prints well (no script, no link out);
    *names*: dealers' names to show beside their ids."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("dealerbox.floor", "templates"),
                             autoescape=jinja2.select_autoescape(["html"]))
    env.filters.update(stamp=stamp, iso=iso)
    return env.get_template("report_file.html").render(report=report, names=names or {})


def report_pdf(report: dict) -> bytes:
    """The report as a PDF: the figures per table and per dealer, the alerts and their clearing."""
    from fpdf import FPDF

    pdf = FPDF(orientation="L", format="A4")
    pdf.set_auto_page_break(True, margin=12)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 14)
    pdf.cell(0, 8, f"Shift report {_when(report['from'])} to {_when(report['to'])}", new_x="LMARGIN", new_y="NEXT")
    heads = ("", "hands", "hands/h", "players", "s/hand", "irreg./100", "misdeals/100", "voids/100",
             "wrong corr./100 corr.")
    keys = ("hands", "hands_per_hour", "players_per_hand", "mean_seconds_per_hand",
            "irregularities_per_100_hands", "misdeals_per_100_hands", "voids_per_100_hands",
            "wrong_corrections_per_100_corrections")
    widths = (60, 20, 22, 22, 22, 26, 28, 24, 40)
    pdf.set_font("Helvetica", "B", 9)
    for head, w in zip(heads, widths):
        pdf.cell(w, 6, head, border=1)
    pdf.ln()
    pdf.set_font("Helvetica", "", 9)
    for kind, ident, row in _rows(report):
        pdf.cell(widths[0], 6, f"{kind} {ident}"[:40], border=1)
        for key, w in zip(keys, widths[1:]):
            value = row.get(key)
            pdf.cell(w, 6, "" if value is None else f"{value:g}", border=1)
        pdf.ln()
    pdf.ln(4)
    pdf.set_font("Helvetica", "B", 11)
    pdf.cell(0, 7, f"Alerts: {len(report['alerts_open'])} open, {len(report['alerts_cleared'])} cleared",
             new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 9)
    for a in report["alerts_open"] + report["alerts_cleared"]:
        cleared = (f"cleared by {a['cleared_by']} at {_when(a['cleared_at'])}: {a.get('note') or ''}"
                   if a["cleared_at"] else "open")
        text = f"{_when(a['raised'])} {a['table']} {a['kind']}: {a['text']} ({cleared})"
        pdf.multi_cell(0, 5, text.encode("latin-1", "replace").decode("latin-1"), new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())
