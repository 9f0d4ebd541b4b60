"""The rule book's guards: questions about the event's card and the hand, never changing either.

Each registers under its name in :data:`dealerbox.rules.book.GUARDS`, the name the
rows of :data:`~dealerbox.rules.book.RULE_BOOK` use. The questions the outcomes ask
too (:func:`premature_deal_open`, :func:`short_deal_fill`) live here, so that the
outcome modules build on the guards and never the other way round.
"""

from __future__ import annotations

from dealerbox.rules.book import guard
from dealerbox.rules.open_steps import wrong_case
from dealerbox.rules.tracker import ROUND_BEFORE, UNREAD_PREFIX


def premature_deal_open(eng, st) -> bool:
    """Street *st* was judged premature, its correction is not yet under way, and its round is
    still the one being played: a card drawn for it now belongs to the premature deal."""
    if st is None or not st.voided or eng.phase != ROUND_BEFORE[st.name]:
        return False
    corr = st.episode
    return corr is not None and corr in eng.corrections and not corr.todos[0].done


def short_deal_fill(eng) -> list[str]:
    """The cards drawn after SHORT_DEAL's question and taken as the short seats' cards, while the
    flop has not yet said what they were (none once it has)."""
    hand = eng.hand
    if eng.phase == "deal" and hand.short_deal_from is not None:
        if any(c.irregularity == "SHORT_DEAL" for c in eng.corrections):
            return hand.deal_cards[hand.short_deal_from:]
        return []
    return hand.short_fill if eng.phase == "flop" and not hand.streets["flop"].complete else []


def acted_answer_untouched(eng):
    """The C40 correction whose ROUND DONE was taken as "the skipped player acts", while nothing the
    dealer did since followed it (no card dealt aside, no premature card off the board), or None."""
    hand = eng.hand
    for corr in eng.corrections:
        if corr.acted_burn_due is None or corr.voided is None or len(corr.todos) < 2 or corr.todos[1].done:
            continue
        if hand.closed is not None and hand.closed.draws:
            continue
        if all(hand.where.get(c) == "board" for c in corr.voided.back):
            return corr
    return None


def _burn_question(eng):
    """The MISSED_BURN correction whose question "did a burn go unread?" is open, and its street; or None."""
    for c in eng.corrections:
        if c.asks == "burn_unread" and not c.todos[0].done:
            st = eng.hand.street_of(c.cards[0]) or eng.hand.streets.get(c.street or "")
            if st is not None:
                return c, st
    return None


def _street_laid_with_it(eng, corr, st) -> bool:
    """The street of MISSED_BURN's card has all its cards on the board, that card counted among them."""
    hand = eng.hand
    lying = len(hand.on_board(st.board)) + (hand.where.get(corr.cards[0]) == "board" and corr.cards[0] not in st.board)
    return lying >= st.n


def _correction_shown(eng) -> bool:
    """A correction the dealer must follow is shown: amber or floor, not finished, not a stop."""
    return any(not c.halting and c.verdict in ("correct", "floor") and not c.finished for c in eng.corrections)


def _place(eng, seen):
    return eng.hand.where.get(seen.key)


def _place_of(eng, key):
    return eng.hand.where.get(key)


