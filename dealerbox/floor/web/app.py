"""The floor view's ASGI application (Starlette): its routes as one table.

Every route names the permission it needs (:data:`~dealerbox.floor.operating.accounts.PERMISSIONS`;
``None``: anyone, which only the sign-in and the health check are) and the
body it takes; :class:`~.auth.Gate` enforces both before the handler runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as _dt
import json
import logging
import secrets
import time

import anyio
import jinja2
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from dealerbox.floor.telling.deck_names import floor_registries
from dealerbox.floor.telling import figures as F
from dealerbox.floor.telling import figure_text as FT
from dealerbox.floor.telling import report as R
from dealerbox.floor.telling import audit_files as AF
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.commissioning import commission_check
from dealerbox.floor.operating.accounts import PASSWORD_MAX, ROLES, AccountError, Accounts, Session, Sessions, SigninLimiter, may
from dealerbox.floor.operating.settings import WebSettings
from dealerbox.floor.operating.security_log import security_event
from dealerbox.floor.store import Store
from dealerbox.floor.store.alerts import WRONG_PASSWORD
from dealerbox.floor.telling.story_pdf import NO_FONT, FontMissing
from dealerbox.floor.telling.story import registry_cards
from dealerbox.floor.web import charts as C
from dealerbox.floor.web.auth import SIGNIN_COOKIE, Client, Gate, Refused, form, json_object
from dealerbox.floor.web.figures_api import FiguresApi
from dealerbox.floor.telling.floor_words import room
from dealerbox.floor.telling.catalogs import N_
from dealerbox.floor.web.language import LANGUAGES, LanguageChoice
from dealerbox.floor.web.live import Floor
from dealerbox.floor.web.story_pages import StoryPages
from dealerbox.floor.web.protect_pages import ProtectPages
from dealerbox.floor.web.registry_pages import RegistryPages
from dealerbox.floor.web.tables_pages import TablesPages, commission_shown
from dealerbox.floor.web.commission_pages import CommissionPages
from dealerbox.floor.web.metrics import FloorMetrics
from dealerbox.floor.web.params import NO_OPEN_ALERT, dealer_id_of, page_range, row_id_of, table_id_of, user_name_of
from dealerbox.floor.web.range_form import range_controls
from dealerbox.floor.web.refusal_page import RefusalPage, for_people
from dealerbox.link import protocol as P

__all__ = ["FloorApp", "create_app"]

log = logging.getLogger(__name__)

#: How often an open event stream checks that its session still holds.
SESSION_CHECK_S = 5.0
#: argon2id takes 64 MiB and a few tenths of a second: at most this many at once.
HASHING_AT_ONCE = 2
NOTE_MAX = 500


class FloorApp:
    """The web view over one store. :meth:`asgi` is the application."""

    def __init__(self, settings: WebSettings):
        self.settings = settings
        self.store = Store(settings.store)
        self.accounts = Accounts(self.store)
        self.sessions = Sessions(self.store, settings.session_idle_s, settings.session_max_s)
        self.limiter = SigninLimiter(settings.signin_limit_user, settings.signin_limit_address,
                                     settings.signin_window_s)
        self.gate = Gate(settings, self.store, self.sessions)
        self.figures = FiguresApi(settings.store, card_of_uid=registry_cards(
            *floor_registries(settings.deck_registry, self.store.engine)))
        self.clock = FloorClock(settings.time_zone, settings.shift_starts)
        # Who reads which language (issue 45); the live floor words in the room's.
        self.language = LanguageChoice(self)
        self.floor = Floor(settings.store, self.figures, self.language.floor_words(self.language.room))
        self.hashing = anyio.CapacityLimiter(HASHING_AT_ONCE)
        self.templates = jinja2.Environment(
            loader=jinja2.PackageLoader("dealerbox.floor", "templates"),
            autoescape=jinja2.select_autoescape(["html"]))
        self.language.install(self.templates)
        self.stories = StoryPages(self.figures, self.language, self._names)
        self.templates.filters.update(age=_age, iso=R.iso)
        # Game protection's Surveillance page (issue 33): after the clock and the templates it uses.
        self.protect = ProtectPages(self)
        self.metrics = FloorMetrics(self)
        # The room's registry and its card control log (issue 40).
        self.registry = RegistryPages(self)
        # A refusal a person meets, said on a page in their language (issue 45).
        self.refusals = RefusalPage(self)

    # -- the table of routes

    def routes(self) -> list[tuple[str, str, object, str | None, str | None]]:
        """``(path, method, handler, permission, body)``: who may do what, in one place."""
        return [
            ("/healthz", "GET", self.healthz, None, None),
            ("/login", "GET", self.signin_page, None, None),
            ("/login", "POST", self.signin_form, None, "form"),
            ("/logout", "POST", self.signout_form, "view", "form"),
            *self.language.routes(),
            ("/", "GET", self.floor_page, "view", None),
            ("/audit", "GET", self.audit_page, "view", None),
            ("/hands/{table_id}/{seq:int}", "GET", self.hand_page, "view", None),
            ("/tables/{table_id}", "GET", self.table_page, "view", None),
            ("/dealers/{dealer_id}", "GET", self.dealer_page, "view", None),
            ("/report", "GET", self.report_page, "view", None),
            ("/api/report", "GET", self.report_json, "view", None),
            ("/report.csv", "GET", self.report_csv, "view", None),
            ("/report.pdf", "GET", self.report_pdf, "view", None),
            ("/events", "GET", self.events_json, "view", None),
            ("/events/page", "GET", self.events_page, "view", None),
            ("/api/session", "POST", self.signin_json, None, "json"),
            ("/api/session", "GET", self.session_json, "view", None),
            ("/api/session", "DELETE", self.signout_json, "view", None),
            ("/api/floor", "GET", self.api_floor, "view", None),
            ("/api/audit", "GET", self.api_audit, "view", None),
            ("/audit.csv", "GET", self.audit_csv, "view", None),
            ("/audit.pdf", "GET", self.audit_pdf, "view", None),
            ("/api/alerts/{alert_id:int}/clear", "POST", self.api_clear, "clear", "json"),
            ("/api/users", "GET", self.api_users, "manage_users", None),
            ("/api/users", "POST", self.api_user_add, "manage_users", "json"),
            ("/api/users/{name}", "DELETE", self.api_user_remove, "manage_users", None),
            *self.figures.routes(),
            *self.stories.routes(),
            *self.protect.routes(),
            *self.registry.routes(),
            *TablesPages(self).routes(),
            *CommissionPages(self).routes(),
            *self.metrics.routes(),
        ]

    def asgi(self) -> Starlette:
        routes = [Route(path, self._endpoint(handler, permission, body, for_people(path)), methods=[method])
                  for path, method, handler, permission, body in self.routes()]
        return Starlette(routes=routes, lifespan=self._lifespan,
                         middleware=[Middleware(SecurityHeaders, tls=self.settings.tls)],
                         exception_handlers={404: self.refusals.no_route, 405: self.refusals.no_route})

    def _endpoint(self, handler, permission, body, people: bool):
        async def endpoint(request: Request) -> Response:
            try:
                client, session, new_token = await self.gate.guard(request, permission, body)
                response = await handler(request, client, session)
            except Refused as refused:
                return self.refusals.answer(request, refused, people=people)
            if new_token is not None:
                self.gate.set_cookie(response, client, new_token)
            return response
        endpoint.__name__ = handler.__name__
        return endpoint

    @contextlib.asynccontextmanager
    async def _lifespan(self, _app):
        await self.floor.start()
        try:
            yield
        finally:
            await self.floor.stop()
            await run_in_threadpool(self.store.close)
            self.figures.close()

    def close_streams(self) -> None:
        """End every event stream (the server is stopping)."""
        self.floor.close_streams()

    # -- pages

    def render(self, request: Request, name: str, status: int = 200, **context) -> HTMLResponse:
        context.setdefault("session", None)
        context.setdefault("names", {})
        context.setdefault("language", self.language.of(request, context["session"]))
        context.setdefault("languages", self.language.languages)
        context.setdefault("room_language", self.language.room)
        context.setdefault("back_path", request.url.path)
        html = self.templates.get_template(name).render(nonce=request.state.nonce, roles=ROLES,
                                                        may=may, **context)
        return HTMLResponse(html, status)

    async def healthz(self, request, client, session):
        return JSONResponse({"ok": True})

    async def signin_page(self, request, client, session, *, error: str = "", status: int = 200,
                          headers: dict | None = None):
        token = self.gate.signin_token()
        # A language picked from the page's links (?lang=) stays picked when the form is sent.
        asked = request.query_params.get("lang")
        response = self.render(request, "signin.html", status, token=token, error=error,
                               request_lang=asked if asked in LANGUAGES else "")
        self.gate.set_cookie(response, client, token, base=SIGNIN_COOKIE, max_age=3600)
        response.headers.update(headers or {})
        return response

    async def signin_form(self, request, client, session):
        fields = await form(request, self.settings.request_timeout_s)
        expected = request.cookies.get(self.gate.cookie_name(client, SIGNIN_COOKIE), "")
        given = fields.get("csrf", "")
        language = self.language.of(request, None)
        _ = language.gettext
        if not expected or not secrets.compare_digest(given.encode(), expected.encode()):
            return await self.signin_page(request, client, None, status=403,
                                          error=_("The sign-in form had expired: sign in again."))
        try:
            token, new = await self.signin(fields.get("user", ""), fields.get("password", ""), client,
                                           request)
        except Refused as refused:
            return await self.signin_page(request, client, None, status=refused.status,
                                          error=refused.told(language),
                                          headers=refused.headers)
        response = RedirectResponse("/", 303)
        self.gate.set_cookie(response, client, token)
        self.gate.drop_cookie(response, client, SIGNIN_COOKIE)
        return response

    async def signout_form(self, request, client, session):
        await run_in_threadpool(self._sign_out, session, client)
        response = RedirectResponse("/login", 303)
        self.gate.drop_cookie(response, client)
        return response

    async def floor_page(self, request, client, session):
        snap = self.language.told(self.language.of(request, session), self.floor.snapshot())
        names = await self._names(session)
        pits, unplaced = room(snap["tables"])
        return self.render(request, "floor.html", session=session, names=names, tables=snap["tables"],
                           pits=pits, unplaced=unplaced, alerts=snap["alerts"], bridges=snap["bridges"],
                           now=snap["now"])

    async def audit_page(self, request, client, session):
        shown = page_range(request, self.clock)
        trail = await run_in_threadpool(self._audit, shown.start, shown.end)
        # In the reader's language, the alerts worded as their floor map words them.
        language = self.language.of(request, session)
        words = self.language.floor_words(language).first_headline
        return self.render(request, "audit.html", session=session, language=language,
                           title=AF.audit_title(trail, language), pick=range_controls(self.clock, shown, language),
                           sections=AF.audit_sections(trail, language, "", words))

    async def audit_csv(self, request, client, session):
        shown = page_range(request, self.clock)
        trail = await run_in_threadpool(self._audit, shown.start, shown.end)
        name = AF.audit_file_name(trail, self.clock, "csv")
        language = self.language.of(request, session)
        return Response(AF.audit_csv(trail, language, self.language.floor_words(language).first_headline),
                        media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    async def audit_pdf(self, request, client, session):
        shown = page_range(request, self.clock)
        trail = await run_in_threadpool(self._audit, shown.start, shown.end)
        base = str(request.base_url).rstrip("/")
        try:
            language = self.language.of(request, session)
            pdf = await run_in_threadpool(AF.audit_pdf, trail, language, base,
                                          self.language.floor_words(language).first_headline)
        except FontMissing as exc:
            raise Refused(503, NO_FONT, dirs=exc.dirs) from None
        name = AF.audit_file_name(trail, self.clock, "pdf")
        return Response(pdf, media_type="application/pdf",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    async def hand_page(self, request, client, session):
        p = request.path_params
        language = self.language.of(request, session)
        # No such hand, or an id of the wrong shape: the refusal page says so (refusal_page.py).
        story, place = await run_in_threadpool(self.stories.story, p["table_id"], p["seq"], language)
        names = await self._names(session)
        return self.render(request, "story.html", session=session, story=story, names=names,
                           language=language, **self.stories.words(request, story, place, names, language))

    async def _names(self, session) -> dict[str, str]:
        """Dealers' names for a role that may see them, else none (ids only)."""
        if session is None or not may(session.role, "see_names"):
            return {}
        return await run_in_threadpool(self.store.dealer_names)

    @staticmethod
    def _pit_page(conn, kind: str, ident: str, start: float, end: float) -> dict:
        """What a table's or a dealer's page shows: its figures, its hours and the room's."""
        if kind == "table":
            mine = F.table_figures(conn, ident, start, end)
            hours = F.hourly(conn, start, end, table_id=ident)
        else:
            mine = F.dealer_figures(conn, ident, start, end)
            hours = F.hourly(conn, start, end, dealer_id=ident)
        return {"figures": mine, "hours": hours, "room_hours": F.hourly(conn, start, end),
                "room": F.room_figures(conn, start, end)["room"]}

    async def _pit_answer(self, request, session, kind: str, ident: str):
        shown = page_range(request, self.clock)
        start, end = shown.start, shown.end
        language = self.language.of(request, session)
        _ = language.gettext
        data = await run_in_threadpool(self.figures.answer, self._pit_page, kind, ident, start, end)
        nonce = request.state.nonce
        names = await self._names(session)
        who = (_("table %(table)s") % {"table": ident} if kind == "table"
               else _("dealer %(badge)s") % {"badge": ident})
        if kind == "dealer" and ident in names:
            who += f" ({names[ident]})"
        charts = [C.hands_per_hour_chart(data["hours"], nonce, self.clock, language=language,
                                         title=_("Hands per hour, %(who)s") % {"who": who}),
                  C.irregularity_chart(data["hours"], data["room_hours"], nonce, self.clock, who=who,
                                       language=language,
                                       title=_("Irregularities per 100 hands, %(who)s and the room") % {"who": who})]
        part = (await self.protect.dealer_chart_context(ident, start, end, nonce, who, language)
                if kind == "dealer" else None)
        # Rendered here, in the reader's language (the Surveillance page renders its own).
        dealer_chart = (self.templates.get_template("_dealer_chart.html").render(chart=part, language=language)
                        if part is not None else None)
        commission = (await run_in_threadpool(self._last_commission, ident, time.time(), language)
                      if kind == "table" else None)
        return self.render(request, "pit.html", session=session, kind=kind, ident=ident, who=who,
                           language=language, start=start, end=end, charts=charts,
                           pick=range_controls(self.clock, shown, language),
                           fig=lambda value: FT.decimal_in(language, value), whole=language.forms.integer,
                           nothing=FT.NOTHING, nothing_legend=FT.nothing_legend(language), dealer_chart=dealer_chart,
                           commission=commission, commission_days=self.settings.commission.max_age_days, **data)

    def _last_commission(self, table: str, now: float, language) -> dict:
        """The table's last commissioning in the tables page's words (its line on the table's page)."""
        runs = self.store.commissionings(table)
        return commission_shown(self.clock, table,
                                commission_check(runs[0] if runs else None, now, self.settings.commission, language),
                                language)

    async def table_page(self, request, client, session):
        return await self._pit_answer(request, session, "table", table_id_of(request.path_params["table_id"]))

    async def dealer_page(self, request, client, session):
        return await self._pit_answer(request, session, "dealer", dealer_id_of(request.path_params["dealer_id"]))

    def _report(self, start: float, end: float) -> dict:
        alerts = self.store.alerts_raised(start, end)
        return self.figures.answer(R.shift_report, alerts, start, end)

    def _report_file_name(self, report: dict, ext: str) -> str:
        start, end = (self.clock.at(report[k]).strftime("%Y-%m-%d-%H%M") for k in ("from", "to"))
        return f"shift-report-{start}-to-{end}.{ext}"

    async def report_page(self, request, client, session):
        shown = page_range(request, self.clock)
        report = await run_in_threadpool(self._report, shown.start, shown.end)
        names = await self._names(session)
        language = self.language.of(request, session)
        words = self.language.floor_words(language).first_headline
        return self.render(request, "report.html", session=session, report=report, names=names,
                           language=language, title=R.report_title(report, language=language),
                           pick=range_controls(self.clock, shown, language),
                           sections=R.report_sections(report, names=names, base_url="", alert_words=words,
                                                      language=language))

    async def report_json(self, request, client, session):
        shown = page_range(request, self.clock)
        return JSONResponse(await run_in_threadpool(self._report, shown.start, shown.end))

    async def report_csv(self, request, client, session):
        shown = page_range(request, self.clock)
        report = await run_in_threadpool(self._report, shown.start, shown.end)
        name = self._report_file_name(report, "csv")
        return Response(R.report_csv(report), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    async def report_pdf(self, request, client, session):
        shown = page_range(request, self.clock)
        report = await run_in_threadpool(self._report, shown.start, shown.end)
        names = await self._names(session)
        base = str(request.base_url).rstrip("/")
        try:
            # In the language of whoever asks for it, as their pages are.
            language = self.language.of(request, session)
            words = self.language.floor_words(language).first_headline
            pdf = await run_in_threadpool(R.report_pdf, report, names, self.clock, base, words, language)
        except FontMissing as exc:
            raise Refused(503, NO_FONT, dirs=exc.dirs) from None
        name = self._report_file_name(report, "pdf")
        return Response(pdf, media_type="application/pdf",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    # -- signing in and out (JSON)

    async def signin(self, name, password, client: Client, request: Request) -> tuple[str, Session]:
        if not isinstance(name, str) or not isinstance(password, str) or not name \
                or len(name) > 100 or len(password) > PASSWORD_MAX:
            raise Refused(400, N_("expected a user name and a password"))
        old = self.gate.session_token(request, client)
        return await anyio.to_thread.run_sync(self._signin, name, password, client, old,
                                              limiter=self.hashing)

    def _signin(self, name: str, password: str, client: Client, old: str | None):
        wait = self.limiter.retry_after(name, client.address)
        if wait is not None:
            security_event("signin_refused", f"floor web: sign-in for {name!r} from {client.address} refused: "
                           "too many failures", user=name, address=client.address, retry_after_s=round(wait))
            seconds = max(1, round(wait))
            raise Refused(429, N_("too many failed sign-ins: try again in %(seconds)s s"),
                          {"Retry-After": str(seconds)}, seconds=seconds)
        user = self.accounts.verify(name, password)
        if user is None:
            self.limiter.failed(name, client.address)
            self.metrics.signin_failed()
            security_event("signin_failed", f"floor web: failed sign-in for {name!r} from {client.address}",
                           via="password",
                           user=name, address=client.address)
            self.store.record_signin("signin_failed", name, via="password", address=client.address,
                                     why=WRONG_PASSWORD)
            raise Refused(401, N_("wrong user name or password"))
        self.limiter.succeeded(name)
        # A session id the browser had before (perhaps planted) never becomes this one.
        self.sessions.end_token(old)
        token, session = self.sessions.open(user["name"], client.address)
        security_event("signin", f"floor web: {session.user} ({session.role}) signed in from {client.address}",
                       user=session.user, role=session.role, address=client.address, via="password")
        self.store.record_signin("signin", session.user, via="password", address=client.address)
        return token, session

    async def signin_json(self, request, client, session):
        data = await json_object(request, self.settings.request_timeout_s)
        token, new = await self.signin(data.get("user"), data.get("password"), client, request)
        response = JSONResponse(_whoami(new, self.language.languages.get(new.language).code))
        self.gate.set_cookie(response, client, token)
        return response

    async def session_json(self, request, client, session):
        return JSONResponse(_whoami(session, self.language.of(request, session).code))

    async def signout_json(self, request, client, session):
        await run_in_threadpool(self._sign_out, session, client)
        response = Response(status_code=204)
        self.gate.drop_cookie(response, client)
        return response

    def _sign_out(self, session: Session, client: Client) -> None:
        """End *session*: in the security journal and on the audit trail (how: the proxy's header
        if the request came through the trusted proxy, else the password the session began with)."""
        self.sessions.end(session)
        security_event("signout", f"floor web: {session.user} signed out", user=session.user, role=session.role,
                       address=client.address)
        self.store.record_signin("signout", session.user, via="proxy" if client.proxy_user else "password",
                                 address=client.address)

    # -- the floor (JSON)

    async def api_floor(self, request, client, session):
        snap = self.language.told(self.language.of(request, session), self.floor.snapshot())
        return JSONResponse({"v": P.SCHEMA_VERSION, **snap})

    def _audit(self, start: float, end: float) -> dict:
        # Only the range's rows, chosen by the store: never the whole trail and every alert ever.
        audit, alerts = self.store.audit_range(start, end)
        trail = AF.audit_trail(audit, alerts, start, end, self.store.registry_steps(start=start, end=end))
        # Each alert's hand by its number at its table, as the shift report names it.
        with self.store.engine.connect() as conn:
            trail["alerts"] = R.numbered_alerts(conn, trail["alerts"])
        return trail

    async def api_audit(self, request, client, session):
        """The audit rows made in the range (as the page's: ``preset``, ``start``/``end`` or
        ``from``/``to``; the last 12 hours by default) and the alerts raised or cleared in it."""
        shown = page_range(request, self.clock)
        return JSONResponse(await run_in_threadpool(self._audit, shown.start, shown.end))

    async def api_clear(self, request, client, session):
        data = await json_object(request, self.settings.request_timeout_s)
        extra = sorted(set(data) - {"note"})
        if extra:
            raise Refused(400, N_("unknown key %(key)s: only 'note' (the audit names who is signed in)"),
                          key=repr(extra[0]))
        alert_id = row_id_of(NO_OPEN_ALERT, request.path_params["alert_id"])
        return JSONResponse(await self.clear_alert(alert_id, session.user, data.get("note")))

    async def clear_alert(self, alert_id: int, user: str, note) -> dict:
        """Clear the open alert *alert_id* as *user* with *note* (1 to NOTE_MAX characters): the
        audit trail and the security journal name the user. Every page's clear comes here (the
        floor map's API, the Surveillance page's form); refused with 400 or 404."""
        if not isinstance(note, str) or not note.strip() or len(note) > NOTE_MAX:
            raise Refused(400, N_("a note of 1 to %(most)s characters says why the alert is cleared"), most=NOTE_MAX)
        alert = await run_in_threadpool(self._clear, alert_id, user, note.strip())
        if alert is None:
            raise Refused(404, NO_OPEN_ALERT, number=alert_id)
        return alert

    def _clear(self, alert_id: int, user: str, note: str) -> dict | None:
        alert = self.store.clear_alert(alert_id, user, note)
        if alert is not None:
            # The collector republishes the retained open alerts when this moves.
            self.store.bump("alerts_cleared")
            security_event("alert_cleared", f"floor web: {user} cleared alert {alert_id} ({note})", user=user,
                           alert=alert_id, table=alert["table"], kind=alert["kind"], note=note)
        return alert

    # -- users (admins)

    async def api_users(self, request, client, session):
        return JSONResponse({"users": await run_in_threadpool(self.accounts.list)})

    async def api_user_add(self, request, client, session):
        data = await json_object(request, self.settings.request_timeout_s)
        name, role, password = data.get("name"), data.get("role"), data.get("password")
        try:
            await anyio.to_thread.run_sync(lambda: self.accounts.add(name, role, password, by=session.user),
                                           limiter=self.hashing)
        except AccountError as exc:
            # The accounts' own English (the command line's too): /api/users is a program's route.
            raise Refused(400, str(exc)) from None
        return JSONResponse({"name": name, "role": role}, 201)

    async def api_user_remove(self, request, client, session):
        name = user_name_of(request.path_params["name"])
        try:
            await run_in_threadpool(self.accounts.remove, name, by=session.user)
        except AccountError as exc:
            raise Refused(404, str(exc)) from None
        return Response(status_code=204)

    # -- event streams

    async def events_json(self, request, client, session):
        """``snapshot``, then ``tables``, ``alert`` and ``cleared`` as JSON; the readable fields
        (``what``, ``headline``...) in the user's language, as ``/api/floor`` has them."""
        language = self.language.of(request, session)
        words = self.language.floor_words(language)
        own = words is self.floor.words

        def render(name, data):
            if name == "snapshot":
                data = {"v": P.SCHEMA_VERSION, **self.language.told(language, data)}
            elif name == "tables" and not own:
                data = {**data, "tables": [words.retell(tile=t) for t in data["tables"]]}
            elif name == "alert" and not own:
                data = {**data, "alert": words.retell(alert=data["alert"])}
            yield {"event": name, "data": json.dumps(data)}
        return EventSourceResponse(self._stream(session, render), send_timeout=30)

    async def events_page(self, request, client, session):
        """The page's stream: the same changes as HTML rendered here, by id."""
        can_clear = may(session.role, "clear")
        names = await self._names(session)
        language = self.language.of(request, session)
        words = self.language.floor_words(language)
        own = words is self.floor.words
        tile = self.templates.get_template("_tile.html")
        alert = self.templates.get_template("_alert.html")
        bridges = self.templates.get_template("_bridges.html")

        def render(name, data):
            if name == "snapshot":
                data = self.language.told(language, data)
                yield {"event": "snapshot", "data": json.dumps({
                    "grid": "".join(tile.render(t=t, names=names, language=language) for t in data["tables"]),
                    "alerts": "".join(alert.render(a=a, can_clear=can_clear, language=language)
                                      for a in data["alerts"]),
                    "bridges": bridges.render(bridges=data["bridges"], language=language)})}
            elif name == "bridges":
                yield {"event": "bridges", "data": json.dumps({"html": bridges.render(bridges=data["bridges"],
                                                                                      language=language)})}
            elif name == "tables":
                for t in data["tables"]:
                    t = t if own else words.retell(tile=t)
                    yield {"event": "tile", "data": json.dumps({"id": f"table-{t['table']}", "key": t["table"],
                                                                 "html": tile.render(t=t, names=names, language=language)})}
            elif name == "alert":
                a = data["alert"] if own else words.retell(alert=data["alert"])
                yield {"event": "alert", "data": json.dumps({"id": f"alert-{a['id']}", "key": a["id"],
                                                              "html": alert.render(a=a, can_clear=can_clear,
                                                                                   language=language)})}
            elif name == "cleared":
                yield {"event": "cleared", "data": json.dumps({"id": f"alert-{data['alert']['id']}"})}
        return EventSourceResponse(self._stream(session, render), send_timeout=30)

    async def _stream(self, session: Session, render):
        sub, snap = self.floor.subscribe()
        try:
            for item in render("snapshot", snap):
                yield item
            check_at = time.monotonic() + SESSION_CHECK_S
            while True:
                try:
                    event = await asyncio.wait_for(sub.queue.get(), max(0.0, check_at - time.monotonic()))
                except TimeoutError:
                    event = ...
                if event is None or sub.overrun:
                    return  # the server stops, or this client fell behind: it reconnects
                if time.monotonic() >= check_at:
                    if await run_in_threadpool(self.sessions.still, session) is None:
                        yield {"event": "signedout", "data": "{}"}
                        return
                    check_at = time.monotonic() + SESSION_CHECK_S
                if event is not ...:
                    for item in render(event["type"], event):
                        yield item
        finally:
            self.floor.unsubscribe(sub)


def create_app(settings: WebSettings) -> Starlette:
    return FloorApp(settings).asgi()


def _whoami(session: Session, language: str) -> dict:
    # ``language``: what the user reads (their own, else the room's), for a client that words
    # its own screen (the terminal view).
    return {"user": session.user, "role": session.role, "csrf": session.csrf,
            "may_clear": may(session.role, "clear"), "language": language}


class SecurityHeaders:
    """ASGI middleware: a fresh CSP nonce per request (the pages' only script and
    style carry it) and the headers every answer gets."""

    def __init__(self, app, tls: bool):
        self.app, self.tls = app, tls

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {})["nonce"] = nonce

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["Content-Security-Policy"] = (
                    f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
                    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
                headers["X-Content-Type-Options"] = "nosniff"
                headers["Referrer-Policy"] = "same-origin"
                headers["Cross-Origin-Opener-Policy"] = "same-origin"
                headers["Cross-Origin-Resource-Policy"] = "same-origin"
                headers.setdefault("Cache-Control", "no-store")
                if self.tls:
                    headers["Strict-Transport-Security"] = "max-age=31536000"
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _age(since) -> str:
    if not since:
        return ""
    try:
        t = _dt.datetime.fromisoformat(str(since).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return ""
    s = max(0.0, time.time() - t)
    # floor.js words a live page's ages the same way.
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min" if s < 7170 else FT.duration(s)
