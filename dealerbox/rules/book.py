"""The rule book: what each CONTRACT.md event does in each phase, as data.

Every event is a *trigger* (buttons are ``button.NAME``; the waits that
run out are ``grace.extra``, ``grace.seats``, ``grace.held`` and ``grace.double_burn``). :data:`RULE_BOOK` lists,
per trigger, rules in the order they are tried: the phases a rule applies in,
its named guards (all must hold; ``not NAME`` negates one) and the named
outcome it leads to. The first rule that applies decides, unless it ``goes_on``
(bookkeeping that every later rule relies on). The guards are in
:data:`GUARDS`, the outcomes register themselves in :data:`OUTCOMES` (modules
:mod:`.dealing`, :mod:`.board`, :mod:`.buttons`), and an irregularity's
correction is the profile's procedure (:mod:`.procedures`).

:func:`render_markdown` prints the book beside the profiles' choices; the
rendering is committed as ``docs/RULEBOOK.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from dealerbox.rules.tracker import UNREAD_PREFIX

PHASES = ("idle", "deal", "preflop", "flop", "turn", "river", "showdown", "over", "halted")
ANY = PHASES
PLAYING = ("deal", "preflop", "flop", "turn", "river", "showdown")
STREET_PHASES = ("flop", "turn", "river")
NOT_PLAYING = ("idle", "over", "halted")

Guard = Callable[..., bool]
Outcome = Callable[..., None]
#: Guard name -> predicate ``(engine, seen) -> bool``.
GUARDS: dict[str, Guard] = {}
#: Outcome name -> action ``(engine, seen) -> None``.
OUTCOMES: dict[str, Outcome] = {}


#: Guard name -> what it asks, for the rendered book.
GUARD_DOCS: dict[str, str] = {}


def guard(name: str, doc: str | None = None):
    """Register the decorated predicate as guard *name* (*doc* defaults to its docstring)."""
    def register(fn: Guard) -> Guard:
        GUARDS[name] = fn
        GUARD_DOCS[name] = doc or (fn.__doc__ or "").strip().rstrip(".")
        return fn
    return register


def outcome(name: str):
    """Register the decorated function as outcome *name*."""
    def register(fn: Outcome) -> Outcome:
        OUTCOMES[name] = fn
        return fn
    return register


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of the rule book."""

    trigger: str
    phases: tuple[str, ...]
    guards: tuple[str, ...]
    outcome: str
    #: RULES.md ids this outcome may raise (its correction is the profile's procedure).
    raises: tuple[str, ...] = ()
    #: Bookkeeping: the later rules are tried too.
    goes_on: bool = False


def _r(trigger, phases, guards, outcome, *raises, goes_on=False) -> Rule:
    return Rule(trigger, tuple(phases), tuple(guards), outcome, tuple(raises), goes_on)


_BOARD_RULINGS = ("MISSED_BURN", "DOUBLE_BURN", "FOUR_CARD_FLOP", "PREMATURE_FLOP", "PREMATURE_TURN",
                  "PREMATURE_RIVER", "WRONG_CORRECTION")
_AFTER_DEAL = tuple(p for p in PLAYING if p != "preflop")

