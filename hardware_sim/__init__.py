"""Simulated hardware: chip-level emulators behind the same libraries the real drivers use.

Nothing here is ever chosen by default; a config or a test picks it explicitly.
"""
