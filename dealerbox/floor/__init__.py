"""The floor server: every table's journal, filed once, and what the room's people see of it.

- :mod:`.collector` and :mod:`.filing`: take the tables' journal lines off the
  broker (a shared MQTT v5 subscription) and file each exactly once; each
  message passes between them as a :class:`~.message.Message`, and
  :mod:`.limits` bounds the collector.
- :mod:`.store`: the store behind one interface, SQLite or PostgreSQL.
- :mod:`.table_view`: one table as the views show it (the collector's events,
  the web view's streams).
- :mod:`.figures`, :mod:`.report`, :mod:`.hands`, :mod:`.story`: the pit boss's figures,
  the shift report and a hand's story, recounted from stored lines.
- :mod:`.web` and :mod:`.view`: the floor view, a web page with server-sent events
  and a Textual screen; :mod:`.accounts`: its users, roles and sessions.
- :mod:`.broker`: run a mosquitto with the shipped config (tests, bench, demo room).

The floor knows the table only through :mod:`dealerbox.link` (the wire) and
:mod:`dealerbox.domain` (the vocabulary).
"""
