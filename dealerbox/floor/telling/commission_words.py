"""A commissioning record's own words (its figures' names, bounds and units) in the reader's language.

The box names every figure from the shared vocabulary (:mod:`dealerbox.domain.commission_figures`);
this is the floor's table of those names, each marked for the catalogs, and how a record's bound
(``<= 25 ms``, ``needs a mouth sensor``) and unit (``cards``) read in the reader's forms
(``≤ 25 ms``, ``= 54 karet``). What a newer box sends that is not here is shown as the box
wrote it: :class:`Said` carries the text with whether it was translated, so the page can mark
the rest as English (``lang="en"``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from dealerbox.domain import commission_advice as A
from dealerbox.domain import commission_figures as F
from dealerbox.floor.telling.catalogs import N_
from dealerbox.floor.telling.language import Language

__all__ = ["Said", "FIGURE_WORDS", "LED_WORDS", "BOUND_WORDS", "ADVICE_WORDS", "figure_name", "figure_bound",
           "counted", "advice_text"]


class Said(NamedTuple):
    """A text of the record as the reader reads it; ``translated`` False: the box's English as written."""

    text: str
    translated: bool


#: The figures' names as the floor words them (facts as ``%(name)s``).
FIGURE_WORDS = {
    F.ANSWERS_ON_I2C: N_("answers on I2C"), F.PAGE_SHOWN: N_("page %(page)s shown right"),
    F.LAST_PAGE_SHOWN: N_("page %(page)s shown right (lines, columns)"),
    F.UNMAPPED_CHARACTERS: N_("characters not in the LCD's ROM"), F.SLOWEST_FRAME: N_("slowest full frame"),
    F.BACKLIGHT: N_("backlight switches off and on"), F.I2C_ERRORS: N_("I2C errors"),
    F.GPIO_OPEN: N_("GPIO pins open"), F.RED_BLINKS: N_("red LED blinks (floor)"),
    F.BUZZER_BEEPS: N_("buzzer beeps"), F.ON_ITS_PIN: N_("%(button)s on its pin"),
    F.BOUNCE: N_("%(button)s bounce"), F.PRESSES_COUNTED: N_("%(button)s presses counted"),
    F.FLOOR_HELD: N_("FLOOR held"), F.FLOOR_MISDEAL: N_("long FLOOR press sent MISDEAL"),
    F.READER_ANSWERS: N_("reader answers"), F.SENSOR_OPENS: N_("sensor opens"),
    F.BEAM_CLEAR: N_("beam clear with the slot empty"), F.CARDS_COUNTED: N_("cards counted"),
    F.TAGS_MEANWHILE: N_("tags the shoe read meanwhile"), F.CHATTER: N_("beam breaks ignored as chatter"),
    F.CARDS_READ: N_("cards read"), F.MISSED_READS: N_("missed reads"),
    F.REREAD_AFTER: N_("re-read after the rearm window"), F.REREAD_WITHIN: N_("re-read within it (weak)"),
    F.READ_SHARE: N_("share of its pass's polls reading a card (worst)"),
    F.FIRST_READ: N_("time to first read (slowest)"), F.WEAK_TAGS: N_("weak tags (read late or twice)"),
    F.FOREIGN_TAGS: N_("tags not of the deck"), F.CARDS_ON: N_("cards on"),
    F.FIRST_READ_TO_ON: N_("first read to on (slowest)"),
    F.CARDS_ON_LATE: N_("cards on later than %(polls)s polls after settle_s"),
    F.LYING_READ: N_("polls reading a lying card (worst)"),
    F.LONGEST_MISS: N_("longest run of polls missing a lying card"), F.CARDS_LOST: N_("cards lost while lying"),
    F.CARDS_OFF: N_("cards off once taken away"), F.SLID_READ: N_("polls that read the slid card"),
    F.SLID_COUNTED: N_("slid card counted on the board"), F.ZONE_ON: N_("%(zone)s: card on"),
    F.ZONE_OFF: N_("%(zone)s: card off once taken away"),
    F.CLOCK_SYNCED: N_("clock synchronised (kernel NTP state)"), F.FLOOR_OFFSET: N_("offset from the floor"),
    F.FREE_SPACE: N_("free space"), F.FSYNC: N_("one fsync of 4 KiB"),
}
#: ``{colour} LED alone`` for the panel's colours: a colour is a word of the reader's, agreeing with "LED".
LED_WORDS = {"green": N_("green LED alone"), "amber": N_("amber LED alone"), "red": N_("red LED alone")}
#: The bounds that are no number (facts as ``%(name)s``).
BOUND_WORDS = {F.FLOOR_MEASURES: N_("the floor measures it"), F.NEEDS_MOUTH: N_("needs a mouth sensor"),
               F.SHORT_PASSES: N_("passes under %(polls)s polls"),
               F.SENSOR_MISCOUNTED: N_("the sensor counted %(counted)s of %(cards)s")}
