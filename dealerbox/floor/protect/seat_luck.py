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
``min(1, m * p) < alpha`` with ``m = seats x tables x windows`` (as configured).
A window's finding is what a page shows of a seat over a range.

**As it happens: a CUSUM per seat.** The alert does not wait for a window to end.
Each seat (a physical seat, recorded or recovered from the deal:
:mod:`~dealerbox.floor.protect.seats`) has a Bernoulli CUSUM on its strong hands
(:class:`SeatCharts`), the same chart as the dealers'
(:mod:`~dealerbox.floor.protect.control_chart`): in control at the exact chance p0 of
a strong hand, tuned for a seat fed one once in ``feed_every`` hands (p1 = 1/every +
(1 - 1/every) p0), with h set so that the in-control average run length of one seat
is the room's seat-hands in a year over the false alarms the house accepts in a year
(:func:`seat_chart`, :class:`Room`): the budget is stated per year for the room as
configured, and computed exactly by the chart's Markov chain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from dealerbox.domain.cards import DECK_52, RANKS
from dealerbox.errors import UsageError
from dealerbox.floor.protect.control_chart import Cusum, reference_value, smallest_h
from dealerbox.floor.protect.hand import DealtHand
from dealerbox.floor.protect.seats import SeatKey

__all__ = ["HOLDEM_STRONG", "OMAHA_PAIR_RANKS", "holdem_class", "class_combos", "holdem_probability",
           "omaha_probability", "is_strong", "strong_probability", "binomial_tail", "SeatFinding",
           "SeatLuck", "Room", "seat_chart", "SeatAlarm", "SeatCharts"]

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
    lp, lq, whole = math.log(p), math.log1p(-p), math.lgamma(n + 1)
    total = 0.0
    for i in range(k, n + 1):
        term = math.exp(whole - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq)
        total += term
        # Past the mode the terms only fall: once one no longer moves the sum, none after it will
        # (the Surveillance page sums 500 seats' tails at each view).
        if i > n * p and term <= total * 1e-17:
            break
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


@dataclass(frozen=True, slots=True)
class Room:
    """The room a false-alarm budget per year is stated for: its tables, the players dealt
    in at a table (on average), hands an hour and the hours a year the tables deal."""

    tables: int = 20
    players: float = 9.0
    hands_per_hour: float = 30.0
    hours_per_year: float = 24 * 365.0

    @property
    def hands_per_year(self) -> float:
        return self.tables * self.hands_per_hour * self.hours_per_year

    @property
    def seat_hands_per_year(self) -> float:
        """Seats dealt a hand in a year, over the room: what one seat's chart runs over, summed."""
        return self.hands_per_year * self.players


def seat_chart(p0: float, *, feed_every: float = 15.0, alarms_per_year: float = 1.0, room: Room = Room()) -> Cusum:
    """The seats' CUSUM: in control at *p0* (a strong hand's exact chance), tuned for a seat fed
    one once in *feed_every* hands, its h the smallest whose in-control run length of one seat
    reaches ``room.seat_hands_per_year / alarms_per_year`` (h found by bisection on the exact ARL)."""
    p1 = 1 / feed_every + (1 - 1 / feed_every) * p0
    if not 0 < p0 < p1 < 1 or alarms_per_year <= 0:
        raise UsageError(f"a seat chart needs 0 < p0 ({p0}) < the fed rate ({p1}) < 1 and a positive budget")
    target = room.seat_hands_per_year / alarms_per_year
    c = max(1, round(1 / reference_value(p0, p1)))
    return Cusum(p0, p1 / p0, c, smallest_h(p0, c, target))


@dataclass(frozen=True, slots=True)
class SeatAlarm:
    """A seat whose chart crossed h: the strong hands since it last stood at 0 are the evidence."""

    table: str
    seat: SeatKey
    hole_cards: int
    hand_id: object
    value: float
    h: float
    k: float
    p0: float
    p1: float
    in_control_arl: float
    hands: int                 # hands the seat was dealt since its chart last stood at 0
    strong_hand_ids: tuple     # the strong ones among them, for their stories

    @property
    def expected(self) -> float:
        """Strong hands a fair seat gets in as many hands."""
        return self.hands * self.p0


#: Strong hands kept as a chart's evidence, at most (the latest).
EVIDENCE = 60


@dataclass
class SeatCharts:
    """One CUSUM per (table, game, seat); ``designs``: hole cards -> :class:`Cusum` (:func:`seat_chart`).

    :meth:`hand` takes a hand, the seat of each deal position and which got a strong hand;
    ``state`` (JSON-able lists) is what a restarted floor needs to go on.
    """

    designs: dict
    state: dict = field(default_factory=dict)   # (table, hole cards, SeatKey) -> [steps, hands, [strong ids]]

    def hand(self, table: str, hole_cards: int, hand_id, keys, strong) -> list[SeatAlarm]:
        """Feed one hand: *keys* the seat of each deal position, *strong* whether it was dealt a
        strong hand (None: not a full named hand, not counted). Alarms raised, if any."""
        cusum = self.designs.get(hole_cards)
        if cusum is None:
            return []
        runs = {k.run for k in keys if k.run is not None}
        for old in [s for s in self.state if s[0] == table and s[2].run is not None and s[2].run not in runs]:
            del self.state[old]   # a run of recovered seats that ended: its seats are gone
        out = []
        for key, was_strong in zip(keys, strong):
            if was_strong is None:
                continue
            row = self.state.setdefault((table, hole_cards, key), [0, 0, []])
            steps = cusum.step(row[0], bool(was_strong))
            if steps == 0:
                row[:] = [0, 0, []]
                continue
            row[0], row[1] = steps, row[1] + 1
            if was_strong:
                row[2] = (row[2] + [hand_id])[-EVIDENCE:]
            if steps >= cusum.h_steps:
                out.append(SeatAlarm(table, key, hole_cards, hand_id, steps / cusum.c, cusum.h, cusum.k, cusum.p0,
                                     cusum.p0 * cusum.shift, cusum.arl(cusum.p0), row[1], tuple(row[2])))
                row[:] = [0, 0, []]
        return out
