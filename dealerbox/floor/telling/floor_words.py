"""The floor map in words a pit boss reads: each table's tile, each alert, in the floor's
language (``[web] language``) and time zone (``[web] time_zone``).

The tables and the alerts keep their raw fields (ids, ``seq``, epoch seconds) for machines;
:class:`FloorWords` adds the readable ones beside them, once, in the web view's live
floor (:mod:`dealerbox.floor.web.live`): the first page, its stream and ``/api/floor`` all
carry the same words; the shift report's files (``floor report``) word their alerts here
too. The irregularities' and phases' words come from the table's message catalogs
(``[names]`` of firmware_config/messages/<lang>.toml); the rest of the page is English.
"""

from __future__ import annotations

import datetime as _dt
import re

from dealerbox.domain.messages import load_messages
from dealerbox.floor.bridge_alerts import BLIND_KIND, BRIDGE_PREFIX
from dealerbox.floor.store.alerts import REFERENCE_KIND
from dealerbox.floor.store.registry import ALERT_KIND_CONFLICT, ALERT_KIND_LIMIT
from dealerbox.floor.telling.clock import FloorClock

__all__ = ["FloorWords", "COLOURS", "QUIET_S", "SEVERITY", "alert_order", "since_epoch", "room"]

#: An online table that has filed no journal line for this long has gone quiet: a table
#: with a hand running writes a line every few seconds; one between hands, every few minutes.
QUIET_S = 300.0

#: The alerts by how soon someone must go: a floor call first (players wait at the table),
#: then what may be an attack or a blind spot, then the rest.
SEVERITY = {"floor": 0, "tamper": 1, "chain": 1, "offline": 1, BLIND_KIND: 1}
SEVERITY_WORDS = ("floor call", "urgent", "notice")
#: What each alert kind is called in an alert's headline.
KIND_WORDS = {
    "floor": "Floor call", "tamper": "Journal tampered with", "chain": "Journal chain broken",
    "offline": "Offline", BLIND_KIND: "Property blind", "clock": "Clock wrong",
    "protocol": "Message refused", "shuffle": "Shuffle check", "dealer_chart": "Dealer check",
    "procedure": "Procedure check", "seat_luck": "Seat luck check",
    REFERENCE_KIND: "Shuffle not checked",
    ALERT_KIND_CONFLICT: "Registration refused", ALERT_KIND_LIMIT: "Deck past its limit",
}
#: Words an alert's text starts with that its kind's words say already.
_SAID = {REFERENCE_KIND: "reference: "}
#: A decision's verdict before the irregularity's name on a tile.
VERDICT_WORDS = {"floor": "Floor call", "misdeal": "Misdeal", "void": "Hand void", "correct": "Correcting"}
#: A tile's colours: offline, quiet (no line for a while), a floor call or a stopped hand,
#: a correction under way, playing.
COLOURS = ("grey", "quiet", "red", "amber", "green")
#: The verdicts that stop the hand or call the floor: the tile is red.
RED_VERDICTS = frozenset({"floor", "misdeal", "void"})
# The filing's floor-call text (filing.py, _decision_alert): "<irregularity id>: the floor ...".
_FLOOR_TEXT = re.compile(r"^(?P<what>.+): the floor is needed at the table$")


def since_epoch(since) -> float | None:
    """A table's ISO 8601 time (``2026-11-26T18:55:03Z``) or epoch seconds as epoch seconds;
    None for nothing or anything else."""
    if isinstance(since, (int, float)) and not isinstance(since, bool):
        return float(since)
    if not isinstance(since, str) or not since:
        return None
    try:
        moment = _dt.datetime.fromisoformat(since.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.timezone.utc)
    return moment.timestamp()


def alert_order(alerts: list[dict]) -> list[dict]:
    """The alerts as the floor lists them: by severity, then the longest waiting first."""
    return sorted(alerts, key=lambda a: (a.get("severity", SEVERITY.get(a["kind"], 2)), a["raised"], a["id"]))


def room(tables: list[dict]) -> tuple[list[dict], list[dict]]:
    """The worded tiles as the room stands: the pits by name, each ``{"name", "tables"}``
    with its tables by row and column; and the unplaced tables, by id."""
    pits: dict[str, list[dict]] = {}
    unplaced = []
    for t in tables:
        if t.get("pit"):
            pits.setdefault(t["pit"], []).append(t)
        else:
            unplaced.append(t)
    return ([{"name": name, "tables": sorted(pits[name], key=lambda t: (t["row"], t["col"], t["table"]))}
             for name in sorted(pits)], sorted(unplaced, key=lambda t: t["table"]))