#: The box's advice that carries no wiring of its own (:mod:`dealerbox.domain.commission_advice`).
ADVICE_WORDS = {
    A.NO_BUTTONS: N_("the config wires no buttons ([panel.buttons])"),
    A.NO_MOUTH_SENSOR: N_("the config has no mouth sensor ([mouth_sensor] is optional: "
                          "firmware_config/tables/README.md)"),
    A.NO_DECK: N_("no deck registry with an active deck: register one first (dealerbox deck register)"),
    A.NO_ZONE_READER: N_("the config has no reader for the %(zone)s zone"),
    A.BACKLIGHT_JUMPER: N_("the backlight does not follow: the backpack's backlight jumper must be fitted"),
    A.BOARD_READS_TAKEN: N_("the board antenna still reads cards taken away: a card left on it, or a tag under "
                            "the felt"),
    A.SLID_NEVER_READ: N_("the slid card was never read: slide it again, across the antenna's middle"),
    A.CLOCK_NOT_SYNCED: N_("the clock is not synchronised: check systemd-timesyncd (timedatectl status), the "
                           "network, and the NTP server (/etc/systemd/timesyncd.conf)"),
    A.CLOCK_UNKNOWN: N_("the kernel does not say whether the clock is synchronised: check systemd-timesyncd "
                        "(timedatectl status), the network, and the NTP server (/etc/systemd/timesyncd.conf)"),
    A.SLOW_FSYNC: N_("an fsync takes %(ms)s ms: a slow or worn SD card (use an A1/A2 card)"),
    A.WEAK_TAGS: N_("weak tags (read late or twice): %(cards)s: replace them"),
    A.NOT_READ: N_("not read at all: %(cards)s (a dead or missing tag: replace it)"),
    A.READ_AGAIN: N_("read again after %(seconds)s s: %(cards)s (the box would call it a duplicate card: a "
                     "reflection near the mouth, or the card stays in the field)"),
    A.SETTLE_TOO_SHORT: N_("a card passing over the board counted as laid: settle_s (%(seconds)s s) is too short "
                           "for this table, or the card stopped"),
}
_NUMBER_BOUND = re.compile(r"(?P<sign><=|>=|=) (?P<number>-?[0-9]+(?:\.[0-9]+)?)(?: (?P<unit>\S+))?")
_SIGNS = {"<=": "≤", ">=": "≥", "=": "="}
_DIGITS = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]+\.(?P<decimals>[0-9]+)")


def _fact(language: Language, value: str) -> str:
    """A fact of a name, bound or advice: a number in the reader's form (as many decimals as the
    box wrote), anything else (a button's cap, a zone, cards) as the box said it."""
    if _DIGITS.fullmatch(value):
        return language.forms.integer(int(value))
    decimal = _DECIMAL.fullmatch(value)
    return language.forms.decimal(float(value), len(decimal["decimals"])) if decimal else value


