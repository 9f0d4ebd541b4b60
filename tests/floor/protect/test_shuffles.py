"""The declared shuffle models, checked against what can be worked out by hand."""

import random
from collections import Counter

import pytest

from dealerbox.errors import ConfigError
from dealerbox.floor.protect.shuffles import Gathering, Shuffle, cut, riffle, strip

N = 40_000


def frequencies(step, deck, seed=1):
    rng = random.Random(seed)
    counts = Counter(tuple(step(list(deck), rng)) for _ in range(N))
    return {k: v / N for k, v in counts.items()}


def test_one_riffle_of_three_cards_follows_bayer_diaconis():
    # GSR: a permutation with r rising sequences has probability C(2 + n - r, n) / 2^n.
    # n = 3: the identity (r = 1) C(4,3)/8 = 1/2; the four with r = 2, C(3,3)/8 = 1/8 each;
    # the reversal (r = 3) C(2,3) = 0. 1/2 + 4/8 = 1.
    f = frequencies(riffle, "abc")
    assert f[tuple("abc")] == pytest.approx(1 / 2, abs=0.01)
    for perm in ("bac", "acb", "bca", "cab"):
        assert f[tuple(perm)] == pytest.approx(1 / 8, abs=0.01)
    assert tuple("cba") not in f


def test_a_cut_of_three_cards_moves_a_binomial_number_of_cards():
    # c ~ Binomial(3, 1/2): c = 0 or 3 leave the deck as it was (1/8 + 1/8 = 1/4),
    # c = 1 gives bca (3/8), c = 2 gives cab (3/8).
    f = frequencies(cut, "abc")
    assert f[tuple("abc")] == pytest.approx(1 / 4, abs=0.01)
    assert f[tuple("bca")] == pytest.approx(3 / 8, abs=0.01)
    assert f[tuple("cab")] == pytest.approx(3 / 8, abs=0.01)


def test_a_strip_reverses_the_blocks_and_keeps_each_in_order():
    rng = random.Random(0)
    assert strip(list("abcdef"), rng, block=(2, 2)) == list("efcdab")
    assert strip(list("abcd"), rng, block=(1, 1)) == list("dcba")


def test_a_procedure_is_parsed_and_a_wrong_step_named():
    shuffle = Shuffle.parse("riffle riffle strip riffle cut")
    assert shuffle.steps == ("riffle", "riffle", "strip", "riffle", "cut")
    assert not shuffle.uniform and Shuffle.parse("machine").uniform
    assert sorted(shuffle(list(range(52)), random.Random(3))) == list(range(52))
    with pytest.raises(ConfigError, match="riffel"):
        Shuffle.parse("riffle riffel")


def test_a_machine_gives_each_of_the_six_orders_of_three_cards_one_time_in_six():
    f = frequencies(Shuffle.parse("machine"), "abc")
    assert len(f) == 6
    assert all(v == pytest.approx(1 / 6, abs=0.01) for v in f.values())


def test_gathering_keeps_the_blocks_together_and_puts_them_under_or_over_the_stub():
    rng = random.Random(5)
    holes, board = [("a1", "a2"), ("b1", "b2")], ("f1", "f2", "f3", "t", "r")
    burns, stub = ("x", "y", "z"), ["s1", "s2"]
    deck = Gathering(board="in_order", place="bottom")(holes, board, burns, stub, rng)
    assert deck[:2] == ["s1", "s2"]   # the gathered cards went under the stub
    text = " ".join(deck)
    assert "f1 f2 f3 t r" in text and "x y z" in text
    assert ("a1 a2" in text or "a2 a1" in text) and ("b1 b2" in text or "b2 b1" in text)
    deck = Gathering(board="reversed", place="top")(holes, board, burns, stub, rng)
    assert deck[-2:] == ["s1", "s2"] and "r t f3 f2 f1" in " ".join(deck)
    with pytest.raises(ConfigError):
        Gathering(place="middle")
