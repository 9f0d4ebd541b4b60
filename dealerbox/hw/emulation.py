"""Finding the emulator of a reader kind by its name, as gpiozero finds its pin factories.

The simulator package registers the emulator of each reader kind under the kind's
name in the entry-point group :data:`EMULATOR_GROUP` (``pyproject.toml``,
``[project.entry-points."dealerbox.emulators"]``; gpiozero does the same with
``gpiozero_pin_factories``). The box never imports the simulator: the simulated table
looks its emulators up here, and only for the readers whose config says
``backend = "sim"``, so the simulator is never picked silently.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points

from dealerbox.errors import DealerboxError

__all__ = ["EMULATOR_GROUP", "EmulatorMissing", "find_emulator"]

EMULATOR_GROUP = "dealerbox.emulators"


class EmulatorMissing(DealerboxError, LookupError):
    """No emulator is registered under a reader kind's name: the simulator package is not installed."""


def find_emulator(kind: str) -> Callable:
    """The emulator registered under reader kind *kind*: a callable taking the reader's config.

    Raises :class:`EmulatorMissing` when none is registered under that name.
    """
    found = entry_points(group=EMULATOR_GROUP, name=kind)
    if not found:
        raise EmulatorMissing(
            f"no emulator is registered for reader kind {kind!r} (entry-point group {EMULATOR_GROUP!r}): "
            f"the simulator package, hardware_sim, is not installed, so a {kind} reader with "
            f'backend = "sim" cannot run here')
    return next(iter(found)).load()
