"""What bounds a collector: ``[collector]`` of ``floor.toml``.

A module of its own: the settings read them, and need nothing else of the
collector.
"""

from __future__ import annotations

from dataclasses import dataclass

from dealerbox.link import protocol as P

__all__ = ["CollectorLimits"]


@dataclass(frozen=True)
class CollectorLimits:
    """What bounds the collector (``[collector]`` in floor.toml)."""

    #: The MQTT v5 shared subscription group the collectors of one floor share the
    #: tables through (each message goes to one of them; one collector is a group of one).
    share_group: str = P.SHARE_GROUP
    #: Nothing the collector publishes is larger (the broker's limit is 1 MiB).
    max_message_bytes: int = 256 * 1024
    #: The newest open alerts ``floor/alerts`` carries (fewer if they would not fit).
    alerts_shown: int = 100
    #: Give up (exit non-zero) after this long without a session that lasted.
    broker_lost_s: float = 120.0
    #: A session lasted when it stayed up this long (or ``broker_lost_s / 3``, if shorter).
    session_kept_s: float = 10.0
    #: Messages (and bytes) of one table that may wait; past it its messages are dropped.
    table_queue: int = 1000
    table_queue_bytes: int = 16 * 1024 * 1024
    #: Messages (and bytes, at least one message) of one table filed per batch.
    share: int = 16
    share_bytes: int = 1024 * 1024
