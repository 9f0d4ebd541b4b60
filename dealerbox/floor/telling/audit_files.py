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
from dealerbox.floor.telling.card_log import deck_path, limit_words
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.figure_text import span
from dealerbox.floor.telling.report import iso
from dealerbox.link import protocol as P

__all__ = ["audit_trail", "audit_title", "audit_sections", "audit_csv", "audit_pdf", "audit_file_name",
           "ACTION_WORDS", "CSV_COLUMNS", "REGISTRY_STEPS", "registry_change_words", "SIGNIN_WORDS", "VIA_WORDS",
           "FAILURE_WORDS", "shown_name", "ACCOUNT_ACTIONS", "account_change_words"]

#: What each action of the store's audit rows is called on the page.
ACTION_WORDS = {"clear": "cleared"}
#: The CSV's columns: the raw values the API gives, then the same in words; ``deck`` and
#: ``badge`` name what a change of the registry changed; ``via`` and ``address`` how and from
#: where a sign-in came (``note``: why one failed).
CSV_COLUMNS = ("at", "at_local", "who", "action", "alert", "table", "kind", "what", "seq", "hand",
               "raised", "raised_local", "count", "note", "deck", "badge", "via", "address")
#: The sign-ins' actions (:data:`~dealerbox.floor.store.alerts.SIGNIN_ACTIONS`) in words.
SIGNIN_WORDS = {"signin": "signed in", "signin_failed": "failed to sign in", "signout": "signed out"}
#: How a sign-in came, in words.
VIA_WORDS = {"password": "with a password", "proxy": "through the proxy"}
#: Why a sign-in failed, in plain words (the floor tells nobody which of name and password was wrong).
FAILURE_WORDS = {WRONG_PASSWORD: "the password was wrong, or no user has that name",
                 PROXY_USER_UNKNOWN: "the proxy named someone who is not a user of the floor"}
#: The characters of a name tried that the trail shows.
NAME_SHOWN = 64
#: The registry's audit actions (:mod:`dealerbox.floor.store.registry`), each with the step of
#: the card control log the same change wrote at the same moment: the step says what changed.
REGISTRY_STEPS = {"deck_receive": "received", "deck_register": "registered", "deck_issue": "issued",
                  "deck_retire": "retired", "deck_destroy": "destroyed", "deck_limit": "limit_set", "badge_register": "badge_registered",
                  "badge_revoke": "badge_revoked"}


#: The audit actions of users changing their own settings (the store's ``set_user_language``).
ACCOUNT_ACTIONS = frozenset({"language"})


def account_change_words(action: str, detail: str) -> str:
    """A user's change of their own setting as an auditor reads it: ``language`` with
    ``cs -> de`` is ``changed their language from cs to de`` (``room``: the room's)."""
    before, _sep, after = detail.partition(" -> ")
    if action == "language" and after:
        return f"changed their language from {before} to {after}"
    return f"{action.replace('_', ' ')}: {detail}"


def registry_change_words(action: str, step: dict | None, detail: str = "") -> str:
    """A change of the registry as an auditor reads it (``received deck B (sealed, 54 cards)``),
    from its step of the card control log; without one, the audit row's own *detail*."""
    if step is None:
        return f"{action.replace('_', ' ')}: {detail}"
    d, deck, badge = step.get("detail") or {}, step.get("deck"), step.get("badge")
    if action == "deck_receive":
        return f"received deck {deck} (sealed, {d.get('sealed_count')} cards, back {d.get('back')})"
    if action == "deck_register":
        return f"registered deck {deck} ({d.get('tags')} tags" + (f", back {d['back']})" if d.get("back") else ")")
    if action == "deck_issue":
        moved = f", moved from {d['from']}" if d.get("from") else ""
        witnessed = f", witnessed by {step['witness']}" if step.get("witness") else ""
        return f"issued deck {deck} to {step.get('table_id')}{moved}{witnessed}"
    if action == "deck_retire":
        return f"retired deck {deck}: {d.get('why', '')}"
    if action == "deck_destroy":
        return f"destroyed deck {deck}, witnessed by {step.get('witness')}"
    if action == "deck_limit":
        said = limit_words(d.get("hours"), d.get("hands"))
        return f"set deck {deck}'s limit to {said}" if said else f"set deck {deck} back to the house's limit"
    if action == "badge_register":
        return f"registered badge {badge} to dealer {d.get('dealer')}"
    if action == "badge_revoke":
        return f"revoked badge {badge} of dealer {d.get('dealer')}: {d.get('why', '')}"
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
            registry.append({"at": row["at"], "who": row["who"], "action": row["action"],
                             "deck": step["deck"] if step else None, "badge": step["badge"] if step else None,
                             "words": registry_change_words(row["action"], step, row.get("detail") or ""),
                             "detail": row.get("detail") or ""})
    accounts = [{"at": row["at"], "who": row["who"], "action": row["action"], "detail": row.get("detail") or "",
                 "words": account_change_words(row["action"], row.get("detail") or "")}
                for row in audit if row["action"] in ACCOUNT_ACTIONS]
    return {"from": start, "to": end, "audit": audit, "alerts": sorted(shown, key=lambda a: a["id"]),
            "registry": registry, "accounts": accounts,
            "signins": [_signin(r) for r in audit if r["action"] in SIGNIN_ACTIONS]}


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
    """The alerts' clears (the registry's changes and the sign-ins have sections of their own), each
    with its alert."""
    by_id = {a["id"]: a for a in trail["alerts"]}
    for row in trail["audit"]:
        if row["action"] not in REGISTRY_STEPS and row["action"] not in SIGNIN_ACTIONS \
                and row["action"] not in ACCOUNT_ACTIONS:
            yield row, by_id.get(row["alert"])


