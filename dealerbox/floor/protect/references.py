"""The shuffle check's references, fitted cheaply, and the fingerprint of the model they came from.

A reference is the distribution of the kept-pairs statistic
(:mod:`~dealerbox.floor.protect.shuffle_check`) under a declared model: the shuffle,
the gathering, the memory and the game (hole cards), for one player count. Dealing
100,000 hands one at a time through :class:`~dealerbox.floor.protect.simulate.TableSim`
costs about 5 s of CPU per game, some 90 s for hold'em and Omaha at 2-10 players.
:func:`fit_reference` deals the same model many tables at once instead, each step of
the shuffle a whole-array operation (numpy), which makes a game's reference a fraction
of a second, so that every game can be fitted on the floor's first start.

The models are the same as the one-hand-at-a-time simulator's, step for step:

- a GSR riffle is a fair coin per place in the new deck: the places that came up 0
  take the top packet's cards in order, the others the bottom packet's (the number
  of zeros is the Binomial(52, 1/2) cut, and every interleaving is equally likely);
- a strip pulls blocks of 4-12 cards off the top onto a pile (block order reversed);
- a cut moves the top Binomial(52, 1/2) cards under the rest; a machine is uniform;
- the gathering puts the last hand's blocks (each seat's pile, either way up; the
  board row, as the house picks it up; the burns) in a random order above or below
  the stub.

**How a hand ended matters.** A hand that ended before the river drew fewer cards,
so it has fewer neighbours that could be kept pairs, and it leaves fewer pairs for
the next hand (no board row, fewer burns). A reference of hands played to the river
is conservative for a shorter hand: right for the per-hand alert (a cheat keeps many
pairs whatever the ending) but blind to a shuffle slightly weaker than declared,
which only shows as a sum over many hands. So a reference also holds the statistic's
distribution **per ending**: per (this hand's ending, the deck's previous hand's
ending), each the cards drawn after the deal (0: over before the flop, 4: the flop,
6: the turn, 8: the river; :func:`ending_of`), dealt from hands whose endings vary
(:data:`~dealerbox.floor.protect.simulate.REAL_ENDINGS`). The procedure check sums a
dealer's hands against these (:meth:`Reference.pmf_for`).

Pure: the caller passes a ``random.Random``; the numpy generator is seeded from it.
"""

from __future__ import annotations

import hashlib
import json
import random

import numpy as np

from dealerbox.errors import UsageError
from dealerbox.floor.protect.shuffle_check import ENDINGS, Reference, ending_after
from dealerbox.floor.protect.shuffles import STRIP_BLOCK, Gathering, Shuffle
from dealerbox.floor.protect.simulate import BOARD_DRAW, REAL_ENDINGS

__all__ = ["STATISTIC_VERSION", "REFERENCE_HANDS", "model_fingerprint", "fit_reference", "fit_references",
           "simulate_statistics", "ending_of"]

#: Bumped when the statistic or the references' layout changes: a reference fitted before
#: then has another fingerprint and is refitted, never used.
STATISTIC_VERSION = 2
#: Hands per reference: a threshold of 2e-5 needs more than 50,000 to be reachable at all.
REFERENCE_HANDS = 100_000
#: Hands dealt per simulated table beyond the warm-up (each scored against its deck's last hands).
_SCORED_PER_CHAIN = 16
#: Positions after the deal, in a hand to the river, of the board (in the order laid) and of the burns.
_BOARD_AT = (1, 2, 3, 5, 7)
_BURN_AT = (0, 4, 6)

ending_of = ending_after   # re-exported: the ending (0, 4, 6, 8) of a DealtHand


def _game_name(game) -> str:
    if game in (2, "2", "holdem", "hold'em"):
        return "holdem"
    if game in (4, "4", "omaha"):
        return "omaha"
    raise UsageError(f"game {game!r}: expected 2 (hold'em) or 4 (Omaha) hole cards")


