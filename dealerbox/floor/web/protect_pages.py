"""The Surveillance page: game protection's figures for the pit boss (issue 33; docs/floor/surveillance.md,
"The Surveillance page").

``/surveillance`` shows, over a range (the current shift unless the query names another, as
every figures page takes it: :func:`~dealerbox.floor.web.params.page_range`):

- the shuffle quality per table and per dealer, in plain words, one decimal;
- the protection alerts (shuffle, procedure, seat luck, dealer chart) with how unlikely
  what they saw was under the declared model;
- seat luck per table and seat, the strong hands behind each figure linked to their
  stories (``/hands/{table}/{seq}``);
- every dealer's control chart (CUSUM) as an SVG chart drawn on the server.

Every alert carries its evidence (what the pass filed with it: the kept pairs and both hands,
the strong hands, the error hands; :mod:`~dealerbox.floor.protect.evidence`), so an officer
sees why it fired without reading a log. A notice says which games' hands are not checked
for a shuffle (no reference, or one fitted from another model), and the alarm budget says
how many false alerts a fair room as configured should expect a week.

``/api/surveillance`` answers the same figures as JSON, and ``/surveillance.pdf`` the alerts
with their evidence as a PDF (the shift report's sections,
:func:`~dealerbox.floor.telling.report_pdf.sections_pdf`). The protection pass itself runs in
the collector (``floor/protect/floor_pass.py``); this page only reads what it filed.

The dealer's page can show the chart too: :meth:`ProtectPages.dealer_chart_html` renders
the partial template ``_dealer_chart.html`` (:meth:`ProtectPages.dealer_chart_context`: its context).
"""

from __future__ import annotations

import functools
import math
import time

import pygal
from pygal.style import DarkStyle
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, RedirectResponse, Response

from dealerbox.floor.protect import figures as PF
from dealerbox.floor.protect.budget import few
from dealerbox.floor.protect.config import GAMES_WORDS, ProtectConfig, game_words
from dealerbox.floor.protect.control_chart import Cusum
from dealerbox.floor.protect.fitted import CURRENT, MISSING, get_fitted, reference_status
from dealerbox.floor.protect.control_chart import OwnBaselineCharts
from dealerbox.floor.protect.floor_pass import (FAILED_KEY, FITTING_KEY, PAGE_KINDS, alert_evidence, alert_odds,
                                                dealer_chart_design, dealer_charts, room_budget, room_rate)
from dealerbox.floor.operating.accounts import may
from dealerbox.floor.operating.settings import load_protect
from dealerbox.floor.telling import report_pdf as PDF
from dealerbox.floor.telling.catalogs import N_
from dealerbox.floor.telling.figures import hand_numbers
from dealerbox.floor.telling.language import Language
from dealerbox.floor.telling.protect_words import ALERT_TITLES, ProtectWords, upper_first
from dealerbox.floor.telling.story_pdf import NO_FONT, FontMissing
from dealerbox.floor.web import charts as C
from dealerbox.floor.web.auth import Refused, form
from dealerbox.floor.web.params import NO_OPEN_ALERT, PageRange, page_range, row_id_of
from dealerbox.floor.web.range_form import range_controls

__all__ = ["ProtectPages", "odds_words", "cusum_chart", "ALERT_TITLES", "RANGE_KEYS"]

#: The query's keys that name a range (any of them: the page shows that range, not the current shift).
RANGE_KEYS = ("preset", "start", "end", "from", "to")


@functools.cache
def _english() -> ProtectWords:
    return ProtectWords(Language("en"))


def odds_words(p: float | None, resolution: float | None = None) -> str:
    """A probability as an English-reading pit boss reads it (:meth:`ProtectWords.odds`):
    ``about 1 in 52,000``, ``4.8%``, ``fewer than 1 in 100,001 (the most the reference can tell)``."""
    return _english().odds(p, resolution)


