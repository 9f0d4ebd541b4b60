"""The vocabulary the table and the floor share: cards, events, decisions, the
deck and badge registries, and the words each decision is shown in.

Nothing here does I/O beyond reading and saving its own registry files, and
nothing here imports the engine, the drivers, the daemon or the floor.
"""
