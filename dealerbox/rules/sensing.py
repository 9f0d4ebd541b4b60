"""Sensing faults (RULES.md): a tag the radio did not read, a read that came late,
a reader that needs service. None of these is a dealing error: an unread card takes
the place it must have had and the hand goes on; the box never moves a good card
for it and never calls the floor.
"""

from __future__ import annotations

from dealerbox.rules.board import aside_to_board, board_card, not_from_shoe, street_progress
from dealerbox.rules.book import outcome
from dealerbox.rules.buttons import exposed_is_burn, misdeal_exposed_early, next_round, round_called_ahead
from dealerbox.rules.dealing import deal_card, extra_or_early_burn, street_draw, take_from_stub
from dealerbox.domain.decisions import Step
from dealerbox.domain.events import Event
from dealerbox.rules.guards import premature_deal_open, short_deal_fill
from dealerbox.rules.procedures import correct, inform, procedure
from dealerbox.rules.corrections import Todo, seen_done, when_done
from dealerbox.rules.tracker import LATE_READ_S, NEXT_STREET, UNREAD_PREFIX, Seen, UnreadCard


def _record(eng, key: str, step: Step) -> None:
    """Say where the unread card went; remember it for the check after the hand."""
    known = [] if key.startswith(UNREAD_PREFIX) else [key]
    corr = correct(eng, "UNREAD_CARD", known, step=step)
    if corr in eng.corrections and eng.corrections[-1] is corr and len(eng.corrections) > 1:
        # Information never hides a correction or a question the dealer must answer: it shows
        # once they are done, and the ACK meant for them does not tick it.
        eng.corrections.insert(0, eng.corrections.pop())
    eng.hand.unread.append(UnreadCard(key, step, corr))


def _place_of_next_draw(eng) -> Step:
    hand = eng.hand
    if eng.phase == "deal":
        return Step("unread.hole_card", (("seat", hand.next_deal_seat()),))
    st = hand.drawing_street(eng.phase)
    if st is None or hand.closed is not None:
        return Step("unread.card")
    if st.burn_due and not st.drawn and not st.burns:
        return Step("unread.burn", (("street", st.name),))
    return Step("unread.board_card", (("street", st.name),))


# ---------------------------------------------------------------- shoe
@outcome("count_draw")
def count_draw(eng, seen) -> None:
    """Every card out of the shoe counts for the shoe reader's health."""
    p = eng.profile
    if eng.health.draw(seen.unread, p.reader_max_unread_share, p.reader_recent_draws):
        _reader_notice(eng, Step("reader.misses_reads"))


@outcome("unread_is_expected_card")
def unread_is_expected_card(eng, seen) -> None:
    """The correction said which card comes next: the unread card is that card."""
    hand = eng.hand
    del hand.where[seen.key]
    seen.kind, seen.key = "card", hand.expect_next[0]
    hand.last_shoe = seen.key


@outcome("note_unread")
def note_unread(eng, seen) -> None:
    """The mouth sensor counted a card no tag read reported: it takes the next place."""
    _record(eng, seen.key, _place_of_next_draw(eng))


@outcome("late_read")
def late_read(eng, seen) -> None:
    """The shoe read of a card already seen on the board came late: one card, judged now."""
    _, street = eng.hand.held.pop(seen.key)
    take_from_stub(eng, seen)
    _draw_for(eng, street, seen)
    board_card(eng, seen)


def _draw_for(eng, street: str, seen) -> None:
    """The card was drawn for *street* (the one that wanted a board card when it was seen)."""
    hand = eng.hand
    if street == "flop" and eng.phase == "preflop" and hand.rounds_done == 0 and not hand.streets["flop"].settled:
        extra_or_early_burn(eng, seen)
    elif premature_deal_open(eng, hand.streets[street]):
        hand.streets[street].voided.append(seen.key)
    else:
        hand.streets[street].drawn.append(seen.key)


# ---------------------------------------------------------------- board
@outcome("hold_for_late_read")
def hold_for_late_read(eng, seen) -> None:
    """A card on the board the shoe has not reported while a board card is due: wait for a late read."""
    hand = eng.hand
    if seen.key not in hand.held:
        hand.held[seen.key] = (eng.t + LATE_READ_S, hand.drawing_street(eng.phase).name)


@outcome("unread_card_shown")
def unread_card_shown(eng, seen) -> None:
    """The card of an unread draw reached the board: now the box knows which card it was."""
    hand = eng.hand
    hand.learn(hand.unread_board_draw(hand.drawing_street(eng.phase)), seen.key)
    board_card(eng, seen)


