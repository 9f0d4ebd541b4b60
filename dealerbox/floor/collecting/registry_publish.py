"""Publishing the room's registry to every table (docs/floor/registry.md).

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

Several collectors share a floor, and each publishes: one that read version 5 could
publish it after another published 6, and the broker keeps the last (a retired deck would
deal again, and go on dealing once that collector stopped). So only the newest wins: a
collector publishes no payload older than the store's version as it reads it again just
before, and it hears every table's retained copy (:meth:`RegistryPublisher.heard`, its
subscription to :data:`~dealerbox.link.protocol.REGISTRY_WILDCARD`): a copy older than
the store's, whoever sent it, is sent again at its next tick.
"""

from __future__ import annotations

import json

from dealerbox.link import protocol as P

__all__ = ["RegistryPublisher"]

#: A table's registry topic without the table.
_PREFIX = P.registry_topic("")


class RegistryPublisher:
    """What to publish to whom; the caller publishes (and calls :meth:`sent`)."""

    def __init__(self, store):
        self.store = store
        self._sent: dict[str, int] = {}     # table -> version it was last sent
        self._content: dict | None = None   # the version's content, read once
        self._payloads: dict[str, bytes] = {}   # table -> its payload of that version
        self._heard: dict[str, int] = {}    # table -> version of its copy the broker last passed on
        #: Registry payloads published, in all.
        self.published = 0

    def reset(self) -> None:
        """Every table is sent the registry again (a new session with the broker)."""
        self._sent.clear()

    def heard(self, topic: str, payload: bytes) -> bool:
        """Note the version of a registry the broker passed on (any collector's, this one's
        too; the last one heard on a topic is the one it keeps); False for another topic.
        Called from the MQTT client's thread: it reads no store."""
        if not topic.startswith(_PREFIX):
            return False
        try:
            version = json.loads(payload).get("version")
        except (ValueError, AttributeError):
            version = None
        # Garbage on the topic (or an emptied retained copy) is as good as an old version: sent again.
        self._heard[topic[len(_PREFIX):]] = version if isinstance(version, int) and version >= 0 else -1
        return True

    def due(self) -> list[tuple[str, str, bytes]]:
        """``(table, topic, payload)`` of each table whose registry is not the newest sent, or
        whose retained copy was heard older than the newest (another collector's, late)."""
        version = self.store.registry_version()
        if self._content is None or self._content["version"] != version:
            self._content, self._payloads = self.store.registry_content(), {}
        version = self._content["version"]
        due = []
        for table in self.store.known_tables():
            # A copy heard newer than this read is left to the check below (the store moved on):
            # never taken on trust, since a group's floor misconfigured could send one too.
            heard = self._heard.get(table)
            if (self._sent.get(table) != version or (heard is not None and heard < version)) \
                    and P.valid_table_id(table):
                if table not in self._payloads:
                    self._payloads[table] = self.store.registry_payload(table, self._content)[2]
                due.append((table, P.registry_topic(table), self._payloads[table]))
        if due and self.store.registry_version() > version:
            return []   # changed while these were made: the next tick sends the newer one
        return due

    def sent(self, table: str) -> None:
        """*table* was sent the version :meth:`due` read."""
        self._sent[table] = self._heard[table] = self._content["version"]
        self.published += 1

    @property
    def version(self) -> tuple[int, str] | None:
        """The version and fingerprint last read (the room's, naming no table's deck), or None."""
        return self.store.registry_payload(None, self._content)[:2] if self._content is not None else None
