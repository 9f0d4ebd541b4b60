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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from dealerbox.errors import UsageError

__all__ = ["reference_value", "arl", "Cusum", "ChartFinding", "DealerCharts"]


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
        h = c
        while arl(p0, c, h) < target_arl:
            h += 1
        return cls(p0, shift, c, h)

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
