"""Who may use the floor's web view: local users with roles, their passwords
and their sessions (docs/floor/security.md, "Signing in").

- Roles are data: :data:`ROLES` lists them from least to most trusted, and
  each permission names the least role that has it (an admin may do what a
  supervisor may, a supervisor what a viewer may).
- Passwords are hashed with argon2id (argon2-cffi, RFC 9106's parameters);
  a hash made with older parameters is replaced at the next sign-in.
- Sessions follow OWASP's session management guidance: a random id of 256
  bits that only the browser holds (the store keeps its SHA-256), a new id at
  every sign-in, an idle and an absolute timeout, deleted at sign-out, when
  the user's password changes and when the user is removed.
- :class:`SigninLimiter` counts failed sign-ins per user and per address.

Nothing here speaks HTTP: :mod:`dealerbox.floor.web` does.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from dealerbox.errors import DealerboxError
from dealerbox.floor.operating.security_log import security_event
from dealerbox.floor.store import Store

__all__ = ["ROLES", "PERMISSIONS", "AccountError", "Accounts", "Session", "Sessions",
           "SigninLimiter", "SESSIONS_PER_USER", "may", "check_name", "check_password"]

log = logging.getLogger(__name__)

#: From least to most trusted.
ROLES = ("viewer", "supervisor", "admin")

#: What each permission needs at least.
PERMISSIONS = {
    "view": "viewer",            # the floor, the alerts, the audit trail
    "clear": "supervisor",       # clear an alert, with a note
    "see_names": "supervisor",   # dealers' names beside their ids (tables know ids only)
    "manage_users": "admin",     # add, remove users, set passwords
    # The room's registry (issue 40; docs/floor/registry.md, "Who may change the registry"): a
    # supervisor takes a sealed deck in and pulls a suspect deck out of play at once;
    # a deck's tags, its limit, its destruction and the dealers' badges are the admin's.
    "deck_custody": "supervisor",    # receive a sealed deck, retire a deck
    "manage_registry": "admin",      # register a deck's tags, set its limit, destroy it; badges
}

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
#: OWASP: no composition rules, a length floor, a generous ceiling.
PASSWORD_MIN, PASSWORD_MAX = 12, 256
#: A user's sessions open at once: a pit boss's desk, tablet and phone, and room to spare.
SESSIONS_PER_USER = 20


class AccountError(DealerboxError, ValueError):
    """A user name, role or password that cannot be taken, said in one line."""


def may(role: str | None, permission: str) -> bool:
    """Whether *role* has *permission* (unknown roles have none)."""
    if role not in ROLES:
        return False
    return ROLES.index(role) >= ROLES.index(PERMISSIONS[permission])


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise AccountError(f"user name {name!r}: expected 1 to 64 letters, digits or . _ @ -, "
                           "starting with a letter or digit")
    return name


def check_role(role: str) -> str:
    if role not in ROLES:
        raise AccountError(f"role {role!r}: expected one of {', '.join(ROLES)}")
    return role


def check_password(password: str) -> str:
    if not isinstance(password, str) or not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise AccountError(f"a password has {PASSWORD_MIN} to {PASSWORD_MAX} characters")
    return password


class Accounts:
    """The users in a :class:`~dealerbox.floor.store.Store`."""

    def __init__(self, store: Store, hasher: PasswordHasher | None = None):
        self.store = store
        self.hasher = hasher or PasswordHasher()  # argon2id, RFC 9106 low-memory profile
        self._dummy: str | None = None

    def add(self, name: str, role: str, password: str, *, by: str | None = None) -> None:
        """A new user; the security log names *by*, the admin who added them (None: unknown)."""
        check_name(name), check_role(role), check_password(password)
        if not self.store.add_user(name, role, self.hasher.hash(password), time.time()):
            raise AccountError(f"user {name!r} exists already (remove it first, or passwd)")
        security_event("user_added", f"floor: user {name} ({role}) added" + (f" by {by}" if by else ""),
                       user=name, role=role, by=by)

    def passwd(self, name: str, password: str, *, by: str | None = None) -> None:
        """A new password; the user's open sessions end."""
        check_password(password)
        if not self.store.set_password_hash(name, self.hasher.hash(password), time.time()):
            raise AccountError(f"no user {name!r}")
        security_event("password_changed", f"floor: new password for {name}, their sessions ended"
                       + (f", by {by}" if by else ""), user=name, by=by)

    def remove(self, name: str, *, by: str | None = None) -> None:
        """Remove the user; their open sessions end."""
        if not self.store.remove_user(name):
            raise AccountError(f"no user {name!r}")
        security_event("user_removed", f"floor: user {name} removed" + (f" by {by}" if by else ""),
                       user=name, by=by)

    def list(self) -> list[dict]:
        return self.store.users()

    def verify(self, name: str, password: str) -> dict | None:
        """The user if *password* is theirs, else None. An unknown name costs
        the same hash as a known one, so timing does not tell which names exist."""
        user = self.store.user(name) if isinstance(name, str) and NAME_RE.match(name) else None
        if user is None:
            if self._dummy is None:
                self._dummy = self.hasher.hash(secrets.token_hex(16))
            try:
                self.hasher.verify(self._dummy, password)
            except (VerificationError, InvalidHashError):
                pass
            return None
        try:
            self.hasher.verify(user["hash"], password)
        except VerifyMismatchError:
            return None
        except (VerificationError, InvalidHashError):
            return None
        if self.hasher.check_needs_rehash(user["hash"]):
            self.store.set_password_hash(name, self.hasher.hash(password), time.time(),
                                         end_sessions=False)
        return user


