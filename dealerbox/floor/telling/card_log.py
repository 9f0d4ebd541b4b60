"""The card control log (issue 40): one deck from delivery to destruction, or one day of the
room, as an auditor reads it: every step with its local time (date and zone), the table, the
person and the witness; where each deck was used and the hands it dealt, each linked to its
story.

A log is a dict (:func:`deck_log`, :func:`day_log`) read from the room's registry in the store
(:mod:`dealerbox.floor.store.registry`). It is drawn as labelled sections
(:func:`log_sections`) that the page, the standalone HTML file and the PDF all draw, as the
shift report's are (:mod:`dealerbox.floor.telling.report`, whose templates and PDF machinery
it reuses), and written as CSV (:func:`log_csv`): one line per step and per hand, with the
time both local and in UTC.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
from urllib.parse import quote

import jinja2

from dealerbox.floor.telling import report as R
from dealerbox.floor.telling import report_pdf as PDF
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.figure_text import NOTHING, one_decimal

__all__ = ["deck_log", "day_log", "day_range", "log_sections", "log_title", "log_csv", "log_html", "log_pdf",
           "step_words", "limit_words", "deck_path", "log_day", "STATE_WORDS", "CSV_HEADER", "FIRST_DAY", "LAST_DAY"]

#: A deck's states as people read them.
STATE_WORDS = {"received": "received, sealed", "registered": "registered", "in_play": "in play",
               "retired": "retired", "destroyed": "destroyed"}
#: The CSV's columns.
CSV_HEADER = ("kind", "local_time", "utc_time", "deck", "what", "table", "person", "witness", "hand_seq", "link")


def deck_log(store, name: str) -> dict | None:
    """Deck *name*'s whole life (None: no such deck)."""
    deck = store.deck(name)
    if deck is None:
        return None
    return {"kind": "deck", "deck": deck, "steps": store.registry_steps(deck=name),
            "tables": store.deck_tables(name), "hands": store.deck_hands(name)}


#: The days a log may be asked for: no card control log predates 2000, and the day before
#: the first and after the last (the page's links), in any zone, stay inside Python's years.
FIRST_DAY = _dt.date(2000, 1, 1)
LAST_DAY = _dt.date(2999, 12, 31)


def log_day(text: str) -> _dt.date:
    """The day *text* names (``YYYY-MM-DD``), from :data:`FIRST_DAY` to :data:`LAST_DAY`;
    :class:`ValueError` says what was expected, worded to follow ``day='...'``."""
    try:
        day = _dt.date.fromisoformat(text)
    except ValueError:
        raise ValueError("expected a date, YYYY-MM-DD") from None
    if not FIRST_DAY <= day <= LAST_DAY:
        raise ValueError(f"expected a day from {FIRST_DAY.isoformat()} to {LAST_DAY.isoformat()}")
    return day


def day_range(clock: FloorClock, day: _dt.date) -> tuple[float, float]:
    """The local day *day* as ``[start, end)`` epoch seconds (23 or 25 hours on a clock change);
    a day outside :data:`FIRST_DAY`..:data:`LAST_DAY` is a :class:`ValueError`."""
    if not FIRST_DAY <= day <= LAST_DAY:
        raise ValueError(f"{day.isoformat()}: expected a day from {FIRST_DAY.isoformat()} to {LAST_DAY.isoformat()}")
    start = _dt.datetime.combine(day, _dt.time(0), clock.zone)
    end = _dt.datetime.combine(day + _dt.timedelta(days=1), _dt.time(0), clock.zone)
    return start.timestamp(), end.timestamp()


def day_log(store, clock: FloorClock, day: _dt.date, *, first: int = 0, most: int | None = None) -> dict:
    """Every step of the room's registry on the local day *day*, each deck's hands that day per
    table (``tables``, summed by the store), and the hands themselves: every one (the CSV's and
    the PDF's), or at most *most* after the first *first*, oldest first (a page's: a day of a
    room holds some 33,000), with ``hands_total`` and ``hands_first`` saying which."""
    start, end = day_range(clock, day)
    tables = store.day_deck_tables(start, end)
    return {"kind": "day", "day": day.isoformat(), "from": start, "to": end,
            "steps": store.registry_steps(start=start, end=end), "tables": tables,
            "hands": store.deck_hands(None, start, end, limit=most, offset=first),
            "hands_total": sum(r["hands"] for r in tables), "hands_first": first}


