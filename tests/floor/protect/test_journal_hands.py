"""Stored journal lines read into DealtHand records, against the hands the floor recounts."""

import json
import random
import re
from pathlib import Path

from bench.sim_journal import JournalWriter

from dealerbox.floor.telling.hands import hands_of_lines
from dealerbox.floor.protect.journal_hands import card_hands_of_lines
from dealerbox.floor.protect.shuffles import Shuffle
from dealerbox.floor.protect.simulate import REAL_ENDINGS, TableSim
from dealerbox.floor.telling.story import tell
from tests.floor.test_figures import journal_lines

DECK_TAIL = re.compile(r" \(deck \w+\)$")
DEMO = Path(__file__).resolve().parents[3] / "hardware_sim" / "demo_session.jsonl"


class Lines:
    """Journal-shaped records with consecutive seq."""

    def __init__(self):
        self.out = []

    def ev(self, ev, **kw):
        seq = len(self.out) + 1
        self.out.append(json.dumps({"seq": seq, "prev": "0" * 64, "wall": f"2026-11-24T10:00:{seq % 60:02d}Z",
                                    "event": {"t": seq, "ev": ev, **kw}}))

    def dec(self, verdict, irregularity=None):
        seq = len(self.out) + 1
        self.out.append(json.dumps({"seq": seq, "prev": "0" * 64, "wall": "2026-11-24T10:00:00Z",
                                    "decision": {"t": seq, "verdict": verdict, "irregularity": irregularity,
                                                 "cards": [], "rule": "", "steps": [], "step": 0,
                                                 "phase": "deal"}}))


def test_the_demo_session_read_into_hands_agrees_with_the_recount_and_the_stories(tmp_path):
    events = [json.loads(raw) for raw in DEMO.read_text().splitlines() if '"ev"' in raw]
    lines = journal_lines("T1", events, 1_790_000_000.0, tmp_path / "j")
    recount = hands_of_lines("T1", lines)
    hands = card_hands_of_lines("T1", lines)
    assert [h.summary.start_seq for h in hands] == [h.start_seq for h in recount]
    assert [h.summary.dealer for h in hands] == [h.dealer for h in recount]
    for hand in hands:
        s = hand.summary
        story = tell("T1", [ln for ln in lines if s.start_seq <= json.loads(ln)["seq"] <= s.end_seq])
        drawn = [c for d in hand.draws for c in d.cards]
        # The story names a card of a deck other than A with its deck ("9c (deck B)"); the draw
        # holds faces (the deck is the hand's).
        assert drawn == [DECK_TAIL.sub("", row["card"]) for row in story["shoe"]]
        # The board of the scored draws is the story's board when no reshuffle cut the hand.
        if all(d.scored for d in hand.draws):
            assert [c for d in hand.draws for c in d.board] == story["board"]
    # The demo presses RESHUFFLED once: that hand's draw is cut there and the rest is not scored.
    cut = [h for h in hands if len(h.draws) > 1]
    assert len(cut) == 1 and [d.cause for d in cut[0].draws] == ["deal", "reshuffled"]
    assert len(cut[0].dealt_hands()) == 1
    dealt = [d for h in hands for d in h.dealt_hands()]
    assert all(d.deck == "A" for d in dealt) and dealt[0].dealer == "1042"
    assert dealt[0].draw[:3] == ("2c", "Ts", "8c") and dealt[0].laid_board() == ("Kc", "Ah", "9d", "Ks", "2h")


def test_decks_seats_misdeal_redeal_and_unread_cards():
    j = Lines()
    j.ev("new_hand", players=2, seats=[3, 7])
    for card in ("Ah", "Kd", "Qs", "Jc"):
        j.ev("shoe", card=card, deck="B")
    j.ev("button", name="misdeal")
    j.dec("misdeal", "EXPOSED_EARLY")
    for card in ("2c", "3c"):
        j.ev("shoe", card=card, deck="B")
    j.ev("shoe", unread=True)
    j.ev("shoe", card="5c", deck="B")
    j.ev("shoe", card="9h", deck="B")
    j.ev("board_on", card="9h", deck="B")
    j.ev("board_on", card="Ah")   # a card of the first draw is not the redeal's board
    j.ev("button", name="hand_over")
    (hand,) = card_hands_of_lines("T9", j.out)
    assert [d.cause for d in hand.draws] == ["deal", "redeal"]
    first, redeal = hand.dealt_hands()
    assert (first.deck, first.seat_numbers(), first.holes()) == ("B", (3, 7), [("Ah", "Qs"), ("Kd", "Jc")])
    assert redeal.draw == ("2c", "3c", "?", "5c", "9h") and redeal.laid_board() == ("9h",)
    assert redeal.hand_id == 6  # the misdeal button's line starts the redeal


def test_a_tag_is_named_through_the_registry_and_an_unknown_tag_stays_unnamed():
    j = Lines()
    j.ev("new_hand", players=2)
    j.ev("shoe", uid="04A3C6CAE26180")
    j.ev("shoe", uid="04FFFFFFFFFFFF")
    j.ev("button", name="hand_over")
    (hand,) = card_hands_of_lines("T1", j.out, card_of_uid={"04A3C6CAE26180": ("Td", "C")}.get)
    (dealt,) = hand.dealt_hands()
    assert dealt.draw == ("Td", "?") and dealt.deck == "C"


def test_simulated_hands_with_seats_and_real_endings_read_back_as_dealt():
    sim = TableSim(Shuffle.parse("machine"), random.Random(2), button=True, occupied=(2, 4, 5, 9),
                   record_seats=True, endings=REAL_ENDINGS, table="T7")
    writer = JournalWriter(1_790_006_400.0)
    dealt = [sim.deal() for _ in range(30)]
    for hand in dealt:
        writer.hand(hand)
    read = [h.dealt_hands()[0] for h in card_hands_of_lines("T7", writer.lines)]
    assert [(h.draw, h.seats, h.laid_board()) for h in read] == [(h.draw, h.seats, h.laid_board()) for h in dealt]
    assert {len(h.draw) - h.dealt for h in read} == {0, 4, 6, 8}
