"""Is one seat being fed cards? Each seat's strong starting hands over a window, against chance.

**Strong**, per game, by a ranking simple enough to count by hand:

- Texas hold'em (2 hole cards, 1326 combinations in 169 classes): the classes in
  ``HOLDEM_STRONG``, by default a pair of tens or better and ace-king (TT, JJ, QQ,
  KK, AA: 5 x 6 combinations; AKs 4 and AKo 12): 46 of 1326, about 3.5%.
- Omaha (4 hole cards, C(52,4) = 270725 combinations): at least two cards of one of
  ``OMAHA_PAIR_RANKS``, by default a pair of aces or kings: 13886 of 270725, about
  5.1% (:func:`omaha_probability` counts the complement: hands holding at most one
  card of each of those ranks).

A fair deal gives each seat a strong hand with that exact probability p, hand
after hand independently, so a seat's count in a window of n hands is
Binomial(n, p), and a finding's p-value is the upper tail P(X >= k).

**Multiple testing.** The room tests every seat of every table in every window, so
the finding carries the Bonferroni correction over that family: alert when
``min(1, m * p) < alpha`` with ``m = seats x tables x windows`` (as configured), and
:func:`holm` gives Holm's step-down for a batch of findings (never less powerful).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

from dealerbox.domain.cards import DECK_52, RANKS
from dealerbox.errors import UsageError
from dealerbox.floor.protect.hand import DealtHand

__all__ = ["HOLDEM_STRONG", "OMAHA_PAIR_RANKS", "holdem_class", "class_combos", "holdem_probability",
           "omaha_probability", "is_strong", "strong_probability", "binomial_tail", "SeatFinding",
           "SeatLuck", "holm"]

HOLDEM_STRONG = frozenset({"AA", "KK", "QQ", "JJ", "TT", "AKs", "AKo"})
OMAHA_PAIR_RANKS = "AK"
HOLDEM_COMBOS = math.comb(52, 2)   # 1326
OMAHA_COMBOS = math.comb(52, 4)    # 270725


def holdem_class(a: str, b: str) -> str:
    """The starting-hand class of two hole cards: ``AA``, ``AKs`` (suited), ``AKo`` (offsuit)."""
    hi, lo = sorted((a, b), key=lambda c: RANKS.index(c[0]), reverse=True)
    if hi[0] == lo[0]:
        return hi[0] * 2
    return hi[0] + lo[0] + ("s" if hi[1] == lo[1] else "o")


def class_combos(cls: str) -> int:
    """Combinations of a class: a pair C(4,2) = 6, suited 4, offsuit 4 x 3 = 12."""
    return 6 if len(cls) == 2 else (4 if cls.endswith("s") else 12)


def holdem_probability(classes=HOLDEM_STRONG) -> Fraction:
    """The exact probability that two hole cards fall in *classes*: their combinations / 1326."""
    return Fraction(sum(class_combos(c) for c in classes), HOLDEM_COMBOS)


def omaha_probability(pair_ranks: str = OMAHA_PAIR_RANKS) -> Fraction:
    """The exact probability that four hole cards hold two or more of one of *pair_ranks*.

    The complement holds at most one card of each of those r ranks: j of them once
    (C(r, j) ways to choose the ranks, 4^j the suits) and 4 - j other cards from the
    52 - 4r that are none of them.
    """
    r = len(pair_ranks)
    at_most_one = sum(math.comb(r, j) * 4 ** j * math.comb(52 - 4 * r, 4 - j) for j in range(0, min(r, 4) + 1))
    return Fraction(OMAHA_COMBOS - at_most_one, OMAHA_COMBOS)


def is_strong(cards, classes=HOLDEM_STRONG, pair_ranks: str = OMAHA_PAIR_RANKS) -> bool:
    """True when *cards* (2: hold'em, 4: Omaha) are a strong starting hand."""
    if len(cards) == 2:
        return holdem_class(*cards) in classes
    ranks = [c[0] for c in cards]
    return any(ranks.count(r) >= 2 for r in pair_ranks)


def strong_probability(hole_cards: int, classes=HOLDEM_STRONG, pair_ranks: str = OMAHA_PAIR_RANKS) -> Fraction:
    """The exact probability of a strong starting hand in the game of *hole_cards* cards."""
    return holdem_probability(classes) if hole_cards == 2 else omaha_probability(pair_ranks)


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), summed in logs so that no term overflows."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    lp, lq = math.log(p), math.log1p(-p)
    total = 0.0
    for i in range(k, n + 1):
        total += math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq)
    return min(1.0, total)


