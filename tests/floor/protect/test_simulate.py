"""The simulated table: decks in turn, gathering, and the cheats the bench measures."""

import random

from dealerbox.domain.cards import DECK_52
from dealerbox.floor.protect.shuffles import Gathering, Shuffle
from dealerbox.floor.protect.simulate import FalseRiffle, Stack, TableSim, no_shuffle


def test_hands_are_dealt_to_the_river_from_decks_in_turn():
    sim = TableSim(Shuffle.parse("machine"), random.Random(1), players=6, decks=("A", "B"))
    hands = [sim.deal() for _ in range(3)]
    assert [h.deck for h in hands] == ["A", "B", "A"]
    assert all(len(h.draw) == 6 * 2 + 8 and len(set(h.draw)) == 20 and set(h.draw) <= set(DECK_52) for h in hands)


def test_no_shuffle_deals_the_gathered_cards_back_in_their_order():
    sim = TableSim(no_shuffle, random.Random(2), players=2, gathering=Gathering(board="in_order", place="top"))
    first, second = sim.deal(), sim.deal()
    assert " ".join(first.laid_board()) in " ".join(second.draw)


def test_a_false_riffle_keeps_its_top_slug():
    deck = list(range(52))
    out = FalseRiffle(12, Shuffle.parse("machine"))(deck, random.Random(3))
    assert out[:12] == deck[:12] and sorted(out) == deck


def test_a_stacked_deck_gives_the_chosen_seat_its_hand_once_in_every_so_many():
    sim = TableSim(Shuffle.parse("machine"), random.Random(4), players=9, stack=Stack(3, ("As", "Ah"), every=10))
    hands = [sim.deal() for _ in range(30)]
    assert len(sim.stacked) == 3
    assert all(hands[i].holes()[3] == ("As", "Ah") for i in sim.stacked)
    assert all(len(set(h.draw)) == len(h.draw) for h in hands)
