"""Floor figures benchmark: a shift's figures from a store of 1,000,000 journal lines.

A collector's store (floor/store/schema.py, SQLite) is filled with bulk inserts: 100
tables, 10,000 lines each, hands of 6 to 10 players with their cards, board,
buttons and decisions (corrections, wrong corrections, misdeals, voids, unread
cards, reader faults), 40 dealers taking turns at the tables every 20 to 60
minutes, about ten hours of play. The ledger (dealerbox/floor/telling/figures.py) reads
it once (``floor_ledger_lines_per_s``); then, for the first eight hours (a shift):

``floor_stats_ms_p99``
    One dealer's or one table's figures (``dealer_figures`` / ``table_figures``),
    p99 over 200 queries, half each. Goal: at most 200 ms. Baseline, measured in
    the same run (``floor_stats_ms_p99_plain``): the plain approach, reading the
    shift's lines (a table's; for a dealer every table's) and counting them with
    hands.py, over a few queries of each kind.
``floor_report_s``
    Every table's and every dealer's figures of the shift (``room_figures``).
    Goal: at most 10 s. Baseline (``floor_report_s_plain``): every line of the
    shift read and counted with hands.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from dealerbox.floor.telling import figures as F
from dealerbox.floor.telling.hands import hands_of_lines
from dealerbox.floor.store import Store, store_engine

TABLES = 100
DEALERS = 40
LINES_PER_TABLE = 10_000
SHIFT_S = 8 * 3600.0
QUERIES = 200
PLAIN_QUERIES = 3  # of each kind: the plain approach takes seconds per query
T0 = 1_790_000_000.0  # hands start at an hour's boundary plus a few minutes

GOALS = {
    "floor_ledger_lines_per_s": ("", None, ""),
    "floor_stats_ms_p99": ("<=", 200, "plain {floor_stats_ms_p99_plain}"),
    "floor_stats_ms_p99_plain": ("", None, ""),
    "floor_report_s": ("<=", 10, "plain {floor_report_s_plain}"),
    "floor_report_s_plain": ("", None, ""),
}

RANKS, SUITS = "23456789TJQKA", "cdhs"
DECK = [r + s for r in RANKS for s in SUITS]
IRREGULAR = [  # (irregularity, verdict, weight): what a real shift raises, roughly how often
    ("EXPOSED_DEAL", "correct", 6), ("MISSED_BURN", "correct", 4), ("WRONG_CORRECTION", "floor", 1),
    ("FOUR_CARD_FLOP", "floor", 1), ("BOXED_CARD", "correct", 2), ("UNREAD_CARD", "ok", 3),
    (None, "misdeal", 1), (None, "void", 1), ("READER_DEGRADED", "ok", 1),
]


class TableWriter:
    """One table's journal lines, chained as the box chains them."""

    def __init__(self, table: str, rng: random.Random):
        self.table, self.rng = table, rng
        self.seq, self.prev, self.t = 0, "0" * 64, 0.0
        self.rows: list[tuple] = []

    def _line(self, kind: str, body: dict, wall: float) -> None:
        self.seq += 1
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(wall)) + f".{int(wall % 1 * 1e6):06d}Z"
        line = json.dumps({"seq": self.seq, "prev": self.prev, "wall": stamp, kind: body},
                          separators=(",", ":"))
        digest = hashlib.sha256(line.encode()).hexdigest()
        self.rows.append((self.table, self.seq, line, digest, 1, wall))
        self.prev, self.t = digest, wall

    def event(self, wall: float, ev: str, **fields) -> None:
        self._line("event", {"t": round(wall - T0, 3), "ev": ev, **fields}, wall)

    def decision(self, wall: float, verdict: str, irregularity, step: int = 0) -> None:
        self._line("decision", {"t": round(wall - T0, 3), "verdict": verdict, "irregularity": irregularity,
                                "cards": [], "rule": "002 r39", "steps": ["burn the next card"] if verdict != "ok" else [],
                                "step": step, "phase": "deal", "seq": self.seq}, wall)


