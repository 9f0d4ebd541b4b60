"""The dealer's CUSUM: its reference value, its exact run lengths, its alarms."""

import math

import pytest

from dealerbox.errors import UsageError
from dealerbox.floor.protect.control_chart import Cusum, DealerCharts, arl, reference_value


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
