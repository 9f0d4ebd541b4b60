"""Was the deck really shuffled? Each new hand against what its deck's last hands left together.

**The statistic: kept pairs.** A hand leaves cards side by side for the next
gathering: each seat's hole cards, the board in the order laid, the burns
(:func:`~dealerbox.floor.protect.hand.together_pairs`). The next hand of the same
deck (decks told apart by the registry, so two decks dealt in turn are each compared
with their own history) is scored by how many neighbours in its draw order were
such a pair, in either order, in one of the deck's last ``memory`` hands. The draw
order is the deck's own order from the top, so this counts exactly the adjacencies
a shuffle failed to break and a hand happened to draw.

Why this one: it needs no assumption about where the dealer put the gathered cards
(an unshuffled deck shows its pairs wherever they come up), it is large for every
cheat that keeps order (no shuffle, a false riffle keeping a top slug, a machine
that only cuts), and small under a fair shuffle: under a uniform permutation a given
pair is adjacent within the first m of 52 cards with probability 2(m-1)/(52*51)
(:func:`machine_pair_adjacent`), about 0.019 for 26 cards. Under a hand shuffle a
pair survives far more often (a GSR riffle of a 52-card deck keeps two neighbours
together about half the time), which is why the reference is computed through the
declared model and never guessed.

**The p-value** of a hand is the tail probability, under the declared model, of a
statistic at least as large: ``(1 + #{reference >= k}) / (1 + n)`` over ``n``
reference hands dealt through :class:`~dealerbox.floor.protect.simulate.TableSim`
(a Monte Carlo p-value: never 0, its resolution ``1 / (1 + n)`` stated on the
finding), or over a house's own fair hands after :meth:`ShuffleCheck.fit`. A
Monte Carlo p-value is a valid test as it stands (Besag & Clifford 1989): when the
shuffle is the declared one, P(p <= a) <= a for any a that is a multiple of the
resolution (on average over the reference's own random draw), so the false-alarm
rate is bounded by the threshold, not estimated; a reference needs more than
1/threshold hands for the threshold to be reachable at all.

**A procedure finding** (a shuffle weaker than declared: two riffles where three are
taught) is a sustained excess, not one hand: a dealer's kept pairs summed over
blocks of ``block`` hands, against the block sum's distribution (the per-hand
reference convolved with itself, treating hands as independent). It has its own
threshold and is counted apart from cheat alerts.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field, replace

from dealerbox.errors import UsageError
from dealerbox.floor.protect.hand import DealtHand, pair, together_pairs
from dealerbox.floor.protect.shuffles import Gathering, Shuffle
from dealerbox.floor.protect.simulate import TableSim

__all__ = ["kept_pairs", "machine_pair_adjacent", "Reference", "ShuffleFinding", "ShuffleCheck",
           "ProcedureCheck", "convolve", "simulated_statistics", "ENDINGS", "ending_after"]

#: How far a hand went, as the cards drawn after the deal: 0 (over before the flop), 4 (burn
#: and flop), 6 (and the turn with its burn), 8 (to the river).
ENDINGS = (0, 4, 6, 8)


def ending_after(hand: DealtHand) -> int:
    """The ending of *hand* (one of :data:`ENDINGS`): its cards drawn after the deal, rounded
    down to the last street it reached (a hand cut short inside a street counts as the one before)."""
    after = len(hand.draw) - hand.dealt
    return max((e for e in ENDINGS if e <= after), default=0)


def kept_pairs(together, hand: DealtHand) -> int:
    """How many neighbours in *hand*'s draw order are a pair of *together* (either order)."""
    draw = hand.draw
    return sum(1 for a, b in zip(draw, draw[1:]) if pair(a, b) in together)


def machine_pair_adjacent(m: int, n: int = 52) -> float:
    """Under a uniform shuffle of *n* cards, the probability that two given cards come out
    side by side (either order) among the first *m* drawn: 2(m-1) ordered places of n(n-1)."""
    return 2 * (m - 1) / (n * (n - 1)) if m >= 2 else 0.0


