"""The shuffle check: kept pairs, their reference under the declared shuffle, p-values, findings."""

import itertools
import math
import random

import pytest

from dealerbox.errors import UsageError
from dealerbox.floor.protect.hand import DealtHand, together_pairs
from dealerbox.floor.protect.shuffle_check import (ProcedureCheck, Reference, ShuffleCheck, ShuffleFinding,
                                                   convolve, kept_pairs, machine_pair_adjacent)
from dealerbox.floor.protect.shuffles import Gathering, Shuffle
from dealerbox.floor.protect.simulate import TableSim, no_shuffle

LAST = DealtHand("A", ("Ah", "Kd", "Ac", "Ks", "2c", "3c", "4c", "5c", "2d", "6c", "2h", "7c"), players=2)


def test_kept_pairs_counts_neighbours_that_lay_together_in_either_order():
    # Neighbours of the new draw: (Ac,Ah) a seat's pair, (4c,3c) board neighbours reversed,
    # (2d,2h) burn neighbours: 3. (Ah,9s), (9s,4c), (3c,Kd), (Kd,8s), (8s,Ks), (Ks,2d) lay apart.
    new = DealtHand("A", ("Ac", "Ah", "9s", "4c", "3c", "Kd", "8s", "Ks", "2d", "2h"), players=2)
    assert kept_pairs(together_pairs(LAST), new) == 3


def test_a_pair_lies_side_by_side_in_the_first_m_of_n_machine_shuffled_cards_with_2_m_minus_1_in_n_n_minus_1():
    # 52 cards, 26 drawn: 2 x 25 ordered places of 52 x 51: 50/2652.
    assert machine_pair_adjacent(26) == pytest.approx(50 / 2652)
    # 4 cards, 3 drawn: 2 x 2 / (4 x 3) = 1/3 of the 24 orders, 8 of them; counted one by one:
    side_by_side = sum(1 for order in itertools.permutations(range(4))
                       if abs(order.index(0) - order.index(1)) == 1 and max(order.index(0), order.index(1)) < 3)
    assert side_by_side == 8 and machine_pair_adjacent(3, 4) == pytest.approx(8 / 24)


def test_the_monte_carlo_p_value_and_its_resolution():
    # 10 reference hands: 5 scored 0, 3 scored 1, 2 scored 2. P(K >= k) = (1 + #{>= k}) / 11.
    ref = Reference((5, 3, 2), "worked example")
    assert ref.n == 10 and ref.resolution == pytest.approx(1 / 11)
    assert ref.p_value(0) == pytest.approx(11 / 11)
    assert ref.p_value(1) == pytest.approx(6 / 11)
    assert ref.p_value(2) == pytest.approx(3 / 11)
    assert ref.p_value(3) == pytest.approx(1 / 11)     # beyond every reference hand: the resolution, never 0
    assert ref.critical(0.3) == 2                       # 3/11 = 0.27 < 0.3, 6/11 is not
    assert ref.critical(0.05) is None                   # below the resolution: never reached
    assert Reference.of_values([0, 2, 0, 1], "x").counts == (2, 1, 1)


def test_the_block_sum_is_the_reference_convolved():
    # Two hands each scoring 0 or 1 with probability 1/2: the sum is 0, 1, 2 with 1/4, 1/2, 1/4.
    assert convolve([0.5, 0.5], [0.5, 0.5]) == pytest.approx([0.25, 0.5, 0.25])
    check = ShuffleCheck(Shuffle.parse("riffle riffle riffle"), references={(2, 2): Reference((1, 1), "w")})
    proc = ProcedureCheck(check, block=2, threshold=0.3)
    one = ShuffleFinding("shuffle", "T1", "A", "D1", (7,), 1, 0.5, 1 / 3, 1e-5, "m", "w")
    assert proc.feed(one, 2, 2) is None
    finding = proc.feed(one, 2, 2)
    # Observed sum 2: P(sum >= 2) = 1/4 < 0.3: a procedure finding, apart from cheat alerts.
    assert finding.kind == "procedure" and finding.statistic == 2
    assert finding.p_value == pytest.approx(0.25) and finding.alert and finding.hand_ids == (7, 7)


def test_max_over_the_decks_last_hands():
    check = ShuffleCheck(Shuffle.parse("machine"), memory=2)
    older = DealtHand("A", ("9h", "8d", "9c", "8s", "Qc", "Jc", "Tc", "3h", "Qd", "4h", "Qh", "5h"), players=2)
    assert check.statistic(older) is None   # the deck's first hand
    assert check.statistic(LAST) == 0
    # Against LAST: (Ac, Ah) 1. Against older: (9c, 9h), (Jc, Tc) 2. The larger: 2.
    new = DealtHand("A", ("Ac", "Ah", "9c", "9h", "Jc", "Tc", "8h", "7h"), players=2)
    assert check.statistic(new) == 2


def small_check(shuffle="machine", hands=2000, seed=7, threshold=1e-3):
    check = ShuffleCheck(Shuffle.parse(shuffle), threshold=threshold)
    check.calibrate(9, 2, random.Random(seed), hands)
    return check


def test_an_unshuffled_deck_gathered_on_top_is_an_alert_at_the_references_resolution():
    check = small_check()
    sim = TableSim(no_shuffle, random.Random(1), gathering=Gathering(place="top"))
    assert check.check(sim.deal()) is None          # the deck's first hand: nothing to compare with
    finding = check.check(sim.deal())
    # All 26 cards of the last hand come back in gathered order: 9 seats + 4 board + 2 burn neighbours.
    assert finding.statistic == 15
    assert finding.p_value == pytest.approx(1 / 2001) == finding.resolution
    assert finding.alert and finding.kind == "shuffle" and "machine" in finding.model


def test_fair_machine_hands_rarely_alert():
    check = small_check()
    sim = TableSim(Shuffle.parse("machine"), random.Random(2))
    findings = [check.check(sim.deal()) for _ in range(300)][1:]
    assert sum(f.alert for f in findings) <= 1


def test_two_decks_in_turn_are_each_compared_with_their_own_last_hand():
    check = small_check(hands=200)
    sim = TableSim(no_shuffle, random.Random(3), gathering=Gathering(place="top"), decks=("A", "B"))
    first_a, first_b, second_a = (check.check(sim.deal()) for _ in range(3))
    assert first_a is None and first_b is None
    assert second_a.deck == "A" and second_a.statistic == 15


def test_fit_takes_the_houses_own_hands_as_the_reference():
    check = ShuffleCheck(Shuffle.parse("riffle riffle strip riffle cut"))
    sim = TableSim(check.shuffle, random.Random(4))
    fitted = check.fit([sim.deal() for _ in range(101)])
    ref = fitted.references[(9, 2)]
    assert ref.n == 100 and "100 recorded house hands" in ref.source   # the deck's first hand is not scored
    assert fitted.threshold == check.threshold and not check.references


def test_a_hand_without_a_reference_says_so():
    check = ShuffleCheck(Shuffle.parse("machine"))
    check.check(LAST)
    with pytest.raises(UsageError, match="calibrate or fit"):
        check.check(LAST)
    assert math.isfinite(check.threshold)
