"""The room's registry in the floor view (issue 40; docs/floor/registry.md).

- ``/registry``: every deck (its state, where it is, how much it dealt) and every badge; an
  admin receives, registers and (on a deck's page) retires and destroys decks, and registers
  and revokes badges here;
- ``/registry/decks/{name}``: one deck's page, its card control log from delivery to
  destruction (every step with time, table, person and witness; its deck checks; where it
  was used; every hand it dealt, linked to its story), as CSV and PDF too;
- ``/registry/log?day=YYYY-MM-DD``: the card control log of one local day, its hands
  :data:`HANDS_SHOWN` a page (``&hand=N``: from the day's N-th), as CSV and PDF too (every hand).

Everyone signed in may read them ("view"); receiving a sealed deck and retiring one needs
``deck_custody`` (a supervisor), every other change ``manage_registry`` (the admin); a change
is a form with the session's CSRF token (the gate checks it) and is audited with the user's
name. A refusal (a tag already another deck's, a witness who is the destroyer) is said on the
page, in words, with status 400.
"""

from __future__ import annotations

import datetime as _dt
import functools
import logging
import time

from starlette.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse, Response

from dealerbox.floor.operating.accounts import may
from dealerbox.floor.store.registry import RegistryRefused
from dealerbox.floor.telling import card_log as L
from dealerbox.floor.telling.catalogs import N_
from dealerbox.floor.telling.story_pdf import NO_FONT, FontMissing
from dealerbox.floor.web.auth import Refused, form

__all__ = ["RegistryPages", "CHANGE", "CUSTODY", "parse_tags"]

log = logging.getLogger(__name__)

#: The permission a change of the registry needs: the admin's.
CHANGE = "manage_registry"
#: The permission receiving a sealed deck and retiring one need: a supervisor's.
CUSTODY = "deck_custody"
#: A deck's tags as a form sends them: at most this many lines.
TAGS_MAX = 200
#: A day's log shows this many hands a page (a room's day holds some 33,000: the page of every
#: one took 11 to 15 s on a loaded floor; the CSV and the PDF hold them all).
HANDS_SHOWN = 500
#: The highest ``hand`` a day's log is asked from.
HAND_MAX = 10**9


def parse_tags(text: str) -> dict[str, str]:
    """``UID card`` per line (a comma, ``=`` or spaces between) -> ``{UID: card}``; the store
    checks each. :class:`RegistryRefused` naming the line that is not two words."""
    tags: dict[str, str] = {}
    lines = [line for line in (text or "").replace("\r", "").split("\n") if line.strip()]
    if len(lines) > TAGS_MAX:
        raise RegistryRefused(N_("at most %(most)s tags, one a line, not %(count)s"), most=TAGS_MAX, count=len(lines))
    for number, line in enumerate(lines, 1):
        words = line.replace(",", " ").replace("=", " ").split()
        if len(words) != 2:
            raise RegistryRefused(N_("line %(number)s of the tags, %(line)s: expected a UID and a card "
                                     "(04A3C6CAE26180 Ah)"), number=number, line=repr(line.strip()[:40]))
        tags[words[0]] = words[1]
    return tags