class FloorWords:
    """Readable fields for the tiles and alerts, in *language* and *clock*'s zone."""

    def __init__(self, language: str = "en", clock: FloorClock | None = None, quiet_s: float = QUIET_S):
        self.messages = load_messages(language)
        self.clock = clock if clock is not None else FloorClock()
        self.quiet_s = quiet_s

    # -- tables

    def tile(self, view: dict, place: dict | None, last_line: float | None, now: float) -> dict:
        """*view* (:func:`~dealerbox.floor.telling.table_view.view_table` with ``dealer`` and
        ``hands_per_hour``) with its place in the room and its words:

        ``pit``, ``row``, ``col``: where it stands (None: unplaced); ``state``: ``offline``,
        ``quiet``, ``open`` or ``playing``; ``colour`` as the tile is drawn; ``street``: the
        phase in words; ``open_name``: the open irregularity in words; ``open_since_ts``;
        ``heard``: when the floor last filed a line of it (offline: last heard of it at all);
        ``heard_local``; ``what``: the tile's line of words; ``rate``: hands per hour with
        one decimal, for a table that is playing.
        """
        t = dict(view)
        t.update(pit=None, row=None, col=None)
        if place:
            t.update(pit=place["pit"], row=place["row"], col=place["col"])
        open_ = t.get("open") if isinstance(t.get("open"), dict) else None
        t["street"] = self.messages.phase_name(t.get("phase"))
        t["open_name"] = (self.messages.irregularity_name(open_.get("irregularity"), open_.get("verdict"))
                          if open_ else None)
        t["open_since_ts"] = since_epoch(open_.get("since")) if open_ else None
        if not t.get("online"):
            t["state"], t["colour"] = "offline", "grey"
            t["heard"] = t.get("seen")
            t["what"] = "Offline" + (f", last heard {self.clock.stamp(t['heard'])}" if t["heard"] else "")
        elif last_line is None or now - last_line > self.quiet_s:
            t["state"], t["colour"] = "quiet", "quiet"
            t["heard"] = last_line
            t["what"] = (f"Quiet since {self.clock.stamp(last_line)}" if last_line
                         else "Quiet: no hand filed yet")
        elif open_:
            verdict = open_.get("verdict")
            t["state"], t["colour"] = "open", "red" if verdict in RED_VERDICTS else "amber"
            t["heard"] = last_line
            t["what"] = f"{VERDICT_WORDS.get(verdict, 'Open')}: {t['open_name']}"
        else:
            t["state"], t["colour"] = "playing", "green"
            t["heard"] = last_line
            t["what"] = _first_upper(t["street"]) or "Playing"
        t["heard_local"] = self.clock.stamp(t["heard"]) if t["heard"] else ""
        rate = t.get("hands_per_hour")
        t["rate"] = f"{rate:.1f} hands/h" if t["state"] in ("open", "playing") and rate else None
        return t

    # -- alerts

    def alert(self, a: dict) -> dict:
        """*a* (a store's alert) with ``severity`` (0 floor call, 1 urgent, 2 notice),
        ``severity_words``, ``where`` (the table, or the property of a bridge alert),
        ``headline`` (``Floor call at T01: four-card flop``) and ``raised_local`` (the full
        date and time in the floor's zone)."""
        out = dict(a)
        kind, table = a["kind"], a["table"]
        severity = SEVERITY.get(kind, 2)
        where = f"property {table[len(BRIDGE_PREFIX):]}" if kind == BLIND_KIND and \
            table.startswith(BRIDGE_PREFIX) else table
        text = a.get("last_text") or a["text"]
        if kind == "floor":
            m = _FLOOR_TEXT.match(text)
            what = m.group("what") if m else text
            named = self.messages.names["irregularities"]
            if what in named:
                text = named[what]
            elif what == "the dealer called the floor":
                text = self.messages.irregularity_name(None, "floor")
            else:
                text = what
        if kind in _SAID and text.startswith(_SAID[kind]):
            text = text[len(_SAID[kind]):]
        label = KIND_WORDS.get(kind) or kind.replace("_", " ").capitalize()
        out.update(severity=severity, severity_words=SEVERITY_WORDS[severity], where=where,
                   headline=f"{label} at {where}: {text}", raised_local=self.clock.full(a["raised"]),
                   last_local=self.clock.full(a.get("last_raised") or a["raised"]))
        return out

    def first_headline(self, a: dict) -> str:
        """*a*'s headline as first raised (``Floor call at T01: four-card flop``), not as last
        folded: what a report's row says beside the time and the hand it was first raised at."""
        return self.alert(dict(a, last_text=a["text"]))["headline"]


def _first_upper(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text
