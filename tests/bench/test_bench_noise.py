"""bench_noise.evidence_lost: a run is left out only when what the readers reported lost the evidence."""

from __future__ import annotations

from bench.bench_noise import NoisyRun, evidence_lost
from dealerbox.domain.cards import JOKER
from dealerbox.domain.decks import simulation_registry
from dealerbox.domain.events import Event
from hardware_sim.noise import Pass, PhysicalHand

REG = simulation_registry()


def uid(card: str) -> str:
    return REG.uids_of(REG.active, card)[0]


def hand_of(draws, board=(), presses=(), players=2):
    """A physical hand: *draws* (card, t, role, reads), *board* (card, on, off), ROUND DONE at *presses*."""
    hand = PhysicalHand()
    hand.actions.append(Event(0.5, "new_hand", players=players, hole_cards=2))
    hand.actions += [Event(t, "button", name="round_done") for t in presses]
    for card, t, role, reads in draws:
        hand.passes.append(Pass("shoe", card if len(card) > 3 else uid(card), t, t + 0.05, True, role, reads))
    for card, on, off in board:
        hand.passes.append(Pass("board", card if len(card) > 3 else uid(card), on, off, True))
    return hand


def deal(t0=1.0, n=4, reads=1):
    cards = ["Qs", "Jc", "Kh", "Jd", "4c", "Ah", "8d", "Kc"][:n]
    return [(c, t0 + 0.5 * i, "hole", reads) for i, c in enumerate(cards)]


def lost(hand, raises, mouth=False, **kw):
    return evidence_lost(NoisyRun(hand, REG, 0.3, **kw), raises, mouth, 1.2)


def test_a_run_whose_readers_saw_everything_is_kept():
    hand = hand_of(deal() + [("7c", 3.5, "extra", 1)], presses=[4.0])
    assert lost(hand, ["EXTRA_CARD"]) is None
    assert lost(hand, ["EXTRA_CARD"], mouth=True) is None


def test_a_joker_never_read_anywhere_is_lost_but_one_read_again_at_once_or_seen_on_the_board_is_not():
    joker = REG.uids_of(REG.active, JOKER)[0]
    unread = hand_of(deal()[:3] + [(joker, 2.5, "hole", 0)])
    assert "never read" in lost(unread, ["JOKER"])
    reread = hand_of(deal()[:3] + [(joker, 2.5, "hole", 0)])
    reread.passes.append(Pass("shoe", joker, 2.57, 2.58, True, None, 1))     # double_read, 20 ms later
    assert lost(reread, ["JOKER"]) is None
    on_board = hand_of(deal() + [("7c", 5.0, "burn", 1), (joker, 5.5, "board", 0)], board=[(joker, 6.0, 9.0)],
                       presses=[4.5])
    assert lost(on_board, ["JOKER"]) is None
    # A row about something else is not lost by it.
    assert lost(unread, ["EXTRA_CARD"]) is None


def test_a_tag_drawn_twice_is_lost_when_one_draw_was_unread_or_the_two_came_within_the_rearm_window():
    twice = hand_of(deal(n=3) + [("Qs", 2.5, "hole", 1)])
    assert lost(twice, ["DUPLICATE_CARD"], mouth=True) is None
    assert lost(twice, ["DUPLICATE_CARD"]) is None                    # 1.5 s apart: past the rearm window
    fast = hand_of(deal(n=3) + [("Qs", 2.005, "hole", 1)])            # a fast pair moved it 1.005 s after its twin
    assert "rearm" in lost(fast, ["DUPLICATE_CARD"])
    assert lost(fast, ["DUPLICATE_CARD"], mouth=True) is None         # the mouth counts two cards
    once = hand_of(deal(n=3) + [("Qs", 2.5, "hole", 0)])
    assert "read once" in lost(once, ["DUPLICATE_CARD"], mouth=True)


