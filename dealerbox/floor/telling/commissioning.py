"""A table's commissioning as the floor tells it (issue 48): on the tables page, whether each
table's last run passed, failed, or is older than the house allows (``[commission]
max_age_days`` of floor.toml); on the table's commissioning page, a run as a regulator reads
it: when (local time with the zone), by whom, the software and config, each device with its
verdict and advice, and its figures beside their bounds; as CSV and as a PDF.

A record is a row of the store (:mod:`dealerbox.floor.store.commissioning`). It is drawn as
labelled sections (:func:`record_sections`) that the page and the PDF both draw, as the card
control log's are (:mod:`dealerbox.floor.telling.card_log`).
"""

from __future__ import annotations

import csv
import functools
import io
import re
from dataclasses import dataclass, field
from datetime import datetime

from dealerbox.domain import commission_figures as F
from dealerbox.floor.telling import report as R
from dealerbox.floor.telling.commission_limit import DEFAULT_MAX_AGE_DAYS, MAX_AGE_DAYS_MOST, CommissionLimit
from dealerbox.floor.telling import report_pdf as PDF
from dealerbox.floor.telling.catalogs import N_, SOURCE_LANGUAGE
from dealerbox.floor.telling.clock import CLOCK_LIMIT_S, FloorClock
from dealerbox.floor.telling.commission_words import Said, advice_text, counted, figure_bound, figure_name
from dealerbox.floor.telling.figure_text import NOTHING, count_in, decimal_in, duration, english, offset_in
from dealerbox.floor.telling.language import Language

__all__ = ["CommissionLimit", "CommissionCheck", "commission_check", "record_sections", "record_title",
           "record_csv", "record_pdf", "record_path", "file_name", "figure_value", "written_moment", "age_words", "devices_in", "moment_in", "DEVICE_WORDS",
           "VERDICT_WORDS", "CSV_HEADER", "DEFAULT_MAX_AGE_DAYS", "MAX_AGE_DAYS_MOST"]

_DAY = 86400.0
#: The language the box's commissioning tool words a run's figures, bounds and advice in: the
#: record keeps them as the table filed them; the floor reads the shared ones in the reader's
#: language (:mod:`~dealerbox.floor.telling.commission_words`) and marks the rest so (``lang``).
RECORD_LANGUAGE = "en"
#: A unit that is a word (``cards``, ``reads``), not a symbol (``ms``, ``GiB``).
_WORDY_UNIT = re.compile(r"[a-z]{3,}")

#: The devices as the pages name them (in English: each reader reads them in their language).
DEVICE_WORDS = {"lcd": N_("LCD"), "leds": N_("LEDs and buzzer"), "buttons": N_("Buttons"),
                "mouth": N_("Mouth sensor"), "shoe": N_("Shoe reader"), "board": N_("Board antenna"),
                "clock": N_("Clock"), "state": N_("State directory")}
VERDICT_WORDS = {"pass": N_("passed"), "fail": N_("failed"), "skipped": N_("skipped")}
#: The CSV's columns: one line per figure (a device without figures: one line, its figure cells empty).
CSV_HEADER = ("table", "seq", "run_end_utc", "run_end_local", "zone", "filed_utc", "technician", "version", "config",
              "run_ok", "floor_clock_offset_s", "floor_clock_offset_measured_utc",
              "device", "verdict", "advice", "figure", "value", "unit", "bound", "figure_ok")


@dataclass
class CommissionCheck:
    """One table's commissioning as the tables page judges it: ``state`` is ``passed``,
    ``failed``, ``outdated`` (passed, longer ago than the limit) or ``never``; ``mark`` says
    what is wrong in plain words (None: nothing); ``attention`` orders the page."""

    state: str
    at: float | None = None
    technician: str | None = None
    seq: int | None = None
    age_days: float | None = None
    failed: list[str] = field(default_factory=list)
    mark: str | None = None
    attention: int = 0


def devices_in(language: Language, devices) -> str:
    """The devices *devices* (their ids) named in *language*, joined: ``Shoe reader, Clock``."""
    return ", ".join(language.gettext(DEVICE_WORDS[d]) for d in devices)


