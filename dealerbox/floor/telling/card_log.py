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
import functools
import io
import math
import re
from urllib.parse import quote

import jinja2
from babel.dates import format_date, format_datetime

from dealerbox.floor.telling import report as R
from dealerbox.floor.telling import report_pdf as PDF
from dealerbox.floor.telling.catalogs import N_, SOURCE_LANGUAGE
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.figures import hand_numbers
from dealerbox.floor.telling.figure_text import NOTHING
from dealerbox.floor.telling.language import Language

__all__ = ["deck_log", "day_log", "day_range", "log_sections", "log_title", "log_csv", "log_html", "log_pdf",
           "step_words", "person_words", "limit_words", "hours_words", "told_in", "deck_path", "log_day", "STATE_WORDS", "CSV_HEADER", "FIRST_DAY", "LAST_DAY"]

#: A deck's states as people read them (in English: each page tells them in its reader's language).
STATE_WORDS = {"received": N_("received, sealed"), "registered": N_("registered"), "in_play": N_("in play"),
               "retired": N_("retired"), "destroyed": N_("destroyed")}
#: The CSV's columns.
CSV_HEADER = ("kind", "local_time", "utc_time", "deck", "what", "table", "person", "witness", "hand_seq", "link")


def deck_log(store, name: str) -> dict | None:
    """Deck *name*'s whole life (None: no such deck)."""
    deck = store.deck(name)
    if deck is None:
        return None
    return {"kind": "deck", "deck": deck, "steps": store.registry_steps(deck=name),
            "tables": store.deck_tables(name), "hands": _numbered(store, store.deck_hands(name))}


def _numbered(store, hands: list[dict]) -> list[dict]:
    """*hands*, each with its ``number`` among its table's hands (the figures', the one its story
    page names it by; None for a hand they have not filed), looked up at once."""
    with store.engine.connect() as conn:
        numbers = hand_numbers(conn, [(h["table"], h["start_seq"]) for h in hands])
    return [{**h, "number": numbers.get((h["table"], h["start_seq"]))} for h in hands]


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
            "hands": _numbered(store, store.deck_hands(None, start, end, limit=most, offset=first)),
            "hands_total": sum(r["hands"] for r in tables), "hands_first": first}


#: The house limit's words a table's hand filed in a ``limit`` step (the store's, English):
#: read back to be told in the reader's language.
_PAST_HANDS = re.compile(r"^(?P<value>\d+) hands \(limit (?P<limit>\d+)\)$")
#: Who a table's own step names (the store writes it so: no person signs in at a table's tools).
_TECHNICIAN = re.compile(r"^a technician at (?P<table>\S+)$")
_PAST_HOURS = re.compile(r"^(?P<value>\d+(\.\d+)?) hours in play \(limit (?P<limit>\d+(\.\d+)?)\)$")


def told_in(language: Language | FloorClock | None) -> Language:
    """*language* as it is; a bare :class:`FloorClock` (or None): English in that clock's zone,
    as the log and the audit trail were told before they had a reader's language."""
    if isinstance(language, Language):
        return language
    return _english(language if language is not None else FloorClock())


@functools.lru_cache(maxsize=8)
def _english(clock: FloorClock) -> Language:
    return Language(SOURCE_LANGUAGE, clock)


def _number(language: Language, value) -> str:
    """A count as the reader writes it (``1 234``); anything not a whole number as it came."""
    if isinstance(value, int) and not isinstance(value, bool):
        return language.forms.integer(value)
    return str(value)


def _past(language: Language, said: str) -> str:
    """One of the house limit's ``past`` words in the reader's language (unknown words as filed)."""
    _ = language.gettext
    hands, hours = _PAST_HANDS.match(said), _PAST_HOURS.match(said)
    if hands:
        return _("%(value)s hands (limit %(limit)s)") % {
            "value": language.forms.integer(int(hands["value"])), "limit": language.forms.integer(int(hands["limit"]))}
    if hours:
        return _("%(value)s hours in play (limit %(limit)s)") % {
            "value": language.forms.decimal(float(hours["value"])), "limit": _hours_limit(language, float(hours["limit"]))}
    return said


def person_words(person: str | None, language: Language | None = None) -> str | None:
    """A step's person in *language*: a table's technician (as the store names them) in the
    reader's words, anyone else by their own name."""
    technician = _TECHNICIAN.match(person or "")
    if technician:
        return told_in(language).gettext("a technician at %(table)s") % {"table": technician["table"]}
    return person


