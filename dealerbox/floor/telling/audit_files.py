"""The audit trail as an auditor reads it: who cleared which alert, when, and why, who
changed the room's registry (received, registered, retired or destroyed a deck, set its
limit, registered or revoked a badge: issue 40), and who signed in to the web view, failed
to (the name tried, escaped: it is anybody's input) or signed out, how and why (issue 47),
over a range of days; as a dict (the JSON), as CSV (raw values beside the words, for the
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
import json

from dealerbox.floor.bridge_alerts import BLIND_KIND, BRIDGE_PREFIX
from dealerbox.floor.store.alerts import PROXY_USER_UNKNOWN, SIGNIN_ACTIONS, WRONG_PASSWORD
from dealerbox.floor.telling import report_pdf as PDF
from dealerbox.floor.telling.card_log import deck_path, limit_words, told_in
from dealerbox.floor.telling.catalogs import N_
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.language import Language
from dealerbox.floor.telling.moment_words import span
from dealerbox.floor.telling.report import alert_hand_words, iso
from dealerbox.link import protocol as P

__all__ = ["audit_trail", "audit_title", "audit_sections", "audit_csv", "audit_pdf", "audit_file_name",
           "ACTION_WORDS", "CSV_COLUMNS", "REGISTRY_STEPS", "registry_change_words", "SIGNIN_WORDS", "VIA_WORDS",
           "FAILURE_WORDS", "shown_name", "ACCOUNT_ACTIONS", "account_change_words"]

#: What each action of the store's audit rows is called on the page.
ACTION_WORDS = {"clear": N_("cleared")}
#: The CSV's columns: the raw values the API gives, then the same in words; ``deck`` and
#: ``badge`` name what a change of the registry changed; ``via`` and ``address`` how and from
#: where a sign-in came (``note``: why one failed).
CSV_COLUMNS = ("at", "at_local", "who", "action", "alert", "table", "kind", "what", "seq", "hand",
               "raised", "raised_local", "count", "note", "deck", "badge", "via", "address")
#: The sign-ins' actions (:data:`~dealerbox.floor.store.alerts.SIGNIN_ACTIONS`) in words.
SIGNIN_WORDS = {"signin": N_("signed in"), "signin_failed": N_("failed to sign in"), "signout": N_("signed out")}
#: How a sign-in came, in words.
VIA_WORDS = {"password": N_("with a password"), "proxy": N_("through the proxy")}
#: Why a sign-in failed, in plain words (the floor tells nobody which of name and password was wrong).
FAILURE_WORDS = {WRONG_PASSWORD: N_("the password was wrong, or no user has that name"),
                 PROXY_USER_UNKNOWN: N_("the proxy named someone who is not a user of the floor")}
#: The characters of a name tried that the trail shows.
NAME_SHOWN = 64
#: The registry's audit actions (:mod:`dealerbox.floor.store.registry`), each with the step of
#: the card control log the same change wrote at the same moment: the step says what changed.
REGISTRY_STEPS = {"deck_receive": "received", "deck_register": "registered", "deck_issue": "issued",
                  "deck_retire": "retired", "deck_destroy": "destroyed", "deck_limit": "limit_set", "badge_register": "badge_registered",
                  "badge_revoke": "badge_revoked"}


#: The audit actions of users changing their own settings (the store's ``set_user_language``).
ACCOUNT_ACTIONS = frozenset({"language"})


def account_change_words(action: str, detail: str, language: Language | None = None) -> str:
    """A user's change of their own setting as an auditor reads it, in *language* (English:
    none given): ``language`` with ``cs -> de`` is ``changed their language from cs to de``
    (the languages named in the reader's words: ``čeština``; ``room``: the room's)."""
    language = told_in(language)
    _ = language.gettext
    before, _sep, after = detail.partition(" -> ")
    if action == "language" and after:
        if language.code == "en":
            return _("changed their language from %(before)s to %(after)s") % {"before": before, "after": after}
        return _("changed their language from %(before)s to %(after)s") % {
            "before": _language_named(before, language), "after": _language_named(after, language)}
    return f"{action.replace('_', ' ')}: {detail}"


def _language_named(code: str, language: Language) -> str:
    """A language's code as the reader names it (``cs``: ``čeština``, ``room``: the room's)."""
    if code == "room":
        return language.gettext("the room's")
    return language.forms.locale.languages.get(code, code)


def registry_change_words(action: str, step: dict | None, detail: str = "", language: Language | None = None) -> str:
    """A change of the registry as an auditor reads it (``received deck B (sealed, 54 cards)``),
    from its step of the card control log, in *language* (English: none given); without a
    step, the audit row's own *detail* (as the store wrote it)."""
    if step is None:
        return f"{action.replace('_', ' ')}: {detail}"
    language = told_in(language)
    _, integer = language.gettext, language.forms.integer
    d, deck, badge = step.get("detail") or {}, step.get("deck"), step.get("badge")
    said = {"deck": deck, "badge": badge, "back": d.get("back"), "table": step.get("table_id"),
            "from": d.get("from"), "witness": step.get("witness"), "why": d.get("why", ""),
            "dealer": d.get("dealer")}
    if action == "deck_receive":
        count = d.get("sealed_count") if isinstance(d.get("sealed_count"), int) else 0
        return language.ngettext("received deck %(deck)s (sealed, %(count)s card, back %(back)s)",
                  "received deck %(deck)s (sealed, %(count)s cards, back %(back)s)", count) % {
            **said, "count": integer(count) if count else d.get("sealed_count")}
    if action == "deck_register":
        count = d.get("tags") if isinstance(d.get("tags"), int) else 0
        said["count"] = integer(count) if count else d.get("tags")
        if d.get("back"):
            return language.ngettext("registered deck %(deck)s (%(count)s tag, back %(back)s)",
                      "registered deck %(deck)s (%(count)s tags, back %(back)s)", count) % said
        return language.ngettext("registered deck %(deck)s (%(count)s tag)", "registered deck %(deck)s (%(count)s tags)", count) % said
    if action == "deck_issue":
        text = _("issued deck %(deck)s to %(table)s") % said
        if d.get("from"):
            text = _("%(issued)s, moved from %(from)s") % {**said, "issued": text}
        if step.get("witness"):
            text = _("%(issued)s, witnessed by %(witness)s") % {**said, "issued": text}
        return text
    if action == "deck_retire":
        return _("retired deck %(deck)s: %(why)s") % said
    if action == "deck_destroy":
        return _("destroyed deck %(deck)s, witnessed by %(witness)s") % said
    if action == "deck_limit":
        limit = limit_words(d.get("hours"), d.get("hands"), language)
        if limit:
            return _("set deck %(deck)s's limit to %(limit)s") % {**said, "limit": limit}
        return _("set deck %(deck)s back to the house's limit") % said
    if action == "badge_register":
        return _("registered badge %(badge)s to dealer %(dealer)s") % said
    if action == "badge_revoke":
        return _("revoked badge %(badge)s of dealer %(dealer)s: %(why)s") % said
    return f"{action.replace('_', ' ')}: {detail}"


