"""Seat luck: exact probabilities of strong starting hands and the binomial tail, corrected."""

import random
from fractions import Fraction

import pytest

from dealerbox.errors import UsageError
from dealerbox.floor.protect.config import PREMIUM
from dealerbox.floor.protect.control_chart import arl
from dealerbox.floor.protect.hand import DealtHand
from dealerbox.floor.protect.seat_luck import (Room, SeatCharts, SeatLuck, binomial_tail, holdem_class,
                                               holdem_probability, is_strong, omaha_probability, seat_chart,
                                               strong_probability)
from dealerbox.floor.protect.seats import SeatTracker
from dealerbox.floor.protect.shuffles import Shuffle
from dealerbox.floor.protect.simulate import Stack, TableSim

PAIRS = {r * 2 for r in "23456789TJQKA"}


def test_holdem_classes_and_their_combinations():
    assert holdem_class("Kd", "Ah") == "AKo" and holdem_class("Ah", "Kh") == "AKs"
    assert holdem_class("7c", "7s") == "77"
    # Any pocket pair: 13 ranks x C(4,2) = 78 of C(52,2) = 1326, one hand in 17.
    assert holdem_probability(PAIRS) == Fraction(78, 1326) == Fraction(1, 17)
    # The default strong hands: TT..AA 5 x 6 = 30, AKs 4, AKo 12: 46 of 1326.
    assert strong_probability(2) == Fraction(46, 1326)


def test_omaha_strong_hands_counted_by_hand():
    # Two or more aces in four cards: C(4,2)C(48,2) + C(4,3)C(48,1) + C(4,4)
    # = 6 x 1128 + 4 x 48 + 1 = 6961 of C(52,4) = 270725.
    assert omaha_probability("A") == Fraction(6961, 270725)
    # Two aces or two kings: 6961 + 6961 - (both: C(4,2) x C(4,2) = 36) = 13886.
    assert omaha_probability("AK") == Fraction(2 * 6961 - 36, 270725) == strong_probability(4)
    assert is_strong(("Ah", "Ad", "7c", "2s")) and not is_strong(("Ah", "Kd", "7c", "2s"))


def test_the_binomial_upper_tail():
    # At least 2 pairs in 3 hands, p = 1/17: 3 p^2 (1-p) + p^3 = (3 x 16 + 1) / 17^3 = 49/4913.
    assert binomial_tail(2, 3, 1 / 17) == pytest.approx(49 / 4913)
    assert binomial_tail(0, 3, 0.2) == 1.0 and binomial_tail(4, 3, 0.2) == 0.0


def hand(i, seat1, seat2):
    # Two players: seat 1 gets draw[0], draw[2]; seat 2 draw[1], draw[3].
    return DealtHand("A", (seat1[0], seat2[0], seat1[1], seat2[1]), players=2, hand_id=i, table="T1")


def test_a_seat_over_a_window_with_bonferroni_over_seats_tables_windows():
    hands = [hand(1, ("Ah", "Ad"), ("7c", "2s")), hand(2, ("Kh", "Kd"), ("8c", "3s")),
             hand(3, ("9h", "4d"), ("8d", "3h"))]
    luck = SeatLuck(alpha=0.05, seats=2, tables=3, windows=1)   # a family of 2 x 3 x 1 = 6 tests
    seat1, seat2 = luck.window(hands, "shift 1")
    p = 46 / 1326
    tail = 3 * p ** 2 * (1 - p) + p ** 3                        # 2 strong hands or more in 3
    assert (seat1.seat, seat1.hands, seat1.strong, seat1.strong_hand_ids) == (1, 3, 2, (1, 2))
    assert seat1.p_value == pytest.approx(tail)                 # about 0.0035
    assert seat1.family == 6 and seat1.correction == "Bonferroni"
    assert seat1.corrected == pytest.approx(6 * tail) and seat1.alert   # 0.021 < 0.05
    assert seat2.strong == 0 and seat2.p_value == 1.0 and not seat2.alert
    assert seat1.expected == pytest.approx(3 * p)


def test_a_window_holds_one_game():
    omaha = DealtHand("A", ("Ah", "Kd", "Ac", "Ks", "Ad", "Kh", "As", "Kc"), players=2, hole_cards=4)
    with pytest.raises(UsageError, match="one game"):
        SeatLuck().window([hand(1, ("Ah", "Ad"), ("7c", "2s")), omaha])


# -- the sequential test per seat

def _fed_seat_found(every, hands, *, record_seats, seed, chart):
    sim = TableSim(Shuffle.parse("machine"), random.Random(seed), button=True, occupied=tuple(range(1, 10)),
                   record_seats=record_seats, stack=Stack(4, ("Ah", "As"), every, physical=True, others=(("Kh", "Ks"),)))
    tracker, charts = SeatTracker(), SeatCharts({2: chart})
    for _ in range(hands):
        dealt = sim.deal()
        keys = tracker.keys(dealt)
        for alarm in charts.hand(dealt.table, 2, dealt.hand_id, keys, [is_strong(c, PREMIUM) for c in dealt.holes()]):
            seat = sim.seats_dealt[keys.index(alarm.seat)]
            return seat, alarm
    return None, None


def test_a_seat_fed_aa_or_kk_once_in_ten_is_found_within_a_shift_as_the_button_moves():
    chart = seat_chart(float(strong_probability(2, PREMIUM)), feed_every=15)
    for record_seats in (False, True):
        found = [_fed_seat_found(10, 240, record_seats=record_seats, seed=s, chart=chart) for s in range(20)]
        assert sum(1 for seat, _ in found if seat == 4) >= 17
        assert all(seat in (None, 4) for seat, _ in found)
    seat, alarm = _fed_seat_found(10, 240, record_seats=True, seed=1, chart=chart)
    # The evidence: the seat's strong hands since its chart stood at 0, far above what a fair seat gets.
    assert alarm.seat.recorded and len(alarm.strong_hand_ids) > 3 * alarm.expected


def test_the_seat_chart_s_budget_is_the_room_s_seat_hands_in_a_year_over_the_alarms_accepted():
    p0 = float(strong_probability(2, PREMIUM))
    room = Room(tables=4, players=6, hands_per_hour=25, hours_per_year=12 * 365)
    chart = seat_chart(p0, feed_every=15, alarms_per_year=0.5, room=room)
    assert chart.arl(p0) >= room.seat_hands_per_year / 0.5
    # The smallest such h: one step lower misses the budget.
    assert arl(p0, chart.c, chart.h_steps - 1) < room.seat_hands_per_year / 0.5
    assert chart.arl(0.1 + 0.9 * p0) < 240


def test_fair_seats_raise_no_seat_alarm_and_a_run_s_seats_are_dropped_when_it_ends():
    rng = random.Random(7)
    sim = TableSim(Shuffle.parse("machine"), rng, button=True, occupied=(1, 2, 3, 4, 5, 6))
    tracker, charts = SeatTracker(), SeatCharts({2: seat_chart(float(strong_probability(2, PREMIUM)))})
    alarms = []
    for n in range(3000):
        if n % 500 == 499:
            sim.seat(rng.sample(range(1, 11), rng.randint(2, 10)))
        dealt = sim.deal()
        alarms += charts.hand(dealt.table, 2, dealt.hand_id, tracker.keys(dealt),
                              [is_strong(c, PREMIUM) for c in dealt.holes()])
    assert alarms == []
    assert {key.run for _, _, key in charts.state} == {tracker.runs["T1"][0]}
    # A game with no design is not charted.
    assert charts.hand("T1", 4, 1, tracker.keys(dealt), [True] * dealt.players) == []
