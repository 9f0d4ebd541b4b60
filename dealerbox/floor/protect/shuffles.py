"""The declared shuffle models, and how a dealer gathers the cards between hands.

A house declares its shuffle in the floor config: a machine, or the procedure its
dealers are taught, written as steps (``"riffle riffle strip riffle cut"``). Each
step is a random map of a deck (a list, top card first) to a new list:

- ``machine``: a uniform random permutation (what a working shuffling machine is
  certified to give);
- ``riffle``: the Gilbert-Shannon-Reeds model (Bayer & Diaconis 1992): cut after
  Binomial(n, 1/2) cards, then let cards fall one at a time from either packet with
  probability proportional to the packet's size, which makes every interleaving of
  the two packets equally likely;
- ``strip``: an overhand-like strip: blocks of a random size (uniform in
  ``STRIP_BLOCK``) are pulled off the top onto a new pile, so the blocks come out in
  reverse order, each keeping its own order;
- ``cut``: the top Binomial(n, 1/2) cards go under the rest.

The box never sees how the cards are gathered between hands; :class:`Gathering`
is the assumption, with its knobs, under which a hand shuffle's false-alarm rate is
computed (a machine's uniform permutation forgets the gathering entirely).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from dealerbox.errors import ConfigError

__all__ = ["STEPS", "STRIP_BLOCK", "Shuffle", "Gathering", "riffle", "strip", "cut", "machine"]

#: Block sizes of a strip, inclusive: a dealer's strip pulls off a few cards at a time.
STRIP_BLOCK = (4, 12)


def _binomial_half(n: int, rng: random.Random) -> int:
    """Binomial(n, 1/2): the number of heads in n fair coins (one random bit each)."""
    return rng.getrandbits(n).bit_count() if n else 0


def machine(deck: list, rng: random.Random) -> list:
    """A uniform random permutation of *deck*."""
    out = list(deck)
    rng.shuffle(out)
    return out


def riffle(deck: list, rng: random.Random) -> list:
    """One Gilbert-Shannon-Reeds riffle of *deck*."""
    c = _binomial_half(len(deck), rng)
    left, right = deck[:c], deck[c:]
    out = []
    i = j = 0
    nl, nr = len(left), len(right)
    while i < nl and j < nr:
        # The next card comes from a packet with probability proportional to what it holds.
        if rng.random() * ((nl - i) + (nr - j)) < nl - i:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    out.extend(left[i:])
    out.extend(right[j:])
    return out


def strip(deck: list, rng: random.Random, block: tuple[int, int] = STRIP_BLOCK) -> list:
    """An overhand-like strip: blocks off the top onto a new pile (block order reversed)."""
    blocks = []
    i = 0
    while i < len(deck):
        size = rng.randint(*block)
        blocks.append(deck[i:i + size])
        i += size
    out = []
    for b in reversed(blocks):
        out.extend(b)
    return out


def cut(deck: list, rng: random.Random) -> list:
    """A random cut: the top Binomial(n, 1/2) cards go under the rest."""
    c = _binomial_half(len(deck), rng)
    return deck[c:] + deck[:c]


STEPS = {"machine": machine, "riffle": riffle, "strip": strip, "cut": cut}


@dataclass(frozen=True, slots=True)
class Shuffle:
    """A declared shuffle: its steps, in order (``Shuffle.parse("riffle riffle cut")``)."""

    steps: tuple[str, ...]

    @classmethod
    def parse(cls, procedure: str, *, where: str = "protect", key: str = "shuffle") -> "Shuffle":
        """The shuffle a procedure string declares; :class:`ConfigError` naming a step that is none."""
        steps = tuple(procedure.split()) if isinstance(procedure, str) else ()
        if not steps or any(s not in STEPS for s in steps):
            raise ConfigError(where, key, f"steps of {sorted(STEPS)} separated by spaces", procedure)
        return cls(steps)

    @property
    def uniform(self) -> bool:
        """True when the shuffle is a machine's: the result does not depend on the deck's order."""
        return "machine" in self.steps

    def __call__(self, deck: list, rng: random.Random) -> list:
        for step in self.steps:
            deck = STEPS[step](deck, rng)
        return deck

    def __str__(self) -> str:
        return " ".join(self.steps)


#: Where the gathered cards go, and how the board is picked up: the knobs' values.
PLACES = ("top", "bottom", "either")
BOARDS = ("in_order", "reversed", "either")


@dataclass(frozen=True, slots=True)
class Gathering:
    """How a dealer gathers a hand's cards before shuffling (an assumption: the box cannot see it).

    The muck is a pile of blocks in a random order (the order players folded): each
    seat's hole cards (kept together when ``hands_together``, else loose single cards),
    the board row (picked up ``board`` = in the order laid, reversed, or either at
    random) and the burn pile. The gathered pile goes on ``place`` of the stub (the
    undealt cards, kept together in their order): on top, below, or either at random.
    """

    hands_together: bool = True
    board: str = "either"
    place: str = "either"

    def __post_init__(self):
        if self.board not in BOARDS:
            raise ConfigError("protect", "gathering.board", f"one of {list(BOARDS)}", self.board)
        if self.place not in PLACES:
            raise ConfigError("protect", "gathering.place", f"one of {list(PLACES)}", self.place)

    def __call__(self, holes, board, burns, stub, rng: random.Random) -> list:
        """The deck, top card first, the dealer shuffles next."""
        blocks = []
        for cards in holes:
            cards = list(cards)
            if rng.random() < 0.5:  # a folded pile lands either way up
                cards.reverse()
            if self.hands_together:
                blocks.append(cards)
            else:
                blocks.extend([c] for c in cards)
        row = list(board)
        if self.board == "reversed" or (self.board == "either" and rng.random() < 0.5):
            row.reverse()
        blocks.append(row)
        blocks.append(list(burns))
        rng.shuffle(blocks)
        gathered = [c for b in blocks for c in b]
        on_top = self.place == "top" or (self.place == "either" and rng.random() < 0.5)
        return gathered + list(stub) if on_top else list(stub) + gathered

    def __str__(self) -> str:
        hands = "hands kept together" if self.hands_together else "hands loose"
        return f"{hands}, board {self.board.replace('_', ' ')}, gathered cards {self.place} of the stub"
