"""The protection bench prints every figure of issue 33's "Done when" beside its goal."""

from __future__ import annotations

import random

from bench import bench_protect as B
from dealerbox.floor.protect.simulate import TableSim

#: The issue's "Done when", key by key: the comparison and the goal.
DONE_WHEN = {
    "protect_false_alarms_per_10000_hands_machine": ("<=", 1),
    "protect_false_alarms_per_10000_hands_hand_shuffle": ("<=", 1),
    "protect_no_shuffle_detected_within_hands": ("<=", 3),
    "protect_no_shuffle_detected_pct": (">=", 99),
    "protect_false_riffle_detected_pct": (">=", 95),
    "protect_stacked_seat_detected_pct": (">=", 95),
    "protect_stopped_shuffler_detected_within_hands": ("<=", 5),
    "protect_dealer_3x_detected_within_hands": ("", None),
    "protect_dealer_false_alarms_per_shift": ("<=", 0.01),
    # Issue 38: a real room.
    "protect_false_alarms_per_10000_hands_machine_upper95": ("<=", 1.5),
    "protect_false_alarms_per_10000_hands_hand_shuffle_upper95": ("<=", 1.5),
    "protect_stacked_seat_moving_button_detected_pct": (">=", 95),
    "protect_stacked_seat_moving_button_detected_pct_with_seats": (">=", 95),
    "protect_seat_false_alarms_per_10000_hands_upper95": ("<=", 1),
    "protect_hands_scored_pct": (">=", 97),
    "protect_shuffle_false_alarms_per_10000_hands_players_vary_upper95": ("<=", 1.5),
    "protect_no_shuffle_detected_pct_players_vary": (">=", 99),
    "protect_weak_shuffle_detected_pct": (">=", 95),
    "protect_procedure_false_alarms_per_dealer_shift": ("<=", 0.01),
    "protect_dealer_false_alarms_per_shift_spread": ("<=", 0.01),
    "protect_dealer_jump_detected_within_hands": ("", None),
    "protect_room_s": ("", None),
}
#: What the issue asks to see beside a goal: the 6-player figures, the per-hand figure and
#: k = 8, the stack once in 30.
BESIDE = {
    "protect_no_shuffle_detected_within_hands": "protect_no_shuffle_detected_within_hands_6p",
    "protect_no_shuffle_detected_pct": "protect_no_shuffle_detected_pct_6p",
    "protect_false_riffle_detected_pct": "protect_false_riffle_detected_pct_first_hand",
    "protect_stacked_seat_detected_pct": "protect_stacked_seat_detected_pct_1_in_30",
    "protect_stacked_seat_moving_button_detected_pct_with_seats":
        "protect_stacked_seat_moving_button_detected_pct_1_in_30_two_shifts_with_seats",
    "protect_dealer_false_alarms_per_shift_spread": "protect_dealer_false_alarms_per_shift_spread_upper95",
    "protect_procedure_false_alarms_per_dealer_shift": "protect_procedure_false_alarms_per_dealer_shift_upper95",
    "protect_hands_scored_pct": "protect_hands_scored_pct_6_and_9_only",
}


def test_every_key_of_done_when_has_its_goal():
    assert {k: (op, goal) for k, (op, goal, _beside) in B.GOALS.items()} == DONE_WHEN
    for key, other in BESIDE.items():
        assert other in B.GOALS[key][2]
    assert "protect_false_riffle_detected_pct_k8" in B.GOALS["protect_false_riffle_detected_pct"][2]
    # The dealer's detection and its false alarms print one after the other.
    keys = list(B.GOALS)
    assert keys.index("protect_dealer_false_alarms_per_shift") == keys.index("protect_dealer_3x_detected_within_hands") + 1


def test_at_least_and_at_most_goals_are_both_judged():
    assert B.met(">=", 95, 95.0) is True and B.met(">=", 95, 85.0) is False
    assert B.met("<=", 3, 2) is True and B.met("<=", 3, 4) is False
    assert B.met("<=", 3, None) is False          # a median of runs that mostly saw nothing
    assert B.met("", None, 7) is None


def test_each_goal_prints_with_its_verdict_and_its_figures_beside_it(capsys):
    figures = {"protect_false_riffle_detected_pct": 85.0, "protect_false_riffle_detected_pct_first_hand": 61.5,
               "protect_false_riffle_detected_pct_k8": 40.0, "protect_no_shuffle_detected_pct": 100.0,
               "protect_no_shuffle_detected_pct_6p": 99.5}
    B.show(figures)
    lines = capsys.readouterr().out.splitlines()
    riffle = next(i for i, line in enumerate(lines) if line.split()[0] == "protect_false_riffle_detected_pct")
    assert lines[riffle].split()[1:] == ["85.0", "goal", ">=", "95", "MISSED"]
    assert lines[riffle + 1].split() == ["beside:", "protect_false_riffle_detected_pct_first_hand", "61.5"]
    assert lines[riffle + 2].split() == ["beside:", "protect_false_riffle_detected_pct_k8", "40.0"]
    shuffle = next(i for i, line in enumerate(lines) if line.split()[0] == "protect_no_shuffle_detected_pct")
    assert lines[shuffle].split()[-1] == "ok" and lines[shuffle + 1].split()[-1] == "99.5"


def test_a_rate_s_upper_bound_is_the_exact_poisson_one():
    # 6 alarms in 100,000 fair hands: the mean whose P(X <= 6) is 0.05 is 11.84, 1.18 per 10,000.
    assert round(B.poisson_upper95(6), 2) == 11.84
    assert round(B.poisson_upper95(0), 3) == 2.996          # -ln(0.05)
    assert B._rate(6, 100_000, 10_000) == (0.6, 1.1842)


def test_a_drifting_table_stays_between_2_and_10_players():
    rng = random.Random(1)
    sim = TableSim(B.MACHINE, rng, button=True, occupied=(1, 2))
    counts = set()
    for _ in range(3000):
        B._drift(sim, rng, every=2)
        counts.add(sim.deal().players)
    assert counts == set(range(2, 11))