@dataclass(frozen=True, slots=True)
class SeatFinding:
    """One seat over one window: strong hands seen against chance, with the correction stated."""

    table: str
    seat: int
    window: str
    hands: int
    strong: int
    probability: Fraction     # of a strong hand per deal, exact
    p_value: float            # P(X >= strong), X ~ Binomial(hands, probability)
    family: int               # tests the correction covers
    corrected: float          # the p-value after the correction
    correction: str
    alpha: float
    strong_hand_ids: tuple    # the hands behind the finding, for their stories

    @property
    def expected(self) -> float:
        return self.hands * float(self.probability)

    @property
    def alert(self) -> bool:
        return self.corrected < self.alpha


@dataclass(frozen=True)
class SeatLuck:
    """The seat-luck check: ``alpha`` family-wise over ``seats x tables x windows`` tests
    (Bonferroni), strong hands as the module docstring defines them."""

    alpha: float = 0.01
    seats: int = 10
    tables: int = 1
    windows: int = 1
    classes: frozenset = HOLDEM_STRONG
    pair_ranks: str = OMAHA_PAIR_RANKS

    @property
    def family(self) -> int:
        return self.seats * self.tables * self.windows

    def window(self, hands, window: str = "shift") -> list[SeatFinding]:
        """A finding per physical seat dealt in *hands* (one table's hands of one window),
        seats in order. A window holds one game (:class:`UsageError` otherwise): the caller
        splits a table's window by game, each scored with its own probability."""
        hands = list(hands)
        if not hands:
            return []
        games = {h.hole_cards for h in hands}
        if len(games) != 1:
            raise UsageError(f"a window holds one game; these hands hold {sorted(games)} hole cards")
        p = strong_probability(games.pop(), self.classes, self.pair_ranks)
        dealt: dict[int, list] = {}
        for h in hands:
            for seat, cards in zip(h.seat_numbers(), h.holes()):
                if len(cards) == h.hole_cards and all(c in _NAMED for c in cards):  # unread: no hand
                    dealt.setdefault(seat, []).append((h.hand_id, is_strong(cards, self.classes, self.pair_ranks)))
        out = []
        for seat in sorted(dealt):
            rows = dealt[seat]
            out.append(self.score(hands[0].table, seat, window, len(rows), tuple(i for i, s in rows if s), p))
        return out

    def score(self, table: str, seat: int, window: str, hands: int, strong_ids: tuple,
              p: Fraction) -> SeatFinding:
        """The finding of one seat dealt *hands* hands, *strong_ids* of them strong (probability *p* each)."""
        tail = binomial_tail(len(strong_ids), hands, float(p))
        return SeatFinding(table, seat, window, hands, len(strong_ids), p, tail, self.family,
                           min(1.0, tail * self.family), "Bonferroni", self.alpha, tuple(strong_ids))


_NAMED = frozenset(DECK_52)


def holm(findings) -> list[SeatFinding]:
    """The same findings with Holm's step-down correction over their own family (all of them):
    the i-th smallest p-value (from 0) is multiplied by (m - i), kept monotone."""
    findings = list(findings)
    m = len(findings)
    order = sorted(range(m), key=lambda i: findings[i].p_value)
    out = list(findings)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * findings[i].p_value))
        out[i] = replace(findings[i], family=m, corrected=running, correction="Holm")
    return out
