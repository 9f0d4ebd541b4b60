"""The names of the figures a commissioning run records, and the free texts of their bounds.

The box's commissioning steps (``dealerbox/tools/commission_*.py``) name every figure they
record with one of these, and the floor reads a record's names through the same ones (its
catalog has each in the reader's language), so the box and the floor never name a figure two
ways. A name that carries a fact (the button's cap, the LED's colour, the zone) is a template:
``BOUNCE.format(button="ROUND DONE")`` is ``"ROUND DONE bounce"``, and :func:`facts_of` gives
the facts back from a name the floor received. A record from a newer box may hold a name not
here: the floor shows that one as the box wrote it.
"""

from __future__ import annotations

import functools
import re

__all__ = ["facts_of", "FIGURE_NAMES", "FREE_BOUNDS", "UNITS",
           "ANSWERS_ON_I2C", "PAGE_SHOWN", "LAST_PAGE_SHOWN", "UNMAPPED_CHARACTERS", "SLOWEST_FRAME",
           "BACKLIGHT", "I2C_ERRORS", "GPIO_OPEN", "LED_ALONE", "RED_BLINKS", "BUZZER_BEEPS", "ON_ITS_PIN",
           "BOUNCE", "PRESSES_COUNTED", "FLOOR_HELD", "FLOOR_MISDEAL", "READER_ANSWERS", "SENSOR_OPENS",
           "BEAM_CLEAR", "CARDS_COUNTED", "TAGS_MEANWHILE", "CHATTER", "CARDS_READ", "MISSED_READS",
           "REREAD_AFTER", "REREAD_WITHIN", "READ_SHARE", "FIRST_READ", "WEAK_TAGS", "FOREIGN_TAGS", "CARDS_ON",
           "FIRST_READ_TO_ON", "CARDS_ON_LATE", "LYING_READ", "LONGEST_MISS", "CARDS_LOST", "CARDS_OFF",
           "SLID_READ", "SLID_COUNTED", "ZONE_ON", "ZONE_OFF", "CLOCK_SYNCED", "FLOOR_OFFSET", "FREE_SPACE",
           "FSYNC", "FLOOR_MEASURES", "NEEDS_MOUTH", "SHORT_PASSES", "SENSOR_MISCOUNTED", "YES_BOUND"]

# -- the LCD
ANSWERS_ON_I2C = "answers on I2C"
PAGE_SHOWN = "page {page} shown right"
LAST_PAGE_SHOWN = "page {page} shown right (lines, columns)"
UNMAPPED_CHARACTERS = "characters not in the LCD's ROM"
SLOWEST_FRAME = "slowest full frame"
BACKLIGHT = "backlight switches off and on"
I2C_ERRORS = "I2C errors"
# -- the LEDs, the buzzer and the buttons
GPIO_OPEN = "GPIO pins open"
LED_ALONE = "{colour} LED alone"
RED_BLINKS = "red LED blinks (floor)"
BUZZER_BEEPS = "buzzer beeps"
ON_ITS_PIN = "{button} on its pin"
BOUNCE = "{button} bounce"
PRESSES_COUNTED = "{button} presses counted"
FLOOR_HELD = "FLOOR held"
FLOOR_MISDEAL = "long FLOOR press sent MISDEAL"
# -- the readers
READER_ANSWERS = "reader answers"
SENSOR_OPENS = "sensor opens"
BEAM_CLEAR = "beam clear with the slot empty"
CARDS_COUNTED = "cards counted"
TAGS_MEANWHILE = "tags the shoe read meanwhile"
CHATTER = "beam breaks ignored as chatter"
CARDS_READ = "cards read"
MISSED_READS = "missed reads"
REREAD_AFTER = "re-read after the rearm window"
REREAD_WITHIN = "re-read within it (weak)"
READ_SHARE = "share of its pass's polls reading a card (worst)"
FIRST_READ = "time to first read (slowest)"
WEAK_TAGS = "weak tags (read late or twice)"
FOREIGN_TAGS = "tags not of the deck"
CARDS_ON = "cards on"
FIRST_READ_TO_ON = "first read to on (slowest)"
CARDS_ON_LATE = "cards on later than {polls} polls after settle_s"
LYING_READ = "polls reading a lying card (worst)"
LONGEST_MISS = "longest run of polls missing a lying card"
CARDS_LOST = "cards lost while lying"
CARDS_OFF = "cards off once taken away"
SLID_READ = "polls that read the slid card"
SLID_COUNTED = "slid card counted on the board"
ZONE_ON = "{zone}: card on"
ZONE_OFF = "{zone}: card off once taken away"
# -- the box itself
CLOCK_SYNCED = "clock synchronised (kernel NTP state)"
FLOOR_OFFSET = "offset from the floor"
FREE_SPACE = "free space"
FSYNC = "one fsync of 4 KiB"

#: Every figure name a run may record (templates among them).
FIGURE_NAMES = (ANSWERS_ON_I2C, PAGE_SHOWN, LAST_PAGE_SHOWN, UNMAPPED_CHARACTERS, SLOWEST_FRAME, BACKLIGHT,
                I2C_ERRORS, GPIO_OPEN, LED_ALONE, RED_BLINKS, BUZZER_BEEPS, ON_ITS_PIN, BOUNCE, PRESSES_COUNTED,
                FLOOR_HELD, FLOOR_MISDEAL, READER_ANSWERS, SENSOR_OPENS, BEAM_CLEAR, CARDS_COUNTED,
                TAGS_MEANWHILE, CHATTER, CARDS_READ, MISSED_READS, REREAD_AFTER, REREAD_WITHIN, READ_SHARE,
                FIRST_READ, WEAK_TAGS, FOREIGN_TAGS, CARDS_ON, FIRST_READ_TO_ON, CARDS_ON_LATE, LYING_READ,
                LONGEST_MISS, CARDS_LOST, CARDS_OFF, SLID_READ, SLID_COUNTED, ZONE_ON, ZONE_OFF, CLOCK_SYNCED,
                FLOOR_OFFSET, FREE_SPACE, FSYNC)

# -- a bound that is no number: why the run could not judge the figure
FLOOR_MEASURES = "the floor measures it"
NEEDS_MOUTH = "needs a mouth sensor"
SHORT_PASSES = "passes under {polls} polls"
SENSOR_MISCOUNTED = "the sensor counted {counted} of {cards}"
#: The bound of what the technician confirmed (``Figure.confirmed``).
YES_BOUND = "= 1 (yes)"
FREE_BOUNDS = (FLOOR_MEASURES, NEEDS_MOUTH, SHORT_PASSES, SENSOR_MISCOUNTED, YES_BOUND)

#: The units a run writes; the words among them (``cards``) a reader reads in their language.
UNITS = ("ms", "s", "%", "MB", "cards", "tags", "polls")

_FIELD = re.compile(r"\{([a-z_]+)\}")


@functools.cache
def _pattern(template: str) -> re.Pattern:
    parts, at = [], 0
    for m in _FIELD.finditer(template):
        parts.append(re.escape(template[at:m.start()]))
        parts.append(f"(?P<{m.group(1)}>.+?)")
        at = m.end()
    parts.append(re.escape(template[at:]))
    return re.compile("".join(parts))


def facts_of(template: str, text: str) -> dict[str, str] | None:
    """The facts *text* fills *template* with (``{"button": "ROUND DONE"}`` for :data:`BOUNCE`
    and ``"ROUND DONE bounce"``; ``{}`` for a name without facts that *text* is), or None when
    *text* is not of *template*."""
    m = _pattern(template).fullmatch(text)
    return None if m is None else m.groupdict()
