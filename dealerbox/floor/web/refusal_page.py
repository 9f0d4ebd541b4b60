"""A refusal as the person who met it reads it (issue 45): a page of the site, in their language.

Who gets what, decided once per route (:func:`for_people`) and per request:

- a route of a person's (a page, a form, a file they download) asked for by a browser
  (``Accept: text/html``: the address bar, a link, a form sent) is refused with the site's
  page (``refused.html``): the status, ``<html lang>`` of the reader's language (the
  signed-in user's own, else the room's; before sign-in, the one the sign-in page would
  choose, :meth:`~.language.LanguageChoice.of`), a heading in plain words for the status,
  the reason told in that language (:meth:`~.auth.Refused.told`) and a link back to the
  floor map;
- a program's route (:data:`PROGRAM_ROUTES`: the JSON API, the event streams, ``/metrics``,
  ``/healthz``), and any caller that does not ask for HTML (a script fetching a CSV or a
  PDF), gets ``{"error": ...}`` in English, as before: machines read it;
- a ``GET`` without a session (401) that asks for HTML goes to the sign-in page.

An address no route has (404) or a method its route does not take (405) is answered the
same way (:meth:`RefusalPage.no_route`): a signed-in person reads it on the page, a browser
without a session goes to sign in, and a program gets Starlette's own plain answer, as before.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from dealerbox.floor.telling.catalogs import N_
from dealerbox.floor.web.auth import Refused

__all__ = ["RefusalPage", "PROGRAM_ROUTES", "TITLES", "for_people", "asks_for_html"]

#: Where a route's path starts when its callers are programs: their refusals stay JSON.
PROGRAM_ROUTES = ("/api/", "/events", "/metrics", "/healthz")
#: The page's heading for each status, in plain words (the reason below it says the rest).
TITLES = {400: N_("This request is not as expected"), 401: N_("Not signed in"), 403: N_("Not allowed"),
          404: N_("Not found"), 408: N_("The request came too slowly"), 413: N_("Too much sent at once"),
          415: N_("Not a form of this site"), 429: N_("Too many attempts"),
          503: N_("Not available just now")}
#: The heading of a status without one of its own.
OTHER_TITLE = N_("Not done")
#: Why an address no route answers is refused: none has its path, or not with its method.
NO_ROUTE = {404: N_("the floor view has no page %(path)s"),
            405: N_("%(path)s does not take %(method)s")}


def for_people(path: str) -> bool:
    """Whether a person may meet the route *path*'s refusals (a page, a form, a file): every
    route but a program's (:data:`PROGRAM_ROUTES`)."""
    return not path.startswith(PROGRAM_ROUTES)


def asks_for_html(request: Request) -> bool:
    """Whether *request* comes from a browser showing a page (its ``Accept`` names HTML)."""
    return "text/html" in request.headers.get("accept", "")


class RefusalPage:
    """The refusals of a :class:`~dealerbox.floor.web.app.FloorApp` (its languages and its
    templates), answered to whoever asked as :mod:`this module <.refusal_page>` says."""

    def __init__(self, app):
        self.app = app

    def answer(self, request: Request, refused: Refused, *, people: bool) -> Response:
        """The answer to *request*, refused with *refused*, on a route that is a person's
        (*people*, :func:`for_people`) or a program's. The session is the one the gate
        found (``request.state.session``), if it found one."""
        html = asks_for_html(request)
        if refused.status == 401 and request.method == "GET" and html:
            return RedirectResponse("/login", 303)
        if not (people and html):
            return refused.response()
        session = getattr(request.state, "session", None)
        language = self.app.language.of(request, session)
        response = self.app.render(request, "refused.html", refused.status, session=session, language=language,
                                   title=language.gettext(TITLES.get(refused.status, OTHER_TITLE)),
                                   reason=refused.told(language), sign_in=refused.status == 401)
        response.headers.update(refused.headers)
        return response

    async def no_route(self, request: Request, exc: HTTPException) -> Response:
        """Starlette's handler of a 404 (no route has the path) and a 405 (not with this
        method): a browser's request told as a route's refusal is, for whoever is signed in;
        a program's, Starlette's own plain answer."""
        if not (for_people(request.url.path) and asks_for_html(request)) or exc.status_code not in NO_ROUTE:
            return PlainTextResponse(exc.detail, exc.status_code, headers=exc.headers)
        gate = self.app.gate
        client = gate.client(request)
        try:
            session, new_token = await run_in_threadpool(gate.authenticate, request, client)
        except Refused as refused:
            return self.answer(request, refused, people=True)
        request.state.session = session
        if session is None:
            return self.answer(request, Refused(401, N_("sign in first")), people=True)
        response = self.answer(request, Refused(exc.status_code, NO_ROUTE[exc.status_code], exc.headers,
                                                path=repr(request.url.path[:100]), method=request.method),
                               people=True)
        if new_token is not None:   # a session the trusted proxy's user header began
            gate.set_cookie(response, client, new_token)
        return response
