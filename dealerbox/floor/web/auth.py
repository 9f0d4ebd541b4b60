"""Who is asking, and may they: the web view's gate.

Every route of :mod:`.app` goes through :meth:`Gate.guard`, which

- finds the session from the cookie (or, from a trusted reverse proxy, from
  its user header, for a known local user only, whose role is the local one);
- answers 401 (a page: the sign-in page) without one, 403 without the role;
- for a request that changes something: refuses another site (``Origin``,
  ``Referer``, ``Sec-Fetch-Site``), a body that is not the route's content
  type (so a ``text/plain`` form from anywhere is refused before it is read),
  and a missing or wrong CSRF token (``X-CSRF-Token`` or the form's ``csrf``).
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from dealerbox.errors import DealerboxError
from dealerbox.floor.telling.catalogs import N_
from dealerbox.floor.operating.accounts import Session, Sessions, may
from dealerbox.floor.operating.security_log import security_event
from dealerbox.floor.operating.settings import WebSettings
from dealerbox.floor.store import Store
from dealerbox.floor.store.alerts import PROXY_USER_UNKNOWN

__all__ = ["Gate", "Refused", "Client", "read_body", "BODY_LIMIT"]

log = logging.getLogger(__name__)

BODY_LIMIT = 64 * 1024
SESSION_COOKIE = "dealerbox-session"
SIGNIN_COOKIE = "dealerbox-signin"
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CONTENT_TYPES = {"json": "application/json", "form": "application/x-www-form-urlencoded"}


class Refused(DealerboxError):
    """A request answered with an error: *status* and why, in one way everywhere.

    *message* is English, a catalog message (marked with ``N_``) wherever a person may meet
    it, its placeholders filled from *facts*: :attr:`reason` is that English, which a program
    reads (``{"error": ...}``, :meth:`response`), and :meth:`told` says it in a person's
    language (the refusal page, :mod:`.refusal_page`). The facts named in *words* are catalog
    words themselves (a role: "viewer"), translated with it; those named in *moments* are
    epoch seconds, which the English gives as they are and a person reads as a moment of
    their language."""

    def __init__(self, status: int, message: str, headers: dict | None = None, *,
                 words: tuple[str, ...] = (), moments: tuple[str, ...] = (), **facts):
        self.status, self.message, self.headers = status, message, headers or {}
        self.words, self.moments, self.facts = words, moments, facts
        self.reason = message % facts if facts else message
        super().__init__(self.reason)

    def told(self, language) -> str:
        """The refusal in *language* (a :class:`~dealerbox.floor.telling.language.Language`)."""
        gettext = language.gettext
        if not self.facts:
            return gettext(self.message)
        said = {k: gettext(v) if k in self.words else language.forms.stamp(v) if k in self.moments else v
                for k, v in self.facts.items()}
        return gettext(self.message) % said

    def response(self) -> Response:
        """The refusal for a program: ``{"error": reason}`` in English, with its status."""
        return JSONResponse({"error": self.reason}, self.status, headers=self.headers)


@dataclass(frozen=True)
class Client:
    """Where a request comes from."""
    peer: str               # the address that connected
    address: str            # the browser's address (a trusted proxy's X-Forwarded-For)
    secure: bool            # TLS here, or at a trusted proxy
    proxy_user: str | None  # the trusted proxy's user header
    host: str               # the Host the browser asked for


async def read_body(request: Request, timeout: float, limit: int = BODY_LIMIT) -> bytes:
    """The request's body, at most *limit* bytes, all of it within *timeout*
    (a body sent slowly ends in 408 and the connection closes)."""
    if hasattr(request.state, "body"):
        return request.state.body
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > limit):
        raise Refused(413, N_("a body of at most %(most)s bytes"), {"Connection": "close"}, most=limit)
    chunks, size = [], 0
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise Refused(413, N_("a body of at most %(most)s bytes"), {"Connection": "close"}, most=limit)
                chunks.append(chunk)
    except TimeoutError:
        raise Refused(408, N_("the body did not arrive in time"), {"Connection": "close"}) from None
    except ClientDisconnect:
        # Nobody is left to answer; one line, not the framework's traceback.
        peer = request.client.host if request.client else "?"
        log.info("floor web: a client at %s closed its connection before its body arrived", peer)
        raise Refused(400, N_("the connection closed before the body arrived")) from None
    request.state.body = b"".join(chunks)
    return request.state.body


class Gate:
    def __init__(self, settings: WebSettings, store: Store, sessions: Sessions):
        self.settings, self.store, self.sessions = settings, store, sessions
        self.header = settings.proxy_user_header.lower()

    # -- who

    def client(self, request: Request) -> Client:
        peer = request.client.host if request.client else ""
        secure = request.url.scheme == "https"
        host = request.headers.get("host", "")
        trusted = self.trusted(peer)
        if trusted:
            forwarded = request.headers.get("x-forwarded-for", "")
            address = forwarded.rsplit(",", 1)[-1].strip() or peer
            secure = secure or request.headers.get("x-forwarded-proto", "").strip().lower() == "https"
            host = request.headers.get("x-forwarded-host", host).split(",")[0].strip()
            user = request.headers.get(self.header) or None
        else:
            address, user = peer, None
            if request.headers.get(self.header):
                log.warning("floor web: ignored %s from %s, which is not a trusted proxy",
                            self.settings.proxy_user_header, peer)
        return Client(peer, address[:64], secure, user, host.lower())

    def trusted(self, peer: str) -> bool:
        try:
            ip = ipaddress.ip_address(peer)
        except ValueError:
            return False
        return any(ip in net for net in self.settings.trusted_proxies)

    def cookie_name(self, client: Client, base: str = SESSION_COOKIE) -> str:
        # __Host-: only over TLS, only from this host, path / (a sibling host cannot plant it).
        return f"__Host-{base}" if client.secure else base

    def set_cookie(self, response: Response, client: Client, value: str, *, base: str = SESSION_COOKIE,
                   max_age: int | None = None) -> None:
        response.set_cookie(self.cookie_name(client, base), value, max_age=max_age, path="/",
                            secure=client.secure, httponly=True, samesite="strict")

    def drop_cookie(self, response: Response, client: Client, base: str = SESSION_COOKIE) -> None:
        response.delete_cookie(self.cookie_name(client, base), path="/", secure=client.secure,
                               httponly=True, samesite="strict")

    def session_token(self, request: Request, client: Client) -> str | None:
        return request.cookies.get(self.cookie_name(client))

    def authenticate(self, request: Request, client: Client) -> tuple[Session | None, str | None]:
        """``(session, new cookie id)`` (runs in a worker thread: it reads the store)."""
        token = self.session_token(request, client)
        session = self.sessions.get(token)
        if client.proxy_user is None:
            return session, None
        user = self.store.user(client.proxy_user)
        if user is None:
            security_event("signin_failed", f"floor web: the proxy at {client.peer} named {client.proxy_user!r}, "
                           "who is no local user", user=client.proxy_user, address=client.address,
                           proxy=client.peer, via="proxy")
            self.store.record_signin("signin_failed", client.proxy_user, via="proxy", address=client.address,
                                     why=PROXY_USER_UNKNOWN)
            raise Refused(403, N_("the proxy's user is not a user of the floor view"))
        if session is not None and session.user == user["name"]:
            return session, None
        if session is not None:
            self.sessions.end(session)
        new_token, session = self.sessions.open(user["name"], client.address)
        security_event("signin", f"floor web: {user['name']} ({session.role}) signed in through the proxy at "
                       f"{client.peer}", user=user["name"], role=session.role, address=client.address,
                       proxy=client.peer, via="proxy")
        self.store.record_signin("signin", user["name"], via="proxy", address=client.address)
        return session, new_token

    # -- may they

    def check_origin(self, request: Request, client: Client) -> None:
        site = request.headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            raise Refused(403, N_("a request from another site"))
        origin = request.headers.get("origin")
        if origin is None and request.headers.get("referer"):
            parts = urlsplit(request.headers["referer"])
            origin = f"{parts.scheme}://{parts.netloc}"
        if origin is None:
            return  # not a browser: the CSRF token decides
        own = f"{'https' if client.secure else 'http'}://{client.host}"
        if origin.lower() != own and origin.lower() not in self.settings.origins:
            raise Refused(403, N_("origin %(origin)s is not this site"), origin=origin[:100])

    async def check_body_type(self, request: Request, kind: str | None) -> None:
        if kind is None:
            return
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != CONTENT_TYPES[kind]:
            raise Refused(415, N_("expected %(type)s"), type=CONTENT_TYPES[kind])

    async def check_csrf(self, request: Request, expected: str, kind: str | None) -> None:
        given = request.headers.get("x-csrf-token")
        if given is None and kind == "form":
            given = (await form(request, self.settings.request_timeout_s)).get("csrf")
        if not given or not hmac.compare_digest(given.encode(), expected.encode()):
            raise Refused(403, N_("missing or wrong CSRF token"))

    async def guard(self, request: Request, permission: str | None, body: str | None):
        """``(client, session, new cookie id)`` or :class:`Refused`."""
        client = self.client(request)
        unsafe = request.method in UNSAFE
        if unsafe:
            self.check_origin(request, client)
        if permission is None:
            if unsafe:
                await self.check_body_type(request, body)
            return client, None, None
        session, new_token = await run_in_threadpool(self.authenticate, request, client)
        # Who asked, for the refusal page's language and header when a check below refuses them.
        request.state.session = session
        if session is None:
            raise Refused(401, N_("sign in first"))
        if not may(session.role, permission):
            raise Refused(403, N_("%(user)s (%(role)s) may not do this"), words=("role",), user=session.user,
                          role=session.role)
        if unsafe:
            await self.check_body_type(request, body)
            await self.check_csrf(request, session.csrf, body)
        return client, session, new_token

    def signin_token(self) -> str:
        return secrets.token_urlsafe(32)


async def form(request: Request, timeout: float) -> dict[str, str]:
    """A urlencoded form's fields (the first value of each)."""
    raw = await read_body(request, timeout)
    try:
        fields = parse_qs(raw.decode("utf-8"), max_num_fields=20, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        raise Refused(400, N_("a form that cannot be read")) from None
    return {k: v[0] for k, v in fields.items()}


async def json_object(request: Request, timeout: float) -> dict:
    raw = await read_body(request, timeout)
    try:
        data = json.loads(raw or b"{}")
    except (UnicodeDecodeError, ValueError):
        raise Refused(400, N_("a body that is not JSON")) from None
    if not isinstance(data, dict):
        raise Refused(400, N_("expected a JSON object"))
    return data