RULE_BOOK: tuple[Rule, ...] = (
    _r("new_hand", ANY, (), "start_hand"),
    _r("reader_fault", ANY, (), "reader_down"),
    _r("reader_ok", ANY, (), "reader_up"),
    # -- a card leaves the shoe
    _r("shoe", ANY, (), "remember_draw", goes_on=True),
    _r("shoe", ANY, (), "count_draw", "READER_DEGRADED", goes_on=True),
    _r("shoe", ("halted",), (), "flag_after_halt"),
    _r("shoe", ("idle",), (), "draw_between_hands"),
    _r("shoe", ("over",), (), "rabbit_hunt", "RABBIT_HUNT"),
    _r("shoe", PLAYING, ("is_foreign",), "void_foreign", "FOREIGN_CARD"),
    _r("shoe", PLAYING, ("is_unknown",), "ask_floor_unknown", "UNKNOWN_TAG", goes_on=True),
    _r("shoe", PLAYING, ("held_on_board",), "late_read", *_BOARD_RULINGS),
    _r("shoe", PLAYING, ("is_unread", "card_expected"), "unread_is_expected_card", goes_on=True),
    _r("shoe", PLAYING, ("unread_card_expected", "is_card", "in_stub"), "unread_card_read", goes_on=True),
    _r("shoe", ("flop",), ("not mouth_sensor", "last_hole_card_again"), "ask_hole_card_again", "DUPLICATE_CARD",
       "UNREAD_CARD", goes_on=True),
    _r("shoe", PLAYING, ("not_from_stub", "reshuffled_out", "correction_open"), "reshuffled_in_by_mistake",
       "WRONG_CORRECTION"),
    _r("shoe", PLAYING, ("not_from_stub", "reshuffled_out"), "stub_contaminated", "STUB_CONTAMINATION"),
    _r("shoe", PLAYING, ("not mouth_sensor", "not_from_stub", "burn_may_have_come_back"), "ask_burn_returned",
       "DUPLICATE_CARD", goes_on=True),
    _r("shoe", PLAYING, ("not_from_stub",), "duplicate", "DUPLICATE_CARD"),
    _r("shoe", _AFTER_DEAL, ("not mouth_sensor", "other_card_expected", "expected_card_in_stub"),
       "ask_expected_card_unread", "WRONG_CORRECTION", "UNREAD_CARD"),
    _r("shoe", _AFTER_DEAL, ("other_card_expected",), "wrong_card_drawn", "WRONG_CORRECTION"),
    _r("shoe", PLAYING, (), "take_from_stub", goes_on=True),
    _r("shoe", PLAYING, ("is_unread",), "note_unread", "UNREAD_CARD", goes_on=True),
    _r("shoe", PLAYING, ("is_joker",), "joker_drawn", "JOKER"),
    _r("shoe", PLAYING, ("closed_deal_open",), "closed_draw"),
    _r("shoe", ("deal",), (), "deal_card"),
    _r("shoe", ("preflop",), ("first_round_open",), "extra_or_early_burn", "EXTRA_CARD"),
    _r("shoe", PLAYING, (), "street_draw"),
    # -- a card reaches the board
    _r("board_on", NOT_PLAYING, ("is_card", "not in_stub"), "to_board"),
    _r("board_on", PLAYING, ("is_foreign",), "void_foreign", "FOREIGN_CARD"),
    _r("board_on", PLAYING, ("is_unknown",), "ask_floor_unknown", "UNKNOWN_TAG"),
    _r("board_on", PLAYING, ("is_joker", "in_hand"), "joker_drawn", "JOKER"),
    _r("board_on", PLAYING, ("is_joker",), "nothing"),
    _r("board_on", PLAYING, ("on_board",), "nothing"),
    _r("board_on", PLAYING, ("asked_back_on_board",), "to_board"),
    _r("board_on", PLAYING, ("in_stub", "not returning", "unread_draw_open"), "unread_card_shown", *_BOARD_RULINGS),
    _r("board_on", PLAYING, ("in_stub", "not returning", "board_card_due"), "hold_for_late_read"),
    _r("board_on", PLAYING, ("in_stub", "not returning", "premature_deal_goes_on"), "hold_for_late_read"),
    _r("board_on", PLAYING, ("in_stub", "not returning"), "not_from_shoe", "BOARD_NOT_FROM_SHOE"),
    _r("board_on", PLAYING, ("short_deal_answered_by_the_flop",), "short_deal_was_complete", "UNREAD_CARD",
       *_BOARD_RULINGS),
    _r("board_on", PLAYING, ("set_aside",), "aside_to_board"),
    _r("board_on", PLAYING, ("in_hand",), "board_card", *_BOARD_RULINGS),
    _r("board_on", PLAYING, ("taken_for_a_fast_pair_burn",), "board_card", "MISSED_BURN"),
    _r("board_on", PLAYING, ("at_a_seat",), "not_from_shoe", "BOARD_NOT_FROM_SHOE"),
    # -- a card leaves the board
    _r("board_off", ANY, ("is_card", "on_board", "correction_moves_it"), "take_off_as_told"),
    _r("board_off", PLAYING, ("is_card", "on_board", "reshuffle_pending"), "must_stay_out", "WRONG_CORRECTION"),
    _r("board_off", PLAYING, ("is_card", "on_board", "returning"), "taken_off_as_ruled"),
    _r("board_off", PLAYING, ("is_card", "held"), "forget_held"),
    # -- side zones
    _r("zone_on", PLAYING, ("is_card", "in_muck_zone", "not in_stub"), "to_muck"),
    _r("zone_on", PLAYING, ("is_card", "in_burn_zone", "in_hand"), "to_burn"),
    _r("zone_on", PLAYING, ("is_card", "in_seat_zone", "in_stub", "unread_card_at_that_seat"), "unread_seen_at_seat",
       goes_on=True),
    _r("zone_on", ("deal",), ("is_card", "in_seat_zone", "in_stub", "not mouth_sensor", "seat_is_next_in_deal"),
       "unread_hole_card_at_seat", "UNREAD_CARD", goes_on=True),
    _r("zone_on", PLAYING, ("is_card", "in_seat_zone"), "seat_zone", "SEAT_ERROR"),
    # -- buttons
    _r("button.hand_over", PLAYING, (), "end_hand"),
    _r("button.round_done", ("deal",), ("short_deal_open",), "nothing"),
    _r("button.round_done", ("deal",), ("not mouth_sensor", "deal_a_few_short"), "short_deal", "SHORT_DEAL"),
    _r("button.round_done", ("deal", "showdown"), (), "nothing"),
    _r("button.round_done", PLAYING, ("skipped_question_open",), "nothing"),
    _r("button.round_done", STREET_PHASES, ("street_shows_nothing",), "round_called_ahead"),
    _r("button.round_done", PLAYING, (), "next_round", "SEAT_ERROR", "WRONG_CORRECTION", "DOUBLE_BURN"),
    _r("button.ack", PLAYING, ("not mouth_sensor", "missed_burn_unanswered"), "burn_was_unread", "UNREAD_CARD"),
    _r("button.exposed", PLAYING, ("last_draw_dealt", "after_first_round"), "late_error", "LATE_ERROR"),
    _r("button.exposed", PLAYING, ("last_draw_dealt", "exposed_before"), "misdeal_exposed_twice", "EXPOSED_TWICE"),
    _r("button.exposed", PLAYING, ("last_draw_dealt", "not mouth_sensor", "second_card_dealt"),
       "ask_exposed_position", "EXPOSED_EARLY"),
    _r("button.exposed", PLAYING, ("last_draw_dealt", "among_first_two"), "misdeal_exposed_early",
       "EXPOSED_EARLY"),
    _r("button.exposed", PLAYING, ("last_draw_dealt",), "exposed_is_burn", "EXPOSED_DEAL"),
    _r("button.boxed", PLAYING, ("last_draw_out", "last_draw_dealt", "after_first_round"), "late_error",
       "LATE_ERROR"),
    _r("button.boxed", PLAYING, ("last_draw_out", "last_draw_dealt", "boxed_before"), "misdeal_boxed_twice",
       "BOXED_TWICE"),
    _r("button.boxed", PLAYING, ("last_draw_out", "last_draw_dealt"), "boxed_hole_card", "BOXED_CARD"),
    _r("button.boxed", PLAYING, ("last_draw_out", "drawn_for_a_street", "not last_draw_on_board"),
       "boxed_street_card", "BOXED_CARD"),
    _r("button.premature", STREET_PHASES, (), "take_round_back", "PREMATURE_FLOP", "PREMATURE_TURN",
       "PREMATURE_RIVER"),
    _r("button.misdeal", PLAYING, ("unknown_tag_open",), "unknown_is_foreign", "FOREIGN_CARD"),
    _r("button.misdeal", PLAYING, ("exposed_question_open",), "exposed_second_card_confirmed", "EXPOSED_EARLY"),
    _r("button.misdeal", PLAYING, ("hole_card_question_open",), "hole_card_again_confirmed", "DUPLICATE_CARD"),
    _r("button.misdeal", PLAYING, (), "misdeal_called"),
    _r("button.floor", PLAYING, (), "floor_called"),
    # -- grace periods run out (checked on every event's time)
    _r("grace.extra", ("preflop",), ("not flop_card_on_board",), "extra_cards_misdeal", "EXTRA_CARDS"),
    _r("grace.seats", ANY, (), "check_seat_counts", "SEAT_ERROR"),
    _r("grace.held", PLAYING, ("mouth_sensor",), "held_not_from_shoe", "BOARD_NOT_FROM_SHOE"),
    _r("grace.held", PLAYING, (), "held_is_unread_card", "UNREAD_CARD", *_BOARD_RULINGS),
    _r("grace.held", NOT_PLAYING, (), "forget_held"),
    _r("grace.double_burn", PLAYING, (), "double_burn_after_spread", "DOUBLE_BURN"),
)


