"""The catalogs' mark for words defined in a table and told later: :func:`N_`.

A module of its own with no import, so that what the collector writes (an alert's English
text, :mod:`dealerbox.floor.alert_texts`) can be marked for the catalogs on a collector-only
install, which has no Babel (``pip install dealerbox[collector]``).
"""

from __future__ import annotations

__all__ = ["N_"]


def N_(message: str) -> str:
    """Marks *message* for extraction where it is defined (a table of words); it is
    translated where it is shown, through the reader's :class:`~dealerbox.floor.telling.language.Language`."""
    return message
