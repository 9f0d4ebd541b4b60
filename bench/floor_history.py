"""The floor at a year's size: the same reads on a store of one day and of many days.

A room of 50 tables writes about a million journal lines a day, and a store holds
years. One day of the room is filled for real: each table's technician registers the
day's deck at the table (its 54 tags, a check, the registry applied), a supervisor
receives it sealed and issues it with a witness, 60 dealers in two shifts take turns at
the tables every 20 to 60 minutes with breaks, hands of 6 to 10 players run to the river
or stop early with their irregularities and reader faults, a few alerts are raised and
most cleared with a note, and the deck is retired at the close. The lines are written in
bulk in the store's own schema; the registry steps go through the store's own methods;
the figures', the protection's and the registry's passes read every line as the
collector does (the references fitted first, on :data:`REFERENCE_HANDS` hands a game, so
that hands are scored). The tables play side by side, and their lines are filed and passed half an hour of the day
at a time (:data:`SLICE_S`), so that the rows lie in the store in the day's order, as a
floor's do. That is the smaller store (:data:`SMALL_DAYS`, 1,000,000 lines).
The larger (:data:`LARGE_DAYS` days, 10,000,000 lines) is that day again and again, grown
in SQL (:func:`grow_store`): every earlier day's rows moved back by whole days, its decks
renamed, its seqs and ids moved past the day before. PostgreSQL gets both stores' rows
with ``COPY`` (:func:`copy_store`): the same rows on both backends.

Then the same reads on both stores, in turns (the machine's load falls on both alike),
each the median of :data:`REPEATS` after one warm-up, against a real ``floor web``
process per store over HTTP (a signed-in viewer; ``/metrics`` with its bearer token)
and in process: ``/metrics``; the floor map; a table's and a dealer's pages (their figures of the last
day's first shift); the room's figures (``/api/figures/room``); the shift report; a
hand's story page; the audit trail and the card control log of the last day; the tables
page; the Surveillance page; opening the store; and a collector's start (the store
opened, connected and subscribed to a mosquitto of the project's own configuration, then
a fresh process's first figures, protection and registry passes, nothing new to file).

A quick read is timed more often (until its samples take :data:`READ_BUDGET_S`). Then the
pages a person reads (:data:`PAGES`) on the larger store as an English room and as a Czech one
shows them, in turns: a page in the room's language costs what the English one does. That is
held to the ``floor web`` process's own CPU time for the page (Linux's count for the process,
over the timed samples: what the page's words and forms cost, whatever else the machine runs;
PostgreSQL's own work, the same in both languages, is in its processes, not counted); the
wall time is printed beside it.

Keys, per backend (``sqlite``, ``postgresql``): ``floor_history_<backend>_<read>_ms``
(at the larger size; ``/metrics``' goal: at most 100), ``..._ms_small`` (at the
smaller size, the baseline) and ``..._ratio`` (goal: at most 1.5), with
``floor_history_<backend>_lines`` / ``_lines_small``, ``_fill_s`` (the one-day store,
its passes included), ``_grow_s``, ``_copy_s`` (PostgreSQL) and ``_run_s``; and per page
``..._<page>_en_ms``, ``..._<page>_cs_ms`` and ``..._<page>_cs_ratio`` (wall time), and
``..._<page>_en_cpu_ms``, ``..._<page>_cs_cpu_ms`` and ``..._<page>_cs_cpu_ratio`` (the server's
CPU time; goal: at most :data:`LANGUAGE_RATIO_GOAL`).

Not part of ``make bench``: ``make bench-history`` or
``python -m bench.floor_history [--backend sqlite|postgresql|both] [--days N] [--stores DIR]``.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
import http.client
import io
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, insert, select, update

from bench import mosquitto_missing, show_goals
from bench.bench_floor_stats import DECK, TableWriter, deal_hole_cards
from dealerbox.floor.collecting.collector import Collector
from dealerbox.floor.collecting.registry_pass import RegistryPass
from dealerbox.floor.operating.accounts import Accounts
from dealerbox.floor.operating.broker import Broker, free_port, make_pki, stop_process
from dealerbox.floor.operating.pgcluster import PostgresCluster, unavailable_reason
from dealerbox.floor.operating.settings import load_collector
from dealerbox.floor.protect.config import ProtectConfig
from dealerbox.floor.protect.decks import collector_protection
from dealerbox.floor.protect.fit import fit_model
from dealerbox.floor.protect.floor_pass import Protection
from dealerbox.floor.store import Store, store_engine
from dealerbox.floor.store.schema import alerts_table, audit_table, tables_table
from dealerbox.floor.telling.figures import Ledger, fig_hands

#: The room: 50 tables writing 20,000 lines each a day (a million lines a day), 60 dealers.
TABLES = 50
LINES_PER_TABLE_DAY = 20_000
DEALERS = 60
SMALL_DAYS, LARGE_DAYS = 1, 10
#: Hands dealt per game when the bench fits the protection's references (the floor's default is 100,000).
REFERENCE_HANDS = 2_000
REPEATS = 5
#: A read's samples take about this long at least (at most :data:`MOST_REPEATS` of them): a page
#: of 50 ms read five times is at the mercy of one slow scheduling, one of seconds is not.
READ_BUDGET_S = 4.0
MOST_REPEATS = 31
DAY_S = 86_400.0
#: Each day (UTC; the bench's floor keeps its time in UTC) play starts at 09:00 and goes on until
#: the table's lines of the day are written, about 22:30: every row of a day lies in its calendar
#: day, so the card control log's day and the audit trail's read the same rows at both sizes.
OPEN_AT_S = 9 * 3600.0
SHIFT_S = 8 * 3600.0
#: The collector files and passes the room's lines a slice of the day at a time.
SLICE_S = 1800.0
SUPERVISORS = ("sup1", "sup2", "sup3", "sup4")
CUSTODIANS = ("cust1", "cust2")
VIEWER, VIEWER_PASSWORD = "bench", "bench viewer password"
TOKEN = "history-bench-" + "5" * 40
ALERT_KINDS = (("floor", "the floor is needed at the table"), ("misdeal", "misdeal declared"),
               ("reader", "the board reader is not answering"), ("dealer_chart", "a dealer's errors are up"))

#: The reads timed, in the order printed.
READS = ("metrics", "floor_map", "table_page", "dealer_page", "room_figures", "shift_report", "hand_page", "audit_day",
         "card_log_day", "tables_page", "surveillance_page", "open_store", "collector_start")

#: The pages a person reads, timed again in another language than English on the larger store:
#: a page told in Czech costs what the English one does.
PAGES = ("floor_map", "table_page", "dealer_page", "shift_report", "hand_page", "audit_day", "card_log_day",
         "tables_page", "surveillance_page")
LANGUAGES = ("en", "cs")
#: A page in Czech over the same page in English, at most.
LANGUAGE_RATIO_GOAL = 1.2


@dataclass
class Room:
    """The room's size (the bench's test runs it tiny)."""
    tables: int = TABLES
    lines_per_table_day: int = LINES_PER_TABLE_DAY
    dealers: int = DEALERS
    small_days: int = SMALL_DAYS
    large_days: int = LARGE_DAYS
    reference_hands: int = REFERENCE_HANDS
    repeats: int = REPEATS
    read_budget_s: float = READ_BUDGET_S


def _table_names(room: Room) -> list[str]:
    return [f"T{n + 1:02d}" for n in range(room.tables)]


def _uid(*parts) -> str:
    return hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()[:14].upper()


def deck_tags(deck: str) -> dict[str, str]:
    """The 52 cards and 2 jokers of *deck*, tag UID -> card."""
    tags = {_uid(deck, card): card for card in DECK}
    tags.update({_uid(deck, "joker", copy): "joker" for copy in (0, 1)})
    return tags


def last_day_start(end: float) -> float:
    """The midnight (UTC) that starts a store's last day: the last whose play is over before *end*."""
    return (end - DAY_S) // DAY_S * DAY_S


