"""The sim console's dealer: what the technician's keys do at the simulated table.

:class:`DealerHands` acts on the chip emulators of a
:class:`hardware_sim.table.SimulatedTable` as a dealer's hands would: a card
crosses the shoe reader's field, is laid on or lifted off the board antenna, a
panel button is pressed, a dealer's badge is held to the shoe, a reader's cable is pulled. It never feeds the engine;
the daemon reads what the hands did through the real drivers.

:class:`TagChoice` and :func:`parse_tag` turn what the technician types at a
prompt (``Ah``, ``10h``, ``9c/B``, ``joker``, a UID) into the tag to act on.
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass
from typing import Callable

from hardware_sim.noise import TableNoise

from dealerbox.errors import EventError, RegistryError
from dealerbox.domain.cards import DECK_52, JOKER, RANKS, SUITS
from dealerbox.domain.decks import normalize_uid
from dealerbox.tools.console.keys import DEFAULT_UNKNOWN_UID

#: A card the console drew is not offered again for this long, even if the
#: engine has not taken its shoe event yet (the readers and the engine run on
#: their own threads).
_RECENT_S = 2.0


@dataclass(frozen=True)
class TagChoice:
    """A tag the technician named: a card (of a deck) or a bare UID."""

    label: str
    card: str | None = None
    deck: str | None = None
    uid: str | None = None

    def kwargs(self) -> dict:
        """Keyword arguments of :meth:`SimulatedTable.draw`, ``place`` and ``lift``."""
        return {"card": self.card, "deck": self.deck, "uid": self.uid}


def parse_tag(text: str) -> TagChoice:
    """``Ah``, ``ah``, ``10h``, ``9c/B`` (a card of deck B), ``joker``, ``uid:04..`` or a bare hex UID.

    Raises :class:`EventError` with a message for the technician.
    """
    raw = text.strip()
    if not raw:
        raise EventError("no card given")
    body, _, deck = raw.partition("/")
    deck = deck.strip() or None
    body = body.strip()
    if deck is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", deck):
        raise EventError(f"{deck!r} is not a deck name")
    if body.lower() == JOKER:
        return TagChoice(JOKER + (f"/{deck}" if deck else ""), card=JOKER, deck=deck)
    code = body
    if len(code) == 3 and code[:2] == "10":
        code = "T" + code[2]
    if len(code) == 2:
        code = code[0].upper() + code[1].lower()
        if code[0] in RANKS and code[1] in SUITS:
            return TagChoice(code + (f"/{deck}" if deck else ""), card=code, deck=deck)
    if deck is None:
        hexa = body[4:] if body.lower().startswith("uid:") else body
        try:
            uid = normalize_uid(hexa)
        except RegistryError:
            pass
        else:
            return TagChoice(f"uid:{uid}", uid=uid)
    raise EventError(f"{raw!r} is not a card (Ah, 10h, 9c/B, joker) or a tag UID (04A1B2C3D4E5F6)")


class DealerHands:
    """The dealer's actions at a simulated table, and what the hands remember.

    Owns the memory of the hands: the last card drawn and placed, the cards
    lying on the board antenna (:attr:`on_felt`), the readers unplugged, and when
    each tag last left the shoe's field (:attr:`left_shoe`), so the same tag
    crosses the shoe again only once the reader has forgotten it.

    :param config: the session's table config (``presence``, ``panel``, ``registry``).
    :param rng: chooses the random cards of ``deal``, ``burn``, ``board card``, ``deck B``.
    :param note: tells the technician what was done (one line).
    :param where: a copy of where the engine believes each card is.

    :attr:`table` is set by the session once the simulated table is open.
    :attr:`actions` maps each action name a key submits to its method; they run
    on the session's dealer thread and sleep while a tag crosses a field or a
    button is held.
    """

    def __init__(self, config, *, rng: random.Random, note: Callable[[str], None],
                 where: Callable[[], dict]):
        self.config = config
        self.rng = rng
        self.note = note
        self.where = where
        self.table = None
        self.unplugged: set[str] = set()
        self.last_drawn: TagChoice | None = None
        self.last_placed: TagChoice | None = None
        self.on_felt: dict[str, str] = {}           # UID -> label, lying on the board antenna
        self.left_shoe: dict[str, float] = {}       # UID -> when it last left the shoe's field
        self._recent: dict[str, float] = {}
        self.actions = {name: getattr(self, "do_" + name) for name in (
            "deal", "burn", "board_card", "place", "lift", "foreign", "joker", "unknown", "button",
            "players", "toggle_reader", "noise", "badge")}

    # -- the shoe ---------------------------------------------------------------------------
    def wait_for_rearm(self, uid: str) -> None:
        """Let the shoe reader forget *uid* before it crosses the field again.

        The presence tracker counts a tag seen again within ``shoe_rearm_s`` as
        the same draw; a card drawn twice (a duplicate, a returned card) must
        leave that much room or the box sees one draw.
        """
        gap = self.config.presence.shoe_rearm_s + 0.15
        last = self.left_shoe.get(uid)
        if last is not None:
            wait = gap - (time.monotonic() - last)
            if wait > 0:
                time.sleep(min(wait, 5.0))

    def cross_shoe(self, uid: str, cross: Callable[[], None]) -> None:
        """Run *cross* (a tag crossing the shoe's field) once the reader has forgotten *uid*."""
        self.wait_for_rearm(uid)
        cross()
        self.left_shoe[uid] = time.monotonic()

    def uid(self, tag: TagChoice) -> str:
        """The UID of *tag* at this table."""
        return tag.uid or normalize_uid(self.table.uid_of(tag.card, tag.deck))

    def random_stub_card(self) -> str | None:
        """A card of the active deck the engine believes is still in the stub."""
        now = time.monotonic()
        where = self.where()
        stub = [c for c in DECK_52 if where.get(c) == "stub" and now - self._recent.get(c, -1e9) > _RECENT_S]
        return self.rng.choice(stub) if stub else None

    def remember(self, ev: str, tag: TagChoice) -> None:
        """Keep the hands' memory in step with a card event the table acted out (a scenario's)."""
        if ev == "shoe":
            self.last_drawn = tag
        elif ev == "board_on":
            self.on_felt[self.uid(tag)] = tag.label
            self.last_placed = tag
        elif ev == "board_off":
            self.on_felt.pop(self.uid(tag), None)

    def _draw(self, tag: TagChoice) -> None:
        self.cross_shoe(self.uid(tag), lambda: self.table.draw(**tag.kwargs()))
        self.last_drawn = tag
        if tag.card is not None and tag.deck is None:
            self._recent[tag.card] = time.monotonic()

    def _stub_card(self, what: str) -> TagChoice | None:
        card = self.random_stub_card()
        if card is None:
            self.note(f"{what}: the stub is empty (as far as the box knows)")
            return None
        return TagChoice(card, card=card)

    # -- the actions ------------------------------------------------------------------------
    def do_deal(self, text: str | None = None) -> None:
        """A card leaves the shoe: the one named, else a random card of the stub."""
        tag = parse_tag(text) if text else self._stub_card("deal")
        if tag is not None:
            self._draw(tag)
            self.note(f"drew {tag.label}")

    def do_burn(self) -> None:
        """A burn: a card out of the shoe that stays off the board."""
        tag = self._stub_card("burn")
        if tag is not None:
            self._draw(tag)
            self.note(f"burned {tag.card}")

    def do_board_card(self) -> None:
        """A board card: drawn from the stub and laid on the board."""
        tag = self._stub_card("board card")
        if tag is not None:
            self._draw(tag)
            self._place(tag)
            self.note(f"drew {tag.card} onto the board")

    def _place(self, tag: TagChoice) -> None:
        self.table.place(zone="board", **tag.kwargs())
        self.on_felt[self.uid(tag)] = tag.label
        self.last_placed = tag

    def do_place(self, text: str | None = None) -> None:
        """Put a card on the board: the one named, else the last card drawn."""
        tag = parse_tag(text) if text else self.last_drawn
        if tag is None:
            self.note("place: no card drawn yet; name one")
            return
        self._place(tag)
        self.note(f"put {tag.label} on the board")

    def do_lift(self, text: str | None = None) -> None:
        """Take a card off the board: the one named, else the last card placed."""
        tag = parse_tag(text) if text else self.last_placed
        if tag is None:
            self.note("lift: nothing on the board; name a card")
            return
        self.table.lift(zone="board", **tag.kwargs())
        self.on_felt.pop(self.uid(tag), None)
        if self.last_placed == tag:
            self.last_placed = next(iter(self._felt_tags()), None)
        self.note(f"took {tag.label} off the board")

    def _felt_tags(self):
        for label in reversed(list(self.on_felt.values())):
            try:
                yield parse_tag(label)
            except EventError:
                continue

    def do_foreign(self, text: str | None = None) -> None:
        """A card of another deck (B unless the registry lacks it)."""
        registry = self.config.registry
        decks = [d for d in (registry.decks if registry else ["B"]) if d != (registry.active if registry else "A")]
        if not decks:
            self.note("deck B: the registry holds no other deck")
            return
        card = self.rng.choice(DECK_52)
        tag = parse_tag(text) if text else TagChoice(f"{card}/{decks[0]}", card=card, deck=decks[0])
        self._draw(tag)
        self.note(f"drew {tag.label} (another deck)")

    def do_joker(self) -> None:
        """A joker of the active deck: one the engine believes is still in the stub."""
        registry = self.config.registry
        uids = registry.uids_of(registry.active, JOKER) if registry else []
        where = self.where()
        uid = next((u for u in uids if where.get(f"joker:{u}") == "stub"), uids[0] if uids else None)
        tag = TagChoice(JOKER, uid=uid) if uid else TagChoice(JOKER, card=JOKER)
        self._draw(tag)
        self.note("drew a joker")

    def do_unknown(self, text: str | None = None) -> None:
        """A tag no deck holds."""
        tag = parse_tag(text or DEFAULT_UNKNOWN_UID)
        if tag.uid is None:
            self.note(f"unknown tag: {text!r} is a card; give a tag UID (04FFFFFFFFFF01)")
            return
        self._draw(tag)
        self.note(f"drew the tag {tag.label}")

    def do_button(self, name: str) -> None:
        """Press a panel button (MISDEAL is a long FLOOR press when no MISDEAL button is wired)."""
        if self.table.pin_factory is None:
            self.note(f"{name.upper()}: the panel is real; press its button")
            return
        buttons = self.config.panel.pins.buttons
        if name == "misdeal" and "misdeal" not in buttons and "floor" in buttons:
            self.table.press("floor", hold_s=self.config.panel.floor_hold_s + 0.3)
        elif name not in buttons:
            self.note(f"{name.upper()}: this panel has no such button")
            return
        else:
            self.table.press(name)
        if name == "new_hand":
            self._recent.clear()
        if name == "hand_over":
            self.table.sweep()
            self.on_felt.clear()
            self.last_placed = None
        self.note(f"pressed {name.upper().replace('_', ' ')}")

    def do_players(self, text: str) -> None:
        """Step the PLAYERS button to *text* players (2..10)."""
        try:
            players = int(text)
        except (TypeError, ValueError):
            players = 0
        if not 2 <= players <= 10:
            self.note(f"players: {text!r} is not 2..10")
            return
        if self.table.pin_factory is None:
            self.note("players: the panel is real; use its PLAYERS button")
            return
        self.table.set_players(players)
        self.note(f"players set to {players}")

    def do_badge(self, text: str | None = None) -> None:
        """A dealer holds a badge to the shoe: signs in (between hands, or once the hand is over),
        or out when that dealer deals already."""
        badges = self.config.badge_registry
        dealer = (text or "").strip() or next(iter(badges.dealers), None)
        if dealer is None:
            self.note("badge: the badge registry holds no badge (dealerbox badge register ID)")
            return
        uids = badges.badges_of(dealer)
        if not uids:
            self.note(f"badge: dealer {dealer!r} has no badge (dealers with one: {', '.join(badges.dealers)})")
            return
        # The same badge held again must leave the reader time to forget it, or it is one holding.
        self.cross_shoe(uids[0], lambda: self.table.hold_badge(dealer))
        self.note(f"held the badge of dealer {dealer} to the shoe")

    def do_toggle_reader(self, zone: str) -> None:
        """Unplug the reader serving *zone*, or plug it back."""
        name = self.config.zone_readers().get(zone)
        if name is None or name not in self.table.emulators:
            self.note(f"the {zone} reader is not simulated")
            return
        if name in self.unplugged:
            self.table.replug(name)
            self.unplugged.discard(name)
            self.note(f"plugged the {name} reader back")
        else:
            self.table.unplug(name)
            self.unplugged.add(name)
            self.note(f"unplugged the {name} reader")

    def do_noise(self, kind: str) -> None:
        """Act out one kind of a real table's radio noise (hardware_sim.noise, docs/NOISE.md)."""
        noise = TableNoise(self.table, draw_card=self.random_stub_card,
                           last_uid=lambda: self.uid(self.last_drawn) if self.last_drawn else None,
                           dealt_uids=lambda: list(self.left_shoe), mouth=self.table.mouth)
        self.note(noise.inject(kind.strip()))
