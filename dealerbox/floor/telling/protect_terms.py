"""The protection's terms that its checks and its words share: the alarm budget's basis per
check, the decimals a small expected count is told with, and the links to the hands behind an
alert; the checks' names. A module of its own with no heavy import and no Babel, so that the protection (which
reads the floor's telling) and its words on the pages (:mod:`~.protect_words`) both take them
from here, and a collector-only install (no Babel) can load it.
"""

from __future__ import annotations

import math

from dealerbox.floor.marks import N_

__all__ = ["BASIS_WORDS", "CHECK_WORDS", "MOST_HANDS", "few_digits", "story"]

#: The checks in a pit boss's words, in the order the budget lists them (the Surveillance
#: page tells them in its reader's language: marked for the catalogs).
CHECK_WORDS = {
    "shuffle": N_("shuffle (a hand dealt as if not shuffled)"),
    "procedure": N_("procedure (a dealer shuffling less than declared)"),
    "seat_luck": N_("seat luck (a seat dealt too many strong hands)"),
    "dealer_chart": N_("dealer chart (a dealer's error rate)"),
}
#: What each check's figure is worked out from, its facts as ``%(name)s`` (a row's ``facts``).
BASIS_WORDS = {
    "shuffle": N_("each scored hand: p below %(threshold)s"),
    "procedure": N_("each block of %(block)s hands: p below %(threshold)s"),
    "seat_luck": N_("each of %(seats)s seats a table reaches h once in %(arl)s of its hands "
                    "(%(per_year)s a year for the room's seats)"),
    "dealer_chart": N_("a dealer at their own baseline reaches h once in %(arl)s hands"),
}


#: A chart's or a block's hands listed on an alert: the last this many.
MOST_HANDS = 60


def story(table: str, seq) -> str:
    """The path of a hand's story page."""
    return f"/hands/{table}/{seq}"


def few_digits(x: float) -> int:
    """The decimals a small expected count *x* is told with (0 for none; :func:`dealerbox.floor.protect.budget.few`)."""
    if x <= 0:
        return 0
    if x >= 10:
        return 1
    if x >= 0.1:
        return 2
    return 1 - math.floor(math.log10(x))
