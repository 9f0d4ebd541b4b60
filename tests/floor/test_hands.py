"""Hands from journal lines: the unit the floor's figures count."""

import json

from dealerbox.floor.telling.hands import HandFollower, hands_of_lines, wall_seconds


class Lines:
    """Journal-shaped records with consecutive seq and wall times one second apart."""

    def __init__(self):
        self.out = []

    def _add(self, kind, body):
        seq = len(self.out) + 1
        wall = f"2026-11-24T10:{seq // 60:02d}:{seq % 60:02d}.000000Z"
        self.out.append(json.dumps({"seq": seq, "prev": "0" * 64, "wall": wall, kind: body}))
        return seq

    def ev(self, ev, **kw):
        return self._add("event", {"t": len(self.out), "ev": ev, **kw})

    def dec(self, verdict="ok", irregularity=None, step=0):
        return self._add("decision", {"t": len(self.out), "verdict": verdict, "irregularity": irregularity,
                                      "cards": [], "rule": "", "steps": [], "step": step, "phase": "deal"})


def test_a_dealer_signed_in_between_hands_deals_the_next_hand():
    j = Lines()
    j.ev("dealer", dealer="E100")
    j.ev("new_hand", players=6)
    j.ev("button", name="hand_over")
    j.ev("dealer", dealer="E200")
    j.ev("new_hand", players=5)
    j.ev("button", name="hand_over")
    hands = hands_of_lines("T1", j.out)
    assert [(h.dealer, h.players, h.ended_by) for h in hands] == [("E100", 6, "hand_over"), ("E200", 5, "hand_over")]


def test_a_badge_read_inside_a_hand_takes_effect_after_it():
    j = Lines()
    j.ev("dealer", dealer="E100")
    j.ev("new_hand", players=6)
    j.ev("dealer", dealer="E200")
    j.ev("shoe", card="Ah")
    j.ev("new_hand", players=6)
    j.ev("dealer", dealer=None)
    j.ev("button", name="hand_over")
    j.ev("new_hand", players=2)
    hands = hands_of_lines("T1", j.out, include_open=True)
    assert [h.dealer for h in hands] == ["E100", "E200", None]
    assert [h.ended_by for h in hands] == ["new_hand", "hand_over", "open"]


def test_one_irregularity_per_episode_and_corrections_counted():
    j = Lines()
    j.ev("new_hand", players=6)
    for step in range(3):
        j.dec("correct", "EXPOSED_DEAL", step)
    j.dec("ok")
    j.dec("correct", "MISSED_BURN")
    j.dec("correct", "WRONG_CORRECTION")
    j.dec("misdeal", None)
    j.ev("button", name="hand_over")
    (hand,) = hands_of_lines("T1", j.out)
    assert [i for i, _, _ in hand.irregularities] == ["EXPOSED_DEAL", "MISSED_BURN", "WRONG_CORRECTION", "(misdeal)"]
    assert hand.corrections == 2 and hand.wrong_corrections == 1
    assert hand.count_verdict("misdeal") == 1


def test_time_runs_from_new_hand_to_hand_over_and_later_lines_belong_to_no_hand():
    j = Lines()
    j.ev("new_hand", players=6)
    j.ev("tick")
    j.ev("button", name="hand_over")
    j.ev("tick")
    j.dec("ok")
    (hand,) = hands_of_lines("T1", j.out)
    assert hand.seconds == 2.0 and (hand.start_seq, hand.end_seq) == (1, 3)


def test_garbage_and_old_lines_are_skipped():
    j = Lines()
    j.ev("new_hand", players=6)
    follower = HandFollower("T1")
    for line in j.out:
        follower.feed(line)
    assert follower.feed("[1, 2]") == []
    assert follower.feed({"seq": 1, "event": {"ev": "button", "name": "hand_over"}}) == []
    assert follower.open_hand is not None
    assert wall_seconds("not a time") is None and wall_seconds(None) is None
