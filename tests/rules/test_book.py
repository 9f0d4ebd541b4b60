"""The rule book: complete, consistent with the profiles, and rendered into docs/RULEBOOK.md."""

import os
from pathlib import Path

import pytest

from dealerbox.errors import ConfigError
from dealerbox.rules import procedures
from dealerbox.rules.book import ANSWERS_OPEN_STEP, GUARDS, OUTCOMES, PHASES, RULE_BOOK
from dealerbox.rules.book_markdown import render_markdown
from dealerbox.rules.engine import HandEngine
from dealerbox.domain.events import Event
from dealerbox.rules.open_steps import steps_answered_by
from dealerbox.rules.profiles import PROCEDURES, load_profile, parse_profile
from dealerbox.tomlfile import read_toml

RULEBOOK = Path(__file__).resolve().parents[2] / "docs" / "RULEBOOK.md"


def test_rendered_rule_book_is_current():
    text = render_markdown()
    if os.environ.get("DEALERBOX_WRITE_RULEBOOK"):
        RULEBOOK.write_text(text)
    assert RULEBOOK.read_text() == text, "docs/RULEBOOK.md is stale: DEALERBOX_WRITE_RULEBOOK=1 pytest tests/rules/test_book.py"


def test_every_rule_names_known_guards_outcomes_phases_and_ids():
    for rule in RULE_BOOK:
        assert set(rule.phases) <= set(PHASES), rule
        assert rule.outcome in OUTCOMES, rule
        for g in rule.guards:
            if g == ANSWERS_OPEN_STEP:
                # The table names the steps whose answer the outcome takes: some must be named.
                assert steps_answered_by(rule.outcome), rule
                continue
            assert g.removeprefix("not ") in GUARDS, (rule, g)
        assert set(rule.raises) <= set(PROCEDURES), rule


def test_every_irregularity_is_raised_by_some_rule():
    raised = {r for rule in RULE_BOOK for r in rule.raises}
    # MISSING_CARD is a deck-check finding (dealerbox.rules.deckcheck), not an event's.
    assert set(PROCEDURES) - {"MISSING_CARD"} <= raised


def test_every_procedure_a_profile_may_choose_has_a_builder():
    assert procedures.missing_builders() == []


def test_an_unknown_procedure_is_a_config_error_naming_file_key_and_choices(tmp_path):
    src = Path(load_profile("tda-2019").path)
    data = read_toml(src, "rule profile")
    data["rules"]["FOUR_CARD_FLOP"]["procedure"] = "scramble_and_guess"
    with pytest.raises(ConfigError) as info:
        parse_profile(data, tmp_path / "house.toml")
    msg = str(info.value)
    assert "house.toml" in msg and "rules.FOUR_CARD_FLOP.procedure" in msg
    assert "scramble_pick_burn" in msg and "redeal_street" in msg


def _four_card_flop(profile):
    eng = HandEngine(profile)
    events = [{"ev": "new_hand", "players": 2}]
    events += [{"ev": "shoe", "card": c} for c in ("2c", "3c", "4c", "5c")]
    events += [{"ev": "button", "name": "round_done"}, {"ev": "shoe", "card": "6c"}]
    for c in ("7c", "8c", "9c", "Tc"):
        events += [{"ev": "shoe", "card": c}, {"ev": "board_on", "card": c}]
    for i, e in enumerate(events):
        eng.feed(Event.from_dict({"t": float(i), **e}))
    return eng.decision


def test_a_profiles_procedure_choice_changes_what_the_box_says():
    tda = load_profile("tda-2019")
    rules = dict(tda.rules)
    rules["FOUR_CARD_FLOP"] = type(rules["FOUR_CARD_FLOP"])("floor", "redeal_street", "house")
    house = type(tda)("house", rules)
    assert _four_card_flop(tda).steps[1].key == "four_flop.scramble_pick"
    assert _four_card_flop(house).steps[0].key == "redeal.cards_back"


def test_every_step_the_panel_can_show_has_its_answers_and_end():
    import re
    from pathlib import Path

    from dealerbox.rules.open_steps import MOMENTS, RULINGS, STEP_CONTRACTS, missing_contracts

    sources = (Path(__file__).parents[2] / "dealerbox" / "rules").glob("*.py")
    keys = {k for p in sources for k in re.findall(r'Step\(\s*"([a-z_0-9.]+)"', p.read_text())}
    keys |= {"halt.misdeal", "halt.void"}   # the verdict's own step (``Step(f"halt.{verdict}")``)
    # Every step the panel has words for, but the deck check's findings and the dealer's greetings,
    # which no hand's correction shows.
    messages = read_toml(Path(__file__).parents[2] / "firmware_config" / "messages" / "en.toml", "messages")["steps"]
    keys |= {k for k in messages if not k.startswith(("deck.", "dealer."))}
    assert missing_contracts(keys) == []
    for key, contract in STEP_CONTRACTS.items():
        assert contract.answers and contract.ends, key
        for moment, ruling in contract.past:
            assert moment in MOMENTS and ruling in RULINGS, (key, moment, ruling)


def test_every_answer_and_effect_the_table_names_is_registered_and_procedures_name_none():
    """The table is the only place a step's answers are written: every name it uses is registered,
    and no procedure hands a step a check, a button or an effect of its own."""
    import re
    from pathlib import Path

    from dealerbox.rules.open_steps import SEEN_BY, STEP_CONTRACTS, THEN, missing_answers

    assert missing_answers() == []
    assert set(SEEN_BY) <= set(STEP_CONTRACTS) and set(THEN) <= set(STEP_CONTRACTS)
    sources = (Path(__file__).parents[2] / "dealerbox" / "rules").glob("*.py")
    handed = [p.name for p in sources if re.search(r"Todo\([^)]*\b(check|button|on_done)=", p.read_text())]
    assert handed == []


def test_only_the_step_judge_takes_a_correction_off_by_its_irregularity():
    """A correction the hand went past, or whose reading the cards explained otherwise, leaves the
    panel by the open-steps table (``superseded_at``, ``past``), not by an outcome that knows its id."""
    import re
    from pathlib import Path

    sources = (Path(__file__).parents[2] / "dealerbox" / "rules").glob("*.py")
    dropping = [p.name for p in sources
                if re.search(r"eng\.corrections = \[c for c in eng\.corrections if c\.irregularity", p.read_text())]
    assert dropping == []
