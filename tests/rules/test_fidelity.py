"""Issue 31: five hands written from RULES.md that the box once ruled against the rule book.

Each drives the engine with CONTRACT.md events, as a table would send them, and checks the
verdicts RULES.md gives ("What the box must tell apart", "Sensing faults")."""

import pytest

from dealerbox.domain.events import Event
from dealerbox.rules.engine import HandEngine

DEAL = ["Qs", "Jc", "Kh", "Jd", "4c", "Ah", "8d", "Kc", "Jh", "7c", "5h", "As", "3h", "2c", "9h", "Tc", "8s",
        "7s", "6h", "5c"]


class Table:
    """Feeds events one after another, half a second apart unless told, and keeps every decision."""

    def __init__(self, profile="tda-2019"):
        self.engine = HandEngine(profile)
        self.t = 0.0
        self.decisions = []

    def feed(self, ev, dt=0.5, **fields):
        self.t += dt
        out = self.engine.feed(Event.from_dict({"t": round(self.t, 3), "ev": ev, **fields}))
        self.decisions += out
        return out

    def new_hand(self, players, mouth_sensor=False):
        self.feed("new_hand", players=players, mouth_sensor=mouth_sensor)
        for card in DEAL[:2 * players]:
            self.shoe(card)

    def shoe(self, card=None, dt=0.5):
        return self.feed("shoe", dt, **({"card": card} if card else {"unread": True}))

    def board(self, card, dt=0.5):
        return self.feed("board_on", dt, card=card)

    def off(self, card, dt=0.5):
        return self.feed("board_off", dt, card=card)

    def press(self, name, dt=0.5):
        return self.feed("button", dt, name=name)

    def street(self, burn, *cards):
        self.shoe(burn)
        for c in cards:
            self.shoe(c)
            self.board(c)

    @property
    def now(self):
        return self.engine.decision

    def raised(self):
        return [d.irregularity for d in self.decisions if d.irregularity]

    def left_open(self):
        return [d.irregularity for d in self.decisions if any(s.key == "over.left_open" for s in d.steps)]


def test_c40_ack_after_round_done_is_the_skipped_player_folding():
    """Hand 1: ROUND DONE then ACK answers "folds, the flop stands", as ACK then ROUND DONE does."""
    t = Table("cz-c40")
    t.new_hand(6)
    for c in ("6s", "4d", "Qd", "9s"):
        t.shoe(c)
    t.board("4d")
    assert t.now.irregularity == "PREMATURE_FLOP" and t.now.steps[0].key == "skipped.ask"
    t.board("Qd")
    t.board("9s")
    t.press("round_done")
    t.press("ack")
    assert t.now.verdict == "ok" and t.engine.phase == "flop"
    assert t.engine.where["4d"] == "board" and t.engine.where["6s"] == "burn"
    t.press("round_done")
    t.street("Ts", "Td")
    assert t.now.verdict == "ok" and t.engine.phase == "turn"
    t.press("round_done")
    t.street("3s", "2s")
    assert t.now.verdict == "ok"
    t.press("round_done")
    t.press("hand_over")
    assert t.left_open() == []
    assert set(t.raised()) <= {"EXTRA_CARD", "PREMATURE_FLOP"}


def test_unread_extra_card_is_any_card_not_yet_seen_as_the_first_burn():
    """Hand 2: an unread card has no face; any card not yet seen satisfies "that card is the burn"."""
    t = Table()
    t.new_hand(2, mouth_sensor=True)
    t.shoe()                                     # the fifth card out, its tag unread
    assert t.now.irregularity == "EXTRA_CARD"
    t.press("ack")
    t.press("ack")
    t.press("round_done")
    t.shoe("Ks")                                 # the unread card, put back on top, now read as the burn
    assert t.now.verdict == "ok", t.now
    for c in ("4d", "Qd", "9s"):
        t.shoe(c)
        t.board(c)
    assert t.engine.where["Ks"] == "burn"
    t.press("round_done")
    t.street("Ts", "Td")
    t.press("round_done")
    t.street("3s", "2s")
    assert t.now.verdict == "ok"
    t.press("round_done")
    t.press("hand_over")
    assert t.left_open() == [] and "WRONG_CORRECTION" not in t.raised()