def shown_name(name: str) -> str:
    """A name as the trail shows it: a name tried is anybody's input, so one with a character
    that is not printable (a control character, a bidirectional override) is shown escaped, and
    a long one cut, with its length said; a spreadsheet's formula sign at its start is quoted."""
    text = name if name.isprintable() else name.encode("unicode_escape").decode("ascii")
    if len(text) > NAME_SHOWN:
        text = f"{text[:NAME_SHOWN]}... ({len(name)} characters)"
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def _signin(row: dict) -> dict:
    """One sign-in row of the store, with its words."""
    try:
        detail = json.loads(row.get("detail") or "{}")
    except ValueError:
        detail = {}
    detail = detail if isinstance(detail, dict) else {}
    via, why = detail.get("via", ""), detail.get("why", "")
    return {"at": row["at"], "who": row["who"], "name": shown_name(row["who"]), "action": row["action"],
            "via": via, "address": str(detail.get("address", "")), "why": why,
            "did": SIGNIN_WORDS.get(row["action"], row["action"]), "how": VIA_WORDS.get(via, via),
            "why_words": FAILURE_WORDS.get(why, why)}


def audit_trail(audit: list[dict], alerts: list[dict], start: float, end: float,
                steps: list[dict] = ()) -> dict:
    """The trail of ``[start, end)``: the store's *audit* rows made in it, oldest first (the
    alerts' clears and the registry's changes), the *alerts* (the store's, open and cleared)
    raised or cleared in it, by id, and ``registry``: each change of the registry with the
    step of the card control log (*steps*: the store's ``registry_steps``) it wrote, and
    ``signins``: the web view's sign-ins, failed sign-ins and sign-outs, in words. The pages
    pass what the store's ``audit_range`` read for the range; anything outside it is dropped
    here all the same."""
    audit = sorted((r for r in audit if start <= r["at"] < end), key=lambda r: r["at"])
    seen = {r["alert"] for r in audit if r["alert"] is not None}
    shown = [a for a in alerts if start <= a["raised"] < end or a["id"] in seen
             or (a["cleared_at"] is not None and start <= a["cleared_at"] < end)]
    # A change and its step are written in one transaction with the same time and person.
    by_moment = {(s["at"], s["step"], s["person"]): s for s in steps}
    registry = []
    for row in audit:
        if row["action"] in REGISTRY_STEPS:
            step = by_moment.get((row["at"], REGISTRY_STEPS[row["action"]], row["who"]))
            registry.append({"at": row["at"], "who": row["who"], "action": row["action"], "step": step,
                             "deck": step["deck"] if step else None, "badge": step["badge"] if step else None,
                             "words": registry_change_words(row["action"], step, row.get("detail") or ""),
                             "detail": row.get("detail") or ""})
    accounts = [{"at": row["at"], "who": row["who"], "action": row["action"], "detail": row.get("detail") or "",
                 "words": account_change_words(row["action"], row.get("detail") or "")}
                for row in audit if row["action"] in ACCOUNT_ACTIONS]
    return {"from": start, "to": end, "audit": audit, "alerts": sorted(shown, key=lambda a: a["id"]),
            "registry": registry, "accounts": accounts,
            "signins": [_signin(r) for r in audit if r["action"] in SIGNIN_ACTIONS]}


