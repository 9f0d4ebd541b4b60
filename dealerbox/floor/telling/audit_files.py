"""The audit trail as an auditor reads it: who cleared which alert, when, and why, over a
range of days; as a dict (the JSON), as CSV (raw values beside the words, for the
casino's spreadsheets), and as labelled sections that the page and the PDF both draw
(the shift report's shape: :func:`dealerbox.floor.telling.report.report_sections`, drawn by
``templates/_report_body.html`` and :func:`dealerbox.floor.telling.report_pdf.sections_pdf`).

Every time carries its date and zone (:meth:`FloorClock.full`): an audit spans days and
clock changes, so a time of day alone says nothing. An alert is worded as the floor map
words it (:mod:`dealerbox.floor.telling.floor_words`), with its table and its hand.
"""

from __future__ import annotations

import csv
import io

from dealerbox.floor.bridge_alerts import BLIND_KIND, BRIDGE_PREFIX
from dealerbox.floor.telling import report_pdf as PDF
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.figure_text import span
from dealerbox.floor.telling.report import iso
from dealerbox.link import protocol as P

__all__ = ["audit_trail", "audit_title", "audit_sections", "audit_csv", "audit_pdf", "audit_file_name",
           "ACTION_WORDS", "CSV_COLUMNS"]

#: What each action of the store's audit rows is called on the page.
ACTION_WORDS = {"clear": "cleared"}
#: The CSV's columns: the raw values the API gives, then the same in words.
CSV_COLUMNS = ("at", "at_local", "who", "action", "alert", "table", "kind", "what", "seq", "hand",
               "raised", "raised_local", "count", "note")


def audit_trail(audit: list[dict], alerts: list[dict], start: float, end: float) -> dict:
    """The trail of ``[start, end)``: the store's *audit* rows made in it, oldest first, and
    the *alerts* (the store's, open and cleared) raised or cleared in it, by id."""
    audit = sorted((r for r in audit if start <= r["at"] < end), key=lambda r: r["at"])
    seen = {r["alert"] for r in audit}
    shown = [a for a in alerts if start <= a["raised"] < end or a["id"] in seen
             or (a["cleared_at"] is not None and start <= a["cleared_at"] < end)]
    return {"from": start, "to": end, "audit": audit, "alerts": sorted(shown, key=lambda a: a["id"])}


def audit_title(trail: dict, clock: FloorClock) -> str:
    """``Audit trail: Wed 25 Nov 2026, 22:00 CET to Thu 26 Nov 2026, 06:00 CET``."""
    return f"Audit trail: {span(clock, trail['from'], trail['to'])}"


def audit_file_name(trail: dict, clock: FloorClock, ext: str) -> str:
    """``audit-trail-2026-11-25-2200-to-2026-11-26-0600.csv``: the range in the floor's zone."""
    start, end = (clock.at(trail[k]).strftime("%Y-%m-%d-%H%M") for k in ("from", "to"))
    return f"audit-trail-{start}-to-{end}.{ext}"


def _cell(text, href: str | None = None, *, none: bool = False) -> dict:
    return {"text": str(text), "href": href, "none": none}


def _link(base_url: str | None, path: str) -> str | None:
    return None if base_url is None else base_url.rstrip("/") + path


def _is_table(alert: dict | None) -> bool:
    # A bridge's alert names a property, not a table: it has no table page and no hands.
    return (alert is not None and alert["kind"] != BLIND_KIND and isinstance(alert["table"], str)
            and P.valid_table_id(alert["table"]))


def _what(alert: dict | None, words, clock: FloorClock) -> str:
    if alert is None:
        return "an alert the store no longer has"
    text = words(alert) if words is not None else f"{alert['kind']}: {alert['text']}"
    if (alert.get("count") or 1) > 1:
        text += f" ({alert['count']} times, the last at {clock.full(alert['last_raised'])})"
    return text


def _where(alert: dict | None) -> str:
    """The table, or the property a bridge's alert is about (as the floor map names it)."""
    if alert is None:
        return "–"
    table = alert["table"]
    if alert["kind"] == BLIND_KIND and table.startswith(BRIDGE_PREFIX):
        return f"property {table[len(BRIDGE_PREFIX):]}"
    return table


def _hand(alert: dict | None, base_url: str | None) -> dict:
    if not _is_table(alert) or not alert.get("seq"):
        return _cell("no hand", none=True)
    words = "the first hand" if (alert.get("count") or 1) > 1 else "the hand"
    return _cell(words, _link(base_url, f"/hands/{alert['table']}/{alert['seq']}"))


def _rows(trail: dict):
    by_id = {a["id"]: a for a in trail["alerts"]}
    for row in trail["audit"]:
        yield row, by_id.get(row["alert"])


def audit_sections(trail: dict, clock: FloorClock, base_url: str | None = "", alert_words=None) -> list[dict]:
    """The trail as people read it: one section (``id``, ``heading``, ``columns``, ``rows`` of
    cells ``text``/``href``/``none``, ``empty``, ``notes``), a row per action, newest first.
    Links are the floor's paths after *base_url* (``""``: the paths alone, as the page has
    them; ``None``: no links). *alert_words* (an alert → its headline, as the floor map words
    it: :meth:`FloorWords.first_headline`) replaces ``KIND: text``."""
    rows = []
    for row, alert in reversed(list(_rows(trail))):
        table = _where(alert)
        did = f"{ACTION_WORDS.get(row['action'], row['action'])} alert {row['alert']}"
        rows.append([
            _cell(clock.full(row["at"])), _cell(row["who"]), _cell(did),
            _cell(_what(alert, alert_words, clock)),
            (_cell(table, _link(base_url, f"/tables/{table}")) if _is_table(alert)
             else _cell(table, none=alert is None)),
            _hand(alert, base_url),
            _cell(clock.full(alert["raised"])) if alert is not None else _cell("–", none=True),
            _cell(row.get("detail") or "")])
    count = len(rows)
    return [{"id": "audit", "heading": f"Alerts cleared ({count})", "columns":
             ["when", "who", "did", "what", "table", "hand", "raised", "note"], "rows": rows,
             "empty": "Nobody cleared an alert in this range.",
             "notes": ["Newest first. Each time is the floor's local time with its date and zone."]}]


def audit_csv(trail: dict, clock: FloorClock, alert_words=None) -> str:
    """One line per action, oldest first: :data:`CSV_COLUMNS`; times in UTC (ISO 8601) and
    beside them in the floor's zone; ``hand`` is the hand's page on the floor."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row, alert in _rows(trail):
        a = alert or {}
        hand = _hand(alert, "")["href"] or ""
        writer.writerow((iso(row["at"]), clock.full(row["at"]), row["who"], row["action"], row["alert"],
                         a.get("table", ""), a.get("kind", ""), _what(alert, alert_words, clock) if alert else "",
                         a.get("seq") if a.get("seq") is not None else "", hand,
                         iso(a["raised"]) if alert else "", clock.full(a["raised"]) if alert else "",
                         a.get("count", ""), row.get("detail") or ""))
    return out.getvalue()


def audit_pdf(trail: dict, clock: FloorClock, base_url: str | None = None, alert_words=None) -> bytes:
    """The trail as a landscape A4 PDF, the page's rows and columns; with *base_url*
    (``https://floor.example``) its links open the floor's pages."""
    title = audit_title(trail, clock)
    return PDF.sections_pdf(title, audit_sections(trail, clock, base_url, alert_words),
                            footer=f"dealerbox floor, {title}")
