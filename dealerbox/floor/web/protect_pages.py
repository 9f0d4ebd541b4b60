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
from dealerbox.floor.protect.config import ProtectConfig, game_words
from dealerbox.floor.protect.control_chart import Cusum
from dealerbox.floor.protect.evidence import evidence_lines
from dealerbox.floor.protect.fitted import CURRENT, MISSING, get_fitted, reference_status
from dealerbox.floor.protect.control_chart import OwnBaselineCharts
from dealerbox.floor.protect.floor_pass import (FAILED_KEY, FITTING_KEY, PAGE_KINDS, alert_evidence, alert_odds,
                                                dealer_chart_design, dealer_charts, room_budget, room_rate)
from dealerbox.floor.operating.accounts import may
from dealerbox.floor.operating.settings import load_protect
from dealerbox.floor.telling import report_pdf as PDF
from dealerbox.floor.telling.story_pdf import FontMissing
from dealerbox.floor.web import charts as C
from dealerbox.floor.web.auth import Refused, form
from dealerbox.floor.web.params import PageRange, page_range, row_id_of
from dealerbox.floor.web.range_form import range_controls

__all__ = ["ProtectPages", "odds_words", "cusum_chart", "ALERT_TITLES", "RANGE_KEYS"]

#: What each protection alert is, in a pit boss's words.
ALERT_TITLES = {
    "shuffle": "A deck dealt as if not shuffled",
    "procedure": "A dealer shuffling less than the house declares",
    "seat_luck": "A seat dealt improbably many strong starting hands",
    "dealer_chart": "A dealer's error rate out of line with the room's",
    "protect_reference": "A game whose hands are not checked for a shuffle",
}
#: A game's reference status in words.
STATUS_WORDS = {"current": "fitted from the declared model", "stale": "fitted from another model: not used",
                "missing": "none yet"}
#: The query's keys that name a range (any of them: the page shows that range, not the current shift).
RANGE_KEYS = ("preset", "start", "end", "from", "to")


def odds_words(p: float | None, resolution: float | None = None) -> str:
    """A probability as a pit boss reads it: ``about 1 in 52,000``, ``4.8%``; at the
    reference's resolution, ``fewer than 1 in 100,001`` (a Monte Carlo p-value cannot go lower)."""
    if p is None:
        return ""
    if resolution is not None and p <= resolution * (1 + 1e-9):
        return f"fewer than 1 in {round(1 / resolution):,} (the most the reference can tell)"
    if p <= 0:
        return "never, under the declared model"
    if p < 1e-9:
        return "less than 1 in a billion"
    if p < 0.01:
        return f"about 1 in {_two_figures(1 / p):,}"
    return f"{100 * p:.1f}%"


def _why(status: str, fitting: bool, several: bool, failed: str | None = None) -> str:
    """Why a game's hands (or *several* games') are not checked, and what happens next (*failed*:
    why the background fit failed)."""
    if status == MISSING:
        why = "no references have been fitted" if several else "no reference has been fitted"
        why += " for the declared model"
    elif status != CURRENT:
        why = "their references were" if several else "its reference was"
        why += " fitted from another model"
    else:
        return "its reference was not there when they were dealt"
    if failed:
        return why + (f"; fitting {'them' if several else 'it'} in the background failed ({failed}): "
                      "run dealerbox floor protect fit")
    if fitting:
        return why + ("; they are being fitted in the background, and hands are checked once they are stored"
                      if several else "; it is being fitted in the background, and hands are checked once it is stored")
    return why + "; run dealerbox floor protect fit"


def _upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def _link(link: dict, base: str) -> dict:
    """A PDF cell of an evidence link: its words, and the floor's address of its page."""
    return {"text": link["text"], "href": base + link["href"] if link.get("href") else None}


def _two_figures(x: float) -> int:
    """*x* rounded to two significant figures (odds read better as 52,000 than 51,873)."""
    digits = len(str(int(x))) - 2
    return int(round(x, -digits)) if digits > 0 else round(x)