def _hours_limit(language: Language, hours: float) -> str:
    """A limit's hours as it was set (``8``, ``0,05``): no decimals it did not have."""
    text = f"{hours:g}"
    digits = len(text.partition(".")[2]) if "e" not in text else 3
    return language.forms.decimal(hours, digits)


def step_words(step: dict, language: Language | None = None) -> str:
    """What one step of the log says, in a pit boss's words, in *language* (English: none given)."""
    language = told_in(language)
    _ = language.gettext
    d, kind = step.get("detail") or {}, step["step"]
    if kind == "received":
        return _("Received sealed: %(count)s in the seal, back %(back)s") % {
            "count": _number(language, d.get("sealed_count")), "back": d.get("back") or _("not named")}
    if kind == "registered":
        count = d.get("tags") if isinstance(d.get("tags"), int) else 0
        said = {"count": _number(language, d.get("tags")), "back": d.get("back")}
        if d.get("back"):
            return language.ngettext("Registered: %(count)s tag, back %(back)s", "Registered: %(count)s tags, back %(back)s",
                      count) % said
        return language.ngettext("Registered: %(count)s tag", "Registered: %(count)s tags", count) % said
    if kind == "in_play":
        return _("In play: its first hand")
    if kind == "issued":
        said = {"table": step.get("table_id"), "from": d.get("from")}
        if d.get("from"):
            return _("Issued to %(table)s: the deck that table deals, moved from %(from)s") % said
        return _("Issued to %(table)s: the deck that table deals") % said
    if kind == "checked":
        if d.get("ok"):
            return _("Deck check: every card there, no damaged tag")
        parts = []
        if d.get("missing"):
            parts.append(_("missing %(cards)s") % {"cards": ", ".join(d["missing"])})
        if d.get("damaged"):
            parts.append(_("damaged tags %(tags)s") % {"tags": ", ".join(d["damaged"])})
        if parts:
            return _("Deck check: not fit for play (%(why)s)") % {"why": "; ".join(parts)}
        return _("Deck check: not fit for play")
    if kind == "retired":
        return _("Retired: %(why)s") % {"why": d.get("why", "")}
    if kind == "destroyed":
        return _("Destroyed")
    if kind == "limit":
        return _("Past the house limit: %(past)s") % {
            "past": _(" and ").join(_past(language, p) for p in d.get("past", []))}
    if kind == "limit_set":
        said = limit_words(d.get("hours"), d.get("hands"), language)
        if said:
            return _("Its own limit: %(limit)s") % {"limit": said}
        return _("Its own limit removed: the house limit applies")
    if kind == "refused":
        return _("Registration refused: %(why)s") % {"why": d.get("why", "")}
    if kind == "badge_registered":
        return _("Badge %(badge)s registered to dealer %(dealer)s") % {
            "badge": step.get("badge"), "dealer": d.get("dealer")}
    if kind == "badge_revoked":
        return _("Badge %(badge)s of dealer %(dealer)s revoked: %(why)s") % {
            "badge": step.get("badge"), "dealer": d.get("dealer"), "why": d.get("why", "")}
    if kind == "applied":
        return _("The table judges with registry version %(version)s") % {"version": _number(language, d.get("version"))}
    return kind


def deck_path(name: str) -> str:
    """The floor's path of deck *name*'s page (its name quoted: a deck's name may hold spaces)."""
    return f"/registry/decks/{quote(name, safe='')}"


def _cell(text, href: str | None = None, *, none: bool = False) -> dict:
    """A cell as the report's sections hold them (``text``, ``href``, ``none``: nothing to show)."""
    return {"text": str(text), "href": href, "none": none}


def _dealer(dealer, names: dict[str, str], language: Language) -> str:
    if dealer is None:
        return language.gettext("nobody signed in")
    return f"{dealer} {names[dealer]}" if names.get(dealer) else str(dealer)


def limit_words(hours, hands, language: Language | None = None) -> str:
    """A deck's limit in words, ``8 hours in play or 400 hands``, in *language* (English:
    none given); empty for no limit."""
    language = told_in(language)
    _ = language.gettext
    said = ([_("%(hours)s hours in play") % {"hours": _hours_limit(language, float(hours))}]
            if hours is not None else []) + \
        ([language.ngettext("%(count)s hand", "%(count)s hands", int(hands)) % {"count": language.forms.integer(hands)}]
         if hands is not None else [])
    return _(" or ").join(said)


