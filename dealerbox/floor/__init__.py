"""Floor reporting: every table's journal to the floor over MQTT v5.

- :mod:`.protocol`: topics and versioned JSON payloads (docs/FLOOR.md).
- :mod:`.publisher`: the table's side, streaming the journal from the floor's
  last acknowledged ``seq`` (the journal is the outbox).
- :mod:`.collector` and :mod:`.store`: the floor's side, committing each line
  to SQLite before acknowledging it.
- :mod:`.web` and :mod:`.view`: the floor view, as a web page with
  server-sent events (``floor web``, a process of its own over the store) and
  as a Textual screen; :mod:`.accounts`: its users, roles and sessions.
- :mod:`.broker`: run a mosquitto with the shipped config (tests, bench).
"""

from __future__ import annotations

from ..errors import DealerboxError


class FloorError(DealerboxError, OSError):
    """Floor reporting cannot work: a broker, a certificate or a store is missing or refused."""