class RegistryPages:
    """The registry's pages of a :class:`~dealerbox.floor.web.app.FloorApp`, each told in its
    reader's language (:meth:`LanguageChoice.of <dealerbox.floor.web.language.LanguageChoice.of>`):
    the page, its refusals and the log's files."""

    def __init__(self, app):
        self.app = app
        self.store = app.store
        self.clock = app.clock

    def routes(self) -> list[tuple]:
        """The routes, as :meth:`FloorApp.routes` lists them."""
        return [
            ("/registry", "GET", self.page, "view", None),
            ("/registry/decks", "POST", self.deck_form, CUSTODY, "form"),  # registering: CHANGE, checked in it
            ("/registry/decks/{name}", "GET", self.deck_page, "view", None),
            ("/registry/decks/{name}/log.csv", "GET", self.deck_csv, "view", None),
            ("/registry/decks/{name}/log.pdf", "GET", self.deck_pdf, "view", None),
            ("/registry/decks/{name}/retire", "POST", self.retire_form, CUSTODY, "form"),
            ("/registry/decks/{name}/issue", "POST", self.issue_form, CUSTODY, "form"),
            ("/registry/decks/{name}/destroy", "POST", self.destroy_form, CHANGE, "form"),
            ("/registry/decks/{name}/limit", "POST", self.limit_form, CHANGE, "form"),
            ("/registry/badges", "POST", self.badge_form, CHANGE, "form"),
            ("/registry/badges/{uid}/revoke", "POST", self.revoke_form, CHANGE, "form"),
            ("/registry/log", "GET", self.day_page, "view", None),
            ("/registry/log.csv", "GET", self.day_csv, "view", None),
            ("/registry/log.pdf", "GET", self.day_pdf, "view", None),
        ]

    def _language(self, request, session):
        return self.app.language.of(request, session)

    # -- the list

    def _listing(self) -> dict:
        return {"decks": self.store.decks(), "badges": self.store.badges(), "version": self.store.registry_version()}

    async def page(self, request, client, session, *, error: str = "", status: int = 200):
        data = await run_in_threadpool(self._listing)
        names = await self.app._names(session)
        language = self._language(request, session)
        return self.app.render(request, "registry.html", status, session=session, error=error, names=names,
                               language=language, may_change=may(session.role, CHANGE),
                               may_custody=may(session.role, CUSTODY), states=L.STATE_WORDS,
                               hours=lambda seconds: L.hours_words(seconds, language),
                               person=lambda who: L.person_words(who, language), deck_path=L.deck_path, today=self.clock.at(time.time()).date().isoformat(), **data)

    async def _fields(self, request) -> dict[str, str]:
        return await form(request, self.app.settings.request_timeout_s)

    async def _change(self, request, session, change, done: str, *, on_error):
        """Run *change* (in a thread); to *done* when it is made, else the page again with why
        not, in its reader's language."""
        try:
            await run_in_threadpool(change)
        except RegistryRefused as refused:
            return await on_error(refused.told(self._language(request, session).gettext))
        return RedirectResponse(done, 303)

    async def deck_form(self, request, client, session):
        f = await self._fields(request)
        name, back, action = f.get("name", ""), f.get("back", ""), f.get("action", "")
        user = session.user
        if action != "receive" and not may(session.role, CHANGE):
            raise Refused(403, N_("%(user)s (%(role)s) may receive a sealed deck, not register its tags"),
                          words=("role",), user=user, role=session.role)

        def change():
            if action == "receive":
                try:
                    count = int(f.get("count", ""))
                except ValueError:
                    raise RegistryRefused(N_("a sealed count is a whole number, not %(given)s"),
                                          given=repr(f.get("count", ""))) from None
                self.store.receive_deck(name, back, count, user)
                log.info("floor web: %s received deck %s", user, name)
            elif action == "register":
                self.store.register_deck(name, back, parse_tags(f.get("tags", "")), user)
                log.info("floor web: %s registered deck %s", user, name)
            else:
                raise RegistryRefused(N_("the form says neither receive nor register"))

        async def again(why):
            return await self.page(request, client, session, error=why, status=400)
        return await self._change(request, session, change, L.deck_path(name.strip()) if name.strip() else "/registry",
                                  on_error=again)

    async def badge_form(self, request, client, session):
        f = await self._fields(request)

        def change():
            self.store.register_badge(f.get("uid", ""), f.get("dealer", "").strip(), session.user)
            log.info("floor web: %s registered badge %s", session.user, f.get("uid", ""))

        async def again(why):
            return await self.page(request, client, session, error=why, status=400)
        return await self._change(request, session, change, "/registry", on_error=again)

    async def revoke_form(self, request, client, session):
        f = await self._fields(request)
        uid = request.path_params["uid"]

        def change():
            self.store.revoke_badge(uid, session.user, f.get("why", ""))
            log.info("floor web: %s revoked badge %s", session.user, uid)

        async def again(why):
            return await self.page(request, client, session, error=why, status=400)
        return await self._change(request, session, change, "/registry", on_error=again)

    # -- one deck

    def _deck(self, name: str) -> dict:
        found = L.deck_log(self.store, name)
        if found is None:
            raise Refused(404, N_("no deck %(deck)s in the registry"), deck=repr(name[:64]))
        return found

    async def deck_page(self, request, client, session, *, error: str = "", status: int = 200):
        name = request.path_params["name"]
        language = self._language(request, session)
        try:
            deck_log = await run_in_threadpool(self._deck, name)
        except Refused as refused:
            # The registry's list, to choose the deck meant, with why this one is not there.
            return await self.page(request, client, session, error=refused.told(language), status=refused.status)
        names = await self.app._names(session)
        deck = deck_log["deck"]
        checks = [s for s in deck_log["steps"] if s["step"] == "checked"]
        return self.app.render(request, "registry_deck.html", status, session=session, error=error, deck=deck,
                               language=language, title=L.log_title(deck_log, language), states=L.STATE_WORDS,
                               hours=lambda seconds: L.hours_words(seconds, language),
                               checks=checks, words=lambda step: L.step_words(step, language),
                               path=L.deck_path(deck["name"]),
                               may_change=may(session.role, CHANGE), may_custody=may(session.role, CUSTODY),
                               sections=L.log_sections(deck_log, language, names, ""))

    async def _deck_change(self, request, client, session, change):
        name = request.path_params["name"]
        f = await self._fields(request)

        async def again(why):
            return await self.deck_page(request, client, session, error=why, status=400)
        return await self._change(request, session, lambda: change(name, f), L.deck_path(name), on_error=again)

    async def issue_form(self, request, client, session):
        def change(name, f):
            self.store.issue_deck(name, f.get("table", ""), session.user, f.get("witness", "").strip() or None)
            log.info("floor web: %s issued deck %s to %s", session.user, name, f.get("table", "")[:64])
        return await self._deck_change(request, client, session, change)

    async def retire_form(self, request, client, session):
        def change(name, f):
            self.store.retire_deck(name, session.user, f.get("why", ""))
            log.info("floor web: %s retired deck %s", session.user, name)
        return await self._deck_change(request, client, session, change)

    async def destroy_form(self, request, client, session):
        def change(name, f):
            self.store.destroy_deck(name, session.user, f.get("witness", ""))
            log.info("floor web: %s destroyed deck %s, witnessed by %s", session.user, name, f.get("witness", ""))
        return await self._deck_change(request, client, session, change)

    async def limit_form(self, request, client, session):
        def change(name, f):
            hours, hands = f.get("hours", "").strip(), f.get("hands", "").strip()
            try:
                # A reader of a decimal comma may type one (2,5): it is the same number.
                hours_value = float(hours.replace(",", ".")) if hours else None
                hands_value = int(hands) if hands else None
            except ValueError:
                raise RegistryRefused(N_("a limit is a number of hours or of hands, not %(given)s"),
                                      given=repr(hours or hands)) from None
            self.store.set_deck_limit(name, hours_value, hands_value, session.user)
        return await self._deck_change(request, client, session, change)

    async def deck_csv(self, request, client, session):
        language = self._language(request, session)
        deck_log = await run_in_threadpool(self._deck, request.path_params["name"])
        return self._file(L.log_csv(deck_log, language, str(request.base_url)), "text/csv; charset=utf-8",
                          _file_name(f"deck-{deck_log['deck']['name']}", "csv"))

    async def deck_pdf(self, request, client, session):
        deck_log = await run_in_threadpool(self._deck, request.path_params["name"])
        return await self._pdf(request, session, deck_log, _file_name(f"deck-{deck_log['deck']['name']}", "pdf"))

    # -- one day

    def _day(self, request) -> _dt.date:
        text = request.query_params.get("day", "").strip()
        if not text:
            return self.clock.at(time.time()).date()
        try:
            return L.log_day(text)
        except ValueError:
            raise Refused(400, N_("day=%(given)s: expected a day from %(first)s to %(last)s, YYYY-MM-DD"),
                          given=repr(text[:20]), first=L.FIRST_DAY.isoformat(), last=L.LAST_DAY.isoformat()) from None

    async def day_page(self, request, client, session):
        day = self._day(request)
        first = _first_hand(request)
        day_log = await run_in_threadpool(functools.partial(L.day_log, self.store, self.clock, day, first=first,
                                                            most=HANDS_SHOWN))
        names = await self.app._names(session)
        language = self._language(request, session)
        return self.app.render(request, "registry_log.html", session=session, language=language,
                               title=L.log_title(day_log, language),
                               day=day.isoformat(), previous=(day - _dt.timedelta(days=1)).isoformat(),
                               following=(day + _dt.timedelta(days=1)).isoformat(),
                               hands_pages=_hands_pages(day, first, day_log["hands_total"]),
                               sections=L.log_sections(day_log, language, names, ""))

    async def day_csv(self, request, client, session):
        day = self._day(request)
        day_log = await run_in_threadpool(L.day_log, self.store, self.clock, day)
        return self._file(L.log_csv(day_log, self._language(request, session), str(request.base_url)),
                          "text/csv; charset=utf-8", _file_name(f"day-{day.isoformat()}", "csv"))

    async def day_pdf(self, request, client, session):
        day = self._day(request)
        day_log = await run_in_threadpool(L.day_log, self.store, self.clock, day)
        return await self._pdf(request, session, day_log, _file_name(f"day-{day.isoformat()}", "pdf"))

    # -- files

    @staticmethod
    def _file(body, media_type: str, name: str) -> Response:
        return Response(body, media_type=media_type, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    async def _pdf(self, request, session, a_log: dict, name: str) -> Response:
        """The log as a PDF in the language of whoever asks for it, as their pages are."""
        names = await self.app._names(session)
        base = str(request.base_url).rstrip("/")
        language = self._language(request, session)
        try:
            pdf = await run_in_threadpool(L.log_pdf, a_log, language, names, base)
        except FontMissing as exc:
            raise Refused(503, NO_FONT, dirs=exc.dirs) from None
        return self._file(pdf, "application/pdf", name)


def _first_hand(request) -> int:
    """The page's first hand, 0-based, from ``hand`` (1-based; none: the day's first)."""
    text = request.query_params.get("hand", "").strip()
    if not text:
        return 0
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= HAND_MAX:
        raise Refused(400, N_("hand=%(given)s: expected a hand's number in the day, from 1 to %(most)s"),
                      given=repr(text[:20]), most=HAND_MAX)
    return int(text) - 1


def _hands_pages(day: _dt.date, first: int, total: int) -> dict:
    """The links to the day's earlier and later page of hands (None where there is none)."""
    def at(n: int) -> str:
        return f"/registry/log?day={day.isoformat()}" + (f"&hand={n + 1}#log-hands-heading" if n else
                                                          "#log-hands-heading")
    return {"earlier": at(max(0, first - HANDS_SHOWN)) if first > 0 else None,
            "later": at(first + HANDS_SHOWN) if first + HANDS_SHOWN < total else None}


def _file_name(what: str, ext: str) -> str:
    """``card-control-log-deck-Red-7.csv``: letters, digits and dashes only (a header's value)."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "-" for c in what)
    return f"card-control-log-{safe}.{ext}"