def deck_name(table: str, day_start: float) -> str:
    return f"{table}-{time.strftime('%Y%m%d', time.gmtime(day_start))}"


def _deal_day(writer: TableWriter, deck: str, dealers: list[str], day_start: float, until: int):
    """One table's play of one day from :data:`OPEN_AT_S`, until about line *until*:
    dealers taking turns (the day shift's, then the swing shift's), breaks, hands that
    stop early, irregularities and reader faults. A hand takes some 70 s (a room of 50
    tables writing a million lines a day deals briskly). A generator: it yields after each
    hand, so that the room's tables play side by side (:meth:`Filler.day`)."""
    rng = writer.rng
    wall = day_start + OPEN_AT_S + rng.uniform(0, 600)
    next_rotation = wall
    half = len(dealers) // 2
    while writer.seq < until - 15:   # a hand is some 30 lines: the day's lines come out at about *until*
        if wall >= next_rotation:
            shift = dealers[:half] if wall - day_start < OPEN_AT_S + SHIFT_S else dealers[half:]
            if rng.random() < 0.08:   # the table closes for a break, its dealer signed out
                writer.event(wall, "dealer", dealer=None)
                wall += rng.uniform(600, 1800)
            writer.event(wall, "dealer", dealer=rng.choice(shift))
            next_rotation = wall + rng.uniform(1200, 3600)
            wall += rng.uniform(20, 60)
        wall, stub, step = deal_hole_cards(writer, wall, 0.3, 0.8, deck=deck)
        # Most hands end before the river: everyone folds to a bet on the flop or the turn.
        streets = rng.choices([(3, 1, 1), (3, 1), (3,), ()], [45, 20, 20, 15])[0]
        for street in streets:
            wall += rng.uniform(8, 15)
            writer.event(wall, "shoe", card=stub.pop(), deck=deck)  # the burn
            for _ in range(street):
                wall += step
                card = stub.pop()
                writer.event(wall, "shoe", card=card, deck=deck)
                writer.event(wall + 0.5, "board_on", card=card)
            writer.event(wall + 1, "button", name="round_done")
        wall += rng.uniform(8, 25)
        writer.event(wall, "button", name="hand_over")
        wall += rng.uniform(10, 25)  # the shuffle, the button moves
        yield wall


