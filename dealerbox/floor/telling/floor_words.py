"""The floor map in words a pit boss reads: each table's tile, each alert, in the floor's
language (``[web] language``) and time zone (``[web] time_zone``).

The tables and the alerts keep their raw fields (ids, ``seq``, epoch seconds) for machines;
:class:`FloorWords` adds the readable ones beside them, once, in the web view's live
floor (:mod:`dealerbox.floor.web.live`): the first page, its stream and ``/api/floor`` all
carry the same words; the shift report's files (``floor report``) word their alerts here
too. The irregularities' and phases' words come from the table's message catalogs
(``[names]`` of firmware_config/messages/<lang>.toml, their one source); the rest is the
floor's gettext catalogs (:mod:`~.catalogs`), its numbers and moments the language's forms
(:mod:`~.room_forms`). The live floor words in the room's language; a reader of another
language gets the same tiles and alerts told again in theirs (:meth:`FloorWords.retell`).
"""

from __future__ import annotations

import datetime as _dt

from dealerbox.floor import alert_texts as T
from dealerbox.floor.bridge_alerts import BLIND_KIND, BRIDGE_PREFIX
from dealerbox.floor.store.alerts import REFERENCE_KIND
from dealerbox.floor.store.registry import ALERT_KIND_CONFLICT, ALERT_KIND_LIMIT
from dealerbox.floor.telling.catalogs import N_
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.language import Language
from dealerbox.floor.telling.protect_words import ProtectWords

__all__ = ["FloorWords", "COLOURS", "QUIET_S", "SEVERITY", "alert_order", "since_epoch", "room"]

#: An online table that has filed no journal line for this long has gone quiet: a table
#: with a hand running writes a line every few seconds; one between hands, every few minutes.
QUIET_S = 300.0

#: The alerts by how soon someone must go: a floor call first (players wait at the table),
#: then what may be an attack or a blind spot, then the rest.
SEVERITY = {"floor": 0, "tamper": 1, "chain": 1, "offline": 1, BLIND_KIND: 1}
SEVERITY_WORDS = (N_("floor call"), N_("urgent"), N_("notice"))
#: What each alert kind is called in an alert's headline.
KIND_WORDS = {
    "floor": N_("Floor call"), "tamper": N_("Journal tampered with"), "chain": N_("Journal chain broken"),
    "offline": N_("Offline"), BLIND_KIND: N_("Property blind"), "clock": N_("Clock wrong"),
    "protocol": N_("Message refused"), "shuffle": N_("Shuffle check"), "dealer_chart": N_("Dealer check"),
    "procedure": N_("Procedure check"), "seat_luck": N_("Seat luck check"),
    REFERENCE_KIND: N_("Shuffle not checked"),
    ALERT_KIND_CONFLICT: N_("Registration refused"), ALERT_KIND_LIMIT: N_("Deck past its limit"),
}
#: Words an alert's text starts with that its kind's words say already (a text of a form
#: :mod:`~dealerbox.floor.alert_texts` does not know).
_SAID = {REFERENCE_KIND: "reference: "}
#: A decision's verdict before the irregularity's name on a tile.
VERDICT_WORDS = {"floor": N_("Floor call"), "misdeal": N_("Misdeal"), "void": N_("Hand void"),
                 "correct": N_("Correcting")}
