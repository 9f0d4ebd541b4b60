"""Sensing faults (RULES.md): a tag the radio did not read, a read that came late,
a reader that needs service. None of these is a dealing error: an unread card takes
the place it must have had and the hand goes on; the box never moves a good card
for it and never calls the floor.
"""

from __future__ import annotations

from .board import board_card, not_from_shoe, street_progress
from .book import outcome
from .buttons import next_round
from .dealing import deal_card, extra_or_early_burn, take_from_stub
from .decisions import Step
from .procedures import correct, inform, procedure
from .corrections import Todo
from .tracker import LATE_READ_S, UNREAD_PREFIX, Seen, UnreadCard


def _record(eng, key: str, step: Step) -> None:
    """Say where the unread card went; remember it for the check after the hand."""
    known = [] if key.startswith(UNREAD_PREFIX) else [key]
    eng.hand.unread.append(UnreadCard(key, step, correct(eng, "UNREAD_CARD", known, step=step)))


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


@outcome("unread_card_read")
def unread_card_read(eng, seen) -> None:
    """A correction expects an unread card back out of the stub, and an untracked card comes:
    it is that card, now read."""
    eng.hand.learn(eng.hand.expect_next[0], seen.key)


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


# ---------------------------------------------------------------- buttons
@procedure("count_hole_cards")
def count_hole_cards(eng, rid, cards):
    """No mouth sensor and the deal one card short: the dealer counts the hole cards (002 r37)."""
    return eng.open_correction(rid, cards, [
        Todo(Step("short_deal.count"), check=_short_deal_answered, on_done=_short_deal_settled)])


def _short_deal_answered(eng, e) -> bool:
    return eng.phase != "deal" or (e.ev == "button" and e.name == "ack")


def _short_deal_settled(eng) -> None:
    """Every seat has its cards (``ack``: a hole card was not read), or the short seat got its
    card; either way the round the dealer called done is done."""
    if eng.phase == "deal":
        key = eng.hand.new_unread()
        deal_card(eng, Seen(None, "unread", key, unread=True))
        _record(eng, key, Step("unread.some_hole_card"))
    next_round(eng, None)


@outcome("short_deal_found")
def short_deal_found(eng, seen) -> None:
    """No mouth sensor: the last hole card comes out again first after the round. It was an
    extra card put back on top; the deal was one short because a hole card was not read."""
    hand, key = eng.hand, seen.key
    unread = hand.new_unread()
    hand.where[unread] = hand.where[key]
    hand.deal_cards[-1] = unread
    hand.where[key] = "stub"
    _record(eng, unread, Step("unread.some_hole_card"))


@outcome("short_deal")
def short_deal(eng, seen) -> None:
    """round_done with the deal one card short and no mouth sensor: a read was missed, or a seat is short."""
    correct(eng, "SHORT_DEAL", [])


@outcome("burn_was_unread")
def burn_was_unread(eng, seen) -> None:
    """The dealer says a card was burned: its tag was not read. The card on the board stays."""
    hand = eng.hand
    corr = next(c for c in eng.corrections if c.irregularity == "MISSED_BURN" and not c.todos[0].done)
    eng.corrections.remove(corr)
    key = corr.cards[0]
    st = hand.street_of(key)
    st.burns.remove(key)
    st.board.append(key)
    burn = hand.new_unread()
    hand.where[burn] = "burn"
    st.drawn.insert(0, burn)
    st.burns.insert(0, burn)
    _record(eng, burn, Step("unread.burn", (("street", st.name),)))
    street_progress(eng, st)


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


# ---------------------------------------------------------------- after the hand
def after_hand(eng) -> None:
    """The hand is over: ask for the tags that were not read to be checked."""
    hand = eng.hand
    if not hand.unread:
        return
    known = tuple(r.key for r in hand.unread if not r.key.startswith(UNREAD_PREFIX))
    step = Step("unread.check_tags", (("cards", known),)) if known else Step("unread.check_deck")
    inform(eng, "UNREAD_CARD", known, step=step)