class Filler:
    """Fills one store with the room's days, oldest first, every pass run as the collector runs it."""

    def __init__(self, target, room: Room, seed: int = 47):

        self.target, self.room = target, room
        self.rng = random.Random(seed)
        self.store = Store(target)
        self.engine = store_engine(target)
        self.postgresql = self.engine.dialect.name == "postgresql"
        self.tables = _table_names(room)
        self.dealers = [f"{1000 + i}" for i in range(room.dealers)]
        self.writers = {t: TableWriter(t, random.Random(self.rng.random())) for t in self.tables}
        self.registry = RegistryPass(self.store)
        config = ProtectConfig()
        #: The moment the passes run at, in the store's time (the day just filed, not today).
        self.now = 0.0
        self.ledger = Ledger(protection=Protection(config, clock=lambda: self.now))
        with self.engine.begin() as conn:
            fit_model(conn, config, random.Random(seed), hands=room.reference_hands)
        accounts = Accounts(self.store)
        accounts.add(VIEWER, "viewer", VIEWER_PASSWORD)
        self.alert_id = 0
        self.lines = 0
        self._first_day = True
        self._yesterday: dict[str, str] = {}

    def close(self) -> None:
        self.store.close()
        self.engine.dispose()

    # -- writing rows in bulk, in the store's own schema

    def _flush(self) -> None:
        rows = [row for t in self.tables for row in self.writers[t].rows]
        if not rows:
            return
        with self.engine.begin() as conn:
            raw = conn.connection.dbapi_connection
            if self.postgresql:
                with raw.cursor() as cur, cur.copy(
                        "COPY lines (table_id, seq, line, hash, chain_ok, committed) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
            else:
                raw.executemany("INSERT INTO lines VALUES (?, ?, ?, ?, ?, ?)", rows)
            for t in self.tables:
                w = self.writers[t]
                conn.exec_driver_sql(
                    "UPDATE tables SET last_seq = %(seq)s, last_hash = %(hash)s, online = 1, seen = %(seen)s "
                    "WHERE table_id = %(table)s" if self.postgresql else
                    "UPDATE tables SET last_seq = :seq, last_hash = :hash, online = 1, seen = :seen "
                    "WHERE table_id = :table", {"seq": w.seq, "hash": w.prev, "seen": w.t, "table": t})
        for w in self.writers.values():
            self.lines += len(w.rows)
            w.rows.clear()

    def _passes(self) -> None:
        """The collector's passes over what was just filed: the registry's, the figures' and the protection's."""
        self.registry.catch_up()
        self.ledger.catch_up(self.engine)

    def _alerts_and_audit(self, day_start: float) -> None:
        """A few alerts per table raised in the day's play, most cleared by a supervisor with a note."""
        rng = self.rng
        alerts, audit = [], []
        for t in self.tables:
            for _ in range(rng.randint(3, 8)):
                kind, text = rng.choice(ALERT_KINDS)
                raised = rng.uniform(day_start + OPEN_AT_S, self.writers[t].t)   # while the table plays
                cleared = raised + rng.uniform(20, 900) if rng.random() < 0.9 else None
                who = rng.choice(SUPERVISORS) if cleared else None
                note = "dealt on as the rule says" if cleared else None
                seq = rng.randint(1, self.writers[t].seq)
                alerts.append({"table_id": t, "kind": kind, "text": text, "seq": seq, "last_seq": seq,
                               "raised": raised, "cleared_by": who, "cleared_at": cleared, "note": note,
                               "count": 1, "last_text": text, "last_raised": raised})
        with self.engine.begin() as conn:
            first = (conn.execute(select(func.coalesce(func.max(alerts_table.c.id), 0))).scalar() or 0) + 1
            for i, a in enumerate(alerts):
                a["id"] = first + i
                if a["cleared_at"] is not None:
                    audit.append({"at": a["cleared_at"], "who": a["cleared_by"], "action": "clear",
                                  "alert_id": a["id"], "detail": a["note"]})
            conn.execute(insert(alerts_table), alerts)
            if audit:
                conn.execute(insert(audit_table), audit)
            if self.postgresql:  # the rows came with their ids: the sequence follows them
                conn.exec_driver_sql("SELECT setval(pg_get_serial_sequence('alerts', 'id'), "
                                     "(SELECT max(id) FROM alerts))")

    def _clear_pass_alerts(self, day_start: float) -> None:
        """Most of the alerts the protection pass raised today cleared by a supervisor, with a note."""
        a = alerts_table.c
        with self.engine.begin() as conn:
            raised = conn.execute(select(a.id, a.raised).where(a.cleared_at.is_(None), a.raised >= day_start)).all()
            for alert_id, at in raised:
                if self.rng.random() < 0.9:
                    who, when = self.rng.choice(SUPERVISORS), at + self.rng.uniform(60, 900)
                    conn.execute(update(alerts_table).where(a.id == alert_id).values(
                        cleared_by=who, cleared_at=when, note="watched the tape: dealt fairly"))
                    conn.execute(insert(audit_table).values(at=when, who=who, action="clear", alert_id=alert_id,
                                                            detail="watched the tape: dealt fairly"))

    def day(self, day_start: float) -> None:
        """One day of the room, filed and passed."""
        rng = self.rng
        if self._first_day:
            with self.engine.begin() as conn:
                conn.execute(insert(tables_table), [{"table_id": t, "online": 1} for t in self.tables])
        decks = {t: deck_name(t, day_start) for t in self.tables}
        until = {t: w.seq + self.room.lines_per_table_day for t, w in self.writers.items()}
        for t in self.tables:   # a supervisor takes the day's decks in, sealed
            self.store.receive_deck(decks[t], "red" if rng.random() < 0.5 else "blue", 54,
                                    rng.choice(CUSTODIANS), now=day_start + 7 * 3600 + rng.uniform(0, 600))
        for t, w in self.writers.items():   # the technicians register them at the tables
            at = day_start + 8 * 3600 + rng.uniform(0, 900)
            w.event(at, "registry_applied", version=rng.randint(1, 10_000), fingerprint=_uid(at) * 4 + "0" * 8)
            if self._first_day and t == self.tables[0]:
                for dealer in self.dealers:
                    w.event(at, "badge_registered", uid=_uid("badge", dealer)[:8], dealer=dealer)
            w.event(at + 60, "deck_registered", deck=decks[t], back="red", tags=deck_tags(decks[t]))
            missing = ["Ks"] if rng.random() < 0.02 else []
            w.event(at + 120, "deck_checked", deck=decks[t], missing=missing, damaged=[], ok=not missing)
        self._flush()
        self.now = day_start + 8.4 * 3600
        self._passes()
        for t in self.tables:   # issued, witnessed; yesterday's deck destroyed before a witness
            sup, witness = rng.sample(SUPERVISORS, 2)
            self.store.issue_deck(decks[t], t, sup, witness, now=day_start + 8.5 * 3600 + rng.uniform(0, 600))
            if t in self._yesterday:
                self.store.destroy_deck(self._yesterday[t], "admin", rng.choice(CUSTODIANS),
                                        now=day_start + 8.75 * 3600 + rng.uniform(0, 300))
        # The tables play side by side and the collector files and passes as the lines come in (a
        # slice of the day at a time): the rows lie in the store in the order of the day, as a
        # floor's do, not table after table.
        playing = {t: _deal_day(w, decks[t], self.dealers, day_start, until[t]) for t, w in self.writers.items()}
        wall = {t: 0.0 for t in self.tables}
        slice_end = day_start + OPEN_AT_S
        while playing:
            slice_end += SLICE_S
            for t in list(playing):
                while wall[t] < slice_end:
                    wall[t] = next(playing[t], None)
                    if wall[t] is None:
                        del playing[t]
                        break
            self._flush()
            self.now = slice_end
            self._passes()
        self._alerts_and_audit(day_start)
        self.now = max(w.t for w in self.writers.values()) + 60
        self._passes()
        self._clear_pass_alerts(day_start)
        for t, w in self.writers.items():   # the close: every deck out of play
            self.store.retire_deck(decks[t], rng.choice(SUPERVISORS), "the day's play is over", now=w.t + 300)
        self._yesterday = decks
        self._first_day = False


def fill(target, room: Room, days: int, end: float) -> int:
    """A store at *target* holding *days* days of the room, the last ending before *end*; its lines."""
    filler = Filler(target, room)
    try:
        first = last_day_start(end) - (days - 1) * DAY_S
        for d in range(days):
            filler.day(first + d * DAY_S)
            print(f"   filled day {d + 1} of {days}: {filler.lines:,} lines", flush=True)
        return filler.lines
    finally:
        filler.close()


# ------------------------------------------------------------------ the larger store, day by day

#: How each column of a day's rows moves when the day is copied *k* days on (the rest are copied as they
#: are): a time by whole days (``time``; ``hour``: the hourly bucket), a line's seq by the table's lines of
#: a day (``seq``), a hand's number by its hands of a day, an id past the day's ids, a deck (and its tags)
#: renamed, so that each day's decks are its own.
DAY_ROWS = {
    "lines": {"seq": "seq", "committed": "time"},
    "fig_hands": {"start_seq": "seq", "end_seq": "seq", "started": "time", "ended": "time", "hour": "hour",
                  "number": "number"},
    "fig_irregularities": {"seq": "seq", "start_seq": "seq", "started": "time"},
    "fig_reader_faults": {"start_seq": "seq", "started": "time"},
    "protect_hands": {"start_seq": "seq", "started": "time", "deck": "deck"},
    "protect_evidence": {"id": "id", "alert_id": "alert", "seq": "seq", "raised": "time"},
    "reg_hands": {"start_seq": "seq", "deck": "deck", "started": "time", "ended": "time"},
    "reg_decks": {"name": "deck", "received_at": "time", "registered_at": "time", "first_play_at": "time",
                  "retired_at": "time", "destroyed_at": "time", "last_ended": "time", "limit_alerted": "time",
                  "changed": "time"},
    "reg_tags": {"uid": "uid", "deck": "deck"},
    "reg_steps": {"id": "id", "at": "time", "deck": "deck", "seq": "seq"},
    "alerts": {"id": "id", "seq": "seq", "raised": "time", "cleared_at": "time", "last_seq": "seq",
               "last_raised": "time"},
    "audit": {"id": "id", "at": "time", "alert_id": "alert"},
}
#: The rows that say where the store stands, copied once, as they stand after the last day.
STANDING_ROWS = {
    "tables": {"last_seq": "seq"},
    "fig_progress": {"seq": "seq", "resume_seq": "seq", "hands": "number"},
    "reg_progress": {"seq": "seq", "resume_seq": "seq"},
    "protect_progress": {"seq": "seq", "resume_seq": "seq"},
}


def grow_store(small: Path, large: Path, days: int) -> int:
    """The SQLite store *large*: *days* days, each the one day of the store *small* (filled for real,
    every pass run), moved by whole days (the last is *small*'s own day) with every line, hand,
    deck, step, alert and audit row of it, as :data:`DAY_ROWS` says; its lines."""
    Store(large).close()   # the schema, as the migrations make it
    db = sqlite3.connect(large, isolation_level=None)
    try:
        db.execute("PRAGMA synchronous = OFF")
        db.execute("ATTACH DATABASE ? AS src", (str(small),))
        names = [n for (n,) in db.execute("SELECT name FROM src.sqlite_master WHERE type = 'table' "
                                          "AND name NOT LIKE 'sqlite_%' AND name != 'alembic_version'")]
        top = {t: db.execute(f"SELECT coalesce(max(id), 0) FROM src.{t}").fetchone()[0]
               for t in ("alerts", "audit", "reg_steps", "protect_evidence")}
        db.execute("BEGIN")
        for name in names:
            db.execute(f"DELETE FROM main.{name}")
        for k in range(days):
            for name, moved in DAY_ROWS.items():
                where = " WHERE x.step != 'badge_registered'" if name == "reg_steps" and k < days - 1 else ""
                _copy_rows(db, name, moved, k, days, top, where)
        for name in names:
            if name not in DAY_ROWS:
                _copy_rows(db, name, STANDING_ROWS.get(name, {}), days - 1, days, top, "")
        db.execute("COMMIT")
        return db.execute("SELECT count(*) FROM main.lines").fetchone()[0]
    finally:
        db.close()


def _copy_rows(db, name: str, moved: dict, k: int, days: int, top: dict, where: str) -> None:
    """*name*'s rows of the source's day, moved *k* days on (of *days*; the last is the source's own)."""
    shift = (k - (days - 1)) * DAY_S
    columns = [c for _cid, c, *_rest in db.execute(f"PRAGMA src.table_info({name})")]
    joined = "table_id" in columns
    id_top = top.get("alerts" if name == "alerts" else name, 0)
    last = k == days - 1
    moves = {"time": f"{{x}} + {shift}", "hour": f"{{x}} + {int(shift // 3600)}",
             "seq": f"{{x}} + {k} * day.last_seq",
             "number": f"{{x}} + {k} * (SELECT p.hands FROM src.fig_progress p WHERE p.table_id = x.table_id)",
             "id": f"{{x}} + {k * id_top}", "alert": f"{{x}} + {k * top['alerts']}",
             # Each day's decks its own: renamed, and their tags each the original's UID and a byte.
             "deck": "{x}" if last else f"{{x}} || '~{k + 1}'", "uid": "{x}" if last else f"{{x}} || '{k + 1:02X}'"}
    exprs = [moves.get(moved.get(c), "{x}").format(x=f'x."{c}"') for c in columns]
    quoted = ", ".join(f'"{c}"' for c in columns)
    join = " LEFT JOIN src.tables AS day ON day.table_id = x.table_id" if joined else ""
    db.execute(f"INSERT INTO main.{name} ({quoted}) SELECT {', '.join(exprs)} "
               f"FROM src.{name} AS x{join}{where}")


# ------------------------------------------------------------------ timing the reads

class WebView:
    """``dealerbox floor web`` on the store, on a free loopback port; a viewer signed in."""

    def __init__(self, directory: Path, target, language: str = "en"):
        self.port = free_port()
        backend = "url" if "://" in str(target) else "path"
        token = directory / "metrics-token"
        token.write_text(TOKEN + "\n")
        token.chmod(0o600)
        self.config = directory / f"floor-web-{language}.toml"
        self.config.write_text(f'[store]\n{backend} = "{target}"\n[web]\nhost = "127.0.0.1"\nport = {self.port}\n'
                               f'metrics_token_file = "{token}"\ntime_zone = "UTC"\nlanguage = "{language}"\n')
        self.log = directory / f"floor-web-{language}.log"
        self.proc = None
        self.cookie = ""

    def __enter__(self) -> "WebView":
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "dealerbox.cli", "floor", "web", "--config",
                                          str(self.config)], stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 300
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"floor web exited {self.proc.returncode}: {self.log.read_text()[-2000:]}")
            with contextlib.suppress(OSError):
                if self.get("/healthz")[0] == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("floor web did not answer /healthz within 300 s")
            time.sleep(0.1)
        status, headers, body = self.request("POST", "/api/session",
                                             json.dumps({"user": VIEWER, "password": VIEWER_PASSWORD}).encode(),
                                             {"Content-Type": "application/json"})
        if status != 200:
            raise RuntimeError(f"the bench's viewer could not sign in: {status} {body[:200]!r}")
        self.cookie = "; ".join(v.split(";", 1)[0] for k, v in headers if k.lower() == "set-cookie")
        return self

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            stop_process(self.proc)

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, resp.getheaders(), resp.read()
        finally:
            conn.close()

    def get(self, path: str, headers: dict | None = None):
        return self.request("GET", path, headers={"Cookie": self.cookie, **(headers or {})})