@dataclass(frozen=True, slots=True)
class Reference:
    """The distribution of the statistic under the declared model, as counts of values.

    ``counts`` is what the per-hand alert reads (hands to the river: conservative for a
    hand that ended sooner). ``by_ending`` holds, where the reference was fitted with
    endings (:func:`~dealerbox.floor.protect.references.fit_reference`, or a house's own
    hands), the counts per (this hand's ending, its deck's previous hand's ending, None
    when unknown), as ``((now, before), counts)`` pairs; ``fingerprint`` names the model
    (:func:`~dealerbox.floor.protect.references.model_fingerprint`; "" when unknown).
    """

    counts: tuple[int, ...]   # counts[k]: reference hands with statistic k
    source: str
    fingerprint: str = ""
    by_ending: tuple = ()

    def to_dict(self) -> dict:
        """The reference as plain JSON-able data (:meth:`from_dict` reads it back)."""
        return {"counts": list(self.counts), "source": self.source, "fingerprint": self.fingerprint,
                "by_ending": [[now, before, list(c)] for (now, before), c in self.by_ending]}

    @classmethod
    def from_dict(cls, d: dict) -> "Reference":
        """The reference :meth:`to_dict` wrote (older stored ones have no fingerprint or endings)."""
        cells = tuple(((int(now), None if before is None else int(before)), tuple(int(x) for x in c))
                      for now, before, c in d.get("by_ending", ()))
        return cls(tuple(int(x) for x in d["counts"]), str(d["source"]), str(d.get("fingerprint", "")), cells)

    def pmf_for(self, now: int | None = None, before: int | None = None) -> list[float]:
        """The statistic's pmf for a hand that ended *now* after a hand of its deck that ended
        *before* (:data:`ENDINGS`): the cell fitted for both, else for *now* alone, else
        :meth:`pmf` (hands to the river)."""
        cells = dict(self.by_ending)
        for key in ((now, before), (now, None)):
            counts = cells.get(key)
            if counts and sum(counts):
                total = sum(counts)
                return [c / total for c in counts]
        return self.pmf()

    @classmethod
    def of_values(cls, values, source: str) -> "Reference":
        values = list(values)
        counts = [0] * (max(values, default=0) + 1)
        for v in values:
            counts[v] += 1
        return cls(tuple(counts), source)

    @property
    def n(self) -> int:
        return sum(self.counts)

    @property
    def resolution(self) -> float:
        """The smallest p-value this reference can give: 1 / (1 + n)."""
        return 1.0 / (1 + self.n)

    def p_value(self, k: int) -> float:
        """P(statistic >= k) as a Monte Carlo p-value: (1 + #{>= k}) / (1 + n)."""
        return (1 + sum(self.counts[k:])) / (1 + self.n)

    def critical(self, threshold: float) -> int | None:
        """The smallest statistic whose p-value is below *threshold* (None: not reachable)."""
        for k in range(len(self.counts) + 1):
            if self.p_value(k) < threshold:
                return k
        return None

    def pmf(self) -> list[float]:
        n = self.n
        return [c / n for c in self.counts]


