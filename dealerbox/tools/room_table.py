"""A table's part in ``make floor``'s demo room: its own hands, its dealers, its pace.

``make floor`` (:mod:`dealerbox.floor.operating.demo_room`) starts each table as ``dealerbox run
--demo --forever`` and writes, beside the table's config, ``room.toml`` (:data:`PART_FILE`)::

    [room]
    table = 1            # the table's place in the dealers' rotation, from 0
    tables = 3
    dealers = ["1042", "2077", "3115", "4208"]
    relief_s = 1200      # every so many seconds, one table gets the dealer back from break
    start = 1795000000.0 # the room's start, POSIX seconds (every table's clock)
    offset_s = 40.0      # the table's first hand starts this long after the room's
    speed = 1.0          # 1: a live table's pace, about 30 hands an hour
    seed = 2             # the table's own sequence of hands
    irregular_per_100 = 4.0

With it, the scripted dealer of ``run --demo`` plays that table's part (:class:`RoomTable`):
clean hands of a live table (2 to 9 players, folds before the river, flops laid one by one
or spread), and now and then, at the rate asked, a hand of the demo session that raises an
irregularity (which hands raise one, the rule engine says). Between hands the dealer the
rotation (:func:`dealer_at`) names for this table holds a badge to the shoe: one table at
a time, the dealer back from break relieves the table's dealer, who goes on break; a
dealer is never signed in at two tables, and the one who already deals never holds the
badge again (which would sign them out, CONTRACT.md's ``dealer`` event).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path

from dealerbox.domain.events import Event
from dealerbox.errors import ConfigError
from dealerbox.rules.engine import HandEngine
from dealerbox.tomlfile import read_toml
from hardware_sim.demo import demo_script
from hardware_sim.script import HandScript

__all__ = ["PART_FILE", "RoomPart", "RoomHands", "RoomTable", "dealer_at", "irregular_hands", "session_hands"]

#: The file beside a table's config that makes ``run --demo`` play a room's table.
PART_FILE = "room.toml"
#: Seconds a hand takes at a live table (about 30 hands an hour), at speed 1.
HAND_S = (100.0, 140.0)
#: The share of a hand's time each move takes: a betting round is long, a card is quick.
ROUND_WEIGHT = 8.0


@dataclass(frozen=True)
class RoomPart:
    """What the room tells one table (the ``[room]`` table of :data:`PART_FILE`)."""

    table: int
    tables: int
    dealers: tuple[str, ...]
    relief_s: float
    start: float
    offset_s: float = 0.0
    speed: float = 1.0
    seed: int = 1
    irregular_per_100: float = 4.0

    @classmethod
    def beside(cls, config_path) -> "RoomPart | None":
        """The part written beside the table config *config_path*, or None (``make run``: no room)."""
        path = Path(config_path).with_name(PART_FILE)
        return cls.load(path) if path.is_file() else None

    @classmethod
    def load(cls, path) -> "RoomPart":
        """Read :data:`PART_FILE`; :class:`ConfigError` names the key that is wrong."""
        room = read_toml(path, "demo room part").get("room")
        if not isinstance(room, dict):
            raise ConfigError(path, "room", "a [room] table")

        def number(key, low, *, integer=False, default=None):
            value = room.get(key, default)
            if value is None:
                raise ConfigError(path, f"room.{key}", "a number", found=False)
            if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)) or value < low:
                raise ConfigError(path, f"room.{key}", f"{'an integer' if integer else 'a number'} >= {low}", value)
            return value

        dealers = room.get("dealers")
        if not isinstance(dealers, list) or not dealers or not all(isinstance(d, str) and d for d in dealers):
            raise ConfigError(path, "room.dealers", "a list of dealer ids", dealers)
        tables = number("tables", 1, integer=True)
        table = number("table", 0, integer=True)
        if table >= tables:
            raise ConfigError(path, "room.table", f"a place from 0 to {tables - 1}", table)
        if len(dealers) < tables:
            raise ConfigError(path, "room.dealers", f"at least one dealer per table ({tables})", dealers)
        speed = number("speed", 0, default=1.0)
        if speed <= 0:
            raise ConfigError(path, "room.speed", "a number > 0", speed)
        rate = number("irregular_per_100", 0, default=4.0)
        if rate > 100:
            raise ConfigError(path, "room.irregular_per_100", "a number from 0 to 100", rate)
        return cls(table=table, tables=tables, dealers=tuple(dealers), relief_s=number("relief_s", 1),
                   start=number("start", 0), offset_s=number("offset_s", 0, default=0.0), speed=float(speed),
                   seed=number("seed", 0, integer=True, default=1), irregular_per_100=float(rate))


def dealer_at(dealers, tables: int, table: int, relief_s: float, room_t: float) -> str:
    """Who deals at *table* at room time *room_t* (seconds since the room started).

    At the start, the first *tables* dealers deal, table by table, and the others are on
    break. Every *relief_s*, one table (in turn: the first, the second, ...) gets the
    dealer who has been on break longest, and its dealer goes on break.
    """
    at = list(dealers[:tables])
    on_break = list(dealers[tables:])
    relief = 1
    while on_break and relief * relief_s <= room_t:
        place = (relief - 1) % tables
        on_break.append(at[place])
        at[place] = on_break.pop(0)
        relief += 1
    return at[table]


def session_hands(seed: int) -> list[list[dict]]:
    """The demo session's hands (:func:`hardware_sim.demo.demo_script`, its cards shuffled
    with *seed*), each from its ``new_hand`` on, without the dealers' badges."""
    hands: list[list[dict]] = []
    for e in demo_script(seed).events:
        if e["ev"] == "new_hand":
            hands.append([])
        if hands and e["ev"] != "dealer":
            hands[-1].append(e)
    return hands