def _medians_ms(actions, repeats: int, budget_s: float = 0.0) -> list[float]:
    """Each of *actions* timed *repeats* times, in turns (the machine's load falls on all of them
    alike), after one warm-up each (a page read once before is what a floor serves all day):
    the median of each, in ms. Quick ones are timed more often, until their samples take about
    *budget_s* (at most :data:`MOST_REPEATS`), so that one slow turn of the scheduler does not
    decide their median."""
    warm_s = 0.0
    for action in actions:
        started = time.perf_counter()
        action()
        warm_s = max(warm_s, time.perf_counter() - started)
    if budget_s > 0:
        repeats = max(repeats, min(MOST_REPEATS, int(budget_s / max(warm_s, 1e-3))))
    samples = [[] for _ in actions]
    for _ in range(repeats):
        for action, mine in zip(actions, samples):
            started = time.perf_counter()
            action()
            mine.append((time.perf_counter() - started) * 1000)
    return [round(statistics.median(mine), 1) for mine in samples]


def _process_cpu_s(pid: int) -> float:
    """The CPU time that process *pid* has spent so far (user and system, Linux's ``/proc``), in s."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        # After the command's name (in parentheses, which may hold spaces): utime and stime are
        # the 12th and 13th fields, in clock ticks.
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _counting_cpu(action, pid: int, spent: list[float]):
    """*action*, the CPU time process *pid* spends while it runs appended to *spent* (in s)."""
    def counted():
        before = _process_cpu_s(pid)
        action()
        spent.append(_process_cpu_s(pid) - before)
    return counted


def _ok(view: WebView, path: str, headers: dict | None = None, expect: bytes | None = None):
    def read():
        status, _h, body = view.get(path, headers)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status} {body[:300]!r}")
        if expect is not None and expect not in body:
            raise RuntimeError(f"GET {path}: {expect!r} is not in the answer")
    return read


def _last_day(target) -> dict:
    """What the reads ask for: the store's last day's first shift, a table, a dealer and a hand of it."""
    engine = store_engine(target)
    try:
        with engine.connect() as conn:
            h = fig_hands.c
            day_start = conn.execute(select(func.max(h.started))).scalar() // DAY_S * DAY_S
            start = day_start + OPEN_AT_S
            table, seq, dealer = conn.execute(
                select(h.table_id, h.start_seq, h.dealer).where(h.started >= start, h.dealer.is_not(None))
                .order_by(h.started).limit(1)).one()
    finally:
        engine.dispose()
    return {"from": start, "to": start + SHIFT_S, "day": time.strftime("%Y-%m-%d", time.gmtime(day_start)),
            "day_from": day_start, "day_to": day_start + DAY_S, "table": table, "seq": seq, "dealer": dealer}


def _collector_start(directory: Path, target, broker, pki: Path) -> None:
    """A collector's start on the store: opened, connected and subscribed, then a fresh
    process's first passes (figures with protection, registry) with nothing new to file."""

    config = directory / "floor-collector.toml"
    if not config.exists():
        backend = "url" if "://" in str(target) else "path"
        config.write_text(f'[broker]\nhost = "localhost"\nport = {broker.port}\nca = "{pki / "ca.crt"}"\n'
                          f'cert = "{pki / "floor-collector.crt"}"\nkey = "{pki / "floor-collector.key"}"\n'
                          f'[store]\n{backend} = "{target}"\n[protect]\nauto_fit = false\n')
    settings = load_collector(config)
    with Store(settings.store) as store:
        protection = collector_protection(settings, store)
        collector = Collector(settings.identity, store, limits=settings.limits, protection=protection,
                              registry_limits=settings.registry)
        with collector:
            if not collector.connected.wait(60):
                raise RuntimeError("the collector did not connect to the bench's broker within 60 s")
            engine = store_engine(settings.store)
            try:
                Ledger(protection=protection).catch_up(engine)
            finally:
                engine.dispose()
            RegistryPass(store, settings.registry).catch_up()


