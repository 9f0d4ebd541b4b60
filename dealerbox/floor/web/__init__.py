"""The floor view on the web: ``dealerbox floor web --config floor.toml``.

A process of its own beside the collector: it reads the collector's store
(SQLite in WAL mode) and writes the clears, the audit trail, and its users'
sessions there. Starlette routes, Jinja2 pages rendered here and shipped in
the package (no CDN: the casino network is closed), server-sent events
through sse-starlette, served by Hypercorn with TLS from the casino CA.

Nothing answers without a signed-in user but the sign-in page and
``/healthz`` (see :meth:`.app.FloorApp.routes` for who may do what):

- ``GET /``: the floor (tables, open alerts); ``GET /audit``: who cleared what.
- ``GET /login``, ``POST /login`` (form), ``POST /logout`` (form with its CSRF token).
- ``POST /api/session`` with ``{"user", "password"}`` signs in (``GET``: who am
  I, with the CSRF token; ``DELETE``: sign out).
- ``GET /api/floor``: the snapshot; ``GET /api/audit``: the audit trail and the alerts.
- ``GET /events``: server-sent events, ``snapshot`` then ``tables``, ``alert``,
  ``cleared`` as JSON; ``GET /events/page``: the same as HTML for the page.
- ``POST /api/alerts/<id>/clear`` with ``{"note": ...}``: a supervisor clears an alert.
- ``GET|POST /api/users``, ``DELETE /api/users/<name>``: admins manage users.
"""

from __future__ import annotations

from dealerbox.floor.web.app import FloorApp, create_app
from dealerbox.floor.web.server import serve

__all__ = ["FloorApp", "create_app", "serve"]