#: The collector's alert texts (collecting/filing.py), told in the reader's language from the
#: facts read back from a stored text (:mod:`dealerbox.floor.alert_texts`); a text the table
#: sent itself (a clock's problem in its words) stays as it was filed.
COLLECTOR_TEXTS = frozenset(T.COLLECTOR_TEXTS)
#: A tile's colours: offline, quiet (no line for a while), a floor call or a stopped hand,
#: a correction under way, playing.
COLOURS = ("grey", "quiet", "red", "amber", "green")
#: The verdicts that stop the hand or call the floor: the tile is red.
RED_VERDICTS = frozenset({"floor", "misdeal", "void"})


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
    """Readable fields for the tiles and alerts, in *language* (a code, or a
    :class:`~.language.Language`) and *clock*'s zone."""

    def __init__(self, language: str | Language = "en", clock: FloorClock | None = None,
                 quiet_s: float = QUIET_S):
        if isinstance(language, Language):
            self.language, self.clock = language, language.clock
        else:
            self.clock = clock if clock is not None else FloorClock()
            self.language = Language(language, self.clock)
        self.messages = self.language.messages
        self._ = self.language.gettext
        self.protect = ProtectWords(self.language)
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
        open_ = _open(t)
        t["open_since_ts"] = since_epoch(open_.get("since")) if open_ else None
        if not t.get("online"):
            t["state"], t["colour"] = "offline", "grey"
            t["heard"] = t.get("seen")
        elif last_line is None or now - last_line > self.quiet_s:
            t["state"], t["colour"] = "quiet", "quiet"
            t["heard"] = last_line
        elif open_:
            t["state"], t["colour"] = "open", "red" if open_.get("verdict") in RED_VERDICTS else "amber"
            t["heard"] = last_line
        else:
            t["state"], t["colour"] = "playing", "green"
            t["heard"] = last_line
        return self._word_tile(t)

    def _word_tile(self, t: dict) -> dict:
        """*t*'s words from its state, in this language (its fields but the words as they were)."""
        _ = self._
        open_ = _open(t)
        t["street"] = self.messages.phase_name(t.get("phase"))
        t["open_name"] = (self.messages.irregularity_name(open_.get("irregularity"), open_.get("verdict"))
                          if open_ else None)
        heard = self.language.forms.stamp(t["heard"]) if t["heard"] else ""
        if t["state"] == "offline":
            t["what"] = _("Offline, last heard %(when)s") % {"when": heard} if heard else _("Offline")
        elif t["state"] == "quiet":
            t["what"] = _("Quiet since %(when)s") % {"when": heard} if heard else _("Quiet: no hand filed yet")
        elif t["state"] == "open":
            verdict = VERDICT_WORDS.get(open_.get("verdict"), N_("Open"))
            t["what"] = _("%(verdict)s: %(irregularity)s") % {"verdict": _(verdict), "irregularity": t["open_name"]}
        else:
            t["what"] = _first_upper(t["street"]) or _("Playing")
        t["heard_local"] = heard
        rate = t.get("hands_per_hour")
        t["rate"] = (_("%(rate)s hands/h") % {"rate": self.language.forms.decimal(rate)}
                     if t["state"] in ("open", "playing") and rate else None)
        return t

    def retell(self, tile: dict | None = None, alert: dict | None = None) -> dict:
        """A *tile* or an *alert* that another language's :class:`FloorWords` worded, told
        again in this one (a copy: the live floor's own stays as it is)."""
        if tile is not None:
            return self._word_tile(dict(tile))
        return self.alert(alert)

    # -- alerts

    def alert(self, a: dict) -> dict:
        """*a* (a store's alert) with ``severity`` (0 floor call, 1 urgent, 2 notice),
        ``severity_words``, ``where`` (the table, or the property of a bridge alert),
        ``headline`` (``Floor call at T01: four-card flop``) and ``raised_local`` (the full
        date and time in the floor's zone)."""
        out = dict(a)
        kind, table = a["kind"], a["table"]
        severity = SEVERITY.get(kind, 2)
        _ = self._
        where = _("property %(name)s") % {"name": table[len(BRIDGE_PREFIX):]} if kind == BLIND_KIND and \
            table.startswith(BRIDGE_PREFIX) else table
        text = a.get("last_text") or a["text"]
        message, facts = T.read_text(kind, text)
        if message is T.FLOOR_NEEDED:
            what = facts["what"]
            named = self.messages.names["irregularities"]
            if what in named:
                text = named[what]
            elif what == T.DEALER_CALLED:
                text = self.messages.irregularity_name(None, "floor")
            else:
                text = what
        elif message in COLLECTOR_TEXTS:
            text = _(message.english) % facts
        elif message is not None:
            # A protection alert: its facts, told (the stored text is the technician's figures).
            text = self.protect.headline(kind, text) or text
        elif kind in _SAID and text.startswith(_SAID[kind]):
            text = text[len(_SAID[kind]):]
        label = _(KIND_WORDS[kind]) if kind in KIND_WORDS else kind.replace("_", " ").capitalize()
        full = self.language.forms.full
        out.update(severity=severity, severity_words=_(SEVERITY_WORDS[severity]), where=where,
                   headline=_("%(kind)s at %(where)s: %(text)s") % {"kind": label, "where": where, "text": text},
                   raised_local=full(a["raised"]), last_local=full(a.get("last_raised") or a["raised"]))
        return out

    def first_headline(self, a: dict) -> str:
        """*a*'s headline as first raised (``Floor call at T01: four-card flop``), not as last
        folded: what a report's row says beside the time and the hand it was first raised at."""
        return self.alert(dict(a, last_text=a["text"]))["headline"]


def _open(t: dict) -> dict | None:
    return t.get("open") if isinstance(t.get("open"), dict) else None


def _first_upper(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text
