"""The alerts' stored texts, each one message with its facts as parameters.

The collector (:mod:`~dealerbox.floor.collecting.filing`) and the protection pass
(:mod:`~dealerbox.floor.protect.floor_pass`) write an alert's ``text`` in English from one of
these :class:`AlertText`: what machines, logs, the audit files and the rows filed before read.
A reader of another language gets the same facts told in theirs: :meth:`AlertText.read` takes
them back out of a stored text (the English is the message, its ``%(name)s`` the facts), and
the floor's words tell them through the catalogs (:mod:`dealerbox.floor.telling.floor_words`,
:mod:`dealerbox.floor.telling.protect_words`). Nothing is stored twice and no column is added:
the texts filed before these messages had the same words, so they are read the same way. A
text no message matches (sent by the table itself, or an older form) is shown as filed.

The collector's texts are the reader's English, marked for the catalogs; the protection
pass's are a technician's (``p = 3e-06``, ``CUSUM 5.10 >= h 4.80``), not translated: the
Surveillance page tells its alerts from their facts and keeps the text for the technician.

No Babel here (:mod:`~dealerbox.floor.marks`): a collector-only install writes these.
"""

from __future__ import annotations

import re

from dealerbox.floor.marks import N_

__all__ = ["AlertText", "read_text", "OFFLINE", "CLOCK", "DROPPED", "REFUSED", "STARTS_AT", "NO_CHAIN", "TAMPERED",
           "FLOOR_NEEDED", "DEALER_CALLED", "SHUFFLE", "PROCEDURE", "SEAT_LUCK", "DEALER_CHART", "REFERENCE", "COLLECTOR_TEXTS",
           "PROTECT_TEXTS"]

_FACT = re.compile(r"%\((\w+)\)s")


class AlertText:
    """An alert *kind*'s text in *english*, its facts as ``%(name)s`` (each a string once written)."""

    def __init__(self, kind: str, english: str):
        self.kind, self.english = kind, english
        parts = _FACT.split(english)
        # Literal parts as they are, each fact as few characters as the rest lets it take.
        self._pattern = re.compile("^" + "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)"
                                                 for i, part in enumerate(parts)) + "$", re.S)

    def write(self, **facts) -> str:
        """The stored text with *facts* in it."""
        return self.english % {name: str(value) for name, value in facts.items()}

    def read(self, text: str | None) -> dict | None:
        """The facts of *text* as this message wrote them; None when it is not this message."""
        m = self._pattern.match(text or "")
        return m.groupdict() if m else None

    def __repr__(self) -> str:
        return f"AlertText({self.kind!r}, {self.english!r})"


# -- the collector's (the reader's English: marked for the catalogs)

OFFLINE = AlertText("offline", N_("the table lost its connection to the floor"))
CLOCK = AlertText("clock", N_("the clock is wrong"))
DROPPED = AlertText("protocol", N_("sends faster than the floor can file: %(dropped)s of its messages dropped"))
#: ``message`` is the protocol's name of the message (``journal``, ``status``); ``what`` the
#: protocol's own reason, a technician's, told as it is.
REFUSED = AlertText("protocol", N_("%(message)s message refused: %(what)s"))
STARTS_AT = AlertText("chain", N_("the table's journal starts at seq %(seq)s: earlier lines were deleted before "
                                  "the floor received them"))
NO_CHAIN = AlertText("chain", N_("seq %(seq)s does not chain to seq %(last)s: kept aside, and the table asked to "
                                 "send it again"))
TAMPERED = AlertText("tamper", N_("seq %(seq)s was sent again with other content: kept aside"))
#: A floor call: ``what`` the irregularity's id (its name is told from the table's message
#: catalogs), or the words below when the dealer called without one.
FLOOR_NEEDED = AlertText("floor", "%(what)s: the floor is needed at the table")
DEALER_CALLED = "the dealer called the floor"

COLLECTOR_TEXTS = (OFFLINE, CLOCK, DROPPED, REFUSED, STARTS_AT, NO_CHAIN, TAMPERED)

# -- the protection pass's (a technician's figures: told from their facts, not translated)

SHUFFLE = AlertText("shuffle", "shuffle: deck %(deck)s, hand at seq %(seq)s (dealer %(dealer)s): %(pairs)s pairs "
                               "kept from the deck's last hands; p = %(p)s under the declared shuffle (%(model)s), "
                               "resolution %(resolution)s, threshold %(threshold)s")
PROCEDURE = AlertText("procedure", "procedure: dealer %(dealer)s, %(hands)s hands to seq %(seq)s: %(pairs)s pairs "
                                   "kept in all; p = %(p)s under the declared shuffle (%(model)s): shuffling weaker "
                                   "than declared; threshold %(threshold)s")
SEAT_LUCK = AlertText("seat_luck", "seat luck: %(seat)s: %(strong)s strong starting hands in %(hands)s hands since "
                                   "its chart last stood at 0 (expected %(expected)s); CUSUM %(value)s >= h %(h)s "
                                   "(tuned for a seat fed one once in %(feed)s hands; in-control ARL %(arl)s "
                                   "seat-hands); strong hands at seq %(seqs)s")
DEALER_CHART = AlertText("dealer_chart", "dealer chart: dealer %(dealer)s out of control at the hand of seq %(seq)s: "
                                         "CUSUM %(value)s >= h %(h)s (k %(k)s; the dealer's baseline %(p0)s, tuned "
                                         "for %(shift)sx; in-control ARL %(arl)s hands)")
#: ``why`` and ``next`` are the pass's own words (:meth:`Protection._reference_alert`).
REFERENCE = AlertText("protect_reference", "reference: hands of %(game)s are not checked for a shuffle: "
                                           "%(why)s; %(next)s")

PROTECT_TEXTS = (SHUFFLE, PROCEDURE, SEAT_LUCK, DEALER_CHART, REFERENCE)

_BY_KIND: dict[str, tuple[AlertText, ...]] = {}
for _text in (*COLLECTOR_TEXTS, FLOOR_NEEDED, *PROTECT_TEXTS):
    _BY_KIND[_text.kind] = _BY_KIND.get(_text.kind, ()) + (_text,)


def read_text(kind: str, text: str | None) -> tuple[AlertText | None, dict | None]:
    """Which of *kind*'s messages *text* is, and its facts; ``(None, None)`` for none of them."""
    for message in _BY_KIND.get(kind, ()):
        facts = message.read(text)
        if facts is not None:
            return message, facts
    return None, None
