"""Publishing the room's registry to every table (docs/FLOOR.md, "The room's registry").

Each table the floor knows is sent the registry on its own topic
(:func:`dealerbox.link.protocol.registry_topic`), retained and at QoS 1, so that a table
connecting later, or again after an outage, is handed the newest at once by the broker.
The collector asks :meth:`RegistryPublisher.due` about once a second: a new registry
version (any process changed the store: a command, the web view, a table's registration
filed) goes to every table, a table heard of for the first time gets the one there is,
and a new session with the broker sends them all again (its store may have lost them).
Each table's payload names the deck the floor issued to it (``active``), so the tables'
payloads of one version differ in that key alone.
Only the floor's own roles may publish there (the shipped ACL).
"""

from __future__ import annotations

from dealerbox.link import protocol as P

__all__ = ["RegistryPublisher"]


class RegistryPublisher:
    """What to publish to whom; the caller publishes (and calls :meth:`sent`)."""

    def __init__(self, store):
        self.store = store
        self._sent: dict[str, int] = {}     # table -> version it was last sent
        self._content: dict | None = None   # the version's content, read once
        self._payloads: dict[str, bytes] = {}   # table -> its payload of that version
        #: Registry payloads published, in all.
        self.published = 0

    def reset(self) -> None:
        """Every table is sent the registry again (a new session with the broker)."""
        self._sent.clear()

    def due(self) -> list[tuple[str, str, bytes]]:
        """``(table, topic, payload)`` of each table whose registry is not the newest sent."""
        version = self.store.registry_version()
        if self._content is None or self._content["version"] != version:
            self._content, self._payloads = self.store.registry_content(), {}
        version = self._content["version"]
        due = []
        for table in self.store.known_tables():
            if self._sent.get(table) != version and P.valid_table_id(table):
                if table not in self._payloads:
                    self._payloads[table] = self.store.registry_payload(table, self._content)[2]
                due.append((table, P.registry_topic(table), self._payloads[table]))
        return due

    def sent(self, table: str) -> None:
        """*table* was sent the version :meth:`due` read."""
        self._sent[table] = self._content["version"]
        self.published += 1

    @property
    def version(self) -> tuple[int, str] | None:
        """The version and fingerprint last read (the room's, naming no table's deck), or None."""
        return self.store.registry_payload(None, self._content)[:2] if self._content is not None else None
