"""Outcomes of cards reaching and leaving the board: which street a card belongs to,
and the board rows of RULES.md (missed and double burns, a card too many, premature
streets, cards the shoe never gave)."""

from __future__ import annotations

from dealerbox.rules.book import outcome
from dealerbox.rules.procedures import correct
from dealerbox.rules.tracker import FAST_PAIR_S, ROUND_BEFORE, STREETS, Street


# ---------------------------------------------------------------- board_on
@outcome("not_from_shoe")
def not_from_shoe(eng, seen) -> None:
    """A card the stub never gave reached the board (003 general rules)."""
    eng.hand.where[seen.key] = "board"
    correct(eng, "BOARD_NOT_FROM_SHOE", [seen.key])


@outcome("aside_to_board")
def aside_to_board(eng, seen) -> None:
    """C40: a card dealt face down aside is turned up as its street."""
    hand, key = eng.hand, seen.key
    for st in hand.streets.values():
        if key in st.from_aside:
            hand.where[key] = "board"
            st.board.append(key)
            street_progress(eng, st)


@outcome("board_card")
def board_card(eng, seen) -> None:
    """A drawn card reached the board: judge it against the street it was drawn for."""
    hand, key = eng.hand, seen.key
    hand.where[key] = "board"
    st = hand.street_of(key)
    river = hand.streets["river"]
    if st is None and river.complete and not river.from_aside:
        # A sixth board card: drawn after the river, it lies on the board as a card too many.
        river.drawn.append(key)
        river.board.append(key)
        return extra_board_card(eng, river, key)
    if st is None:
        return
    if key in st.voided:
        return _joins_voided(st, key)
    i = STREETS.index(st.name)
    prev = hand.streets[STREETS[i - 1]] if i > 0 else None
    # A card drawn straight after the previous street's cards, with no burn
    # between, belongs to that street: a fourth flop card (RULES.md). Not once that
    # street's round was called done ahead: then it is the next street, unburned.
    if (prev is not None and prev.complete and st.drawn[0] == key and not st.board
            and eng.phase == ROUND_BEFORE[st.name] and not st.settled and not hand.rounds_ahead):
        st.drawn.remove(key)
        prev.drawn.append(key)
        prev.board.append(key)
        return extra_board_card(eng, prev, key)
    if _burn_was_no_burn(eng, st, key):
        return
    if st.drawn_at_first_card is None:
        st.drawn_at_first_card = len(st.drawn)
    if key in st.burns:
        # A spread street's first card laid down last: it was no second burn.
        st.burns.remove(key)
        hand.double_burn_wait = None
    st.board.append(key)
    if not st.settled and eng.phase == ROUND_BEFORE[st.name] and not round_done_ahead(eng):
        return premature(eng, st)
    if st.complete and len(hand.on_board(st.board)) > st.n:
        return extra_board_card(eng, st, key)
    if st.burn_due and not st.burns and st.drawn[0] == key and not _read_before_its_burn(hand, st, key):
        correct(eng, "MISSED_BURN", [key], street=st)
    street_progress(eng, st)


def round_done_ahead(eng) -> bool:
    """A card of the next street reached the board with its round called done ahead: that round
    is over now (the hand moves on, as a press would have moved it). False when none was."""
    hand = eng.hand
    if not hand.rounds_ahead or eng.phase not in STREETS:
        return False
    hand.rounds_ahead -= 1
    hand.rounds_done += 1
    eng.next_round()
    return True


@outcome("second_burn_on_board")
def second_burn_on_board(eng, seen) -> None:
    """The card taken for the street's second burn reached the board: no double burn, a card too many
    on the board for the street (the double burn's steps are superseded, the card is not expected back)."""
    hand, key = eng.hand, seen.key
    st = hand.street_of(key)
    hand.where[key] = "board"
    if key in st.burns:
        st.burns.remove(key)
    hand.returning.discard(key)
    hand.expect_next = [k for k in hand.expect_next if k != key]
    st.board.append(key)
    eng.announce("second_burn_on_board", [key])
    extra_board_card(eng, st, key)


def _read_before_its_burn(hand, st: Street, key: str) -> bool:
    """The street's first draw reached the board, but the next draw, still in the dealer's hand,
    came out with it (``fast_pair``): the read order lied, that card is the burn. Swap them;
    should that card land too, the order was right (:func:`_burn_was_no_burn`)."""
    if len(st.drawn) < 2 or hand.where.get(st.drawn[1]) != "hand":
        return False
    t0, t1 = hand.drawn_t.get(key), hand.drawn_t.get(st.drawn[1])
    if t0 is None or t1 is None or abs(t1 - t0) > FAST_PAIR_S:
        return False
    st.drawn[0], st.drawn[1] = st.drawn[1], key
    st.fast_pair = (key, st.drawn[0])
    return True


def _burn_was_no_burn(eng, st: Street, key: str) -> bool:
    """The card taken for the burn of a swapped fast pair lands too: the read order was right
    after all, and the street's first card went out unburned. MISSED_BURN, as it first looked."""
    if st.fast_pair is None or st.fast_pair[1] != key:
        return False
    first = st.fast_pair[0]
    st.fast_pair = None
    st.drawn.remove(first)
    st.drawn.insert(0, first)
    if key in st.burns:
        st.burns.remove(key)
    st.complete = False
    st.board.append(key)
    correct(eng, "MISSED_BURN", [first], street=st)
    street_progress(eng, st)
    return True


