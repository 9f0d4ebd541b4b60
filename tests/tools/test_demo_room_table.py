"""A table's part in ``make floor``'s room (dealerbox/tools/room_table.py): its own hands
at a rate of irregularities a real room sees, a live table's pace, and dealers who rotate
one table at a time with breaks and are never signed in at two tables. The timing is
played on a simulated wall clock: hours of a room in a moment."""

from __future__ import annotations

import collections
import threading

import pytest

from dealerbox.domain.events import Event
from dealerbox.errors import ConfigError
from dealerbox.floor.operating import demo_room
from dealerbox.rules.engine import HandEngine
from dealerbox.tools import room_table
from dealerbox.tools.room_table import RoomHands, RoomPart, RoomTable, dealer_at, irregular_hands

DEALERS = ("1042", "2077", "3115", "4208")


def judged(hand) -> list[str]:
    engine = HandEngine()
    return [d.irregularity for e in hand for d in engine.feed(Event.from_dict(e)) if d.irregularity]


def test_the_room_and_the_table_name_the_same_part_file():
    assert demo_room.PART_FILE == room_table.PART_FILE


def test_the_part_is_read_and_a_wrong_key_is_named(tmp_path):
    good = ('[room]\ntable = 1\ntables = 3\ndealers = ["1042", "2077", "3115", "4208"]\nrelief_s = 1200.0\n'
            'start = 100.0\noffset_s = 40.0\nspeed = 1.0\nseed = 7\nirregular_per_100 = 4.0\n')
    (tmp_path / "room.toml").write_text(good, encoding="utf-8")
    part = RoomPart.beside(tmp_path / "table.toml")
    assert part == RoomPart(table=1, tables=3, dealers=DEALERS, relief_s=1200.0, start=100.0, offset_s=40.0,
                            speed=1.0, seed=7, irregular_per_100=4.0)
    assert RoomPart.beside(tmp_path / "elsewhere" / "table.toml") is None
    for wrong, key in ((good.replace("table = 1", "table = 3"), "room.table"),
                       (good.replace("speed = 1.0", "speed = 0"), "room.speed"),
                       (good.replace('dealers = ["1042", "2077", "3115", "4208"]', 'dealers = ["1042"]'),
                        "room.dealers"),
                       (good.replace("relief_s = 1200.0\n", ""), "room.relief_s"),
                       (good.replace("irregular_per_100 = 4.0", "irregular_per_100 = 400"), "room.irregular_per_100")):
        (tmp_path / "room.toml").write_text(wrong, encoding="utf-8")
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")) as err:
            RoomPart.beside(tmp_path / "table.toml")
        assert "room.toml" in str(err.value)


def test_the_rotation_relieves_one_table_at_a_time_and_every_dealer_has_breaks():
    seen_at = collections.defaultdict(set)
    previous = None
    for relief in range(0, 40):
        t = relief * 1200.0
        at = [dealer_at(DEALERS, 3, table, 1200.0, t) for table in range(3)]
        assert len(set(at)) == 3, (t, at)                         # never one dealer at two tables
        if previous is not None:
            changed = [i for i in range(3) if at[i] != previous[i]]
            assert changed == [(relief - 1) % 3], (t, previous, at)  # one table, in turn
            on_break = (set(DEALERS) - set(previous)).pop()
            assert at[changed[0]] == on_break                      # the one back from break relieves it
        for i, d in enumerate(at):
            seen_at[d].add(i)
        previous = at
    assert set(seen_at) == set(DEALERS) and all(len(tables) == 3 for tables in seen_at.values())
    # Before the first relief, the first three deal and the fourth is on break.
    assert [dealer_at(DEALERS, 3, i, 1200.0, 1199.0) for i in range(3)] == list(DEALERS[:3])


