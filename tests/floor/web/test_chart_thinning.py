"""A line over many hands is drawn from at most about ``2 * runs`` points (issue 47: pygal's cost
is per point, and a shift's 30 dealers' charts took most of the Surveillance page's time), and
still shows every peak and every fall back where it was: of each run of hands the lowest and
the highest value, in their order. The hands with an error are marked the same way: each of
them on a short chart, one mark for each run of hands holding one on a long chart."""

from __future__ import annotations

import random

from dealerbox.floor.protect.control_chart import Cusum
from dealerbox.floor.web.charts import LINE_RUNS, marks_thinned, thinned
from dealerbox.floor.web.protect_pages import cusum_chart


def test_a_short_line_is_drawn_whole():
    values = [0.5 * i for i in range(2 * LINE_RUNS)]
    assert thinned(values) == [(i + 1, v) for i, v in enumerate(values)]


def test_a_long_line_keeps_each_runs_peak_and_low_in_order():
    rng = random.Random(47)
    values, value = [], 0.0
    for _ in range(20_000):
        # A CUSUM: up on an error, down a little otherwise, back to 0 at the limit.
        value = max(0.0, value + (2.0 if rng.random() < 0.03 else -0.05))
        value = 0.0 if value >= 9.0 else value
        values.append(value)
    points = thinned(values, runs=50)
    assert len(points) <= 100
    xs = [x for x, _v in points]
    assert xs == sorted(set(xs)) and all(values[x - 1] == v for x, v in points)
    assert max(v for _x, v in points) == max(values) and min(v for _x, v in points) == min(values)
    size = -(-len(values) // 50)
    for start in range(0, len(values), size):
        run = values[start:start + size]
        mine = [v for x, v in points if start < x <= start + size]
        assert max(mine) == max(run) and min(mine) == min(run)


def _cusum_hands(n: int, rate: float, seed: int = 47) -> tuple[list[float], list[bool]]:
    rng = random.Random(seed)
    values, errors, value = [], [], 0.0
    for _ in range(n):
        error = rng.random() < rate
        value = max(0.0, value + (2.0 if error else -0.05))
        value = 0.0 if value >= 9.0 else value
        values.append(value)
        errors.append(error)
    return values, errors


def test_a_short_charts_errors_are_each_marked():
    values, errors = _cusum_hands(2 * LINE_RUNS, 0.1)
    marks, per = marks_thinned(values, errors)
    assert per == 1 and marks == [(i + 1, values[i]) for i in range(len(values)) if errors[i]]


def test_a_long_charts_errors_are_a_mark_for_each_run_holding_one():
    values, errors = _cusum_hands(5_000, 0.08)
    marks, per = marks_thinned(values, errors, runs=50)
    assert per == 100 and len(marks) <= 50
    for start in range(0, len(values), per):
        hits = [i for i in range(start, start + per) if errors[i]]
        mine = [(x, v) for x, v in marks if start < x <= start + per]
        # A run with an error has exactly one mark, on its highest error; one without has none.
        assert len(mine) == (1 if hits else 0)
        if hits:
            assert mine[0][1] == max(values[i] for i in hits) and errors[mine[0][0] - 1]


def test_a_long_dealer_chart_says_what_its_marks_stand_for():
    values, errors = _cusum_hands(3_000, 0.08)
    points = [{"table": "T1", "start_seq": i, "started": float(i), "error": e, "value": v}
              for i, (v, e) in enumerate(zip(values, errors))]
    svg = cusum_chart({"dealer": "E7", "points": points}, Cusum.design(0.04, shift=2.0, target_arl=500.0), "N", who="dealer E7")
    per = -(-len(values) // LINE_RUNS)
    assert f"hands with an error (a mark for each run of {per} hands with one)" in svg
    assert "a hand with an error" not in svg
