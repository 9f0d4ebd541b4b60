"""One message the collector received, its topic read once, as it waits to be filed."""

from __future__ import annotations

from dataclasses import dataclass

from dealerbox.link import protocol as P

__all__ = ["Message", "BRIDGE_KIND", "BRIDGES_WILDCARD", "bridge_topic"]

#: The kind of a bridge's notification (a property's bridge up or down), not a table's.
BRIDGE_KIND = "bridge"
#: Where each property's bridge says whether it is up (bridge.conf's ``notification_topic``):
#: under ``floor/``, which the collectors already read and the bridges already carry.
_BRIDGES_PREFIX = f"{P.ROOT}/floor/bridges/"
BRIDGES_WILDCARD = _BRIDGES_PREFIX + "+"


def bridge_topic(property_name: str) -> str:
    """The topic on which the bridge of *property_name* publishes its notifications."""
    return _BRIDGES_PREFIX + property_name


@dataclass(frozen=True, slots=True)
class Message:
    """A message off the broker: whose it is, what it is, and when it came.

    ``table`` and ``kind`` are read from the topic (``dealerbox/v1/tables/<table>/<kind>``)
    by :meth:`on_table_topic`, once; a kind the floor does not know is kept as it came,
    for the filing to refuse. The collector's own sync message (:meth:`sync`) is no
    table's: its ``table`` and ``kind`` are empty.
    """

    topic: str
    table: str
    kind: str
    payload: bytes
    #: When it came (``time.time()``): how long it waited is measured from it.
    received: float
    #: How many batches the collector had committed when it came.
    arrived: int = 0
    #: A retained message delivered again on subscribe (not one the table just sent).
    retained: bool = False

    @classmethod
    def on_table_topic(cls, topic: str, payload: bytes, received: float, arrived: int = 0,
                       retained: bool = False) -> Message | None:
        """The message on a table's *topic*, or None when *topic* is no table's."""
        parsed = P.parse_table_topic(topic)
        if parsed is None:
            return None
        table, kind = parsed
        return cls(topic, table, kind, payload, received, arrived, retained)

    @classmethod
    def on_bridge_topic(cls, topic: str, payload: bytes, received: float) -> Message | None:
        """A bridge's notification on *topic* (its ``table`` is the property's name, its
        ``kind`` :data:`BRIDGE_KIND`), or None when *topic* is no bridge's."""
        if not topic.startswith(_BRIDGES_PREFIX):
            return None
        name = topic[len(_BRIDGES_PREFIX):]
        if not name or "/" in name:
            return None
        return cls(topic, name, BRIDGE_KIND, payload, received)

    @property
    def bridge_up(self) -> bool | None:
        """A bridge notification's state: True (``1``), False (``0``), None for anything else."""
        return {b"1": True, b"0": False}.get(self.payload.strip())

    @classmethod
    def sync(cls, topic: str, received: float, arrived: int) -> Message:
        """The collector's own message on its sync *topic*: what came before it is filed."""
        return cls(topic, "", "", b"", received, arrived)