def test_unread_extra_card_refuses_a_card_already_seen():
    """Hand 2, the other side: a card already seen in the hand cannot be the unread card."""
    t = Table()
    t.new_hand(2, mouth_sensor=True)
    t.shoe()
    t.press("ack")
    t.press("ack")
    t.press("round_done")
    t.shoe("Qs")                                 # the first hole card: seen, so not the returned card
    assert t.now.irregularity in ("WRONG_CORRECTION", "DUPLICATE_CARD")
    assert t.now.verdict != "ok"


def test_missed_burn_overtaken_by_the_rest_of_the_flop_is_an_unread_burn():
    """Hand 3: no mouth sensor, the flop's burn unread; the dealer lays the rest of the flop."""
    t = Table()
    t.new_hand(5)
    t.press("round_done")
    t.shoe("As")
    t.board("As")
    assert t.now.irregularity == "MISSED_BURN" and t.now.verdict == "correct"
    for c in ("6s", "4d"):                  # the rest of the flop: the step can still be done
        t.shoe(c)
        t.board(c)
    assert t.now.irregularity == "MISSED_BURN"
    t.press("round_done")                   # the flop is bet on: the play answered, a burn went unread
    assert t.now.verdict == "ok" and t.engine.phase == "turn", t.now
    assert "UNREAD_CARD" in t.raised()
    assert t.engine.where["As"] == "board"
    t.street("Qd", "9s")
    assert t.now.verdict == "ok"
    t.press("round_done")
    t.street("Ts", "Td")
    t.press("round_done")
    t.press("hand_over")
    assert t.left_open() == []
    assert set(t.raised()) <= {"MISSED_BURN", "UNREAD_CARD"}


def test_missed_burn_with_a_mouth_sensor_is_not_left_amber_through_the_next_street():
    """Hand 3 with a mouth sensor: no read was missed; the flop bet on without the step is judged at once."""
    t = Table()
    t.new_hand(5, mouth_sensor=True)
    t.press("round_done")
    t.shoe("As")
    t.board("As")
    assert t.now.irregularity == "MISSED_BURN"
    for c in ("6s", "4d"):
        t.shoe(c)
        t.board(c)
    t.press("round_done")
    assert t.now.irregularity == "WRONG_CORRECTION" and t.now.verdict == "floor"
    assert t.engine.where["As"] == "board"
    t.press("ack")
    t.press("ack")                                # the floor has decided
    t.street("Qd", "9s")
    assert t.now.verdict == "ok"
    assert t.engine.phase == "turn"


def test_dead_tag_on_the_turn_is_asked_about_never_a_double_burn():
    """Hand 4: the turn card's tag is dead; ROUND DONE asks whether it is there, the river answers."""
    t = Table()
    t.new_hand(10)
    t.press("round_done")
    t.street("8c", "4d", "Qd", "9s")
    t.press("round_done")
    t.shoe("6s")                                  # the turn's burn; the turn card is never seen
    t.press("round_done")
    assert t.now.irregularity == "UNREAD_CARD" and t.now.steps[t.now.step].key == "unread.street_card_there"
    t.shoe("7d")
    t.shoe("9c")
    t.board("9c")
    assert "DOUBLE_BURN" not in t.raised()
    assert t.now.verdict == "ok", t.now
    assert t.engine.where["7d"] == "burn" and t.engine.where["9c"] == "board"
    assert t.engine.phase == "river"
    t.press("round_done")
    t.press("hand_over")
    assert t.left_open() == []
    assert set(t.raised()) <= {"UNREAD_CARD"}


def test_dead_tag_on_the_turn_answered_with_ack():
    """Hand 4: ACK says the card is there: UNREAD_CARD, the position named; the river is dealt as usual."""
    t = Table()
    t.new_hand(10)
    t.press("round_done")
    t.street("8c", "4d", "Qd", "9s")
    t.press("round_done")
    t.shoe("6s")
    t.press("round_done")
    t.press("ack")
    assert t.now.irregularity == "UNREAD_CARD" and t.now.verdict == "ok"
    assert t.now.steps[0].key == "unread.board_card" and dict(t.now.steps[0].params)["street"] == "turn"
    assert t.engine.phase == "river"
    t.street("7d", "9c")
    assert t.now.verdict == "ok" and "DOUBLE_BURN" not in t.raised()
    t.press("round_done")
    t.press("hand_over")
    assert t.left_open() == []


