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

#: The symbol each suit glyph slot stands for on a screen that has suit symbols (a terminal).
GLYPH_SYMBOL = {SUIT_GLYPH["c"]: "\u2663", SUIT_GLYPH["d"]: "\u2666", SUIT_GLYPH["h"]: "\u2665",
                SUIT_GLYPH["s"]: "\u2660"}


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


def glass_symbols(line: str) -> str:
    """An LCD line as a terminal shows it: the suit glyph slots (CGRAM 0..3) as suit symbols.

    The other custom-character slots (4..7) show as a hollow box: a terminal
    must never receive control characters.
    """
    return "".join(GLYPH_SYMBOL.get(ch, "\u25af" if ch < " " else ch) for ch in line)
