"""The deck check: missing, duplicate, foreign, joker and unknown tags."""

from dealerbox.domain.cards import DECK_52, JOKER
from dealerbox.rules.deckcheck import check_deck
from dealerbox.domain.decks import simulated_uid, simulation_registry

REG = simulation_registry()
FULL = [simulated_uid("A", c) for c in DECK_52]


def test_a_full_deck_is_fit():
    report = check_deck(FULL, REG)
    assert report.fit_for_play and report.missing == [] and report.decisions == []
    assert report.seen == 52


def test_missing_card_is_information_only():
    report = check_deck(FULL[:10] + FULL[11:], REG)
    assert report.missing == [DECK_52[10]]
    (d,) = report.decisions
    assert d.irregularity == "MISSING_CARD" and d.verdict == "ok" and d.cards == (DECK_52[10],)
    assert "001 r9" in d.rule
    assert not report.fit_for_play


def test_a_tag_read_twice_in_one_pass_is_a_clone():
    report = check_deck(FULL + [FULL[3]], REG)
    assert report.duplicates == [DECK_52[3]]
    assert report.decisions[0].irregularity == "DUPLICATE_CARD"


def test_two_tags_for_one_card_is_a_duplicate():
    reg = simulation_registry()
    reg.add("01020304", "A", "Ah")
    report = check_deck(FULL + ["01020304"], reg)
    assert report.duplicates == ["Ah"] and not report.fit_for_play


def test_foreign_card_in_the_stub_plays_on():
    report = check_deck(FULL + [simulated_uid("B", "Kd")], REG)
    assert report.foreign == [("B", "Kd")]
    d = next(d for d in report.decisions if d.irregularity == "FOREIGN_CARD")
    assert d.verdict == "ok" and d.steps[0].key == "deck.foreign_in_stub"


def test_jokers_and_unknown_and_malformed_tags():
    report = check_deck(FULL + [simulated_uid("A", JOKER, 0), "DEADBEEF", "xyz"], REG)
    assert report.jokers == [simulated_uid("A", JOKER, 0)]
    assert report.unknown == ["DEADBEEF", "xyz"]
    assert not report.fit_for_play
    assert report.to_dict()["unknown"] == ["DEADBEEF", "xyz"]
