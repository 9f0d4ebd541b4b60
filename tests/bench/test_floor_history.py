"""The year-size bench (bench/floor_history.py) at a tiny size: its stores hold the same room
day after day, and it times every read it names on both backends and prints each beside its
goal. No figure is held to its goal here (the bench's business, at full size)."""

from __future__ import annotations

import collections
import subprocess
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from bench import floor_history as H
from bench import mosquitto_missing
from dealerbox.floor.operating.pgcluster import unavailable_reason
from dealerbox.floor.store import store_engine
from dealerbox.floor.store.schema import alerts_table, audit_table, lines_table, reg_hands_table, reg_steps_table
from dealerbox.floor.telling.figures import fig_hands

ROOT = Path(__file__).resolve().parents[2]
TINY = H.Room(tables=3, lines_per_table_day=500, dealers=6, small_days=1, large_days=2, reference_hands=200,
              repeats=1, read_budget_s=0)


def _per_day(conn, column, end: float) -> collections.Counter:
    first = H.last_day_start(end)
    return collections.Counter(int((at - first) // H.DAY_S) for (at,) in conn.execute(select(column)))


def test_each_day_of_a_store_is_the_same_room(tmp_path):
    """A larger store holds more days, not other days: each day its decks received, registered,
    issued, retired (and destroyed the next day), its hands, alerts and clears alike."""
    end = (time.time() // 3600) * 3600 - 3600
    path = tmp_path / "floor.sqlite"
    room = H.Room(tables=2, lines_per_table_day=13_000, dealers=6, reference_hands=200)   # past a shift's end
    lines = H.fill(path, room, 2, end)
    engine = store_engine(path)
    try:
        with engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(lines_table)).scalar() == lines
            assert 0.99 <= lines / (2 * room.tables * room.lines_per_table_day) <= 1.01
            steps = collections.Counter(conn.execute(select(reg_steps_table.c.step)).scalars())
            # Each day each table's deck: received, registered, checked, issued, in play, retired; the
            # one before destroyed; the registry applied; the dealers' badges once, the first day.
            assert steps == {"received": 4, "registered": 4, "checked": 4, "issued": 4, "in_play": 4,
                             "retired": 4, "destroyed": 2, "applied": 4, "badge_registered": room.dealers}
            # Every line is older than now, the newest day's play is over before the store's end.
            assert conn.execute(select(func.max(lines_table.c.committed))).scalar() < end
            hands = _per_day(conn, fig_hands.c.started, end - H.DAY_S)
            assert sorted(hands) == [0, 1] and max(hands.values()) <= 1.2 * min(hands.values())
            deck_hands = _per_day(conn, reg_hands_table.c.started, end - H.DAY_S)
            assert deck_hands == hands          # every hand dealt from the day's registered deck
            raised = _per_day(conn, alerts_table.c.raised, end - H.DAY_S)
            assert sorted(raised) == [0, 1]
            assert conn.execute(select(func.count()).select_from(audit_table)
                                .where(audit_table.c.action == "clear")).scalar() > 0
            dealers = set(conn.execute(select(fig_hands.c.dealer).distinct()).scalars())
            day_shift = {f"{1000 + i}" for i in range(room.dealers // 2)}
            assert dealers & day_shift and (dealers - {None}) - day_shift   # both shifts' dealers took turns
    finally:
        engine.dispose()


def test_the_bench_times_every_read_at_both_sizes_on_both_backends(capsys):
    if mosquitto_missing():
        pytest.skip(mosquitto_missing())
    backends = ("sqlite",) if unavailable_reason() else ("sqlite", "postgresql")
    figures = H.run(backends, TINY)
    printed = capsys.readouterr().out
    for backend in backends:
        key = f"floor_history_{backend}"
        # PostgreSQL's stores are the SQLite ones, copied: the same rows on both backends.
        assert figures[f"{key}_lines"] == figures["floor_history_sqlite_lines"]
        assert figures[f"{key}_lines"] >= 1.9 * figures[f"{key}_lines_small"]
        for read in H.READS:
            assert figures[f"{key}_{read}_ms_small"] > 0 and figures[f"{key}_{read}_ms"] > 0
            assert figures[f"{key}_{read}_ratio"] == round(figures[f"{key}_{read}_ms"]
                                                            / figures[f"{key}_{read}_ms_small"], 2)
            # Each ratio beside its goal, and /metrics' time at the larger size beside its own.
            assert f"{key}_{read}_ratio" in printed
        # Each page a person reads, in English and in Czech, the ratio beside its goal.
        for page in H.PAGES:
            assert figures[f"{key}_{page}_en_ms"] > 0 and figures[f"{key}_{page}_cs_ms"] > 0
            assert figures[f"{key}_{page}_cs_ratio"] == round(figures[f"{key}_{page}_cs_ms"]
                                                               / figures[f"{key}_{page}_en_ms"], 2)
            assert f"{key}_{page}_cs_ratio" in printed
            # The goal is the server's CPU time for the page: its words, whatever else the machine
            # runs. Linux counts it in 10 ms ticks: a tiny room's page may have counted none.
            english, czech = figures[f"{key}_{page}_en_cpu_ms"], figures[f"{key}_{page}_cs_cpu_ms"]
            assert english >= 0 and czech >= 0
            assert figures[f"{key}_{page}_cs_cpu_ratio"] == (round(czech / english, 2) if english else None)
            assert f"{key}_{page}_cs_cpu_ratio" in printed
    assert "goal <= 1.5" in printed and "goal <= 100" in printed and f"goal <= {H.LANGUAGE_RATIO_GOAL}" in printed


def test_make_has_a_target_of_its_own():
    out = subprocess.run(["make", "-n", "bench-history"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         check=True).stdout
    assert "-m bench.floor_history" in out