_SIMPLE_GUARDS = (
    ("is_card", "the tag is a card of the active deck",
     lambda eng, seen: seen.kind == "card"),
    ("is_joker", "the tag is a joker of the active deck",
     lambda eng, seen: seen.kind == "joker"),
    ("is_foreign", "the tag belongs to another registered deck",
     lambda eng, seen: seen.kind == "foreign"),
    ("is_unknown", "the tag belongs to no registered deck",
     lambda eng, seen: seen.kind == "unknown"),
    ("in_stub", "by tracking, the card is in the stub",
     lambda eng, seen: _place(eng, seen) in ("stub", None)),
    ("in_hand", "the card was drawn and not yet placed",
     lambda eng, seen: _place(eng, seen) == "hand"),
    ("on_board", "the card lies on the board",
     lambda eng, seen: _place(eng, seen) == "board"),
    ("set_aside", "the card was dealt face down aside (C40)",
     lambda eng, seen: _place(eng, seen) == "aside"),
    ("returning", "the card was sent back into the stub and may rightly come out again",
     lambda eng, seen: seen.key in eng.hand.returning),
    ("in_muck_zone", "the zone is the muck",
     lambda eng, seen: seen.event.zone == "muck"),
    ("in_burn_zone", "the zone is the burn pile",
     lambda eng, seen: seen.event.zone == "burn"),
    ("in_seat_zone", "the zone is a seat",
     lambda eng, seen: seen.event.zone.startswith("seat")),
    ("reshuffled_out", "the card was burned, mucked or on the board when the stub was reshuffled",
     lambda eng, seen: seen.key in eng.hand.excluded),
    ("is_unread", "the mouth sensor counted a card and no tag read came with it",
     lambda eng, seen: seen.unread),
    ("card_expected", "a correction said which card comes out next",
     lambda eng, seen: bool(eng.hand.expect_next)),
    ("unread_card_expected", "a correction expects a card back out of the stub that left it unread",
     lambda eng, seen: bool(eng.hand.expect_next) and eng.hand.expect_next[0].startswith(UNREAD_PREFIX)),
    ("held", "the card lies on the board, waiting for its late shoe read",
     lambda eng, seen: seen.key in eng.hand.held),
    ("held_on_board", "the card was seen on the board before its shoe read",
     lambda eng, seen: seen.kind == "card" and seen.key in eng.hand.held),
    ("at_a_seat", "the card was dealt to a seat",
     lambda eng, seen: (_place(eng, seen) or "").startswith("seat")),
    ("mouth_sensor", "the table counts every card at the shoe's mouth",
     lambda eng, seen: eng.hand.mouth_sensor),
    ("unread_draw_open", "a card of the street being dealt left the stub unread and is still to be placed",
     lambda eng, seen: eng.hand.unread_board_draw(eng.hand.drawing_street(eng.phase)) is not None),
    ("unread_card_set_aside", "a card dealt face down aside (C40) left the stub counted with no read and is "
     "still aside: a card the shoe never reported on the board is that card, turned up",
     lambda eng, seen: eng.hand.unread_aside() is not None),
    ("board_card_due", "the street being dealt wants a board card (its round is done, or a card was drawn for it)",
     lambda eng, seen: eng.hand.board_card_due(eng.phase)),
    ("taken_for_a_fast_pair_burn", "the card was taken for the burn of two cards drawn together and "
     "read in swapped order (the other one reached the board first)",
     lambda eng, seen: any(st.fast_pair and st.fast_pair[1] == seen.key for st in eng.hand.streets.values())),
    ("deal_a_few_short", "the deal is short by fewer hole cards than there are seats (a whole lap missing is "
     "round_done pressed too early, not unread tags)",
     lambda eng, seen: eng.hand.deal_a_few_short()),
    ("last_hole_card_again", "the last hole card comes out again as the first card after the first round",
     lambda eng, seen: (eng.hand.deal_cards[-1:] == [seen.key] and eng.hand.rounds_done == 1
                        and not eng.hand.streets["flop"].drawn)),
    ("missed_burn_street_has_unread_draw", "a card of the street MISSED_BURN is about left the stub unread "
     "and never reached the board (the burn, its count reported after the first card's read)",
     lambda eng, seen: any(c.irregularity == "MISSED_BURN" and not c.todos[0].done
                           and any(k.startswith(UNREAD_PREFIX) and eng.hand.where.get(k) == "hand"
                                   for k in getattr(eng.hand.street_of(c.cards[0]), "drawn", ()))
                           for c in eng.corrections)),
    ("street_one_card_unseen", "the street the last round opened lacks one card: its burn drawn, every card "
     "drawn after the burn on the board, one fewer than the street has (the turn's or river's card, the "
     "flop's third), nothing waiting for a late read (one dead tag can hide one card, not a whole flop), "
     "and no correction the dealer must still follow is shown (a step left undone is never a dead tag)",
     lambda eng, seen: eng.hand.street_one_card_unseen(eng.phase) and not _correction_shown(eng)),
    ("street_card_question_open", "the box asks whether the street's card lies on the board (a dead tag)",
     lambda eng, seen: any(c.asks == "street_card_there" for c in eng.corrections)),
    ("street_shows_nothing", "no card of the street the last round opened is out yet, its burn aside",
     lambda eng, seen: eng.hand.street_shows_nothing(eng.phase)),
    ("closed_deal_open", "later streets are being dealt face down aside (C40)",
     lambda eng, seen: eng.hand.closed is not None),
    ("after_first_round", "the first betting round is done",
     lambda eng, seen: eng.hand.rounds_done > 0),
    ("exposed_before", "a card was exposed earlier in this deal",
     lambda eng, seen: eng.hand.exposed_count >= 1),
    ("boxed_before", "a card was boxed earlier in this deal",
     lambda eng, seen: eng.hand.boxed_count >= 1),
    ("short_deal_open", "the box asks to count the hole cards (SHORT_DEAL): a press repeats the one that asked",
     lambda eng, seen: any(c.irregularity == "SHORT_DEAL" for c in eng.corrections)),
    ("skipped_question_open", "the skipped player has not answered yet (C40)",
     lambda eng, seen: any(c.skipped for c in eng.corrections)),
    ("asked_back_on_board", "a correction asked for this card back on the board",
     lambda eng, seen: any(c.keep_on_board == seen.key for c in eng.corrections)),
    ("correction_moves_it", "an open correction says where this card goes off the board",
     lambda eng, seen: any(c.off_board.get(seen.key) for c in eng.corrections)),
    ("lifting_is_wrong", "a step still to be done rules a board card it does not move, taken off the board, "
     "wrong (the open-steps table's `wrong_at`), and both readers saw the card: no missed read explains it",
     lambda eng, seen: seen.key in eng.hand.drawn_t and wrong_case(eng, "board_card_lifted", shown_before=True)
     is not None),
    ("burn_question_open", "MISSED_BURN still asks whether a burn went unread: no board card was lifted for "
     "it meanwhile (a dealer who takes a card off for the step says the burn was missed)",
     lambda eng, seen: _burn_question(eng) is not None),
    ("burn_question_bet_on", "MISSED_BURN still asks whether a burn went unread, and its street lies complete on "
     "the board: the round was played on it (a round called done on a short street answers nothing)",
     lambda eng, seen: _burn_question(eng) is not None and _street_laid_with_it(eng, *_burn_question(eng))),
    ("late_misdeal_asked", "MISDEAL was pressed after the first round and the floor is asked (002 r36): a "
     "press now is the floor's misdeal",
     lambda eng, seen: any(c.asks == "late_misdeal" for c in eng.corrections)),
    ("reshuffle_pending", "an open correction waits for a reshuffle: a step still to be done rules a card "
     "that must stay out taken off the board wrong (the open-steps table's `wrong_at`)",
     lambda eng, seen: wrong_case(eng, "kept_out_card_off_board") is not None),
    ("expected_card_in_stub", "the card a correction expects next is in the stub, or was sent back into it",
     lambda eng, seen: (eng.hand.where.get(eng.hand.expect_next[0]) == "stub"
                        or eng.hand.expect_next[0] in eng.hand.returning)),
    ("flop_card_on_board", "a card drawn for the flop lies on the board",
     lambda eng, seen: bool(eng.hand.on_board(eng.hand.streets["flop"].drawn))),
)
for _name, _doc, _fn in _SIMPLE_GUARDS:
    guard(_name, _doc)(_fn)


