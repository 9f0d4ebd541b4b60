"""What every card reader on a serial port shares: :class:`SerialTagReader` and its counters.

The drivers (:class:`~dealerbox.hw.serial.pepper.PepperC1Reader`,
:class:`~dealerbox.hw.serial.shoe_line.ShoeLineReader`) open their port only through
``serial.serial_for_url(url, ...)``, so a technician (or a test) can point them at
``/dev/ttyAMA0``, ``/dev/serial/by-id/...``, a pseudo-terminal of
:mod:`hardware_sim.serial_sim`, or ``socket://host:port``.

:class:`SerialTagReader` is the shared base (a :class:`~dealerbox.hw.reader.TagReader`):
port life cycle, fault detection, counters and rate-limited logging. It implements the
base's ``zones``, ``_poll`` and ``_close``. A subclass **must** override
:meth:`~SerialTagReader._handshake` and :meth:`~SerialTagReader._observe`; it **may**
override :meth:`~SerialTagReader._link_lost` and the class attributes
``default_baudrate``, ``port_timeout`` and ``max_antenna``.

What ``poll()`` returns
-----------------------
As :class:`~dealerbox.hw.reader.TagReader` says: ``{zone: frozenset(uids)}`` (UIDs
as :meth:`~dealerbox.hw.reader.TagReader.format_uid` spells them) for each zone the
reader looked at in this cycle; a zone left out was not looked at, and presence
tracking does not age it. Several antennas may map to one zone (``antennas={3:
"burn", 4: "burn"}``); the zone then holds the union of their tags, and is left out
unless every one of its antennas was read.

Faults
------
These readers follow the fault contract of :mod:`dealerbox.hw.reader`: the
constructor raises :class:`~dealerbox.errors.ReaderError` when the port cannot be
opened or the reader does not answer the handshake, and ``poll()`` raises it when
the link fails (unplugged, a read or write fails), the Pepper does not answer a
command within ``response_timeout`` (after ``retries`` resends), or the shoe sends
no valid line for ``stall_timeout`` seconds. The port is closed before the error
is raised. Reopening, the backoff between tries and the ``reader_fault`` /
``reader_ok`` reports belong to :class:`~dealerbox.hw.reader.ReaderSupervisor`.

``status`` is ``"connecting"`` until the first proof of life, then ``"ok"``, then
``"fault"`` once a fault was raised (``fault_reason`` says why), and ``"closed"``
after :meth:`close`. :attr:`alive` (what ``reader_ok`` waits for) is ``status ==
"ok"``: a shoe proves it is alive only with its first valid line.

Bad input
---------
Partial frames, bad CRCs, garbage bytes and malformed lines are counted in
:attr:`SerialTagReader.counters` (a :class:`SerialReaderCounters`), logged at most
once per ``log_interval`` seconds per kind (the next message says how many were
held back), and skipped. They never raise out of the driver. A UID that is not
4, 7 or 10 bytes is counted (``odd_uids``) and logged, but passed on as plain hex:
the engine decides what an unknown tag means.

Use
---
::

    supervisor = ReaderSupervisor("c1", lambda: PepperC1Reader("/dev/ttyAMA0", {1: "shoe", 2: "board"},
                                                               name="c1"), backoff_initial=0.5, backoff_max=30)
    with supervisor:
        while running:
            zones, reports = supervisor.poll()   # zones or None; ["reader_fault"] / ["reader_ok"] when they happen

Time
----
Stall detection and log rate limiting read the injectable ``clock``
(default :func:`time.monotonic`), so a test can move time on by hand. The driver never
sleeps; the only waits are the port reads of a Pepper command, bounded by
``response_timeout`` (real time, since the bytes travel in real time).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields

import serial

from dealerbox.errors import DealerboxError, ReaderError, RegistryError
from dealerbox.domain.decks import normalize_uid
from dealerbox.hw.reader import TagReader

__all__ = [
    "LinkError",
    "ReaderSetupError",
    "SerialReaderCounters",
    "SerialTagReader",
    "no_report",
]

log = logging.getLogger(__name__)


class ReaderSetupError(DealerboxError, ValueError):
    """A serial reader was constructed with arguments that cannot work (bad zones, URL...)."""


class LinkError(Exception):
    """The link to the reader is unusable: no answer, stall, wrong protocol.

    Raised by a driver's hooks; :class:`SerialTagReader` turns it into a
    :class:`~dealerbox.errors.ReaderError` after closing the port, so it never leaves the driver.
    """


# -- counters and rate-limited logging --------------------------------------------


@dataclass
class SerialReaderCounters:
    """What one serial reader has seen since it was made. Plain attributes, never reset."""

    frames: int = 0             #: valid frames (Pepper) or lines (DBX1) received
    garbage_bytes: int = 0      #: bytes skipped while hunting for a Pepper frame header
    garbage_lines: int = 0      #: DBX1 lines that are not protocol lines (no ``$``, bad syntax)
    crc_errors: int = 0         #: frames or lines whose checksum did not match
    partial_frames: int = 0     #: frames or lines cut short (by a newer frame, a gap or a drop)
    overlong: int = 0           #: DBX1 lines longer than the limit; oversize Pepper lengths
    unexpected_frames: int = 0  #: valid Pepper frames nobody waited for (late answers, ASYNC)
    command_errors: int = 0     #: Pepper ERROR answers
    odd_uids: int = 0           #: UIDs that are not 4, 7 or 10 bytes (passed on as plain hex)
    incomplete_scans: int = 0   #: DBX1 scans whose ``E`` count did not match the ``T`` lines
    device_errors: int = 0      #: DBX1 ``X`` lines
    timeouts: int = 0           #: Pepper commands not answered in time (each resend counts)
    faults: int = 0             #: changes from working (or starting) to fault
    reconnect_attempts: int = 0 #: attempts to open the port (the first one included)
    recoveries: int = 0         #: changes from fault back to working

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


class _LogLimiter:
    """Logs the first message of a kind, then at most one per *interval*, with a tally."""

    def __init__(self, logger: logging.Logger, prefix: str, interval: float, clock):
        self._logger, self._prefix = logger, prefix
        self._interval, self._clock = interval, clock
        self._windows: dict[str, list] = {}  # kind -> [window start, held back]

    def warning(self, kind: str, message: str, *args) -> None:
        now = self._clock()
        window = self._windows.get(kind)
        if window is not None and now - window[0] < self._interval:
            window[1] += 1
            return
        held = window[1] if window is not None else 0
        self._windows[kind] = [now, 0]
        if held:
            self._logger.warning("%s: " + message + " (%d more like this held back)", self._prefix, *args, held)
        else:
            self._logger.warning("%s: " + message, self._prefix, *args)


def no_report(kind: str, message: str, *args) -> None:
    """A parser's ``report`` when nobody listens: bad input is still counted, never logged."""
    return None