@outcome("unread_aside_shown")
def unread_aside_shown(eng, seen) -> None:
    """C40: a card the shoe never reported reached the board while a card dealt face down aside left the
    stub counted with no read: it is that card, turned up as its street (judged as such)."""
    hand = eng.hand
    hand.learn(hand.unread_aside(), seen.key)
    aside_to_board(eng, seen)


@outcome("unread_card_read")
def unread_card_read(eng, seen) -> None:
    """A correction expects an unread card back out of the stub, and an untracked card comes:
    it is that card, now read: an unread card has no face, any card not yet seen in the hand is it."""
    placeholder = eng.hand.expect_next[0]
    eng.hand.learn(placeholder, seen.key)
    for corr in eng.corrections:
        corr.cards = tuple(seen.key if c == placeholder else c for c in corr.cards)


@outcome("forget_held")
def forget_held(eng, seen) -> None:
    """The card left the board before its shoe read came (it only passed by), or the hand ended."""
    eng.hand.held.pop(seen.key, None)


@outcome("held_not_from_shoe")
def held_not_from_shoe(eng, seen) -> None:
    """With a mouth sensor a missed read always shows: no read came, the card is not from the shoe."""
    eng.hand.held.pop(seen.key)
    not_from_shoe(eng, seen)


@outcome("held_is_unread_card")
def held_is_unread_card(eng, seen) -> None:
    """No mouth sensor: the shoe missed the card's read; it is the board card that was due."""
    hand = eng.hand
    _, street = hand.held.pop(seen.key)
    _record(eng, seen.key, Step("unread.board_card", (("street", street),)))
    hand.where[seen.key] = "hand"
    _draw_for(eng, street, seen)
    board_card(eng, seen)


# ---------------------------------------------------------------- seat antennas
@outcome("unread_seen_at_seat")
def unread_seen_at_seat(eng, seen) -> None:
    """A seat antenna sees a card the shoe never named, where an unread card was dealt: that card."""
    hand = eng.hand
    seat = f"seat{hand.seats.index(int(seen.event.zone[4:])) + 1}"
    placeholder = next(k for k, p in hand.where.items() if k.startswith(UNREAD_PREFIX) and p == seat)
    hand.learn(placeholder, seen.key)


@outcome("unread_hole_card_at_seat")
def unread_hole_card_at_seat(eng, seen) -> None:
    """No mouth sensor: a seat antenna sees a card still in the stub by tracking, at the seat the
    next hole card goes to. The shoe missed its read; it is that hole card."""
    seat = eng.hand.next_deal_seat()
    eng.hand.where[seen.key] = "hand"
    deal_card(eng, seen)
    _record(eng, seen.key, Step("unread.hole_card", (("seat", seat),)))


# ---------------------------------------------------------------- buttons
@procedure("count_hole_cards")
def count_hole_cards(eng, rid, cards, seat: int | None = None):
    """The deal a few cards short at ROUND DONE: without a mouth sensor the dealer counts the hole cards;
    with one the box knows the count, and the short *seat* gets the next card, before any burn (002 r37)."""
    if seat is not None:
        return eng.open_correction(rid, cards, [Todo(Step("short_deal.deal_seat", (("seat", seat),)))])
    return eng.open_correction(rid, cards, [
        Todo(Step("short_deal.count"))])


@when_done("short_seat_dealt")
def short_seat_dealt(eng, e, todo, corr) -> None:
    """The short seat got its card: the round the dealer called done is done."""
    next_round(eng, None)


@seen_done("deal_counted")
def deal_counted(eng, e, todo, corr) -> bool:
    """The dealer counted the hole cards (ACK), or the deal went on past the question."""
    return eng.phase != "deal" or (e.ev == "button" and e.name == "ack")


@when_done("deal_count_settled")
def deal_count_settled(eng, e, todo, corr) -> None:
    """Every seat has its cards (``ack``: a hole card was not read), or the short seat got its
    card; either way the round the dealer called done is done."""
    hand = eng.hand
    if eng.phase != "deal" and hand.short_deal_from is not None:
        # The cards drawn since the question went to the short seats. A dealer who did not answer
        # and went on with the burn and the flop drew them too: the flop will tell.
        hand.short_fill = hand.deal_cards[hand.short_deal_from:]
    _unread_hole_cards_owed(eng)
    next_round(eng, None)


