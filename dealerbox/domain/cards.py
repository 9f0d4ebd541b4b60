"""Card codes as CONTRACT.md spells them, and their LCD form.

A card is a two-character code, rank then suit (``Ah``, ``Td``, ``2c``), or the
word ``joker``. Unknown tags are written ``uid:<hex>``.
"""

from __future__ import annotations

from dealerbox.errors import EventError

RANKS = "23456789TJQKA"
SUITS = "cdhs"
JOKER = "joker"
DECK_52 = tuple(r + s for s in SUITS for r in RANKS)
_VALID = frozenset(DECK_52) | {JOKER}

#: HD44780 CGRAM slots holding the suit glyphs. The LCD driver programs these
#: slots; the panel model writes these characters. ASCII has no suit symbols.
SUIT_GLYPH = {"c": "\x00", "d": "\x01", "h": "\x02", "s": "\x03"}


def is_card(code: str) -> bool:
    """True for a valid card code (``Ah``) or ``joker``."""
    return isinstance(code, str) and code in _VALID


def check_card(code) -> str:
    """Return *code* when it is a valid card code, else raise :class:`EventError`."""
    if not isinstance(code, str) or code not in _VALID:
        raise EventError(f"card {code!r} is not a card code (rank of {RANKS} + suit of {SUITS}, or joker)")
    return code


def lcd_card(code: str) -> str:
    """The card as the LCD shows it: rank plus suit glyph (``A`` + heart glyph)."""
    if len(code) == 2 and code in _VALID:
        return code[0] + SUIT_GLYPH[code[1]]
    if code == JOKER:
        return "JKR"
    if code.startswith("uid:"):
        return "?" + code[4:10]
    return code
