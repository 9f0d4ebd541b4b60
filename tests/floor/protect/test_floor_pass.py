"""The protection pass on the floor: journals filed by the collector's Filing, read by the
figures' Ledger with the pass hooked in, alerts and per-hand results out; on SQLite and
PostgreSQL. Probabilities are worked out by hand in each test."""

from __future__ import annotations

import json
import math
import random
import uuid
from fractions import Fraction

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import MetaData, select

from dealerbox.floor.telling.figures import Ledger
from dealerbox.floor.protect.config import ProtectConfig
from dealerbox.floor.protect.control_chart import OwnBaselineCharts, RoomPrior
from dealerbox.floor.protect.figures import dealer_chart, seat_luck, shuffle_quality
from dealerbox.floor.protect.floor_pass import Protection, dealer_charts, save_reference, seat_designs
from dealerbox.floor.protect.shuffle_check import Reference
from dealerbox.floor.protect.shuffles import Gathering, Shuffle
from bench.sim_journal import JournalWriter
from dealerbox.floor.protect.simulate import Stack, TableSim, no_shuffle
from dealerbox.floor.protect.tables import PROTECT, protect_dealers, protect_hands
from dealerbox.floor.store import Store, store_engine
from tests.floor.test_figures import file_lines

T0 = 1_790_000_000.0 - (1_790_000_000.0 % 28800)   # the start of a shift window
MACHINE = Shuffle(("machine",))
#: A hand-made reference: 1000 hands, 900 with no pair kept, 90 with one, 10 with two.
REFERENCE = Reference((900, 90, 10), "hand-made")
#: The gathered cards go on top of the stub: dealt unshuffled, the next hand draws them.
ON_TOP = Gathering(place="top")


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request, tmp_path):
    if request.param == "sqlite":
        return tmp_path / "floor.sqlite"
    return request.getfixturevalue("postgres_cluster").database(f"protect_{uuid.uuid4().hex[:12]}")