def audit_title(trail: dict, language: Language | FloorClock) -> str:
    """``Audit trail: Wed 25 Nov 2026, 22:00 CET to Thu 26 Nov 2026, 06:00 CET``, in *language*
    (a bare clock: English)."""
    language = told_in(language)
    return language.gettext("Audit trail: %(range)s") % {"range": span(language, trail["from"], trail["to"])}


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


def _what(alert: dict | None, words, language: Language) -> str:
    if alert is None:
        return language.gettext("an alert the store no longer has")
    text = words(alert) if words is not None else f"{alert['kind']}: {alert['text']}"
    count = alert.get("count") or 1
    if count > 1:
        text = language.ngettext("%(alert)s (%(count)s time, the last at %(when)s)",
                                 "%(alert)s (%(count)s times, the last at %(when)s)", count) % {
            "alert": text, "count": language.forms.integer(count), "when": language.forms.full(alert["last_raised"])}
    return text


def _where(alert: dict | None, language: Language) -> str:
    """The table, or the property a bridge's alert is about (as the floor map names it)."""
    if alert is None:
        return "–"
    table = alert["table"]
    if alert["kind"] == BLIND_KIND and table.startswith(BRIDGE_PREFIX):
        return language.gettext("property %(name)s") % {"name": table[len(BRIDGE_PREFIX):]}
    return table


def _hand(alert: dict | None, base_url: str | None, language: Language) -> dict:
    _ = language.gettext
    if not _is_table(alert) or not alert.get("seq"):
        return _cell(_("no hand"), none=True)
    return _cell(alert_hand_words(alert, language), _link(base_url, f"/hands/{alert['table']}/{alert['seq']}"))


