"""Outcomes of cards leaving the shoe and crossing the side zones (the rule book's
``shoe``, ``zone_on`` and grace-period rows)."""

from __future__ import annotations

from dealerbox.rules.book import outcome
from dealerbox.domain.cards import JOKER
from dealerbox.rules.corrections import Todo
from dealerbox.domain.decisions import Step
from dealerbox.rules.guards import premature_deal_open
from dealerbox.rules.procedures import correct, late


def raise_for_card(name: str, rid: str, doc: str) -> None:
    """Register outcome *name*: raise *rid* for the event's card (its correction is the profile's)."""
    def act(eng, seen) -> None:
        correct(eng, rid, [seen.shown])
    act.__doc__ = doc
    outcome(name)(act)


raise_for_card("void_foreign", "FOREIGN_CARD", "A card of another registered deck is in play (001 r3).")
raise_for_card("duplicate", "DUPLICATE_CARD", "A card out of the shoe that was not in the stub: a cloned tag (001 r4).")


# ---------------------------------------------------------------- before the rules
@outcome("remember_draw")
def remember_draw(eng, seen) -> None:
    """The last card out of the shoe is the one ``exposed`` and ``boxed`` speak of."""
    eng.hand.last_shoe = seen.key


@outcome("flag_after_halt")
def flag_after_halt(eng, seen) -> None:
    """A card drawn after the box said stop: add it, and say so once."""
    top = eng.corrections[-1] if eng.corrections else None
    if top is None:
        return
    top.cards = top.cards + (seen.shown,)
    if not any(t.step.key == "halt.card_after_stop" for t in top.todos):
        for todo in top.todos:
            todo.done = True
        top.todos.append(Todo(Step("halt.card_after_stop")))


@outcome("draw_between_hands")
def draw_between_hands(eng, seen) -> None:
    """Before the first hand: a card drawn is simply out of the stub."""
    eng.hand.where[seen.key] = "hand"


@outcome("rabbit_hunt")
def rabbit_hunt(eng, seen) -> None:
    """002 r28: no card may come out after the hand is over."""
    if seen.kind == "card":
        eng.hand.where[seen.key] = "muck"
    correct(eng, "RABBIT_HUNT", [seen.shown])


@outcome("ask_floor_unknown")
def ask_floor_unknown(eng, seen) -> None:
    """A tag of no registered deck: the floor is asked once per tag."""
    if seen.key in eng.hand.unknown:
        return
    eng.hand.unknown.add(seen.key)
    correct(eng, "UNKNOWN_TAG", [seen.key])


@outcome("reshuffled_in_by_mistake")
def reshuffled_in_by_mistake(eng, seen) -> None:
    """A card that had to stay out was reshuffled in while a correction ran."""
    eng.hand.excluded.discard(seen.key)
    correct(eng, "WRONG_CORRECTION", [seen.shown], case="reshuffled_in")


@outcome("stub_contaminated")
def stub_contaminated(eng, seen) -> None:
    """002 OP4: a burned, mucked or board card came back out of a reshuffled stub."""
    eng.hand.excluded.discard(seen.key)
    correct(eng, "STUB_CONTAMINATION", [seen.shown])


@outcome("wrong_card_drawn")
def wrong_card_drawn(eng, seen) -> None:
    """The correction said the next card out must be a returned card; another came."""
    hand, key = eng.hand, seen.key
    want = hand.expect_next[0]
    hand.where[key] = "hand"
    hand.returning.add(key)
    eng.announce("other_card_drawn", [key, want])


@outcome("take_from_stub")
def take_from_stub(eng, seen) -> None:
    """The card is out of the stub and in the dealer's hand."""
    hand, key = eng.hand, seen.key
    if hand.expect_next and key == hand.expect_next[0]:
        hand.expect_next.pop(0)
    if key in hand.returning:
        hand.returning.discard(key)
        hand.forget(key)
    hand.where[key] = "hand"
    hand.drawn_t[key] = eng.t


# ---------------------------------------------------------------- what the card is for
@outcome("joker_drawn")
def joker_drawn(eng, seen) -> None:
    """A joker is a blank: shown, set with the burns, replaced like a boxed card (001 r7)."""
    hand, key = eng.hand, seen.key
    hand.where[key] = "burn"
    seat = hand.next_deal_seat() if eng.phase == "deal" else None
    st = None if seat else hand.drawing_street(eng.phase)
    corr = correct(eng, "JOKER", [JOKER], key=key, seat=seat)
    if corr is not None and st is not None:
        # Met while dealing a street: should it be laid, it lies there as a blank that holds no
        # place of the street, and the correction takes it off the board (to the burns).
        st.blanks.append(key)
        corr.street = st.name
        corr.off_board[key] = "burn"


