"""Benchmarks behind ``make bench``. Each ``bench_<area>.py`` exposes ``run() -> dict``."""

from __future__ import annotations

import os
import shutil


def mosquitto_missing() -> str | None:
    """Why a floor benchmark cannot start its broker, or None when it can."""
    if shutil.which("mosquitto") or os.path.exists("/usr/sbin/mosquitto"):
        return None
    return "mosquitto is not installed (Debian package: mosquitto)"


def show_goals(goals: dict, figures: dict) -> None:
    """Print each figure of *goals* (``key: (comparison, goal, baseline)``, the comparison
    ``"=="``, ``"<="``, ``">="`` or ``""`` for none, the baseline a format string over *figures*)
    beside its goal and the baseline measured in the same run."""
    for key, (op, goal, baseline) in goals.items():
        if key not in figures:
            continue
        value = figures[key]
        baseline = baseline.format(**figures)
        met = (value == goal if op == "==" else None if op not in ("<=", ">=") or value is None
               else value <= goal if op == "<=" else value >= goal)
        print(f"   {key:28} {value!s:>12}  {f'goal {op} {goal}' if op else '':14} "
              f"{'baseline ' + baseline if baseline else '':36} {'' if met is None else 'ok' if met else 'MISSED'}")
