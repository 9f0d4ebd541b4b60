"""Writes the scenario files of this folder from readable dealer scripts.

The JSONL files are what the tests run and what technicians copy; this script
is how the bundled ones were made. Run it again after changing a scenario:

    .venv/bin/python tests/scenarios/build.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from hardware_sim.script import HandScript  # noqa: E402

SCENARIOS: dict[str, tuple[dict, HandScript]] = {}


def scenario(name: str, raises: list[str], profile: str = "tda-2019", seed: int = 1):
    def wrap(fn):
        s = HandScript(seed=seed)
        fn(s)
        header = {"scenario": name, "profile": profile, "raises": raises}
        if getattr(s, "unseen", False):
            header["mouth_sensor"] = False   # a card left the stub uncounted: a table without one
        SCENARIOS[name] = (header, s)
        return fn
    return wrap


def rest_of_hand(s: HandScript, *, flop_burn=True, turn_burn=True, river_burn=True, spread=False):
    s.round_done().flop(burn=flop_burn, spread=spread).expect(verdict="ok", phase="flop")
    s.round_done().turn(burn=turn_burn).expect(verdict="ok", phase="turn")
    s.round_done().river(burn=river_burn).expect(verdict="ok", phase="river")
    s.round_done().hand_over().expect(verdict="ok", phase="over")


def unread(s: HandScript) -> str:
    """A card leaves the stub and the mouth sensor counts it, but no tag read comes."""
    card = s.stub.pop(0)
    s.emit("shoe", unread=True)
    return card


def unseen(s: HandScript) -> str:
    """A card leaves the stub unread, and no mouth sensor counts it: no event at all."""
    s.unseen = True
    return s.stub.pop(0)


# -- clean hands: nothing may be raised --------------------------------------------
for players in range(2, 11):
    for spread in (False, True):
        @scenario(f"clean_{players}p_{'spread' if spread else 'one_by_one'}", [], seed=players * 7 + spread)
        def _(s, players=players, spread=spread):
            s.full_hand(players, spread=spread)
            s.expect(verdict="ok", phase="over")


@scenario("clean_omaha_6p", [])
def _(s):
    s.full_hand(6, hole=4)
    s.expect(verdict="ok", phase="over")


@scenario("clean_omaha_heads_up_spread", [])
def _(s):
    s.full_hand(2, hole=4, spread=True)


@scenario("clean_fold_before_flop", [])
def _(s):
    s.new_hand(5).deal().expect(phase="preflop").hand_over().expect(verdict="ok", phase="over")
    s.full_hand(5)


@scenario("clean_burn_drawn_before_round_done", [])
def _(s):
    # The dealer burns for the turn while the last player thinks: nothing by itself.
    s.new_hand(4).deal().round_done().flop().draw()
    s.expect(verdict="ok")
    s.round_done()
    c = s.stub[0]
    s.draw(c)
    s.on(c).expect(verdict="ok", phase="turn")
    s.round_done().river().round_done().hand_over()


for profile, sensor in (("tda-2019", False), ("cz-c40", True)):
    prefix = "c40_" if profile == "cz-c40" else ""
    suffix = "_mouth_sensor" if sensor else ""

    @scenario(f"{prefix}clean_round_done_twice_before_the_flop{suffix}", [], profile=profile, seed=3)
    def _(s, sensor=sensor):
        # ROUND DONE pressed twice: no flop card is out yet, so the second press is a repeat.
        s.new_hand(4, mouth_sensor=sensor).deal().round_done().expect(phase="flop")
        s.round_done().expect(verdict="ok", phase="flop")
        s.flop().expect(verdict="ok", phase="flop")
        s.round_done().expect(phase="turn")
        s.turn().round_done().river().round_done().hand_over().expect(verdict="ok", phase="over")

    @scenario(f"{prefix}clean_all_in_round_done_pressed_ahead{suffix}", [], profile=profile, seed=8)
    def _(s, sensor=sensor):
        # All in before the flop: ROUND DONE for every round left, then the board is run out.
        s.new_hand(3, mouth_sensor=sensor).deal().round_done()
        s.round_done().round_done().round_done().expect(verdict="ok", phase="flop")
        s.flop().expect(verdict="ok", phase="flop")
        s.turn().expect(verdict="ok", phase="turn")
        s.river().expect(verdict="ok", phase="river")
        s.hand_over().expect(verdict="ok", phase="over")


@scenario("clean_board_card_flickers", [])
def _(s):
    s.new_hand(3).deal().round_done()
    s.draw()
    cards = [s.draw() for _ in range(3)]
    for c in cards:
        s.on(c)
    s.off(cards[1]).on(cards[1]).expect(verdict="ok")
    s.round_done().turn().round_done().river().round_done().hand_over()


# -- deal phase ---------------------------------------------------------------------
@scenario("exposed_early_first_card", ["EXPOSED_EARLY"])
def _(s):
    s.new_hand(6).deal(1).button("exposed")
    s.expect(verdict="misdeal", irregularity="EXPOSED_EARLY", phase="halted")
    s.take().expect(verdict="misdeal", step_key="halt.card_after_stop")
    s.new_hand(6).expect(verdict="ok", phase="deal")
    s.deal()
    rest_of_hand(s)


@scenario("exposed_early_second_card", ["EXPOSED_EARLY"])
def _(s):
    # With a mouth sensor no read goes missing unseen: the box is sure it was card 2.
    s.new_hand(3, mouth_sensor=True).deal(2).button("exposed")
    s.expect(verdict="misdeal", irregularity="EXPOSED_EARLY")


@scenario("exposed_second_card_no_mouth_sensor_dealer_says_misdeal", ["EXPOSED_EARLY"])
def _(s):
    # Without one, card 2 by the box's count is card 3 if a read was missed. The count says
    # misdeal; the box does not stop before the dealer answers (ACK: a tag was missed).
    s.new_hand(3).deal(2).button("exposed")
    s.expect(verdict="misdeal", irregularity="EXPOSED_EARLY", step_key="exposed.second_or_later", phase="deal")
    s.button("misdeal").expect(verdict="misdeal", irregularity="EXPOSED_EARLY", phase="halted")


for style in ("one_by_one", "spread"):
    @scenario(f"exposed_deal_full_hand_{style}", ["EXPOSED_DEAL"])
    def _(s, style=style):
        s.new_hand(6).deal(5)
        exposed = s.last[0]
        s.button("exposed").expect(verdict="correct", irregularity="EXPOSED_DEAL", step=0,
                                   step_key="exposed.finish_deal", where={exposed: "burn"})
        s.deal(7).expect(step=1, step_key="exposed.replace", phase="deal")
        s.take().expect(step=2, step_key="exposed.is_burn", phase="preflop")
        s.button("ack").expect(step=3, step_key="exposed.flop_no_burn")
        # The exposed card was the burn: the flop comes with no burn from the stub.
        s.round_done().flop(burn=False, spread=style == "spread")
        s.expect(verdict="ok", irregularity=None, phase="flop")
        s.round_done().turn().round_done().river().round_done().hand_over()
        s.expect(verdict="ok")


@scenario("exposed_deal_last_card_no_ack", ["EXPOSED_DEAL"])
def _(s):
    s.new_hand(4).deal()
    s.button("exposed").expect(verdict="correct", step=1, step_key="exposed.replace")
    s.take().expect(step=2)
    # The dealer forgets ACK: seeing the flop dealt right counts the step as done.
    s.round_done().flop(burn=False).expect(verdict="ok")
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("exposed_deal_then_flop_burned_anyway", ["EXPOSED_DEAL", "WRONG_CORRECTION"])
def _(s):
    s.new_hand(4).deal(6).button("exposed").deal(2).draw()
    s.round_done().flop(burn=True)
    s.expect(verdict="floor", irregularity="WRONG_CORRECTION", step_key="wrong.burn_not_due")


@scenario("exposed_twice", ["EXPOSED_DEAL", "EXPOSED_TWICE"])
def _(s):
    s.new_hand(5).deal(4).button("exposed").expect(verdict="correct")
    s.deal(3).button("exposed").expect(verdict="misdeal", irregularity="EXPOSED_TWICE")
    s.take().expect(verdict="misdeal", step_key="halt.card_after_stop")
    s.new_hand(5).expect(verdict="ok")


@scenario("exposed_pressed_on_a_board_card_changes_nothing", [])
def _(s):
    s.new_hand(4).deal().round_done().flop()
    s.button("exposed").expect(verdict="ok")
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("late_exposed_report_gets_floor", ["EXPOSED_DEAL"])
def _(s):
    s.new_hand(3).deal().round_done()
    # round_done pressed, nothing drawn since: the last shoe card is still a hole card.
    s.button("exposed").expect(verdict="floor", irregularity="EXPOSED_DEAL", step_key="late.substantial_action")
    s.button("ack").button("ack").expect(verdict="ok")
    s.flop().round_done().turn().round_done().river().hand_over()


@scenario("boxed_card_in_deal", ["BOXED_CARD"])
def _(s):
    s.new_hand(6).deal(3)
    boxed = s.draw()
    s.button("boxed").expect(verdict="correct", irregularity="BOXED_CARD", step=0, where={boxed: "burn"})
    s.take().expect(verdict="ok")  # seat 4 got the next card instead
    s.deal(8).expect(phase="preflop")
    rest_of_hand(s)


@scenario("boxed_last_deal_card", ["BOXED_CARD"])
def _(s):
    s.new_hand(3).deal()
    s.button("boxed").expect(verdict="correct", phase="deal")
    s.button("ack").expect(step=1, step_key="boxed.replace")
    s.take().expect(verdict="ok", phase="preflop")
    rest_of_hand(s)


@scenario("boxed_twice", ["BOXED_CARD", "BOXED_TWICE"])
def _(s):
    s.new_hand(6).deal(2).draw()
    s.button("boxed").deal(4).draw()
    s.button("boxed").expect(verdict="misdeal", irregularity="BOXED_TWICE")


@scenario("boxed_card_met_on_the_flop", ["BOXED_CARD"])
def _(s):
    s.new_hand(4).deal().round_done()
    s.draw()  # burn
    boxed = s.draw()
    s.button("boxed").expect(verdict="correct", irregularity="BOXED_CARD", where={boxed: "burn"})
    cards = [s.draw() for _ in range(3)]
    for c in cards:
        s.on(c)
    s.expect(verdict="ok")
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("extra_card_returned_is_first_burn", ["EXTRA_CARD"])
def _(s):
    s.new_hand(6).deal()
    extra = s.draw()
    s.expect(verdict="correct", irregularity="EXTRA_CARD", cards=[extra], step=0)
    s.button("ack").expect(step=1, step_key="extra.return_on_top")
    s.put_back(extra).button("ack").expect(step=2, step_key="extra.burn_it")
    s.round_done().expect(verdict="correct", phase="flop")
    s.take(extra).expect(verdict="ok", irregularity=None)
    s.flop(burn=False)  # the extra card was this flop's burn
    s.expect(verdict="ok", where={extra: "burn"})
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("extra_card_spread_flop_after", ["EXTRA_CARD"], seed=5)
def _(s):
    s.new_hand(9).deal()
    extra = s.draw()
    s.put_back(extra).emit("button", dt=3.0, name="round_done")   # seconds later: no card lingers so long
    s.draw(extra)
    cards = [s.draw() for _ in range(3)]
    for c in reversed(cards):
        s.on(c)
    s.expect(verdict="ok")
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("extra_card_then_wrong_burn", ["EXTRA_CARD", "WRONG_CORRECTION"])
def _(s):
    s.new_hand(4).deal()
    extra = s.draw()
    s.round_done()
    wrong = s.draw()
    s.expect(verdict="correct", irregularity="WRONG_CORRECTION", cards=[wrong, extra])
    s.put_back(wrong).draw(extra)
    s.expect(verdict="ok")
    s.flop(burn=False).expect(verdict="ok")


@scenario("extra_cards_misdeal_after_grace", ["EXTRA_CARD", "EXTRA_CARDS"])
def _(s):
    s.new_hand(5).deal()
    s.draw()
    s.take().expect(verdict="correct", irregularity="EXTRA_CARD")
    s.tick(1.0).tick(1.0).expect(verdict="correct")
    s.tick(1.5).expect(verdict="misdeal", irregularity="EXTRA_CARDS")


@scenario("premature_flop_after_extra_card", ["EXTRA_CARD", "PREMATURE_FLOP"])
def _(s):
    s.new_hand(6).deal()
    burn = s.draw()
    s.expect(irregularity="EXTRA_CARD")
    c1 = s.draw()
    s.on(c1).expect(verdict="correct", irregularity="PREMATURE_FLOP", cards=[c1, burn], where={burn: "burn"})
    s.off(c1).expect(step_key="premature.burn_stays")
    s.put_back(c1, top=False).button("ack").reshuffle_stub().expect(step_key="premature.finish_round")
    s.tick(5).expect(verdict="correct")  # well past the grace period: no EXTRA_CARDS
    s.round_done().expect(step_key="premature.new_street_no_burn", phase="flop")
    s.flop(burn=False).expect(verdict="ok", phase="flop")
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("premature_flop_spread_three_cards", ["EXTRA_CARD", "PREMATURE_FLOP"], seed=9)
def _(s):
    s.new_hand(4).deal()
    s.draw()
    cards = [s.draw() for _ in range(3)]
    s.on(cards[1]).expect(irregularity="PREMATURE_FLOP")
    s.on(cards[0]).on(cards[2])  # the dealer spread them all before looking at the panel
    s.expect(irregularity="PREMATURE_FLOP", step_key="premature.cards_back")
    for c in cards:
        s.off(c)
        s.put_back(c, top=False)
    s.expect(step_key="premature.burn_stays")
    s.reshuffle_stub().round_done().flop(burn=False).expect(verdict="ok")
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("premature_flop_dealt_on_one_by_one", ["EXTRA_CARD", "PREMATURE_FLOP"])
def _(s):
    # No ROUND DONE: the dealer burns and deals the whole flop card by card.
    s.new_hand(4).deal()
    s.draw()
    s.expect(irregularity="EXTRA_CARD")
    cards = []
    for _ in range(3):
        c = s.draw()
        cards.append(c)
        s.on(c)
        s.expect(irregularity="PREMATURE_FLOP", step_key="premature.cards_back")
    for c in cards:
        s.off(c).put_back(c, top=False)
    s.expect(step_key="premature.burn_stays")
    s.reshuffle_stub().round_done().flop(burn=False).expect(verdict="ok")
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("c40_premature_flop_one_by_one_player_folds", ["EXTRA_CARD", "PREMATURE_FLOP"], profile="cz-c40", seed=3)
def _(s):
    s.new_hand(4).deal()
    s.flop()
    s.expect(irregularity="PREMATURE_FLOP", step_key="skipped.ask")
    s.button("ack").expect(verdict="ok", phase="flop")
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("c40_premature_flop_dealt_on_with_an_unread_card", ["EXTRA_CARD", "PREMATURE_FLOP", "UNREAD_CARD"],
          profile="cz-c40", seed=3)
def _(s):
    # No mouth sensor: the dealer deals the premature flop on before reading the panel and the
    # second flop card is not read. It belongs to the premature deal: no floor, no new ruling.
    s.new_hand(4).deal()
    s.draw()
    a = s.draw()
    s.on(a).expect(irregularity="PREMATURE_FLOP", step_key="skipped.ask")
    b = unseen(s)
    s.on(b).tick(1.0).expect(irregularity="PREMATURE_FLOP", step_key="skipped.ask", where={b: "board"})
    c = s.draw()
    s.on(c)
    s.button("ack").expect(verdict="ok", phase="flop")
    s.round_done().turn().round_done().river().round_done().hand_over().expect(verdict="ok", phase="over")


@scenario("premature_flop_by_button", ["PREMATURE_FLOP"])
def _(s):
    s.new_hand(6).deal().round_done().flop()
    flop = list(s.last)
    s.button("premature").expect(verdict="correct", irregularity="PREMATURE_FLOP", phase="preflop")
    for c in flop:
        s.off(c).put_back(c, top=False)
    s.button("ack").reshuffle_stub().round_done().expect(phase="flop", step_key="premature.new_street_no_burn")
    s.flop(burn=False).expect(verdict="ok")
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("premature_flop_stub_contaminated_later", ["PREMATURE_FLOP", "STUB_CONTAMINATION"])
def _(s):
    s.new_hand(6).deal().round_done()
    burn = s.draw()
    s.flop(burn=False)
    flop = list(s.last)
    s.button("premature")
    for c in flop:
        s.off(c).put_back(c, top=False)
    s.button("ack").reshuffle_stub().round_done().flop(burn=False).expect(verdict="ok")
    # The burn was gathered into the stub with the flop by mistake and comes out on the turn.
    s.round_done().draw(burn)
    s.expect(verdict="floor", irregularity="STUB_CONTAMINATION", cards=[burn])


@scenario("premature_flop_burn_shuffled_in_during_correction", ["PREMATURE_FLOP", "WRONG_CORRECTION"])
def _(s):
    s.new_hand(6).deal().round_done()
    burn = s.draw()
    s.flop(burn=False)
    flop = list(s.last)
    s.button("premature")
    for c in flop:
        s.off(c)
    s.reshuffle_stub().round_done()
    s.take(burn).expect(verdict="floor", irregularity="WRONG_CORRECTION", step_key="wrong.reshuffled_in")


@scenario("premature_river_board_card_gathered", ["PREMATURE_RIVER", "WRONG_CORRECTION"])
def _(s):
    s.new_hand(3).deal().round_done().flop()
    flop = list(s.last)
    s.round_done().turn().draw()
    early = s.draw()
    s.on(early).off(early).round_done()
    s.off(flop[0]).expect(verdict="correct", irregularity="WRONG_CORRECTION", step_key="wrong.keep_on_board")
    s.on(flop[0]).expect(irregularity="PREMATURE_RIVER", step_key="reshuffle.now")
    s.reshuffle_stub().river(burn=False).expect(verdict="ok")


@scenario("premature_turn_right_after_an_unread_flop_card", ["UNREAD_CARD", "PREMATURE_TURN"])
def _(s):
    # No mouth sensor: the last flop card is not read and lies on the board waiting for a
    # late read when the burn and the turn come out early. They are the turn's, not flop cards.
    s.new_hand(5).deal().round_done().draw()
    a, b = s.draw(), s.draw()
    s.on(a).on(b)
    c = unseen(s)
    s.on(c).expect(verdict="ok", irregularity=None)
    s.draw()
    early = s.draw()
    s.on(early).expect(verdict="correct", irregularity="PREMATURE_TURN", phase="flop",
                       step_key="premature.set_aside", where={c: "board"})


@scenario("premature_turn", ["PREMATURE_TURN"])
def _(s):
    s.new_hand(5).deal().round_done().flop()
    s.draw()
    early = s.draw()
    s.on(early).expect(verdict="correct", irregularity="PREMATURE_TURN", phase="flop",
                       step_key="premature.set_aside")
    s.off(early).expect(step_key="premature.finish_round", where={early: "aside"})
    s.round_done().expect(step_key="premature.burn_and_turn", phase="turn")
    s.turn().expect(step_key="premature.finish_round")
    s.round_done().expect(step_key="premature.reshuffle_with", phase="river")
    s.put_back(early, top=False).reshuffle_stub()
    s.expect(step_key="premature.new_street_no_burn", where={early: "stub"})
    s.river(burn=False).expect(verdict="ok")
    s.round_done().hand_over()


@scenario("premature_turn_by_button", ["PREMATURE_TURN"])
def _(s):
    s.new_hand(3).deal().round_done().flop().round_done().turn()
    early = s.last[0]
    s.button("premature").expect(irregularity="PREMATURE_TURN", phase="flop")
    s.off(early).round_done().turn().round_done().put_back(early).reshuffle_stub().river(burn=False)
    s.expect(verdict="ok")


@scenario("premature_river", ["PREMATURE_RIVER"])
def _(s):
    s.new_hand(7).deal().round_done().flop().round_done().turn()
    s.draw()
    early = s.draw()
    s.on(early).expect(verdict="correct", irregularity="PREMATURE_RIVER", phase="turn")
    s.off(early).put_back(early, top=False).expect(step_key="premature.finish_round")
    s.round_done().expect(step_key="reshuffle.now", phase="river")
    s.reshuffle_stub().river(burn=False).expect(verdict="ok")
    s.round_done().hand_over()


@scenario("premature_river_by_button", ["PREMATURE_RIVER"])
def _(s):
    s.new_hand(2).deal().round_done().flop().round_done().turn().round_done().river()
    early = s.last[0]
    s.button("premature").expect(irregularity="PREMATURE_RIVER", phase="turn")
    s.off(early).put_back(early, top=False).round_done().reshuffle_stub().river(burn=False)
    s.expect(verdict="ok")


@scenario("premature_river_reshuffle_forgotten_button", ["PREMATURE_RIVER", "WRONG_CORRECTION"])
def _(s):
    s.new_hand(2).deal().round_done().flop().round_done().turn()
    s.draw()
    early = s.draw()
    s.on(early).off(early).put_back(early, top=False).round_done()
    # The dealer shuffles but forgets RESHUFFLED: the river's card out before the button is the step
    # skipped (RULES.md), amber, and the screen asks for it; RESHUFFLED then puts it right.
    s.rng.shuffle(s.stub)
    s.river(burn=False).expect(verdict="correct", irregularity="WRONG_CORRECTION", step_key="reshuffle.now")
    s.button("reshuffled").expect(verdict="ok")


# -- C40 house rules: the skipped player decides ------------------------------------
@scenario("c40_premature_flop_player_folds", ["EXTRA_CARD", "PREMATURE_FLOP"], profile="cz-c40")
def _(s):
    s.new_hand(6).deal()
    s.draw()
    cards = [s.draw() for _ in range(3)]
    s.on(cards[0]).expect(irregularity="PREMATURE_FLOP", step_key="skipped.ask")
    s.on(cards[1]).on(cards[2])
    s.button("ack").expect(verdict="ok", phase="flop")
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("c40_premature_flop_player_acts", ["EXTRA_CARD", "PREMATURE_FLOP"], profile="cz-c40")
def _(s):
    s.new_hand(6).deal()
    s.draw()
    cards = [s.draw() for _ in range(3)]
    for c in cards:
        s.on(c)
    s.round_done().expect(irregularity="PREMATURE_FLOP", step_key="skipped.deal_closed", phase="flop")
    s.draw()
    closed_turn = s.draw()
    s.draw()
    closed_river = s.draw()
    s.expect(step_key="redeal.cards_back", where={closed_turn: "aside", closed_river: "aside"})
    for c in cards:
        s.off(c).put_back(c, top=False)
    s.reshuffle_stub().expect(step_key="redeal.deal_again")
    s.flop(burn=False).expect(verdict="ok", phase="flop")
    s.round_done().on(closed_turn).expect(verdict="ok", phase="turn")
    s.round_done().on(closed_river).expect(verdict="ok", phase="river")
    s.round_done().hand_over()


@scenario("c40_premature_turn_player_folds", ["PREMATURE_TURN"], profile="cz-c40")
def _(s):
    s.new_hand(4).deal().round_done().flop().turn()
    s.expect(irregularity="PREMATURE_TURN", step_key="skipped.ask")
    s.button("ack").expect(verdict="ok", phase="turn")
    s.round_done().river().round_done().hand_over()


@scenario("c40_premature_turn_player_acts", ["PREMATURE_TURN"], profile="cz-c40")
def _(s):
    s.new_hand(4).deal().round_done().flop().turn()
    early = s.last[0]
    s.round_done().expect(step_key="skipped.deal_closed", phase="turn")
    s.draw()
    closed_river = s.draw()
    s.off(early).put_back(early, top=False).reshuffle_stub()
    s.turn(burn=False).expect(verdict="ok", phase="turn")
    s.round_done().on(closed_river).expect(verdict="ok", phase="river")


@scenario("c40_premature_river_player_acts", ["PREMATURE_RIVER"], profile="cz-c40")
def _(s):
    s.new_hand(4).deal().round_done().flop().round_done().turn().river()
    early = s.last[0]
    s.expect(irregularity="PREMATURE_RIVER")
    s.round_done().expect(step_key="redeal.cards_back", phase="river")
    s.off(early).put_back(early, top=False).reshuffle_stub().river(burn=False).expect(verdict="ok")


@scenario("c40_premature_river_player_folds", ["PREMATURE_RIVER"], profile="cz-c40")
def _(s):
    s.new_hand(4).deal().round_done().flop().round_done().turn().river()
    s.button("ack").expect(verdict="ok", phase="river")


# -- the board -------------------------------------------------------------------------
for style in ("one_by_one", "spread"):
    @scenario(f"missed_burn_flop_{style}", ["MISSED_BURN"])
    def _(s, style=style):
        s.new_hand(6).deal().round_done()
        if style == "spread":
            cards = [s.draw() for _ in range(3)]
            s.on(cards[1]).on(cards[0])
            first = cards[0]
            s.expect(verdict="correct", irregularity="MISSED_BURN", cards=[first])
            s.on(cards[2]).off(first).expect(step_key="missed_burn.next_card", where={first: "burn"})
            nxt = s.draw()
            s.on(nxt)
        else:
            first = s.draw()
            s.on(first).expect(verdict="correct", irregularity="MISSED_BURN", cards=[first])
            s.off(first).expect(step_key="missed_burn.next_card")
            for _ in range(3):
                c = s.draw()
                s.on(c)
        s.expect(verdict="ok", where={first: "burn"})
        s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("missed_burn_river", ["MISSED_BURN"])
def _(s):
    s.new_hand(3).deal().round_done().flop().round_done().turn().round_done()
    r = s.draw()
    s.on(r).expect(irregularity="MISSED_BURN")
    s.off(r)
    s.river(burn=False).expect(verdict="ok")


@scenario("double_burn_flop", ["DOUBLE_BURN"])
def _(s):
    s.new_hand(6).deal().round_done()
    s.draw()
    second = s.draw()
    s.flop(burn=False).expect(verdict="correct", irregularity="DOUBLE_BURN", step_key="double_burn.return_on_top")
    s.put_back(second).button("ack").round_done()
    s.take(second).expect(verdict="ok")
    s.turn(burn=False).expect(verdict="ok")  # the returned card was the turn's burn
    s.round_done().river().round_done().hand_over()


@scenario("double_burn_river_recorded", ["DOUBLE_BURN"])
def _(s):
    s.new_hand(6).deal().round_done().flop().round_done().turn().round_done()
    s.draw()
    s.draw()
    s.river(burn=False).expect(verdict="ok", irregularity="DOUBLE_BURN")
    s.button("ack").expect(verdict="ok", irregularity=None)


for style in ("one_by_one", "spread"):
    @scenario(f"four_card_flop_{style}", ["FOUR_CARD_FLOP"])
    def _(s, style=style):
        s.new_hand(8).deal().round_done()
        s.draw()
        cards = [s.draw() for _ in range(4)]
        if style == "spread":
            for c in cards:
                s.on(c)
        else:
            s.events = s.events[:-4]
            s.t -= 2.0
            for c in cards:
                s.emit("shoe", card=c).on(c)
        s.expect(verdict="floor", irregularity="FOUR_CARD_FLOP", step_key="four_flop.call_floor")
        s.button("ack").off(cards[2]).expect(step_key="four_flop.rest_is_flop", where={cards[2]: "burn"})
        s.button("ack").expect(step_key="four_flop.turn_no_burn")
        s.round_done().turn(burn=False).expect(verdict="ok", phase="turn")
        s.round_done().river().round_done().hand_over()


@scenario("four_card_flop_after_round_done_is_missed_burn", ["MISSED_BURN"])
def _(s):
    # Flop complete and the round done: a card straight to the board is a turn without burn.
    s.new_hand(3).deal().round_done().flop().round_done()
    c = s.draw()
    s.on(c).expect(irregularity="MISSED_BURN", phase="turn")


@scenario("fourth_board_card_before_round_done", ["FOUR_CARD_FLOP"])
def _(s):
    s.new_hand(3).deal().round_done().flop()
    c = s.draw()  # straight after the third flop card: belongs to the flop
    s.on(c).expect(verdict="floor", irregularity="FOUR_CARD_FLOP")


@scenario("c40_four_card_flop_redealt", ["FOUR_CARD_FLOP"], profile="cz-c40")
def _(s):
    s.new_hand(8).deal().round_done()
    s.draw()
    cards = [s.draw() for _ in range(4)]
    for c in cards:
        s.on(c)
    s.expect(verdict="correct", irregularity="FOUR_CARD_FLOP", step_key="redeal.cards_back")
    for c in cards:
        s.off(c).put_back(c, top=False)
    s.reshuffle_stub().expect(step_key="redeal.deal_again")
    s.flop(burn=False).expect(verdict="ok")
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("c40_two_card_turn_redealt", ["FOUR_CARD_FLOP"], profile="cz-c40")
def _(s):
    s.new_hand(4).deal().round_done().flop().round_done()
    s.draw()
    t1 = s.draw()
    t2 = s.draw()
    s.on(t1).on(t2).expect(irregularity="FOUR_CARD_FLOP", phase="turn")
    s.off(t1).off(t2).put_back(t1, top=False).put_back(t2, top=False).reshuffle_stub()
    s.turn(burn=False).expect(verdict="ok")


@scenario("tda_two_card_turn_floor_decides", ["FOUR_CARD_FLOP"])
def _(s):
    # A second card straight after the turn's, no shoe card between: a card too many on the turn, and
    # the floor decides which plays (RULES.md, the extra board card). With a burn between, it would be
    # the river come early (premature_river).
    s.new_hand(4).deal().round_done().flop().round_done()
    s.draw()
    t1 = s.draw()
    s.on(t1)
    t2 = s.draw()
    s.on(t2).expect(verdict="floor", irregularity="FOUR_CARD_FLOP", step_key="extra_board.floor_decides",
                    cards=[t1, t2], phase="turn")
    s.off(t2).button("ack").button("ack").expect(verdict="ok")
    s.round_done().river().expect(verdict="ok")
    s.round_done().hand_over().expect(verdict="ok")


@scenario("rabbit_hunt", ["RABBIT_HUNT"])
def _(s):
    s.new_hand(3).deal().round_done().flop().hand_over()
    s.take().expect(verdict="floor", irregularity="RABBIT_HUNT", phase="over")
    s.button("ack").button("ack").expect(verdict="ok")
    s.full_hand(3)


# -- deck integrity ----------------------------------------------------------------------
@scenario("duplicate_card_in_deal", ["DUPLICATE_CARD"])
def _(s):
    s.new_hand(4).deal(3)
    s.take(s.events[1]["card"]).expect(verdict="void", irregularity="DUPLICATE_CARD", phase="halted")
    s.new_hand(4).expect(verdict="ok")
    s.deal()
    rest_of_hand(s)


@scenario("duplicate_card_on_board", ["DUPLICATE_CARD"])
def _(s):
    s.new_hand(3).deal().round_done().flop()
    s.round_done()
    s.draw()
    s.draw(s.last[0])
    dup = s.events[-1]["card"]
    s.expect(verdict="void", cards=[dup])


@scenario("foreign_card_drawn", ["FOREIGN_CARD"])
def _(s):
    s.new_hand(6).deal(4)
    s.emit("shoe", card="Qs", deck="B").expect(verdict="void", irregularity="FOREIGN_CARD", cards=["Qs"])


@scenario("foreign_card_on_board", ["FOREIGN_CARD"])
def _(s):
    s.new_hand(6).deal().round_done().draw()
    s.emit("board_on", card="2c", deck="B").expect(verdict="void", irregularity="FOREIGN_CARD")


@scenario("unknown_tag_floor_says_play_on", ["UNKNOWN_TAG"])
def _(s):
    s.new_hand(2).deal(2)
    s.emit("shoe", uid="04FFFFFFFFFF01").expect(verdict="floor", irregularity="UNKNOWN_TAG",
                                                   cards=["uid:04FFFFFFFFFF01"])
    s.button("ack").button("ack").expect(verdict="ok")
    s.deal(1)
    rest_of_hand(s)


@scenario("unknown_tag_floor_confirms_foreign", ["UNKNOWN_TAG", "FOREIGN_CARD"])
def _(s):
    s.new_hand(2).deal(2)
    s.emit("shoe", uid="AABBCCDD")
    s.button("misdeal").expect(verdict="void", irregularity="FOREIGN_CARD", cards=["uid:AABBCCDD"])


@scenario("board_not_from_shoe", ["BOARD_NOT_FROM_SHOE"])
def _(s):
    # With a mouth sensor every card out of the stub shows: a card on the board the
    # shoe never reported, and no late read within a second, came from elsewhere.
    s.new_hand(3, mouth_sensor=True).deal().round_done().draw()
    c = s.stub[5]
    s.on(c).expect(verdict="ok")
    s.tick(1.0).expect(verdict="floor", irregularity="BOARD_NOT_FROM_SHOE", cards=[c])


@scenario("board_not_from_shoe_during_the_deal", ["BOARD_NOT_FROM_SHOE"])
def _(s):
    # No mouth sensor, but no board card is due during the deal: no missed read explains it.
    s.new_hand(3).deal(4)
    c = s.stub[5]
    s.on(c).expect(verdict="floor", irregularity="BOARD_NOT_FROM_SHOE", cards=[c])


@scenario("unread_turn_card_and_no_burn", ["MISSED_BURN"])
def _(s):
    # No mouth sensor: the turn appears on the board unread and nothing was burned. The
    # missed read explains the card; the missing burn is still a missed burn.
    s.new_hand(3).deal().round_done().flop().round_done()
    c = unseen(s)
    s.on(c).tick(1.0).expect(verdict="correct", irregularity="MISSED_BURN", cards=[c])


@scenario("board_not_from_shoe_hole_card_on_board", ["BOARD_NOT_FROM_SHOE"])
def _(s):
    s.new_hand(3)
    hole = s.draw()
    s.deal(5).round_done().draw()
    s.on(hole).expect(verdict="floor", irregularity="BOARD_NOT_FROM_SHOE", cards=[hole])


@scenario("joker_in_deal", ["JOKER"])
def _(s):
    s.new_hand(4).deal(5)
    s.emit("shoe", card="joker").expect(verdict="correct", irregularity="JOKER", cards=["joker"],
                                        step_key="joker.show_and_burn")
    s.deal(3).expect(verdict="ok", phase="preflop")
    rest_of_hand(s)


@scenario("joker_on_flop", ["JOKER"])
def _(s):
    s.new_hand(4).deal().round_done()
    s.draw()
    s.emit("shoe", card="joker").expect(irregularity="JOKER")
    cards = [s.draw() for _ in range(3)]
    for c in cards:
        s.on(c)
    s.expect(verdict="ok")
    s.round_done().turn().round_done().river()


# -- misdeal and floor buttons, seats ------------------------------------------------------
@scenario("manual_misdeal_then_new_hand", [])
def _(s):
    s.new_hand(5).deal(4).button("misdeal").expect(verdict="misdeal", irregularity=None, phase="halted")
    s.take().expect(verdict="misdeal", step_key="halt.card_after_stop")
    s.full_hand(5)
    s.expect(verdict="ok")


@scenario("floor_button_then_ack", [])
def _(s):
    s.new_hand(5).deal().button("floor").expect(verdict="floor", irregularity=None)
    s.button("ack").expect(verdict="ok")
    rest_of_hand(s)


@scenario("seat_card_to_wrong_seat", ["SEAT_ERROR"])
def _(s):
    s.new_hand(3, seats=[2, 5, 9])
    c = s.draw()
    s.emit("zone_on", card=c, zone="seat5").expect(verdict="misdeal", irregularity="SEAT_ERROR",
                                                   step_key="seat.wrong_seat")


@scenario("seat_card_at_empty_seat", ["SEAT_ERROR"])
def _(s):
    s.new_hand(3, seats=[2, 5, 9])
    c = s.draw()
    s.emit("zone_on", card=c, zone="seat2")
    c = s.draw()
    s.emit("zone_on", card=c, zone="seat6").expect(verdict="misdeal", step_key="seat.not_dealt_in")


@scenario("seat_missing_card", ["SEAT_ERROR"])
def _(s):
    s.new_hand(2, seats=[3, 7])
    for i in range(4):
        c = s.draw()
        if i != 3:
            s.emit("zone_on", card=c, zone=f"seat{[3, 7][i % 2]}")
    s.tick(2).expect(verdict="ok")
    s.tick(2).expect(verdict="misdeal", irregularity="SEAT_ERROR", step_key="seat.wrong_count")


@scenario("seats_clean_hand", [])
def _(s):
    s.new_hand(3, seats=[1, 4, 8])
    for i in range(6):
        c = s.draw()
        s.emit("zone_on", card=c, zone=f"seat{[1, 4, 8][i % 3]}")
    s.tick(4).expect(verdict="ok")
    rest_of_hand(s)


# -- sensing faults (RULES.md): a read the radio missed is no dealing error ------------

for sensor in (False, True):
    @scenario(f"seats_unread_hole_card_{'mouth_sensor' if sensor else 'no_mouth_sensor'}", ["UNREAD_CARD"])
    def _(s, sensor=sensor):
        # The shoe misses the second hole card's read; its seat antenna sees it. It is that
        # hole card: every seat counts its cards and no card looks dealt to the wrong seat.
        s.new_hand(3, seats=[1, 4, 8], mouth_sensor=sensor)
        for i in range(6):
            if i == 1:
                c = unread(s) if sensor else unseen(s)
            else:
                c = s.draw()
            s.emit("zone_on", card=c, zone=f"seat{[1, 4, 8][i % 3]}")
            if i == 1:
                s.expect(verdict="ok", irregularity="UNREAD_CARD", where={c: "seat2"})
        s.tick(4).expect(verdict="ok", phase="preflop")
        rest_of_hand(s)


@scenario("unread_hole_card_mouth_sensor", ["UNREAD_CARD"])
def _(s):
    s.new_hand(4, mouth_sensor=True).deal(5)
    unread(s)
    s.expect(verdict="ok", irregularity="UNREAD_CARD", step_key="unread.hole_card", phase="deal")
    s.deal(2).expect(verdict="ok", phase="preflop")
    rest_of_hand(s)
    s.expect(irregularity="UNREAD_CARD", step_key="unread.check_deck")


@scenario("unread_burn_mouth_sensor", ["UNREAD_CARD"])
def _(s):
    s.new_hand(3, mouth_sensor=True).deal().round_done()
    unread(s)
    s.expect(verdict="ok", irregularity="UNREAD_CARD", step_key="unread.burn")
    s.flop(burn=False).expect(verdict="ok", phase="flop")
    s.round_done().turn().round_done().river().round_done().hand_over().expect(verdict="ok")


@scenario("unread_flop_card_mouth_sensor", ["UNREAD_CARD"])
def _(s):
    s.new_hand(3, mouth_sensor=True).deal().round_done().draw()
    a = s.draw()
    s.on(a)
    b = unread(s)
    s.expect(verdict="ok", irregularity="UNREAD_CARD", step_key="unread.board_card", cards=[])
    s.on(b).expect(verdict="ok", irregularity="UNREAD_CARD", cards=[b], where={b: "board"})
    c = s.draw()
    s.on(c).expect(verdict="ok", phase="flop")
    s.round_done().turn().round_done().river().round_done().hand_over()
    s.expect(verdict="ok", irregularity="UNREAD_CARD", step_key="unread.check_tags", cards=[b])


@scenario("unread_card_is_the_returned_extra_card", ["EXTRA_CARD", "UNREAD_CARD"])
def _(s):
    s.new_hand(3, mouth_sensor=True).deal()
    extra = s.draw()
    s.expect(verdict="correct", irregularity="EXTRA_CARD")
    s.put_back(extra).button("ack").button("ack").round_done()
    s.stub.remove(extra)
    s.emit("shoe", unread=True).expect(verdict="ok", irregularity="UNREAD_CARD", cards=[extra],
                                       where={extra: "hand"})
    s.flop(burn=False).expect(verdict="ok", phase="flop")
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("exposed_third_card_after_an_unread_one", ["EXPOSED_EARLY", "EXPOSED_DEAL", "UNREAD_CARD"])
def _(s):
    # No mouth sensor: the first hole card was not read, the third is exposed. By the box's
    # count it is the second; the dealer answers ACK and the exposed card is corrected.
    s.new_hand(3)
    unseen(s)
    s.deal(2)
    exposed = s.last[0]
    s.button("exposed").expect(verdict="misdeal", irregularity="EXPOSED_EARLY",
                               step_key="exposed.second_or_later")
    s.button("ack").expect(verdict="correct", irregularity="EXPOSED_DEAL", step_key="exposed.finish_deal",
                           where={exposed: "burn"})
    s.deal(3).expect(step_key="exposed.replace", phase="deal")
    s.take().expect(step_key="exposed.is_burn", phase="preflop")
    s.button("ack").expect(step_key="exposed.flop_no_burn")
    rest_of_hand(s, flop_burn=False)


@scenario("returned_extra_card_redrawn_unread", ["EXTRA_CARD", "WRONG_CORRECTION", "UNREAD_CARD"])
def _(s):
    # No mouth sensor: the extra card goes back and is burned as asked, but its tag is not
    # read. The next card read is the first flop card: the box asks instead of correcting.
    s.new_hand(4).deal()
    extra = s.draw()
    s.put_back(extra).round_done()
    s.stub.remove(extra)
    first = s.stub[0]
    s.take(first).expect(verdict="correct", irregularity="WRONG_CORRECTION", cards=[first, extra],
                         step_key="wrong.expected_card_or_unread")
    s.button("ack").expect(verdict="ok", irregularity="UNREAD_CARD", cards=[extra], where={extra: "hand"})
    s.on(first)
    for c in s.stub[:2]:
        s.draw(c)
        s.on(c)
    s.expect(verdict="ok", phase="flop", where={first: "board", extra: "burn"})
    s.round_done().turn().round_done().river().round_done().hand_over().expect(verdict="ok", phase="over")


@scenario("burn_put_back_after_an_unread_first_burn", ["DUPLICATE_CARD", "UNREAD_CARD"])
def _(s):
    # No mouth sensor: the flop's first burn is not read, the dealer burns a second card,
    # sees the double burn and puts it back as the turn's burn. By the box's count the same
    # card came out twice (void); it asks before it stops the hand, and ACK says put back.
    s.new_hand(4).deal().round_done()
    unseen(s)
    second = s.draw()
    s.flop(burn=False).expect(verdict="ok", phase="flop", where={second: "burn"})
    s.put_back(second).round_done()
    s.take(second).expect(verdict="void", irregularity="DUPLICATE_CARD", step_key="duplicate.returned_burn")
    s.button("ack").expect(verdict="ok", irregularity="UNREAD_CARD", step_key="unread.burn")
    s.street(1, burn=False)
    s.expect(verdict="ok", phase="turn", where={second: "burn"})
    s.round_done().river().round_done().hand_over().expect(verdict="ok", phase="over")


@scenario("burn_out_again_with_a_mouth_sensor_is_a_duplicate", ["DUPLICATE_CARD"])
def _(s):
    s.new_hand(4, mouth_sensor=True).deal().round_done()
    burn = s.draw()
    s.flop(burn=False).round_done()
    s.take(burn).expect(verdict="void", irregularity="DUPLICATE_CARD")


@scenario("short_deal_all_seats_have_cards", ["SHORT_DEAL", "UNREAD_CARD"])
def _(s):
    s.new_hand(4).deal(5)
    unseen(s)
    s.deal(2).round_done()
    s.expect(verdict="correct", irregularity="SHORT_DEAL", step_key="short_deal.count", phase="deal")
    s.button("ack").expect(verdict="ok", irregularity="UNREAD_CARD", step_key="unread.some_hole_card",
                           phase="flop")
    s.flop().expect(verdict="ok", phase="flop")
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("short_deal_a_seat_is_short", ["SHORT_DEAL"])
def _(s):
    s.new_hand(4).deal(7).round_done()
    s.expect(verdict="correct", irregularity="SHORT_DEAL", phase="deal")
    s.draw()  # 002 r37: the short seat gets the next card, before any burn
    s.expect(verdict="ok", phase="flop")
    s.flop().round_done().turn().round_done().river().round_done().hand_over().expect(verdict="ok")


@scenario("short_deal_two_unread_all_seats_have_cards", ["SHORT_DEAL", "UNREAD_CARD"])
def _(s):
    # Two hole tags unread in one deal (~1% of ten-seat Omaha deals): one question, one ACK.
    s.new_hand(6).deal(4)
    unseen(s)
    s.deal(3)
    unseen(s)
    s.deal(3).round_done()
    s.expect(verdict="correct", irregularity="SHORT_DEAL", step_key="short_deal.count", phase="deal")
    s.button("ack").expect(verdict="ok", irregularity="UNREAD_CARD", step_key="unread.some_hole_card",
                           phase="flop")
    s.flop().expect(verdict="ok", phase="flop")
    s.round_done().turn().round_done().river().round_done().hand_over().expect(verdict="ok", phase="over")


@scenario("short_deal_two_seats_are_short", ["SHORT_DEAL"])
def _(s):
    s.new_hand(6).deal(10).round_done()
    s.expect(verdict="correct", irregularity="SHORT_DEAL", phase="deal")
    s.draw()   # 002 r37: each short seat gets the next card, before any burn
    s.expect(phase="deal")
    s.draw()
    s.expect(verdict="ok", phase="flop")
    s.flop().round_done().turn().round_done().river().round_done().hand_over().expect(verdict="ok")


@scenario("short_deal_a_seat_is_short_spread_flop", ["SHORT_DEAL"])
def _(s):
    s.new_hand(4).deal(7).round_done()
    s.expect(verdict="correct", irregularity="SHORT_DEAL", phase="deal")
    seat_card = s.draw()  # 002 r37: the short seat gets the next card, before any burn
    burn = s.stub[0]
    s.flop(spread=True).expect(verdict="ok", phase="flop", where={seat_card: "seat4", burn: "burn"})
    s.round_done().turn().round_done().river().round_done().hand_over().expect(verdict="ok")


for profile in ("tda-2019", "cz-c40"):
    prefix = "c40_" if profile == "cz-c40" else ""

    @scenario(f"{prefix}short_deal_unanswered_the_dealer_goes_on_with_the_flop", ["SHORT_DEAL", "UNREAD_CARD"],
              profile=profile, seed=4)
    def _(s):
        # The dealer neither counts nor presses ACK: burn and flop, as if every seat had its cards.
        # The first flop card on the board says they did: the burn was no hole card (RULES.md).
        s.new_hand(4).deal(3)
        unseen(s)
        s.deal(4).round_done()
        s.expect(verdict="correct", irregularity="SHORT_DEAL", step_key="short_deal.count", phase="deal")
        burn = s.draw()
        s.expect(verdict="ok", phase="flop")
        first = s.draw()
        s.on(first).expect(verdict="ok", irregularity="UNREAD_CARD", step_key="unread.some_hole_card",
                           where={first: "board"})
        for _ in range(2):
            s.on(s.draw())
        s.expect(verdict="ok", phase="flop", where={burn: "burn"})
        s.round_done().turn().expect(verdict="ok", phase="turn")
        s.round_done().river().round_done().hand_over().expect(verdict="ok", phase="over")

    @scenario(f"{prefix}short_deal_unanswered_spread_flop", ["SHORT_DEAL", "UNREAD_CARD"], profile=profile, seed=5)
    def _(s):
        # Burn and flop drawn as three, spread: the flop's first card drawn is laid down last.
        s.new_hand(5).deal(6)
        unseen(s)
        s.deal(3).round_done()
        s.expect(verdict="correct", irregularity="SHORT_DEAL", phase="deal")
        burn = s.draw()
        cards = [s.draw() for _ in range(3)]
        s.on(cards[2]).on(cards[1]).expect(verdict="ok", phase="flop")
        s.on(cards[0]).expect(verdict="ok", irregularity="UNREAD_CARD", where={burn: "burn", cards[0]: "board"})
        s.round_done().turn().round_done().river().round_done().hand_over().expect(verdict="ok", phase="over")


@scenario("short_deal_two_unread_unanswered", ["SHORT_DEAL", "UNREAD_CARD"], seed=6)
def _(s):
    # Two hole tags unread: the burn and the first flop card are taken for the short seats' cards
    # until that flop card reaches the board.
    s.new_hand(6).deal(4)
    unseen(s)
    s.deal(3)
    unseen(s)
    s.deal(3).round_done()
    s.expect(verdict="correct", irregularity="SHORT_DEAL", phase="deal")
    burn = s.draw()
    s.expect(phase="deal")
    first = s.draw()
    s.expect(verdict="ok", phase="flop")
    s.on(first).expect(verdict="ok", irregularity="UNREAD_CARD", where={first: "board"})
    for _ in range(2):
        s.on(s.draw())
    s.expect(verdict="ok", phase="flop", where={burn: "burn"})
    s.round_done().turn().round_done().river().round_done().hand_over().expect(verdict="ok", phase="over")


@scenario("extra_card_put_back_after_an_unread_hole_card_is_asked", ["DUPLICATE_CARD", "UNREAD_CARD"], seed=7)
def _(s):
    # No mouth sensor: a hole card's tag is not read and a card too many is dealt, so the box
    # counts a full deal. The dealer puts the extra card back on top and burns it after the round:
    # to the box the last hole card comes out again. A clone would look the same: it asks.
    s.new_hand(4).deal(2)
    unseen(s)
    s.deal(5)
    extra = s.draw()
    s.put_back(extra).emit("button", dt=3.0, name="round_done")   # seconds later: no card lingers so long
    s.draw(extra)
    s.expect(verdict="void", irregularity="DUPLICATE_CARD", step_key="duplicate.hole_card_again",
             cards=[extra])
    s.button("ack").expect(verdict="ok", irregularity="UNREAD_CARD", step_key="unread.some_hole_card")
    for _ in range(3):
        s.on(s.draw())
    s.expect(verdict="ok", phase="flop", where={extra: "burn"})
    s.round_done().turn().round_done().river().round_done().hand_over().expect(verdict="ok", phase="over")


@scenario("last_hole_card_cloned_no_mouth_sensor", ["DUPLICATE_CARD"], seed=7)
def _(s):
    # A clone of the last hole card drawn after the round: the dealer put nothing back.
    s.new_hand(4).deal()
    last = s.events[-1]["card"]
    s.emit("button", dt=3.0, name="round_done").draw(last)
    s.expect(verdict="void", irregularity="DUPLICATE_CARD", step_key="duplicate.hole_card_again")
    s.button("misdeal").expect(verdict="void", irregularity="DUPLICATE_CARD", step_key="halt.void_duplicate",
                               cards=[last], phase="halted")


@scenario("short_deal_unanswered_everyone_folds", ["SHORT_DEAL", "UNREAD_CARD"], seed=9)
def _(s):
    # HAND OVER ends the hand with the question open: it goes on record, and the tag not read
    # is to be checked after the hand.
    s.new_hand(5).deal(4)
    unseen(s)
    s.deal(5).round_done()
    s.expect(verdict="correct", irregularity="SHORT_DEAL", phase="deal")
    s.hand_over().expect(verdict="ok", irregularity="UNREAD_CARD", step_key="unread.check_deck", phase="over")


@scenario("unread_hole_card_burn_drawn_before_round_done", ["MISSED_BURN", "UNREAD_CARD"])
def _(s):
    # No mouth sensor: the burn, drawn before round_done, looks like the last hole card.
    # The flop then looks unburned; the dealer answers that a card was burned.
    s.new_hand(3).deal(3)
    unseen(s)
    s.deal(2).draw()
    s.round_done()
    cards = s.stub[:3]
    s.draw(cards[0])
    s.on(cards[0]).expect(verdict="correct", irregularity="MISSED_BURN", step_key="missed_burn.take_off")
    s.button("ack").expect(verdict="ok", irregularity="UNREAD_CARD", step_key="unread.burn",
                           where={cards[0]: "board"})
    for c in cards[1:]:
        s.draw(c)
        s.on(c)
    s.expect(verdict="ok", phase="flop")
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("unread_burn_answered_at_missed_burn", ["MISSED_BURN", "UNREAD_CARD"])
def _(s):
    s.new_hand(5).deal().round_done()
    unseen(s)
    cards = s.stub[:3]
    s.draw(cards[0])
    s.on(cards[0]).expect(verdict="correct", irregularity="MISSED_BURN")
    s.button("ack").expect(verdict="ok", irregularity="UNREAD_CARD", where={cards[0]: "board"})
    for c in cards[1:]:
        s.draw(c)
        s.on(c)
    s.expect(verdict="ok", phase="flop")
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("unread_flop_card_no_mouth_sensor", ["UNREAD_CARD"])
def _(s):
    s.new_hand(6).deal().round_done().draw()
    a, b, c = s.stub[:3]
    s.draw(a)
    s.on(a)
    unseen(s)
    s.on(b).expect(verdict="ok", irregularity=None)
    s.tick(1.0).expect(verdict="ok", irregularity="UNREAD_CARD", cards=[b], where={b: "board"})
    s.draw(c)
    s.on(c).expect(verdict="ok", phase="flop")
    s.round_done().turn().round_done().river().round_done().hand_over()


@scenario("late_shoe_read_of_a_board_card", [])
def _(s):
    # Timing noise: the board antenna reports the card before the shoe's read arrives.
    s.new_hand(6).deal().round_done().draw()
    a, b, c = s.stub[:3]
    s.stub[:3] = []
    s.emit("board_on", dt=0.2, card=a).emit("shoe", dt=0.1, card=a).expect(verdict="ok", where={a: "board"})
    s.emit("shoe", card=b).emit("board_on", card=b)
    s.emit("board_on", dt=0.3, card=c).emit("shoe", dt=0.3, card=c).expect(verdict="ok", where={c: "board"})
    s.round_done().turn().round_done().river().round_done().hand_over().expect(verdict="ok")


@scenario("premature_flop_with_an_unread_flop_card", ["EXTRA_CARD", "PREMATURE_FLOP"])
def _(s):
    # A sensing fault does not hide a dealing error: the flop still came before round_done.
    s.new_hand(3).deal().draw()
    s.expect(irregularity="EXTRA_CARD")
    a = unseen(s)
    s.on(a).tick(1.0).expect(verdict="correct", irregularity="PREMATURE_FLOP", step_key="premature.cards_back")


@scenario("four_card_flop_spread_first_card_laid_down_last", ["FOUR_CARD_FLOP"])
def _(s):
    s.new_hand(4).deal().round_done().draw()
    cards = [s.draw() for _ in range(4)]
    for c in cards[1:]:
        s.on(c)
    # Five cards out for the flop: a double burn or a four-card flop, the cards decide (amber meanwhile).
    s.expect(verdict="correct", irregularity=None, step_key="grace.cards_decide")
    s.on(cards[0]).expect(verdict="floor", irregularity="FOUR_CARD_FLOP", step_key="four_flop.call_floor")


@scenario("double_burn_flop_spread", ["DOUBLE_BURN"])
def _(s):
    s.new_hand(4).deal().round_done().draw()
    s.draw()
    cards = [s.draw() for _ in range(3)]
    for c in cards:
        s.on(c)
    s.expect(verdict="correct", irregularity=None, step_key="grace.cards_decide")
    s.tick(3.0).expect(verdict="correct", irregularity="DOUBLE_BURN", step_key="double_burn.return_on_top")


@scenario("reader_faults_again_and_again", ["READER_DEGRADED"])
def _(s):
    s.new_hand(3).deal()
    for _ in range(3):
        s.emit("reader_fault", reader="board").emit("reader_ok", reader="board")
    s.expect(verdict="ok", irregularity="READER_DEGRADED", step_key="reader.faults_often")
    s.button("ack").expect(irregularity=None)
    rest_of_hand(s)


# -- green means right (issue 46): a step is done when the readers say so, a button answers its own step --
@scenario("green_joker_turn_left_beside_its_replacement", ["JOKER", "WRONG_CORRECTION"], profile="cz-c40")
def _(s):
    # The turn is a joker and the dealer lays its replacement beside it: the joker never left the
    # board, so the step "show it, put it with the burns" is not done, whatever came after it.
    s.new_hand(4).deal().round_done().flop().round_done()
    s.draw()
    s.draw("joker")
    s.on("joker").expect(verdict="correct", irregularity="JOKER", step_key="joker.show_and_burn")
    c = s.draw()
    s.expect(verdict="correct", irregularity="JOKER", step_key="joker.show_and_burn")
    s.on(c).expect(verdict="correct", irregularity="JOKER", step_key="joker.show_and_burn")
    s.round_done().expect(verdict="floor", irregularity="WRONG_CORRECTION")


@scenario("green_joker_turn_left_then_an_unread_count", ["JOKER", "UNREAD_CARD", "WRONG_CORRECTION"])
def _(s):
    # With a mouth sensor: the replacement counted with no read is not "a turn card not read, play
    # on" while the joker still lies on the board; ROUND DONE with it there is bet on.
    s.new_hand(4, mouth_sensor=True).deal().round_done().flop().round_done()
    s.draw()
    s.draw("joker")
    s.on("joker").expect(verdict="correct", irregularity="JOKER")
    unread(s)
    s.expect(verdict="correct", irregularity="JOKER", step_key="joker.show_and_burn")
    s.round_done().expect(verdict="floor", irregularity="WRONG_CORRECTION")


@scenario("green_missed_burn_rest_of_flop_laid_over_it", ["MISSED_BURN", "WRONG_CORRECTION"])
def _(s):
    # A mouth sensor counts every card: no unread burn explains the first card, so the rest of the
    # flop laid over it is wrong at once; taking it off and laying the next card puts it right.
    s.new_hand(5, mouth_sensor=True).deal().round_done()
    first = s.draw()
    s.on(first).expect(verdict="correct", irregularity="MISSED_BURN", step_key="missed_burn.take_off")
    c2 = s.draw()
    s.on(c2).expect(verdict="correct", irregularity="WRONG_CORRECTION", step_key="missed_burn.take_off")
    c3 = s.draw()
    s.on(c3).expect(verdict="correct", irregularity="WRONG_CORRECTION", step_key="missed_burn.take_off")
    s.off(first).expect(verdict="correct", irregularity="MISSED_BURN", step_key="missed_burn.next_card")
    c4 = s.draw()
    s.on(c4).expect(verdict="ok", irregularity=None, where={first: "burn"})
    s.round_done().turn().expect(verdict="ok")
    s.round_done().river().round_done().hand_over().expect(verdict="ok")


@scenario("green_reshuffled_pressed_with_a_flop_card_on_the_board", ["EXTRA_CARD", "PREMATURE_FLOP",
                                                                      "WRONG_CORRECTION"])
def _(s):
    s.new_hand(4).deal()
    s.draw()
    cards = [s.draw() for _ in range(3)]
    for c in cards:
        s.on(c)
    s.expect(verdict="correct", irregularity="PREMATURE_FLOP", step_key="premature.cards_back")
    s.off(cards[0]).off(cards[1])
    s.button("reshuffled").expect(verdict="correct", irregularity="WRONG_CORRECTION",
                                  step_key="premature.cards_back")
    s.off(cards[2]).expect(verdict="correct", irregularity="PREMATURE_FLOP", step_key="premature.burn_stays")
    for c in cards:
        s.put_back(c, top=False)
    s.reshuffle_stub().expect(verdict="correct", irregularity="PREMATURE_FLOP", step_key="premature.finish_round")
    s.round_done().expect(step_key="premature.new_street_no_burn")
    s.flop(burn=False).expect(verdict="ok")
    s.round_done().turn().round_done().river().round_done().hand_over().expect(verdict="ok")


@scenario("green_reshuffled_pressed_at_burn_and_turn", ["PREMATURE_TURN", "WRONG_CORRECTION"])
def _(s):
    # Omaha, a premature turn: the reshuffle belongs after the turn's round, not at "burn and deal".
    s.new_hand(4, hole=4).deal().round_done().flop()
    s.draw()
    early = s.draw()
    s.on(early).expect(irregularity="PREMATURE_TURN", step_key="premature.set_aside")
    s.off(early).round_done().expect(step_key="premature.burn_and_turn", phase="turn")
    s.button("reshuffled").expect(verdict="correct", irregularity="WRONG_CORRECTION",
                                  step_key="premature.burn_and_turn")
    s.turn().expect(verdict="correct", irregularity="PREMATURE_TURN", step_key="premature.finish_round")
    s.round_done().expect(step_key="premature.reshuffle_with", phase="river")
    s.put_back(early, top=False).reshuffle_stub().expect(step_key="premature.new_street_no_burn")
    s.river(burn=False).expect(verdict="ok")
    s.round_done().hand_over().expect(verdict="ok")


@scenario("green_river_drawn_before_reshuffled", ["PREMATURE_TURN", "WRONG_CORRECTION"])
def _(s):
    # The river's card out of a stub not yet reshuffled: the screen asks for the reshuffle skipped.
    s.new_hand(4).deal().round_done().flop()
    s.draw()
    early = s.draw()
    s.on(early).off(early).round_done().turn().round_done()
    s.expect(step_key="premature.reshuffle_with", phase="river")
    s.draw()
    s.expect(verdict="correct", irregularity="WRONG_CORRECTION", step_key="premature.reshuffle_with")


@scenario("green_round_done_inside_the_grace_period", ["EXTRA_CARD", "EXTRA_CARDS"], profile="cz-c40")
def _(s):
    # Two cards after the deal, Omaha: the grace period belongs to the cards, and the panel stays
    # amber through it whatever the buttons say.
    s.new_hand(3, hole=4).deal()
    s.draw()
    s.expect(verdict="correct", irregularity="EXTRA_CARD")
    s.draw()
    s.round_done().expect(verdict="correct")
    s.button("ack").expect(verdict="correct")
    s.tick(3.0).expect(verdict="misdeal", irregularity="EXTRA_CARDS")


@scenario("green_joker_on_the_flop_acked_on_the_board", ["JOKER", "WRONG_CORRECTION"])
def _(s):
    # ACK is no answer while the joker lies on the board: the step is shown again, and the
    # joker taken off ends it.
    s.new_hand(6).deal().round_done()
    s.draw()
    c1 = s.draw()
    s.on(c1)
    s.draw("joker")
    s.on("joker").expect(irregularity="JOKER", step_key="joker.show_and_burn")
    c2 = s.draw()
    s.on(c2)
    c3 = s.draw()
    s.on(c3).expect(verdict="correct", irregularity="JOKER", step_key="joker.show_and_burn")
    s.button("ack").expect(verdict="correct", irregularity="WRONG_CORRECTION", step_key="joker.show_and_burn")
    s.off("joker").expect(verdict="ok", irregularity=None)
    s.round_done().turn().round_done().river().round_done().hand_over().expect(verdict="ok")


@scenario("green_second_river_card_redealt", ["FOUR_CARD_FLOP", "WRONG_CORRECTION"], profile="cz-c40")
def _(s):
    # Two river cards laid at once: C40 deals the street again. RESHUFFLED with both still on the
    # board is no answer; with them back, it is.
    s.new_hand(5).deal().round_done().flop().round_done().turn().round_done()
    s.draw()
    r1, r2 = s.draw(), s.draw()
    s.on(r1).on(r2).expect(verdict="correct", irregularity="FOUR_CARD_FLOP", step_key="redeal.cards_back")
    s.button("reshuffled").expect(verdict="correct", irregularity="WRONG_CORRECTION",
                                  step_key="redeal.cards_back")
    s.off(r1).off(r2).put_back(r1, top=False).put_back(r2, top=False)
    s.expect(verdict="correct", irregularity="FOUR_CARD_FLOP", step_key="reshuffle.now")
    s.reshuffle_stub().expect(step_key="redeal.deal_again")
    s.river(burn=False).expect(verdict="ok")
    s.round_done().hand_over().expect(verdict="ok")


@scenario("green_second_river_card_floor", ["FOUR_CARD_FLOP"])
def _(s):
    # TDA: the floor decides which of the two plays (the principle of 002 r39: not the dealer).
    s.new_hand(5).deal().round_done().flop().round_done().turn().round_done()
    s.draw()
    r1, r2 = s.draw(), s.draw()
    s.on(r1).on(r2).expect(verdict="floor", irregularity="FOUR_CARD_FLOP", step_key="extra_board.floor_decides",
                           cards=[r1, r2])
    s.round_done().expect(verdict="floor", irregularity="FOUR_CARD_FLOP")


@scenario("green_flop_card_taken_off_for_a_missed_turn_burn", ["MISSED_BURN", "WRONG_CORRECTION"])
def _(s):
    # No mouth sensor: the board reader saw a flop card leave, not the unburned turn card. No
    # missed read explains that: put it back; ROUND DONE without it is bet on.
    s.new_hand(4).deal().round_done()
    flop = s.street(3)
    s.round_done()
    turn = s.draw()
    s.on(turn).expect(verdict="correct", irregularity="MISSED_BURN", step_key="missed_burn.take_off")
    s.off(flop[0]).expect(verdict="correct", irregularity="WRONG_CORRECTION", step_key="wrong.keep_on_board")
    s.tick(1.0)      # the time the board reader takes to report a card gone, before the press
    s.round_done().expect(verdict="floor", irregularity="WRONG_CORRECTION")


@scenario("green_replacement_never_laid", ["JOKER", "WRONG_CORRECTION"])
def _(s):
    # A joker as the third flop card, put with the burns: the replacement is a card laid on the
    # board. The next card drawn and kept off the board is not it, and ROUND DONE with two flop cards
    # is bet on.
    s.new_hand(4, mouth_sensor=True).deal().round_done()
    s.draw()
    for _ in range(2):
        s.on(s.draw())
    s.draw("joker")
    s.expect(verdict="correct", irregularity="JOKER")
    s.draw()
    s.expect(verdict="correct", irregularity="JOKER")
    s.round_done().expect(verdict="floor", irregularity="WRONG_CORRECTION")


@scenario("green_floor_call_outlives_a_river_notice", ["DOUBLE_BURN"])
def _(s):
    # The floor was called; a double burn on the river is only recorded, and the floor's call stays
    # shown until the floor's ACK.
    s.new_hand(4).deal().round_done().flop().round_done().turn().round_done()
    s.button("floor").expect(verdict="floor")
    s.draw()
    s.draw()
    s.on(s.draw())
    s.expect(verdict="floor", step_key="floor.called")
    s.button("ack").expect(verdict="ok")


@scenario("green_late_manual_misdeal_calls_the_floor", [])
def _(s):
    # A manual MISDEAL after the first ROUND DONE: substantial action may have happened (002 r36).
    s.new_hand(6).deal().round_done().flop()
    s.button("misdeal").expect(verdict="floor", step_key="late.substantial_action", phase="flop")
    s.button("misdeal").expect(verdict="misdeal", phase="halted")


@scenario("green_c40_later_streets_laid_face_up_instead_of_aside", ["EXTRA_CARD", "PREMATURE_FLOP",
                                                                    "WRONG_CORRECTION"], profile="cz-c40")
def _(s):
    # The skipped player acts (C40): the turn and the river are to be dealt face down aside. The
    # dealer lays them on the board instead. The engine must place every event (it raised a
    # ValueError here, and `dealerbox replay` exited 1): the hand went past the step, the floor.
    s.new_hand(3, mouth_sensor=True).deal()
    early = s.draw()
    s.on(early).expect(verdict="correct", irregularity="PREMATURE_FLOP", step_key="skipped.ask")
    s.round_done().expect(step_key="skipped.deal_closed")
    s.round_done()
    s.draw()
    s.on(s.draw())
    s.on(s.draw())
    s.expect(verdict="floor", irregularity="WRONG_CORRECTION")
    s.hand_over().expect(verdict="ok", phase="over")


def main() -> None:
    for old in HERE.glob("*.jsonl"):
        old.unlink()
    for name, (header, script) in SCENARIOS.items():
        (HERE / f"{name}.jsonl").write_text(script.jsonl(header))
    print(f"wrote {len(SCENARIOS)} scenarios to {HERE}")


if __name__ == "__main__":
    main()
