"""The one interface every card reader offers the daemon: poll the zones it watches.

A reader may have one antenna (an RC522 watching the board) or several multiplexed
antennas (a Pepper C1 serving shoe, board and burn), so a poll answers per *zone*:

    {"shoe": frozenset(), "board": frozenset({"04A3C6CAE26180", ...})}

Zone names are the table's: ``shoe``, ``board``, and the CONTRACT.md zones
(``burn``, ``muck``, ``seat1`` .. ``seat10``); :mod:`dealerbox.hw.presence` turns
successive polls into events.

The fault contract, the same for every reader: a reader that cannot be opened
raises :class:`~dealerbox.errors.ReaderError` from its constructor, and a reader
that stops answering raises it from :meth:`TagReader.poll`. A reader never
reconnects or backs off by itself: :class:`ReaderSupervisor` is the one owner of
reopening, of the backoff between tries and of the ``reader_fault`` /
``reader_ok`` reports.
"""

from __future__ import annotations

import logging
import math
import time
from abc import ABC, abstractmethod
from typing import Callable

from dealerbox.errors import ReaderError, RegistryError
from dealerbox.hw.device import Device
from dealerbox.domain.decks import normalize_uid


class TagReader(Device, ABC):
    """Base class of card readers. A reader is open from construction until :meth:`close`.

    Contract of :meth:`poll`: one read cycle over every zone the reader serves; it
    returns ``{zone: frozenset of UIDs}`` where the UIDs are upper-case hex as
    :func:`dealerbox.domain.decks.normalize_uid` makes them (use :meth:`format_uid`).
    Every zone in :attr:`zones` is a key of the result when the reader looked at it
    in this cycle; an empty set means "looked, saw nothing". A zone left out means
    "not looked at this cycle" (e.g. a multiplexed antenna skipped), and presence
    tracking then does not age it. When the reader stopped answering (unplugged,
    dead bus), :meth:`poll` raises :class:`~dealerbox.errors.ReaderError` (an
    ``OSError``); a :class:`ReaderSupervisor` then reports ``reader_fault`` and
    re-creates the reader after a backoff.
    Tags that answer garbage are counted and logged by the subclass, not raised.

    Subclasses must override:

    - :attr:`zones`: the zone names this reader serves, fixed for its lifetime.
    - :meth:`_poll`: do one read cycle and return the mapping described above.

    Subclasses may override:

    - :meth:`_close`: release the hardware. Called at most once, by :meth:`close`;
      it should not raise for a device that is already gone.

    Subclasses may also override :attr:`alive`, when a reader learns only from the
    data it streams that the device at the far end answers (a shoe's heartbeat).

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

    @property
    def alive(self) -> bool:
        """True once the device has shown it answers since it was opened (what ``reader_ok`` waits for).

        The default: a reader that opened and polled without raising answers.
        """
        return not self._closed

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


log = logging.getLogger(__name__)

#: ``on_status(reader name, ok, reason)``: called with each fault and recovery report.
StatusCallback = Callable[[str, bool, "str | None"], None]


class ReaderSupervisor:
    """The one owner of a reader's faults: it opens the reader, polls it, and reopens it after a fault.

    *open_reader* returns a fresh, open :class:`TagReader` (and raises
    :class:`~dealerbox.errors.ReaderError` when the device cannot be opened).
    :meth:`poll` never blocks: it returns ``(zones, reports)``, where *zones* is
    what the reader saw, or None when it was not polled (opening failed, or the
    next try is not due), and *reports* lists ``"reader_fault"`` / ``"reader_ok"``
    as they happen. A fault is reported once until the reader works again; a
    fault before the reader ever worked is reported too; ``reader_ok`` follows
    only a fault, once the new reader is :attr:`~TagReader.alive`.

    After a fault the reader is closed and the next open is tried after
    ``backoff_initial * backoff_factor**n`` seconds (at most ``backoff_max``; *n*
    counts the failed tries since the reader last worked). Any other exception
    from a reader is a bug: it is logged with its traceback, counted in
    :attr:`restarts` and the reader is reopened after *crash_backoff* (doubling
    while it keeps crashing, up to 5 s), without a fault report: a card passes
    the shoe in 30-100 ms, so a restart must be quick.

    *clock* gives monotonic seconds; *on_status* is called as
    ``on_status(name, ok, reason)`` with each report. *owns_readers* false
    means the readers *open_reader* returns belong to the caller: after a fault
    (and at :meth:`close`) the supervisor lets go of the reader without closing
    it, so *open_reader* may hand the same one back (a technician's tool polling
    a reader it was given).
    """

    def __init__(self, name: str, open_reader: Callable[[], TagReader], *, backoff_initial: float = 0.1,
                 backoff_factor: float = 2.0, backoff_max: float = 5.0, crash_backoff: float = 0.02,
                 clock: Callable[[], float] = time.monotonic, on_status: StatusCallback | None = None,
                 owns_readers: bool = True):
        if not 0 < backoff_initial <= backoff_max or backoff_factor < 1:
            raise ValueError(f"{name}: backoff needs 0 < initial <= max and factor >= 1, not "
                             f"initial={backoff_initial}, max={backoff_max}, factor={backoff_factor}")
        self.name = name
        self._open = open_reader
        self.backoff_initial, self.backoff_factor, self.backoff_max = backoff_initial, backoff_factor, backoff_max
        self._crash_initial = self._crash_backoff = crash_backoff
        self._clock = clock
        self._on_status = on_status
        self._owns_readers = owns_readers
        self.reader: TagReader | None = None
        self.status = "connecting"          # "connecting", "ok", "fault" or "closed"
        self.fault_reason: str | None = None
        self.faults = self.recoveries = self.restarts = self.polls = 0
        self._failures = 0                  # failed tries since the reader last worked
        self._next_try = float("-inf")

    def poll(self) -> tuple[dict[str, frozenset[str]] | None, list[str]]:
        """Open the reader if needed and poll it once; ``(zones or None, reports)``. Never blocks."""
        reports: list[str] = []
        if self.status == "closed":
            raise ReaderError(f"the supervisor of reader {self.name!r} is closed")
        now = self._clock()
        if now < self._next_try:
            return None, reports
        try:
            if self.reader is None:
                self.reader = self._open()
            zones = self.reader.poll()
        except ReaderError as exc:
            self._fault(str(exc) or type(exc).__name__, now, reports)
            return None, reports
        except Exception:
            self.restarts += 1
            log.exception("reader %s crashed; restarting it", self.name)
            self._drop()
            self._next_try = now + self._crash_backoff
            self._crash_backoff = min(self._crash_backoff * 2, 5.0)
            return None, reports
        self.polls += 1
        self._crash_backoff = max(self._crash_initial, self._crash_backoff * 0.9)
        if self.reader.alive:
            self._working(reports)
        return zones, reports

    @property
    def wait_s(self) -> float:
        """Seconds until the next try to open or poll the reader is due (0 when it is due now)."""
        return max(0.0, self._next_try - self._clock())

    def close(self) -> None:
        """Close the reader. Safe twice."""
        self._drop()
        self.status = "closed"

    def __enter__(self) -> "ReaderSupervisor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _fault(self, reason: str, now: float, reports: list[str]) -> None:
        self._drop()
        # The exponent stops growing well past the cap, so a week-long outage cannot overflow.
        delay = min(self.backoff_max, self.backoff_initial * self.backoff_factor ** min(self._failures, 64))
        self._failures += 1
        self._next_try = now + delay
        self.fault_reason = reason
        if self.status != "fault":
            self.status = "fault"
            self.faults += 1
            log.error("reader %s failed: %s; retrying in %.2f s", self.name, reason, delay)
            self._report("reader_fault", False, reason, reports)
        else:
            log.debug("reader %s still failing (%s); next try in %.2f s", self.name, reason, delay)

    def _working(self, reports: list[str]) -> None:
        if self.status == "ok":
            return
        if self.status == "fault":
            self.recoveries += 1
            log.warning("reader %s answers again", self.name)
            self._report("reader_ok", True, None, reports)
        self.status = "ok"
        self.fault_reason = None
        self._failures = 0

    def _report(self, kind: str, ok: bool, reason: str | None, reports: list[str]) -> None:
        reports.append(kind)
        if self._on_status is not None:
            try:
                self._on_status(self.name, ok, reason)
            except Exception:  # a broken callback must not take the reader down
                log.exception("%s: status callback failed", self.name)

    def _drop(self) -> None:
        reader, self.reader = self.reader, None
        if reader is not None and self._owns_readers:
            try:
                reader.close()
            except Exception:
                log.exception("closing reader %s failed", self.name)