def _unread_hole_cards_owed(eng) -> None:
    """Each card the deal still owes is a tag that was not read (two in one deal happen: ~1% of
    ten-seat Omaha deals at the measured miss rate)."""
    while eng.phase == "deal" and eng.hand.cards_owed():
        key = eng.hand.new_unread()
        deal_card(eng, Seen(None, "unread", key, unread=True))
        _record(eng, key, Step("unread.some_hole_card"))


@outcome("short_deal_was_complete")
def short_deal_was_complete(eng, seen) -> None:
    """A card on the board says the cards drawn after SHORT_DEAL's question were the burn and the flop.

    Were those cards the short seats' cards, this one would be one of them or the flop's burn. The
    dealer who went on without an answer was saying the deal was complete: each card it lacked was
    a tag not read, recorded as UNREAD_CARD; the board card is then judged as any other."""
    hand = eng.hand
    fill = list(short_deal_fill(eng))
    eng.announce("deal_shown_complete")
    for card in fill:
        unread = hand.new_unread()
        hand.where[unread] = hand.where[card]
        hand.deal_cards[hand.deal_cards.index(card)] = unread
        hand.where[card] = "hand"
        _record(eng, unread, Step("unread.some_hole_card"))
    hand.short_fill = []
    hand.short_deal_from = None
    if eng.phase == "deal":
        _unread_hole_cards_owed(eng)
        next_round(eng, None)
    flop = hand.streets["flop"]
    flop.drawn[:0] = fill
    board_card(eng, seen)


@outcome("ask_hole_card_again")
def ask_hole_card_again(eng, seen) -> None:
    """No mouth sensor: the last hole card out again, first after the round, is asked about.

    It comes past the shoe's rearm window (a re-read within it never reaches the box), and nothing
    the box saw put it back: a cloned tag (void). Or a card too many, put back on top to be burned,
    whose read made the deal look complete while a hole card's tag was not read. The table cannot
    tell: ask. Until the answer the card counts as put back, so the hand goes on; ACK records the
    unread hole card, MISDEAL voids the hand (RULES.md, sensing faults)."""
    hand, key = eng.hand, seen.key
    unread = hand.new_unread()
    hand.where[unread] = hand.where[key]
    hand.deal_cards[-1] = unread
    hand.where[key] = "stub"

    def put_back(eng) -> None:
        _record(eng, unread, Step("unread.some_hole_card"))

    _ask(eng, "DUPLICATE_CARD", [seen.shown], Step("duplicate.hole_card_again", (("card", seen.shown),)),
         "hole_card_again", put_back)


@outcome("hole_card_again_confirmed")
def hole_card_again_confirmed(eng, seen) -> None:
    """The dealer answers MISDEAL: the card was not put back, two cards carry its tag (001 r4)."""
    corr = next(c for c in eng.corrections if c.asks == "hole_card_again")
    eng.corrections.remove(corr)
    correct(eng, "DUPLICATE_CARD", corr.cards)


@outcome("short_deal")
def short_deal(eng, seen) -> None:
    """round_done with the deal a few cards short and no mouth sensor: reads were missed, or seats are short."""
    eng.hand.short_deal_from = len(eng.hand.deal_cards)
    correct(eng, "SHORT_DEAL", [])


@outcome("seat_short")
def seat_short(eng, seen) -> None:
    """ROUND DONE with the deal a few cards short, and a mouth sensor: no read was missed, a seat was
    forgotten. Green would be a lie about the cards: the seat gets the next card, before any burn."""
    correct(eng, "SHORT_DEAL", [], seat=eng.hand.next_deal_seat())


def _missed_burn_open(eng):
    return next(c for c in eng.corrections if c.irregularity == "MISSED_BURN" and not c.todos[0].done)


def _card_back_on_its_street(eng, key: str):
    """A card MISSED_BURN counted as the street's open burn stays on the board after all."""
    st = eng.hand.street_of(key)
    st.burns.remove(key)
    st.board.append(key)
    return st


@outcome("burn_was_unread")
def burn_was_unread(eng, seen) -> None:
    """The dealer says a card was burned: its tag was not read. The card on the board stays."""
    hand = eng.hand
    corr = _missed_burn_open(eng)
    eng.corrections.remove(corr)
    key = corr.cards[0]
    st = _card_back_on_its_street(eng, key)
    burn = hand.new_unread()
    hand.where[burn] = "burn"
    st.drawn.insert(0, burn)
    st.burns.insert(0, burn)
    _record(eng, burn, Step("unread.burn", (("street", st.name),)))
    street_progress(eng, st)


