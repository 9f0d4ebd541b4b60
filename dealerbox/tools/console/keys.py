"""The sim console's key map: every key a technician presses, written once.

:data:`KEYS` is the one table of the console's keys: the key, the Textual
action it runs, the word the help line shows and, for a key that asks for
something, its prompt. The app's key bindings (:func:`bindings`) and the help
line at the bottom of the screen (:data:`HELP`) are made from it.

Most keys queue one of the dealer's actions (``submit('deal')``), which the
console's session runs on its dealer thread (see
:class:`dealerbox.tools.console.hands.DealerHands`); a key with a prompt first
asks (``ask('deal')``) and queues the action with the answer. ``n`` acts out
one kind of a real table's radio noise (hardware_sim.noise, docs/NOISE.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding

#: The unknown tag the ``i`` key offers: a UID no deck registry holds.
DEFAULT_UNKNOWN_UID = "04FFFFFFFFFF01"

#: The panel's buttons in the order of the number keys 1..9, 0 (MISDEAL is a long
#: FLOOR press when no MISDEAL button is wired; HAND OVER also gathers the board).
BUTTON_KEYS = (
    ("1", "new_hand"), ("2", "round_done"), ("3", "exposed"), ("4", "boxed"), ("5", "ack"),
    ("6", "reshuffled"), ("7", "premature"), ("8", "misdeal"), ("9", "floor"), ("0", "hand_over"),
)


@dataclass(frozen=True)
class Prompt:
    """What a key that asks for something shows, and the dealer's action the answer goes to."""

    title: str
    placeholder: str
    action: str
    #: True: the answer goes to the action as typed; False: it is a tag, checked first,
    #: and an empty answer means the action's default card.
    raw: bool = False


#: Prompts of the keys that ask for something, by name (``ask('deal')``).
PROMPTS = {
    "deal": Prompt("deal which card?", "Ah, 10h, 9c/B, joker or a UID", "deal"),
    "place": Prompt("put which card on the board?", "Enter: the last card drawn", "place"),
    "lift": Prompt("take which card off the board?", "Enter: the last card placed", "lift"),
    "unknown": Prompt("draw which unknown tag?", f"Enter: {DEFAULT_UNKNOWN_UID}", "unknown"),
    "players": Prompt("how many players?", "2..10", "players", raw=True),
    "badge": Prompt("hold whose badge to the shoe?", "a dealer id: signs in, or out when they deal already "
                    "(Enter: the first dealer with a badge)", "badge", raw=True),
    "noise": Prompt("inject which noise kind?", "burn_cross, unread_hole, linger, … (docs/NOISE.md)", "noise",
                    raw=True),
}


@dataclass(frozen=True)
class Key:
    """One key: the Textual action it runs and the word the help line shows ("" for none)."""

    key: str
    action: str
    label: str


#: The dealer's and the technician's keys, in the order of the help line.
_ACTION_KEYS: tuple[Key, ...] = (
    Key("d", "submit('deal')", "deal"),                        # a random card the box believes is in the stub
    Key("c", "ask('deal')", "deal a card…"),                   # Ah, 10h, 9c/B, joker, a UID
    Key("x", "submit('burn')", "burn"),                        # a random card out of the shoe, off the board
    Key("f", "submit('board_card')", "board card"),            # a random card drawn and laid on the board
    Key("p", "ask('place')", "place…"),                        # Enter alone: the last card drawn
    Key("o", "ask('lift')", "lift…"),                          # Enter alone: the last card placed
    Key("g", "submit('foreign')", "deck B"),                   # a card of another back
    Key("j", "submit('joker')", "joker"),                      # a joker of the active deck
    Key("i", "ask('unknown')", "unknown tag…"),                # Enter alone: DEFAULT_UNKNOWN_UID
    Key("l", "ask('players')", "players…"),                    # 2..10; steps the PLAYERS button
    Key("b", "ask('badge')", "badge…"),                        # a dealer's badge held to the shoe
    Key("u", "submit('toggle_reader', 'board')", "board reader"),   # unplug it, or plug it back
    Key("U", "submit('toggle_reader', 'shoe')", "shoe reader"),
    Key("s", "submit('scenario_step')", "scenario step"),
    Key("w", "write_record", "write record"),
    Key("n", "ask('noise')", "noise…"),
    Key("q", "quit", "quit"),                                  # the record is written
    Key("escape", "cancel_prompt", ""),
)
_BUTTON_KEYS = tuple(Key(k, f"submit('button', '{name}')", name.upper().replace("_", " ")) for k, name in BUTTON_KEYS)
#: Every key of the console.
KEYS: tuple[Key, ...] = _ACTION_KEYS + _BUTTON_KEYS

#: The help line at the bottom of the screen: the keys, then the panel's buttons.
HELP = "\n".join("  ".join(f"{k.key} {k.label}" for k in keys if k.label) for keys in (_ACTION_KEYS, _BUTTON_KEYS))


def bindings() -> list[Binding]:
    """The app's key bindings, one per key of :data:`KEYS` (none shown in a footer)."""
    return [Binding(k.key, k.action, k.label or k.action, show=False) for k in KEYS]
