"""One alarm budget: the false alerts a fair room should expect, per check, from the thresholds.

Pure: ``[protect]`` (:class:`~dealerbox.floor.protect.config.ProtectConfig`) in, one row per
check out, each the expected number of false alerts per fair hand, per 10,000 hands and per
week for the configured room (``tables`` x ``hands_per_hour`` x ``hours_per_week`` hands).
Each figure is a design value, not a measurement; ``make bench`` measures the rates
(docs/BENCH.md). Only some of them are bounds the design guarantees:

- **shuffle** (a bound): a Monte Carlo p-value is valid (P(p < t) <= t for a fair hand), so
  each scored hand alerts with probability at most ``threshold``;
- **procedure** (a design value): each closed block of ``procedure_block`` hands alerts at
  ``procedure_threshold``, as far as its null holds: the block's sum is the convolution of
  its hands' distributions, which assumes the hands independent, and each hand's
  per-ending cell is estimated from simulated hands;
- **seat luck** (a bound): each seat's chart reaches h once in its in-control run length of
  seat-hands, computed exactly by the chart's Markov chain at the exact chance of a strong
  hand, designed so that the room's seats (``tables`` x ``seats`` at ``hands_per_hour`` for
  ``hours_per_week``) raise ``seat_alarms_per_year`` false alarms a year;
- **dealer chart** (a design value): a dealer exactly at their baseline reaches h once in its
  in-control average run length (at least ``chart_arl`` hands); the baseline is estimated
  from the dealer's hands and the room's, so a real dealer's rate is only near it.

``dealerbox floor protect fit`` prints it and the Surveillance page shows it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dealerbox.floor.telling.protect_terms import BASIS_WORDS, CHECK_WORDS, few_digits

if TYPE_CHECKING:   # the budget's words are read where the references' simulation is not loaded
    from dealerbox.floor.protect.config import ProtectConfig

__all__ = ["alarm_budget", "budget_lines", "hands_per_week", "few", "few_digits", "basis_words", "CHECK_WORDS",
           "BASIS_WORDS"]


def hands_per_week(config: ProtectConfig) -> float:
    """The hands the configured room deals in a week."""
    return config.tables * config.hands_per_hour * config.hours_per_week


def alarm_budget(config: ProtectConfig, chart_arl: float | None = None, seat_arl: float | None = None) -> dict:
    """The expected false alerts per check (``rows``: ``check``, ``per_hand``,
    ``per_10000_hands``, ``per_week``, ``basis``) and their ``total``, for a fair room as
    configured; *chart_arl* the designed dealer chart's in-control ARL (default ``chart_arl``,
    the design's lower bound), *seat_arl* the seats' chart's in seat-hands (default: what
    ``seat_alarms_per_year`` asks of the room)."""
    c = config
    week = hands_per_week(c)
    arl = chart_arl if chart_arl is not None else c.chart_arl
    seat_hands_week = week * c.seats
    if seat_arl is None:
        seat_arl = seat_hands_week * 365 / 7 / c.seat_alarms_per_year
    # Each check's false alerts per hand, and the facts its figure is worked out from.
    per_hand = {
        "shuffle": (c.threshold, {"threshold": c.threshold}),
        "procedure": (c.procedure_threshold / c.procedure_block,
                      {"block": c.procedure_block, "threshold": c.procedure_threshold}),
        "seat_luck": (c.seats / seat_arl, {"seats": c.seats, "arl": seat_arl, "per_year": c.seat_alarms_per_year}),
        "dealer_chart": (1.0 / arl, {"arl": arl}),
    }
    rows = [{"check": check, "words": CHECK_WORDS[check], "per_hand": p, "per_10000_hands": p * 10_000,
             "per_week": p * week, "basis": basis_words(check, facts), "facts": facts}
            for check, (p, facts) in per_hand.items()]
    total = {key: sum(r[key] for r in rows) for key in ("per_hand", "per_10000_hands", "per_week")}
    return {"rows": rows, "total": total, "hands_per_week": week, "tables": c.tables,
            "hands_per_hour": c.hands_per_hour, "hours_per_week": c.hours_per_week}


def basis_words(check: str, facts: dict) -> str:
    """What *check*'s figure is worked out from, in English: ``each scored hand: p below 0.0001``."""
    return BASIS_WORDS[check] % {name: f"{value:,.0f}" if name == "arl" else f"{value:g}"
                                 for name, value in facts.items()}


def few(x: float) -> str:
    """An expected count as a person reads it, small ones in two figures and never in powers of
    ten: ``12.3``, ``2.02``, ``0.21``, ``0.0019``, ``0.000019``; ``0`` for none."""
    if x <= 0:
        return "0"
    return f"{x:.{few_digits(x)}f}"


def budget_lines(budget: dict) -> list[str]:
    """The budget as lines of text (``floor protect fit`` prints them)."""
    out = [f"alarm budget for {budget['tables']} tables at {budget['hands_per_hour']:g} hands an hour, "
           f"{budget['hours_per_week']:g} hours a week ({budget['hands_per_week']:,.0f} hands): "
           f"expected false alerts of a fair room"]
    for r in budget["rows"]:
        out.append(f"  {r['words']}: {few(r['per_week'])} a week, {few(r['per_10000_hands'])} per 10,000 hands "
                   f"({r['basis']})")
    t = budget["total"]
    out.append(f"  all checks: {few(t['per_week'])} a week, {few(t['per_10000_hands'])} per 10,000 hands")
    return out