def _why(words: ProtectWords, status: str, fitting: bool, several: bool, failed: str | None = None) -> str:
    """Why a game's hands (or *several* games') are not checked, and what happens next (*failed*:
    why the background fit failed)."""
    _ = words.language.gettext
    if status == MISSING:
        why = (_("no references have been fitted for the declared model") if several
               else _("no reference has been fitted for the declared model"))
    elif status != CURRENT:
        why = _("their references were fitted from another model") if several else \
            _("its reference was fitted from another model")
    else:
        return _("its reference was not there when they were dealt")
    # Plain words for surveillance, who act through the floor's IT: the setting and the command
    # IT uses are in docs/floor/surveillance.md, "References".
    if failed:
        return (_("%(why)s; fitting them in the background failed: ask the floor's IT to fit them (the error "
                  "message for IT: %(failed)s)")
                if several else
                _("%(why)s; fitting it in the background failed: ask the floor's IT to fit it (the error message "
                  "for IT: %(failed)s)")) % {"why": why, "failed": failed}
    if fitting:
        return (_("%(why)s; they are being fitted in the background, and hands are checked once they are stored")
                if several else
                _("%(why)s; it is being fitted in the background, and hands are checked once it is stored")) % {
            "why": why}
    return (_("%(why)s; ask the floor's IT to fit them") if several else
            _("%(why)s; ask the floor's IT to fit it")) % {"why": why}


def _link(link: dict, base: str) -> dict:
    """A PDF cell of an evidence link: its words, and the floor's address of its page."""
    return {"text": link["text"], "href": base + link["href"] if link.get("href") else None}


def _two_figures(x: float) -> int:
    """*x* rounded to two significant figures (odds read better as 52,000 than 51,873)."""
    digits = len(str(int(x))) - 2
    return int(round(x, -digits)) if digits > 0 else round(x)


#: Ranks as the seat-luck note names them (Omaha's strong pairs).
_RANK_NAMES = {"A": N_("two aces"), "K": N_("two kings"), "Q": N_("two queens"), "J": N_("two jacks"),
               "T": N_("two tens"), "9": N_("two nines"), "8": N_("two eights"), "7": N_("two sevens"),
               "6": N_("two sixes"), "5": N_("two fives"), "4": N_("two fours"), "3": N_("two threes"),
               "2": N_("two twos")}


def _pairs_words(ranks: str, words: ProtectWords) -> str:
    """``"AK"`` → ``two aces or two kings``."""
    _ = words.language.gettext
    named = [_(_RANK_NAMES[r]) if r in _RANK_NAMES else r for r in ranks]
    if len(named) < 2:
        return "".join(named)
    return _("%(some)s or %(last)s") % {"some": ", ".join(named[:-1]), "last": named[-1]}


@functools.lru_cache(maxsize=64)
def _arl(cusum: Cusum, p: float) -> float:
    """The chart's average run length at rate *p*: the same for every dealer, solved once."""
    return cusum.arl(p)


def cusum_chart(chart: dict, cusum: Cusum | None, nonce: str, *, who: str, words: ProtectWords | None = None) -> str:
    """One dealer's control chart as inline SVG: the chart's value after each hand dealt in
    the range, the hands with an error marked, and the limit h; both axes from zero; its
    words and number labels in *words*' language (English by default)."""
    words = words or _english()
    _ = words.language.gettext
    points = chart["points"]
    values = [p["value"] for p in points]
    h = cusum.h if cusum is not None else None
    top = max([*values, h or 0.0, 1.0]) * 1.15
    n = max(1, len(points))
    c = pygal.XY(title=_("Error control chart (CUSUM), %(who)s") % {"who": who},
                 x_title=_("hands dealt in the range, in order"),
                 y_title=_("chart value"), range=(0, top), xrange=(0, n), include_x_axis=True, js=[],
                 style=DarkStyle, height=280, width=760, show_legend=True, legend_at_bottom=True,
                 explicit_size=True, disable_xml_declaration=True, x_label_rotation=0, print_values=False,
                 dots_size=3, value_formatter=lambda v: words.decimal(v, 1),
                 x_value_formatter=lambda v: words.integer(v) if float(v).is_integer() else words.decimal(v, 1))
    c.add(_("chart value after each hand"), [(0, 0.0)] + C.thinned(values),
          show_dots=False)
    marks, per = C.marks_thinned(values, [p["error"] for p in points])
    c.add(_("a hand with an error") if per == 1 else
          _("hands with an error (a mark for each run of %(hands)s hands with one)") % {"hands": words.integer(per)},
          marks, stroke=False)
    if h is not None:
        c.add(_("limit h = %(h)s: out of control") % {"h": words.decimal(h, 1)}, [(0, h), (n, h)], show_dots=False,
              stroke_style={"dasharray": "6, 4"})
    return C.svg(c, nonce)