def test_an_extra_card_without_a_mouth_sensor_is_lost_only_when_the_reads_leave_none_past_the_deal():
    draws = deal() + [("7c", 3.5, "extra", 1)]
    draws[1] = ("Jc", 1.5, "hole", 0)
    hand = hand_of(draws, presses=[4.0])
    assert "no card past the deal" in lost(hand, ["EXTRA_CARD"])
    assert lost(hand, ["EXTRA_CARD"], mouth=True) is None
    two = hand_of(deal() + [("7c", 3.5, "extra", 1), ("5h", 4.0, "extra", 0)], presses=[4.5])
    assert lost(two, ["EXTRA_CARD"]) is None                          # one card past the deal still shows
    assert lost(two, ["EXTRA_CARDS"]) is not None
    late = hand_of(deal() + [("7c", 3.5, "extra", 1), ("Jc", 5.0, "burn", 0)], presses=[4.0])
    assert lost(late, ["EXTRA_CARD"]) is None                         # a read lost after the first ROUND DONE


def test_the_burn_between_two_streets_lost_with_no_round_done_between_is_one_street_to_a_box_without_a_mouth():
    flop = [("5h", 5.0, "burn", 1), ("As", 5.5, "board", 1), ("6s", 6.0, "board", 1), ("4d", 6.5, "board", 1)]
    premature = hand_of(deal() + flop + [("Qd", 7.5, "burn", 0), ("9s", 8.0, "board", 1)], presses=[4.5, 9.0])
    assert "one street" in lost(premature, ["PREMATURE_TURN"])
    assert lost(premature, ["PREMATURE_TURN"], mouth=True) is None
    in_time = hand_of(deal() + flop + [("Qd", 7.5, "burn", 0), ("9s", 8.0, "board", 1)], presses=[4.5, 7.0])
    assert lost(in_time, ["PREMATURE_TURN"]) is None
    double = hand_of(deal() + flop + [("Qd", 7.5, "burn", 1), ("9s", 8.0, "burn", 0), ("Ts", 8.5, "board", 1)],
                     presses=[4.5, 7.0])
    assert "two burns" in lost(double, ["DOUBLE_BURN"])
    assert lost(double, ["DOUBLE_BURN"], mouth=True) is None


def test_a_board_card_in_the_field_shorter_than_the_settle_time_passed_by_but_a_dead_tag_is_no_such_card():
    flop = [("5h", 5.0, "burn", 1), ("As", 5.5, "board", 1)]
    brief = hand_of(deal() + flop, board=[("As", 5.8, 6.05)], presses=[4.5])
    assert "passed by" in lost(brief, ["MISSED_BURN"], mouth=True)
    split = hand_of(deal() + flop, board=[("As", 5.8, 6.0), ("As", 6.2, 9.0)], presses=[4.5])
    assert lost(split, ["MISSED_BURN"], mouth=True) is None          # a dropout: the tail settles
    dead = hand_of(deal() + flop, presses=[4.5])
    assert lost(dead, ["MISSED_BURN"], mouth=True) is None            # no stay at all: the bench answers the question


def test_a_premature_card_reportable_only_after_the_round_done_pressed_after_it_is_a_street_in_time():
    events = [{"t": 10.0, "ev": "board_on", "card": "4d"}]
    late = hand_of(deal(), board=[("4d", 10.0, 10.2), ("4d", 10.31, 14.0)], presses=[4.5, 10.5])
    assert "after the ROUND DONE" in lost(late, ["PREMATURE_TURN"], mouth=True, events=events, premature=("4d",))
    early = hand_of(deal(), board=[("4d", 10.0, 14.0)], presses=[4.5, 10.5])
    assert lost(early, ["PREMATURE_TURN"], mouth=True, events=events, premature=("4d",)) is None
    # Two premature cards: one reported in time is enough.
    both = hand_of(deal(), board=[("4d", 10.0, 10.2), ("4d", 10.31, 14.0), ("9s", 9.0, 14.0)], presses=[4.5, 10.5])
    events2 = events + [{"t": 9.0, "ev": "board_on", "card": "9s"}]
    assert lost(both, ["PREMATURE_FLOP"], mouth=True, events=events2, premature=("4d", "9s")) is None


def test_a_hole_card_unread_leaves_the_seats_uncounted_without_a_mouth_sensor():
    draws = deal()
    draws[3] = ("Jd", 2.5, "hole", 0)
    assert "seats never counted" in lost(hand_of(draws), ["SEAT_ERROR"])
    assert lost(hand_of(draws), ["SEAT_ERROR"], mouth=True) is None
    assert lost(hand_of(deal()), ["SEAT_ERROR"]) is None
