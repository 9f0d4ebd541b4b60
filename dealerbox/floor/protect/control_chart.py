"""Is a dealer's error rate out of line with the room? A Bernoulli CUSUM per dealer.

Each hand a dealer deals is one Bernoulli trial: x = 1 when the hand had an
irregularity, a misdeal or a wrong correction (the floor's per-hand counts), else 0.
In control the dealer's rate is the room's, p0; the chart is tuned to detect a
shift to p1 = ``shift`` x p0 (3x by default). The CUSUM (Page 1954) of the
log-likelihood ratio, scaled so that a 1 adds 1, is

    S_t = max(0, S_{t-1} + x_t - k),  k = ln((1-p0)/(1-p1)) / ln(p1(1-p0) / (p0(1-p1)))

and the dealer is out of control when S_t >= h; the chart then starts again at 0.

**ARL, exactly, by a Markov chain.** k is rounded to 1/c for a whole c, so that S
lives on the lattice of multiples of 1/c: a 1 moves it up c-1 steps, a 0 down one.
The states below h form a Markov chain (Brook & Evans 1972) whose expected time to
absorption from 0, the average run length (ARL), solves (I - Q) L = 1, computed
here exactly (no simulation) for the rounded k; the only approximation is that
rounding, stated on the chart as the k actually used. h is the smallest lattice
value whose in-control ARL reaches the target (e.g. 24,000 hands: 0.01 false alarms
per dealer per 240-hand shift).

**A baseline of the dealer's own** (:class:`OwnBaselineCharts`). Dealers differ: in a
room whose dealers err at 1-3 % of hands, a chart in control at the room's 2 % is
out of control for every dealer above it, and finds a 1 % dealer tripling late. So
each dealer's chart is in control at a baseline of their own: the dealers' rates are
taken as drawn from a Beta(a, b) (:class:`RoomPrior`, fitted from the dealers'
counts by the method of moments, or stated), and a dealer who dealt n hands with x
errors has the posterior Beta(a + x, b + n - x) (empirical Bayes, beta-binomial):
while n is small against a + b the baseline is the room's, and it becomes the
dealer's own as their hands add up. The chart's p0 is the posterior's upper
``quantile_z`` bound (mean + z sd), not its mean, so that a dealer whose rate is not
known yet is not held to a rate below their own; the baseline is refreshed every
``refresh`` hands of the dealer (a shift), from the hands before, so that a jump is
judged against the dealer's rate before it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

from dealerbox.errors import UsageError

__all__ = ["reference_value", "arl", "smallest_h", "Cusum", "ChartFinding", "DealerCharts", "RoomPrior",
           "OwnBaselineCharts"]


def reference_value(p0: float, p1: float) -> float:
    """The CUSUM's k for a shift from rate *p0* to *p1* (the log-likelihood ratio, scaled)."""
    return math.log((1 - p0) / (1 - p1)) / math.log(p1 * (1 - p0) / (p0 * (1 - p1)))


def arl(p: float, c: int, h_steps: int) -> float:
    """The average run length of S_t = max(0, S + x - 1/c), alarm at S >= h_steps/c, when x is 1
    with probability *p*: the Markov chain on states 0..h_steps-1 solved for its absorption time.

    Row s of I - Q: 1 on s, -p on s+c-1 (when below h_steps), -(1-p) on max(0, s-1).
    Only the one subdiagonal lies below the diagonal, so elimination row by row is exact
    and costs h_steps x c.
    """
    n, q = h_steps, 1 - p
    rows = [dict() for _ in range(n)]
    rhs = [1.0] * n
    for s in range(n):
        rows[s][s] = rows[s].get(s, 0.0) + 1.0
        up = s + c - 1
        if up < n:
            rows[s][up] = rows[s].get(up, 0.0) - p
        down = max(0, s - 1)
        rows[s][down] = rows[s].get(down, 0.0) - q
    for s in range(1, n):   # eliminate the subdiagonal (s, s-1) with the row above
        factor = rows[s].pop(s - 1, 0.0) / rows[s - 1][s - 1]
        if factor:
            for col, v in rows[s - 1].items():
                if col != s - 1:
                    rows[s][col] = rows[s].get(col, 0.0) - factor * v
            rhs[s] -= factor * rhs[s - 1]
    out = [0.0] * n
    for s in range(n - 1, -1, -1):   # back substitution: the rows are now upper triangular
        out[s] = (rhs[s] - sum(v * out[col] for col, v in rows[s].items() if col > s)) / rows[s][s]
    return out[0]