def test_dead_tag_on_the_flop_is_asked_about_and_the_turn_answers():
    """RULES.md, sensing faults: no mouth sensor, the flop's third card has a dead tag (no shoe read, no
    board read). ROUND DONE while the flop shows two cards asks whether the card is there; the turn's
    burn and card laid say it was, and the box names its place (UNREAD_CARD), never a dealing error."""
    t = Table()
    t.new_hand(6)
    t.press("round_done")
    t.street("8c", "4d", "Qd")                    # the third flop card, 9s, is never seen
    t.press("round_done")
    assert t.now.irregularity == "UNREAD_CARD" and t.now.verdict == "ok"
    assert t.now.steps[t.now.step].key == "unread.street_card_there"
    assert dict(t.now.steps[t.now.step].params)["street"] == "flop"
    t.street("6s", "7d")
    assert t.now.verdict == "ok" and t.engine.phase == "turn"
    assert t.engine.where["6s"] == "burn" and t.engine.where["7d"] == "board"
    unread = [k for k, p in t.engine.where.items() if k.startswith("unread:") and p == "board"]
    assert len(unread) == 1 and unread[0] in t.engine.hand.streets["flop"].board
    t.press("round_done")
    t.street("2h", "9c")
    assert t.engine.phase == "river"
    t.press("round_done")
    t.press("hand_over")
    assert set(t.raised()) == {"UNREAD_CARD"} and t.left_open() == []


def test_dead_tag_on_the_flop_answered_with_ack():
    """ACK says the third flop card is there: UNREAD_CARD names the flop; the turn is dealt as usual."""
    t = Table()
    t.new_hand(6)
    t.press("round_done")
    t.street("8c", "4d", "Qd")
    t.press("round_done")
    t.press("ack")
    assert t.now.irregularity == "UNREAD_CARD" and t.now.verdict == "ok"
    assert t.now.steps[0].key == "unread.board_card" and dict(t.now.steps[0].params)["street"] == "flop"
    assert t.engine.phase == "turn"
    t.street("6s", "7d")
    t.press("round_done")
    t.street("2h", "9c")
    t.press("round_done")
    t.press("hand_over")
    assert set(t.raised()) == {"UNREAD_CARD"} and t.left_open() == []


def test_flop_third_card_still_to_come_answers_the_question():
    """ROUND DONE pressed with two flop cards laid (all in, or too early): the third card laid next,
    with no burn before it, says it was still to come. Nothing is recorded; the hand plays on."""
    t = Table()
    t.new_hand(6)
    t.press("round_done")
    t.street("8c", "4d", "Qd")
    t.press("round_done")
    assert t.now.steps[t.now.step].key == "unread.street_card_there"
    t.shoe("9s")
    t.board("9s")
    assert t.now.verdict == "ok" and t.engine.hand.streets["flop"].board == ["4d", "Qd", "9s"]
    t.press("round_done")
    assert t.engine.phase == "turn"
    t.street("6s", "7d")
    t.press("round_done")
    t.street("2h", "9c")
    t.press("round_done")
    t.press("hand_over")
    keys = {s.key for d in t.decisions for s in d.steps}
    assert "unread.board_card" not in keys
    assert set(t.raised()) <= {"UNREAD_CARD"} and t.left_open() == []


def test_flop_of_two_with_a_mouth_sensor_asks_nothing():
    """With a mouth sensor the shoe counts every card: a flop of two with no third draw is no dead tag."""
    t = Table()
    t.new_hand(6, mouth_sensor=True)
    t.press("round_done")
    t.street("8c", "4d", "Qd")
    t.press("round_done")
    assert "unread.street_card_there" not in {s.key for d in t.decisions for s in d.steps}


def test_double_burn_still_in_its_grace_period_is_recorded_at_hand_over():
    """Hand 5: a spread flop with a second burn, swept 0.9 s later, then HAND OVER: DOUBLE_BURN on record."""
    t = Table()
    t.new_hand(3)
    t.press("round_done")
    for c in ("7d", "Ks", "Ad", "5s", "4s"):
        t.shoe(c, dt=0.2)
    for c in ("Ad", "5s", "4s"):
        t.board(c, dt=0.2)
    for c in ("Ad", "5s", "4s"):
        t.off(c, dt=0.3)
    t.press("hand_over", dt=0.1)
    assert "DOUBLE_BURN" in t.raised()


def test_double_burn_still_in_its_grace_period_is_recorded_at_the_next_new_hand():
    """Hand 5: the next new_hand decides it too."""
    t = Table()
    t.new_hand(3)
    t.press("round_done")
    for c in ("7d", "Ks", "Ad", "5s", "4s"):
        t.shoe(c, dt=0.2)
    for c in ("Ad", "5s", "4s"):
        t.board(c, dt=0.2)
    t.feed("new_hand", dt=0.5, players=3)
    assert "DOUBLE_BURN" in t.raised()
    assert t.engine.phase == "deal" and t.now.verdict == "ok"


