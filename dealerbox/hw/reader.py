"""The one interface every card reader offers the daemon: poll the zones it watches.

A reader may have one antenna (an RC522 watching the board) or several multiplexed
antennas (a Pepper C1 serving shoe, board and burn), so a poll answers per *zone*:

    {"shoe": frozenset(), "board": frozenset({"04A3C6CAE26180", ...})}

Zone names are the table's: ``shoe``, ``board``, and the CONTRACT.md zones
(``burn``, ``muck``, ``seat1`` .. ``seat10``); :mod:`dealerbox.hw.presence` turns
successive polls into events.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

from ..errors import ReaderError, RegistryError
from .device import Device
from ..rules.registry import normalize_uid


class TagReader(Device, ABC):
    """Base class of card readers. A reader is open from construction until :meth:`close`.

    Contract of :meth:`poll`: one read cycle over every zone the reader serves; it
    returns ``{zone: frozenset of UIDs}`` where the UIDs are upper-case hex as
    :func:`dealerbox.rules.registry.normalize_uid` makes them (use :meth:`format_uid`).
    Every zone in :attr:`zones` is a key of the result when the reader looked at it
    in this cycle; an empty set means "looked, saw nothing". A zone left out means
    "not looked at this cycle" (e.g. a multiplexed antenna skipped), and presence
    tracking then does not age it. When the reader stopped answering (unplugged,
    dead bus), :meth:`poll` raises :class:`~dealerbox.errors.ReaderError` (an
    ``OSError``); the caller emits ``reader_fault`` and may re-create the reader.
    Tags that answer garbage are counted and logged by the subclass, not raised.

    Subclasses must override:

    - :attr:`zones`: the zone names this reader serves, fixed for its lifetime.
    - :meth:`_poll`: do one read cycle and return the mapping described above.

    Subclasses may override:

    - :meth:`_close`: release the hardware. Called at most once, by :meth:`close`;
      it should not raise for a device that is already gone.

    A subclass constructor calls ``super().__init__(name)`` first, then opens its
    hardware; if opening fails it calls ``self.close()`` before re-raising, so a
    half-opened reader never holds a port or a pin.

    Readers are context managers, and :meth:`close` is safe to call twice.
    """

    def __init__(self, name: str):
        if not isinstance(name, str) or not name:
            raise ValueError(f"a reader needs a name, not {name!r}")
        self.name = name
        self._closed = False

    @property
    @abstractmethod
    def zones(self) -> tuple[str, ...]:
        """The zone names this reader serves."""

    def poll(self) -> dict[str, frozenset[str]]:
        """One read cycle: ``{zone: UIDs seen}``. Raises ReaderError once the reader is gone or closed."""
        if self._closed:
            raise ReaderError(f"reader {self.name!r} is closed")
        return self._poll()

    @abstractmethod
    def _poll(self) -> dict[str, frozenset[str]]:
        """Do one read cycle (the reader is open)."""

    def close(self) -> None:
        """Release the hardware. Safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        self._close()

    def _close(self) -> None:
        """Release the hardware; the default has nothing to release."""

    @staticmethod
    def format_uid(raw) -> str:
        """A UID as poll() reports it: normalised hex; odd lengths pass through as plain hex.

        Presence tracking passes odd UIDs on as ``uid`` events and the engine decides
        what an unknown tag means, so a reader must not drop them.
        """
        try:
            return normalize_uid(raw)
        except RegistryError:
            if isinstance(raw, (bytes, bytearray)):
                return bytes(raw).hex().upper()
            return str(raw).strip().upper()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<{type(self).__name__} {self.name!r} zones={list(self.zones)} {state}>"


class PollSchedule:
    """Poll slots at a fixed period: each deadline is the previous one plus *period*.

    The time a poll takes does not push the next one back, so the rate does not
    drift. A poll that overruns its slot makes the reader skip the slots it missed
    and wait for the next one on the grid, rather than poll in a burst to catch up
    (the presence layer ages cards by time, not by poll count). :attr:`skipped`
    counts the slots skipped.
    """

    def __init__(self, period: float, now: float):
        if not period > 0:
            raise ValueError(f"a poll period must be > 0 seconds, not {period!r}")
        self.period = float(period)
        self.deadline = now + self.period
        self.skipped = 0

    def restart(self, now: float) -> None:
        """Start the grid again from *now* (a reader reopened after a fault)."""
        self.deadline = now + self.period

    def next_wait(self, now: float) -> float:
        """Seconds from *now* to the next slot, which then becomes the current one."""
        if now >= self.deadline:
            missed = math.floor((now - self.deadline) / self.period) + 1
            self.skipped += missed
            self.deadline += missed * self.period
        wait = self.deadline - now
        self.deadline += self.period
        return wait
