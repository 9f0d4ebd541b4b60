"""Which card a tag is, for the protection pass: the room's registry and the collector's deck registries.

A table journals a card by its face (``card``) or, when it has no name for the tag, by
its tag (``uid``); the protection pass (:class:`~dealerbox.floor.protect.floor_pass.Protection`,
run by the collector) names such a card through a *card_of_uid* returning ``(card, deck)``.
The collector's registries are the web view's (:mod:`dealerbox.floor.telling.deck_names`):
the room's registry in its store first, then ``[web] deck_registry``, then the simulated decks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dealerbox.domain.decks import DeckRegistry
from dealerbox.floor.telling.deck_names import floor_registries, registry_decks
from dealerbox.floor.protect.autofit import BackgroundFit
from dealerbox.floor.protect.floor_pass import Protection

if TYPE_CHECKING:  # operating/ reads floor.toml and sits above protection: a type only
    from dealerbox.floor.operating.settings import CollectorSettings
    from dealerbox.floor.store import Store

__all__ = ["collector_registries", "collector_protection"]


def collector_registries(settings: CollectorSettings, store: Store | None = None) -> list[DeckRegistry]:
    """The room's registry in *store* when given, ``[web] deck_registry`` when floor.toml names
    one (a bad file stops the collector with its name and key), then the built-in simulated decks."""
    return floor_registries(settings.web.deck_registry if settings.web is not None else None,
                            store.engine if store is not None else None)


def collector_protection(settings: CollectorSettings, store: Store | None = None) -> Protection:
    """The collector's protection pass: ``[protect]``, its cards named from the registries (the
    room's in *store* first), and (``auto_fit``, the default) the games without a current
    reference fitted in the background."""
    return Protection(settings.protect, card_of_uid=registry_decks(*collector_registries(settings, store)),
                      fitter=BackgroundFit(settings.protect) if settings.protect.auto_fit else None)