def convolve(a: list[float], b: list[float]) -> list[float]:
    """The distribution of the sum of two independent counts with pmfs *a* and *b*."""
    out = [0.0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


@dataclass(frozen=True, slots=True)
class ShuffleFinding:
    """One hand (``kind="shuffle"``) or one dealer's block of hands (``kind="procedure"``)
    scored against the declared shuffle; ``alert`` when ``p_value < threshold``."""

    kind: str
    table: str
    deck: str
    dealer: str | None
    hand_ids: tuple
    statistic: int
    p_value: float
    resolution: float
    threshold: float
    model: str
    reference: str

    @property
    def alert(self) -> bool:
        return self.p_value < self.threshold


@dataclass
class ShuffleCheck:
    """The shuffle check of a room, configured with the declared model.

    Feed every hand of every table in order to :meth:`check`; it keeps each
    (table, deck)'s last ``memory`` hands. References are per (players, hole cards),
    computed by :meth:`calibrate` or fitted from house hands by :meth:`fit`.
    """

    shuffle: Shuffle
    gathering: Gathering = Gathering()
    #: Per hand: the shuffle's share of the room's false-alarm budget, the same default as
    #: ``ProtectConfig.threshold`` (:mod:`~dealerbox.floor.protect.budget` works out every
    #: check's share for the configured room).
    threshold: float = 2e-5
    memory: int = 2
    references: dict = field(default_factory=dict)
    _history: dict = field(default_factory=dict, repr=False)
    #: (table, deck) -> the ending of the deck's last hand (:meth:`statistic` keeps it).
    _endings: dict = field(default_factory=dict, repr=False)

    @property
    def model(self) -> str:
        if self.shuffle.uniform:
            return f"{self.shuffle}"
        return f"{self.shuffle}; gathering: {self.gathering}"

    def calibrate(self, players: int, hole_cards: int, rng: random.Random, hands: int) -> Reference:
        """Deal *hands* hands through the declared model and keep their statistic as the reference."""
        reference = Reference.of_values(
            simulated_statistics(TableSim(self.shuffle, rng, players=players, hole_cards=hole_cards,
                                          gathering=self.gathering), hands, self.memory),
            f"{hands} hands simulated under {self.model}")
        self.references[(players, hole_cards)] = reference
        return reference

    def fit(self, fair_hands) -> "ShuffleCheck":
        """A check whose references are a house's own recorded fair hands (the empirical tail),
        per (players, hole cards), with the same hands kept per ending as they really ended
        (``by_ending``); the declared threshold stays."""
        values: dict[tuple[int, int], list[int]] = {}
        cells: dict[tuple[int, int], dict] = {}
        probe = replace(self, references={}, _history={}, _endings={})
        for hand in fair_hands:
            k, now, before = probe.scored(hand)
            if k is not None:
                cfg = (hand.players, hand.hole_cards)
                values.setdefault(cfg, []).append(k)
                for key in ((now, before), (now, None)):
                    cells.setdefault(cfg, {}).setdefault(key, []).append(k)
        refs = {cfg: Reference(Reference.of_values(v, "").counts, f"{len(v)} recorded house hands",
                               by_ending=tuple(sorted(((key, Reference.of_values(ks, "").counts)
                                                       for key, ks in cells.get(cfg, {}).items()),
                                                      key=lambda kv: (kv[0][0], -1 if kv[0][1] is None
                                                                      else kv[0][1]))))
                for cfg, v in values.items()}
        return replace(self, references=refs, _history={}, _endings={})

    def statistic(self, hand: DealtHand) -> int | None:
        """Kept pairs of *hand* against its deck's history (None: no history yet); remembers *hand*."""
        return self.scored(hand)[0]

    def scored(self, hand: DealtHand) -> tuple[int | None, int, int | None]:
        """:meth:`statistic` with the endings its reference cell is chosen by: (kept pairs or
        None, this hand's ending, the ending of its deck's last hand or None when not known)."""
        key = (hand.table, hand.deck)
        history = self._history.setdefault(key, deque(maxlen=self.memory))
        k = max(kept_pairs(together, hand) for together in history) if history else None
        history.append(together_pairs(hand))
        now = ending_after(hand)
        before = self._endings.get(key)
        self._endings[key] = now
        return k, now, before

    def check(self, hand: DealtHand) -> ShuffleFinding | None:
        """The finding of *hand* (None when its deck has no history at this table yet)."""
        k = self.statistic(hand)
        if k is None:
            return None
        reference = self.references.get((hand.players, hand.hole_cards))
        if reference is None:
            raise UsageError(f"no reference for {hand.players} players, {hand.hole_cards} hole cards: "
                           f"calibrate or fit first")
        return ShuffleFinding("shuffle", hand.table, hand.deck, hand.dealer, (hand.hand_id,), k,
                              reference.p_value(k), reference.resolution, self.threshold, self.model,
                              reference.source)


@dataclass
class ProcedureCheck:
    """Per dealer, blocks of ``block`` shuffle findings summed against the declared block sum.

    Feed it the shuffle findings of :class:`ShuffleCheck` (with the check, for its
    references); a block that closes gives a ``procedure`` finding.
    """

    check: ShuffleCheck
    block: int = 50
    threshold: float = 1e-4
    _open: dict = field(default_factory=dict, repr=False)

    def feed(self, finding: ShuffleFinding, players: int, hole_cards: int, now: int | None = None,
             before: int | None = None) -> ShuffleFinding | None:
        """Add one scored hand to its dealer's block; *now* and *before*: the endings of the hand
        and of its deck's hand before (:meth:`ShuffleCheck.scored`; None: to the river's reference)."""
        rows = self._open.setdefault(finding.dealer, [])
        rows.append((finding, (players, hole_cards, now, before)))
        if len(rows) < self.block:
            return None
        del self._open[finding.dealer]
        return self.score([f for f, _ in rows], [cfg for _, cfg in rows])

    def score(self, findings: list[ShuffleFinding], configs: list[tuple]) -> ShuffleFinding:
        """The procedure finding of one block: P(block sum >= observed) under the declared model.

        Each config is ``(players, hole_cards)`` (the reference of hands to the river) or
        ``(players, hole_cards, ending now, ending before)``: the hand's own cell
        (:meth:`Reference.pmf_for`), so that hands that ended early are summed against
        what such hands keep, not against hands to the river."""
        pmf = [1.0]
        for cfg in configs:
            reference = self.check.references[tuple(cfg[:2])]
            part = reference.pmf_for(cfg[2], cfg[3] if len(cfg) > 3 else None) if len(cfg) > 2 \
                else reference.pmf()
            pmf = convolve(pmf, part)
        total = sum(f.statistic for f in findings)
        p = min(1.0, sum(pmf[total:]))
        first = findings[0]
        return ShuffleFinding("procedure", first.table, first.deck, first.dealer,
                              tuple(i for f in findings for i in f.hand_ids), total, p,
                              max(f.resolution for f in findings), self.threshold, first.model,
                              f"block of {len(findings)} hands, per-hand reference convolved")


def simulated_statistics(sim: TableSim, hands: int, memory: int) -> list[int]:
    """The statistic of *hands* hands dealt by *sim*, each against its deck's last *memory* hands
    (the first hand of each deck, having none, is dealt but not scored)."""
    check = ShuffleCheck(Shuffle(("machine",)), memory=memory)
    out = []
    while len(out) < hands:
        k = check.statistic(sim.deal())
        if k is not None:
            out.append(k)
    return out