def test_a_few_irregular_hands_per_hundred_drawn_from_the_catalog_and_the_others_clean():
    hands = RoomHands(seed=3, irregular_per_100=4.0)
    drawn = [hands.next() for _ in range(1500)]
    irregular = [ids for _, ids in drawn if ids]
    assert 2.5 <= 100 * len(irregular) / len(drawn) <= 5.5
    catalog = {tuple(ids) for _, ids in irregular_hands(40)}
    assert {tuple(ids) for ids in irregular} <= catalog and len({tuple(ids) for ids in irregular}) >= 3
    # The clean hands are clean as the rule engine judges them, and look like a live table's.
    clean = [hand for hand, ids in drawn[:300] if not ids]
    assert all(judged(hand) == [] for hand in clean)
    players = [hand[0]["players"] for hand in clean]
    assert min(players) >= 2 and max(players) <= 9 and sum(players) / len(players) > 6
    ends = collections.Counter(sum(1 for e in hand if e["ev"] == "board_on") for hand in clean)
    assert ends[5] > ends[0] > 0 and ends[3] > 0          # most to the river, some fold early
    # The irregular ones raise what the catalog says they raise.
    for hand, ids in drawn:
        if ids:
            assert list(dict.fromkeys(judged(hand))) == ids


def test_two_tables_deal_different_hands():
    a = [RoomHands(seed=100, irregular_per_100=4.0).next()[0] for _ in range(1)][0]
    b = [RoomHands(seed=101, irregular_per_100=4.0).next()[0] for _ in range(1)][0]
    assert a != b


class SimulatedWall:
    """A wall clock that moves only when the table waits: hours of a room in a moment."""

    def __init__(self, start: float, until: float):
        self.now, self.until = start, until
        self.stopped = threading.Event()

    def __call__(self) -> float:
        return self.now

    def is_set(self) -> bool:
        return self.stopped.is_set()

    def wait(self, seconds: float) -> bool:
        self.now += max(seconds, 0.0) + 0.05        # acting a move out takes a moment
        if self.now >= self.until:
            self.stopped.set()
        return self.stopped.is_set()


def play_table(place: int, *, speed: float = 1.0, hours: float = 6.0, start: float = 1_000.0):
    """One table of the room on a simulated wall clock: (wall time, event) of each move."""
    part = RoomPart(table=place, tables=3, dealers=DEALERS, relief_s=1200.0, start=start,
                    offset_s=40.0 * place, speed=speed, seed=100 + place, irregular_per_100=4.0)
    wall = SimulatedWall(start, start + hours * 3600 / speed)
    moves = []
    dealing = [None]

    def act(event):
        moves.append((wall.now, event))
        if event["ev"] == "dealer":
            dealing[0] = event["dealer"]
    RoomTable(part, stop=wall, clock=wall).play(act, lambda: dealing[0])
    return moves


def test_a_table_deals_at_a_live_pace_starting_at_its_offset_and_signs_dealers_in_as_the_rotation_says():
    moves = play_table(1)
    hands = [t for t, e in moves if e["ev"] == "new_hand"]
    assert 1_040.0 <= hands[0] <= 1_045.0                                # its offset: 40 s after the room
    per_hour = len(hands) / 6.0
    assert 26 <= per_hour <= 34, per_hour                                # about 30 hands an hour
    signs = [(t, e["dealer"]) for t, e in moves if e["ev"] == "dealer"]
    assert signs[0][1] == "2077"
    for (_, before), (t, after) in zip(signs, signs[1:]):
        assert before != after                                           # never the badge of who deals
        assert after == dealer_at(DEALERS, 3, 1, 1200.0, t - 1_000.0)
    assert len(signs) == 1 + 6 * 3600 // 3600                            # a relief an hour at each table
    # Event time always moves on, hand after hand.
    ts = [e["t"] for _, e in moves]
    assert ts == sorted(ts)


def test_accelerated_the_same_room_plays_faster():
    moves = play_table(0, speed=10.0, hours=3.0)
    hands = [t for t, e in moves if e["ev"] == "new_hand"]
    wall_hours = (moves[-1][0] - moves[0][0]) / 3600
    assert 250 <= len(hands) / wall_hours <= 340


def test_no_dealer_is_signed_in_at_two_tables_at_once():
    spans = collections.defaultdict(list)      # dealer -> (table, from, to)
    for place in range(3):
        moves = play_table(place, hours=8.0)
        signs = [(t, e["dealer"]) for t, e in moves if e["ev"] == "dealer"] + [(moves[-1][0], None)]
        for (t, dealer), (t_next, _) in zip(signs, signs[1:]):
            spans[dealer].append((place, t, t_next))
    for dealer, at in spans.items():
        at.sort(key=lambda s: s[1])
        for (table_a, _, end_a), (table_b, start_b, _) in zip(at, at[1:]):
            assert table_a != table_b and end_a + 300 < start_b, (dealer, at)   # and a break between