def test_round_called_ahead_after_the_burn_is_answered_by_the_street_card():
    """Hand 4, the other answer: all in, ROUND DONE pressed after the turn's burn; the turn card laid
    next says it was still to come. Nothing recorded, the hand plays on."""
    t = Table()
    t.new_hand(4)
    t.press("round_done")
    t.street("8c", "4d", "Qd", "9s")
    t.press("round_done")
    t.shoe("6s")
    t.press("round_done")
    t.shoe("7d")
    t.board("7d")
    assert t.now.verdict == "ok" and t.engine.phase == "turn"
    assert t.engine.where["6s"] == "burn"
    t.street("2h", "9c")
    assert t.now.verdict == "ok" and t.engine.phase == "river"
    t.press("hand_over")
    keys = {s.key for d in t.decisions for s in d.steps}
    assert not keys & {"unread.board_card", "unread.check_deck", "unread.check_tags"}
    assert t.engine.decision.verdict == "ok"
    assert t.left_open() == []


def test_a_burn_counted_after_the_first_cards_read_is_no_missed_burn_at_round_done():
    """Found by the noise bench (mouth sensor): the burn's count came 0.2 s after the first flop card's
    read, so the first card looked unburned. The unread card never reached the board: it was the burn.
    ROUND DONE settles MISSED_BURN so, never as a street bet on unburned."""
    t = Table()
    t.new_hand(3, mouth_sensor=True)
    t.press("round_done")
    t.shoe("As")
    t.shoe(dt=0.2)                                # the burn, counted at the mouth, its tag unread
    t.board("As")
    assert t.now.irregularity == "MISSED_BURN"
    for c in ("6s", "4d"):
        t.shoe(c)
        t.board(c)
    t.press("round_done")
    assert t.now.verdict == "ok" and t.engine.phase == "turn"
    assert t.engine.where["As"] == "board"
    t.street("Qd", "9s")
    t.press("round_done")
    t.street("Ts", "Td")
    t.press("round_done")
    t.press("hand_over")
    assert "WRONG_CORRECTION" not in t.raised() and t.left_open() == []


@pytest.mark.parametrize("mouth_sensor", [False, True])
@pytest.mark.parametrize("spread", [False, True], ids=["laid-one-by-one", "spread"])
def test_two_extra_cards_and_round_done_inside_the_grace_period_are_extra_cards(mouth_sensor, spread):
    """Heads-up: two cards after the deal, ROUND DONE within the 3 s grace, then a fresh burn and a
    flop of three other cards. The two were extra cards (EXTRA_CARDS, misdeal), not an early burn
    and flop card: the box once took them so and ruled DOUBLE_BURN and a cascade of wrong steps."""
    t = Table()
    t.new_hand(2, mouth_sensor=mouth_sensor)
    t.shoe("Tc")
    t.shoe("8s")
    t.press("round_done", dt=1.0)
    t.shoe("7s")
    if spread:
        for c in ("6h", "5c", "2d"):
            t.shoe(c, dt=0.3)
        for c in ("6h", "5c", "2d"):
            t.board(c, dt=0.2)
    else:
        for c in ("6h", "5c", "2d"):
            t.shoe(c)
            t.board(c)
    raised = [r for r in t.raised() if r != "EXTRA_CARD"]
    assert raised and set(raised) == {"EXTRA_CARDS"}
    assert t.now.verdict == "misdeal"


@pytest.mark.parametrize("mouth_sensor", [False, True])
def test_an_early_burn_and_flop_card_before_round_done_stand_as_the_flop(mouth_sensor):
    """The same two cards, when the second then reaches the board after ROUND DONE: the burn and the
    first flop card were drawn before the press; the flop stands and nothing else is raised."""
    t = Table()
    t.new_hand(2, mouth_sensor=mouth_sensor)
    t.shoe("Tc")
    t.shoe("8s")
    t.press("round_done", dt=1.0)
    t.board("8s")
    for c in ("6h", "5c"):
        t.shoe(c)
        t.board(c)
    t.press("round_done")
    t.street("3c", "9d")
    t.press("round_done")
    t.street("4d", "Qd")
    t.press("round_done")
    t.press("hand_over")
    assert [r for r in t.raised() if r != "EXTRA_CARD"] == [] and t.left_open() == []
