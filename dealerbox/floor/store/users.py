"""The web view's users and their sessions (:mod:`dealerbox.floor.operating.accounts` decides; these store).

A session's key is the SHA-256 of the random id in the cookie: a copy of the
store signs no one in.
"""

from __future__ import annotations

from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from dealerbox.floor.store.connection import Connection
from dealerbox.floor.store.schema import audit_table, sessions_table, users_table

__all__ = ["UsersAndSessions"]


class UsersAndSessions(Connection):
    """The users of the web view, their password hashes and their sessions."""

    def add_user(self, name: str, role: str, password_hash: str, now: float) -> bool:
        """False when *name* exists already."""
        try:
            with self._unit():
                self._execute(insert(users_table).values(name=name, role=role, hash=password_hash,
                                                   created=now, changed=now))
        except IntegrityError:
            return False
        return True

    def user(self, name: str) -> dict | None:
        """The user *name* with its password hash, or None."""
        u = users_table.c
        with self._unit(write=False):
            rows = self._rows(select(u.name, u.role, u.hash, u.created, u.changed, u.language)
                              .where(u.name == name))
        return rows[0] if rows else None

    def users(self) -> list[dict]:
        """Every user (no hashes), with how many sessions each has open."""
        u, s = users_table.c, sessions_table.c
        open_sessions = (select(func.count()).select_from(sessions_table).where(s.user == u.name)
                         .scalar_subquery().label("sessions"))
        with self._unit(write=False):
            return self._rows(select(u.name, u.role, u.created, u.changed, u.language, open_sessions)
                              .order_by(u.name))

    def set_password_hash(self, name: str, password_hash: str, now: float, *,
                          end_sessions: bool = True) -> bool:
        """A new hash for *name* (False if no such user); ends the user's sessions
        unless told otherwise (a rehash of the same password at sign-in)."""
        with self._unit():
            changed = self._execute(update(users_table).where(users_table.c.name == name)
                                    .values(hash=password_hash, changed=now)).rowcount
            if changed and end_sessions:
                self._execute(delete(sessions_table).where(sessions_table.c.user == name))
        return changed > 0

    def set_user_language(self, name: str, language: str | None, now: float) -> str | None | bool:
        """*name* reads the floor in *language* from now on (None: the room's); with it, one
        audit row names the user and the change (``language``, ``cs -> de``; ``room`` for
        none). Returns the language before, or False if there is no such user."""
        u = users_table.c
        with self._unit():
            before = self._execute(select(u.language).where(u.name == name)).first()
            if before is None:
                return False
            # Not ``changed``: that is when the password was set (``floor user list`` says so).
            self._execute(update(users_table).where(u.name == name).values(language=language))
            self._execute(insert(audit_table).values(
                at=now, who=name, action="language", alert_id=None,
                detail=f"{before[0] or 'room'} -> {language or 'room'}"))
        return before[0]

    def remove_user(self, name: str) -> bool:
        """Remove *name* and its sessions; False if no such user."""
        with self._unit():
            self._execute(delete(sessions_table).where(sessions_table.c.user == name))
            return self._execute(delete(users_table).where(users_table.c.name == name)).rowcount > 0

    def add_session(self, key: str, user: str, csrf: str, now: float, address: str) -> None:
        """Open a session under *key* (the hash of the cookie's id) for *user*."""
        with self._unit():
            self._execute(insert(sessions_table).values(key=key, user=user, csrf=csrf, created=now, seen=now,
                                                  address=address))

    def session(self, key: str) -> dict | None:
        """The session stored under *key* with its user's current role, or None."""
        s, u = sessions_table.c, users_table.c
        with self._unit(write=False):
            rows = self._rows(select(s.key, s.user, u.role, s.csrf, s.created, s.seen, s.address, u.language)
                              .join_from(sessions_table, users_table, u.name == s.user).where(s.key == key))
        return rows[0] if rows else None

    def touch_session(self, key: str, now: float) -> None:
        """The session *key* was used at *now* (its idle time starts again)."""
        with self._unit():
            self._execute(update(sessions_table).where(sessions_table.c.key == key).values(seen=now))

    def drop_session(self, key: str) -> bool:
        """End the session *key*; False if there was none."""
        with self._unit():
            return self._execute(delete(sessions_table).where(sessions_table.c.key == key)).rowcount > 0

    def drop_sessions_beyond(self, user: str, keep: int) -> int:
        """End *user*'s sessions but the *keep* most recently used; how many ended."""
        s = sessions_table.c
        newest = select(s.key).where(s.user == user).order_by(s.seen.desc(), s.created.desc()).limit(keep)
        with self._unit():
            return self._execute(delete(sessions_table).where(s.user == user, s.key.not_in(newest))).rowcount

    def drop_stale_sessions(self, seen_before: float, created_before: float) -> int:
        """Delete the sessions idle since *seen_before* or opened before *created_before*."""
        s = sessions_table.c
        with self._unit():
            return self._execute(delete(sessions_table).where(
                or_(s.seen < seen_before, s.created < created_before))).rowcount

