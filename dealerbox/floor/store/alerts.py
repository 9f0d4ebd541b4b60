"""Alerts and the audit trail of who cleared what.

An alert of a kind a table already has open is folded into it (``count`` and
the ``last_*`` columns), so a table cannot fill the floor with alerts.
"""

from __future__ import annotations

import json
import time

from sqlalchemy import func, insert, select, update

from dealerbox.floor.store.connection import Connection
from dealerbox.floor.store.schema import alerts_table, audit_table, storable, tables_table

__all__ = ["AlertsAndAudit", "ALERT_TEXT_MAX", "raise_alert_in", "clear_alerts_in", "REFERENCE_KIND",
           "SURVEILLANCE_KINDS", "SIGNIN_ACTIONS", "SIGNIN_VIAS", "SIGNIN_NAME_MAX", "WRONG_PASSWORD",
           "PROXY_USER_UNKNOWN"]

#: Alert texts are cut to this many characters (parts of them come from the tables).
ALERT_TEXT_MAX = 300
#: The protection pass's alert that a game's hands are not checked for a shuffle (its reference
#: missing or stale past its bound, its fit failed: :mod:`dealerbox.floor.protect.floor_pass`).
REFERENCE_KIND = "protect_reference"
#: The kinds for surveillance alone: the Surveillance page lists them, the floor map (a pit
#: boss's, who can do nothing about them) and its stream leave them out.
SURVEILLANCE_KINDS = frozenset({REFERENCE_KIND})
#: The audit rows of the web view's sign-ins (the security journal's events of the same names):
#: ``who`` is the user, or for a failure the name tried; ``detail`` is JSON (``via``, ``address``,
#: ``why`` for a failure: :data:`WRONG_PASSWORD` or :data:`PROXY_USER_UNKNOWN`).
SIGNIN_ACTIONS = ("signin", "signin_failed", "signout")
#: How a sign-in came: a password in the sign-in form or the API, or the trusted proxy's header.
SIGNIN_VIAS = ("password", "proxy")
#: The characters of a name tried that a row keeps (the sign-in form takes at most 100).
SIGNIN_NAME_MAX = 100
#: Why a sign-in failed, as a row keeps it (the audit trail words it): a password that no user
#: of that name has (the floor says no more, to anyone), or a proxy naming no user of the floor.
WRONG_PASSWORD, PROXY_USER_UNKNOWN = "wrong_password", "proxy_user_unknown"

_ALERT_COLUMNS = tuple(alerts_table.c[name] for name in (
    "id", "table_id", "kind", "text", "seq", "raised", "cleared_by", "cleared_at", "note",
    "count", "last_seq", "last_text", "last_raised"))