# --------------------------------------------------------------------------
# Guards: questions about the event's card and the hand, never changing either
# --------------------------------------------------------------------------

def _place(eng, seen):
    return eng.hand.where.get(seen.key)


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
    ("missed_burn_unanswered", "a MISSED_BURN correction waits for its card to come off the board",
     lambda eng, seen: any(c.asks == "burn_unread" and not c.todos[0].done and c.born != eng.seq
                           for c in eng.corrections)),
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
    ("unknown_tag_open", "the floor is being asked about an unknown tag",
     lambda eng, seen: any(c.unknown is not None for c in eng.corrections)),
    ("short_deal_open", "the box asks to count the hole cards (SHORT_DEAL): a press repeats the one that asked",
     lambda eng, seen: any(c.irregularity == "SHORT_DEAL" for c in eng.corrections)),
    ("hole_card_question_open", "the box asks whether the last hole card, out again, was put back",
     lambda eng, seen: any(c.asks == "hole_card_again" for c in eng.corrections)),
    ("skipped_question_open", "the skipped player has not answered yet (C40)",
     lambda eng, seen: any(c.skipped for c in eng.corrections)),
    ("asked_back_on_board", "a correction asked for this card back on the board",
     lambda eng, seen: any(c.keep_on_board == seen.key for c in eng.corrections)),
    ("correction_moves_it", "an open correction says where this card goes off the board",
     lambda eng, seen: any(c.off_board.get(seen.key) for c in eng.corrections)),
    ("reshuffle_pending", "an open correction waits for a reshuffle",
     lambda eng, seen: any(t.button == "reshuffled" and not t.done for c in eng.corrections for t in c.todos)),
    ("expected_card_in_stub", "the card a correction expects next is in the stub, or was sent back into it",
     lambda eng, seen: (eng.hand.where.get(eng.hand.expect_next[0]) == "stub"
                        or eng.hand.expect_next[0] in eng.hand.returning)),
    ("exposed_question_open", "the box asked whether the exposed card was the second one dealt",
     lambda eng, seen: any(c.asks == "exposed_position" for c in eng.corrections)),
    ("flop_card_on_board", "a card drawn for the flop lies on the board",
     lambda eng, seen: bool(eng.hand.on_board(eng.hand.streets["flop"].drawn))),
)
for _name, _doc, _fn in _SIMPLE_GUARDS:
    guard(_name, _doc)(_fn)


