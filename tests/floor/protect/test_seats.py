"""Physical seats: recorded by the table, or recovered from the deal as the button moves."""

import random

from dealerbox.floor.protect.hand import DealtHand
from dealerbox.floor.protect.seats import TABLE_BREAK_S, SeatKey, SeatTracker
from dealerbox.floor.protect.shuffles import Shuffle
from dealerbox.floor.protect.simulate import TableSim

CARDS = tuple(f"{r}{s}" for s in "shdc" for r in "23456789TJQKA")


def hand(hand_id, players, seats=None, table="T1"):
    return DealtHand("A", CARDS[:players * 2], players, seats=seats, table=table, hand_id=hand_id)


def test_a_steady_count_follows_each_player_round_the_table_as_the_button_moves():
    sim = TableSim(Shuffle.parse("machine"), random.Random(1), button=True, occupied=(1, 3, 4, 6, 8, 9, 10))
    tracker = SeatTracker()
    truth: dict = {}
    for _ in range(40):
        dealt = sim.deal()
        for key, seat in zip(tracker.keys(dealt), sim.seats_dealt):
            truth.setdefault(key, set()).add(seat)
    # Seven keys, each always the same physical seat: one run, every seat followed.
    assert len(truth) == 7 and all(len(seats) == 1 for seats in truth.values())
    assert {s for seats in truth.values() for s in seats} == {1, 3, 4, 6, 8, 9, 10}
    assert all(not key.recorded and key.run == 0 for key in truth)


def test_a_player_joining_or_leaving_starts_a_new_run_whose_seats_are_not_the_old_ones():
    tracker = SeatTracker()
    first = tracker.keys(hand(10, 6))
    assert first == tuple(SeatKey(10, s) for s in range(1, 7))
    # The next hand: the player dealt second is now dealt first.
    assert tracker.keys(hand(11, 6))[0] == first[1]
    joined = tracker.keys(hand(12, 7))
    assert {k.run for k in joined} == {12}
    assert str(joined[2]) == "the seat dealt 3rd at hand 12, followed round as the button moved"


def test_recorded_seats_are_the_physical_seats_and_end_a_run():
    tracker = SeatTracker()
    tracker.keys(hand(1, 3))
    keys = tracker.keys(hand(2, 3, seats=(4, 7, 9)))
    assert keys == (SeatKey(None, 4), SeatKey(None, 7), SeatKey(None, 9)) and str(keys[0]) == "seat 4"
    assert {k.run for k in tracker.keys(hand(3, 3))} == {3}
    # Seats that do not match the players are not believed.
    assert {k.run for k in tracker.keys(hand(4, 3, seats=(1, 2)))} == {3}


def test_tables_are_followed_apart_and_a_broken_rotation_restarts():
    tracker = SeatTracker()
    a = tracker.keys(hand(1, 4, table="A"))
    tracker.keys(hand(1, 4, table="B"))
    assert tracker.keys(hand(2, 4, table="A"))[0] == a[1]
    tracker.restart("A")
    assert {k.run for k in tracker.keys(hand(3, 4, table="A"))} == {3}
    assert tracker.runs["B"] == [1, 4, 0, None]


def test_a_pause_as_long_as_a_closed_table_starts_a_new_run_and_a_shorter_one_does_not():
    tracker = SeatTracker()
    t0 = 1_790_000_000.0
    first = tracker.keys(hand(1, 6), t0)
    # A 29-minute break at a table that kept its players: the rotation goes on.
    assert tracker.keys(hand(2, 6), t0 + 29 * 60)[0] == first[1]
    # Closed for the night and opened again with six players: they need not sit as the last six did.
    reopened = tracker.keys(hand(3, 6), t0 + 29 * 60 + TABLE_BREAK_S)
    assert reopened == tuple(SeatKey(3, s) for s in range(1, 7))
    assert tracker.runs["T1"] == [3, 6, 0, t0 + 29 * 60 + TABLE_BREAK_S]
    # A hand whose start is unknown sees no pause and keeps the last start it knew.
    assert tracker.keys(hand(4, 6))[0] == reopened[1] and tracker.runs["T1"][3] == t0 + 29 * 60 + TABLE_BREAK_S


def test_a_run_kept_before_hands_had_a_start_goes_on():
    # A floor restarted on a store whose run has three fields (no last start): followed on.
    tracker = SeatTracker({"T1": [7, 6, 2]})
    assert tracker.keys(hand(8, 6), 1_790_000_000.0) == tuple(SeatKey(7, (j + 3) % 6 + 1) for j in range(6))
    assert tracker.runs["T1"] == [7, 6, 3, 1_790_000_000.0]