def run(target, lines_by_table: dict, config: ProtectConfig, *, slices: int = 1,
        figures=None) -> tuple[list, list]:
    """File the lines (in *slices*), catch up after each; the protection alerts and hand rows
    (and ``figures(conn)`` into the list *figures*, when given)."""
    with Store(target) as store:
        engine = store_engine(store.target)
        with engine.begin() as conn:
            save_reference(conn, 6, 2, REFERENCE, "test", fingerprint=config.fingerprint(6, 2))
        ledger = Ledger(protection=Protection(config, clock=lambda: T0))
        for part in range(slices):
            for table, lines in lines_by_table.items():
                n = len(lines)
                file_lines(store, table, lines[n * part // slices:n * (part + 1) // slices])
            ledger.catch_up(engine)
        alerts = [a for a in store.alerts(open_only=False)
                  if a["kind"] in ("shuffle", "procedure", "seat_luck", "dealer_chart")]
        with engine.connect() as conn:
            rows = [tuple(r) for r in conn.execute(select(protect_hands).order_by(
                protect_hands.c.table_id, protect_hands.c.start_seq))]
            if figures is not None:
                figures.append(shuffle_quality(conn, T0, T0 + 86400))
                figures.append(seat_luck(conn, "T1", T0, T0 + 86400))
                figures.append(dealer_chart(conn, "D1", T0, T0 + 86400))
        engine.dispose()
    return alerts, rows


def journal(sim: TableSim, hands: int, *, errors=()) -> JournalWriter:
    writer = JournalWriter(T0)
    for i in range(hands):
        writer.hand(sim.deal(), irregularity="MISSED_BURN" if i in errors else None)
    return writer


def test_the_protection_tables_are_as_the_models_say(target):
    with Store(target) as store:
        engine = store_engine(store.target)
        models = MetaData()
        for table in PROTECT.tables.values():
            table.to_metadata(models)
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={
                "include_name": lambda name, kind, _p: kind != "table" or name in models.tables})
            found = [d for d in compare_metadata(context, models)
                     if not (engine.dialect.name == "sqlite" and isinstance(d, list)
                             and d[0][0] == "modify_nullable")]
        engine.dispose()
    assert found == []


def test_a_deck_dealt_again_unshuffled_is_a_shuffle_alert_and_a_procedure_finding(target):
    # Unshuffled, the gathered deck is dealt as it lies: far more than two kept pairs.
    # Against the hand-made reference a statistic of 3 or more has p = (1 + 0) / (1 + 1000).
    sim = TableSim(no_shuffle, random.Random(5), players=6, gathering=ON_TOP)
    w = journal(sim, 3)
    config = ProtectConfig(shuffle=MACHINE, threshold=0.01, procedure_block=2, procedure_threshold=0.01,
                           room_rate=None)
    figures = []
    alerts, rows = run(target, {"T1": w.lines}, config, figures=figures)
    kinds = {a["kind"]: a for a in alerts}
    assert set(kinds) == {"shuffle", "procedure"}
    shuffle = kinds["shuffle"]
    assert shuffle["count"] == 2 and shuffle["seq"] == w.hand_seqs[1] and shuffle["last_seq"] == w.hand_seqs[2]
    assert "p = 0.001 " in shuffle["text"] and "resolution 0.001" in shuffle["text"] and "machine" in shuffle["text"]
    # The block of the two scored hands: P(sum >= k1 + k2) under the reference convolved is 0 for a sum above 4.
    assert "p = 0 " in kinds["procedure"]["text"]
    stats = [r[7] for r in rows]
    assert stats[0] is None and all(k >= 3 for k in stats[1:])
    assert [r[8] for r in rows] == [None, 1 / 1001, 1 / 1001]
    # The figures: the reference's mean is (0 x 900 + 1 x 90 + 2 x 10) / 1000 = 0.11 kept pairs.
    # Below p = 0.05 a fair hand lies only at 2 kept pairs ((1 + 10) / 1001 = 0.011; at 1 pair
    # (1 + 100) / 1001 = 0.10): 10 of the 1000 reference hands, a share of 0.01.
    quality, seats, chart = figures
    (table,) = quality["tables"]
    assert table == {"table": "T1", "hands": 3, "scored": 2, "mean_kept": (stats[1] + stats[2]) / 2,
                     "expected_kept": 0.11, "low_p_share": 1.0, "expected_low_p_share": 0.01,
                     "min_p": 1 / 1001}
    assert quality["dealers"][0]["dealer"] == "D1" and [s["seat"] for s in seats] == [1, 2, 3, 4, 5, 6]
    assert all(s["hands"] == 3 and s["expected"] == round(3 * 22 / 1326, 3) for s in seats)
    assert [p["value"] for p in chart["points"]] == [0.0, 0.0, 0.0]   # no room rate: no chart


def test_the_pass_read_in_slices_keeps_its_state_in_the_store(target, tmp_path):
    sim = TableSim(no_shuffle, random.Random(7), players=6, decks=("A", "B"), gathering=ON_TOP)
    w = journal(sim, 6)
    config = ProtectConfig(shuffle=MACHINE, threshold=0.01, room_rate=None)
    once = run(tmp_path / "once.sqlite", {"T1": w.lines}, config)
    sliced = run(target, {"T1": w.lines}, config, slices=3)
    assert [r[:9] for r in sliced[1]] == [r[:9] for r in once[1]]
    # Two decks in turn: each deck's first hand has no history; each later one is compared with its own.
    assert [r[6] for r in once[1]] == ["A", "B"] * 3 and [r[7] is None for r in once[1]] == [True] * 2 + [False] * 4
    assert [a["count"] for a in sliced[0]] == [a["count"] for a in once[0]] == [4]


@pytest.mark.parametrize("recorded", [False, True])
def test_a_physical_seat_fed_aces_is_a_seat_luck_alert_in_the_hand_its_chart_crosses_h(target, recorded):
    # Physical seat 3 of a six-seat table holds AA every hand while the button moves round, so
    # its deal position changes every hand. Recorded (new_hand's seats) or recovered from the
    # rotation, the pass follows the seat: each strong hand lifts its chart by c - 1 steps, so it
    # crosses h in ceil(h_steps / (c - 1)) hands, mid-shift. Filed in two slices: the seats and
    # their charts are kept in the store between them.
    sim = TableSim(MACHINE, random.Random(3), players=6, stack=Stack(3, ("Ah", "As"), 1, physical=True),
                   button=True, table_seats=6, record_seats=recorded)
    w = journal(sim, 11)
    config = ProtectConfig(shuffle=MACHINE, room_rate=None)
    chart = seat_designs(config)[2]
    crosses = math.ceil(chart.h_steps / (chart.c - 1))
    assert crosses == 9 and chart.p0 == float(Fraction(22, 1326))
    alerts, rows = run(target, {"T1": w.lines}, config, slices=2)
    (seat,) = [a for a in alerts if a["kind"] == "seat_luck"]
    assert seat["seq"] == w.hand_seqs[crosses - 1] and seat["count"] == 1
    # Recovered, the seat is named by its place in the run's first hand: the button on seat 1, the
    # deal starts at seat 2, so seat 3 is dealt 2nd.
    name = "seat 3" if recorded else f"the seat dealt 2nd at hand {w.hand_seqs[0]}, followed round as the button moved"
    assert seat["text"].startswith(f"seat luck: {name}: {crosses} strong starting hands in {crosses} hands since")
    assert f"h {chart.h:.2f}" in seat["text"] and "tuned for a seat fed one once in 15 hands" in seat["text"]
    # The page's per-seat rows: the physical seats when recorded, the deal positions when not.
    strong_seats = [json.loads(r[12]) for r in rows]
    assert all(s == [3] for s in strong_seats) if recorded else len({tuple(s) for s in strong_seats}) > 1


def test_a_table_that_closes_and_opens_again_follows_its_seats_from_the_new_run(target):
    # Physical seat 3 holds AA every hand, no seats recorded. The table deals 4 hands, closes for
    # the night (10 hours) and opens with six players again: the seats are recovered afresh from
    # the first hand after the pause, so the seat's chart crosses h at the 9th hand of the new
    # run (none of the evening's hands counted) and the alert names the new run's first hand.
    sim = TableSim(MACHINE, random.Random(3), players=6, stack=Stack(3, ("Ah", "As"), 1, physical=True),
                   button=True, table_seats=6)
    w = JournalWriter(T0)
    dealt_at_reopening = None
    for i in range(13):
        w.hand_s = 10 * 3600 if i == 3 else 120
        w.hand(sim.deal())
        if i == 4:
            dealt_at_reopening = sim.seats_dealt.index(3) + 1
    config = ProtectConfig(shuffle=MACHINE, room_rate=None)
    alerts, _rows = run(target, {"T1": w.lines}, config)
    (seat,) = [a for a in alerts if a["kind"] == "seat_luck"]
    assert seat["seq"] == w.hand_seqs[4 + 8]
    assert seat["text"].startswith(
        f"seat luck: the seat dealt {['1st', '2nd', '3rd', '4th', '5th', '6th'][dealt_at_reopening - 1]} at hand "
        f"{w.hand_seqs[4]}, followed round as the button moved: 9 strong starting hands in 9 hands since")


def test_fair_seats_raise_no_seat_luck_alert(target):
    # 300 fair hands with the button moving: no seat's chart reaches h (one false alarm a year
    # for the whole room is the design).
    sim = TableSim(MACHINE, random.Random(8), players=9, button=True)
    alerts, _rows = run(target, {"T1": journal(sim, 300).lines}, ProtectConfig(shuffle=MACHINE, room_rate=None))
    assert [a for a in alerts if a["kind"] == "seat_luck"] == []


def test_a_dealer_erring_every_hand_crosses_the_chart_at_the_hand_the_arithmetic_says(target):
    # A dealer with no hands yet is judged against the room's baseline (the dealers' rates spread
    # around 2 %: the prior's mean plus half its spread, on a 1 % grid, above 2 %). Each error adds
    # c - 1 lattice steps; the chart crosses h_steps after ceil(h_steps / (c - 1)) errors.
    config = ProtectConfig()
    cusum = OwnBaselineCharts(RoomPrior.of(0.02, config.room_spread), target_arl=config.chart_arl).design("E7")
    assert 0.02 < cusum.p0 < 0.025 and cusum.shift == 3
    hands = math.ceil(cusum.h_steps / (cusum.c - 1))
    sim = TableSim(MACHINE, random.Random(11), players=6, dealer="E7")
    w = journal(sim, hands + 1, errors=range(hands + 1))
    alerts, rows = run(target, {"T1": w.lines}, ProtectConfig(shuffle=MACHINE, room_rate=0.02))
    (chart,) = [a for a in alerts if a["kind"] == "dealer_chart"]
    assert chart["seq"] == w.hand_seqs[hands - 1] and chart["count"] == 1
    assert chart["text"].startswith(f"dealer chart: dealer E7 out of control at the hand of seq {w.hand_seqs[hands - 1]}")
    assert [r[10] for r in rows][:hands - 1] == [j * (cusum.c - 1) / cusum.c for j in range(1, hands)]


def test_each_dealer_keeps_a_baseline_of_their_own_across_catch_ups(target):
    # 250 hands by one dealer, an error every 25th (10 in all, 4 %), filed in three slices: the
    # chart's row in the store counts them, and after the dealer's 240th hand the baseline is
    # refreshed from those 240 hands (their 10 errors: hands 0, 25, ..., 225).
    sim = TableSim(MACHINE, random.Random(4), players=6, dealer="D9")
    w = journal(sim, 250, errors=range(0, 250, 25))
    run(target, {"T1": w.lines}, ProtectConfig(shuffle=MACHINE, room_rate=0.02), slices=3)
    engine = store_engine(target)
    with engine.connect() as conn:
        (own,) = conn.execute(select(protect_dealers.c.own).where(protect_dealers.c.dealer == "D9")).scalars()
        charts = dealer_charts(conn, ProtectConfig(room_rate=0.02), 0.02)
    engine.dispose()
    steps, hands, errors, base_hands, base_errors, since = json.loads(own)
    assert (hands, errors, base_hands, base_errors, since) == (250, 10, 240, 10, 10)
    # The dealer's chart is now in control at a baseline above the room's: their own 4 % pulls it up.
    assert charts.design("D9").p0 > charts.design("a new dealer").p0 > 0.02


def test_garbage_stored_as_a_line_does_not_stop_the_pass(tmp_path):
    path = tmp_path / "floor.sqlite"
    sim = TableSim(no_shuffle, random.Random(5), players=6, gathering=ON_TOP)
    w = journal(sim, 3)
    garbage_at = w.hand_seqs[1] - 1   # between the first and the second hand
    with Store(path) as store:
        file_lines(store, "T1", w.lines[:garbage_at - 1])
        with store.lock:
            store.begin()
            for seq, line in enumerate(w.lines[garbage_at - 1:], garbage_at):
                store.add_line("T1", seq, "{this is no journal line" if seq == garbage_at else line, "0" * 64,
                               False, T0)
            store.update_table("T1", last_seq=len(w.lines))
            store.commit()
        engine = store_engine(path)
        config = ProtectConfig(shuffle=MACHINE, threshold=0.01, room_rate=None)
        with engine.begin() as conn:
            save_reference(conn, 6, 2, REFERENCE, "test", fingerprint=config.fingerprint(6, 2))
        Ledger(protection=Protection(config)).catch_up(engine)
        with engine.connect() as conn:
            rows = conn.execute(select(protect_hands.c.start_seq, protect_hands.c.p_value)).all()
        engine.dispose()
        alerts = store.alerts()
    (alert,) = [a for a in alerts if a["kind"] == "shuffle"]
    assert [r[0] for r in rows] == w.hand_seqs and alert["count"] == 2