def _reads(view: WebView, directory: Path, target, at: dict, broker, pki: Path) -> dict:
    """Each read of :data:`READS` on one store, as a callable."""
    shift = f"from={at['from']:.0f}&to={at['to']:.0f}"
    day = f"from={at['day_from']:.0f}&to={at['day_to']:.0f}"
    return {
        "metrics": _ok(view, "/metrics", {"Authorization": f"Bearer {TOKEN}"}, b"dealerbox_"),
        "floor_map": _ok(view, "/"),
        "table_page": _ok(view, f"/tables/{at['table']}?{shift}"),
        "dealer_page": _ok(view, f"/dealers/{at['dealer']}?{shift}"),
        "room_figures": _ok(view, f"/api/figures/room?{shift}", expect=b'"hands"'),
        "shift_report": _ok(view, f"/report?{shift}"),
        "hand_page": _ok(view, f"/hands/{at['table']}/{at['seq']}"),
        "audit_day": _ok(view, f"/audit?{day}"),
        "card_log_day": _ok(view, f"/registry/log?day={at['day']}"),
        "tables_page": _ok(view, "/tables"),
        "surveillance_page": _ok(view, f"/surveillance?{shift}"),
        "open_store": lambda: Store(target).close(),
        "collector_start": lambda: _collector_start(directory, target, broker, pki),
    }


