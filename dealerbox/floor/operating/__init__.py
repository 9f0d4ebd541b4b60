"""Operating: what running a floor server takes.

- :mod:`.settings` reads floor.toml; :mod:`.accounts` the web view's users, roles
  and sessions;
- :mod:`.broker` runs mosquitto with the shipped config (tests, the bench, the demo
  room); :mod:`.broker_check` is the broker's health check; :mod:`.bridges` writes
  and removes a property's bridge to its group;
- :mod:`.move` moves an SQLite floor into PostgreSQL (``floor migrate --from``);
- :mod:`.pgcluster` a throwaway PostgreSQL (tests, the bench);
- :mod:`.demo_room` ``make floor``'s live room.
"""
