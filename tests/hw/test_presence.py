"""Presence tracking: polls in, shoe/board/zone events out."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dealerbox.domain.events import Event
from dealerbox.hw.presence import SETTLE_S, PresenceTracker

A, B, C = "04A3C6CAE26180", "04A3C6CAE26181", "A1B2C3D4"


def instant(**kw) -> PresenceTracker:
    """A tracker with no settle time: a card is on at its first read (the dropout logic alone)."""
    return PresenceTracker(settle=0.0, **kw)


def run(tracker, polls):
    """Feed ``[(t, {zone: uids}), ...]``; return [(t, ev, uid, zone)]."""
    out = []
    for t, seen in polls:
        out += [(e.t, e.ev, e.uid, e.zone) for e in tracker.update(t, seen)]
    return out


def shoe_polls(times_with_cards):
    return [(t, {"shoe": cards}) for t, cards in times_with_cards]


# -- shoe ------------------------------------------------------------------------------------
def test_card_read_over_several_polls_is_one_shoe():
    polls = shoe_polls([(0.00, []), (0.02, [A]), (0.04, [A]), (0.06, [A]), (0.08, []), (0.10, [])])
    assert run(PresenceTracker(), polls) == [(0.02, "shoe", A, None)]


def test_card_with_gaps_while_sliding_is_one_shoe():
    polls = shoe_polls([(0.00, [A]), (0.02, []), (0.04, [A]), (0.06, []), (0.08, []), (0.10, [A])])
    assert run(PresenceTracker(), polls) == [(0.0, "shoe", A, None)]


def test_two_cards_drawn_quickly_are_two_shoes():
    polls = shoe_polls([(0.00, [A]), (0.02, [A]), (0.04, [A, B]), (0.06, [B]), (0.08, [])])
    assert run(PresenceTracker(), polls) == [(0.0, "shoe", A, None), (0.04, "shoe", B, None)]


def test_two_cards_first_read_in_one_poll_come_in_the_order_they_came_out():
    # A reader that streams its reads gives them in order; one that timestamps them, by time.
    events = PresenceTracker().update(1.0, {"shoe": [B, A]})
    assert [(e.ev, e.uid) for e in events] == [("shoe", B), ("shoe", A)]
    events = PresenceTracker().update(1.0, {"shoe": {A: 0.998, B: 0.993}})
    assert [e.uid for e in events] == [B, A]


def test_a_reader_that_cannot_tell_the_order_gets_uid_order():
    events = PresenceTracker().update(1.0, {"shoe": frozenset({B, A})})
    assert [e.uid for e in events] == [A, B]


def test_a_full_board_poll_keeps_every_known_card():
    # Six board cards known; folded cards swept over the board fill the reader's limit
    # of six tags, so some known cards are left out of those polls: they are still there.
    board = [f"04A3C6CAE261{n:02X}" for n in range(5)]
    folded = [f"04B3C6CAE261{n:02X}" for n in range(4)]
    tracker = PresenceTracker(board_dropout=0.05, settle=0.15, max_tags=6)
    events = run(tracker, [(n * 0.02, {"board": board}) for n in range(10)])
    assert [e for _, e, _, _ in events] == ["board_on"] * 5
    # For 0.14 s (almost three dropout windows) the reader stops at six tags: two known cards are missing.
    sweep = [(0.2 + n * 0.02, {"board": (board[2:] + folded)[:6]}) for n in range(8)]
    assert run(tracker, sweep + [(0.36 + n * 0.02, {"board": board}) for n in range(10)]) == []
    assert tracker.present("board") == set(board)
    assert tracker.counters["board_full"] == 8
    # Without the limit the same polls take the two cards off the board.
    plain = PresenceTracker(board_dropout=0.05, settle=0.15)
    run(plain, [(n * 0.02, {"board": board}) for n in range(10)])
    assert [(e, u) for _, e, u, _ in run(plain, sweep) if e == "board_off"] == [("board_off", board[0]), ("board_off", board[1])]


def test_same_card_after_the_rearm_window_is_a_new_shoe():
    tracker = PresenceTracker(shoe_rearm=0.5)
    polls = shoe_polls([(0.0, [A]), (0.1, []), (0.5, [A]), (0.7, []), (1.0, []), (1.01, [A])])
    # at 0.5 the card had been unread for exactly 0.5 s: the same draw; at 1.01 for 0.51 s: a new one
    assert run(tracker, polls) == [(0.0, "shoe", A, None), (1.01, "shoe", A, None)]


def test_default_rearm_covers_a_card_read_again_at_the_mouth_up_to_1_2_s_after_its_draw():
    # The slide is read for 30-100 ms; a lingering card is read again up to 1.2 s after the
    # draw (docs/NOISE.md, linger): 1.17 s after the slide's last read is still the same card.
    linger = shoe_polls([(0.0, [A]), (0.02, [A]), (0.03, []), (1.2, [A]), (1.25, [])])
    assert run(PresenceTracker(), linger) == [(0.0, "shoe", A, None)]
    # The same tag drawn again later than that is a new draw (a card sent back, a clone).
    again = shoe_polls([(0.0, [A]), (0.03, [A]), (0.5, []), (1.3, [A])])
    assert run(PresenceTracker(), again) == [(0.0, "shoe", A, None), (1.3, "shoe", A, None)]


def test_card_lingering_at_the_mouth_is_one_shoe():
    polls = shoe_polls([(n * 0.02, [A]) for n in range(500)])
    assert len(run(PresenceTracker(), polls)) == 1


# -- board -------------------------------------------------------------------------------------
def test_card_dropping_out_of_some_polls_is_not_a_board_off():
    pattern = [A, A, None, A, None, None, None, A, A, None, A]
    polls = [(n * 0.02, {"board": [u] if u else []}) for n, u in enumerate(pattern)]
    assert run(instant(board_dropout=0.1), polls) == [(0.0, "board_on", A, None)]


def test_card_removed_is_a_board_off_after_the_dropout_window():
    tracker = instant(board_dropout=0.1)
    polls = [(0.0, {"board": [A]}), (0.05, {"board": []}), (0.1, {"board": []}), (0.15, {"board": []})]
    assert run(tracker, polls) == [(0.0, "board_on", A, None), (0.15, "board_off", A, None)]
    assert tracker.present("board") == frozenset()


def test_card_lifted_and_put_back_within_the_window_is_nothing():
    tracker = instant(board_dropout=0.5)
    polls = [(0.0, {"board": [A]}), (0.2, {"board": []}), (0.4, {"board": [A]}), (0.8, {"board": [A]})]
    assert run(tracker, polls) == [(0.0, "board_on", A, None)]
    assert tracker.present("board") == {A}


def test_other_zones_give_zone_events_with_the_zone_name():
    tracker = instant(zone_dropout=0.1)
    polls = [(0.0, {"seat3": [C], "burn": []}), (0.3, {"seat3": [], "burn": []})]
    assert run(tracker, polls) == [(0.0, "zone_on", C, "seat3"), (0.3, "zone_off", C, "seat3")]


def test_offs_come_before_ons_when_a_card_moves():
    tracker = instant(board_dropout=0.1, zone_dropout=0.1)
    run(tracker, [(0.0, {"muck": [], "board": [A]})])
    events = run(tracker, [(0.5, {"muck": [A], "board": []})])
    assert events == [(0.5, "board_off", A, None), (0.5, "zone_on", A, "muck")]


def test_a_zone_not_polled_is_not_aged():
    tracker = instant(board_dropout=0.1)
    polls = [(0.0, {"board": [A]}), (1.0, {"shoe": []}), (5.0, {"shoe": []}), (5.02, {"board": [A]})]
    assert run(tracker, polls) == [(0.0, "board_on", A, None)]


def test_settle_ignores_a_card_passing_over_the_board():
    tracker = PresenceTracker(board_dropout=0.1, settle=0.1)
    passing = [(0.0, {"board": [A]}), (0.02, {"board": [A]}), (0.2, {"board": []}), (0.4, {"board": []})]
    assert run(tracker, passing) == []
    staying = [(1.0, {"board": [B]}), (1.05, {"board": []}), (1.08, {"board": [B]}), (1.12, {"board": [B]})]
    assert run(tracker, staying) == [(1.12, "board_on", B, None)]


def test_the_default_settle_time_ignores_a_burn_crossing_the_board():
    # RULES.md: a burn crosses the board antenna in 30-150 ms (docs/NOISE.md measures the default).
    assert SETTLE_S >= 0.15
    crossing = [(n * 0.01, {"board": [A]}) for n in range(15)] + [(0.3, {"board": []}), (1.0, {"board": []})]
    assert run(PresenceTracker(), crossing) == []


# -- bad input -----------------------------------------------------------------------------------
def test_odd_uids_pass_through_and_are_counted():
    tracker = instant()
    events = tracker.update(0.0, {"board": ["abc123", bytes.fromhex("a1b2c3d4")]})
    assert sorted(e.uid for e in events) == ["A1B2C3D4", "ABC123"]
    assert tracker.counters["odd_uid"] == 1


def test_time_going_back_is_clamped_and_counted():
    tracker = PresenceTracker()
    tracker.update(2.0, {"shoe": [A]})
    events = tracker.update(1.0, {"shoe": [B]})
    assert [(e.t, e.uid) for e in events] == [(2.0, B)]
    assert tracker.counters["time_went_back"] == 1
    assert tracker.update(float("nan"), {"shoe": [C]}) == []
    assert tracker.counters["bad_time"] == 1


def test_bad_zone_names_are_skipped():
    tracker = PresenceTracker()
    assert tracker.update(0.0, {"": [A], None: [B]}) == []
    assert tracker.counters["bad_zone"] == 2


@pytest.mark.parametrize("key", ["shoe_rearm", "board_dropout", "zone_dropout", "settle"])
@pytest.mark.parametrize("value", [-0.1, float("inf"), "1", True])
def test_windows_must_be_sane(key, value):
    with pytest.raises(ValueError, match=key):
        PresenceTracker(**{key: value})


def test_events_follow_the_contract():
    tracker = instant(board_dropout=0.0, zone_dropout=0.0)
    events = tracker.update(0.0, {"shoe": [A], "board": [B], "burn": [C]})
    events += tracker.update(1.0, {"board": [], "burn": []})
    assert {e.ev for e in events} == {"shoe", "board_on", "zone_on", "board_off", "zone_off"}
    for e in events:
        assert Event.from_dict(e.to_dict()) == e


# -- property ------------------------------------------------------------------------------------
@given(st.lists(st.booleans(), min_size=1, max_size=200), st.integers(min_value=1, max_value=30))
def test_property_card_lying_still_is_one_on_and_at_most_one_off(seen_pattern, window_polls):
    """Whatever the dropout pattern: never two ons in a row, and an off only after a gap longer than the window."""
    step = 1 / 64   # exact in binary, so window comparisons are exact
    tracker = instant(board_dropout=window_polls * step)
    events = []
    last_seen = None
    for n, seen in enumerate(seen_pattern):
        t = n * step
        got = run(tracker, [(t, {"board": [A] if seen else []})])
        for _, ev, _, _ in got:
            if ev == "board_off":
                assert t - last_seen > window_polls * step
        events += [ev for _, ev, _, _ in got]
        if seen:
            last_seen = t
    assert all(a != b for a, b in zip(events, events[1:]))
    assert events[:1] in ([], ["board_on"])
    longest_gap = max((len(g) for g in "".join("x" if s else "." for s in seen_pattern).strip(".").split("x")), default=0)
    if longest_gap < window_polls:
        assert events.count("board_on") == (1 if any(seen_pattern) else 0)


# -- mouth sensor: a card counted unread, its tag read late ---------------------------------------
def _mouth_run(steps):
    """*steps*: (t, "count") or (t, [uids]); every event as (t, uid or "unread")."""
    tracker = PresenceTracker(mouth_window=0.15)
    out = []
    for t, what in steps:
        if what == "count":
            tracker.count(t)
            continue
        out += [(e.t, e.uid or "unread") for e in tracker.update(t, {"shoe": what})]
    return out


def test_a_card_counted_unread_and_read_late_at_the_mouth_is_one_card():
    # The slide was not read; the card lingers at the mouth and its tag is read 0.24 s later,
    # with no count: the card the sensor already reported unread, not a second one.
    polls = [(0.0, "count")] + [(n * 0.01, []) for n in range(1, 24)] + [(0.24, [A]), (0.26, [A])]
    polls += [(0.3 + n * 0.05, []) for n in range(8)] + [(0.7, "count"), (0.705, [B]), (0.72, [B])]
    polls += [(0.9 + n * 0.05, []) for n in range(4)]
    assert [u for _, u in _mouth_run(polls)] == ["unread", B]


def test_a_tag_read_just_before_its_own_count_after_an_unread_card_is_that_card():
    # The next card's tag is read 5 ms before its beam break: its own count claims it.
    polls = [(0.0, "count")] + [(n * 0.01, []) for n in range(1, 24)]
    polls += [(0.495, [B]), (0.5, "count"), (0.51, [B])] + [(0.55 + n * 0.05, []) for n in range(6)]
    assert [u for _, u in _mouth_run(polls)] == ["unread", B]


def test_a_tag_with_no_count_long_after_an_unread_card_is_still_a_card():
    # A count the sensor missed: the tag is proof enough of a card, when no unread card is near.
    polls = [(0.0, "count")] + [(n * 0.01, []) for n in range(1, 24)]
    polls += [(3.0, [B]), (3.02, [B])] + [(3.05 + n * 0.05, []) for n in range(6)]
    assert [u for _, u in _mouth_run(polls)] == ["unread", B]
