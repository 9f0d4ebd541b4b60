"""Who reads which language (issue 45), and changing one's own.

The room reads ``[web] language``. A signed-in user who chose a language of their own reads
that (``users.language``, carried by their :class:`~dealerbox.floor.operating.accounts.Session`);
before sign-in, the browser's ``Accept-Language`` picks among the four (``?lang=`` on the
sign-in page picks one outright: its language links). ``POST /language`` (the page header's
form, with the session's CSRF token) changes the signed-in user's own language and nobody
else's: it takes no user name, and refuses a form that names one. Each change is an audit
row naming the user, what it was and what it is now.

Templates are told in the request's :class:`~dealerbox.floor.telling.language.Language`,
handed to each render as ``language``: ``{% trans %}``, ``_()`` and the date filters read it
from the render's context (Jinja2's i18n extension, new-style gettext), so one environment
serves every language and no render can see another's.
"""

from __future__ import annotations

import logging
import time

import jinja2
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse

from dealerbox.floor.operating.accounts import Session
from dealerbox.floor.telling.catalogs import LANGUAGES, N_, accepted_language
from dealerbox.floor.telling.floor_words import FloorWords
from dealerbox.floor.telling.language import Language, Languages
from dealerbox.floor.web.auth import Refused, form

__all__ = ["LanguageChoice", "LANGUAGES", "ROOM_LANGUAGE", "ROLE_WORDS"]

log = logging.getLogger(__name__)

#: The roles as the page header names them (accounts.ROLES), marked for the catalogs.
ROLE_WORDS = (N_("viewer"), N_("supervisor"), N_("admin"))
#: The form's value for "no language of my own": the room's.
ROOM_LANGUAGE = "room"
_FIELDS = frozenset({"csrf", "language", "back"})


class LanguageChoice:
    """The web view's languages: which one a request reads, the templates' gettext, the
    floor map's words in each, and the route that changes a user's own.

    :param app: the :class:`~dealerbox.floor.web.app.FloorApp` (its settings, clock and store)."""

    def __init__(self, app):
        self.app = app
        self.languages = Languages(app.settings.language, app.clock)
        self.room = self.languages.get(app.settings.language)
        self.words = {language.code: FloorWords(language) for language in self.languages}

    def routes(self):
        return [("/language", "POST", self.change_form, "view", "form")]

    # -- which language

    def of(self, request: Request, session: Session | None) -> Language:
        """The language *request* is answered in: the user's own, else the room's; before
        sign-in, ``?lang=`` or the browser's ``Accept-Language`` among the floor's four."""
        if session is not None:
            return self.languages.get(session.language)
        asked = request.query_params.get("lang")
        if asked in LANGUAGES:
            return self.languages.get(asked)
        return self.languages.get(accepted_language(request.headers.get("accept-language"), self.room.code))

    # -- templates

    def install(self, env: jinja2.Environment) -> None:
        """Jinja2's i18n extension on *env*, its gettext and the moments' filters reading the
        render's ``language`` (a render without one: the room's)."""
        env.add_extension("jinja2.ext.i18n")
        env.install_gettext_callables(
            jinja2.pass_context(lambda ctx, message: self._in(ctx).gettext(message)),
            jinja2.pass_context(lambda ctx, one, many, n: self._in(ctx).ngettext(one, many, n)),
            newstyle=True)
        env.filters.update(
            clock=jinja2.pass_context(lambda ctx, ts: self._in(ctx).forms.time(ts)),
            full=jinja2.pass_context(lambda ctx, ts: self._in(ctx).forms.full(ts)),
            local=jinja2.pass_context(lambda ctx, ts: self._in(ctx).forms.stamp(ts)),
            stamp=jinja2.pass_context(lambda ctx, ts: self._in(ctx).forms.stamp(ts)),
            decimal=jinja2.pass_context(lambda ctx, x, digits=1: self._in(ctx).forms.decimal(x, digits)))

    def _in(self, context) -> Language:
        language = context.get("language")
        return language if isinstance(language, Language) else self.room

    def floor_words(self, language: Language) -> FloorWords:
        """The floor map's words in *language* (the room's are the live floor's own)."""
        return self.words[language.code]

    def told(self, language: Language, snap: dict) -> dict:
        """The live floor's snapshot (*snap*) with its tiles and alerts in *language*."""
        words = self.floor_words(language)
        if words is self.app.floor.words:
            return snap
        return {**snap, "tables": [words.retell(tile=t) for t in snap["tables"]],
                "alerts": [words.retell(alert=a) for a in snap["alerts"]]}

    # -- a user's own

    async def change_form(self, request, client, session):
        """The header's form: ``language`` (a code, or ``room``) for the signed-in user; back
        to the page it was sent from (``back``, a path of this site)."""
        fields = await form(request, self.app.settings.request_timeout_s)
        extra = sorted(set(fields) - _FIELDS)
        if extra:
            raise Refused(400, N_("unknown field %(field)s: a user changes only their own language"),
                          field=repr(extra[0]))
        code = fields.get("language", "")
        if code != ROOM_LANGUAGE and code not in LANGUAGES:
            raise Refused(400, N_("language %(given)s: expected one of %(languages)s or %(room)s"),
                          given=repr(code[:20]), languages=", ".join(LANGUAGES), room=ROOM_LANGUAGE)
        chosen = None if code == ROOM_LANGUAGE else code
        before = await run_in_threadpool(self.app.store.set_user_language, session.user, chosen, time.time())
        if before is False:
            raise Refused(404, N_("no user %(given)s"), given=repr(session.user))
        log.info("floor web: %s reads the floor in %s now (before: %s)", session.user,
                 chosen or "the room's language", before or "the room's language")
        back = fields.get("back") or "/"
        # Only a path of this site: never another site's address (an open redirect).
        if not back.startswith("/") or back.startswith("//") or "\\" in back:
            back = "/"
        return RedirectResponse(back, 303)
