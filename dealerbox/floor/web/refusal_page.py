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
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

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