def _rows(trail: dict):
    """The alerts' clears (the registry's changes and the sign-ins have sections of their own), each
    with its alert."""
    by_id = {a["id"]: a for a in trail["alerts"]}
    for row in trail["audit"]:
        if row["action"] not in REGISTRY_STEPS and row["action"] not in SIGNIN_ACTIONS \
                and row["action"] not in ACCOUNT_ACTIONS:
            yield row, by_id.get(row["alert"])


def _changed(change: dict, base_url: str | None, language: Language) -> dict:
    """The deck (linked to its page) or the badge a change of the registry changed."""
    _ = language.gettext
    if change["deck"] is not None:
        return _cell(_("deck %(deck)s") % {"deck": change["deck"]}, _link(base_url, deck_path(change["deck"])))
    if change["badge"] is not None:
        return _cell(_("badge %(badge)s") % {"badge": change["badge"]}, _link(base_url, "/registry"))
    return _cell("–", none=True)


def _change_words(change: dict, language: Language) -> str:
    return registry_change_words(change["action"], change.get("step"), change["detail"], language)


def _signin_words(signin: dict, language: Language) -> tuple[str, str, str]:
    """What a sign-in did, how, and why it failed, in *language*."""
    _ = language.gettext
    did, how, why = SIGNIN_WORDS.get(signin["action"]), VIA_WORDS.get(signin["via"]), FAILURE_WORDS.get(signin["why"])
    return (_(did) if did else signin["action"], _(how) if how else signin["via"], _(why) if why else signin["why"])


def audit_sections(trail: dict, language: Language | FloorClock, base_url: str | None = "",
                   alert_words=None) -> list[dict]:
    """The trail as people read it, in *language* (a bare clock: English): sections (``id``,
    ``heading``, ``columns``, ``rows`` of cells ``text``/``href``/``none``, ``empty``,
    ``notes``), a row per action, newest first. Links are the floor's paths after *base_url*
    (``""``: the paths alone, as the page has them; ``None``: no links). *alert_words* (an
    alert → its headline, as the floor map words it: :meth:`FloorWords.first_headline`, in
    the same language) replaces ``KIND: text``."""
    language = told_in(language)
    _, full, integer = language.gettext, language.forms.full, language.forms.integer
    rows = []
    for row, alert in reversed(list(_rows(trail))):
        table = _where(alert, language)
        action = ACTION_WORDS.get(row["action"])
        did = _("%(did)s alert %(alert)s") % {"did": _(action) if action else row["action"], "alert": row["alert"]}
        rows.append([
            _cell(full(row["at"])), _cell(row["who"]), _cell(did),
            _cell(_what(alert, alert_words, language)),
            (_cell(table, _link(base_url, f"/tables/{table}")) if _is_table(alert)
             else _cell(table, none=alert is None)),
            _hand(alert, base_url, language),
            _cell(full(alert["raised"])) if alert is not None else _cell("–", none=True),
            _cell(row.get("detail") or "")])
    accounts = [[_cell(full(c["at"])), _cell(c["who"]), _cell(account_change_words(c["action"], c["detail"], language))]
                for c in reversed(trail.get("accounts", []))]
    changes = [[_cell(full(c["at"])), _cell(c["who"]), _cell(_change_words(c, language)),
                _changed(c, base_url, language)]
               for c in reversed(trail.get("registry", []))]
    signins = []
    for r in reversed(trail.get("signins", [])):
        did, how, why = _signin_words(r, language)
        signins.append([_cell(full(r["at"])), _cell(r["name"]), _cell(did), _cell(how),
                        _cell(r["address"] or "–", none=not r["address"]), _cell(why or "–", none=not why)])
    return [{"id": "audit", "heading": _("Alerts cleared (%(count)s)") % {"count": integer(len(rows))}, "columns":
             [_("when"), _("who"), _("did"), _("what"), _("table"), _("hand"), _("raised"), _("note")], "rows": rows,
             "empty": _("Nobody cleared an alert in this range."),
             "notes": [_("Newest first. Each time is the floor's local time with its date and zone.")]},
            {"id": "registry-changes", "heading": _("Decks and badges changed (%(count)s)") % {
                "count": integer(len(changes))},
             "columns": [_("when"), _("who"), _("did"), _("deck or badge")], "rows": changes,
             "empty": _("Nobody changed the room's decks or badges in this range."),
             "notes": [_("Newest first. Each deck's whole card control log is on its page.")]},
            {"id": "signins", "heading": _("Sign-ins and sign-outs (%(count)s)") % {"count": integer(len(signins))},
             "columns": [_("when"), _("who"), _("did"), _("how"), _("from"), _("why it failed")],
             "rows": signins,
             "empty": _("Nobody signed in or out of the floor's pages in this range."),
             "notes": [_("Newest first. A failed sign-in names the name tried, as typed: a character that "
                         "cannot be shown is written as its code, a long name is cut.")]},
            {"id": "account-changes", "heading": _("Users' own settings changed (%(count)s)") % {
                "count": integer(len(accounts))},
             "columns": [_("when"), _("who"), _("did")], "rows": accounts,
             "empty": _("Nobody changed their own settings in this range."),
             "notes": [_("Newest first. A user changes only their own language, from the page header.")]}]


