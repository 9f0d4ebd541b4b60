"""The tags not read in a hand, to be checked once it is over (RULES.md, sensing faults).

Kept apart from :mod:`dealerbox.rules.sensing` because the hand's end is a button
(:func:`dealerbox.rules.buttons.end_hand`) while sensing's questions build on the buttons.
"""

from __future__ import annotations

from dealerbox.domain.decisions import Step
from dealerbox.rules.procedures import inform
from dealerbox.rules.tracker import UNREAD_PREFIX, UnreadCard


def deal_short_at_the_end(eng) -> None:
    """No mouth sensor, and the hand ends while the deal is a few cards short (SHORT_DEAL's count):
    each missing card was a tag not read, to be checked after the hand."""
    hand = eng.hand
    if hand.mouth_sensor or eng.phase != "deal" or not hand.deal_a_few_short():
        return
    for _ in range(hand.cards_owed()):
        key = hand.new_unread()
        hand.where[key] = "hand"          # out of the stub: mucked with the hand
        hand.unread.append(UnreadCard(key, Step("unread.some_hole_card")))


def after_hand(eng) -> None:
    """The hand is over: ask for the tags that were not read to be checked."""
    hand = eng.hand
    if not hand.unread:
        return
    known = tuple(r.key for r in hand.unread if not r.key.startswith(UNREAD_PREFIX))
    step = Step("unread.check_tags", (("cards", known),)) if known else Step("unread.check_deck")
    inform(eng, "UNREAD_CARD", known, step=step)