def step_words(step: dict) -> str:
    """What one step of the log says, in a pit boss's words."""
    d, kind = step.get("detail") or {}, step["step"]
    if kind == "received":
        return f"Received sealed: {d.get('sealed_count')} in the seal, back {d.get('back') or 'not named'}"
    if kind == "registered":
        return f"Registered: {d.get('tags')} tags" + (f", back {d['back']}" if d.get("back") else "")
    if kind == "in_play":
        return "In play: its first hand"
    if kind == "issued":
        moved = f", moved from {d['from']}" if d.get("from") else ""
        return f"Issued to {step.get('table_id')}: the deck that table deals{moved}"
    if kind == "checked":
        if d.get("ok"):
            return "Deck check: every card there, no damaged tag"
        parts = []
        if d.get("missing"):
            parts.append(f"missing {', '.join(d['missing'])}")
        if d.get("damaged"):
            parts.append(f"damaged tags {', '.join(d['damaged'])}")
        return "Deck check: not fit for play" + (f" ({'; '.join(parts)})" if parts else "")
    if kind == "retired":
        return f"Retired: {d.get('why', '')}"
    if kind == "destroyed":
        return "Destroyed"
    if kind == "limit":
        return f"Past the house limit: {' and '.join(d.get('past', []))}"
    if kind == "limit_set":
        said = limit_words(d.get("hours"), d.get("hands"))
        return f"Its own limit: {said}" if said else "Its own limit removed: the house limit applies"
    if kind == "refused":
        return f"Registration refused: {d.get('why', '')}"
    if kind == "badge_registered":
        return f"Badge {step.get('badge')} registered to dealer {d.get('dealer')}"
    if kind == "badge_revoked":
        return f"Badge {step.get('badge')} of dealer {d.get('dealer')} revoked: {d.get('why', '')}"
    if kind == "applied":
        return f"The table judges with registry version {d.get('version')}"
    return kind


def deck_path(name: str) -> str:
    """The floor's path of deck *name*'s page (its name quoted: a deck's name may hold spaces)."""
    return f"/registry/decks/{quote(name, safe='')}"


def _cell(text, href: str | None = None, *, none: bool = False) -> dict:
    """A cell as the report's sections hold them (``text``, ``href``, ``none``: nothing to show)."""
    return {"text": str(text), "href": href, "none": none}


def _dealer(dealer, names: dict[str, str]) -> str:
    if dealer is None:
        return "nobody signed in"
    return f"{dealer} {names[dealer]}" if names.get(dealer) else str(dealer)


def limit_words(hours, hands) -> str:
    """A deck's limit in words, ``8 hours in play or 400 hands``; empty for no limit."""
    said = ([f"{hours:g} hours in play"] if hours is not None else []) + \
        ([f"{hands} hands"] if hands is not None else [])
    return " or ".join(said)


def log_title(log: dict, clock: FloorClock) -> str:
    """``Card control log: deck Red 7`` or ``Card control log: Sun 29 Nov 2026 (CET)``."""
    if log["kind"] == "deck":
        return f"Card control log: deck {log['deck']['name']}"
    day = clock.at(log["from"])
    return f"Card control log: {day.strftime('%a %d %b %Y')} ({day.strftime('%Z')})"


def _hours(seconds) -> str:
    return one_decimal(seconds / 3600) if seconds is not None else NOTHING