@guard("not_from_stub")
def _not_from_stub(eng, seen) -> bool:
    """A known card out of the shoe that was not in the stub and was not sent back into it."""
    return seen.kind != "unknown" and _place(eng, seen) != "stub" and seen.key not in eng.hand.returning


@guard("second_burn_laid_with_its_street")
def _second_burn_laid_with_its_street(eng, seen) -> bool:
    """The card was taken for a second burn of a street whose cards are on the board, drawn straight
    before the street's first card (no shoe card between), and now it reaches the board: the two were
    laid at once and the later one was read first (RULES.md: the extra board card; a double burn only
    while it never reaches the board)"""
    hand = eng.hand
    if _place(eng, seen) != "burn" or any(c.off_board.get(seen.key) for c in eng.corrections):
        return False
    st = hand.street_of(seen.key)
    if st is None or not st.complete or st.from_aside or seen.key not in st.drawn:
        return False
    i = st.drawn.index(seen.key)
    return (i >= 1 and i + 1 < len(st.drawn) and _place_of(eng, st.drawn[i + 1]) == "board"
            and any(_place_of(eng, c) == "burn" for c in st.drawn[:i]))


@guard("short_deal_answered_by_the_flop")
def _short_deal_answered_by_the_flop(eng, seen) -> bool:
    """The card is one drawn after SHORT_DEAL's question and given to a short seat, or the one the
    flop's burn would then be: the cards after the question were the burn and the flop"""
    fill = short_deal_fill(eng)
    if not fill:
        return False
    flop = eng.hand.streets["flop"]
    return seen.key in fill or (eng.phase == "flop" and flop.drawn[:1] == [seen.key])


@guard("correction_open")
def _correction_open(eng, seen) -> bool:
    """A correction the dealer is following is open (not a halt, a question or a put-right)."""
    return any(not c.halting and c.irregularity not in _NOT_FOLLOWED for c in eng.corrections)


#: Open "corrections" that are no procedure the dealer follows.
_NOT_FOLLOWED = frozenset({None, "UNKNOWN_TAG", "WRONG_CORRECTION", "UNREAD_CARD", "READER_DEGRADED"})


