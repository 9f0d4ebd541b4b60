"""One alarm budget: the false alerts a fair room should expect a week, per check, worked out by
hand from the thresholds (dealerbox/floor/protect/budget.py)."""

from dataclasses import replace
from pathlib import Path

import pytest

from dealerbox.floor.operating.settings import load_protect
from dealerbox.floor.protect.budget import alarm_budget, budget_lines, few, hands_per_week
from dealerbox.floor.protect.config import ProtectConfig


def test_the_default_room_expects_about_four_false_alerts_a_week():
    config = ProtectConfig()
    # 20 tables x 30 hands an hour x 168 hours = 100,800 hands a week.
    assert hands_per_week(config) == 100_800
    budget = alarm_budget(config)
    week = {r["check"]: r["per_week"] for r in budget["rows"]}
    assert week["shuffle"] == pytest.approx(100_800 * 2e-5)               # 2.016
    assert week["procedure"] == pytest.approx(100_800 / 50 * 1e-4)        # 2,016 blocks: 0.2016
    # Seat luck: the seats' charts are designed for one false alarm a year of the room: 7 / 365 a week.
    assert week["seat_luck"] == pytest.approx(7 / 365)
    assert week["dealer_chart"] == pytest.approx(100_800 / 48_000)        # 2.1
    assert budget["total"]["per_week"] == pytest.approx(sum(week.values()))
    per = {r["check"]: r["per_10000_hands"] for r in budget["rows"]}
    # The defaults' shares, as docs/floor/surveillance.md states them: shuffle 0.2, chart 0.21, procedure 0.02 per 10,000.
    assert per["shuffle"] == pytest.approx(0.2) and per["procedure"] == pytest.approx(0.02)
    assert per["dealer_chart"] == pytest.approx(10_000 / 48_000) and round(per["dealer_chart"], 2) == 0.21
    assert budget["total"]["per_10000_hands"] < 1


def test_a_smaller_room_and_the_designed_chart():
    config = ProtectConfig(tables=6, hands_per_hour=40, hours_per_week=84, threshold=1e-5)
    budget = alarm_budget(config, chart_arl=60_000)
    week = {r["check"]: r["per_week"] for r in budget["rows"]}
    assert budget["hands_per_week"] == 6 * 40 * 84 == 20_160
    assert week["shuffle"] == pytest.approx(0.2016) and week["dealer_chart"] == pytest.approx(20_160 / 60_000)
    # Seat luck: 10 seats x 20,160 hands = 201,600 seat-hands a week, one alarm per 50 million.
    assert alarm_budget(config, seat_arl=50_000_000)["rows"][2]["per_week"] == pytest.approx(201_600 / 50_000_000)
    assert week["seat_luck"] == pytest.approx(7 / 365)   # one a year, as designed for this room


def test_the_budget_prints_a_line_per_check_and_small_counts_keep_two_figures():
    lines = budget_lines(alarm_budget(ProtectConfig()))
    assert lines[0].startswith("alarm budget for 20 tables at 30 hands an hour, 168 hours a week (100,800 hands)")
    assert len(lines) == 1 + 4 + 1 and lines[-1].startswith("  all checks: 4.34 a week")
    assert "seat luck (a seat dealt too many strong hands): 0.019 a week, 0.0019 per 10,000 hands" in lines[3]
    assert (few(2.016), few(0.2016), few(0.000191), few(1.9e-5), few(12.34), few(0)) == (
        "2.02", "0.20", "0.00019", "0.000019", "12.3", "0")


def test_the_surveillance_page_states_the_defaults_and_the_budget_the_code_has(tmp_path):
    text = (Path(__file__).parents[3] / "docs/floor/surveillance.md").read_text(encoding="utf-8")
    section = text.split("# Surveillance: game protection from the card record")[1]
    block = section.split("```toml\n")[1].split("```")[0]
    (tmp_path / "floor.toml").write_text(block)
    # The documented [protect] is the defaults but for its example hand shuffle.
    assert replace(load_protect(tmp_path / "floor.toml"), shuffle=ProtectConfig().shuffle) == ProtectConfig()
    words = " ".join(section.split())
    budget = alarm_budget(ProtectConfig())
    week = {r["check"]: r["per_week"] for r in budget["rows"]}
    per = {r["check"]: r["per_10000_hands"] for r in budget["rows"]}
    assert (f"shuffle {week['shuffle']:.1f} a week ({per['shuffle']:.2f} per 10,000 hands), dealer chart "
            f"{week['dealer_chart']:.1f} ({per['dealer_chart']:.2f}), procedure {week['procedure']:.2f} "
            f"({per['procedure']:.2f}), seat luck {few(week['seat_luck'])} ({few(per['seat_luck'])})") in words
    assert (f"about {budget['total']['per_week']:.1f} a week, {budget['total']['per_10000_hands']:.2f} per "
            f"10,000 hands") in words
    assert f"{budget['hands_per_week']:,.0f} hands a week" in words
