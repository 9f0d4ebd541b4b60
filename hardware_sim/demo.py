"""The demo session ``make run`` plays: a clean hand, then hands with irregularities,
dealt by two dealers who sign in with their badges at the shoe and take turns.

``python -m hardware_sim.demo`` rewrites ``demo_session.jsonl`` beside this file.
"""

from __future__ import annotations


from dealerbox.resources import demo_session

from hardware_sim.script import HandScript, TableDealer

SESSION_FILE = demo_session()


def demo_script(seed: int = 40) -> HandScript:
    s = HandScript(seed=seed, step_s=0.4)
    # Dealer 1042 holds a badge to the shoe: the LCD greets them, the LED stays as it was.
    s.dealer("1042")
    # 1. A clean hand, six players, the flop dealt one card at a time.
    s.full_hand(6)
    # 2. The dealer exposes the fifth hole card: it becomes the burn, the flop comes with no burn.
    s.new_hand(6).deal(4).button("exposed").deal(8).draw()
    s.button("ack").round_done().flop(burn=False, spread=True)
    s.round_done().turn().round_done().river().round_done().hand_over()
    # 3. One card too many after the deal, then the flop before the round is done.
    s.new_hand(4).deal()
    s.draw()
    c1 = s.draw()
    s.on(c1).off(c1).put_back(c1, top=False).button("ack").reshuffle_stub()
    s.round_done().flop(burn=False).round_done().turn().round_done().river().round_done().hand_over()
    # Dealer 2077 takes over the table between hands (no sign-out needed).
    s.dealer("2077")
    # 4. Four cards on the flop: the floor picks the turn's burn.
    s.new_hand(8).deal().round_done()
    s.draw()
    cards = [s.draw() for _ in range(4)]
    for c in cards:
        s.on(c)
    s.button("ack").off(cards[1]).button("ack").round_done().turn(burn=False)
    s.round_done().river().round_done().hand_over()
    # 5. The dealer forgets to burn on the turn.
    s.new_hand(3).deal().round_done().flop().round_done()
    t = s.draw()
    s.on(t).off(t)
    s.turn(burn=False).round_done().river().round_done().hand_over()
    # Dealer 1042 is back from the break.
    s.dealer("1042")
    # 6. A card of the red-backed deck B turns up: the hand is void.
    s.new_hand(5).deal(6).emit("shoe", card="9c", deck="B")
    s.new_hand(5)
    s.deal().round_done().flop().round_done().turn().round_done().river().round_done().hand_over()
    return s


def play_demo(table, daemon, clock, *, pace_s: float = 0.0, stop=None, seed: int = 40,
              on_new_hand=None) -> None:
    """The scripted dealer plays the demo session once at *table*.

    *daemon* runs on *clock* with no ticks of its own (see
    :class:`hardware_sim.script.TableDealer`), so the box raises what
    ``dealerbox demo`` raises from the recorded session, at any *pace_s*.
    *on_new_hand(n, event)* is called before each hand. A demo that goes on deals
    hands of its own (``dealerbox/tools/demo.py``): replaying this session would tap
    the dealer's badge a second time, which signs the dealer out.
    """
    dealer = TableDealer(table, daemon, clock, pace_s=pace_s, stop=stop)
    hand = 0
    for e in demo_script(seed).events:
        if dealer.stop.is_set():
            return
        if e.get("ev") == "new_hand":
            hand += 1
            if on_new_hand is not None:
                on_new_hand(hand, e)
        dealer.play([e])


def main() -> None:
    SESSION_FILE.write_text(demo_script().jsonl())
    print(f"wrote {SESSION_FILE}")


if __name__ == "__main__":
    main()
