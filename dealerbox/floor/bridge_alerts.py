"""How the floor files an alert about a property's bridge: its kind and the ``table`` it is
filed under. The store raises them (:mod:`dealerbox.floor.store.bridges`); the floor's
words name them (:mod:`dealerbox.floor.telling.floor_words`), also in the terminal view, which
needs no database driver, hence a module of its own with no import.
"""

from __future__ import annotations

__all__ = ["BLIND_KIND", "BRIDGE_PREFIX", "bridge_alert_table"]

#: The alert kind of a property blind too long.
BLIND_KIND = "bridge_blind"
#: What a bridge alert's ``table`` starts with: the bridge's certificate CN is ``bridge-<property>``.
BRIDGE_PREFIX = "bridge-"


def bridge_alert_table(name: str) -> str:
    """The ``table`` an alert about *name*'s bridge is filed under (the bridge's certificate CN)."""
    return f"{BRIDGE_PREFIX}{name}"
