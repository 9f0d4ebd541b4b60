"""A line over many hands is drawn from at most about ``2 * runs`` points (issue 47: pygal's cost
is per point, and a shift's 30 dealers' charts took most of the Surveillance page's time), and
still shows every peak and every fall back where it was: of each run of hands the lowest and
the highest value, in their order."""

from __future__ import annotations

import random

from dealerbox.floor.web.charts import LINE_RUNS, thinned


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
