"""Collecting: every table's journal lines taken off the broker and filed exactly once.

- :mod:`.collector` subscribes (a shared MQTT v5 subscription), acknowledges, and
  runs the figures' ledger and the protection pass behind each batch;
- :mod:`.filing` checks each table's ``seq`` and chain and files a batch in one
  transaction;
- :mod:`.message` is one received message with its topic read once;
- :mod:`.limits` is ``[collector]`` of floor.toml, what bounds a collector.
"""
