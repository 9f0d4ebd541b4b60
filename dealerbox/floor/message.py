"""One message the collector received, its topic read once, as it waits to be filed."""

from __future__ import annotations

from dataclasses import dataclass

from dealerbox.link import protocol as P

__all__ = ["Message"]


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
    def sync(cls, topic: str, received: float, arrived: int) -> Message:
        """The collector's own message on its sync *topic*: what came before it is filed."""
        return cls(topic, "", "", b"", received, arrived)
