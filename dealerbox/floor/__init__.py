"""The floor server: every table's journal, filed once, and what the room's people see of it.

Its parts, each a package:

- :mod:`.collecting`: the tables' journal lines taken off the broker and filed exactly once;
- :mod:`.store`: the store behind one interface, SQLite or PostgreSQL (and
  :mod:`.migrations`, its Alembic revisions);
- :mod:`.telling`: the pit boss's figures, a hand's story, the shift report, the
  floor map's words, recounted from stored lines;
- :mod:`.protect`: game protection, the statistics that watch the card record;
- :mod:`.web`: the floor view, pages, server-sent events and the JSON API;
  :mod:`.terminal`: the same floor in a terminal;
- :mod:`.operating`: floor.toml, users and sessions, the broker and its bridges, moving
  a store, the demo room.

:mod:`.commands` runs the ``dealerbox floor`` commands; :mod:`.bridge_alerts` names the
bridge alerts for the store and the words alike, with no import of its own.

The floor knows the table only through :mod:`dealerbox.link` (the wire) and
:mod:`dealerbox.domain` (the vocabulary).
"""
