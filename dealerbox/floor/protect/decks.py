"""Which card a tag is, for the protection pass: the collector's deck registries.

A table journals a card by its face (``card``) or, when it has no name for the tag, by
its tag (``uid``); the protection pass (:class:`~dealerbox.floor.protect.floor_pass.Protection`,
run by the collector) names such a card through a *card_of_uid* returning ``(card, deck)``.
The collector's registries are the web view's: ``[web] deck_registry`` of the same
floor.toml (``deck register``'s file), then the built-in simulated decks, as the hand's
story names them (:func:`dealerbox.floor.web.app`'s ``_deck_cards``).
"""

from __future__ import annotations

from dealerbox.domain.decks import DeckRegistry, simulation_registry
from dealerbox.floor.protect.floor_pass import Protection
from dealerbox.floor.settings import CollectorSettings

__all__ = ["registry_decks", "collector_registries", "collector_protection"]


def registry_decks(*registries: DeckRegistry):
    """A *card_of_uid* for the pass: tag UID -> ``(card, deck)`` from *registries*, tried in
    order; None for a tag none of them holds or a UID that is no UID (the card stays unnamed)."""
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


def collector_registries(settings: CollectorSettings) -> list[DeckRegistry]:
    """``[web] deck_registry`` when floor.toml names one (a bad file stops the collector with
    its name and key), then the built-in simulated decks."""
    web = settings.web
    loaded = [DeckRegistry.load(web.deck_registry)] if web is not None and web.deck_registry else []
    return [*loaded, simulation_registry()]


def collector_protection(settings: CollectorSettings) -> Protection:
    """The collector's protection pass: ``[protect]``, its cards named from the registries."""
    return Protection(settings.protect, card_of_uid=registry_decks(*collector_registries(settings)))