def _changed(change: dict, base_url: str | None) -> dict:
    """The deck (linked to its page) or the badge a change of the registry changed."""
    if change["deck"] is not None:
        return _cell(f"deck {change['deck']}", _link(base_url, deck_path(change["deck"])))
    if change["badge"] is not None:
        return _cell(f"badge {change['badge']}", _link(base_url, "/registry"))
    return _cell("–", none=True)


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
    accounts = [[_cell(clock.full(c["at"])), _cell(c["who"]), _cell(c["words"])]
                for c in reversed(trail.get("accounts", []))]
    changes = [[_cell(clock.full(c["at"])), _cell(c["who"]), _cell(c["words"]), _changed(c, base_url)]
               for c in reversed(trail.get("registry", []))]
    return [{"id": "audit", "heading": f"Alerts cleared ({count})", "columns":
             ["when", "who", "did", "what", "table", "hand", "raised", "note"], "rows": rows,
             "empty": "Nobody cleared an alert in this range.",
             "notes": ["Newest first. Each time is the floor's local time with its date and zone."]},
            {"id": "registry-changes", "heading": f"Decks and badges changed ({len(changes)})",
             "columns": ["when", "who", "did", "deck or badge"], "rows": changes,
             "empty": "Nobody changed the room's decks or badges in this range.",
             "notes": ["Newest first. Each deck's whole card control log is on its page."]},
            {"id": "signins", "heading": f"Sign-ins and sign-outs ({len(trail.get('signins', []))})",
             "columns": ["when", "who", "did", "how", "from", "why it failed"],
             "rows": [[_cell(clock.full(r["at"])), _cell(r["name"]), _cell(r["did"]), _cell(r["how"]),
                       _cell(r["address"] or "–", none=not r["address"]),
                       _cell(r["why_words"] or "–", none=not r["why_words"])]
                      for r in reversed(trail.get("signins", []))],
             "empty": "Nobody signed in or out of the floor's pages in this range.",
             "notes": ["Newest first. A failed sign-in names the name tried, as typed: a character that "
                       "cannot be printed is shown as its escape, a long name is cut."]},
            {"id": "account-changes", "heading": f"Users' own settings changed ({len(accounts)})",
             "columns": ["when", "who", "did"], "rows": accounts,
             "empty": "Nobody changed their own settings in this range.",
             "notes": ["Newest first. A user changes only their own language, from the page header."]}]


def audit_csv(trail: dict, clock: FloorClock, alert_words=None) -> str:
    """One line per action, oldest first: :data:`CSV_COLUMNS`; times in UTC (ISO 8601) and
    beside them in the floor's zone; ``hand`` is the hand's page on the floor."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    lines = []
    for row, alert in _rows(trail):
        a = alert or {}
        hand = _hand(alert, "")["href"] or ""
        lines.append((row["at"], (iso(row["at"]), clock.full(row["at"]), row["who"], row["action"], row["alert"],
                      a.get("table", ""), a.get("kind", ""), _what(alert, alert_words, clock) if alert else "",
                      a.get("seq") if a.get("seq") is not None else "", hand,
                      iso(a["raised"]) if alert else "", clock.full(a["raised"]) if alert else "",
                      a.get("count", ""), row.get("detail") or "", "", "", "", "")))
    for c in trail.get("registry", []):
        lines.append((c["at"], (iso(c["at"]), clock.full(c["at"]), c["who"], c["action"], "", "", "", c["words"],
                                "", "", "", "", "", c["detail"], c["deck"] or "", c["badge"] or "", "", "")))
    for r in trail.get("signins", []):
        lines.append((r["at"], (iso(r["at"]), clock.full(r["at"]), r["name"], r["action"], "", "", "",
                                f"{r['did']} {r['how']}".strip(), "", "", "", "", "", r["why_words"], "", "",
                                r["via"], r["address"])))
    for c in trail.get("accounts", []):
        lines.append((c["at"], (iso(c["at"]), clock.full(c["at"]), c["who"], c["action"], "", "", "", c["words"],
                                "", "", "", "", "", c["detail"], "", "", "", "")))
    # Oldest first, the clears and the changes as they happened (a stable sort keeps each's own order).
    writer.writerows(line for _at, line in sorted(lines, key=lambda x: x[0]))
    return out.getvalue()


def audit_pdf(trail: dict, clock: FloorClock, base_url: str | None = None, alert_words=None) -> bytes:
    """The trail as a landscape A4 PDF, the page's rows and columns; with *base_url*
    (``https://floor.example``) its links open the floor's pages."""
    title = audit_title(trail, clock)
    return PDF.sections_pdf(title, audit_sections(trail, clock, base_url, alert_words),
                            footer=f"dealerbox floor, {title}")
