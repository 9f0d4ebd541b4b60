"""The collector's store: SQLite, committed before anything is acknowledged.

One row per journal line per table (the line exactly as the table stored it,
so the chain can be verified here again), the tables' last known status,
state and health, the alerts and the audit trail of who cleared what.

Only lines that continue a table's chain are its record (``lines``). A line
that breaks the chain, or that differs from the line already stored at its
``seq``, is kept aside in ``quarantine`` as evidence and never takes the
genuine line's place. An alert of a kind a table already has open is folded
into it (``count`` and the ``last_*`` columns), so a table cannot fill the
floor with alerts.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path

from . import protocol as P

__all__ = ["Store", "line_hash"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tables (
    table_id TEXT PRIMARY KEY,
    last_seq INTEGER NOT NULL DEFAULT 0,
    last_hash TEXT NOT NULL DEFAULT '',
    first_seq INTEGER,
    boot INTEGER NOT NULL DEFAULT 0,
    conn INTEGER NOT NULL DEFAULT 0,
    online INTEGER NOT NULL DEFAULT 0,
    status TEXT, state TEXT, health TEXT,
    seen REAL
);
CREATE TABLE IF NOT EXISTS lines (
    table_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    line TEXT NOT NULL,
    hash TEXT NOT NULL,
    chain_ok INTEGER NOT NULL,
    committed REAL NOT NULL,
    PRIMARY KEY (table_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS quarantine (
    table_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL,
    line TEXT NOT NULL,
    why TEXT NOT NULL,
    received REAL NOT NULL,
    times INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (table_id, seq, hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS alerts (
    id INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    seq INTEGER,
    raised REAL NOT NULL,
    cleared_by TEXT,
    cleared_at REAL,
    note TEXT,
    count INTEGER NOT NULL DEFAULT 1,
    last_seq INTEGER,
    last_text TEXT,
    last_raised REAL
);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    who TEXT NOT NULL,
    action TEXT NOT NULL,
    alert_id INTEGER,
    detail TEXT
);
"""


#: Columns added to ``alerts`` after the first release, added to an older store on opening.
_ALERT_COLUMNS = {"count": "INTEGER NOT NULL DEFAULT 1", "last_seq": "INTEGER",
                  "last_text": "TEXT", "last_raised": "REAL"}
#: Every open alert of one table and kind (folding looks it up for each alert raised).
_OPEN_ALERTS_INDEX = ("CREATE INDEX IF NOT EXISTS alerts_open ON alerts (table_id, kind) "
                      "WHERE cleared_at IS NULL")
_ALERT_FIELDS = ("id, table_id, kind, text, seq, raised, cleared_by, cleared_at, note, "
                 "count, last_seq, last_text, last_raised")
#: Lines kept aside per table at most; past it they are only counted (in the alert).
QUARANTINE_PER_TABLE = 10_000
#: Alert texts are cut to this many characters (parts of them come from the tables).
ALERT_TEXT_MAX = 300


def line_hash(line: str) -> str:
    return hashlib.sha256(line.encode("ascii", "replace")).hexdigest()