class AlertsAndAudit(Connection):
    """The alerts the filing raises and people clear, and the audit trail of the clears."""

    def raise_alert(self, table_id: str, kind: str, text: str, seq: int | None = None,
                    now: float | None = None) -> dict:
        """Raise an alert, or fold it into the open alert of the same table and
        kind (its ``count`` goes up, ``last_seq``/``last_text``/``last_raised``
        say what came last). Returns the alert as it now is."""
        now = time.time() if now is None else now
        text = _cut(text)
        a = alerts_table.c
        with self._unit():
            if self.backend == "postgresql":
                # The table's row first, as the filing takes it: one order of locks for everyone.
                self._execute(select(tables_table.c.table_id).where(tables_table.c.table_id == table_id)
                              .with_for_update())
            open_id = self._execute(select(a.id).where(a.table_id == table_id, a.kind == kind,
                                                       a.cleared_at.is_(None))
                                    .order_by(a.id.desc()).limit(1).with_for_update()).scalar()
            if open_id is None:
                open_id = self._execute(
                    insert(alerts_table).values(table_id=table_id, kind=kind, text=text, seq=seq, raised=now,
                                          last_seq=seq, last_text=text, last_raised=now)
                    .returning(a.id)).scalar_one()
            else:
                self._execute(update(alerts_table).where(a.id == open_id).values(
                    count=a.count + 1, last_seq=seq, last_text=text, last_raised=now))
            return self.alert(open_id)

    # -- reading and clearing (any thread)

    def clear_alert(self, alert_id: int, who: str, note: str = "") -> dict | None:
        """Acknowledge an alert; records who and when in the audit trail.
        Returns the alert, or None if there is no such open alert."""
        now = time.time()
        a = alerts_table.c
        with self._unit():
            cleared = self._execute(update(alerts_table).where(a.id == alert_id, a.cleared_at.is_(None))
                                    .values(cleared_by=who, cleared_at=now, note=note)).rowcount
            if cleared:
                self._execute(insert(audit_table).values(at=now, who=who, action="clear",
                                                   alert_id=alert_id, detail=note))
        return self.alert(alert_id) if cleared else None

    def record_signin(self, action: str, who: str, *, via: str, address: str, why: str = "",
                      now: float | None = None) -> None:
        """Put a sign-in, a failed sign-in or a sign-out (:data:`SIGNIN_ACTIONS`) on the audit trail:
        *who* signed in or out, or the name tried (kept as typed, cut to :data:`SIGNIN_NAME_MAX`,
        as both backends store text: :func:`~dealerbox.floor.store.schema.storable`; the pages
        escape it), *via* (:data:`SIGNIN_VIAS`), from *address*, and for a failure *why*."""
        if action not in SIGNIN_ACTIONS or via not in SIGNIN_VIAS:
            raise ValueError(f"a sign-in's action is one of {SIGNIN_ACTIONS} and its via one of {SIGNIN_VIAS}, "
                             f"not {action!r}, {via!r}")
        detail = {"via": via, "address": str(address)[:100]}
        if why:
            detail["why"] = why
        with self._unit():
            self._execute(insert(audit_table).values(at=time.time() if now is None else now,
                                                     who=storable(str(who)[:SIGNIN_NAME_MAX]), action=action,
                                                     detail=json.dumps(detail)))

    def alert(self, alert_id: int) -> dict | None:
        """The alert *alert_id*, open or cleared; None if there is no such alert."""
        with self._unit(write=False):
            row = self._execute(select(*_ALERT_COLUMNS).where(alerts_table.c.id == alert_id)).first()
        return _alert(row) if row else None

    def alerts(self, *, open_only: bool = True) -> list[dict]:
        """The alerts, by id: the open ones, or every one (``open_only=False``)."""
        stmt = select(*_ALERT_COLUMNS).order_by(alerts_table.c.id)
        if open_only:
            stmt = stmt.where(alerts_table.c.cleared_at.is_(None))
        with self._unit(write=False):
            return [_alert(r) for r in self._execute(stmt)]

    def alerts_raised(self, start: float, end: float) -> list[dict]:
        """The alerts raised in ``[start, end)``, open or cleared, by id (the shift report's):
        read by time, never every alert the store holds."""
        a = alerts_table.c
        with self._unit(write=False):
            return [_alert(r) for r in self._execute(select(*_ALERT_COLUMNS).where(
                a.raised >= start, a.raised < end).order_by(a.id))]

    def alerts_live_in(self, start: float, end: float, kinds) -> list[dict]:
        """The alerts of *kinds* open now, or raised before *end* and raised (again) at or after
        *start*, newest first (the Surveillance page's): read by time, never every alert."""
        a = alerts_table.c
        with self._unit(write=False):
            rows = self._execute(select(*_ALERT_COLUMNS).where(
                a.kind.in_(sorted(kinds)),
                a.cleared_at.is_(None) | ((a.raised < end) & (a.last_raised >= start)))).all()
        # Sorted here: ordered by id, SQLite would walk every alert rather than the two indexes.
        return [_alert(r) for r in sorted(rows, key=lambda r: r.id, reverse=True)]

    def alert_summary(self, newest: int) -> dict:
        """The open alerts in brief: the *newest* of them (oldest first), how many
        are open, and how often each table raised each kind (``counts``)."""
        a = alerts_table.c
        with self._unit(write=False):
            rows = self._execute(select(*_ALERT_COLUMNS).where(a.cleared_at.is_(None))
                                 .order_by(a.id.desc()).limit(max(0, newest))).all()
            counts: dict[str, dict[str, int]] = {}
            total = 0
            for table, kind, raised, times in self._execute(
                    select(a.table_id, a.kind, func.count(), func.sum(a.count))
                    .where(a.cleared_at.is_(None)).group_by(a.table_id, a.kind)
                    .order_by(a.table_id, a.kind)):
                counts.setdefault(table, {})[kind] = int(times)
                total += raised
        return {"open": [_alert(r) for r in reversed(rows)], "total": total, "counts": counts}

    def audit(self) -> list[dict]:
        """The audit trail, oldest first: who did what to which alert, and when."""
        with self._unit(write=False):
            c = audit_table.c
            rows = self._execute(select(c.at, c.who, c.action, c.alert_id, c.detail).order_by(c.id)).all()
        return [{"at": at, "who": w, "action": ac, "alert": i, "detail": d} for at, w, ac, i, d in rows]

    def audit_range(self, start: float, end: float) -> tuple[list[dict], list[dict]]:
        """The audit trail of ``[start, end)`` read by time in the store, in one snapshot:
        the audit rows made in it (oldest first, as :meth:`audit` words them), and the
        alerts (by id, as :meth:`alerts` words them) raised or cleared in it or named by one
        of those rows. What :func:`~dealerbox.floor.telling.audit_files.audit_trail` keeps
        of every row and every alert, without reading the rest."""
        c, a = audit_table.c, alerts_table.c
        in_range = (c.at >= start) & (c.at < end)
        named = select(c.alert_id).where(in_range, c.alert_id.is_not(None))
        with self._unit(write=False):
            rows = self._execute(select(c.at, c.who, c.action, c.alert_id, c.detail).where(in_range)
                                 .order_by(c.at, c.id)).all()
            alerts = self._execute(select(*_ALERT_COLUMNS).where(
                ((a.raised >= start) & (a.raised < end)) | ((a.cleared_at >= start) & (a.cleared_at < end))
                | a.id.in_(named)).order_by(a.id)).all()
        return ([{"at": at, "who": w, "action": ac, "alert": i, "detail": d} for at, w, ac, i, d in rows],
                [_alert(r) for r in alerts])


