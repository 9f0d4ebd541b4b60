"""Why a false riffle is missed half the time under the gathering model: when the gathered
cards go under the stub, the slug the cheat keeps on top is the last hand's undealt cards,
which no hand showed side by side, so no kept pair can be among them. Worked exactly."""

from __future__ import annotations

import random

from dealerbox.floor.protect.hand import pair, together_pairs
from dealerbox.floor.protect.shuffles import Gathering, Shuffle
from dealerbox.floor.protect.simulate import FalseRiffle, TableSim

MACHINE = Shuffle(("machine",))


def kept_in_slug(place: str, k: int = 12, hands: int = 40) -> list[int]:
    """Per cheat hand after the first: kept pairs (of the last hand's) among the top *k* drawn."""
    sim = TableSim(FalseRiffle(k, MACHINE), random.Random(9), players=9, gathering=Gathering(place=place))
    last = sim.deal()
    out = []
    for _ in range(hands):
        hand = sim.deal()
        together = together_pairs(last)
        slug = hand.draw[:k]
        out.append(sum(1 for a, b in zip(slug, slug[1:]) if pair(a, b) in together))
        last = hand
    return out


def test_a_slug_of_stub_cards_holds_no_pair_the_last_hand_left():
    # 9 players draw 18 + 8 = 26 cards: the 26 undealt lie on top when the gathered go under,
    # so the top 12 kept are stub cards none of which the last hand dealt: 0 pairs, every hand.
    assert kept_in_slug("bottom") == [0] * 40


def test_a_slug_of_gathered_cards_holds_the_pairs_the_last_hand_left():
    # Gathered on top, the slug is a run of the last hand's blocks: nine hole-card piles of 2
    # (1 pair each), the board row of 5 (4 pairs), the burns of 3 (2 pairs). The fewest pairs
    # 12 cards of such blocks can hold is 6: six piles of 2; or five and 2 cards of the row or
    # the burns (5 + 1); or the burns, four piles and 1 card (2 + 4).
    assert min(kept_in_slug("top")) >= 6
