"""Every scenario file: events in, the expected decisions out, nothing else raised."""

from pathlib import Path

import pytest

from dealerbox.rules.profiles import IRREGULARITIES
from dealerbox.rules.scenario import run_scenario

SCENARIOS = sorted((Path(__file__).parents[1] / "scenarios").glob("*.jsonl"))


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path):
    result = run_scenario(path)
    assert result.ok, "\n".join(result.failures)


def test_every_rules_row_has_a_scenario():
    import json

    raised = set()
    for path in SCENARIOS:
        raised |= set(json.loads(path.read_text().splitlines()[0])["raises"])
    # MISSING_CARD is a deck-check finding: see tests/rules/test_deckcheck.py.
    assert set(IRREGULARITIES) - {"MISSING_CARD"} <= raised


def test_there_are_clean_hands_for_every_table_size():
    names = {p.stem for p in SCENARIOS}
    for players in range(2, 11):
        assert f"clean_{players}p_one_by_one" in names and f"clean_{players}p_spread" in names