def smallest_h(p0: float, c: int, target_arl: float) -> int:
    """The smallest h (in lattice steps of 1/c, at least c) whose in-control ARL at *p0* reaches
    *target_arl*: the ARL grows with h, so doubling then bisection finds it in a few solves."""
    low, high = c - 1, c
    while arl(p0, c, high) < target_arl:
        low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        if arl(p0, c, mid) < target_arl:
            low = mid
        else:
            high = mid
    return high


@dataclass(frozen=True, slots=True)
class Cusum:
    """A Bernoulli CUSUM's parameters: room rate p0, the shift to detect, k (rounded to 1/c), h."""

    p0: float
    shift: float
    c: int
    h_steps: int

    @classmethod
    def design(cls, p0: float, *, shift: float = 3.0, target_arl: float = 24_000.0) -> "Cusum":
        """The chart detecting p0 -> shift x p0 whose in-control ARL first reaches *target_arl* hands."""
        p1 = shift * p0
        if not 0 < p0 < p1 < 1:
            raise UsageError(f"the room rate {p0} and {shift}x it must both lie strictly between 0 and 1")
        c = max(1, round(1 / reference_value(p0, p1)))
        return cls(p0, shift, c, smallest_h(p0, c, target_arl))

    @property
    def k(self) -> float:
        return 1 / self.c

    @property
    def h(self) -> float:
        return self.h_steps / self.c

    def arl(self, p: float) -> float:
        """The average run length in hands when the dealer's true rate is *p*."""
        return arl(p, self.c, self.h_steps)

    def step(self, s: int, x: bool) -> int:
        """The next chart value in lattice steps (of 1/c) after a hand with (*x*) or without an error."""
        return s + self.c - 1 if x else max(0, s - 1)


@dataclass(frozen=True, slots=True)
class ChartFinding:
    """A dealer out of control: the chart crossed h at this hand."""

    dealer: str
    hand_id: object
    value: float
    h: float
    k: float
    p0: float
    shift: float
    in_control_arl: float


@dataclass
class DealerCharts:
    """One chart per dealer; feed each hand's dealer and whether it had an error."""

    cusum: Cusum
    values: dict = field(default_factory=dict)      # dealer -> chart value now (lattice steps)
    paths: dict = field(default_factory=dict)       # dealer -> every value, for the dealer's page

    def feed(self, dealer: str, error: bool, hand_id=None) -> ChartFinding | None:
        s = self.cusum.step(self.values.get(dealer, 0), error)
        self.paths.setdefault(dealer, []).append(s / self.cusum.c)
        if s >= self.cusum.h_steps:
            self.values[dealer] = 0   # the chart starts again after an alarm
            return ChartFinding(dealer, hand_id, s / self.cusum.c, self.cusum.h, self.cusum.k, self.cusum.p0,
                                self.cusum.shift, self.cusum.arl(self.cusum.p0))
        self.values[dealer] = s
        return None