def _joins_voided(st: Street, key: str) -> None:
    """A card of a premature deal placed after the judgment goes back with the others."""
    corr = st.episode
    if corr is None:
        return
    corr.off_board[key] = corr.voided.dest
    back = corr.voided.back
    if key not in back:
        back.append(key)
    if key not in corr.cards:
        corr.cards = corr.cards + (key,)


def street_progress(eng, st: Street) -> None:
    """Once a street's cards are all on the board, its burns are known: judge them."""
    if st.complete:
        return
    hand = eng.hand
    on_board = hand.on_board(st.board)
    if len(on_board) < st.n:
        return
    st.complete = True
    if st.from_aside:
        return
    firsts = [st.drawn.index(c) for c in on_board if c in st.drawn]
    first = min(firsts) if firsts else len(st.drawn)
    burns = [c for c in st.drawn[:first] if c not in st.board and c not in st.burns]
    in_hand = {c for c in burns if hand.where.get(c) == "hand"}
    for c in burns:
        if c in in_hand:
            hand.where[c] = "burn"
        st.burns.append(c)
    if not st.burn_due and burns:
        correct(eng, "WRONG_CORRECTION", burns, case="burn_not_due")
    elif st.burn_due and len(st.burns) >= 2:
        if st.n > 1 and st.drawn_at_first_card == len(st.drawn) and st.burns[1] in in_hand:
            # Drawn all at once and spread: the "second burn" may be the first card drawn,
            # still to be laid down (a four-card flop). Judge when it had time to land.
            hand.where[st.burns[1]] = "hand"
            hand.double_burn_wait = (st.name, eng.t + eng.profile.board_grace_s)
        else:
            correct(eng, "DOUBLE_BURN", st.burns[:2], street=st)


@outcome("double_burn_after_spread")
def double_burn_after_spread(eng, seen) -> None:
    """The spread street's second burn never reached the board: a double burn after all (001 r13)."""
    hand = eng.hand
    st = hand.streets[seen.key]
    if len(st.burns) >= 2:
        if hand.where.get(st.burns[1]) == "hand":
            hand.where[st.burns[1]] = "burn"
        correct(eng, "DOUBLE_BURN", st.burns[:2], street=st)


def extra_board_card(eng, st: Street, key: str) -> None:
    """A card too many on the board for its street: a fourth flop card, a second card laid straight
    after the turn's or the river's (no shoe card between), or a sixth board card (RULES.md
    FOUR_CARD_FLOP and the extra board card; the procedure says what each profile does)."""
    correct(eng, "FOUR_CARD_FLOP", eng.hand.on_board(st.board), street=st)


def premature(eng, st: Street) -> None:
    """A street's card reached the board before the betting round before it was done."""
    hand = eng.hand
    st.settled = True
    on_board = [c for c in hand.on_board(st.board) if c in st.drawn]
    if not on_board:
        return
    # The burn is the street's first draw, if one was due and it is not on the
    # board. Not "whatever came before the first card placed": a spread flop is
    # placed in any order, so its first card placed may be its last drawn.
    due = 1 if st.burn_due and st.drawn[0] not in on_board else 0
    burns = st.drawn[:due]
    rest = [c for c in st.drawn[due:] if hand.where.get(c) in ("hand", "board")]
    for c in burns:
        hand.where[c] = "burn"
        hand.returning.discard(c)
    if st.name == "flop":
        hand.extra_deadline = None
        hand.expect_next = []
        eng.announce("flop_drawn_early")
    # The premature cards leave the street; the corrected deal starts afresh.
    st.voided = list(rest)
    st.board = []
    st.drawn = []
    st.burns = []
    st.complete = False
    back = list(rest)
    correct(eng, f"PREMATURE_{st.name.upper()}", back + burns, street=st, back=back, burns=burns)


# ---------------------------------------------------------------- board_off
@outcome("take_off_as_told")
def take_off_as_told(eng, seen) -> None:
    """A card a correction moves left the board: it goes where the correction says."""
    hand, key = eng.hand, seen.key
    for corr in reversed(eng.corrections):
        dest = corr.off_board.get(key)
        if dest:
            hand.where[key] = dest
            if dest == "stub":
                hand.returning.add(key)
            return


@outcome("lifted_during_step")
def lifted_during_step(eng, seen) -> None:
    """A board card no step moves left the board while a step the dealer must do is shown: the board
    reader saw it go, so no missed read explains it (RULES.md); the table rules it."""
    eng.announce("board_card_lifted", [seen.key])
    eng.hand.where[seen.key] = "hand"
    for corr in eng.corrections:
        if corr.asks == "burn_unread":
            # The dealer took a card off for the missed burn: the burn was missed, not read late.
            corr.asks = None


@outcome("must_stay_out")
def must_stay_out(eng, seen) -> None:
    """A card that must stay out of the stub left the board while the stub is to be reshuffled."""
    eng.announce("kept_out_card_off_board", [seen.key])
    eng.hand.where[seen.key] = "hand"
