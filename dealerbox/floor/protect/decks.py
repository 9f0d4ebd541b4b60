"""Which card a tag is, for the protection pass: the collector's deck registries.

A table journals a card by its face (``card``) or, when it has no name for the tag, by
its tag (``uid``); the protection pass (:class:`~dealerbox.floor.protect.floor_pass.Protection`,
run by the collector) names such a card through a *card_of_uid* returning ``(card, deck)``.
The collector's registries are the web view's (:mod:`dealerbox.floor.telling.deck_names`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dealerbox.domain.decks import DeckRegistry
from dealerbox.floor.telling.deck_names import floor_registries, registry_decks
from dealerbox.floor.protect.autofit import BackgroundFit
from dealerbox.floor.protect.floor_pass import Protection

if TYPE_CHECKING:  # operating/ reads floor.toml and sits above protection: a type only
    from dealerbox.floor.operating.settings import CollectorSettings

__all__ = ["collector_registries", "collector_protection"]


def collector_registries(settings: CollectorSettings) -> list[DeckRegistry]:
    """``[web] deck_registry`` when floor.toml names one (a bad file stops the collector with
    its name and key), then the built-in simulated decks."""
    return floor_registries(settings.web.deck_registry if settings.web is not None else None)


def collector_protection(settings: CollectorSettings) -> Protection:
    """The collector's protection pass: ``[protect]``, its cards named from the registries, and
    (``auto_fit``, the default) the games without a current reference fitted in the background."""
    return Protection(settings.protect, card_of_uid=registry_decks(*collector_registries(settings)),
                      fitter=BackgroundFit(settings.protect) if settings.protect.auto_fit else None)