def _unread_left_in_hand(eng, st) -> str | None:
    """A card of *st* that left the stub unread and never reached the board, or None."""
    return next((k for k in st.drawn if k.startswith(UNREAD_PREFIX) and eng.hand.where.get(k) == "hand"), None)


@outcome("missed_burn_read_late")
def missed_burn_read_late(eng, seen) -> None:
    """ROUND DONE or ACK with MISSED_BURN's card still on the board, and a card of that street counted at
    the mouth with no read that never reached the board: it was the burn, counted after the first card's
    read (the order of the reports lied). No burn was missed; the card on the board stays."""
    corr = _missed_burn_open(eng)
    eng.corrections.remove(corr)
    st = _card_back_on_its_street(eng, corr.cards[0])
    burn = _unread_left_in_hand(eng, st)
    st.drawn.remove(burn)
    st.drawn.insert(0, burn)
    st.burns.insert(0, burn)
    eng.hand.where[burn] = "burn"
    street_progress(eng, st)


@outcome("ask_street_card_there")
def ask_street_card_there(eng, seen) -> None:
    """No mouth sensor: ROUND DONE while the street lacks one card that no reader saw: ask.

    The card missing is the turn's or river's, or the flop's third. Its tag may be dead (neither
    reader saw it), or the round was called done ahead (all in) and the card is still to come.
    Never move a card on a read that did not happen (RULES.md, sensing faults). Until the answer
    the round counts as called ahead, as it did before the question. The verdict is UNREAD_CARD's
    (ok): a repeated press is as likely as a dead tag, and neither is a dealing error."""
    name = eng.phase
    round_called_ahead(eng, seen)
    corr = eng.open_correction("UNREAD_CARD", [], [
        Todo(Step("unread.street_card_there", (("street", name),)))], halting=False)
    corr.asks = "street_card_there"


@when_done("street_card_there")
def street_card_there(eng, e, todo, corr) -> None:
    """ACK to "is the street's card there?": it was, its tag dead."""
    street_card_was_there(eng, todo.step.param("street"))


def street_card_was_there(eng, name: str) -> None:
    """The street's card lay on the board, its tag dead: UNREAD_CARD names its place. The draws the
    box counted for the street after its burn and its cards on the board belong to the next one; the
    round was done."""
    hand = eng.hand
    st = hand.streets[name]
    shown = _shown_when_asked(st)
    later = st.drawn[1 + shown:]
    key = hand.new_unread()
    hand.where[key] = "board"
    st.drawn[1 + shown:] = [key]
    st.board.append(key)
    nxt = hand.streets.get(NEXT_STREET.get(name, ""))
    if nxt is not None:
        nxt.drawn[:0] = later
    _record(eng, key, Step("unread.board_card", (("street", name),)))
    street_progress(eng, st)
    if hand.rounds_ahead and eng.phase == name:
        hand.rounds_ahead -= 1
        hand.rounds_done += 1
        eng.next_round()


def _shown_when_asked(st) -> int:
    """How many of the street's cards lay on the board when the box asked: all but the unseen one."""
    return st.n - 1


@outcome("street_card_answered_by_play")
def street_card_answered_by_play(eng, seen) -> None:
    """The dealer's play answers "is the card there?": the street's card laid straight after its burn
    says it was still to come; a card laid after another draw (a burn) says the street's card was on
    the board (its tag dead) and this is the next street. Then the card is judged as any other."""
    hand = eng.hand
    corr = next(c for c in eng.corrections if c.asks == "street_card_there")
    eng.corrections.remove(corr)
    name = corr.todos[0].step.params[0][1]
    st = hand.streets[name]
    if seen.key in st.drawn and st.drawn.index(seen.key) >= 2 + _shown_when_asked(st):
        street_card_was_there(eng, name)
    board_card(eng, seen)


# ---------------------------------------------------------------- questions
# Without a mouth sensor some sights are explained by a missed read as well as by a
# dealing error. The box then asks instead of correcting: one step, ``ack`` says "a
# tag was not read", and nothing moves a card before the dealer has answered. The
# verdict is what the box's count says (the dealing error's, as with a mouth sensor);
# only the hand does not stop before the answer.

