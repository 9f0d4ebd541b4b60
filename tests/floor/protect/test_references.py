"""The cheap references: the vectorised model against the hand-by-hand simulator, the
fingerprint of a model, the cells per ending, and their use by the procedure check."""

import random
import statistics

import pytest

from dealerbox.errors import UsageError
from dealerbox.floor.protect.hand import DealtHand
from dealerbox.floor.protect.references import fit_reference, fit_references, model_fingerprint, simulate_statistics
from dealerbox.floor.protect.shuffle_check import (ProcedureCheck, Reference, ShuffleCheck, ShuffleFinding,
                                                   ending_after, simulated_statistics)
from dealerbox.floor.protect.shuffles import Gathering, Shuffle
from dealerbox.floor.protect.simulate import REAL_ENDINGS, TableSim

HAND = Shuffle.parse("riffle riffle strip riffle cut")
MACHINE = Shuffle.parse("machine")


@pytest.mark.parametrize("procedure, gathering, players, hole_cards, endings", [
    ("machine", Gathering(), 9, 2, None),
    ("riffle riffle strip riffle cut", Gathering(), 9, 2, None),
    ("riffle riffle strip riffle cut", Gathering(hands_together=False, board="in_order", place="top"), 3, 2,
     REAL_ENDINGS),
    ("riffle riffle cut", Gathering(), 6, 4, REAL_ENDINGS),
    ("cut", Gathering(place="bottom", board="reversed"), 9, 2, None),
])
def test_the_vectorised_model_deals_the_statistic_the_hand_by_hand_simulator_deals(procedure, gathering, players,
                                                                                   hole_cards, endings):
    shuffle = Shuffle.parse(procedure)
    fast, _, _ = simulate_statistics(shuffle, gathering, 2, hole_cards, players, random.Random(1), 40_000, endings)
    slow = simulated_statistics(TableSim(shuffle, random.Random(2), players=players, hole_cards=hole_cards,
                                         gathering=gathering, endings=endings), 8_000, 2)
    # Means within 4 standard errors of their difference; spreads within 5 %.
    se = (fast.var() / len(fast) + statistics.pvariance(slow) / len(slow)) ** 0.5
    assert abs(fast.mean() - statistics.mean(slow)) < 4 * se
    assert fast.std() == pytest.approx(statistics.pstdev(slow), rel=0.05)


def test_the_fingerprint_names_the_model_and_nothing_else():
    g = Gathering()
    one = model_fingerprint(HAND, g, 2, 2)
    assert one == model_fingerprint("riffle riffle strip riffle cut", Gathering(), "holdem", 2)
    assert len(one) == 16 and int(one, 16) >= 0
    others = {model_fingerprint(MACHINE, g, 2, 2), model_fingerprint(HAND, Gathering(place="top"), 2, 2),
              model_fingerprint(HAND, g, 4, 2), model_fingerprint(HAND, g, 2, 3),
              model_fingerprint(Shuffle.parse("riffle riffle cut"), g, 2, 2)}
    assert one not in others and len(others) == 5
    # A machine forgets the gathering: the same reference whatever the house says of it.
    assert model_fingerprint(MACHINE, Gathering(place="top"), 2, 2) == model_fingerprint(MACHINE, g, 2, 2)
    with pytest.raises(UsageError, match="hole cards"):
        model_fingerprint(HAND, g, 3, 2)


def test_a_fitted_reference_holds_the_river_tail_the_cells_per_ending_and_its_fingerprint():
    ref = fit_reference(HAND, Gathering(), 2, 2, 9, random.Random(3), hands=20_000, ending_hands=16_000)
    assert ref.n == 20_000 and ref.fingerprint == model_fingerprint(HAND, Gathering(), 2, 2)
    cells = dict(ref.by_ending)
    assert set(cells) >= {(0, None), (8, None), (0, 0), (8, 8)}
    assert sum(sum(cells[(a, None)]) for a in (0, 4, 6, 8)) == 16_000

    def mean(pmf):
        return sum(k * p for k, p in enumerate(pmf))
    # A hand over before the flop, after one over before the flop, keeps far fewer pairs than
    # a hand to the river after a hand to the river, which is what the river's tail assumes.
    assert mean(ref.pmf_for(0, 0)) < 0.6 * mean(ref.pmf_for(8, 8))
    assert mean(ref.pmf_for(8, 8)) == pytest.approx(mean(ref.pmf()), rel=0.1)
    assert ref.pmf_for(6, None) == ref.pmf_for(6, 99)          # an unknown before: the ending's own cell
    assert Reference.from_dict(ref.to_dict()) == ref
    # An old stored reference (no endings) answers every cell with the river's pmf.
    old = Reference.from_dict({"counts": [3, 1], "source": "old"})
    assert old.pmf_for(0, 4) == old.pmf() == [0.75, 0.25] and old.fingerprint == ""


def test_every_game_of_a_room_is_fitted_hold_em_and_omaha_at_2_to_10_players():
    games = [(p, h) for h in (2, 4) for p in range(2, 11) if p * h + 8 <= 52]
    refs = fit_references(MACHINE, Gathering(), 2, games, random.Random(4), hands=2_000, ending_hands=1_000)
    assert set(refs) == set(games) and all(r.n == 2_000 for r in refs.values())
    with pytest.raises(UsageError, match="do not fit"):
        fit_reference(MACHINE, Gathering(), 2, 4, 12, random.Random(4), hands=100)


def test_the_ending_of_a_hand_is_the_last_street_it_reached():
    cards = [f"{r}{s}" for s in "shdc" for r in "23456789TJQKA"]
    for after, ending in ((0, 0), (3, 0), (4, 4), (5, 4), (6, 6), (8, 8)):
        assert ending_after(DealtHand("A", tuple(cards[:18 + after]), players=9)) == ending


def test_the_procedure_check_sums_a_block_against_the_cells_of_its_hands_endings():
    # Per-hand river reference: 0 or 1 kept, evenly; a hand over before the flop keeps none.
    ref = Reference((1, 1), "w", by_ending=(((0, None), (5,)), ((8, None), (1, 1))))
    check = ShuffleCheck(HAND, references={(2, 2): ref})
    one = ShuffleFinding("shuffle", "T1", "A", "D1", (7,), 1, 0.5, 1 / 3, 1e-5, "m", "w")
    river = ProcedureCheck(check, block=2, threshold=0.3)
    river.feed(one, 2, 2)
    assert river.feed(one, 2, 2).p_value == pytest.approx(0.25)
    # The same sum of 1 + 1 from a hand over before the flop (which never keeps one) and a
    # river hand cannot happen under the model: p = 0, an alert; under the river's reference 1/4.
    ended = ProcedureCheck(check, block=2, threshold=0.3)
    ended.feed(one, 2, 2, 0, 8)
    assert ended.feed(one, 2, 2, 8, 0).p_value == 0.0


def test_a_house_fit_keeps_its_hands_cells_as_they_ended():
    sim = TableSim(HAND, random.Random(5), players=6, endings=REAL_ENDINGS)
    fitted = ShuffleCheck(HAND).fit(sim.deal() for _ in range(3_000))
    ref = fitted.references[(6, 2)]
    cells = dict(ref.by_ending)
    assert ref.n == 2_999 and sum(sum(cells[(a, None)]) for a in (0, 4, 6, 8)) == 2_999
    assert sum(sum(c) for (now, before), c in cells.items() if before is not None) == 2_999
