"""The games protection checks, in a pit boss's words: a module of its own with no heavy
import, so that the words of the floor map and the terminal view can name a game without
loading the references' simulation (numpy) that :mod:`~dealerbox.floor.protect.config` needs.
"""

from __future__ import annotations

from dealerbox.floor.marks import N_

__all__ = ["GAMES_WORDS", "game_words"]

#: The games by hole cards, in a pit boss's words (marked for the catalogs: the Surveillance
#: page tells them in its reader's language).
GAMES_WORDS = {2: N_("hold'em"), 4: N_("Omaha")}


def game_words(players: int, hole_cards: int) -> str:
    """``hold'em at 7 players``: a game as the Surveillance page and the alerts name it."""
    return f"{GAMES_WORDS.get(hole_cards, f'{hole_cards} hole cards')} at {players} players"