# -- the shared base ---------------------------------------------------------------

class SerialTagReader(TagReader):
    """A card reader on a serial port: connection life cycle, faults, counters.

    Parameters (keyword-only after *antennas*):

    url
        Anything ``serial.serial_for_url`` opens: a device path or a pyserial URL.
    antennas
        ``{antenna number: zone name}``, e.g. ``{1: "shoe", 2: "board", 3: "burn"}``;
        kept as :attr:`antenna_zones`. :attr:`zones` lists the zone names.
    name
        The reader's name from the config; it goes into ``reader_fault``/``reader_ok``.
    baudrate
        Default :attr:`default_baudrate`.
    clock
        Monotonic seconds for stall detection and log rate limiting.
    log_interval
        Seconds between two log messages of the same kind of bad input.
    serial_options
        Extra keyword arguments for ``serial_for_url`` (e.g. ``{"exclusive": True}``).
    connect
        Open the port in the constructor (default); otherwise at the first ``poll()``.

    Subclasses must override :meth:`_handshake` and :meth:`_observe`, and may override
    :meth:`_link_lost`, ``default_baudrate``, ``port_timeout`` and ``max_antenna``.
    Invalid arguments raise :class:`ReaderSetupError`; an absent or silent reader
    raises :class:`~dealerbox.errors.ReaderError` (see "Faults" in the module docstring).
    """

    default_baudrate = 115200
    #: ``timeout`` given to ``serial_for_url``: how long one ``read()`` may block.
    port_timeout: float = 0.0
    max_antenna = 8

    def __init__(
        self,
        url: str,
        antennas: Mapping[int, str],
        *,
        name: str = "serial",
        baudrate: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        log_interval: float = 10.0,
        serial_options: Mapping | None = None,
        connect: bool = True,
    ):
        if not isinstance(name, str) or not name:
            raise ReaderSetupError(f"a reader needs a name, not {name!r}")
        super().__init__(name)
        self.antenna_zones = self._check_antennas(antennas)
        self._zones = tuple(dict.fromkeys(self.antenna_zones.values()))
        self._zone_antennas = {z: tuple(a for a, az in self.antenna_zones.items() if az == z) for z in self._zones}
        self.url = url
        self.baudrate = baudrate or self.default_baudrate
        self._clock = clock
        self._serial_options = dict(serial_options or {})
        self.counters = SerialReaderCounters()
        self._limiter = _LogLimiter(log, name, log_interval, clock)
        self._lock = threading.RLock()
        self._port = None
        self._status = "connecting"
        self.fault_reason: str | None = None
        try:
            # Opens nothing; rejects a URL scheme pyserial does not know, as a setup error.
            serial.serial_for_url(url, do_not_open=True)
        except (ValueError, TypeError, AttributeError) as exc:
            raise ReaderSetupError(f"{name}: {url!r} is not a port pyserial can open ({exc})") from exc
        if connect:
            try:
                with self._lock:
                    self._connect()
            except BaseException:
                self.close()  # never leave a half-opened port behind
                raise

    def _check_antennas(self, antennas) -> dict[int, str]:
        if not isinstance(antennas, Mapping) or not antennas:
            raise ReaderSetupError(f"{self.name}: antennas must map antenna numbers to zone names, not {antennas!r}")
        out = {}
        for antenna, zone in antennas.items():
            if isinstance(antenna, bool) or not isinstance(antenna, int) or not 1 <= antenna <= self.max_antenna:
                raise ReaderSetupError(f"{self.name}: antenna {antenna!r} is not a number 1..{self.max_antenna}")
            if not isinstance(zone, str) or not zone:
                raise ReaderSetupError(f"{self.name}: antenna {antenna} needs a zone name, not {zone!r}")
            out[antenna] = zone
        return dict(sorted(out.items()))

    # -- public API ------------------------------------------------------------------
    @property
    def zones(self) -> tuple[str, ...]:
        """The zone names this reader serves, in antenna order."""
        return self._zones

    @property
    def status(self) -> str:
        """``"connecting"``, ``"ok"``, ``"fault"`` or ``"closed"``."""
        return self._status

    @property
    def ok(self) -> bool:
        return self._status == "ok"

    @property
    def alive(self) -> bool:
        """True once the reader answered since the port opened (its first valid answer or line)."""
        return self._status == "ok"

    @property
    def connected(self) -> bool:
        """True while the port is open (which is not yet proof that the reader answers)."""
        return self._port is not None

    def _poll(self) -> dict[str, frozenset[str]]:
        """What the zones looked at hold now. Raises ReaderError when the link fails."""
        with self._lock:
            if self._closed:  # close() ran in another thread since the base checked
                raise ReaderError(f"reader {self.name!r} is closed")
            if self._port is None:
                self._connect()
            try:
                return self._observe()
            except (serial.SerialException, OSError, LinkError) as exc:
                self._fail(str(exc) or type(exc).__name__)

    def _close(self) -> None:
        with self._lock:
            self._drop_port()
            self._status = "closed"

    # -- hooks for subclasses -------------------------------------------------------
    def _handshake(self) -> None:
        """Called right after the port opened. Raise ``LinkError`` (or let a
        SerialException through) when the reader does not answer. Must override."""
        raise NotImplementedError

    def _observe(self) -> dict[str, frozenset[str]]:
        """Read the reader and return ``{zone: uids}``. Link failures propagate as
        SerialException/OSError/``LinkError``; bad data is counted, never raised.
        Call :meth:`_mark_ok` on proof of life. Must override."""
        raise NotImplementedError

    def _link_lost(self) -> None:
        """The port was closed after a fault or by close(): forget per-connection state. May override."""

    # -- helpers for subclasses -----------------------------------------------------
    def _report(self, kind: str, message: str, *args) -> None:
        self._limiter.warning(kind, message, *args)

    def _uid(self, antenna: int, raw) -> str:
        """*raw* as poll() reports it; an odd length is counted and logged, not dropped."""
        try:
            return normalize_uid(raw)
        except RegistryError:
            self.counters.odd_uids += 1
            uid = self.format_uid(raw)
            self._report("uid", "antenna %d: UID %s is not 4, 7 or 10 bytes; passed on as it is", antenna, uid)
            return uid

    def _mark_ok(self) -> None:
        if self._status == "ok":
            return
        was_fault = self._status == "fault"
        self._status = "ok"
        self.fault_reason = None
        if was_fault:
            self.counters.recoveries += 1
            log.warning("%s: reader answers again", self.name)
        else:
            log.info("%s: reader answers", self.name)

    # -- internals ------------------------------------------------------------------

    def _connect(self) -> None:
        self.counters.reconnect_attempts += 1
        try:
            self._port = serial.serial_for_url(
                self.url, baudrate=self.baudrate, timeout=self.port_timeout,
                write_timeout=max(self.port_timeout, 0.5), **self._serial_options)
        except (serial.SerialException, OSError, ValueError) as exc:
            self._port = None
            self._fail(f"cannot open {self.url}: {exc}")
        try:
            self._handshake()
        except (serial.SerialException, OSError, LinkError) as exc:
            self._fail(str(exc) or type(exc).__name__)

    def _drop_port(self) -> None:
        port, self._port = self._port, None
        if port is not None:
            try:
                port.close()
            except Exception:  # closing a dead port may fail; it is gone either way
                pass
            self._link_lost()

    def _fail(self, reason: str):
        """Close the port, note the fault and raise it as a ReaderError (the supervisor takes it from there)."""
        self._drop_port()
        if self._status != "fault":
            self.counters.faults += 1
        self._status = "fault"
        self.fault_reason = reason
        raise ReaderError(f"reader {self.name!r} on {self.url}: {reason}")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} {self.url} zones={list(self._zones)} {self._status}>"
