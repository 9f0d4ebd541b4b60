"""Which card a tag is, for everything on the floor that names cards: the deck registries.

A table journals a card by its face (``card``) or, when it has no name for the tag, by its
tag (``uid``). The floor names such a card from its registries: ``[web] deck_registry`` of
floor.toml (``deck register``'s file), then the built-in simulated decks. The hand's story
(:func:`dealerbox.floor.telling.story.registry_cards`) and the protection pass
(:func:`dealerbox.floor.protect.decks.collector_protection`) both read them through here.
"""

from __future__ import annotations

from pathlib import Path

from dealerbox.domain.decks import DeckRegistry, simulation_registry

__all__ = ["floor_registries", "registry_decks"]


def floor_registries(deck_registry: Path | None) -> list[DeckRegistry]:
    """The house registry *deck_registry* when there is one (a bad file raises its
    ConfigError, naming it), then the built-in simulated decks."""
    loaded = [DeckRegistry.load(deck_registry)] if deck_registry else []
    return [*loaded, simulation_registry()]


def registry_decks(*registries: DeckRegistry):
    """A *card_of_uid*: tag UID -> ``(card, deck)`` from *registries*, tried in order; None
    for a tag none of them holds or a UID that is no UID (the card stays unnamed)."""
    def card_of_uid(uid: str) -> tuple[str, str] | None:
        for registry in registries:
            try:
                tag = registry.lookup(uid)
            except ValueError:   # not a UID at all
                return None
            if tag is not None:
                return tag.card, tag.deck
        return None
    return card_of_uid
