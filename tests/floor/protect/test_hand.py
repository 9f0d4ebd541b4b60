"""The hand as the protection checks read it: who got which card, the board, the burns."""

from dealerbox.floor.protect.hand import DealtHand, pair, together_pairs

# Two players, hold'em, to the river: the deal goes round twice, then
# burn, flop x3, burn, turn, burn, river.
DRAW = ("Ah", "Kd", "Ac", "Ks", "2c", "3c", "4c", "5c", "2d", "6c", "2h", "7c")


def test_hole_cards_go_round_the_table_and_the_rest_is_burns_and_board():
    hand = DealtHand("A", DRAW, players=2)
    assert hand.holes() == [("Ah", "Ac"), ("Kd", "Ks")]
    assert hand.laid_board() == ("3c", "4c", "5c", "6c", "7c")
    assert hand.burns() == ("2c", "2d", "2h")
    assert hand.seat_numbers() == (1, 2)


def test_a_board_laid_in_another_order_is_the_one_kept():
    hand = DealtHand("A", DRAW, players=2, board=("5c", "3c", "4c", "6c", "7c"))
    assert hand.laid_board() == ("5c", "3c", "4c", "6c", "7c")
    assert hand.burns() == ("2c", "2d", "2h")


def test_together_pairs_are_each_seat_the_board_neighbours_and_the_burn_neighbours():
    # 2 seat pairs + 4 board neighbours + 2 burn neighbours = 8 pairs.
    pairs = together_pairs(DealtHand("A", DRAW, players=2))
    assert pairs == {pair("Ah", "Ac"), pair("Kd", "Ks"),
                     pair("3c", "4c"), pair("4c", "5c"), pair("5c", "6c"), pair("6c", "7c"),
                     pair("2c", "2d"), pair("2d", "2h")}
    assert pair("Ac", "Ah") == pair("Ah", "Ac")


def test_an_omaha_seat_holds_six_pairs():
    # 4 hole cards: C(4,2) = 6 pairs per seat; 2 seats and no board: 12 pairs.
    draw = ("Ah", "Kd", "Ac", "Ks", "Ad", "Kh", "As", "Kc")
    assert len(together_pairs(DealtHand("A", draw, players=2, hole_cards=4))) == 12


def test_cards_the_record_does_not_name_pair_with_nothing():
    # Seat 1's two unread cards and the joker on the board: of 8 pairs, 1 + 2 are gone.
    draw = ("(unread)", "Kd", "(unread)", "Ks", "2c", "3c", "joker", "5c", "2d", "6c", "2h", "7c")
    pairs = together_pairs(DealtHand("A", draw, players=2))
    assert len(pairs) == 5 and pair("Kd", "Ks") in pairs and pair("5c", "6c") in pairs
