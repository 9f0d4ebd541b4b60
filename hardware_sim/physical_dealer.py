"""A dealer at the physical table: deals real hands, makes one mistake, and answers the box.

The dealer plays a :class:`HandPlan` on a :class:`~hardware_sim.physical_table.PhysicalTable`:
the deal from the seat left of the button, a burn and the street's cards for each street,
a betting round before each ROUND DONE, and the hand over when all but one have folded
(most hands end before the river). The plan names one mistake of RULES.md (or none) and
how the dealer meets the box's correction:

- ``right``: reads the step the panel shows and does the physical thing it says;
- a wrong way (:data:`WRONG_WAYS`): does one step wrongly, in a way the step allows a
  dealer to err (the wrong card off, the card left, a button too early, too late, twice or
  at another step...), then reads the panel again and puts right what it then says;
- ``ignore``: never answers the panel and deals on.

The stub's end is not among the mistakes: with 52 cards no correction RULES.md names runs the
stub out (ten-handed Omaha leaves four spare, and the corrections that use up a card, a boxed
card and a missed burn's open burn, take at most one each); a hand whose stub runs out all the
same (after a wrong answer) is counted and not judged.

The dealer reports what it did to a :class:`DealerLog`: each mistake and wrong answer with
the event it began at, and each ROUND DONE with the betting rounds physically over. It
reads the panel through a callable that returns the box's latest decision (anything with
``verdict``, ``irregularity``, ``cards``, ``steps`` of ``key``/``params`` and ``step``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable

from dealerbox.domain.cards import DECK_52, JOKER
from hardware_sim.physical_table import (BOARD_AFTER_ROUND, FOREIGN_DECK, STREET_ORDER, Card,
                                         PhysicalTable, StubEmpty)

#: The mistakes of RULES.md the dealer makes, as this model names them.
DEAL_KINDS = ("exposed_early", "exposed_deal", "exposed_twice", "boxed", "boxed_twice", "extra_card",
              "extra_cards", "joker_deal", "short_deal", "duplicate", "foreign")
STREET_KINDS = ("missed_burn", "double_burn", "four_card_flop", "premature", "premature_button",
                "extra_board_card", "joker_street", "joker_burn", "sixth_card")
OTHER_KINDS = ("late_misdeal", "rabbit_hunt")
KINDS = DEAL_KINDS + STREET_KINDS + OTHER_KINDS
#: The wrong ways a dealer answers a step, and which steps each can go wrong at.
WRONG_WAYS = ("wrong_card_off", "card_left", "ack_instead", "round_done_early", "reshuffled_early",
              "reshuffled_twice", "reshuffled_late", "reshuffled_never", "reshuffled_other_step", "no_return",
              "return_bottom", "burn_anyway", "other_button")
RESPONSES = ("right", "ignore") + WRONG_WAYS
_RESHUFFLE_WAYS = ("reshuffled_early", "reshuffled_twice", "reshuffled_late", "reshuffled_never",
                   "reshuffled_other_step")
#: Mistake -> the wrong ways its correction's steps allow.
WAYS_FOR = {
    "missed_burn": ("wrong_card_off", "card_left", "ack_instead", "round_done_early"),
    "double_burn": ("no_return", "return_bottom"),
    "four_card_flop": ("wrong_card_off", "card_left", "round_done_early", "burn_anyway", "other_button")
    + _RESHUFFLE_WAYS,
    "premature": ("card_left", "ack_instead", "round_done_early", "burn_anyway", "other_button") + _RESHUFFLE_WAYS,
    "premature_button": ("card_left", "ack_instead", "burn_anyway", "other_button") + _RESHUFFLE_WAYS,
    "extra_board_card": ("wrong_card_off", "card_left", "round_done_early", "other_button") + _RESHUFFLE_WAYS,
    "joker_street": ("card_left", "ack_instead", "round_done_early"),
    "joker_burn": ("ack_instead", "round_done_early"),
    "exposed_deal": ("burn_anyway",),
    "extra_card": ("no_return", "return_bottom"),
    "sixth_card": ("wrong_card_off", "card_left", "round_done_early"),
}
#: Steps that take a card off the board (the card the step names), and where it goes.
TAKE_OFF = {"missed_burn.take_off": "burn", "joker.show_and_burn": "shown", "premature.cards_back": "stub",
            "premature.set_aside": "aside", "redeal.cards_back": "stub", "four_flop.scramble_pick": "pick"}
#: Steps that deal a street with no burn of its own.
NO_BURN = {"exposed.flop_no_burn": "flop", "four_flop.turn_no_burn": "turn"}
#: Steps a panel button other than the step's own answers nothing at: where ``reshuffled_other_step``
#: and ``other_button`` press one.
#: (Not "the burn stays": the reshuffle is its next step, and a RESHUFFLED there may be that step's.)
FOLLOW_STEPS = ("premature.finish_round", "premature.burn_and_turn", "premature.new_street",
                "premature.new_street_no_burn", "redeal.deal_again", "missed_burn.next_card",
                "exposed.flop_no_burn", "four_flop.turn_no_burn")
#: Steps that ask for the cards the dealer is dealing now: the street goes on under them.
GO_ON_STEPS = frozenset({
    "missed_burn.next_card", "joker.replace_next", "joker.replace_seat", "boxed.replace_next", "boxed.replace",
    "redeal.deal_again", "premature.new_street", "premature.new_street_no_burn", "premature.burn_and_turn",
    "four_flop.turn_no_burn", "four_flop.rest_is_flop", "exposed.flop_no_burn", "exposed.finish_deal",
    "double_burn.burn_it", "double_burn.river_recorded", "premature.burn_stays", "exposed.is_burn",
})
#: Steps whose only answer is a button other than ACK: ACK there answers nothing (RULES.md).
ACK_IS_NO_ANSWER = frozenset({"premature.finish_round", "reshuffle.now", "premature.reshuffle_with"})
#: Steps whose only answer is the floor's ruling: once the dealer acknowledges one, the floor owns the hand.
FLOOR_RULES = ("floor.decides", "floor.called", "floor.house_rule")


@dataclass
class HandPlan:
    """One hand to deal: the table, the game, the mistake and how the dealer meets the box."""

    profile: str
    players: int
    hole: int
    mouth: bool
    rounds: int                 # betting rounds played before the hand is over (4: to the showdown)
    kind: str | None = None     # the mistake (None: a clean hand)
    street: str = "flop"        # where a street mistake happens
    response: str = "right"
    spread: bool = False        # the flop drawn whole, then laid
    button: int = 1             # the physical seat of the dealer button


@dataclass
class Act:
    """A mistake or a wrong answer: what, where it began (an index into the table's events), whether the
    box must rule on it (a wrong answer some reading of the sensors explains need not)."""

    what: str
    begins: int
    street: str
    demand: bool = True
    #: ROUND DONEs within which the box must rule: 1, the street's own; 2 for a card of the next street
    #: left on the board (a premature card: the round before it may rightly end with the step still shown).
    presses: int = 1


@dataclass
class DealerLog:
    """What the dealer did, as the audit reads it."""

    mistakes: list = field(default_factory=list)
    wrong: list = field(default_factory=list)
    #: Streets a procedure deals with no burn of its own (the RULES.md exception, known from the mistake).
    exempt: set = field(default_factory=set)
    #: Steps the dealer met that it has no handler for (their key): it pressed ACK.
    unknown_steps: set = field(default_factory=set)
    #: The floor took the hand over (ACK on its ruling): from then on the floor answers for the table.
    floor_owned_from: int | None = None
    halted: bool = False
    stub_ran_out: bool = False
    #: SHORT_DEAL named a seat that is not the short one (the box's count cannot know which seat the
    #: dealer skipped): the dealer gave the card to the seat that was short.
    seat_misnamed: int = 0


class Dealer:
    """Deals :attr:`plan` on *table*, reading the box's panel with *panel* (returns the latest decision)."""

    def __init__(self, table: PhysicalTable, panel: Callable[[], object], plan: HandPlan, rng: random.Random):
        self.table, self.panel, self.plan, self.rng = table, panel, plan, rng
        self.log = DealerLog()
        self.rounds_over = 0
        self.order: list[int] = []            # physical seats in deal order (deal position p -> order[p - 1])
        self.burn_due = dict.fromkeys(STREET_ORDER, True)
        self.aside_for: dict[str, Card] = {}  # C40: a later street's card dealt face down aside
        self.acted: set = set()               # the panel's step acted on, since the panel last changed
        self.shown_key = None
        self.ignored_steps: set = set()       # steps the dealer left undone on purpose (a wrong answer)
        self.wrong_done = False
        self.press_after_draw: str | None = None
        self.street_now = "flop"
        self.deferred: Act | None = None      # a wrong answer whose effect is the next burn

    # ------------------------------------------------------------------ helpers
    @property
    def ev(self) -> int:
        return len(self.table.events)

    def _mistake(self, what: str, street: str | None = None) -> None:
        self.log.mistakes.append(Act(what, self.ev, street or self.street_now))

    def _wrong(self, what: str, *, demand: bool = True, presses: int = 1, deferred: bool = False) -> bool:
        """Record a wrong answer; a *deferred* one shows only when the next burn is drawn (:meth:`burn`)."""
        self.wrong_done = True
        act = Act(what, self.ev, self.street_now, demand, presses)
        if deferred:
            self.deferred = act
        else:
            self.log.wrong.append(act)
        return True

    def _wants(self, way: str) -> bool:
        return self.plan.response == way and not self.wrong_done

    def press(self, name: str) -> None:
        # The round is over (or, PREMATURE, not over after all) as the button is pressed.
        if name == "round_done":
            self.rounds_over += 1
        elif name == "premature":
            self.rounds_over = max(0, self.rounds_over - 1)
        self.table.press(name)

    def may_go_on(self) -> bool:
        """The dealer may go on dealing the street: the panel shows nothing, or a step that asks for
        these very cards (or one the dealer is ignoring)."""
        d = self.panel()
        if d.verdict in ("misdeal", "void"):
            return False
        if d.verdict == "ok" or d.step >= len(d.steps) or self.plan.response == "ignore":
            return True
        k = d.steps[d.step].key
        return k in self.ignored_steps or k in GO_ON_STEPS or k.startswith(("unread.", "reader."))

    def draw(self) -> Card:
        if self.deferred is not None:
            # A wrong answer that shows with the next card out of the shoe (the card asked for is not
            # on top; the street comes from a stub whose RESHUFFLED was not pressed yet).
            self.deferred.begins = self.ev
            self.deferred.street = self.street_now
            self.log.wrong.append(self.deferred)
            self.deferred = None
        card = self.table.draw()
        if self.press_after_draw:
            name, self.press_after_draw = self.press_after_draw, None
            self.press(name)
        return card

    def halted(self) -> bool:
        d = self.panel()
        if d.verdict in ("misdeal", "void"):
            self.log.halted = True
        return self.log.halted

    # ------------------------------------------------------------------ the hand
    def play(self) -> DealerLog:
        p = self.plan
        seats = sorted(self.rng.sample(range(1, 11), p.players))
        after = [s for s in seats if s > p.button] + [s for s in seats if s <= p.button]
        self.order = after
        try:
            self._play()
        except StubEmpty:
            self.log.stub_ran_out = True
            self.press("hand_over")
            self.table.gather()
        return self.log

    def _extra_cards(self) -> list:
        """Cards slipped into the stub before the hand (a joker, a second card of one face, a foreign back)."""
        p, n = self.plan, self.plan.players * self.plan.hole
        if p.kind == "joker_deal":
            return [(self.rng.randrange(n), Card(JOKER))]
        if p.kind in ("joker_street", "joker_burn"):
            return [(self._street_position(p.street, burn=p.kind == "joker_burn"), Card(JOKER))]
        if p.kind == "foreign":
            return [(self.rng.randrange(n + 9), Card(self.rng.choice(DECK_52), FOREIGN_DECK))]
        return []

    def _street_position(self, street: str, burn: bool) -> int:
        """Where in the stub the burn (or the first card) of *street* lies, for a clean deal."""
        n = self.plan.players * self.plan.hole
        at = {"flop": n, "turn": n + 4, "river": n + 6}[street]
        return at if burn else at + 1 + (self.rng.randrange(3) if street == "flop" else 0)

    def _play(self) -> None:
        p, t = self.plan, self.table
        extra = self._extra_cards()
        t.new_hand(p.players, p.hole, p.mouth, extra)
        if p.kind == "duplicate":
            # A second card of one face: a card already in play (a hole card) has a twin further down.
            n = p.players * p.hole
            twin = t.stub[self.rng.randrange(n)]
            t.stub.insert(self.rng.randrange(n, n + 9), Card(twin.face))
        if p.kind in ("boxed", "boxed_twice"):
            n = p.players * p.hole
            for i in self.rng.sample(range(n), 2 if p.kind == "boxed_twice" else 1):
                t.stub[i].face_up = True
        if p.kind in ("duplicate", "foreign", "joker_deal", "joker_street", "joker_burn"):
            self._mistake(p.kind, "preflop")   # it shows when the card comes out: the audit waits for it
            self.log.mistakes[-1].begins = -1
        if p.kind in ("premature", "premature_button") and p.street == "turn" and p.profile == "tda-2019":
            self.log.exempt.add("river")           # 002 OP5-B: the river comes from a reshuffle, no burn
        self.deal()
        if self.halted():
            return self._after_halt()
        for r in range(4):
            if r > 0:
                self.street_now = STREET_ORDER[r - 1]
                self.deal_street(STREET_ORDER[r - 1])
                if self.halted():
                    return self._after_halt()
            nxt = STREET_ORDER[r] if r < 3 else None
            if nxt is not None and p.kind == "premature" and p.street == nxt and self.rounds_over == r:
                self._mistake("premature", nxt)
                self.street_now = nxt
                self.deal_street(nxt, premature=True)
                if self.halted():
                    return self._after_halt()
            self.betting(r, by_mistake=nxt is not None and p.kind == "premature_button" and p.street == nxt)
            if self.halted():
                return self._after_halt()
            if nxt is not None and p.kind == "premature_button" and p.street == nxt and self.rounds_over == r + 1:
                # ROUND DONE was pressed by mistake: the street is dealt, then PREMATURE.
                self.street_now = nxt
                self.deal_street(nxt)
                self._mistake("premature_button", nxt)
                self.press("premature")
                self.follow()
                self.betting(r)
                if self.halted():
                    return self._after_halt()
            if p.kind == "late_misdeal" and r == 0:
                self._mistake("late_misdeal", "flop")
                self.press("misdeal")
                self.follow()
                if self.halted():
                    return self._after_halt()
            if r + 1 >= p.rounds:
                break
        self.press("hand_over")
        if p.kind == "rabbit_hunt":
            self._mistake("rabbit_hunt", "over")
            card = self.draw()
            t.to_board(card)
            self.follow()
        t.gather()

    def _after_halt(self) -> None:
        """The hand is stopped (a misdeal or a void hand): it is redealt; an ignoring dealer deals one more first."""
        if self.plan.response == "ignore" and self.table.stub:
            card = self.draw()
            self.table.to_board(card)
        self.table.gather()

    # ------------------------------------------------------------------ the deal
    def deal(self) -> None:
        p, t = self.plan, self.table
        n = p.players * p.hole
        skip = None
        if p.kind == "short_deal":
            skip = n - 1 - self.rng.randrange(p.players - 1)       # a card of the last lap forgotten
            self._mistake("short_deal", "preflop")
        expose = []
        if p.kind == "exposed_early":
            expose = [self.rng.randrange(2)]
        elif p.kind == "exposed_deal":
            expose = [self.rng.randrange(2, n)]
        elif p.kind == "exposed_twice":
            expose = sorted(self.rng.sample(range(2, n), 2))
        self.street_now = "preflop"
        boxed_seen = 0
        for i in range(n):
            if i == skip:
                continue
            seat = self.order[i % p.players]
            while True:
                card = self.draw()
                if card.face_up:
                    boxed_seen += 1
                    self._mistake("boxed_twice" if boxed_seen == 2 else "boxed", "preflop")
                    self.press("boxed")
                    if self.plan.response == "ignore":
                        card.face_up = False
                        t.to_seat(card, seat)      # the dealer leaves it with the player
                        break
                    t.to_shown(card)               # shown to all, set with the burns
                    self.follow()
                    if self.halted():
                        return
                    continue                       # the seat gets the next card
                t.to_seat(card, seat)
                if i in expose:
                    self._mistake("exposed_twice" if expose.index(i) == 1 else "exposed_deal" if i >= 2 else p.kind, "preflop")
                    self.press("exposed")
                self.follow()
                if self.halted():
                    return
                if card not in t.shown:
                    break                          # the seat holds its card (a joker shown: the next one)
        if p.kind in ("extra_card", "extra_cards"):
            self._mistake(p.kind, "preflop")
            for k in range(1 if p.kind == "extra_card" else 2):
                card = self.draw()
                t.to_seat(card, self.order[k % p.players])
                if p.kind == "extra_card":
                    self.follow()
            if p.kind == "extra_cards":
                t.wait(self.rng.choice([0.5, 4.0]))
                self.follow()

    # ------------------------------------------------------------------ a street
    def _board_count(self) -> int:
        """The board's cards as the dealer counts them: a joker is a blank, no card of the street."""
        return sum(1 for c in self.table.board if not c.is_joker)

    def deal_street(self, street: str, premature: bool = False) -> None:
        p, t = self.plan, self.table
        mine = p.kind is not None and p.street == street and (premature or p.kind not in ("premature",))
        target = BOARD_AFTER_ROUND[STREET_ORDER.index(street) + 1]
        if self._board_count() >= target:
            return                                 # it stands already (a premature street the player folded to)
        extra = 0
        if mine and p.kind == "four_card_flop" and street == "flop":
            extra = 1
        if mine and p.kind == "extra_board_card" and street in ("turn", "river"):
            extra = 1
        if street in self.aside_for:
            # C40: the street was dealt face down aside; it is turned up now, no burn.
            t.to_board(self.aside_for.pop(street))
            self.follow()
            return
        burns = 1 if self.burn_due[street] else 0
        if self.burn_due[street] is False and self._wants("burn_anyway"):
            self._wrong("burn_anyway")
            burns = 1
        if mine and p.kind == "missed_burn":
            burns = 0
        if mine and p.kind == "double_burn":
            burns = 2
        for b in range(burns):
            if mine and p.kind == "double_burn" and b == 1:
                self._mistake("double_burn", street)
            self.burn(street)
            if self.halted() or not self.may_go_on():
                return
        self.burn_due[street] = True
        if mine and p.kind == "missed_burn":
            self._mistake("missed_burn", street)
        if mine and p.kind == "four_card_flop":
            self._mistake("four_card_flop", street)
        if mine and p.kind == "extra_board_card":
            # The street's card and one more, drawn together and laid together.
            self._mistake("extra_board_card", street)
            a, b = self.draw(), self.draw()
            t.to_board(a)
            t.to_board(b)
            self.follow()
            if self.halted():
                return
        elif street == "flop" and p.spread and not mine:
            cards = [self.draw() for _ in range(target - self._board_count())]
            order = list(cards)
            self.rng.shuffle(order)
            for c in order:
                self._lay(c)
            self.follow()
            if self.halted():
                return
        elif extra:
            for _ in range(target - self._board_count() + extra):
                self._lay(self.draw())
                self.follow()
                if self.halted() or not self.may_go_on():
                    return
        guard = 0
        while self._board_count() < target and guard < 8 and self.may_go_on():
            guard += 1
            self._lay(self.draw())
            self.follow()
            if self.halted():
                return
        if mine and p.kind == "sixth_card" and street == "river":
            # One more street than there is: a burn and a card after the river.
            self._mistake("sixth_card", street)
            self.burn(street)
            card = self.draw()
            t.to_board(card)
            self.follow()

    def _lay(self, card: Card) -> None:
        """Lay a card drawn for the board; a joker is seen as it is turned up, and half the time never laid."""
        if card.is_joker and self.plan.response != "ignore" and self.rng.random() < 0.5:
            self.table.to_shown(card)
        else:
            self.table.to_board(card)

    def burn(self, street: str) -> None:
        t = self.table
        for _ in range(3):
            card = self.draw()
            t.to_burns(card, street)
            self.follow()
            if self.halted() or card not in t.shown or self.plan.response == "ignore":
                return
            # A joker came out as the burn: shown and set aside; the next card is the burn.

    # ------------------------------------------------------------------ betting
    def betting(self, r: int, by_mistake: bool = False) -> None:
        """Round *r*'s betting (0: before the flop); then ROUND DONE, unless it is over already."""
        self.follow()
        if self.rounds_over > r or self.halted():
            return
        self.table.wait(self.rng.choice([1.0, 3.5, 6.0]))
        self.follow()
        if self.rounds_over > r or self.halted():
            return
        self.press("round_done")
        if by_mistake:
            return                                 # the street is dealt at once, then PREMATURE
        self.follow()
        # A correction that is the round's own (C40's skipped player acted) may lay more now.
        self.follow()

    # ------------------------------------------------------------------ the box's steps
    def follow(self) -> None:
        """Read the panel and do what its step says, until it waits for the hand to go on."""
        for _ in range(16):
            d = self.panel()
            if d.verdict in ("misdeal", "void"):
                self.log.halted = True
                return
            if d.verdict == "ok" or d.step >= len(d.steps):
                return
            step = d.steps[d.step]
            key = (d.irregularity, tuple(d.cards), tuple(s.key for s in d.steps), d.step)
            if key != self.shown_key:
                # The panel changed: a step shown again (after a wrong answer was ruled) is done anew.
                self.shown_key, self.acted = key, set()
            if key in self.acted:
                return
            self.acted.add(key)
            if self.plan.response == "ignore":
                if step.key == "missed_burn.take_off" and not self.plan.mouth:
                    # RULES.md: with no mouth sensor the burn may have gone unread; ROUND DONE says so.
                    self.log.exempt.add(self.street_now)
                return
            if step.key in self.ignored_steps:
                return
            if not self.do_step(d, step):
                return

    def _card(self, face, *places) -> Card | None:
        """The physical card of *face* among the cards in *places* (lists), or None."""
        for pile in places:
            for c in pile:
                if c.face == face:
                    return c
        return None

    def do_step(self, d, step) -> bool:
        """Do *step*; True when something was done (the panel may show the next step)."""
        t, k = self.table, step.key
        card_face = step.param("card")
        faces = step.param("cards") or ((card_face,) if card_face else ())
        if k in ACK_IS_NO_ANSWER and self._wants("other_button"):
            # ACK where the step's only answer is another button (ROUND DONE, RESHUFFLED).
            if k != "premature.finish_round":
                t.shuffle_stub()
            self._wrong("other_button")
            self.press("ack")
            return True
        if k in FOLLOW_STEPS and self._wants("reshuffled_other_step"):
            self._wrong("reshuffled_other_step")
            self.press("reshuffled")
            return True
        if k in TAKE_OFF:
            return self._take_off(d, k, faces)
        if k in ("reshuffle.now", "premature.reshuffle_with"):
            for c in list(t.aside) if k == "premature.reshuffle_with" else []:
                t.into_stub(c)
            t.shuffle_stub()
            if self._wants("reshuffled_never") or self._wants("reshuffled_late"):
                # The dealer goes on with the procedure as if the button had been pressed: the street
                # comes again from the reshuffled stub, with no burn; the ruling is due at its first card.
                way = self.plan.response
                if way == "reshuffled_late":
                    self.press_after_draw = "reshuffled"
                self.ignored_steps.add(k)
                self.burn_due[self._next_street()] = False
                return self._wrong(way, presses=2, deferred=True)
            self.press("reshuffled")
            if self._wants("reshuffled_twice"):
                self._wrong("reshuffled_twice")
                self.press("reshuffled")
            return True
        if k in ("extra.stop", "extra.return_on_top", "double_burn.return_on_top"):
            if k == "extra.stop":
                self.press("ack")
                return True
            c = self._card(card_face, *t.seats.values(), t.burns, t.board, t.shown)
            if c is not None and c not in t.stub:
                if self._wants("no_return"):
                    self._wrong("no_return", deferred=True)
                elif self._wants("return_bottom"):
                    self._wrong("return_bottom", deferred=True)
                    t._take(c)
                    t.stub.append(c)
                else:
                    t.on_top(c)
            if self.rng.random() < 0.7 or k == "extra.return_on_top":
                self.press("ack")
            return True
        if k == "exposed.replace":
            seat = self.order[(step.param("seat") or 1) - 1]
            card = self.draw()
            t.to_seat(card, seat)
            return True
        if k == "exposed.is_burn":
            c = self._card(card_face, *t.seats.values())
            if c is not None:
                t.to_burns(c, "flop")
            if self.rng.random() < 0.5:
                self.press("ack")
            return True
        if k in NO_BURN:
            self.burn_due[NO_BURN[k]] = False
            return False
        if k in ("premature.new_street_no_burn", "redeal.deal_again"):
            self.burn_due[step.param("street") or self.street_now] = False
            return False
        if k == "boxed.show_and_burn":
            c = self._card(card_face, *t.seats.values())
            if c is not None:
                t.to_shown(c)
            if self.rng.random() < 0.5:
                self.press("ack")
            return True
        if k == "joker.show_and_burn":
            c = self._card(JOKER, *t.seats.values(), t.burns)
            if c is not None:
                t.to_shown(c)
            if self.rng.random() < 0.5 or c is None:
                self.press("ack")
            return True
        if k == "skipped.ask":
            if self._wants("other_button"):
                self._wrong("other_button")
                self.press("reshuffled")
                return True
            if self.rng.random() < 0.5:
                self.press("ack")                  # the skipped player folds: the street stands
                self.rounds_over += 1              # and the round is over with the fold
            else:
                self.table.wait(2.0)
                self.press("round_done")           # acts: the round is played out
            return True
        if k == "skipped.deal_closed":
            for name in step.param("streets") or ():
                burn = self.draw()
                t.to_burns(burn, name)
                card = self.draw()
                t.to_aside(card)
                self.aside_for[name] = card
            return True
        if k == "premature.finish_round":
            return False                           # the betting goes on: ROUND DONE comes with it
        if k in ("premature.burn_stays", "four_flop.rest_is_flop", "exposed.finish_deal", "missed_burn.next_card",
                 "premature.burn_and_turn", "premature.new_street", "boxed.replace", "boxed.replace_next",
                 "joker.replace_seat", "joker.replace_next", "extra.burn_it", "double_burn.burn_it",
                 "double_burn.river_recorded"):
            # The burn stays: the reshuffle the next step asks for is not shown before this ACK.
            if k == "premature.burn_stays" or k == "four_flop.rest_is_flop" and self.rng.random() < 0.5:
                self.press("ack")
                return True
            return False                           # the hand going on does it
        if k == "extra_board.floor_decides":
            # TDA, a card too many after the turn or the river: the floor says which one plays; the
            # other leaves the board, face up, out of play.
            named = [c for f in faces for c in t.board if c.face == f]
            if named:
                t.to_shown(self.rng.choice(named))
            self.press("ack")
            return True
        if k == "four_flop.call_floor":
            self.press("ack")                      # the floor is at the table
            return True
        if k == "wrong.keep_on_board":
            c = self._card(card_face, t.burns, t.shown, t.aside, t.muck, *t.seats.values(), t.in_hand)
            if c is None:
                c = self._card(card_face, t.stub)      # shuffled in already: found and taken out by hand
            if c is not None:
                t.to_board(c)
            return True
        if k == "exposed.second_or_later":
            self.press("misdeal")                  # every read is good: it was the card the box counted
            return True
        if k == "duplicate.hole_card_again":
            twins = [c for c in t.drawn if c.face == card_face and c not in t.stub]
            self.press("misdeal" if len(twins) > 1 else "ack")
            return True
        if k == "duplicate.returned_burn":
            twins = [c for c in t.drawn if c.face == card_face]
            self.press("misdeal" if len({id(c) for c in twins}) > 1 else "ack")
            return True
        if k == "unread.street_card_there":
            street = step.param("street") or self.street_now
            if len(t.board) >= BOARD_AFTER_ROUND[STREET_ORDER.index(street) + 1]:
                self.press("ack")
                return True
            return False                           # it was still to come: the street goes on
        if k in ("wrong.put_back_and_draw", "wrong.expected_card_or_unread"):
            got = step.param("got")
            g = self._card(got, t.burns, t.shown, *t.seats.values(), t.board)
            if g is not None:
                t.on_top(g)
            want = self._card(card_face, t.stub)
            if want is not None:
                street = self.street_now if self.street_now in STREET_ORDER else "flop"
                c = t.pull(want)
                t.to_burns(c, street)
            return True
        if k == "short_deal.deal_seat":
            # The box counted the deal (a mouth sensor) and names the seat its count says is short. A
            # dealer who skipped another seat sees which one is short and gives it the card.
            named = self.order[(step.param("seat") or 1) - 1]
            short = self._short_seat()
            if short is not None and short != named:
                self.log.seat_misnamed += 1
            card = self.draw()
            t.to_seat(card, short if short is not None else named)
            return True
        if k == "short_deal.count":
            seat = self._short_seat()
            if seat is None:
                self.press("ack")
            else:
                card = self.draw()
                t.to_seat(card, seat)
            return True
        if k in FLOOR_RULES or d.verdict == "floor" or k.endswith("call_floor") or k.startswith("wrong.") \
                or k in ("late.substantial_action", "rabbit.not_allowed"):
            self.press("ack")
            if k in FLOOR_RULES and self.log.floor_owned_from is None:
                self.log.floor_owned_from = self.ev
            return True
        if k.startswith(("unread.", "reader.")) or k in ("wrong.expected_card", "exposed.second_or_later",
                                                         "duplicate.hole_card_again", "duplicate.returned_burn"):
            self.press("ack")
            return True
        self.log.unknown_steps.add(k)
        self.press("ack")
        return True

    def _next_street(self) -> str:
        """The first street the board does not hold yet (by the dealer's count)."""
        n = self._board_count()
        return "flop" if n < 3 else "turn" if n < 4 else "river"

    def _short_seat(self) -> int | None:
        for seat in self.order:
            if len(self.table.seats.get(seat, [])) < self.plan.hole:
                return seat
        return None

    def _take_off(self, d, k: str, faces) -> bool:
        t = self.table
        named = [c for f in faces for c in t.board if c.face == f] if faces else []
        if k == "joker.show_and_burn":
            named = [c for c in t.board if c.is_joker]
            if not named:
                c = self._card(JOKER, *t.seats.values(), t.burns)
                if c is not None:
                    t.to_shown(c)
                self.press("ack")
                return True
        if not named:
            self.press("ack")
            return True
        no_read_explains = k == "missed_burn.take_off" and not self.plan.mouth
        if self._wants("card_left"):
            premature = k in ("premature.cards_back", "premature.set_aside")
            self._wrong("card_left", demand=not no_read_explains, presses=2 if premature else 1)
            if no_read_explains:
                self.log.exempt.add(self.street_now)
            self.ignored_steps.add(k)
            return False
        # Under C40, ACK at a premature street's "cards back" after the skipped player acted is
        # the same button the rules take as that player's fold (RULES.md: ROUND DONE and ACK in
        # either order), so no box can tell it from a wrong answer: it is not dealt as one.
        fold_answer = self.plan.profile == "cz-c40" and k in ("premature.cards_back", "redeal.cards_back")
        if self._wants("ack_instead") and not no_read_explains and not fold_answer:
            self._wrong("ack_instead")
            self.ignored_steps.add(k)
            self.press("ack")
            return True
        if self._wants("round_done_early"):
            self._wrong("round_done_early", demand=False)
            if no_read_explains:
                self.log.exempt.add(self.street_now)   # ROUND DONE says the burn went unread (RULES.md)
            self.press("round_done")
            return True
        if self._wants("reshuffled_early") and k in ("premature.cards_back", "redeal.cards_back"):
            self._wrong("reshuffled_early")
            self.press("reshuffled")
            return True
        if self._wants("wrong_card_off"):
            others = [c for c in t.board if c not in named]
            if others:
                self._wrong("wrong_card_off")
                named = [self.rng.choice(others)] + named[1:]
        if k == "four_flop.scramble_pick":
            if not self.wrong_done or not self.log.wrong or self.log.wrong[-1].what != "wrong_card_off":
                named = [self.rng.choice(named)]
            else:
                named = named[:2]               # two taken off where one is picked
        for c in named:
            if c not in t.board:
                continue
            if k == "missed_burn.take_off":
                t.to_burns(c, self.street_now)
            elif k == "joker.show_and_burn":
                t.to_shown(c)
            elif TAKE_OFF[k] == "stub":
                t.into_stub(c)
            elif TAKE_OFF[k] == "aside":
                t.to_aside(c)
            else:                                    # the floor's pick: the next street's burn
                t.to_burns(c, "turn")
        if k == "four_flop.scramble_pick":
            self.burn_due["turn"] = False
        if k == "joker.show_and_burn":
            d2 = self.panel()
            still = d2.step < len(d2.steps) and d2.steps[d2.step].key == k
            if still or self.rng.random() < 0.5:
                self.press("ack")              # the joker is with the burns: the step shown is done
        return True


__all__ = ["WAYS_FOR", "Act", "DEAL_KINDS", "Dealer", "DealerLog", "HandPlan", "KINDS", "OTHER_KINDS", "RESPONSES",
           "STREET_KINDS", "WRONG_WAYS"]