@outcome("closed_draw")
def closed_draw(eng, seen) -> None:
    """C40: a burn and a face-down card for each later street, set aside."""
    hand, key = eng.hand, seen.key
    plan = hand.closed
    plan.draws.append(key)
    n = len(plan.draws)
    if n % 2 == 1:
        hand.where[key] = "burn"
    else:
        hand.where[key] = "aside"
        st = hand.streets[plan.streets[n // 2 - 1]]
        st.from_aside.append(key)
        st.burn_due = False
    if n >= 2 * len(plan.streets):
        hand.closed = None


@outcome("deal_card")
def deal_card(eng, seen) -> None:
    """The next hole card goes to the next seat in deal order (or a seat owed one)."""
    hand, key = eng.hand, seen.key
    seat = hand.next_deal_seat()
    if len(hand.deal_cards) >= hand.deal_target and hand.owed:
        hand.owed.pop(0)
    hand.deal_cards.append(key)
    hand.where[key] = f"seat{seat}"
    if len(hand.deal_cards) >= hand.deal_target and not hand.owed:
        eng.deal_done()
        if hand.seats is not None:
            hand.seat_deadline = eng.t + eng.profile.board_grace_s


@outcome("extra_or_early_burn")
def extra_or_early_burn(eng, seen) -> None:
    """RULES.md: after the deal, an extra card dealt to a player, or the burn of a premature flop."""
    hand, key = eng.hand, seen.key
    flop = hand.streets["flop"]
    if hand.extra is None:
        hand.extra = key
        flop.drawn.append(key)
        correct(eng, "EXTRA_CARD", [key])
        return
    flop.drawn.append(key)
    if key == hand.extra:
        return  # the extra card came back out: the flop's burn, drawn early
    hand.expect_next = []
    if hand.extra_deadline is None:
        hand.extra_deadline = eng.t + eng.profile.board_grace_s


@outcome("street_draw")
def street_draw(eng, seen) -> None:
    """A card for the street being dealt, or for the next one drawn early."""
    hand, key = eng.hand, seen.key
    st = hand.drawing_street(eng.phase)
    if st is None:
        return
    if premature_deal_open(eng, st):
        # The dealer goes on dealing the premature street before reading the panel:
        # this card belongs to the premature deal, not to the corrected one.
        st.voided.append(key)
        return
    st.drawn.append(key)


@outcome("extra_cards_misdeal")
def extra_cards_misdeal(eng, seen) -> None:
    """Two cards after the deal and none reached the board in the grace period (000 par.6)."""
    hand = eng.hand
    drawn = hand.streets["flop"].drawn
    correct(eng, "EXTRA_CARDS", [hand.extra] + [c for c in drawn if c != hand.extra])


@outcome("extra_cards_found_late")
def extra_cards_found_late(eng, seen) -> None:
    """The two cards ROUND DONE took for the flop's early draws were passed over by a fresh burn
    and flop: they were two extra cards after the deal (000 par.6), a misdeal."""
    correct(eng, "EXTRA_CARDS", list(eng.hand.early_flop))


# ---------------------------------------------------------------- side zones
def _move_to(place: str):
    def move(eng, seen) -> None:
        eng.hand.where[seen.key] = place
    move.__doc__ = f"The card is now at the {place}; nothing to judge."
    return move


for _place in ("board", "burn", "muck"):
    outcome(f"to_{_place}")(_move_to(_place))


@outcome("seat_zone")
def seat_zone(eng, seen) -> None:
    """A hole card seen at a seat antenna: at the seat it was dealt to?"""
    hand, key = eng.hand, seen.key
    place = hand.where.get(key, "")
    if hand.seats is None or not place.startswith("seat"):
        return
    seat = int(seen.event.zone[4:])
    expected = hand.seats[int(place[4:]) - 1]
    hand.seat_cards.setdefault(seat, set()).add(key)
    if seat != expected:
        seat_error(eng, [key], "seat.wrong_seat" if seat in hand.seats else "seat.not_dealt_in", seat)


@outcome("check_seat_counts")
def check_seat_counts(eng, seen) -> None:
    """The seat antennas' grace period is over: every seat dealt in holds its cards?"""
    hand = eng.hand
    for seat in hand.seats or ():
        if len(hand.seat_cards.get(seat, ())) != hand.hole:
            return seat_error(eng, [], "seat.wrong_count", seat)


def seat_error(eng, cards, key: str, seat: int) -> None:
    """SEAT_ERROR: a misdeal before the first round is done, else late (002 r36, r37)."""
    if eng.hand.rounds_done > 0:
        late(eng, "SEAT_ERROR", cards)
        return
    correct(eng, "SEAT_ERROR", cards, first=Step(key, (("seat", seat),)))