#: Ranks as the seat-luck note names them (Omaha's strong pairs).
_RANK_NAMES = {"A": "aces", "K": "kings", "Q": "queens", "J": "jacks", "T": "tens", "9": "nines", "8": "eights",
               "7": "sevens", "6": "sixes", "5": "fives", "4": "fours", "3": "threes", "2": "twos"}


def _pairs_words(ranks: str) -> str:
    """``"AK"`` → ``two aces or two kings``."""
    return " or ".join(f"two {_RANK_NAMES.get(r, r)}" for r in ranks)


@functools.lru_cache(maxsize=64)
def _arl(cusum: Cusum, p: float) -> float:
    """The chart's average run length at rate *p*: the same for every dealer, solved once."""
    return cusum.arl(p)


def _percent(share: float | None) -> str:
    return "" if share is None else f"{100 * share:.1f}%"


def _one(x: float | None) -> str:
    return "" if x is None else f"{x:.1f}"


def cusum_chart(chart: dict, cusum: Cusum | None, nonce: str, *, who: str) -> str:
    """One dealer's control chart as inline SVG: the chart's value after each hand dealt in
    the range, the hands with an error marked, and the limit h; both axes from zero."""
    points = chart["points"]
    values = [p["value"] for p in points]
    h = cusum.h if cusum is not None else None
    top = max([*values, h or 0.0, 1.0]) * 1.15
    n = max(1, len(points))
    c = pygal.XY(title=f"Error control chart (CUSUM), {who}", x_title="hands dealt in the range, in order",
                 y_title="chart value", range=(0, top), xrange=(0, n), include_x_axis=True, js=[],
                 style=DarkStyle, height=280, width=760, show_legend=True, legend_at_bottom=True,
                 explicit_size=True, disable_xml_declaration=True, x_label_rotation=0, print_values=False,
                 dots_size=3)
    c.add("chart value after each hand", [(0, 0.0)] + C.thinned(values), show_dots=False)
    c.add("a hand with an error", [(i + 1, p["value"]) for i, p in enumerate(points) if p["error"]],
          stroke=False)
    if h is not None:
        c.add(f"limit h = {h:.1f}: out of control", [(0, h), (n, h)], show_dots=False,
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

    def _answer(self, start: float, end: float) -> tuple[dict, OwnBaselineCharts | None, list[dict]]:
        alerts = self.alerts(start, end)

        def read(conn):
            return self.figures(conn, start, end), self.charts(conn), alert_evidence(conn, [a["id"] for a in alerts])
        data, charts, evidence = self.app.figures.answer(read)
        for a in alerts:
            a["evidence"] = evidence.get(a["id"], [])
        return data, charts, alerts

    # -- what the templates show

    def dealer_chart_part(self, chart: dict, cusum: Cusum | None, nonce: str, who: str) -> dict:
        """The context of ``_dealer_chart.html`` for one dealer's chart (``figures.dealer_chart``):
        the SVG, and in words the hands, the errors, the alarms and what h means."""
        points = chart["points"]
        errors = sum(1 for p in points if p["error"])
        part = {"dealer": chart["dealer"], "who": who, "hands": len(points), "errors": errors,
                "svg": None, "alarms": 0, "words": ""}
        if cusum is None:
            part["words"] = ("No chart: the room's error rate is not known (set [protect] room_rate, or run "
                             "dealerbox floor protect fit --house over hands the house trusts).")
            return part
        room = self.config.room_rate
        alarms = sum(1 for p in points if p["value"] >= cusum.h)
        now = points[-1]["value"] if points else 0.0
        part["alarms"] = alarms
        part["svg"] = cusum_chart(chart, cusum, nonce, who=who)
        part["words"] = (
            f"{len(points)} hands, {errors} with an error ({_percent(errors / len(points)) if points else '0.0%'}; "
            f"the dealer's baseline: {100 * cusum.p0:.1f}%"
            + (f", the room's {100 * room:.1f}%" if room is not None else "")
            + f"). The chart stands at {now:.1f}; at {cusum.h:.1f} the dealer "
            f"is out of control and the chart starts again. Erring at the baseline, a dealer reaches it about "
            f"once in {_two_figures(_arl(cusum, cusum.p0)):,} hands; at {cusum.shift:g} times it in "
            f"about {_two_figures(_arl(cusum, min(0.999, cusum.shift * cusum.p0))):,}. "
            + (f"Out of control {alarms} time{'s' if alarms != 1 else ''} in this range." if alarms
               else "In control throughout this range."))
        return part

    async def dealer_chart_context(self, dealer_id: str, start: float, end: float, nonce: str,
                                   who: str) -> dict | None:
        """The context of ``_dealer_chart.html`` for the dealer's page (``/dealers/{id}``),
        None when the dealer dealt no hand the pass read in the range. *dealer_id* is checked
        by the caller (``params.dealer_id_of``)."""
        def read(conn):
            own = self.charts(conn)
            return PF.dealer_chart(conn, dealer_id, start, end), own.design(dealer_id) if own is not None else None
        chart, cusum = await run_in_threadpool(self.app.figures.answer, read)
        if not chart["points"]:
            return None
        return self.dealer_chart_part(chart, cusum, nonce, who)

    async def dealer_chart_html(self, dealer_id: str, start: float, end: float, nonce: str,
                                who: str) -> str | None:
        """``_dealer_chart.html`` rendered for the dealer's page (pit.html's ``dealer_chart``),
        None when the dealer dealt no hand the pass read in the range."""
        part = await self.dealer_chart_context(dealer_id, start, end, nonce, who)
        if part is None:
            return None
        return self.app.templates.get_template("_dealer_chart.html").render(chart=part)

    def _shown(self, data: dict, own: OwnBaselineCharts | None, alerts: list[dict], names: dict, nonce: str) -> dict:
        """The template's rows: every figure already in words."""
        def dealer(d):
            return f"{d} ({names[d]})" if d in names else (d or "nobody signed in")

        # A smallest p-value at a reference's resolution, 1 / (1 + its hands), says "at most".
        resolutions = [1 / (1 + r["hands"]) for r in data["references"] if r["hands"]]

        def least(p):
            at = [res for res in resolutions if p is not None and math.isclose(p, res, rel_tol=1e-9)]
            return odds_words(p, at[0] if at else None)

        def quality_row(r):
            return {"hands": r["hands"], "scored": r["scored"],
                    "kept": _one(r["mean_kept"]), "expected": _one(r["expected_kept"]),
                    "low": _percent(r["low_p_share"]), "expected_low": _percent(r["expected_low_p_share"]),
                    "least": least(r["min_p"])}
        q = data["shuffle_quality"]
        tables = [{"name": r["table"], **quality_row(r)} for r in q["tables"]]
        dealers = [{"name": dealer(r["dealer"]), "id": r["dealer"], **quality_row(r)} for r in q["dealers"]]
        shown_alerts = [self.shown_alert(a) for a in alerts]
        limit = data["seat_alert_below"]
        seats = []
        for t in data["seat_luck"]:
            rows = [{**s, "expected_words": _one(s["expected"]), "odds": odds_words(s["p_value"]),
                     "improbable": s["p_value"] < limit,
                     "game": "hold'em" if s["hole_cards"] == 2 else f"{s['hole_cards']}-card Omaha"}
                    for s in t["seats"]]
            seats.append({"table": t["table"], "rows": rows})
        charts = [self.dealer_chart_part(c, own.design(c["dealer"]) if own is not None else None, nonce,
                                         f"dealer {dealer(c['dealer'])}")
                  for c in data["dealer_charts"]]
        return {"tables": tables, "dealers": dealers, "alerts": shown_alerts, "seat_tables": seats,
                "charts": charts, "seat_limit": odds_words(limit), "family": self._family,
                "omaha_words": _pairs_words(self.config.omaha_pairs),
                "holdem_words": ", ".join(sorted(self.config.holdem_strong)),
                "notices": self.notices(data), "budget": self.budget_rows(data["budget"])}

    @staticmethod
    def shown_alert(a: dict) -> dict:
        """One protection alert as the page and the PDF show it: its title, its odds, and the
        evidence of its last raise in words (:func:`~dealerbox.floor.protect.evidence.evidence_lines`)."""
        text = a.get("last_text") or a["text"]
        p, resolution = alert_odds(text)
        raises = a.get("evidence") or []
        why = evidence_lines(a["kind"], a["table"], raises[0]["evidence"] if raises else None)
        return {**a, "title": ALERT_TITLES.get(a["kind"], a["kind"]), "odds": odds_words(p, resolution), "p": p,
                "shown_text": text, "why": why, "raises_kept": len(raises)}

    @staticmethod
    def notices(data: dict) -> list[str]:
        """What the page must say before anything else: the games whose hands are not checked
        for a shuffle (no reference for the declared model, or a stale one), and how many of
        this range's hands that left unchecked."""
        unscored = {}
        for row in data["unscored"]:
            key = (row["players"], row["hole_cards"])
            unscored[key] = unscored.get(key, 0) + row["hands"]
        out, quiet = [], {}
        for r in data["references"]:
            game = (r["players"], r["hole_cards"])
            hands = unscored.pop(game, 0)
            if r["status"] == CURRENT and not hands:
                continue
            if hands:
                out.append(f"{_upper(r['game'])}: {hands} hand{'s' if hands != 1 else ''} in this range not "
                           f"checked for a shuffle: {_why(r['status'], r['fitting'], False, r.get('failed'))}.")
            else:   # games with no hand in the range: one line per reason, not one per game
                quiet.setdefault((r["status"], r["fitting"], r.get("failed")), []).append(r["game"])
        for (players, hole_cards), hands in sorted(unscored.items()):
            out.append(f"{_upper(game_words(players, hole_cards))}: {hands} hand{'s' if hands != 1 else ''} in this "
                       f"range not checked for a shuffle: no reference for the declared model when they were dealt.")
        for (status, fitting, failed), games in quiet.items():
            listed = ", ".join(games[:-1]) + " and " + games[-1] if len(games) > 1 else games[0]
            out.append(f"{_upper(listed)}: not checked for a shuffle: "
                       f"{_why(status, fitting, len(games) > 1, failed)}.")
        return out

    @staticmethod
    def budget_rows(budget: dict) -> dict:
        """The alarm budget (:func:`~dealerbox.floor.protect.budget.alarm_budget`) in words."""
        return {"rows": [{"words": r["words"], "week": few(r["per_week"]), "per_10000": few(r["per_10000_hands"]),
                          "basis": r["basis"]} for r in budget["rows"]],
                "total_week": few(budget["total"]["per_week"]),
                "total_10000": few(budget["total"]["per_10000_hands"]),
                "room": (f"{budget['tables']} tables at {budget['hands_per_hour']:g} hands an hour, "
                         f"{budget['hours_per_week']:g} hours a week: {budget['hands_per_week']:,.0f} hands a week")}

    # -- handlers

    async def page(self, request, client, session):
        shown = self.window(request)
        data, own, alerts = await run_in_threadpool(self._answer, shown.start, shown.end)
        names = await self.app._names(session)
        return self.app.render(
            request, "surveillance.html", session=session, names=names, start=shown.start, end=shown.end,
            pick=range_controls(self.app.clock, shown), config=self.config, data=data, status_words=STATUS_WORDS,
            can_clear=may(session.role, "clear"),
            **self._shown(data, own, alerts, names, request.state.nonce))

    async def clear_form(self, request, client, session):
        """Clear one of the page's alerts with the form's note (the floor map's clear:
        :meth:`~dealerbox.floor.web.app.FloorApp.clear_alert`, so the audit names the user), then
        back to the page at the range it showed (the form's ``back``)."""
        fields = await form(request, self.app.settings.request_timeout_s)
        alert_id = row_id_of("open alert", request.path_params["alert_id"])
        alert = await run_in_threadpool(self.app.store.alert, alert_id)
        if alert is None or alert["kind"] not in PAGE_KINDS or alert["cleared_at"] is not None:
            raise Refused(404, "no such open alert on the Surveillance page")
        await self.app.clear_alert(alert_id, session.user, fields.get("note"))
        back = fields.get("back", "")
        # Only the page's own query goes back: never an address the form was given.
        query = back if back and all(c.isalnum() or c in "=&-_.%+~" for c in back) else ""
        return RedirectResponse(f"/surveillance?{query}#alerts-title" if query else "/surveillance#alerts-title", 303)

    async def json(self, request, client, session):
        shown = self.window(request)
        data, _own, alerts = await run_in_threadpool(self._answer, shown.start, shown.end)
        return JSONResponse({**data, "alerts": [{**a, "why": evidence_lines(
            a["kind"], a["table"], a["evidence"][0]["evidence"] if a["evidence"] else None)} for a in alerts]})

    def pdf_sections(self, alerts: list[dict], data: dict, base: str) -> list[dict]:
        """The protection alerts with their evidence, the notices and the alarm budget, as the
        shift report's PDF draws sections (``heading``, ``columns``, ``rows`` of cells, ``notes``):
        every hand a link to its story at *base*."""
        clock = self.app.clock
        rows = []
        for a in (self.shown_alert(a) for a in alerts):
            why = a["why"]
            pairs = "; ".join(f"{p['cards']}: places {p['here']} here, {p['there']} in the earlier hand ({p['was']})"
                              for p in why["pairs"])
            links = why["links"][:12] or [{"text": "no hand", "href": None}]
            rows.append([{"text": clock.stamp(a["raised"])}, {"text": a["table"], "href": f"{base}/tables/{a['table']}"},
                         {"text": f"{a['title']}. {a['odds'] and 'How unlikely: ' + a['odds'] + '. '}{why['summary']}"
                                  + (f" Pairs kept: {pairs}." if pairs else "")},
                         _link(links[0], base)])
            # Every hand of the evidence a link of its own, under its alert.
            rows.extend([{"text": ""}, {"text": ""}, {"text": ""}, _link(link, base)] for link in links[1:])
        budget = self.budget_rows(data["budget"])
        return [
            {"id": "protect-alerts", "heading": "Protection alerts and why they fired",
             "columns": ["raised", "table", "what and why", "hands (stories)"], "rows": rows,
             "empty": "No protection alert is open or was raised in this range.",
             "notes": ["Each hand links to its story (the first 12 of an alert; the page lists every one)."]},
            {"id": "protect-notices", "heading": "Hands not checked for a shuffle",
             "columns": ["notice"], "rows": [[{"text": n}] for n in self.notices(data)],
             "empty": "Every game's hands were checked against a reference fitted from the declared model.",
             "notes": []},
            {"id": "protect-budget", "heading": "Alarm budget: false alerts a fair room should expect",
             "columns": ["check", "a week", "per 10,000 hands", "from"],
             "rows": [[{"text": r["words"]}, {"text": r["week"]}, {"text": r["per_10000"]}, {"text": r["basis"]}]
                      for r in budget["rows"]] + [[{"text": "all checks"}, {"text": budget["total_week"]},
                                                   {"text": budget["total_10000"]}, {"text": ""}]],
             "empty": "", "notes": [budget["room"]]},
        ]

    async def pdf(self, request, client, session):
        shown = self.window(request)
        data, _own, alerts = await run_in_threadpool(self._answer, shown.start, shown.end)
        base = str(request.base_url).rstrip("/")
        title = f"Surveillance: {self.app.clock.stamp(shown.start)} to {self.app.clock.stamp(shown.end)}"
        try:
            pdf = await run_in_threadpool(PDF.sections_pdf, title, self.pdf_sections(alerts, data, base),
                                          footer=f"dealerbox floor, {title}")
        except FontMissing as exc:
            raise Refused(503, str(exc)) from None
        return Response(pdf, media_type="application/pdf",
                        headers={"Content-Disposition": 'attachment; filename="surveillance.pdf"'})