def irregularities(writer: TableWriter, wall: float) -> None:
    """What the deal of a hand raises now and then, at *wall*: an irregularity (1 hand in 12)
    with its correction's steps and the all-clear, or a reader's fault (1 in 100)."""
    rng = writer.rng
    if rng.random() < 0.08:
        irregularity, verdict, _w = rng.choices(IRREGULAR, [w for _i, _v, w in IRREGULAR])[0]
        writer.decision(wall, verdict, irregularity)
        if verdict == "correct":
            writer.decision(wall + 2, verdict, irregularity, 1)
        if irregularity == "WRONG_CORRECTION" or rng.random() < 0.3:
            writer.decision(wall + 3, "ok", None)
    if rng.random() < 0.01:
        writer.event(wall, "reader_fault", reader=rng.choice(["shoe", "board", "muck"]))


def deal_hole_cards(writer: TableWriter, wall: float, fastest: float, slowest: float,
                    **card: str) -> tuple[float, list[str], float]:
    """A hand of 6 to 10 players from a shuffled deck, from *wall*: its ``new_hand``, the hole
    cards a step of *fastest* to *slowest* seconds apart (each shoe event with *card*'s
    fields too), the round done and what the deal raised. ``(wall, the stub, the step)``."""
    rng = writer.rng
    players = rng.randint(6, 10)
    writer.event(wall, "new_hand", players=players)
    stub = DECK[:]
    rng.shuffle(stub)
    step = rng.uniform(fastest, slowest)
    for _ in range(players * 2):
        wall += step
        writer.event(wall, "shoe", card=stub.pop(), **card)
    writer.event(wall, "button", name="round_done")
    irregularities(writer, wall)
    return wall, stub, step


def _fill_table(writer: TableWriter, dealers: list[str]) -> None:
    rng = writer.rng
    wall = T0 + rng.uniform(0, 600)
    next_rotation = wall
    while writer.seq < LINES_PER_TABLE - 60:
        if wall >= next_rotation:
            writer.event(wall, "dealer", dealer=rng.choice(dealers) if rng.random() > 0.05 else None)
            next_rotation = wall + rng.uniform(1200, 3600)
            wall += rng.uniform(20, 60)
        wall, stub, step = deal_hole_cards(writer, wall, 1.0, 2.5)
        for street in (3, 1, 1):
            wall += rng.uniform(15, 40)
            writer.event(wall, "shoe", card=stub.pop())  # the burn
            for _ in range(street):
                wall += step
                card = stub.pop()
                writer.event(wall, "shoe", card=card)
                writer.event(wall + 0.5, "board_on", card=card)
            writer.event(wall + 1, "button", name="round_done")
        wall += rng.uniform(20, 60)
        writer.event(wall, "button", name="hand_over")
        wall += rng.uniform(30, 90)  # the shuffle, the button moves


def build_store(path: Path, seed: int = 22) -> int:
    """Fill a store at *path*; returns the number of lines."""
    rng = random.Random(seed)
    dealers = [f"{1000 + i}" for i in range(DEALERS)]
    total = 0
    Store(path).close()  # the schema, as the collector makes it
    # Bulk inserts straight into the file: the filing's checks are not what is measured here.
    db = sqlite3.connect(path, isolation_level=None)
    with contextlib.closing(db):
        db.execute("PRAGMA synchronous=OFF")
        for n in range(TABLES):
            table = f"T{n + 1:03d}"
            writer = TableWriter(table, random.Random(rng.random()))
            _fill_table(writer, dealers)
            db.execute("BEGIN")
            db.executemany("INSERT INTO lines VALUES (?, ?, ?, ?, ?, ?)", writer.rows)
            db.execute("INSERT INTO tables (table_id, last_seq, last_hash, online) VALUES (?, ?, ?, 1)",
                       (table, writer.seq, writer.prev))
            # A few alerts per table, most cleared by one of four supervisors.
            for i in range(5):
                raised = T0 + rng.uniform(0, 36000)
                cleared = raised + rng.uniform(20, 900) if i < 4 else None
                db.execute("INSERT INTO alerts (table_id, kind, text, seq, raised, cleared_by, cleared_at) "
                           "VALUES (?, 'floor', 'the floor is needed', 1, ?, ?, ?)",
                           (table, raised, f"sup{rng.randint(1, 4)}" if cleared else None, cleared))
            db.execute("COMMIT")
            total += writer.seq
    return total