@guard("not_from_stub")
def _not_from_stub(eng, seen) -> bool:
    """A known card out of the shoe that was not in the stub and was not sent back into it."""
    return seen.kind != "unknown" and _place(eng, seen) != "stub" and seen.key not in eng.hand.returning


@guard("short_deal_answered_by_the_flop")
def _short_deal_answered_by_the_flop(eng, seen) -> bool:
    """The card is one drawn after SHORT_DEAL's question and given to a short seat, or the one the
    flop's burn would then be: the cards after the question were the burn and the flop"""
    from dealerbox.rules.sensing import short_deal_fill
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
    """A correction said which card must come out next, and this is another."""
    expect = eng.hand.expect_next
    return bool(expect) and seen.key != expect[0]


@guard("first_round_open")
def _first_round_open(eng, seen) -> bool:
    """The first betting round is not done, and no premature flop was judged."""
    return eng.hand.rounds_done == 0 and not eng.hand.streets["flop"].settled


@guard("last_draw_dealt")
def _last_draw_dealt(eng, seen) -> bool:
    """The last card out of the shoe was dealt as a hole card."""
    key = eng.hand.last_shoe
    return key is not None and key in eng.hand.deal_cards


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
    from dealerbox.rules.dealing import premature_deal_open
    return premature_deal_open(eng, eng.hand.drawing_street(eng.phase))


@guard("drawn_for_a_street")
def _drawn_for_a_street(eng, seen) -> bool:
    """The last card out was drawn for a street."""
    return eng.hand.street_of(eng.hand.last_shoe) is not None


@guard("last_draw_on_board")
def _last_draw_on_board(eng, seen) -> bool:
    """The last card out was counted as a board card of its street."""
    key = eng.hand.last_shoe
    return key in eng.hand.street_of(key).board


# --------------------------------------------------------------------------
# Dispatch
# --------------------------------------------------------------------------

Compiled = tuple[tuple[tuple[Guard, ...], Outcome, bool], ...]


def _compile_guard(name: str) -> Guard:
    if name.startswith("not "):
        fn = GUARDS[name[4:]]
        return lambda eng, seen: not fn(eng, seen)
    return GUARDS[name]


def compile_book(book=RULE_BOOK) -> dict[tuple[str, str], Compiled]:
    """(trigger, phase) -> the rules to try, in order, as (guards, outcome, goes_on)."""
    index: dict[tuple[str, str], list] = {}
    for rule in book:
        row = (tuple(_compile_guard(g) for g in rule.guards), OUTCOMES[rule.outcome], rule.goes_on)
        for phase in rule.phases:
            index.setdefault((rule.trigger, phase), []).append(row)
    return {k: tuple(v) for k, v in index.items()}


def run(index, trigger: str, eng, seen) -> None:
    """Apply the first rule of *trigger* whose phase and guards hold (and the ``goes_on`` ones before it)."""
    for guards, act, goes_on in index.get((trigger, eng.phase), ()):
        for g in guards:
            if not g(eng, seen):
                break
        else:
            act(eng, seen)
            if not goes_on:
                return


@outcome("nothing")
def _nothing(eng, seen) -> None:
    """Nothing the rules judge."""