def log_title(log: dict, language: Language | FloorClock) -> str:
    """``Card control log: deck Red 7`` or ``Card control log: Sun 29 Nov 2026 (CET)``
    (Czech: ``Protokol kontroly karet: ne 29. 11. 2026 (SEČ)``)."""
    language = told_in(language)
    _ = language.gettext
    if log["kind"] == "deck":
        return _("Card control log: deck %(deck)s") % {"deck": log["deck"]["name"]}
    day = language.clock.at(log["from"])
    if language.code == SOURCE_LANGUAGE:
        said, zone = day.strftime("%a %d %b %Y"), day.strftime("%Z")
    else:
        locale = language.forms.locale
        said = f"{format_date(day, 'EEE', locale=locale)} {format_date(day, 'medium', locale=locale)}"
        zone = format_datetime(day, "zzz", locale=locale) if getattr(day.tzinfo, "key", None) else day.strftime("%Z")
    return _("Card control log: %(day)s (%(zone)s)") % {"day": said, "zone": zone}


def hours_words(seconds, language: Language | None = None) -> str:
    """Seconds in play as hours with one decimal, as the reader writes them (``2,5``); a dash for none."""
    language = told_in(language)
    if seconds is None or not math.isfinite(float(seconds)):
        return NOTHING
    return language.forms.decimal(float(seconds) / 3600, 1)


def log_sections(log: dict, language: Language | FloorClock, names: dict[str, str] | None = None,
                 base_url: str | None = "") -> list[dict]:
    """The log as people read it, in *language* (a bare clock: English): sections as
    :func:`dealerbox.floor.telling.report.report_sections` makes them (``id``, ``heading``,
    ``columns``, ``rows`` of cells, ``empty``, ``notes``); links after *base_url* (``""``:
    paths, as the page has them; None: none)."""
    language = told_in(language)
    _, stamp, integer = language.gettext, language.forms.stamp, language.forms.integer
    names = names or {}
    link = (lambda path: None) if base_url is None else (lambda path: base_url.rstrip("/") + path)
    cell = _cell
    deck_kind = log["kind"] == "deck"
    sections = []
    if deck_kind:
        d = log["deck"]
        limit = limit_words(d["limit_hours"], d["limit_hands"], language)
        sections.append({
            "id": "log-deck", "heading": _("Deck %(deck)s") % {"deck": d["name"]},
            "columns": [_("deck"), _("back"), _("state"), _("tags"), _("hands dealt"), _("hours in play"),
                        _("own limit")],
            "rows": [[cell(d["name"]), cell(d["back"] or NOTHING, none=not d["back"]),
                      cell(_(STATE_WORDS[d["state"]])), cell(integer(len(d["tags"]))), cell(integer(d["hands"])),
                      cell(hours_words(d["play_s"], language)), cell(limit or _("the house's"), none=not limit)]],
            "empty": "", "notes": []})
    steps = [[cell(stamp(s["at"])),
              *([] if deck_kind else
                [cell(s["deck"] or (_("badge %(badge)s") % {"badge": s["badge"]} if s["badge"] else NOTHING),
                      link(deck_path(s["deck"])) if s["deck"] else None, none=not (s["deck"] or s["badge"]))]),
              cell(step_words(s, language)),
              cell(s["table_id"], link(f"/tables/{s['table_id']}")) if s["table_id"] else cell(NOTHING, none=True),
              cell(person_words(s["person"], language)) if s["person"] else cell(NOTHING, none=True),
              cell(s["witness"]) if s["witness"] else cell(NOTHING, none=True)] for s in log["steps"]]
    sections.append({
        "id": "log-steps", "heading": _("Every step"),
        "columns": [_("when"), *([] if deck_kind else [_("deck")]), _("what"), _("table"), _("person"), _("witness")],
        "rows": steps, "empty": _("No step of the registry in this log."),
        "notes": [_("%(dash)s: none for this step. Times are the floor's local time, with the zone.")
                  % {"dash": NOTHING}]})
    where = [[cell(r["table"], link(f"/tables/{r['table']}")) if deck_kind else
              cell(r["deck"], link(deck_path(r["deck"]))),
              *([] if deck_kind else [cell(r["table"], link(f"/tables/{r['table']}"))]),
              cell(stamp(r["first"])), cell(stamp(r["last"])), cell(integer(r["hands"]))] for r in log["tables"]]
    sections.append({
        "id": "log-tables", "heading": _("Where it was used") if deck_kind else _("Decks in play, by table"),
        "columns": [*([_("table")] if deck_kind else [_("deck"), _("table")]), _("first hand"), _("last hand"),
                    _("hands")],
        "rows": where, "empty": _("No hand dealt with it.") if deck_kind else _("No deck dealt a hand this day."),
        "notes": []})
    hands = [[cell(stamp(h["started"])),
              *([] if deck_kind else [cell(h["deck"], link(deck_path(h["deck"])))]),
              cell(h["table"], link(f"/tables/{h['table']}")),
              cell(_dealer(h["dealer"], names, language)),
              # By its number at the table, as its story page names it: its journal line only
              # while the figures have not filed it (a technician's word, not a hand's name).
              cell(_("hand %(number)s") % {"number": h["number"]} if h.get("number") is not None
                   else _("journal line %(seq)s") % {"seq": h["start_seq"]},
                   link(f"/hands/{h['table']}/{h['start_seq']}"))]
             for h in log["hands"]]
    sections.append({
        "id": "log-hands", "heading": _("Hands dealt (%(count)s)") % {"count": integer(log.get("hands_total", len(log["hands"])))},
        "columns": [_("started"), *([] if deck_kind else [_("deck")]), _("table"), _("dealer"), _("hand")],
        "rows": hands, "empty": _("No hand."), "notes": _hands_shown(log, language)})
    return sections