def audit_csv(trail: dict, language: Language | FloorClock, alert_words=None) -> str:
    """One line per action, oldest first: :data:`CSV_COLUMNS` (for machines: they stay
    English); times in UTC (ISO 8601) and beside them in the floor's zone, as *language*
    writes them, the words in it; ``hand`` is the hand's page on the floor."""
    language = told_in(language)
    full = language.forms.full
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    lines = []
    for row, alert in _rows(trail):
        a = alert or {}
        hand = _hand(alert, "", language)["href"] or ""
        lines.append((row["at"], (iso(row["at"]), full(row["at"]), row["who"], row["action"], row["alert"],
                      a.get("table", ""), a.get("kind", ""), _what(alert, alert_words, language) if alert else "",
                      a.get("seq") if a.get("seq") is not None else "", hand,
                      iso(a["raised"]) if alert else "", full(a["raised"]) if alert else "",
                      a.get("count", ""), row.get("detail") or "", "", "", "", "")))
    for c in trail.get("registry", []):
        lines.append((c["at"], (iso(c["at"]), full(c["at"]), c["who"], c["action"], "", "", "",
                                _change_words(c, language),
                                "", "", "", "", "", c["detail"], c["deck"] or "", c["badge"] or "", "", "")))
    for r in trail.get("signins", []):
        did, how, why = _signin_words(r, language)
        lines.append((r["at"], (iso(r["at"]), full(r["at"]), r["name"], r["action"], "", "", "",
                                f"{did} {how}".strip(), "", "", "", "", "", why, "", "",
                                r["via"], r["address"])))
    for c in trail.get("accounts", []):
        lines.append((c["at"], (iso(c["at"]), full(c["at"]), c["who"], c["action"], "", "", "",
                                account_change_words(c["action"], c["detail"], language),
                                "", "", "", "", "", c["detail"], "", "", "", "")))
    # Oldest first, the clears and the changes as they happened (a stable sort keeps each's own order).
    writer.writerows(line for _at, line in sorted(lines, key=lambda x: x[0]))
    return out.getvalue()


def audit_pdf(trail: dict, language: Language | FloorClock, base_url: str | None = None,
              alert_words=None) -> bytes:
    """The trail as a landscape A4 PDF in *language* (a bare clock: English), the page's rows
    and columns; with *base_url* (``https://floor.example``) its links open the floor's pages."""
    language = told_in(language)
    title = audit_title(trail, language)
    return PDF.floor_pdf(title, audit_sections(trail, language, base_url, alert_words), language.gettext)