class Store:
    """The SQLite store. All writes go through one connection under a lock;
    the collector's writer thread groups many lines into one transaction."""

    def __init__(self, path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA + ACCOUNTS_SCHEMA)
        have = {row[1] for row in self._db.execute("PRAGMA table_info(alerts)")}
        for column, decl in _ALERT_COLUMNS.items():
            if column not in have:
                self._db.execute(f"ALTER TABLE alerts ADD COLUMN {column} {decl}")
        self._db.execute(_OPEN_ALERTS_INDEX)
        self.lock = threading.RLock()

    def close(self) -> None:
        with self.lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- transactions (writer thread)

    def begin(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self._db.execute("COMMIT")

    def rollback(self) -> None:
        self._db.execute("ROLLBACK")

    def savepoint(self) -> None:
        """Start a nested part of the open transaction (one table's message)."""
        self._db.execute("SAVEPOINT message")

    def release(self) -> None:
        """Keep what was done since :meth:`savepoint`."""
        self._db.execute("RELEASE message")

    def undo(self) -> None:
        """Undo what was done since :meth:`savepoint`; the transaction goes on."""
        self._db.execute("ROLLBACK TO message")
        self._db.execute("RELEASE message")

    def counter(self, key: str) -> int:
        """Increment and return a persistent counter (the collector's boot)."""
        with self.lock:
            # One write transaction: collectors starting together on one store get distinct values.
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
                value = int(row[0]) + 1 if row else 1
                self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(value)))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            return value

    def table(self, table_id: str) -> dict | None:
        cur = self._db.execute("SELECT * FROM tables WHERE table_id=?", (table_id,))
        row = cur.fetchone()
        if row is None:
            return None
        return dict(zip([c[0] for c in cur.description], row))

    def ensure_table(self, table_id: str) -> dict:
        row = self.table(table_id)
        if row is None:
            self._db.execute("INSERT INTO tables (table_id) VALUES (?)", (table_id,))
            row = self.table(table_id)
        return row

    def update_table(self, table_id: str, **fields) -> None:
        cols = ", ".join(f"{k}=?" for k in fields)
        self._db.execute(f"UPDATE tables SET {cols} WHERE table_id=?", (*fields.values(), table_id))

    def stored_line(self, table_id: str, seq: int) -> str | None:
        row = self._db.execute("SELECT line FROM lines WHERE table_id=? AND seq=?",
                               (table_id, seq)).fetchone()
        return row[0] if row else None

    def add_line(self, table_id: str, seq: int, line: str, digest: str, chain_ok: bool,
                 committed: float) -> None:
        self._db.execute("INSERT INTO lines VALUES (?, ?, ?, ?, ?, ?)",
                         (table_id, seq, line, digest, int(chain_ok), committed))

    def quarantine(self, table_id: str, seq: int, line: str, digest: str, why: str,
                   received: float) -> bool:
        """Keep *line* aside (it broke the chain, or differs from the stored line at
        its seq); True if it is a line not kept before. The same line again only
        counts ``times``; past :data:`QUARANTINE_PER_TABLE` lines nothing is added."""
        cur = self._db.execute("UPDATE quarantine SET times = times + 1 "
                               "WHERE table_id=? AND seq=? AND hash=?", (table_id, seq, digest))
        if cur.rowcount:
            return False
        (kept,) = self._db.execute("SELECT COUNT(*) FROM quarantine WHERE table_id=?",
                                   (table_id,)).fetchone()
        if kept >= QUARANTINE_PER_TABLE:
            return True
        self._db.execute("INSERT INTO quarantine VALUES (?, ?, ?, ?, ?, ?, 1)",
                         (table_id, seq, digest, line, why, received))
        return True

    def quarantined(self, table_id: str) -> list[dict]:
        """The lines kept aside for *table_id*, by seq and arrival."""
        with self.lock:
            rows = self._db.execute("SELECT seq, hash, line, why, received, times FROM quarantine "
                                    "WHERE table_id=? ORDER BY seq, received", (table_id,)).fetchall()
        return [{"seq": q, "hash": h, "line": line, "why": w, "received": r, "times": n}
                for q, h, line, w, r, n in rows]

    def raise_alert(self, table_id: str, kind: str, text: str, seq: int | None = None,
                    now: float | None = None) -> dict:
        """Raise an alert, or fold it into the open alert of the same table and
        kind (its ``count`` goes up, ``last_seq``/``last_text``/``last_raised``
        say what came last). Returns the alert as it now is."""
        now = time.time() if now is None else now
        text = _cut(text)
        row = self._db.execute("SELECT id FROM alerts WHERE table_id=? AND kind=? AND cleared_at IS NULL "
                               "ORDER BY id DESC LIMIT 1", (table_id, kind)).fetchone()
        if row is None:
            cur = self._db.execute(
                "INSERT INTO alerts (table_id, kind, text, seq, raised, last_seq, last_text, last_raised) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (table_id, kind, text, seq, now, seq, text, now))
            alert_id = cur.lastrowid
        else:
            alert_id = row[0]
            self._db.execute("UPDATE alerts SET count = count + 1, last_seq=?, last_text=?, "
                             "last_raised=? WHERE id=?", (seq, text, now, alert_id))
        return self.alert(alert_id)

    # -- reading and clearing (any thread)

    def clear_alert(self, alert_id: int, who: str, note: str = "") -> dict | None:
        """Acknowledge an alert; records who and when in the audit trail.
        Returns the alert, or None if there is no such open alert."""
        with self.lock:
            now = time.time()
            self._db.execute("BEGIN IMMEDIATE")
            try:
                cur = self._db.execute(
                    "UPDATE alerts SET cleared_by=?, cleared_at=?, note=? "
                    "WHERE id=? AND cleared_at IS NULL", (who, now, note, alert_id))
                if cur.rowcount == 0:
                    self._db.execute("ROLLBACK")
                    return None
                self._db.execute("INSERT INTO audit (at, who, action, alert_id, detail) "
                                 "VALUES (?, ?, 'clear', ?, ?)", (now, who, alert_id, note))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            return self.alert(alert_id)

    def alert(self, alert_id: int) -> dict | None:
        with self.lock:
            cur = self._db.execute(f"SELECT {_ALERT_FIELDS} FROM alerts WHERE id=?", (alert_id,))
            row = cur.fetchone()
        return _alert(row) if row else None

    def alerts(self, *, open_only: bool = True) -> list[dict]:
        where = "WHERE cleared_at IS NULL" if open_only else ""
        with self.lock:
            rows = self._db.execute(f"SELECT {_ALERT_FIELDS} FROM alerts {where} "
                                    "ORDER BY id").fetchall()
        return [_alert(r) for r in rows]

    def alert_summary(self, newest: int) -> dict:
        """The open alerts in brief: the *newest* of them (oldest first), how many
        are open, and how often each table raised each kind (``counts``)."""
        with self.lock:
            rows = self._db.execute(f"SELECT {_ALERT_FIELDS} FROM alerts WHERE cleared_at IS NULL "
                                    "ORDER BY id DESC LIMIT ?", (max(0, newest),)).fetchall()
            counts: dict[str, dict[str, int]] = {}
            total = 0
            for table, kind, alerts, times in self._db.execute(
                    "SELECT table_id, kind, COUNT(*), SUM(count) FROM alerts "
                    "WHERE cleared_at IS NULL GROUP BY table_id, kind ORDER BY table_id, kind"):
                counts.setdefault(table, {})[kind] = times
                total += alerts
        return {"open": [_alert(r) for r in reversed(rows)], "total": total, "counts": counts}

    def audit(self) -> list[dict]:
        with self.lock:
            rows = self._db.execute("SELECT at, who, action, alert_id, detail FROM audit "
                                    "ORDER BY id").fetchall()
        return [{"at": a, "who": w, "action": ac, "alert": i, "detail": d} for a, w, ac, i, d in rows]

    def tables(self) -> list[dict]:
        with self.lock:
            cur = self._db.execute("SELECT * FROM tables ORDER BY table_id")
            names = [c[0] for c in cur.description]
            rows = [dict(zip(names, r)) for r in cur.fetchall()]
        for row in rows:
            for key in ("status", "state", "health"):
                row[key] = json.loads(row[key]) if row[key] else None
        return rows

    def lines(self, table_id: str) -> list[tuple[int, str]]:
        with self.lock:
            return self._db.execute("SELECT seq, line FROM lines WHERE table_id=? ORDER BY seq",
                                    (table_id,)).fetchall()

    def verify(self, table_id: str) -> list[str]:
        """Check the stored chain of one table; returns the problems found."""
        problems = []
        prev_seq, prev_hash = None, None
        for seq, line in self.lines(table_id):
            d = json.loads(line)
            if prev_seq is None:
                if seq == 1 and d.get("prev") != P.GENESIS:
                    problems.append("seq 1 does not start the chain")
            else:
                if seq != prev_seq + 1:
                    problems.append(f"seq {prev_seq + 1}..{seq - 1} missing")
                elif d.get("prev") != prev_hash:
                    problems.append(f"seq {seq} does not chain to seq {prev_seq}")
            if d.get("seq") != seq:
                problems.append(f"row {seq} holds a line with seq {d.get('seq')}")
            prev_seq, prev_hash = seq, line_hash(line)
        return problems

    # -- users and sessions of the web view (dealerbox/floor/accounts.py decides; these store)

    # -- dealers' names (the tables know ids only; the floor's admin names them)

    def set_dealer_name(self, dealer: str, name: str, now: float) -> None:
        with self.lock:
            self._db.execute("INSERT INTO dealer_names VALUES (?, ?, ?) ON CONFLICT(dealer) "
                             "DO UPDATE SET name = excluded.name, changed = excluded.changed",
                             (dealer, name, now))

    def remove_dealer_name(self, dealer: str) -> bool:
        with self.lock:
            return self._db.execute("DELETE FROM dealer_names WHERE dealer=?", (dealer,)).rowcount > 0

    def dealer_names(self) -> dict[str, str]:
        """Dealer id -> name, for every dealer the floor has a name for."""
        with self.lock:
            return dict(self._db.execute("SELECT dealer, name FROM dealer_names ORDER BY dealer").fetchall())

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version``: changes whenever another connection
        (another process too) commits. The web view polls it to notice changes cheaply."""
        with self.lock:
            return self._db.execute("PRAGMA data_version").fetchone()[0]

    def bump(self, key: str) -> None:
        """Add one to the counter *key* in one statement (safe across processes)."""
        with self.lock:
            self._db.execute("INSERT INTO meta VALUES (?, '1') ON CONFLICT(key) "
                             "DO UPDATE SET value = CAST(value AS INTEGER) + 1", (key,))

    def meta(self, key: str) -> str | None:
        with self.lock:
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def add_user(self, name: str, role: str, password_hash: str, now: float) -> bool:
        """False when *name* exists already."""
        with self.lock:
            try:
                self._db.execute("INSERT INTO users VALUES (?, ?, ?, ?, ?)",
                                 (name, role, password_hash, now, now))
            except sqlite3.IntegrityError:
                return False
            return True

    def user(self, name: str) -> dict | None:
        with self.lock:
            row = self._db.execute("SELECT name, role, hash, created, changed FROM users "
                                   "WHERE name=?", (name,)).fetchone()
        return dict(zip(("name", "role", "hash", "created", "changed"), row)) if row else None

    def users(self) -> list[dict]:
        """Every user (no hashes), with how many sessions each has open."""
        with self.lock:
            rows = self._db.execute(
                "SELECT name, role, created, changed, "
                "(SELECT COUNT(*) FROM sessions s WHERE s.user = u.name) "
                "FROM users u ORDER BY name").fetchall()
        return [dict(zip(("name", "role", "created", "changed", "sessions"), r)) for r in rows]

    def set_password_hash(self, name: str, password_hash: str, now: float, *,
                          end_sessions: bool = True) -> bool:
        """A new hash for *name* (False if no such user); ends the user's sessions
        unless told otherwise (a rehash of the same password at sign-in)."""
        with self.lock, self._transaction():
            cur = self._db.execute("UPDATE users SET hash=?, changed=? WHERE name=?",
                                   (password_hash, now, name))
            if cur.rowcount and end_sessions:
                self._db.execute("DELETE FROM sessions WHERE user=?", (name,))
            return cur.rowcount > 0

    def remove_user(self, name: str) -> bool:
        """Remove *name* and its sessions; False if no such user."""
        with self.lock, self._transaction():
            self._db.execute("DELETE FROM sessions WHERE user=?", (name,))
            return self._db.execute("DELETE FROM users WHERE name=?", (name,)).rowcount > 0

    def add_session(self, key: str, user: str, csrf: str, now: float, address: str) -> None:
        with self.lock:
            self._db.execute("INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?)",
                             (key, user, csrf, now, now, address))

    def session(self, key: str) -> dict | None:
        """The session stored under *key* with its user's current role, or None."""
        with self.lock:
            row = self._db.execute(
                "SELECT s.key, s.user, u.role, s.csrf, s.created, s.seen, s.address "
                "FROM sessions s JOIN users u ON u.name = s.user WHERE s.key=?", (key,)).fetchone()
        return dict(zip(("key", "user", "role", "csrf", "created", "seen", "address"), row)) if row else None

    def touch_session(self, key: str, now: float) -> None:
        with self.lock:
            self._db.execute("UPDATE sessions SET seen=? WHERE key=?", (now, key))

    def drop_session(self, key: str) -> bool:
        with self.lock:
            return self._db.execute("DELETE FROM sessions WHERE key=?", (key,)).rowcount > 0

    def drop_stale_sessions(self, seen_before: float, created_before: float) -> int:
        """Delete the sessions idle since *seen_before* or opened before *created_before*."""
        with self.lock:
            return self._db.execute("DELETE FROM sessions WHERE seen < ? OR created < ?",
                                    (seen_before, created_before)).rowcount

    def _transaction(self):
        return _Transaction(self._db)


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on an exception)."""

    def __init__(self, db):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, *_):
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")


# The web view's users and their sessions. A session's key is the SHA-256 of the
# random id in the cookie: a copy of the store signs no one in.
ACCOUNTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS dealer_names (
    dealer TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    changed REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS users (
    name TEXT PRIMARY KEY,
    role TEXT NOT NULL,
    hash TEXT NOT NULL,
    created REAL NOT NULL,
    changed REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    key TEXT PRIMARY KEY,
    user TEXT NOT NULL,
    csrf TEXT NOT NULL,
    created REAL NOT NULL,
    seen REAL NOT NULL,
    address TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_user ON sessions (user);
"""


def _alert(row) -> dict:
    i, t, k, text, seq, raised, by, at, note, count, last_seq, last_text, last_raised = row
    return {"id": i, "table": t, "kind": k, "text": text, "seq": seq, "raised": raised,
            "cleared_by": by, "cleared_at": at, "note": note, "count": count,
            "last_seq": last_seq if last_text is not None else seq,
            "last_text": last_text if last_text is not None else text,
            "last_raised": last_raised if last_raised is not None else raised}


def _cut(text: str, limit: int = ALERT_TEXT_MAX) -> str:
    """*text* as SQLite can store it (no lone surrogates), at most *limit* characters."""
    text = str(text).encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[:limit - 3] + "..."