@guard("other_card_expected")
def _other_card_expected(eng, seen) -> bool:
    """A correction said which card must come out next, this is another, and a step still to be done
    rules that wrong (the open-steps table's ``wrong_at``)"""
    expect = eng.hand.expect_next
    return bool(expect) and seen.key != expect[0] and wrong_case(eng, "other_card_drawn") is not None


@guard("acted_answer_untouched")
def _acted_answer_untouched(eng, seen) -> bool:
    """C40: ROUND DONE was taken as the skipped player acting and nothing since followed it: an ACK now
    is the fold, the buttons the other way round"""
    return acted_answer_untouched(eng) is not None


@guard("first_round_open")
def _first_round_open(eng, seen) -> bool:
    """The first betting round is not done, and no premature flop was judged."""
    return eng.hand.rounds_done == 0 and not eng.hand.streets["flop"].settled


@guard("early_flop_passed_over")
def _early_flop_passed_over(eng, seen) -> bool:
    """ROUND DONE took two cards drawn after the deal for the flop's burn and first card, yet a
    third card is now drawn after the press with neither of them shown: a fresh burn and a
    flop of its own, so the two were extra cards (RULES.md, EXTRA_CARDS)."""
    hand = eng.hand
    early = hand.early_flop
    if len(early) < 2 or hand.on_board(early):
        return False
    return len(hand.streets["flop"].drawn) - len(early) >= 2


@guard("last_draw_dealt")
def _last_draw_dealt(eng, seen) -> bool:
    """The last card out of the shoe was dealt as a hole card and is still at its seat."""
    key = eng.hand.last_shoe
    return key is not None and key in eng.hand.deal_cards and (_place_of(eng, key) or "").startswith("seat")


@guard("last_draw_out")
def _last_draw_out(eng, seen) -> bool:
    """The last card out of the shoe is still in play (not in the stub, not burned)."""
    key = eng.hand.last_shoe
    return key is not None and eng.hand.where.get(key) not in ("stub", "burn", None)


@guard("among_first_two")
def _among_first_two(eng, seen) -> bool:
    """The last card out was deal card 1 or 2."""
    return eng.hand.deal_cards.index(eng.hand.last_shoe) < 2


@guard("second_card_dealt")
def _second_card_dealt(eng, seen) -> bool:
    """The last card out was deal card 2 by the box's count: the third if one read before it was missed."""
    return eng.hand.deal_cards.index(eng.hand.last_shoe) == 1


@guard("burn_may_have_come_back")
def _burn_may_have_come_back(eng, seen) -> bool:
    """The card was the only burn seen for an earlier street, and it comes out as the burn of the
    street now due: the dealer may have put it back as a second burn whose first burn was not read."""
    hand = eng.hand
    if _place(eng, seen) != "burn":
        return False
    st, cur = hand.street_of(seen.key), hand.drawing_street(eng.phase)
    return (st is not None and cur is not None and st is not cur and st.complete and st.burns == [seen.key]
            and cur.burn_due and not cur.drawn and not cur.burns)


def _deal_seat(eng, seen) -> int | None:
    """The deal-order seat of the physical seat the zone event names, or None."""
    seats, zone = eng.hand.seats, seen.event.zone
    if seats is None or not zone[4:].isdigit() or int(zone[4:]) not in seats:
        return None
    return seats.index(int(zone[4:])) + 1


@guard("unread_card_at_that_seat")
def _unread_card_at_that_seat(eng, seen) -> bool:
    """A card that left the stub unread was dealt to this seat and is not named yet."""
    seat = _deal_seat(eng, seen)
    return seat is not None and any(k.startswith(UNREAD_PREFIX) and p == f"seat{seat}"
                                    for k, p in eng.hand.where.items())


@guard("seat_is_next_in_deal")
def _seat_is_next_in_deal(eng, seen) -> bool:
    """The seat antenna is the one the next hole card goes to."""
    seat = _deal_seat(eng, seen)
    return seat is not None and seat == eng.hand.next_deal_seat()


@guard("premature_deal_goes_on")
def _premature_deal_goes_on(eng, seen) -> bool:
    """A premature street was judged and the dealer goes on dealing it before reading the panel."""
    return premature_deal_open(eng, eng.hand.drawing_street(eng.phase))


@guard("drawn_for_a_street")
def _drawn_for_a_street(eng, seen) -> bool:
    """The last card out was drawn for a street."""
    return eng.hand.street_of(eng.hand.last_shoe) is not None


@guard("last_draw_on_board")
def _last_draw_on_board(eng, seen) -> bool:
    """The last card out was counted as a board card of its street, or lies on the board."""
    key = eng.hand.last_shoe
    return key in eng.hand.street_of(key).board or _place_of(eng, key) == "board"