def commission_check(last: dict | None, now: float, limit: CommissionLimit,
                     language: Language | None = None) -> CommissionCheck:
    """Table's commissioning from its *last* record (the store's row; None: none reached the
    floor) at *now*, its mark in *language* (the reader's; none: English). A failed run is
    marked whatever its age; a passed one older than the limit is ``outdated``. A run the
    table dates after *now* (its clock ahead) is 0 days old."""
    language = language if language is not None else english()
    _ = language.gettext
    if last is None:
        return CommissionCheck("never", mark=_("never commissioned: no commissioning record has reached the floor"),
                               attention=2)
    age = max(0.0, now - last["at"]) / _DAY
    failed = [d["device"] for d in last["devices"] if d["verdict"] == "fail"]
    found = CommissionCheck("passed", last["at"], last["technician"], last["seq"], age, failed)
    if not last["ok"]:
        found.state = "failed"
        found.mark = _("its last commissioning failed: %(devices)s") % {"devices": devices_in(language, failed)}
        found.attention = 6
    elif age > limit.max_age_days:
        found.state = "outdated"
        found.mark = language.ngettext(
            "last commissioned %(age)s ago, longer than the house's limit of %(days)s day",
            "last commissioned %(age)s ago, longer than the house's limit of %(days)s days",
            limit.max_age_days) % {"age": age_words(age, language), "days": language.forms.integer(limit.max_age_days)}
        found.attention = 2
    return found


def age_words(days: float, language: Language | None = None) -> str:
    """How long ago a run ended: ``3 h 20 min`` within two days, else ``45.0 days`` (one
    decimal; in *language*: ``45,0 dne``)."""
    if days < 2:
        return duration(days * _DAY)
    language = language if language is not None else english()
    # Always one decimal: a language names a decimal count of days in one form (Czech "45,0 dne").
    return language.gettext("%(days)s days") % {"days": decimal_in(language, days)}


def record_path(table: str, seq: int | None = None) -> str:
    """The floor's path of *table*'s commissioning page (its last run), or of its run at line *seq*."""
    return f"/tables/{table}/commissioning" + (f"/{seq}" if seq is not None else "")


def _reader(clock: FloorClock, language: Language | None) -> Language:
    """Whoever reads the record: *language*, else English in *clock*'s zone."""
    return language if language is not None else Language(SOURCE_LANGUAGE, clock)


def figure_value(f: dict, language: Language | None = None) -> str:
    """A figure as people read it (in *language*; none: English): a whole number as one, else
    one decimal, with its unit; a figure the run could not measure (``null``) says so."""
    return _measured(f, language if language is not None else english()).text


def _measured(f: dict, language: Language) -> Said:
    """:func:`figure_value` with whether its unit is read in *language* (a symbol such as ``ms``
    is; a word the floor does not know stays the box's)."""
    value = f["value"]
    if value is None:
        return Said(language.gettext("not measured"), True)
    text = (count_in(language, value) if isinstance(value, int) or float(value).is_integer()
            else decimal_in(language, value))
    unit = f["unit"] or ""
    words = counted(language, value, unit, text) if unit else None
    if words is not None:
        return words
    # A symbol (``ms``, ``GiB``) reads the same in every language; a word the floor has none for is the box's.
    return Said(f"{text} {unit}".strip(), unit in F.UNITS or not _WORDY_UNIT.search(unit))


def written_moment(record: dict, language: Language) -> str:
    """The run's end as the table's own clock wrote it, in the reader's form, in the table's own
    UTC offset and with the zone it named: ``st 2. 12. 2026 7:41:05 UTC+01:00 (Europe/Prague)``."""
    moment = language.forms.as_written(datetime.fromisoformat(record["at_text"]))
    zone = record["zone"] or language.gettext("no zone said")
    return f"{moment} ({zone})"


def moment_in(language: Language, ts) -> str:
    """A moment in a line of words: English in full (``Wed 02 Dec 2026, 14:05:03 CET``), the
    others without the weekday (``2. 12. 2026 14:05 SEČ``): Czech's short weekdays ("po", "st")
    read as prepositions in the middle of a sentence."""
    return language.forms.full(ts) if language.code == SOURCE_LANGUAGE else language.forms.stamp(ts)