def time_reads(stores: list[tuple[Path, object]], room: Room, broker, pki: Path) -> list[dict]:
    """Every read of :data:`READS` on each of *stores* (``(directory, target)``), in ms: the
    same read on each store in turns, each served by a ``floor web`` of its own."""
    with contextlib.ExitStack() as stack:
        reads = [_reads(stack.enter_context(WebView(directory, target)), directory, target,
                        _last_day(target), broker, pki) for directory, target in stores]
        times: list[dict] = [{} for _ in stores]
        for name in READS:
            # A collector's start takes a second or more: half as many of those.
            repeats = max(1, room.repeats // 2) if name == "collector_start" else room.repeats
            budget = 0.0 if name == "collector_start" else room.read_budget_s
            for mine, ms in zip(times, _medians_ms([r[name] for r in reads], repeats, budget)):
                mine[name] = ms
    return times


def time_languages(directory: Path, target, room: Room, broker, pki: Path) -> dict[str, dict[str, float]]:
    """Every page of :data:`PAGES` on one store as an English room and as a Czech one shows it
    (a ``floor web`` each, ``[web] language``), in turns: ``{language: {page: ms}}``, with the
    server's CPU time for each (``{page}_cpu``, in ms)."""
    with contextlib.ExitStack() as stack:
        at = _last_day(target)
        views = {language: stack.enter_context(WebView(directory, target, language)) for language in LANGUAGES}
        reads = {language: _reads(view, directory, target, at, broker, pki) for language, view in views.items()}
        pids = {language: view.proc.pid for language, view in views.items()}
        times: dict[str, dict[str, float]] = {language: {} for language in LANGUAGES}
        for name in PAGES:
            spent: dict[str, list[float]] = {language: [] for language in LANGUAGES}
            actions = [_counting_cpu(reads[lang][name], pids[lang], spent[lang]) for lang in LANGUAGES]
            for language, ms in zip(LANGUAGES, _medians_ms(actions, room.repeats, room.read_budget_s)):
                times[language][name] = ms
                # The first turn is the warm-up, whose time is not counted either. Linux counts a
                # process's CPU in ticks (10 ms): over the samples together, not each alone.
                counted = spent[language][1:]
                times[language][f"{name}_cpu"] = round(sum(counted) / len(counted) * 1000, 1)
    return times


# ------------------------------------------------------------------ the backends

#: How :func:`copy_store` writes a NULL in the CSV it copies.
NULL = "\\N"


def copy_store(path: Path, url: str) -> None:
    """The SQLite store at *path*, every row of every table, into the new PostgreSQL store at
    *url* (its schema made by the migrations), with ``COPY``; then its ids' sequences moved past
    the rows and its statistics gathered (as autovacuum would, some time after a bulk load)."""
    Store(url).close()
    src = sqlite3.connect(path)
    engine = store_engine(url)
    try:
        names = [n for (n,) in src.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                           "AND name NOT LIKE 'sqlite_%' AND name != 'alembic_version'")]
        with engine.begin() as conn, conn.connection.dbapi_connection.cursor() as cur:
            for name in names:
                have = {c for (c,) in cur.execute("SELECT column_name FROM information_schema.columns "
                                                  "WHERE table_name = %s", (name,))}
                columns = [c for _cid, c, *_rest in src.execute(f'PRAGMA table_info("{name}")') if c in have]
                if not columns:
                    continue
                quoted = ", ".join(f'"{c}"' for c in columns)
                cur.execute(f'DELETE FROM "{name}"')
                rows = src.execute(f'SELECT {quoted} FROM "{name}"')
                # CSV blocks rather than a row at a time (the csv module writes them in C: some five
                # times faster for ten million lines); NULL as \N, so that '' stays a string.
                with cur.copy(f"COPY \"{name}\" ({quoted}) FROM STDIN WITH (FORMAT csv, NULL '\\N')") as copy:
                    while block := rows.fetchmany(5000):
                        text = io.StringIO()
                        csv.writer(text).writerows(tuple(NULL if v is None else v for v in row) for row in block)
                        copy.write(text.getvalue())
                if "id" in columns:
                    cur.execute(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                                f'(SELECT coalesce(max(id), 0) + 1 FROM "{name}"), false) '
                                f"WHERE pg_get_serial_sequence('{name}', 'id') IS NOT NULL")
        with engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("ANALYZE")
    finally:
        src.close()
        engine.dispose()