def _raised(hand: list[dict]) -> list[str]:
    """The irregularities the rule engine raises on *hand* alone, each once, in order."""
    engine = HandEngine()
    raised = [d.irregularity for e in hand for d in engine.feed(Event.from_dict(e)) if d.irregularity]
    return list(dict.fromkeys(raised))


def irregular_hands(seed: int) -> list[tuple[list[dict], list[str]]]:
    """The hands of the demo session (shuffled with *seed*) that raise an irregularity, with their ids."""
    return [(hand, raised) for hand in session_hands(seed) if (raised := _raised(hand))]


def clean_hand(rng: random.Random, seed: int) -> list[dict]:
    """A clean hand as a live table deals it: 2 to 9 players (mostly full), and as often as
    at a real table everyone folds before the flop, on the flop or on the turn."""
    s = HandScript(seed=seed, step_s=0.4)
    players = rng.choices(range(2, 10), weights=(1, 1, 2, 3, 4, 6, 8, 8))[0]
    s.new_hand(players).deal().round_done()
    end = rng.random()
    if end < 0.15:                      # everyone folds before the flop
        return s.hand_over().events
    s.flop(spread=rng.random() < 0.4).round_done()
    if end < 0.35:                      # on the flop
        return s.hand_over().events
    s.turn().round_done()
    if end < 0.5:                       # on the turn
        return s.hand_over().events
    return s.river().round_done().hand_over().events


class RoomHands:
    """A table's own endless sequence of hands: (events, irregularities the hand raises)."""

    def __init__(self, seed: int, irregular_per_100: float):
        self.rng = random.Random(seed)
        self.rate = irregular_per_100 / 100.0

    def next(self) -> tuple[list[dict], list[str]]:
        """The next hand: its events, and the irregularities it raises (none for a clean hand)."""
        seed = self.rng.randrange(1 << 30)
        if self.rng.random() < self.rate:
            return self.rng.choice(irregular_hands(seed))
        return clean_hand(self.rng, seed), []


def _weights(hand: list[dict]) -> list[float]:
    return [ROUND_WEIGHT if e["ev"] == "button" and e["name"] in ("round_done", "hand_over") else 1.0
            for e in hand]


class RoomTable:
    """Plays a :class:`RoomPart` with a :class:`hardware_sim.script.TableDealer`, until *stop*.

    *act(event)* acts one event out (the dealer, then the glass printed); *clock* is
    the wall clock (POSIX seconds), *stop* a :class:`threading.Event`.
    """

    def __init__(self, part: RoomPart, *, stop, clock=time.time):
        self.part, self.stop, self.clock = part, stop, clock
        self.hands = RoomHands(part.seed, part.irregular_per_100)
        self.rng = random.Random(part.seed * 7919 + 1)
        self.virtual_t = 0.0

    def room_t(self) -> float:
        """Room seconds since the room started (wall seconds times the speed)."""
        return (self.clock() - self.part.start) * self.part.speed

    def wait_until_room(self, room_t: float) -> None:
        """Wait (wall clock, or until stopped) until the room's time is *room_t*."""
        self.stop.wait(max(0.0, (room_t - self.room_t()) / self.part.speed))

    def due_dealer(self) -> str:
        """The dealer the rotation has at this table now."""
        p = self.part
        return dealer_at(p.dealers, p.tables, p.table, p.relief_s, self.room_t())

    def play(self, act, dealing) -> None:
        """Deal hand after hand: *dealing()* is who deals now (None: nobody), *act(event)* acts one out.

        The first dealer sits down when the room opens; the first hand waits for the table's offset."""
        opening = True
        while not self.stop.is_set():
            due = self.due_dealer()
            if due != dealing():
                act(self._timed({"ev": "dealer", "dealer": due}))
            if opening:
                self.wait_until_room(self.part.offset_s)
                opening = False
            if not self.stop.is_set():
                self._deal(self.hands.next()[0], act)

    def _deal(self, hand: list[dict], act) -> None:
        start = self.room_t()
        length = self.rng.uniform(*HAND_S)
        weights = _weights(hand)
        total, done = sum(weights), 0.0
        first_t = hand[0]["t"]
        base = self.virtual_t + 1.0
        for e, weight in zip(hand, weights):
            if self.stop.is_set():
                return
            act({**e, "t": round(base + e["t"] - first_t, 3)})
            self.virtual_t = base + e["t"] - first_t
            done += weight
            self.wait_until_room(start + length * done / total)

    def _timed(self, event: dict) -> dict:
        self.virtual_t += 1.0
        return {"t": round(self.virtual_t, 3), **event}
