"""The collector's store: SQLite, committed before anything is acknowledged.

One row per journal line per table (the line exactly as the table stored it,
so the chain can be verified here again), the tables' last known status,
state and health, the alerts and the audit trail of who cleared what.
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
CREATE TABLE IF NOT EXISTS alerts (
    id INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    seq INTEGER,
    raised REAL NOT NULL,
    cleared_by TEXT,
    cleared_at REAL,
    note TEXT
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

    def counter(self, key: str) -> int:
        """Increment and return a persistent counter (the collector's boot)."""
        with self.lock:
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
            value = int(row[0]) + 1 if row else 1
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(value)))
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

    def raise_alert(self, table_id: str, kind: str, text: str, seq: int | None = None,
                    now: float | None = None) -> dict:
        now = time.time() if now is None else now
        cur = self._db.execute(
            "INSERT INTO alerts (table_id, kind, text, seq, raised) VALUES (?, ?, ?, ?, ?)",
            (table_id, kind, text, seq, now))
        return {"id": cur.lastrowid, "table": table_id, "kind": kind, "text": text, "seq": seq,
                "raised": now, "cleared_by": None, "cleared_at": None, "note": None}

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
            cur = self._db.execute("SELECT id, table_id, kind, text, seq, raised, cleared_by, "
                                   "cleared_at, note FROM alerts WHERE id=?", (alert_id,))
            row = cur.fetchone()
        return _alert(row) if row else None

    def alerts(self, *, open_only: bool = True) -> list[dict]:
        where = "WHERE cleared_at IS NULL" if open_only else ""
        with self.lock:
            rows = self._db.execute(f"SELECT id, table_id, kind, text, seq, raised, cleared_by, "
                                    f"cleared_at, note FROM alerts {where} ORDER BY id").fetchall()
        return [_alert(r) for r in rows]

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
    i, t, k, text, seq, raised, by, at, note = row
    return {"id": i, "table": t, "kind": k, "text": text, "seq": seq, "raised": raised,
            "cleared_by": by, "cleared_at": at, "note": note}