def _ask(eng, rid: str, cards, step: Step, asks: str, on_ack):
    """Open the question *asks* under irregularity *rid*: ``ack`` runs *on_ack*."""
    corr = eng.open_correction(rid, cards, [Todo(step)], halting=False)
    corr.asks = asks
    corr.on_ack = on_ack
    return corr


@outcome("ask_exposed_position")
def ask_exposed_position(eng, seen) -> None:
    """The exposed card is the second dealt by the box's count; with one read missed before it,
    it is the third (a correctable exposed card, not a misdeal). The dealer knows: ask."""
    key = seen.key

    def later_card(eng) -> None:
        hand = eng.hand
        unread = hand.new_unread()
        hand.deal_cards.insert(0, unread)
        for j, c in enumerate(hand.deal_cards):
            hand.where[c] = f"seat{hand.seat_for(j)}"
        _record(eng, unread, Step("unread.some_hole_card"))
        hand.last_shoe = key
        exposed_is_burn(eng, Seen(seen.event, "card", key))

    _ask(eng, "EXPOSED_EARLY", [seen.shown], Step("exposed.second_or_later", (("card", seen.shown),)),
         "exposed_position", later_card)


@outcome("exposed_second_card_confirmed")
def exposed_second_card_confirmed(eng, seen) -> None:
    """The dealer answers MISDEAL: the exposed card was the second dealt (002 r35A-1)."""
    corr = next(c for c in eng.corrections if c.asks == "exposed_position")
    eng.corrections.remove(corr)
    misdeal_exposed_early(eng, Seen(seen.event, "card", corr.cards[0]))


@outcome("ask_burn_returned")
def ask_burn_returned(eng, seen) -> None:
    """A burned card comes out again as the next street's burn. A second card with its tag, or the
    dealer put it back as a second burn after a first burn whose tag was not read: ask. Until the
    answer the card counts as returned; the hand goes on."""
    hand, key = eng.hand, seen.key
    prev = hand.street_of(key)
    hand.returning.add(key)

    def first_burn_unread(eng) -> None:
        unread = hand.new_unread()
        hand.where[unread] = "burn"
        prev.drawn.insert(0, unread)
        prev.burns.insert(0, unread)
        _record(eng, unread, Step("unread.burn", (("street", prev.name),)))

    _ask(eng, "DUPLICATE_CARD", [seen.shown], Step("duplicate.returned_burn", (("card", seen.shown),)),
         "burn_returned", first_burn_unread)


@outcome("ask_expected_card_unread")
def ask_expected_card_unread(eng, seen) -> None:
    """A correction said which card comes out next and another was read. The expected card may have
    come out first with its tag unread. Ask; ``ack`` takes both draws in order, drawing the expected
    card makes it the dealing error it looked like (put the other card back)."""
    hand, key = eng.hand, seen.key
    want = hand.expect_next[0]
    hand.where[key] = "hand"
    hand.returning.add(key)

    def want_came_first(eng) -> None:
        if hand.expect_next[:1] != [want] or (hand.where.get(want) != "stub" and want not in hand.returning):
            return
        place = hand.where[key]
        hand.returning.discard(key)
        step = _place_of_next_draw(eng)
        first = Seen(seen.event, "card", want)
        take_from_stub(eng, first)
        street_draw(eng, first)
        # The steps that waited for this draw (burn the returned card) are done now.
        hand.last_shoe = want
        eng.advance(Event(eng.t, "shoe", unread=True))
        hand.last_shoe = key
        _record(eng, want, step)
        hand.where[key] = "hand"
        street_draw(eng, seen)
        if place == "board":
            board_card(eng, seen)
        elif place != "stub":
            hand.where[key] = place

    # Its answers (the table's): ACK, or the expected card drawn (the dealer strays as it looked, the
    # other card goes back on top).
    _ask(eng, "WRONG_CORRECTION", [seen.shown, want],
         Step("wrong.expected_card_or_unread", (("card", want), ("got", seen.shown))), "expected_unread",
         want_came_first)


# ---------------------------------------------------------------- readers
def _reader_notice(eng, step: Step) -> None:
    if eng.phase == "halted":
        eng.pending_notices.append(step)  # never hide a stop; shown at the next hand
        return
    inform(eng, "READER_DEGRADED", [], step=step)


@outcome("reader_down")
def reader_down(eng, seen) -> None:
    """A reader stopped answering: the panel says so; again and again, it needs service."""
    reader = seen.event.reader
    eng.faulted_readers.add(reader)
    if eng.health.fault(reader, eng.t):
        _reader_notice(eng, Step("reader.faults_often"))