class ProtectPages:
    """The Surveillance page over *app* (:class:`~dealerbox.floor.web.app.FloorApp`): its
    store, figures, clock, templates and dealers' names; ``[protect]`` from the app's
    floor.toml (the defaults when it has none)."""

    def __init__(self, app):
        self.app = app
        config = app.settings.config
        self.config = load_protect(config) if config is not None else ProtectConfig()
        self._words: dict[str, ProtectWords] = {}

    def routes(self) -> list[tuple]:
        """The routes, as :meth:`FloorApp.routes` lists them: the page, its JSON and PDF need
        "view"; clearing one of its alerts with a note needs "clear", as the floor map's does."""
        return [
            ("/surveillance", "GET", self.page, "view", None),
            ("/api/surveillance", "GET", self.json, "view", None),
            ("/surveillance.pdf", "GET", self.pdf, "view", None),
            ("/surveillance/alerts/{alert_id:int}/clear", "POST", self.clear_form, "clear", "form"),
        ]

    # -- the range

    def window(self, request, now: float | None = None) -> PageRange:
        """The range the page shows: what the query names (:func:`~dealerbox.floor.web.params.page_range`:
        ``preset``, ``start``/``end`` local, ``from``/``to``), else the current shift."""
        q = request.query_params
        if any(q.get(k, "").strip() for k in RANGE_KEYS):
            return page_range(request, self.app.clock, now)
        now = time.time() if now is None else now
        start, end = self.app.clock.presets(now)["this_shift"]
        return PageRange(start, max(end, start + 1.0), "this_shift")

    # -- the figures

    def _rate(self, conn) -> float | None:
        return self.config.room_rate if self.config.room_rate is not None else room_rate(conn)

    def cusum(self, conn) -> Cusum | None:
        """The room's chart: a dealer at the room's rate (``[protect]`` room_rate or the fitted
        one) as the pass designs it, or None when the room's rate is not known."""
        return dealer_chart_design(self.config, self._rate(conn))

    def charts(self, conn) -> OwnBaselineCharts | None:
        """The dealers' charts as the pass keeps them, each against the dealer's own baseline."""
        return dealer_charts(conn, self.config, self._rate(conn))

    def figures(self, conn, start: float, end: float) -> dict:
        """Everything the page shows, read on one connection (JSON-ready)."""
        quality = PF.shuffle_quality(conn, start, end)
        cusum = self.cusum(conn)
        own = self.charts(conn)
        seat_luck = PF.room_seat_luck(conn, start, end, self.config)
        seats = [{"table": row["table"], "seats": seat_luck.get(row["table"], [])} for row in quality["tables"]]
        charts = []
        points = PF.room_dealer_points(conn, start, end, [row["dealer"] for row in quality["dealers"] if row["dealer"]])
        for row in quality["dealers"]:
            if row["dealer"]:
                design = own.design(row["dealer"]) if own is not None else None
                charts.append({"dealer": row["dealer"], "from": start, "to": end, "points": points[row["dealer"]],
                               "h": design.h if design is not None else None,
                               "baseline": design.p0 if design is not None else None})
        current, status = reference_status(conn, self.config)
        fitting = get_fitted(conn, FITTING_KEY) or {}
        being_fitted = {tuple(g) for g in fitting.get("games") or ()}
        failed = get_fitted(conn, FAILED_KEY) or {}
        references = []
        for (players, hole_cards), (state, _found) in sorted(status.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            r = current.get((players, hole_cards))
            references.append({"players": players, "hole_cards": hole_cards, "game": game_words(players, hole_cards),
                               "status": state, "hands": r.n if r is not None else None,
                               "source": r.source if r is not None else None,
                               "fitting": (players, hole_cards) in being_fitted,
                               "failed": failed.get(f"{players}/{hole_cards}") if state != CURRENT else None})
        return {"from": start, "to": end, "shuffle": str(self.config.shuffle),
                "references": references, "fitting_since": fitting.get("since"),
                "unscored": PF.unscored(conn, start, end),
                "budget": room_budget(conn, self.config),
                "shuffle_quality": quality, "seat_luck": seats, "dealer_charts": charts,
                "chart": None if cusum is None else {"room_rate": cusum.p0, "shift": cusum.shift, "k": cusum.k,
                                                     "h": cusum.h, "in_control_arl": _arl(cusum, cusum.p0)},
                "seat_alert_below": self.config.seat_alpha / self._family}

    @property
    def _family(self) -> int:
        c = self.config
        return c.seats * c.tables * c.windows

    def alerts(self, start: float, end: float) -> list[dict]:
        """The protection alerts open now or raised in the range, newest first."""
        return self.app.store.alerts_live_in(start, end, PAGE_KINDS)

    def _answer(self, start: float, end: float, *, seats: bool = False
                ) -> tuple[dict, OwnBaselineCharts | None, list[dict], dict]:
        """The figures, the dealers' charts, the alerts with their evidence, and the numbers of
        the hands their words name (and with *seats*, of the seats' strong hands): ``(table,
        seq)`` -> number, looked up at once (:func:`~dealerbox.floor.telling.figures.hand_numbers`)."""
        alerts = self.alerts(start, end)

        def read(conn):
            data = self.figures(conn, start, end)
            evidence = alert_evidence(conn, [a["id"] for a in alerts])
            hands = set()
            for a in alerts:
                raises = evidence.get(a["id"]) or []
                hands |= ProtectWords.named_hands(a["kind"], a["table"], raises[0]["evidence"] if raises else None)
                if a.get("last_seq") is not None:
                    hands.add((a["table"], a["last_seq"]))
            if seats:
                hands.update((t["table"], seq) for t in data["seat_luck"] for row in t["seats"]
                             for seq in row["strong_hands"])
            return data, self.charts(conn), evidence, hand_numbers(conn, hands)
        data, charts, evidence, numbers = self.app.figures.answer(read)
        for a in alerts:
            a["evidence"] = evidence.get(a["id"], [])
        return data, charts, alerts, numbers

    # -- what the templates show

    def words(self, language: Language | None = None) -> ProtectWords:
        """Protection's words in *language* (the room's by default), one per language."""
        language = language or self.app.language.room
        if language.code not in self._words:
            self._words[language.code] = ProtectWords(language)
        return self._words[language.code]

    def dealer_chart_part(self, chart: dict, cusum: Cusum | None, nonce: str, who: str,
                          words: ProtectWords | None = None) -> dict:
        """The context of ``_dealer_chart.html`` for one dealer's chart (``figures.dealer_chart``):
        the SVG, and in words (*words*: the reader's; the room's by default) the hands, the
        errors, the alarms and what h means."""
        words = words or self.words()
        _, ngettext = words.language.gettext, words.language.ngettext
        points = chart["points"]
        errors = sum(1 for p in points if p["error"])
        part = {"dealer": chart["dealer"], "who": who, "hands": len(points), "errors": errors,
                "svg": None, "alarms": 0, "words": ""}
        if cusum is None:
            part["words"] = _("No chart: the room's error rate is not known yet. The floor's IT sets it, or "
                              "works it out from hands the house trusts.")
            return part
        room = self.config.room_rate
        alarms = sum(1 for p in points if p["value"] >= cusum.h)
        now = points[-1]["value"] if points else 0.0
        part["alarms"] = alarms
        part["svg"] = cusum_chart(chart, cusum, nonce, who=who, words=words)
        facts = {"hands": len(points), "errors": errors, "share": words.percent(errors / len(points) if points else 0.0),
                 "baseline": words.percent(cusum.p0), "room": words.percent(room) if room is not None else "",
                 "now": words.decimal(now), "h": words.decimal(cusum.h),
                 "arl": words.integer(_two_figures(_arl(cusum, cusum.p0))), "shift": words.general(cusum.shift),
                 "shifted_arl": words.integer(_two_figures(_arl(cusum, min(0.999, cusum.shift * cusum.p0)))),
                 "alarms": alarms}
        counted = (ngettext("%(hands)s hand, %(errors)s with an error", "%(hands)s hands, %(errors)s with an error",
                      len(points)) % facts)
        rates = (_("%(share)s; the dealer's baseline: %(baseline)s, the room's %(room)s") if room is not None
                 else _("%(share)s; the dealer's baseline: %(baseline)s")) % facts
        part["words"] = " ".join([
            f"{counted} ({rates}).",
            _("The chart stands at %(now)s; at %(h)s the dealer is out of control and the chart starts again.")
            % facts,
            _("Erring at the baseline, a dealer reaches it about once in %(arl)s hands; at %(shift)s times it in "
              "about %(shifted_arl)s.") % facts,
            ngettext("Out of control %(alarms)s time in this range.", "Out of control %(alarms)s times in this range.",
               alarms) % facts if alarms else _("In control throughout this range.")])
        return part

    async def dealer_chart_context(self, dealer_id: str, start: float, end: float, nonce: str,
                                   who: str, language: Language | None = None) -> dict | None:
        """The context of ``_dealer_chart.html`` for the dealer's page (``/dealers/{id}``),
        None when the dealer dealt no hand the pass read in the range. *dealer_id* is checked
        by the caller (``params.dealer_id_of``); *language* the reader's (the room's by default)."""
        def read(conn):
            own = self.charts(conn)
            return PF.dealer_chart(conn, dealer_id, start, end), own.design(dealer_id) if own is not None else None
        chart, cusum = await run_in_threadpool(self.app.figures.answer, read)
        if not chart["points"]:
            return None
        return self.dealer_chart_part(chart, cusum, nonce, who, self.words(language))

    async def dealer_chart_html(self, dealer_id: str, start: float, end: float, nonce: str,
                                who: str, language: Language | None = None) -> str | None:
        """``_dealer_chart.html`` rendered for the dealer's page (pit.html's ``dealer_chart``) in
        *language* (the room's by default), None when the dealer dealt no hand the pass read in the range."""
        part = await self.dealer_chart_context(dealer_id, start, end, nonce, who, language)
        if part is None:
            return None
        return self.app.templates.get_template("_dealer_chart.html").render(
            chart=part, language=language or self.app.language.room)

    def _shown(self, data: dict, own: OwnBaselineCharts | None, alerts: list[dict], names: dict, nonce: str,
               words: ProtectWords, numbers: dict | None = None) -> dict:
        """The template's rows: every figure already in words, in *words*' language."""
        _ = words.language.gettext

        def dealer(d):
            return f"{d} ({names[d]})" if d in names else (d or _("nobody signed in"))

        # A smallest p-value at a reference's resolution, 1 / (1 + its hands), says "at most".
        resolutions = [1 / (1 + r["hands"]) for r in data["references"] if r["hands"]]

        def least(p):
            at = [res for res in resolutions if p is not None and math.isclose(p, res, rel_tol=1e-9)]
            return words.odds(p, at[0] if at else None)

        def quality_row(r):
            return {"hands": words.integer(r["hands"]), "scored": words.integer(r["scored"]),
                    "kept": words.decimal(r["mean_kept"]), "expected": words.decimal(r["expected_kept"]),
                    "low": words.percent(r["low_p_share"]), "expected_low": words.percent(r["expected_low_p_share"]),
                    "least": least(r["min_p"])}
        q = data["shuffle_quality"]
        tables = [{"name": r["table"], **quality_row(r)} for r in q["tables"]]
        dealers = [{"name": dealer(r["dealer"]), "id": r["dealer"], **quality_row(r)} for r in q["dealers"]]
        shown_alerts = [self.shown_alert(a, words, numbers) for a in alerts]
        limit = data["seat_alert_below"]
        seats = []
        for t in data["seat_luck"]:
            rows = [{**s, "expected_words": words.decimal(s["expected"]), "odds": words.odds(s["p_value"]),
                     "stories": [self._strong_hand(t["table"], seq, numbers, words) for seq in s["strong_hands"]],
                     "improbable": s["p_value"] < limit,
                     "game": _(GAMES_WORDS[2]) if s["hole_cards"] == 2 else _("%(n)s-card Omaha") % {
                         "n": s["hole_cards"]}}
                    for s in t["seats"]]
            seats.append({"table": t["table"], "rows": rows})
        charts = [self.dealer_chart_part(c, own.design(c["dealer"]) if own is not None else None, nonce,
                                         _("dealer %(who)s") % {"who": dealer(c["dealer"])}, words)
                  for c in data["dealer_charts"]]
        references = [{**r, "game": words.game(r["players"], r["hole_cards"]),
                       "hands_words": words.integer(r["hands"]) if r["hands"] else "",
                       "status_words": words.status(r["status"])} for r in data["references"]]
        c = self.config
        return {"tables": tables, "dealers": dealers, "alerts": shown_alerts, "seat_tables": seats,
                "charts": charts, "seat_limit": words.odds(limit), "family": words.integer(self._family),
                "omaha_words": _pairs_words(self.config.omaha_pairs, words),
                "holdem_words": ", ".join(sorted(self.config.holdem_strong)),
                "references": references, "shuffle_words": words.shuffle(data["shuffle"]),
                "figure": {"seat_alarms": words.general(c.seat_alarms_per_year),
                           "seat_feed": words.general(c.seat_feed_every),
                           "seat_alarms_n": int(c.seat_alarms_per_year) if float(c.seat_alarms_per_year).is_integer()
                           else 5,   # a count that is not whole takes the plural ("0.5 false alarms")
                           "seat_alpha": f"{100 * c.seat_alpha:g}%" if words.english
                           else f"{words.general(100 * c.seat_alpha)}\u00a0%",
                           "wait": words.general(c.reference_wait_minutes),
                           "room_rate": words.percent(data["chart"]["room_rate"]) if data["chart"] else "",
                           "chart_shift": words.general(data["chart"]["shift"]) if data["chart"] else ""},
                "notices": self.notices(data, words), "budget": self.budget_rows(data["budget"], words)}

    @staticmethod
    def _strong_hand(table: str, seq: int, numbers: dict | None, words: ProtectWords) -> dict:
        """A seat's strong hand as the seat-luck table links it: its number at the table, or
        its journal line where the figures have not filed it."""
        _ = words.language.gettext
        number = (numbers or {}).get((table, seq))
        if number is not None:
            return {"href": f"/hands/{table}/{seq}", "text": str(number),
                    "label": _("hand %(number)s at table %(table)s") % {"number": number, "table": table}}
        return {"href": f"/hands/{table}/{seq}", "text": _("journal line %(seq)s") % {"seq": seq},
                "label": _("the hand at journal line %(seq)s of table %(table)s") % {"seq": seq, "table": table}}

    def shown_alert(self, a: dict, words: ProtectWords | None = None, numbers: dict | None = None) -> dict:
        """One protection alert as the page and the PDF show it, in *words*' language (the
        room's by default): its title, its odds, and the evidence of its last raise in words
        (:meth:`~dealerbox.floor.telling.protect_words.ProtectWords.why`), every hand by its
        number where *numbers* knows it; ``story``: the link to its last hand, for an alert
        with no evidence. ``shown_text`` is the text as filed: the check's own figures, for
        the technician."""
        words = words or self.words()
        text = a.get("last_text") or a["text"]
        p, resolution = alert_odds(text)
        raises = a.get("evidence") or []
        why = words.why(a["kind"], a["table"], raises[0]["evidence"] if raises else None, numbers)
        last = a.get("last_seq")
        story = None if last is None else {
            "text": words.language.gettext("The hand's story (%(hand)s)") % {
                "hand": words.place(a["table"], last, numbers)}, "href": f"/hands/{a['table']}/{last}"}
        return {**a, "title": words.title(a["kind"]), "odds": words.odds(p, resolution), "p": p,
                "shown_text": text, "why": why, "raises_kept": len(raises), "story": story}

    def notices(self, data: dict, words: ProtectWords | None = None) -> list[str]:
        """What the page must say before anything else, in *words*' language: the games whose
        hands are not checked for a shuffle (no reference for the declared model, or a stale
        one), and how many of this range's hands that left unchecked."""
        words = words or self.words()
        _, ngettext = words.language.gettext, words.language.ngettext
        unscored = {}
        for row in data["unscored"]:
            key = (row["players"], row["hole_cards"])
            unscored[key] = unscored.get(key, 0) + row["hands"]
        out, quiet = [], {}

        def unchecked(game: str, hands: int, why: str) -> str:
            return ngettext("%(game)s: %(n)s hand in this range not checked for a shuffle: %(why)s.",
                      "%(game)s: %(n)s hands in this range not checked for a shuffle: %(why)s.", hands) % {
                "game": upper_first(game), "n": words.integer(hands), "why": why}
        for r in data["references"]:
            game = (r["players"], r["hole_cards"])
            hands = unscored.pop(game, 0)
            if r["status"] == CURRENT and not hands:
                continue
            if hands:
                out.append(unchecked(words.game(*game), hands,
                                     _why(words, r["status"], r["fitting"], False, r.get("failed"))))
            else:   # games with no hand in the range: one line per reason, not one per game
                quiet.setdefault((r["status"], r["fitting"], r.get("failed")), []).append(words.game(*game))
        for (players, hole_cards), hands in sorted(unscored.items()):
            out.append(unchecked(words.game(players, hole_cards), hands,
                                 _("no reference for the declared model when they were dealt")))
        for (status, fitting, failed), games in quiet.items():
            listed = (_("%(some)s and %(last)s") % {"some": ", ".join(games[:-1]), "last": games[-1]}
                      if len(games) > 1 else games[0])
            out.append(_("%(games)s: not checked for a shuffle: %(why)s.") % {
                "games": upper_first(listed), "why": _why(words, status, fitting, len(games) > 1, failed)})
        return out

    def budget_rows(self, budget: dict, words: ProtectWords | None = None) -> dict:
        """The alarm budget (:func:`~dealerbox.floor.protect.budget.alarm_budget`) in *words*' language."""
        words = words or self.words()
        _ = words.language.gettext
        return {"rows": [{"words": _(r["words"]), "week": words.few(r["per_week"]),
                          "per_10000": words.few(r["per_10000_hands"]), "basis": words.basis(r)}
                         for r in budget["rows"]],
                "total_week": words.few(budget["total"]["per_week"]),
                "total_10000": words.few(budget["total"]["per_10000_hands"]),
                "room": _("%(tables)s tables at %(rate)s hands an hour, %(hours)s hours a week: %(hands)s hands a "
                          "week") % {"tables": words.integer(budget["tables"]),
                                     "rate": words.general(budget["hands_per_hour"]),
                                     "hours": words.general(budget["hours_per_week"]),
                                     "hands": words.integer(budget["hands_per_week"])}}

    # -- handlers

    async def page(self, request, client, session):
        shown = self.window(request)
        data, own, alerts, numbers = await run_in_threadpool(functools.partial(
            self._answer, shown.start, shown.end, seats=True))
        names = await self.app._names(session)
        language = self.app.language.of(request, session)
        words = self.words(language)
        return self.app.render(
            request, "surveillance.html", session=session, names=names, start=shown.start, end=shown.end,
            language=language, pick=range_controls(self.app.clock, shown, language), config=self.config, data=data,
            can_clear=may(session.role, "clear"),
            **self._shown(data, own, alerts, names, request.state.nonce, words, numbers))

    async def clear_form(self, request, client, session):
        """Clear one of the page's alerts with the form's note (the floor map's clear:
        :meth:`~dealerbox.floor.web.app.FloorApp.clear_alert`, so the audit names the user), then
        back to the page at the range it showed (the form's ``back``)."""
        fields = await form(request, self.app.settings.request_timeout_s)
        alert_id = row_id_of(NO_OPEN_ALERT, request.path_params["alert_id"])
        alert = await run_in_threadpool(self.app.store.alert, alert_id)
        if alert is None or alert["kind"] not in PAGE_KINDS or alert["cleared_at"] is not None:
            raise Refused(404, N_("no open alert %(number)s on the Surveillance page"), number=alert_id)
        await self.app.clear_alert(alert_id, session.user, fields.get("note"))
        back = fields.get("back", "")
        # Only the page's own query goes back: never an address the form was given.
        query = back if back and all(c.isalnum() or c in "=&-_.%+~" for c in back) else ""
        return RedirectResponse(f"/surveillance?{query}#alerts-title" if query else "/surveillance#alerts-title", 303)

    async def json(self, request, client, session):
        shown = self.window(request)
        data, _own, alerts, numbers = await run_in_threadpool(self._answer, shown.start, shown.end)
        # The figures and ids as stored; ``why`` (readable words) in the reader's language.
        words = self.words(self.app.language.of(request, session))
        return JSONResponse({**data, "alerts": [{**a, "why": words.why(
            a["kind"], a["table"], a["evidence"][0]["evidence"] if a["evidence"] else None, numbers)}
            for a in alerts]})

    def pdf_sections(self, alerts: list[dict], data: dict, base: str, words: ProtectWords | None = None,
                     numbers: dict | None = None) -> list[dict]:
        """The protection alerts with their evidence, the notices and the alarm budget, as the
        shift report's PDF draws sections (``heading``, ``columns``, ``rows`` of cells, ``notes``),
        in *words*' language (the room's by default): every hand a link to its story at *base*,
        named by its number where *numbers* knows it."""
        words = words or self.words()
        _ = words.language.gettext
        rows = []
        for a in (self.shown_alert(a, words, numbers) for a in alerts):
            why = a["why"]
            pairs = "; ".join(_("%(cards)s: places %(here)s here, %(there)s in the earlier hand (%(was)s)") % p
                              for p in why["pairs"])
            links = why["links"][:12] or ([a["story"]] if a["story"] else [{"text": _("no hand"), "href": None}])
            what = [a["title"] + "."]
            if a["odds"]:
                what.append(_("How unlikely: %(odds)s.") % {"odds": a["odds"]})
            what.append(why["summary"])
            if pairs:
                what.append(_("Pairs kept: %(pairs)s.") % {"pairs": pairs})
            rows.append([{"text": words.language.forms.stamp(a["raised"])},
                         {"text": a["table"], "href": f"{base}/tables/{a['table']}"},
                         {"text": " ".join(w for w in what if w)}, _link(links[0], base)])
            # Every hand of the evidence a link of its own, under its alert.
            rows.extend([{"text": ""}, {"text": ""}, {"text": ""}, _link(link, base)] for link in links[1:])
        budget = self.budget_rows(data["budget"], words)
        return [
            {"id": "protect-alerts", "heading": _("Protection alerts and why they fired"),
             "columns": [_("raised"), _("table"), _("what and why"), _("hands (stories)")], "rows": rows,
             "empty": _("No protection alert is open or was raised in this range."),
             "notes": [_("Each hand links to its story (the first 12 of an alert; the page lists every one).")]},
            {"id": "protect-notices", "heading": _("Hands not checked for a shuffle"),
             "columns": [_("notice")], "rows": [[{"text": n}] for n in self.notices(data, words)],
             "empty": _("Every game's hands were checked against a reference fitted from the declared model."),
             "notes": []},
            {"id": "protect-budget", "heading": _("Alarm budget: false alerts a fair room should expect"),
             "columns": [_("check"), _("a week"), _("per 10,000 hands"), _("worked out from")],
             "rows": [[{"text": r["words"]}, {"text": r["week"], "figure": True},
                       {"text": r["per_10000"], "figure": True}, {"text": r["basis"]}]
                      for r in budget["rows"]] + [[{"text": _("all checks")},
                                                   {"text": budget["total_week"], "figure": True},
                                                   {"text": budget["total_10000"], "figure": True}, {"text": ""}]],
             "empty": "", "notes": [budget["room"]]},
        ]

    async def pdf(self, request, client, session):
        shown = self.window(request)
        data, _own, alerts, numbers = await run_in_threadpool(self._answer, shown.start, shown.end)
        base = str(request.base_url).rstrip("/")
        # In the language of whoever asks for it, as their pages are.
        words = self.words(self.app.language.of(request, session))
        _, stamp = words.language.gettext, words.language.forms.stamp
        title = _("Surveillance: %(start)s to %(end)s") % {"start": stamp(shown.start), "end": stamp(shown.end)}
        try:
            pdf = await run_in_threadpool(PDF.floor_pdf, title, self.pdf_sections(alerts, data, base, words, numbers),
                                          words.language.gettext)
        except FontMissing as exc:
            raise Refused(503, NO_FONT, dirs=exc.dirs) from None
        return Response(pdf, media_type="application/pdf",
                        headers={"Content-Disposition": 'attachment; filename="surveillance.pdf"'})