def _plain_lines(db: sqlite3.Connection, table: str | None, start: float, end: float) -> dict[str, list[str]]:
    """The plain approach's read: each table's lines committed from the shift's start on."""
    if table is None:
        rows = db.execute("SELECT table_id, line FROM lines WHERE committed >= ? "
                          "ORDER BY table_id, seq", (start,)).fetchall()
    else:
        rows = db.execute("SELECT table_id, line FROM lines WHERE table_id = ? AND committed >= ? "
                          "ORDER BY seq", (table, start)).fetchall()
    out: dict[str, list[str]] = {}
    for t, line in rows:
        out.setdefault(t, []).append(line)
    return out


def plain_figures(db: sqlite3.Connection, start: float, end: float, *, table=None, dealer=...) -> dict:
    """Count hands, dealing time, irregularities and corrections from the lines (hands.py)."""
    counts = {}
    for t, lines in _plain_lines(db, table, start, end).items():
        for h in hands_of_lines(t, lines):
            if h.started is None or not start <= h.started < end:
                continue
            if dealer is not ... and h.dealer != dealer:
                continue
            for key in {t, h.dealer}:
                c = counts.setdefault(key, {"hands": 0, "seconds": 0.0, "irregularities": 0, "corrections": 0})
                c["hands"] += 1
                c["seconds"] += h.seconds or 0.0
                c["irregularities"] += len(h.irregularities)
                c["corrections"] += h.corrections
    return counts


def _p99(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[98] if len(samples) > 1 else samples[0]


def run() -> dict:
    scratch = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="dealerbox-bench-", dir=scratch) as d:
        path = Path(d) / "floor.sqlite"
        lines = build_store(path)
        engine = store_engine(path)
        started = time.perf_counter()
        read = F.Ledger().catch_up(engine)
        ledger_s = time.perf_counter() - started
        assert read == lines, (read, lines)
        start, end = T0, T0 + SHIFT_S
        rng = random.Random(7)
        tables = [f"T{n + 1:03d}" for n in range(TABLES)]
        dealers = [f"{1000 + i}" for i in range(DEALERS)]
        samples = []
        with engine.connect() as conn:
            for i in range(QUERIES):
                t = time.perf_counter()
                if i % 2:
                    F.dealer_figures(conn, rng.choice(dealers), start, end)
                else:
                    F.table_figures(conn, rng.choice(tables), start, end)
                samples.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            report = F.room_figures(conn, start, end)
            report_s = time.perf_counter() - t
        engine.dispose()
        plain = []
        with contextlib.closing(sqlite3.connect(path)) as db:
            for i in range(PLAIN_QUERIES * 2):
                t = time.perf_counter()
                if i % 2:
                    plain_figures(db, start, end, dealer=rng.choice(dealers))
                else:
                    plain_figures(db, start, end, table=rng.choice(tables))
                plain.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            everything = plain_figures(db, start, end)
            report_plain_s = time.perf_counter() - t
        # The plain count and the ledger agree on the hands of the shift.
        assert sum(everything[t]["hands"] for t in tables) == report["room"]["hands"]
    figures = {
        "floor_ledger_lines_per_s": round(lines / ledger_s),
        "floor_stats_ms_p99": round(_p99(samples), 2),
        "floor_stats_ms_p99_plain": round(max(plain), 1),
        "floor_report_s": round(report_s, 3),
        "floor_report_s_plain": round(report_plain_s, 2),
    }
    for key, (op, goal, baseline) in GOALS.items():
        baseline = baseline.format(**figures)
        target = f"goal {op} {goal}" if op else ""
        verdict = ("ok" if figures[key] <= goal else "MISSED") if op else ""
        print(f"   {key:28} {figures[key]!s:>10}  {target:12} {'baseline ' + baseline if baseline else '':28} {verdict}")
    return figures


if __name__ == "__main__":
    print(json.dumps(run()))
