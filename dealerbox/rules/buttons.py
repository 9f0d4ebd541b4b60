"""Outcomes of the dealer's panel buttons (the rule book's ``button.*`` rows)."""

from __future__ import annotations

from dealerbox.rules.board import premature, street_progress
from dealerbox.rules.book import outcome
from dealerbox.rules.corrections import Correction, Todo
from dealerbox.rules.dealing import check_seat_counts, raise_for_card
from dealerbox.domain.decisions import Step
from dealerbox.rules.procedures import correct, late
from dealerbox.rules.tracker import STREETS
from dealerbox.rules.unread_tags import after_hand, deal_short_at_the_end


raise_for_card("misdeal_exposed_twice", "EXPOSED_TWICE", "Two exposed cards in one deal (002 r35A-1).")
raise_for_card("misdeal_boxed_twice", "BOXED_TWICE", "Two boxed cards in one deal.")


@outcome("end_hand")
def end_hand(eng, seen) -> None:
    """The hand is over, whatever is open: the cards are mucked, what was left open goes on record.

    A correction still open is recorded with the steps never seen done (a notice, verdict ok); the
    tags not read, a deal left short by one included, are to be checked after the hand."""
    hand = eng.hand
    deal_short_at_the_end(eng)
    left_open = [c for c in eng.corrections
                 if c.irregularity is not None and c.verdict != "ok" and not c.halting and not c.finished]
    for c, p in hand.where.items():
        if p != "stub":
            hand.where[c] = "muck"
    eng.corrections = []
    hand.closed = None
    hand.extra_deadline = hand.seat_deadline = hand.double_burn_wait = None
    hand.held.clear()
    eng.end_hand()
    for corr in left_open:
        eng.record_left_open(corr)
    after_hand(eng)


@outcome("next_round")
def next_round(eng, seen) -> None:
    """A betting round is done: the next street may be dealt."""
    hand = eng.hand
    if hand.seat_deadline is not None:
        hand.seat_deadline = None
        check_seat_counts(eng, seen)
        if eng.phase == "halted":
            return
    if eng.phase == "preflop" and hand.rounds_done == 0:
        flop = hand.streets["flop"]
        others = [c for c in flop.drawn if c != hand.extra]
        if others and not hand.on_board(flop.drawn):
            # Burn and flop drawn early but not shown: they stand as the flop's draws, while the
            # grace period runs on. It belongs to the cards, not to the button: should none reach
            # the board in time, they were extra cards (RULES.md, EXTRA_CARDS).
            hand.early_flop = tuple(flop.drawn)
            if hand.extra is not None:
                eng.announce("flop_drawn_early")
                hand.expect_next = []
                hand.returning.discard(hand.extra)
        elif hand.extra is not None and flop.drawn.count(hand.extra) == 1 and hand.extra in hand.returning:
            # Not yet redrawn: it goes back on top and comes out again as the burn.
            flop.drawn.remove(hand.extra)
    if eng.phase in STREETS and hand.rounds_ahead:
        hand.rounds_ahead -= 1      # this round was called done ahead: the press repeats it
    hand.rounds_done += 1
    eng.next_round()
    if eng.phase in STREETS:
        street_progress(eng, hand.streets[eng.phase])


#: Rounds that can still be called done ahead from each street: its own and the later ones.
_ROUNDS_LEFT = {name: len(STREETS) - i for i, name in enumerate(STREETS)}


@outcome("round_called_ahead")
def round_called_ahead(eng, seen) -> None:
    """ROUND DONE again while the street it opened shows no card: a round called done ahead.

    No betting round can have been played on a street that shows nothing. It is a repeat, or (all
    in) a round that will not be played: the next street's card may come without another press."""
    hand = eng.hand
    hand.rounds_ahead = min(hand.rounds_ahead + 1, _ROUNDS_LEFT[eng.phase])


@outcome("late_error")
def late_error(eng, seen) -> None:
    """A deal error reported after the first round: substantial action decides (002 r36)."""
    late(eng, "EXPOSED_DEAL" if seen.event.name == "exposed" else "BOXED_CARD", [seen.shown])