def _hands_shown(log: dict, language: Language) -> list[str]:
    """Which of the day's hands a page of its log shows, when it shows only some."""
    total, first, shown = log.get("hands_total"), log.get("hands_first", 0), len(log["hands"])
    if total is None or (first == 0 and shown == total):
        return []
    integer = language.forms.integer
    if not shown:
        return [language.gettext("No hand from hand %(first)s: the day's log holds %(total)s.")
                % {"first": integer(first + 1), "total": integer(total)}]
    return [language.gettext("Hands %(first)s to %(last)s of %(total)s, oldest first: the CSV and the PDF hold "
                             "every one.") % {"first": integer(first + 1), "last": integer(first + shown),
                                              "total": integer(total)}]


def log_csv(log: dict, language: Language | FloorClock, base_url: str = "") -> str:
    """One line per step, then one per hand (:data:`CSV_HEADER`, for machines: it stays
    English): local time with its zone and the time in UTC, the deck, what happened (in
    *language*, as the reader asked), the table, the person, the witness, and a hand's link."""
    language = told_in(language)
    stamp = language.forms.stamp
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    default = log["deck"]["name"] if log["kind"] == "deck" else ""
    for s in log["steps"]:
        writer.writerow(("step", stamp(s["at"]), R.iso(s["at"]), s["deck"] or default, step_words(s, language),
                         s["table_id"] or "", s["person"] or "", s["witness"] or "", s["seq"] or "", ""))
    for h in log["hands"]:
        writer.writerow(("hand", stamp(h["started"]), R.iso(h["started"]), h["deck"], language.gettext("hand dealt"),
                         h["table"], h["dealer"] or "", "", h["start_seq"],
                         f"{base_url.rstrip('/')}/hands/{h['table']}/{h['start_seq']}"))
    return out.getvalue()


@functools.cache
def _file_templates() -> jinja2.Environment:
    """The standalone file's templates, told in the render's ``language`` (Jinja2's i18n)."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("dealerbox.floor", "templates"),
                             autoescape=jinja2.select_autoescape(["html"]), extensions=["jinja2.ext.i18n"])
    env.install_gettext_callables(
        jinja2.pass_context(lambda ctx, message: ctx["language"].gettext(message)),
        jinja2.pass_context(lambda ctx, one, many, n: ctx["language"].ngettext(one, many, n)), newstyle=True)
    return env


def log_html(log: dict, language: Language | FloorClock, names: dict[str, str] | None = None,
             base_url: str | None = None) -> str:
    """The log as one standalone HTML file that prints well (no script; the sections as the page has them)."""
    language = told_in(language)
    return _file_templates().get_template("registry_log_file.html").render(
        language=language, title=log_title(log, language), sections=log_sections(log, language, names, base_url))


def log_pdf(log: dict, language: Language | FloorClock, names: dict[str, str] | None = None,
            base_url: str | None = None) -> bytes:
    """The log as a PDF in *language* (the shift report's machinery:
    :func:`~dealerbox.floor.telling.report_pdf.sections_pdf`)."""
    language = told_in(language)
    title = log_title(log, language)
    return PDF.floor_pdf(title, log_sections(log, language, names, base_url), language.gettext)