def model_fingerprint(shuffle, gathering, game, memory) -> str:
    """A stable short hash (16 hex digits) of the model a reference is dealt from.

    *shuffle*: a :class:`Shuffle` or its procedure string; *gathering*: a :class:`Gathering`
    (ignored for a machine shuffle, which forgets the gathering); *game*: the hole cards
    per player (2 hold'em, 4 Omaha) or ``"holdem"``/``"omaha"``; *memory*: the hands each
    hand is compared with. The player count is not in it: references are kept per player
    count anyway. Two models that deal the same distribution of the statistic have the
    same fingerprint, and the statistic's version is in it too.
    """
    shuffle = shuffle if isinstance(shuffle, Shuffle) else Shuffle.parse(str(shuffle))
    model = {"version": STATISTIC_VERSION, "shuffle": str(shuffle), "game": _game_name(game),
             "memory": int(memory)}
    if not shuffle.uniform:
        model["gathering"] = {"hands_together": gathering.hands_together, "board": gathering.board,
                              "place": gathering.place}
    text = json.dumps(model, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _roles(players: int, hole_cards: int, after: int) -> tuple[np.ndarray, np.ndarray]:
    """Per place in the deck (0..51) of a hand that drew ``players x hole_cards + after``
    cards: its pile (a seat 0..players-1, the board ``players``, the burns ``players + 1``,
    the stub -1) and its index in that pile (the stub: its place)."""
    dealt = players * hole_cards
    board = [j for j in _BOARD_AT if j < after]
    burns = [j for j in _BURN_AT if j < after]
    group = np.full(52, -1, dtype=np.int16)
    index = np.arange(52, dtype=np.int16)
    for p in range(dealt):
        group[p], index[p] = p % players, p // players
    for j in range(after):
        p = dealt + j
        if j in board:
            group[p], index[p] = players, board.index(j)
        else:
            group[p], index[p] = players + 1, burns.index(j)
    return group, index


class _Model:
    """The vectorised model of one game: ``n`` tables dealt side by side."""

    def __init__(self, shuffle: Shuffle, gathering: Gathering, players: int, hole_cards: int,
                 gen: np.random.Generator, n: int):
        if not 2 <= players or players * hole_cards + BOARD_DRAW > 52:
            raise UsageError(f"{players} players of {hole_cards} hole cards do not fit one deck")
        self.shuffle, self.gathering = shuffle, gathering
        self.players, self.hole_cards, self.gen, self.n = players, hole_cards, gen, n
        self.dealt = players * hole_cards
        roles = [_roles(players, hole_cards, a) for a in ENDINGS]
        self.group = np.stack([g for g, _ in roles])   # (endings, 52)
        self.index = np.stack([i for _, i in roles])
        self.rows = np.arange(n)[:, None]

    # -- the shuffle's steps, each on every table at once

    def _take(self, deck, order):
        return np.take_along_axis(deck, order, axis=1)

    def machine(self, deck):
        return self._take(deck, np.argsort(self.gen.random(deck.shape), axis=1))

    def riffle(self, deck):
        bits = self.gen.random(deck.shape) < 0.5
        places = np.argsort(bits, axis=1, kind="stable")   # the zeros' places, then the ones'
        out = np.empty_like(deck)
        np.put_along_axis(out, places, deck, axis=1)
        return out

    def strip(self, deck):
        low, high = STRIP_BLOCK
        blocks = -(-52 // low) + 1
        ends = np.cumsum(self.gen.integers(low, high + 1, size=(self.n, blocks)), axis=1)
        block = (ends[:, :, None] <= np.arange(52)[None, None, :]).sum(axis=1)
        return self._take(deck, np.argsort(-block * 64 + np.arange(52), axis=1))

    def cut(self, deck):
        c = (self.gen.random(deck.shape) < 0.5).sum(axis=1)
        return self._take(deck, (np.arange(52)[None, :] + c[:, None]) % 52)

    def shuffled(self, deck):
        for step in self.shuffle.steps:
            deck = getattr(self, step)(deck)
        return deck

    # -- the gathering

    def gathered(self, deck, ending):
        """The deck to shuffle next: the last hand (*deck* as it was drawn, its *ending* index
        per table) gathered as the model says, above or below its stub."""
        g, w = self.group[ending], self.index[ending].astype(np.int32)
        P, n = self.players, self.n
        if self.gathering.hands_together:
            block = g.astype(np.int32)
        else:
            block = np.where(g < P, P + 2 + np.arange(52)[None, :], g).astype(np.int32)
        blocks = P + 2 + self.dealt
        rank = np.argsort(self.gen.random((n, blocks)), axis=1)   # a random order of the blocks
        flip = self.gen.random((n, P)) < 0.5                        # each seat's pile either way up
        seat = np.clip(g, 0, P - 1)
        hole_w = np.where(np.take_along_axis(flip, seat, axis=1), self.hole_cards - 1 - w, w)
        board_len = np.sum(g == P, axis=1, keepdims=True)
        if self.gathering.board == "reversed":
            reverse = np.ones((n, 1), dtype=bool)
        elif self.gathering.board == "in_order":
            reverse = np.zeros((n, 1), dtype=bool)
        else:
            reverse = self.gen.random((n, 1)) < 0.5
        board_w = np.where(reverse, board_len - 1 - w, w)
        within = np.where(g < P, hole_w, np.where(g == P, board_w, w))
        key = np.take_along_axis(rank, np.clip(block, 0, blocks - 1), axis=1) * 64 + within
        if self.gathering.place == "top":
            top = np.ones((n, 1), dtype=bool)
        elif self.gathering.place == "bottom":
            top = np.zeros((n, 1), dtype=bool)
        else:
            top = self.gen.random((n, 1)) < 0.5
        stub = np.where(top, 100_000, -100_000) + np.arange(52)[None, :]
        key = np.where(g < 0, stub, key)
        return self._take(deck, np.argsort(key, axis=1))

    # -- what a hand left together, and what the next one kept

    def together(self, deck, ending):
        """Per card (0..51): its pile in the hand drawn from *deck* and its index there."""
        g_card = np.empty_like(deck, dtype=np.int16)
        w_card = np.empty_like(deck, dtype=np.int16)
        np.put_along_axis(g_card, deck, self.group[ending], axis=1)
        np.put_along_axis(w_card, deck, self.index[ending], axis=1)
        return g_card, w_card

    def kept(self, deck, ending, history):
        """Per table: neighbours in the drawn part of *deck* that were together in *history*."""
        x, y = deck[:, :-1], deck[:, 1:]
        drawn = self.dealt + np.asarray(ENDINGS)[ending]
        valid = np.arange(51)[None, :] < (drawn - 1)[:, None]
        g, w = history
        gx, gy = np.take_along_axis(g, x, axis=1), np.take_along_axis(g, y, axis=1)
        wx, wy = np.take_along_axis(w, x, axis=1), np.take_along_axis(w, y, axis=1)
        together = (gx == gy) & (gx >= 0) & ((gx < self.players) | (np.abs(wx - wy) == 1))
        return np.sum(together & valid, axis=1)


def simulate_statistics(shuffle: Shuffle, gathering: Gathering, memory: int, hole_cards: int, players: int,
                        rng: random.Random, hands: int, endings=None):
    """The statistic of about *hands* hands dealt through the model, each against its deck's
    last *memory* hands, with the endings of this hand and of the deck's hand before.

    *endings*: weights of the cards drawn after the deal ``{0: w, 4: w, 6: w, 8: w}`` (None:
    every hand to the river). Returns three int arrays: statistic, ending now, ending before.
    """
    if memory < 1:
        raise UsageError("memory must be at least 1")
    gen = np.random.default_rng(rng.getrandbits(128))
    n = max(1, -(-hands // _SCORED_PER_CHAIN))
    model = _Model(shuffle, gathering, players, hole_cards, gen, n)
    weights = np.array([float((endings or {8: 1}).get(a, 0.0)) for a in ENDINGS])
    if weights.sum() <= 0:
        raise UsageError(f"endings {endings!r}: no weight on any of {list(ENDINGS)}")
    weights = weights / weights.sum()
    deck = np.argsort(gen.random((n, 52)), axis=1).astype(np.int16)
    history: list = []
    ending_before = None
    stats, now, before = [], [], []
    warm = memory + 1
    for t in range(warm + _SCORED_PER_CHAIN):
        ending = gen.choice(len(ENDINGS), size=n, p=weights)
        if t:
            deck = model.gathered(deck, ending_before)
        deck = model.shuffled(deck)
        if t >= warm:
            stats.append(np.max(np.stack([model.kept(deck, ending, h) for h in history]), axis=0))
            now.append(ending)
            before.append(ending_before)
        history = (history + [model.together(deck, ending)])[-memory:]
        ending_before = ending
    ends = np.asarray(ENDINGS)
    return (np.concatenate(stats)[:hands], ends[np.concatenate(now)][:hands],
            ends[np.concatenate(before)][:hands])


def fit_reference(shuffle: Shuffle, gathering: Gathering, memory: int, hole_cards: int, players: int,
                  rng: random.Random, *, hands: int = REFERENCE_HANDS, ending_hands: int | None = None,
                  endings=REAL_ENDINGS) -> Reference:
    """The reference of one game (*players* x *hole_cards*) under the declared model.

    Its ``counts`` (the per-hand alert's tail) come from *hands* hands to the river; its
    ``by_ending`` from *ending_hands* (default: half of *hands*) hands ending as *endings* weighs
    them, kept per (ending now, ending before) and per ending now alone. ``fingerprint``
    is :func:`model_fingerprint` of the model. About 1 s of CPU at the default sizes for a
    machine, under 2 s for a five-step hand shuffle (the hand-by-hand simulator: about 5 s
    for the river's 100,000 alone).
    """
    fingerprint = model_fingerprint(shuffle, gathering, hole_cards, memory)
    stats, _, _ = simulate_statistics(shuffle, gathering, memory, hole_cards, players, rng, hands)
    model = str(shuffle) if shuffle.uniform else f"{shuffle}; gathering: {gathering}"
    ending_hands = hands // 2 if ending_hands is None else ending_hands
    cells = {}
    if ending_hands:
        e_stats, e_now, e_before = simulate_statistics(shuffle, gathering, memory, hole_cards, players, rng,
                                                       ending_hands, endings)
        for a in ENDINGS:
            mine = e_now == a
            if mine.any():
                cells[(a, None)] = _counts(e_stats[mine])
            for b in ENDINGS:
                both = mine & (e_before == b)
                if both.any():
                    cells[(a, b)] = _counts(e_stats[both])
    return Reference(_counts(stats), f"{hands} hands simulated under {model}", fingerprint=fingerprint,
                     by_ending=tuple(sorted(cells.items(), key=lambda kv: (kv[0][0], -1 if kv[0][1] is None
                                                                           else kv[0][1]))))


def fit_references(shuffle: Shuffle, gathering: Gathering, memory: int, games, rng: random.Random,
                   **kw) -> dict:
    """:func:`fit_reference` for each ``(players, hole_cards)`` of *games*: a dict keyed by them."""
    return {(p, h): fit_reference(shuffle, gathering, memory, h, p, rng, **kw) for p, h in games}


def _counts(values) -> tuple[int, ...]:
    return tuple(int(c) for c in np.bincount(np.asarray(values, dtype=np.int64)))
