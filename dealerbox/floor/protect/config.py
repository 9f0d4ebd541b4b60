"""What a house declares for game protection: ``[protect]`` of ``floor.toml``
(read by :func:`dealerbox.floor.operating.settings.load_protect`; docs/floor/surveillance.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from dealerbox.floor.telling.games import GAMES_WORDS, game_words
from dealerbox.floor.protect.references import model_fingerprint
from dealerbox.floor.protect.seat_luck import OMAHA_PAIR_RANKS
from dealerbox.floor.protect.shuffles import Gathering, Shuffle

__all__ = ["ProtectConfig", "SHIFT_S", "PREMIUM", "ALL_PLAYERS", "GAMES_WORDS", "game_words"]

#: A shift: the default window of the seat-luck check.
SHIFT_S = 8 * 3600.0
#: The hold'em starting hands seat luck calls strong by default: AA, KK, QQ, AK suited.
PREMIUM = frozenset({"AA", "KK", "QQ", "AKs"})
#: Every player count a flop game is dealt at: each one needs a reference of its own.
ALL_PLAYERS = tuple(range(2, 11))


@dataclass(frozen=True)
class ProtectConfig:
    """The declared model and the checks' thresholds (defaults: a machine shuffle)."""

    #: The house's shuffle: ``machine``, or its procedure (``riffle riffle strip riffle cut``).
    shuffle: Shuffle = Shuffle(("machine",))
    #: How dealers gather the cards (only matters for a hand shuffle; docs/floor/surveillance.md).
    gathering: Gathering = Gathering()
    #: A hand is a shuffle alert when its p-value under the declared shuffle is below this.
    #: The false-alarm goal of 1 per 10,000 fair hands is shared among the checks so that a
    #: measurement of 100,000 hands meets it with room for chance; each check's share follows
    #: from its threshold here (this one, ``procedure_*``, ``seat_alarms_per_year``,
    #: ``chart_arl``) and :mod:`~dealerbox.floor.protect.budget` works them out for the
    #: configured room (``floor protect fit`` and the Surveillance page print them).
    threshold: float = 2e-5
    #: Each new hand is compared with its deck's last this many hands.
    memory: int = 2
    #: The procedure check: blocks of this many hands per dealer, and its threshold.
    procedure_block: int = 50
    procedure_threshold: float = 1e-4
    #: Seat luck as it happens: each seat's chart is tuned for a seat fed a strong hand once in
    #: this many hands, its h set so that the room's seats (``tables`` x ``seats``, at
    #: ``hands_per_hour`` for ``hours_per_week``) raise this many false alarms a year.
    seat_feed_every: float = 15.0
    seat_alarms_per_year: float = 1.0
    #: The page's seat table: a range's seat is marked improbable below ``seat_alpha`` over
    #: ``seats`` x ``tables`` x ``windows`` (Bonferroni; ``window_s`` the window), and the seats a
    #: table has.
    window_s: float = SHIFT_S
    seat_alpha: float = 0.01
    seats: int = 10
    #: The starting hands seat luck counts as strong: hold'em classes, and the ranks of which
    #: two in an Omaha hand make it strong. The premium four (22 of 1326 combinations, 1.7%)
    #: rather than TT+ and AK (46, 3.5%): what a stacker deals stands out from fewer by chance.
    holdem_strong: frozenset = PREMIUM
    omaha_pairs: str = OMAHA_PAIR_RANKS
    tables: int = 20
    windows: int = 1095
    #: The dealers' chart: the room's rate of hands with an error (None: fitted from the
    #: store by ``floor protect fit``), the shift to detect and the in-control ARL in hands.
    room_rate: float | None = 0.02
    chart_shift: float = 3.0
    chart_arl: float = 48_000.0
    #: How far the dealers' own rates spread around ``room_rate`` (a standard deviation): each
    #: dealer's chart starts from the room's rate and moves to their own as their hands add up,
    #: until the store holds enough dealers to fit the spread (dealers spread evenly over 1-3 %
    #: are 0.02 / sqrt(12), about 0.006, around 2 %).
    room_spread: float = 0.006
    #: The games to keep references for (every player count of hold'em and Omaha by default),
    #: and how many hands each is dealt from.
    players: tuple = ALL_PLAYERS
    hole_cards: tuple = (2, 4)
    reference_hands: int = 100_000
    #: Fit a missing or stale reference in the background (the collector's pass, a thread of its
    #: own) instead of waiting for ``floor protect fit``.
    auto_fit: bool = True
    #: How long, in minutes, a game's hands may go unchecked while its reference is fitted in the
    #: background before surveillance gets a ``protect_reference`` alert (until then it is a status
    #: on the Surveillance page). A fit that failed, or no fit at all (``auto_fit`` off), alerts at once.
    reference_wait_minutes: float = 15.0
    #: The room, for the alarm budget (:mod:`~dealerbox.floor.protect.budget`): hands dealt an
    #: hour at one table, and the hours a week the tables deal.
    hands_per_hour: float = 30.0
    hours_per_week: float = 168.0

    def games(self) -> list[tuple[int, int]]:
        """The (players, hole cards) games the floor keeps references for."""
        return [(players, hole_cards) for hole_cards in self.hole_cards for players in self.players]

    def fingerprint(self, players: int, hole_cards: int) -> str:
        """What a reference for this game must have been dealt from to judge the game's hands
        (:func:`~dealerbox.floor.protect.references.model_fingerprint`: the declared shuffle, the
        gathering model, the memory, the game; the player count is the reference's key). A
        reference kept with another fingerprint is stale: its game is not scored."""
        return model_fingerprint(self.shuffle, self.gathering, hole_cards, self.memory)