@outcome("misdeal_exposed_early")
def misdeal_exposed_early(eng, seen) -> None:
    """One of the first two cards exposed (002 r35A-1)."""
    eng.hand.exposed_count += 1
    correct(eng, "EXPOSED_EARLY", [seen.shown])


@outcome("exposed_is_burn")
def exposed_is_burn(eng, seen) -> None:
    """An exposed hole card: finish the deal, replace it, it is the first burn (001 r11)."""
    hand, key = eng.hand, seen.key
    hand.exposed_count += 1
    seat = hand.seat_of(key)
    hand.owed.append(seat)
    if eng.phase == "preflop":
        eng.reopen_deal()
    hand.streets["flop"].burn_due = False
    hand.where[key] = "burn"
    correct(eng, "EXPOSED_DEAL", [seen.shown], seat=seat)


@outcome("boxed_hole_card")
def boxed_hole_card(eng, seen) -> None:
    """A boxed hole card is shown and burned; its seat gets the next card."""
    hand, key = eng.hand, seen.key
    hand.boxed_count += 1
    idx = hand.deal_cards.index(key)
    seat = hand.seat_of(key)
    del hand.deal_cards[idx]
    hand.where[key] = "burn"
    if len(hand.deal_cards) >= hand.deal_target:
        # The boxed card was a seat's replacement (after an exposed card): that seat is owed one again.
        hand.owed.insert(0, seat)
    if eng.phase == "preflop":
        eng.reopen_deal()
    for j in range(idx, len(hand.deal_cards)):
        hand.where[hand.deal_cards[j]] = f"seat{hand.seat_for(j)}"
    correct(eng, "BOXED_CARD", [seen.shown], key=key, seat=seat)


@outcome("boxed_street_card")
def boxed_street_card(eng, seen) -> None:
    """A face-up card met while dealing a street: set with the burns, the next card plays its role."""
    hand, key = eng.hand, seen.key
    st = hand.street_of(key)
    for drawn in (st.drawn, st.voided):
        if key in drawn:
            drawn.remove(key)
    hand.where[key] = "burn"
    corr = correct(eng, "BOXED_CARD", [seen.shown], key=key)
    if corr is not None:
        corr.street = st.name      # the replacement is a card laid on that street


@outcome("take_round_back")
def take_round_back(eng, seen) -> None:
    """round_done was pressed by mistake: the last street came out before its round was done."""
    hand = eng.hand
    st = hand.streets[eng.phase]
    on_board = hand.on_board(st.board)
    hand.rounds_done -= 1
    hand.rounds_ahead = 0           # a round was called done too early: none is done ahead
    eng.take_back()
    if on_board and not st.settled:
        st.complete = False
        premature(eng, st)


@outcome("unknown_is_foreign")
def unknown_is_foreign(eng, seen) -> None:
    """The floor confirms the unknown tag is foreign: void (001 r3)."""
    unknown = next(c for c in eng.corrections if c.irregularity == "UNKNOWN_TAG")
    correct(eng, "FOREIGN_CARD", [unknown.unknown])


@outcome("misdeal_called")
def misdeal_called(eng, seen) -> None:
    """The dealer or floor calls a misdeal (002 r35C)."""
    eng.stop(Correction(None, "misdeal", (), "002 r35C", [Todo(Step("halt.misdeal_called"))],
                        halting=True, born=eng.seq))


@outcome("late_misdeal")
def late_misdeal(eng, seen) -> None:
    """MISDEAL pressed after the first round: substantial action may have happened, and only the floor
    may call the misdeal now (002 r36); MISDEAL again is the floor's call, ACK says play on."""
    rule = eng.profile["LATE_ERROR"].sources
    corr = Correction(None, "floor", (), rule, [Todo(Step("late.substantial_action")), Todo(Step("floor.decides"))],
                      born=eng.seq)
    corr.asks = "late_misdeal"
    eng.corrections.append(corr)


@outcome("floor_called")
def floor_called(eng, seen) -> None:
    """The floor was called: shown until the floor settles it with ``ack``."""
    eng.corrections.append(Correction(None, "floor", (), "", [Todo(Step("floor.called"))], born=eng.seq))