@dataclass(frozen=True)
class Session:
    """A signed-in user, as a request sees it."""
    key: str        # SHA-256 of the cookie's id: what the store keeps
    user: str
    role: str
    csrf: str
    created: float
    seen: float


def session_key(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


class Sessions:
    """Server-side sessions in the store.

    :param idle_s: a session not used for this long ends.
    :param max_s: a session ends this long after sign-in, used or not.
    :param per_user: a user's sessions open at once; a new one past it ends the least
        recently used. Behind a trusted proxy every request without a cookie opens a
        session (a script polling the API keeps none), and this bounds what it leaves.
    """

    def __init__(self, store: Store, idle_s: float, max_s: float, per_user: int = SESSIONS_PER_USER):
        self.store, self.idle_s, self.max_s, self.per_user = store, idle_s, max_s, per_user
        # Writing ``seen`` at every request would make every page view a write.
        self.touch_every_s = min(60.0, idle_s / 10)

    def open(self, user: str, address: str, now: float | None = None) -> tuple[str, Session]:
        """A new session for *user*: ``(the cookie's id, the session)``."""
        now = time.time() if now is None else now
        self.store.drop_stale_sessions(now - self.idle_s, now - self.max_s)
        token = secrets.token_urlsafe(32)
        csrf = secrets.token_urlsafe(32)
        key = session_key(token)
        self.store.add_session(key, user, csrf, now, address[:100])
        ended = self.store.drop_sessions_beyond(user, self.per_user)
        if ended:
            log.info("floor web: %s has more than %d sessions open; ended the %d used least recently",
                     user, self.per_user, ended)
        row = self.store.session(key)
        return token, Session(key, user, row["role"], csrf, now, now)

    def get(self, token: str | None, now: float | None = None, *, touch: bool = True) -> Session | None:
        """The live session whose cookie id is *token*, or None (an expired one is deleted)."""
        if not token or len(token) > 100:
            return None
        now = time.time() if now is None else now
        row = self.store.session(session_key(token))
        if row is None:
            return None
        if now - row["seen"] > self.idle_s or now - row["created"] > self.max_s:
            self.store.drop_session(row["key"])
            return None
        if touch and now - row["seen"] >= self.touch_every_s:
            self.store.touch_session(row["key"], now)
            row["seen"] = now
        return Session(row["key"], row["user"], row["role"], row["csrf"], row["created"], row["seen"])

    def still(self, session: Session, now: float | None = None) -> Session | None:
        """*session* again from the store (an open event stream checks it now and then):
        None once it ended, expired, or its user is gone."""
        now = time.time() if now is None else now
        row = self.store.session(session.key)
        if row is None or now - row["seen"] > self.idle_s or now - row["created"] > self.max_s:
            return None
        return Session(row["key"], row["user"], row["role"], row["csrf"], row["created"], row["seen"])

    def end(self, session: Session) -> None:
        self.store.drop_session(session.key)

    def end_token(self, token: str | None) -> None:
        if token and len(token) <= 100:
            self.store.drop_session(session_key(token))


class SigninLimiter:
    """Failed sign-ins per user and per address in a sliding window.

    Once a user name or an address has *per_user* / *per_address* failures
    within *window_s*, further attempts for it are refused without looking at
    the password until the oldest failure leaves the window. In memory: the
    web view is one process, and a restart that forgets the count is rare and
    visible in the log.
    """

    MAX_KEYS = 10000

    def __init__(self, per_user: int, per_address: int, window_s: float):
        self.limits = {"user": per_user, "address": per_address}
        self.window_s = window_s
        self._fails: dict[tuple[str, str], deque] = {}
        self._lock = threading.Lock()

    def _recent(self, key, now) -> deque:
        q = self._fails.get(key)
        if q is None:
            return deque()
        while q and q[0] <= now - self.window_s:
            q.popleft()
        if not q:
            del self._fails[key]
        return q

    def retry_after(self, user: str, address: str, now: float | None = None) -> float | None:
        """Seconds until *user* from *address* may try again, or None if now."""
        now = time.monotonic() if now is None else now
        waits = []
        with self._lock:
            for kind, value in (("user", user[:100]), ("address", address)):
                q = self._recent((kind, value), now)
                if len(q) >= self.limits[kind]:
                    waits.append(q[len(q) - self.limits[kind]] + self.window_s - now)
        return max(waits) if waits else None

    def failed(self, user: str, address: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self._lock:
            if len(self._fails) >= self.MAX_KEYS:  # a flood of names: forget the stalest
                for key in sorted(self._fails, key=lambda k: self._fails[k][-1])[:self.MAX_KEYS // 10]:
                    del self._fails[key]
            for key in (("user", user[:100]), ("address", address)):
                self._fails.setdefault(key, deque()).append(now)

    def succeeded(self, user: str) -> None:
        with self._lock:
            self._fails.pop(("user", user[:100]), None)