@contextlib.contextmanager
def _postgresql_cluster():
    cluster = PostgresCluster().start()
    try:
        yield cluster
    finally:
        cluster.close()


def fill_stores(room: Room, directory: Path) -> tuple[Path, Path, dict]:
    """The two SQLite stores of the room (one day, and :attr:`Room.large_days`), both ending
    before now; their paths and figures."""
    started = time.perf_counter()
    end = (time.time() // 3600) * 3600 - 3600   # an hour ago: every line is in the past
    small, large = directory / "small.sqlite", directory / "large.sqlite"
    figures = {"lines_small": fill(small, room, room.small_days, end)}
    figures["fill_s"] = round(time.perf_counter() - started)
    figures["lines"] = grow_store(small, large, room.large_days)
    figures["grow_s"] = round(time.perf_counter() - started) - figures["fill_s"]
    return small, large, figures


def earlier_stores(stores: Path, room: Room, directory: Path) -> tuple[Path, Path, dict]:
    """The one-day store an earlier fill left in *stores* (``small.sqlite``) and the larger one
    grown from it (``large.sqlite`` there when an earlier run grew it, else grown in *directory*)."""
    small, large = stores / "small.sqlite", stores / "large.sqlite"
    figures = {}
    if not large.exists():
        started = time.perf_counter()
        large = directory / "large.sqlite"
        grow_store(small, large, room.large_days)
        figures["grow_s"] = round(time.perf_counter() - started)
    for key, path in (("lines_small", small), ("lines", large)):
        with contextlib.closing(sqlite3.connect(path)) as db:
            figures[key] = db.execute("SELECT count(*) FROM lines").fetchone()[0]
    return small, large, figures


def time_backend(backend: str, stores: tuple, room: Room, scratch: Path, broker, pki: Path,
                 filled: dict) -> dict:
    """Every read timed on both stores of *backend* (``(small, large)`` targets); the figures."""
    started = time.perf_counter()
    (scratch / "small").mkdir(parents=True)
    (scratch / "large").mkdir(parents=True)
    at_small, at_large = time_reads([(scratch / "small", stores[0]), (scratch / "large", stores[1])], room,
                                    broker, pki)
    key = f"floor_history_{backend}"
    figures = {f"{key}_{k}": v for k, v in filled.items()}
    for read in READS:
        figures[f"{key}_{read}_ms_small"] = at_small[read]
        figures[f"{key}_{read}_ms"] = at_large[read]
        figures[f"{key}_{read}_ratio"] = round(at_large[read] / at_small[read], 2) if at_small[read] else None
    (scratch / "languages").mkdir()
    told = time_languages(scratch / "languages", stores[1], room, broker, pki)
    for page in PAGES:
        english, czech = told["en"][page], told["cs"][page]
        figures[f"{key}_{page}_en_ms"] = english
        figures[f"{key}_{page}_cs_ms"] = czech
        figures[f"{key}_{page}_cs_ratio"] = round(czech / english, 2) if english else None
        english, czech = told["en"][f"{page}_cpu"], told["cs"][f"{page}_cpu"]
        figures[f"{key}_{page}_en_cpu_ms"] = english
        figures[f"{key}_{page}_cs_cpu_ms"] = czech
        figures[f"{key}_{page}_cs_cpu_ratio"] = round(czech / english, 2) if english else None
    figures[f"{key}_run_s"] = round(time.perf_counter() - started + filled.get("fill_s", 0))
    return figures


def goals(backend: str) -> dict:
    """What each key of *backend* is held to, for :func:`bench.show_goals`."""
    key = f"floor_history_{backend}"
    out = {f"{key}_lines": ("", None, "the smaller store {" + key + "_lines_small}")}
    for read in READS:
        out[f"{key}_{read}_ratio"] = ("<=", 1.5, "{" + f"{key}_{read}_ms_small" + "} ms, then {"
                                      + f"{key}_{read}_ms" + "} ms")
        if read == "metrics":
            out[f"{key}_metrics_ms"] = ("<=", 100, "{" + f"{key}_metrics_ms_small" + "} ms at the smaller size")
    for page in PAGES:
        out[f"{key}_{page}_cs_cpu_ratio"] = ("<=", LANGUAGE_RATIO_GOAL, "server CPU in English {"
                                             + f"{key}_{page}_en_cpu_ms" + "} ms, in Czech {"
                                             + f"{key}_{page}_cs_cpu_ms" + "} ms")
        out[f"{key}_{page}_cs_ratio"] = ("", None, "wall in English {" + f"{key}_{page}_en_ms"
                                         + "} ms, in Czech {" + f"{key}_{page}_cs_ms" + "} ms")
    out[f"{key}_fill_s"] = ("", None, "")
    out[f"{key}_grow_s"] = ("", None, "")
    out[f"{key}_copy_s"] = ("", None, "")
    out[f"{key}_run_s"] = ("", None, "")
    return out


def run(backends=("sqlite", "postgresql"), room: Room | None = None, stores: Path | None = None) -> dict:
    """The bench: the SQLite stores filled (or those in *stores*, ``small.sqlite`` and
    ``large.sqlite`` of an earlier fill), timed; copied into PostgreSQL, timed there."""
    room = room or Room()
    missing = mosquitto_missing()
    if missing:
        return {"floor_history_skipped": missing}
    figures: dict = {}
    scratch_root = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="dealerbox-history-", dir=scratch_root) as d:
        d = Path(d)
        pki = make_pki(d / "pki", ["floor-collector"])
        (d / "broker").mkdir()
        broker = Broker(d / "broker", pki).start()
        try:
            if stores is None:
                small, large, filled = fill_stores(room, d)
            elif not (stores / "small.sqlite").exists():   # filled there, and kept for the next run
                stores.mkdir(parents=True, exist_ok=True)
                small, large, filled = fill_stores(room, stores)
            else:
                small, large, filled = earlier_stores(stores, room, d)
            for backend in backends:
                if backend == "sqlite":
                    part = time_backend("sqlite", (small, large), room, d / "sqlite", broker, pki, filled)
                elif unavailable_reason():
                    figures["floor_history_postgresql_skipped"] = unavailable_reason()
                    continue
                else:
                    with _postgresql_cluster() as cluster:
                        copied = time.perf_counter()
                        urls = (cluster.database("history_small"), cluster.database("history_large"))
                        copy_store(small, urls[0])
                        copy_store(large, urls[1])
                        part = time_backend("postgresql", urls, room, d / "postgresql", broker, pki,
                                            {**filled, "copy_s": round(time.perf_counter() - copied)})
                show_goals(goals(backend), part)
                figures.update(part)
        finally:
            broker.stop()
    return figures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.floor_history", description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--days", type=int, default=LARGE_DAYS, help="days of the larger store (default %(default)s)")
    parser.add_argument("--stores", type=Path, help="a directory holding the one-day SQLite store of an earlier "
                        "fill (small.sqlite): the larger store is grown from it instead of filling a new one; "
                        "when it holds none, the stores are filled there and kept")
    args = parser.parse_args(argv)
    backends = ("sqlite", "postgresql") if args.backend == "both" else (args.backend,)
    print("== floor_history", flush=True)
    print(f"   {__doc__.strip().splitlines()[0]}")
    figures = run(backends, Room(large_days=args.days), args.stores)
    for key, value in figures.items():
        print(f"   {key}: {value}")
    print(json.dumps(figures, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