@dataclass(frozen=True, slots=True)
class RoomPrior:
    """The spread of the dealers' own error rates over the room: Beta(a, b)."""

    a: float
    b: float

    @classmethod
    def of(cls, mean: float, spread: float) -> "RoomPrior":
        """The Beta of this *mean* and standard deviation *spread* (a room of dealers at 1-3 %,
        evenly: mean 0.02, spread 0.02 / sqrt(12), about 0.0058)."""
        if not 0 < mean < 1 or not 0 < spread ** 2 < mean * (1 - mean):
            raise UsageError(f"a room rate {mean} with spread {spread}: expected 0 < spread^2 < mean (1 - mean)")
        strength = mean * (1 - mean) / spread ** 2 - 1
        return cls(mean * strength, (1 - mean) * strength)

    @classmethod
    def fit(cls, dealers, *, default: "RoomPrior", least_hands: int = 500) -> "RoomPrior":
        """The method-of-moments Beta of *dealers* (``(hands, errors)`` each; those with fewer than
        *least_hands* are left out): the spread of their rates less what chance alone spreads them by.
        *default* when fewer than 5 dealers qualify, or when chance explains all of the spread."""
        rows = [(n, x) for n, x in dealers if n >= least_hands]
        if len(rows) < 5:
            return default
        mean = sum(x for _, x in rows) / sum(n for n, _ in rows)
        if not 0 < mean < 1:
            return default
        rates = [x / n for n, x in rows]
        observed = sum((r - mean) ** 2 for r in rates) / (len(rows) - 1)
        chance = sum(mean * (1 - mean) / n for n, _ in rows) / len(rows)
        between = observed - chance
        if between <= 0:
            return default
        return cls.of(mean, math.sqrt(between))

    @property
    def mean(self) -> float:
        return self.a / (self.a + self.b)

    def baseline(self, hands: int, errors: int, z: float = 0.5) -> float:
        """A dealer's in-control rate: the posterior's mean plus *z* standard deviations."""
        a, b = self.a + errors, self.b + hands - errors
        mean = a / (a + b)
        sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
        return mean + z * sd


@functools.lru_cache(maxsize=512)
def _own_design(p0: float, shift: float, target_arl: float) -> Cusum:
    return Cusum.design(p0, shift=shift, target_arl=target_arl)


@dataclass
class OwnBaselineCharts:
    """One CUSUM per dealer, each in control at the dealer's own baseline (the module docstring).

    ``dealers``: dealer -> ``[steps, hands, errors, baseline hands, baseline errors, hands since
    the refresh]`` (JSON-able); :meth:`feed` as :meth:`DealerCharts.feed`.
    """

    prior: RoomPrior
    shift: float = 3.0
    target_arl: float = 48_000.0
    refresh: int = 240
    quantile_z: float = 0.5
    dealers: dict = field(default_factory=dict)

    def design(self, dealer: str) -> Cusum:
        """The dealer's chart now: in control at the baseline, rounded up to 1 % of itself (so
        that designs are shared between dealers of nearly the same baseline)."""
        row = self.dealers.get(dealer) or [0, 0, 0, 0, 0, 0]
        p0 = self.prior.baseline(row[3], row[4], self.quantile_z)
        grid = 1.01 ** math.ceil(math.log(p0) / math.log(1.01))
        p0 = min(grid, 0.999 / self.shift)
        return _own_design(round(p0, 8), self.shift, self.target_arl)

    def feed(self, dealer: str, error: bool, hand_id=None) -> ChartFinding | None:
        row = self.dealers.setdefault(dealer, [0, 0, 0, 0, 0, 0])
        cusum = self.design(dealer)
        s = cusum.step(row[0], error)
        row[1] += 1
        row[2] += int(bool(error))
        row[5] += 1
        if s >= cusum.h_steps:
            row[0] = 0
            found = ChartFinding(dealer, hand_id, s / cusum.c, cusum.h, cusum.k, cusum.p0, cusum.shift,
                                 cusum.arl(cusum.p0))
        else:
            row[0], found = s, None
        if row[5] >= self.refresh:   # the next hands are judged against every hand up to here
            row[3], row[4], row[5] = row[1], row[2], 0
            c = self.design(dealer).c
            row[0] = round(row[0] * c / cusum.c)   # the same value on the new design's lattice
        return found
