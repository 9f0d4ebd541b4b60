"""The dealer's CUSUM: its reference value, its exact run lengths, its alarms."""

import math
import random

import pytest

from dealerbox.errors import UsageError
from dealerbox.floor.protect.control_chart import (Cusum, DealerCharts, OwnBaselineCharts, RoomPrior, arl,
                                                   reference_value, smallest_h)


def test_the_reference_value_of_a_shift_from_10_to_30_percent():
    # ln(0.9/0.7) / ln(0.3 x 0.9 / (0.1 x 0.7)) = ln(9/7) / ln(27/7) = 0.25131 / 1.34993 = 0.18617
    assert reference_value(0.1, 0.3) == pytest.approx(math.log(9 / 7) / math.log(27 / 7))
    assert reference_value(0.1, 0.3) == pytest.approx(0.18617, abs=1e-5)


def test_arl_when_two_errors_in_a_row_raise_the_alarm():
    # k = 1/2, h = 1 (c = 2, h_steps = 2): S goes 0 -> 1/2 on an error, back to 0 on a clean hand,
    # and a second error in a row reaches 1. Waiting time for two successes in a row: (1 + p) / p^2.
    assert arl(0.1, 2, 2) == pytest.approx(1.1 / 0.01)   # 110 hands
    assert arl(0.5, 2, 2) == pytest.approx(1.5 / 0.25)   # 6 hands


def test_arl_of_a_three_state_chain_solved_by_hand():
    # c = 2, h_steps = 3, p = 1/2: L0 = 1 + L1/2 + L0/2, L1 = 1 + L2/2 + L0/2, L2 = 1 + L1/2
    # -> L0 = 2 + L1, L1 = 2.5 + 0.75 L1 -> L1 = 10, L0 = 12.
    assert arl(0.5, 2, 3) == pytest.approx(12.0)


def test_design_picks_the_smallest_h_reaching_the_target():
    chart = Cusum.design(0.1, shift=3.0, target_arl=500)
    assert chart.c == round(1 / 0.18617) == 5 and chart.k == pytest.approx(0.2)
    assert chart.arl(0.1) >= 500 > arl(0.1, chart.c, chart.h_steps - 1)
    assert chart.arl(0.3) < chart.arl(0.1) / 10          # the shift it is built for is seen far sooner
    with pytest.raises(UsageError, match="room rate"):
        Cusum.design(0.5, shift=3.0)


def test_a_dealer_goes_out_of_control_and_the_chart_starts_again():
    charts = DealerCharts(Cusum(p0=0.1, shift=3.0, c=2, h_steps=2))
    assert [charts.feed("E7", x, i) for i, x in enumerate([True, False, True])] == [None, None, None]
    finding = charts.feed("E7", True, 3)
    assert finding.dealer == "E7" and finding.hand_id == 3 and finding.h == 1.0
    assert finding.in_control_arl == pytest.approx(110)
    assert charts.paths["E7"] == [0.5, 0.0, 0.5, 1.0] and charts.values["E7"] == 0
    assert charts.feed("E8", True) is None               # each dealer has a chart of their own


# -- a baseline of the dealer's own

def test_the_room_prior_of_a_mean_and_spread_and_fitted_from_dealers():
    prior = RoomPrior.of(0.02, 0.02 / 12 ** 0.5)
    assert prior.mean == pytest.approx(0.02)
    assert prior.a + prior.b == pytest.approx(0.02 * 0.98 / (0.02 ** 2 / 12) - 1)
    # A new dealer's baseline is the room's; one with 20,000 hands at 1 % is their own.
    assert prior.baseline(0, 0, z=0) == pytest.approx(0.02)
    assert prior.baseline(20_000, 200, z=0) == pytest.approx(0.0103, abs=0.0005)
    rng = random.Random(3)
    dealers = []
    for d in range(40):
        rate = 0.01 + 0.02 * d / 39
        dealers.append((5000, sum(rng.random() < rate for _ in range(5000))))
    fitted = RoomPrior.fit(dealers, default=RoomPrior.of(0.05, 0.01))
    assert fitted.mean == pytest.approx(0.02, abs=0.002)
    assert (fitted.a * fitted.b / (fitted.a + fitted.b) ** 2 / (fitted.a + fitted.b + 1)) ** 0.5 == \
        pytest.approx(0.0058, rel=0.35)
    # Too few dealers, or a room where chance explains every difference: the default.
    default = RoomPrior.of(0.05, 0.01)
    assert RoomPrior.fit(dealers[:4], default=default) is default
    assert RoomPrior.fit([(5000, 100)] * 10, default=default) is default


def _alarms_per_shift(charts_of, rates, shifts, rng):
    alarms = 0
    for d, rate in enumerate(rates):
        charts = charts_of()
        for _ in range(shifts * 240):
            alarms += charts.feed(f"D{d}", rng.random() < rate) is not None
    return alarms / (len(rates) * shifts)


def test_a_room_spread_over_one_to_three_percent_stays_in_budget_where_the_room_s_chart_does_not():
    rates = [0.01 + 0.02 * d / 29 for d in range(30)]
    prior = RoomPrior.of(0.02, 0.02 / 12 ** 0.5)
    own = _alarms_per_shift(lambda: OwnBaselineCharts(prior), rates, 20, random.Random(4))
    room = _alarms_per_shift(lambda: DealerCharts(Cusum.design(0.02, shift=3, target_arl=48_000)), rates, 20,
                             random.Random(4))
    assert own <= 0.01 < room


def test_a_dealer_whose_own_rate_triples_is_found_against_their_own_baseline():
    prior = RoomPrior.of(0.02, 0.02 / 12 ** 0.5)
    rng = random.Random(5)
    found = []
    for _ in range(30):
        charts = OwnBaselineCharts(prior)
        for _ in range(4800):
            charts.feed("X", rng.random() < 0.02)
        charts.dealers["X"][0] = 0
        at = next((n for n in range(1, 3001) if charts.feed("X", rng.random() < 0.06, n) is not None), None)
        found.append(at if at is not None else 10 ** 6)
    found.sort()
    assert found[15] < 480
    finding = OwnBaselineCharts(prior, dealers={"Y": [10 ** 6, 0, 0, 0, 0, 0]}).feed("Y", True, 99)
    assert finding.dealer == "Y" and finding.hand_id == 99 and finding.value >= finding.h


def test_the_design_is_the_smallest_h_by_bisection():
    cusum = Cusum.design(0.02, shift=3, target_arl=48_000)
    assert arl(0.02, cusum.c, cusum.h_steps) >= 48_000 > arl(0.02, cusum.c, cusum.h_steps - 1)
    assert smallest_h(0.02, cusum.c, 48_000) == cusum.h_steps