def _when(language: Language, ts: float) -> str:
    # English keeps the title's form from before (``Wed 02 Dec 2026, 14:05 CET``).
    if language.code == SOURCE_LANGUAGE:
        return f"{language.clock.at(ts):%a %d %b %Y, %H:%M %Z}"
    return f"{language.forms.weekday(ts)} {language.forms.stamp(ts)}"


def record_title(record: dict, clock: FloorClock, language: Language | None = None) -> str:
    """``Commissioning of table T01, Wed 02 Dec 2026, 14:05 CET: passed`` (in *language*)."""
    language = _reader(clock, language)
    _ = language.gettext
    return _("Commissioning of table %(table)s, %(when)s: %(verdict)s") % {
        "table": record["table"], "when": _when(language, record["at"]),
        "verdict": _("passed") if record["ok"] else _("failed")}


def clock_offset_text(record: dict, clock: FloorClock, language: Language | None = None) -> tuple[str, bool]:
    """The floor's measure of the table's clock filed with the run, in words, and whether it is
    past the tables page's bound (:data:`CLOCK_LIMIT_S`): a table cannot measure its own offset
    from the floor, so the record carries the floor's last measure before the run was filed."""
    language = _reader(clock, language)
    _ = language.gettext
    offset = record.get("clock_offset")
    if offset is None:
        return _("not measured: the table had sent the floor no live health yet"), False
    words = _("on the floor's clock") if round(abs(offset), 1) == 0 else offset_in(language, offset)
    return (_("%(offset)s (measured %(when)s; bound %(bound)s s)") % {
        "offset": words, "when": moment_in(language, record["clock_offset_at"]),
        "bound": decimal_in(language, CLOCK_LIMIT_S)}), abs(offset) > CLOCK_LIMIT_S


def _offset_cell(record: dict, language: Language) -> dict:
    text, off = clock_offset_text(record, language.clock, language)
    return _cell(text, none=record.get("clock_offset") is None, flag=off)


def _cell(text, href: str | None = None, *, none: bool = False, flag: bool = False, lang: str | None = None) -> dict:
    """A cell as the report's sections hold them; ``flag``: what failed, shown so; ``lang``: the
    language of the table's own words in it (:data:`RECORD_LANGUAGE`), for the page's readers
    and screen readers, when it is not the page's."""
    return {"text": str(text), "href": href, "none": none, "flag": flag, "lang": lang}


def _said(words: Said, said: str | None) -> dict:
    """A cell of the record's own words: the box's English, where the floor could not translate
    it, marked so (*said*: :data:`RECORD_LANGUAGE` on a page in another language)."""
    return _cell(words.text, lang=None if words.translated else said)