def log_sections(log: dict, clock: FloorClock, names: dict[str, str] | None = None,
                 base_url: str | None = "") -> list[dict]:
    """The log as people read it: sections as :func:`dealerbox.floor.telling.report.report_sections`
    makes them (``id``, ``heading``, ``columns``, ``rows`` of cells, ``empty``, ``notes``); links
    after *base_url* (``""``: paths, as the page has them; None: none)."""
    names = names or {}
    link = (lambda path: None) if base_url is None else (lambda path: base_url.rstrip("/") + path)
    cell = _cell
    sections = []
    if log["kind"] == "deck":
        d = log["deck"]
        limit = limit_words(d["limit_hours"], d["limit_hands"])
        sections.append({
            "id": "log-deck", "heading": f"Deck {d['name']}", "columns": ["deck", "back", "state", "tags",
                                                                          "hands dealt", "hours in play", "own limit"],
            "rows": [[cell(d["name"]), cell(d["back"] or NOTHING, none=not d["back"]), cell(STATE_WORDS[d["state"]]),
                      cell(len(d["tags"])), cell(d["hands"]), cell(_hours(d["play_s"])),
                      cell(limit or "the house's", none=not limit)]],
            "empty": "", "notes": []})
    steps = [[cell(clock.stamp(s["at"])),
              *([] if log["kind"] == "deck" else
                [cell(s["deck"] or (f"badge {s['badge']}" if s["badge"] else NOTHING),
                      link(deck_path(s["deck"])) if s["deck"] else None, none=not (s["deck"] or s["badge"]))]),
              cell(step_words(s)),
              cell(s["table_id"], link(f"/tables/{s['table_id']}")) if s["table_id"] else cell(NOTHING, none=True),
              cell(s["person"]) if s["person"] else cell(NOTHING, none=True),
              cell(s["witness"]) if s["witness"] else cell(NOTHING, none=True)] for s in log["steps"]]
    sections.append({
        "id": "log-steps", "heading": "Every step",
        "columns": ["when", *([] if log["kind"] == "deck" else ["deck"]), "what", "table", "person", "witness"],
        "rows": steps, "empty": "No step of the registry in this log.",
        "notes": [f"{NOTHING}: none for this step. Times are the floor's local time, with the zone."]})
    where = [[cell(r["table"], link(f"/tables/{r['table']}")) if log["kind"] == "deck" else
              cell(r["deck"], link(deck_path(r["deck"]))),
              *([] if log["kind"] == "deck" else [cell(r["table"], link(f"/tables/{r['table']}"))]),
              cell(clock.stamp(r["first"])), cell(clock.stamp(r["last"])), cell(r["hands"])] for r in log["tables"]]
    sections.append({
        "id": "log-tables", "heading": "Where it was used" if log["kind"] == "deck" else "Decks in play, by table",
        "columns": [*(["table"] if log["kind"] == "deck" else ["deck", "table"]), "first hand", "last hand", "hands"],
        "rows": where, "empty": "No hand dealt with it." if log["kind"] == "deck" else "No deck dealt a hand this day.",
        "notes": []})
    hands = [[cell(clock.stamp(h["started"])),
              *([] if log["kind"] == "deck" else [cell(h["deck"], link(deck_path(h["deck"])))]),
              cell(h["table"], link(f"/tables/{h['table']}")),
              cell(_dealer(h["dealer"], names)),
              cell(f"hand {h['start_seq']}", link(f"/hands/{h['table']}/{h['start_seq']}"))] for h in log["hands"]]
    sections.append({
        "id": "log-hands", "heading": f"Hands dealt ({log.get('hands_total', len(log['hands']))})",
        "columns": ["started", *([] if log["kind"] == "deck" else ["deck"]), "table", "dealer", "hand"],
        "rows": hands, "empty": "No hand.", "notes": _hands_shown(log)})
    return sections


def _hands_shown(log: dict) -> list[str]:
    """Which of the day's hands a page of its log shows, when it shows only some."""
    total, first, shown = log.get("hands_total"), log.get("hands_first", 0), len(log["hands"])
    if total is None or (first == 0 and shown == total):
        return []
    if not shown:
        return [f"No hand from hand {first + 1}: the day's log holds {total}."]
    return [f"Hands {first + 1} to {first + shown} of {total}, oldest first: the CSV and the PDF hold every one."]


def log_csv(log: dict, clock: FloorClock, base_url: str = "") -> str:
    """One line per step, then one per hand (:data:`CSV_HEADER`): local time with its zone and
    the time in UTC, the deck, what happened, the table, the person, the witness, and a hand's link."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    default = log["deck"]["name"] if log["kind"] == "deck" else ""
    for s in log["steps"]:
        writer.writerow(("step", clock.stamp(s["at"]), R.iso(s["at"]), s["deck"] or default, step_words(s),
                         s["table_id"] or "", s["person"] or "", s["witness"] or "", s["seq"] or "", ""))
    for h in log["hands"]:
        writer.writerow(("hand", clock.stamp(h["started"]), R.iso(h["started"]), h["deck"], "hand dealt",
                         h["table"], h["dealer"] or "", "", h["start_seq"],
                         f"{base_url.rstrip('/')}/hands/{h['table']}/{h['start_seq']}"))
    return out.getvalue()


def log_html(log: dict, clock: FloorClock, names: dict[str, str] | None = None, base_url: str | None = None) -> str:
    """The log as one standalone HTML file that prints well (no script; the sections as the page has them)."""
    templates = jinja2.Environment(loader=jinja2.PackageLoader("dealerbox.floor", "templates"),
                                   autoescape=jinja2.select_autoescape(["html"]))
    return templates.get_template("registry_log_file.html").render(
        title=log_title(log, clock), sections=log_sections(log, clock, names, base_url))


def log_pdf(log: dict, clock: FloorClock, names: dict[str, str] | None = None, base_url: str | None = None) -> bytes:
    """The log as a PDF (the shift report's machinery: :func:`~dealerbox.floor.telling.report_pdf.sections_pdf`)."""
    title = log_title(log, clock)
    return PDF.sections_pdf(title, log_sections(log, clock, names, base_url), footer=f"dealerbox floor, {title}")
