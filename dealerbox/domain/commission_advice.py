"""The advice a commissioning run gives that the floor can read in its readers' language.

Most of a run's advice names the table's own wiring (pins, buses, the config's readers) in the
words the technician's terminal printed, and stays the box's English on the floor. These are the
sentences that carry only facts any reader reads as they are (a zone's name, cards, a number):
the box's steps (``dealerbox/tools/commission_*.py``) word their advice with them, and the floor
translates a device's advice when each of its sentences is one of them
(:func:`~dealerbox.domain.commission_figures.facts_of` gives a template's facts back).
"""

from __future__ import annotations

__all__ = ["ADVICE", "NO_BUTTONS", "NO_MOUTH_SENSOR", "NO_DECK", "NO_ZONE_READER", "BACKLIGHT_JUMPER",
           "BOARD_READS_TAKEN", "SLID_NEVER_READ", "CLOCK_NOT_SYNCED", "CLOCK_UNKNOWN", "SLOW_FSYNC", "WEAK_TAGS",
           "NOT_READ", "READ_AGAIN", "SETTLE_TOO_SHORT"]

# -- why a device was not checked
NO_BUTTONS = "the config wires no buttons ([panel.buttons])"
NO_MOUTH_SENSOR = "the config has no mouth sensor ([mouth_sensor] is optional: firmware_config/tables/README.md)"
NO_DECK = "no deck registry with an active deck: register one first (dealerbox deck register)"
NO_ZONE_READER = "the config has no reader for the {zone} zone"
# -- what to check
BACKLIGHT_JUMPER = "the backlight does not follow: the backpack's backlight jumper must be fitted"
BOARD_READS_TAKEN = "the board antenna still reads cards taken away: a card left on it, or a tag under the felt"
SLID_NEVER_READ = "the slid card was never read: slide it again, across the antenna's middle"
_TIMESYNC = ("check systemd-timesyncd (timedatectl status), the network, and the NTP server "
             "(/etc/systemd/timesyncd.conf)")
CLOCK_NOT_SYNCED = "the clock is not synchronised: " + _TIMESYNC
CLOCK_UNKNOWN = "the kernel does not say whether the clock is synchronised: " + _TIMESYNC
SLOW_FSYNC = "an fsync takes {ms} ms: a slow or worn SD card (use an A1/A2 card)"
WEAK_TAGS = "weak tags (read late or twice): {cards}: replace them"
NOT_READ = "not read at all: {cards} (a dead or missing tag: replace it)"
READ_AGAIN = ("read again after {seconds} s: {cards} (the box would call it a duplicate card: a reflection near "
              "the mouth, or the card stays in the field)")
SETTLE_TOO_SHORT = ("a card passing over the board counted as laid: settle_s ({seconds} s) is too short for this "
                    "table, or the card stopped")

#: Every sentence of advice the floor may translate.
ADVICE = (NO_BUTTONS, NO_MOUTH_SENSOR, NO_DECK, NO_ZONE_READER, BACKLIGHT_JUMPER, BOARD_READS_TAKEN,
          SLID_NEVER_READ, CLOCK_NOT_SYNCED, CLOCK_UNKNOWN, SLOW_FSYNC, WEAK_TAGS, NOT_READ, READ_AGAIN,
          SETTLE_TOO_SHORT)