def record_sections(record: dict, clock: FloorClock, language: Language | None = None) -> list[dict]:
    """The run as a regulator reads it (in *language*; none: English), as sections (``id``,
    ``heading``, ``columns``, ``rows`` of cells, ``empty``, ``notes``;
    :func:`dealerbox.floor.telling.report.report_sections`'s shape): the run, its devices with
    verdict and advice, then each device's figures. The figures' names, units, bounds and the
    advice are the box's words: those of the shared vocabulary are read in *language*
    (:mod:`~dealerbox.floor.telling.commission_words`), the rest as the box recorded them."""
    language = _reader(clock, language)
    _ = language.gettext
    full = functools.partial(moment_in, language)
    cell = _cell
    said = None if language.code == RECORD_LANGUAGE else RECORD_LANGUAGE
    failed = [d["device"] for d in record["devices"] if d["verdict"] == "fail"]
    sections = [{
        "id": "run", "heading": _("The run"), "columns": [_("what"), _("recorded")],
        "rows": [[cell(_("ended")), cell(full(record["at"]))],
                 [cell(_("as the table's clock wrote it")), cell(written_moment(record, language))],
                 [cell(_("reached the floor")), cell(full(record["filed"]))],
                 [cell(_("the table's clock, as the floor measured it before filing the run")),
                  _offset_cell(record, language)],
                 [cell(_("technician")), cell(record["technician"])],
                 [cell(_("software version")), cell(f"dealerbox {record['version']}")],
                 [cell(_("config (SHA-256 of the table's config file)")), cell(record["config"])],
                 [cell(_("result")), cell(_("passed: no device failed") if record["ok"] else
                                          _("failed: %(devices)s") % {"devices": devices_in(language, failed)},
                                          flag=not record["ok"])]],
        "empty": "", "notes": [_("The run's end in the floor's zone, then as the table's own clock wrote it: with "
                                 "its UTC offset and the zone the table named.")]}]
    rows = []
    for d in record["devices"]:
        within = sum(1 for f in d["figures"] if f["ok"])
        rows.append([cell(_(DEVICE_WORDS[d["device"]])),
                     cell(_(VERDICT_WORDS[d["verdict"]]), flag=d["verdict"] == "fail"),
                     cell(_("%(within)s of %(all)s") % {"within": within, "all": len(d["figures"])}
                          if d["figures"] else NOTHING, none=not d["figures"]),
                     _said(advice_text(language, d["advice"]), said) if d["advice"] else cell(NOTHING, none=True)])
    sections.append({"id": "devices", "heading": _("Devices, in the order they were checked"),
                     "columns": [_("device"), _("verdict"), _("figures within their bounds"), _("advice")],
                     "rows": rows, "empty": _("No device in the record."),
                     "notes": [_("%(nothing)s: nothing measured, or no advice (the device passed).")
                               % {"nothing": NOTHING}]})
    for d in record["devices"]:
        empty = _("No figure measured.")
        if d["verdict"] == "skipped" and d["advice"]:
            # The advice is the table's words: the devices' table above holds it, marked so.
            empty = _("No figure measured: the device was skipped (the devices above say why).")
        sections.append({
            "id": f"figures-{d['device']}",
            "heading": f"{_(DEVICE_WORDS[d['device']])}: {_(VERDICT_WORDS[d['verdict']])}",
            "columns": [_("figure"), _("measured"), _("bound"), _("within the bound")],
            "rows": [[_said(figure_name(language, f["name"]), said), _said(_measured(f, language), said),
                      _said(figure_bound(language, f["bound"]), said) if f["bound"] else cell(NOTHING, none=True),
                      cell(_("yes") if f["ok"] else _("no"), flag=not f["ok"])] for f in d["figures"]],
            "empty": empty, "notes": []})
    return sections


def record_csv(record: dict) -> str:
    """One line per figure (:data:`CSV_HEADER`): the run's facts repeated on each, times in ISO
    8601 (the end in UTC, and as the table wrote it with its offset), the raw value."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    run = (record["table"], record["seq"], R.iso(record["at"]), record["at_text"], record["zone"],
           R.iso(record["filed"]), record["technician"], record["version"], record["config"], "true" if record["ok"] else "false",
           "" if record.get("clock_offset") is None else record["clock_offset"],
           "" if record.get("clock_offset_at") is None else R.iso(record["clock_offset_at"]))
    for d in record["devices"]:
        device = (d["device"], d["verdict"], d["advice"])
        for f in d["figures"] or [None]:
            if f is None:
                writer.writerow((*run, *device, "", "", "", "", ""))
            else:
                writer.writerow((*run, *device, f["name"], "" if f["value"] is None else f["value"], f["unit"],
                                 f["bound"], "true" if f["ok"] else "false"))
    return out.getvalue()


def file_name(record: dict, clock: FloorClock, ext: str) -> str:
    """``commissioning-T01-2026-12-02-1405.pdf``: letters, digits and dashes only (a header's value)."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "-" for c in record["table"])
    return f"commissioning-{safe}-{clock.at(record['at']):%Y-%m-%d-%H%M}.{ext}"


def record_pdf(record: dict, clock: FloorClock, language: Language | None = None) -> bytes:
    """The run as a PDF in *language*, the reader's (none: English; the shift report's
    machinery: :func:`~dealerbox.floor.telling.report_pdf.sections_pdf`)."""
    language = _reader(clock, language)
    title = record_title(record, clock, language)
    return PDF.floor_pdf(title, record_sections(record, clock, language), language.gettext)