def _words(language: Language, table: dict, text: str) -> Said:
    for template, words in table.items():
        facts = F.facts_of(template, text)
        if facts is not None:
            return Said(language.gettext(words) % {k: _fact(language, v) for k, v in facts.items()}, True)
    return Said(text, False)


def figure_name(language: Language, name: str) -> Said:
    """*name* (a record's figure name) in *language*; one the floor does not know, as the box wrote it."""
    colour = F.facts_of(F.LED_ALONE, name)
    if colour is not None:
        words = LED_WORDS.get(colour["colour"])
        return Said(language.gettext(words), True) if words else Said(name, False)
    return _words(language, FIGURE_WORDS, name)


def counted(language: Language, number: float, unit: str, text: str) -> Said | None:
    """*text* (*number* in the reader's form) with *unit*, when the unit is a word the floor
    knows (``cards``, ``tags``, ``polls``: the plural the number takes); else None."""
    n = int(number) if float(number).is_integer() else 2
    values = {"n": text}
    if unit == "cards":
        return Said(language.ngettext("%(n)s card", "%(n)s cards", n) % values, True)
    if unit == "tags":
        return Said(language.ngettext("%(n)s tag", "%(n)s tags", n) % values, True)
    if unit == "polls":
        return Said(language.ngettext("%(n)s poll", "%(n)s polls", n) % values, True)
    return None


def _number(language: Language, text: str) -> tuple[float, str]:
    value = float(text)
    return value, (language.forms.integer(int(value)) if value.is_integer() else language.forms.decimal(value, 1))


def figure_bound(language: Language, bound: str) -> Said:
    """*bound* in *language*: ``<= 25 ms`` as ``≤ 25 ms`` with the number in the reader's form
    and a unit that is a word translated, ``= 1 (yes)`` with the reader's yes, a known free
    text translated; anything else as the box wrote it."""
    if bound == F.YES_BOUND:
        yes = language.gettext("yes")
        return Said(f"= {language.forms.integer(1)} ({yes})", True)
    m = _NUMBER_BOUND.fullmatch(bound)
    if m is None:
        return _words(language, BOUND_WORDS, bound)
    value, text = _number(language, m["number"])
    unit = m["unit"] or ""
    if unit and unit not in F.UNITS:
        return Said(bound, False)
    words = counted(language, value, unit, text) if unit else None
    shown = words.text if words is not None else f"{text} {unit}".rstrip()
    # A no-break space after the sign: "≤ 25 ms" never breaks before its number.
    return Said(f"{_SIGNS[m['sign']]}\u00a0{shown}", True)


def _sentences(text: str) -> list[tuple[str, dict]] | None:
    """*text* as the run joined its advice (sentences of :data:`ADVICE_WORDS`, one space between),
    each with its facts; None when some part is not one of them."""
    if not text:
        return []
    for template in ADVICE_WORDS:
        # Each sentence begins with its own words (none with a fact): only those are tried.
        if not text.startswith(template.split("{", 1)[0]):
            continue
        for end in _ends(text):
            facts = F.facts_of(template, text[:end])
            if facts is not None:
                rest = _sentences(text[end + 1:]) if end < len(text) else []
                if rest is not None:
                    return [(template, facts), *rest]
    return None


def _ends(text: str):
    """Where a sentence of joined advice may end: before a space, or at the end."""
    yield from (i for i, c in enumerate(text) if c == " ")
    yield len(text)


def advice_text(language: Language, advice: str) -> Said:
    """A device's advice in *language* when each of its sentences is one the floor knows (the box
    joins a device's sentences with a space); else all of it as the box wrote it: the wiring it
    names is the technician's terminal's words, and half a translation would mislead."""
    sentences = _sentences(advice)
    if not sentences:
        return Said(advice, False)
    return Said(" ".join(language.gettext(ADVICE_WORDS[template]) % {k: _fact(language, v) for k, v in facts.items()}
                         for template, facts in sentences), True)