def raise_alert_in(conn, table_id: str, kind: str, text: str, seq: int | None, now: float) -> int:
    """:meth:`AlertsAndAudit.raise_alert` inside the caller's transaction on a SQLAlchemy Core
    connection (a pass that files its own rows with the alert, as the protection pass does):
    the same folding into the open alert of this table and kind. Returns the alert's id."""
    text = _cut(text)
    a = alerts_table.c
    if conn.dialect.name == "postgresql":
        conn.execute(select(tables_table.c.table_id).where(tables_table.c.table_id == table_id)
                     .with_for_update())
    open_id = conn.execute(select(a.id).where(a.table_id == table_id, a.kind == kind, a.cleared_at.is_(None))
                           .order_by(a.id.desc()).limit(1).with_for_update()).scalar()
    if open_id is None:
        return conn.execute(insert(alerts_table).values(table_id=table_id, kind=kind, text=text, seq=seq,
                                                        raised=now, last_seq=seq, last_text=text,
                                                        last_raised=now)
                            .returning(a.id)).scalar_one()
    conn.execute(update(alerts_table).where(a.id == open_id).values(
        count=a.count + 1, last_seq=seq, last_text=text, last_raised=now))
    return open_id


def clear_alerts_in(conn, table_id: str, kind: str, who: str, note: str, now: float) -> list[int]:
    """Clear the open alert of *table_id* and *kind* inside the caller's transaction (a pass that
    clears what it raised once its cause is gone), as :meth:`AlertsAndAudit.clear_alert` does:
    *who* and *note* on the alert and on the audit trail. Returns the ids cleared (none if none
    was open)."""
    a = alerts_table.c
    note = _cut(note, 500)
    ids = list(conn.execute(select(a.id).where(a.table_id == table_id, a.kind == kind, a.cleared_at.is_(None))
                            .with_for_update()).scalars())
    for alert_id in ids:
        conn.execute(update(alerts_table).where(a.id == alert_id, a.cleared_at.is_(None))
                     .values(cleared_by=who, cleared_at=now, note=note))
        conn.execute(insert(audit_table).values(at=now, who=who, action="clear", alert_id=alert_id, detail=note))
    return ids


def _alert(row) -> dict:
    i, t, k, text, seq, raised, by, at, note, count, last_seq, last_text, last_raised = row
    return {"id": i, "table": t, "kind": k, "text": text, "seq": seq, "raised": raised,
            "cleared_by": by, "cleared_at": at, "note": note, "count": count,
            "last_seq": last_seq if last_text is not None else seq,
            "last_text": last_text if last_text is not None else text,
            "last_raised": last_raised if last_raised is not None else raised}


def _cut(text: str, limit: int = ALERT_TEXT_MAX) -> str:
    """*text* as the store keeps it, at most *limit* characters."""
    text = storable(text)
    return text if len(text) <= limit else text[:limit - 3] + "..."
