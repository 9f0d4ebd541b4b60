"""Green is never wrong: hands on a physical table, the LED judged by the cards (issue 46).

The physical table of :mod:`bench.physical_audit` deals seeded tables of hands (both
profiles, hold'em and Omaha, 2-10 players, with and without a mouth sensor, the button moving,
most hands ending before the river), a quarter with no mistake, the rest with one mistake of
RULES.md answered rightly, wrongly or not at all. ``rules_green_wrong_per_10000_hands`` (goal 0,
with its exact Poisson 95 % upper bound): hands with a ROUND DONE where the LED was green and the
board was not what the street requires. Beside it: the same rate among the hands whose dealer did
what the box said (the baseline of the run), and the other checks' hands per 10,000 (a mistake with
no ruling in its street, a wrong answer unruled, a false alarm on a clean hand, the engine raising).
"""

from __future__ import annotations

import time

from bench import show_goals
from bench.bench_protect import poisson_upper95
from bench.physical_audit import run_hands

HANDS = 20_000
SEED = 4646
GOALS = {
    "rules_green_wrong_per_10000_hands": ("<=", 0, "{rules_green_wrong_per_10000_hands_right} with right answers"),
    "rules_green_wrong_per_10000_hands_upper95": ("", None, ""),
    "rules_missed_per_10000_hands": ("<=", 0, ""),
    "rules_unruled_per_10000_hands": ("<=", 0, ""),
    "rules_false_alarms_per_10000_hands": ("<=", 0, ""),
    "rules_physical_hands": ("", None, ""),
}


def _per_10000(k: int, n: int) -> float:
    return round(k * 10_000 / n, 2) if n else 0.0


def run() -> dict:
    t0 = time.process_time()
    report = run_hands(HANDS, seed=SEED)
    print(report.summary())
    n = report.hands
    wrong = report.hands_with["green_wrong"]
    right = report.hands_by_response["right"]
    figures = {
        "rules_physical_hands": n,
        "rules_physical_clean_hands": report.clean_hands,
        "rules_physical_mistakes": dict(sorted(report.mistakes.items())),
        "rules_physical_wrong_answers": dict(sorted(report.wrong_answers.items())),
        "rules_physical_green_round_dones": report.green_checks,
        "rules_green_wrong_per_10000_hands": _per_10000(wrong, n),
        "rules_green_wrong_per_10000_hands_upper95": round(poisson_upper95(wrong) * 10_000 / n, 2),
        "rules_green_wrong_per_10000_hands_right": _per_10000(report.green_wrong_by_response["right"], right),
        "rules_missed_per_10000_hands": _per_10000(report.hands_with["missed"], n),
        "rules_unruled_per_10000_hands": _per_10000(report.hands_with["unruled"], n),
        "rules_false_alarms_per_10000_hands": _per_10000(report.hands_with["false_alarm"], n),
        "rules_engine_raised_hands": report.hands_with["raised"],
        "rules_physical_families": {fam: count for fam, (count, _) in sorted(report.findings.items())},
        "rules_physical_cpu_s": round(time.process_time() - t0, 1),
    }
    show_goals(GOALS, figures)
    return figures


if __name__ == "__main__":
    for k, v in run().items():
        print(f"{k}: {v}")
