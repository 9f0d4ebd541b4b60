"""The house's limit on a table's last commissioning (``[commission]`` of floor.toml).

Apart from :mod:`dealerbox.floor.telling.commissioning` because the settings read it on
every floor install, a collector-only one too, which has no page renderer (Jinja2) to import.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CommissionLimit", "DEFAULT_MAX_AGE_DAYS", "MAX_AGE_DAYS_MOST"]

#: A table's last commissioning older than this many days is marked (a quarter: a room re-checks
#: its tables each season, and after every repair, which is a new run anyway).
DEFAULT_MAX_AGE_DAYS = 90
#: The longest limit floor.toml may set: ten years.
MAX_AGE_DAYS_MOST = 3650


@dataclass(frozen=True)
class CommissionLimit:
    """``[commission]`` of floor.toml: a table whose last commissioning is older than
    ``max_age_days`` is marked on the tables page."""

    max_age_days: int = DEFAULT_MAX_AGE_DAYS
