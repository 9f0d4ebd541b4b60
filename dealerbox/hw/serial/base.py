"""Card readers on a serial port: the Eccel Pepper C1 and a shoe with its own microcontroller.

Both drivers open their port only through ``serial.serial_for_url(url, ...)``, so a
technician (or a test) can point them at ``/dev/ttyAMA0``, ``/dev/serial/by-id/...``,
a pseudo-terminal of :mod:`hardware_sim.serial_sim`, or ``socket://host:port``.

Classes
=======

:class:`SerialTagReader`
    The shared base (a :class:`~dealerbox.hw.reader.TagReader`): port life cycle,
    fault detection, counters and rate-limited logging. It implements the base's ``zones``, ``_poll`` and ``_close``.
    A subclass **must** override :meth:`~SerialTagReader._handshake` and
    :meth:`~SerialTagReader._observe`; it **may** override
    :meth:`~SerialTagReader._link_lost` and the class attributes ``default_baudrate``,
    ``port_timeout`` and ``max_antenna``.
:class:`PepperC1Reader`
    The Eccel Pepper C1 binary protocol, polled command by command, one antenna of
    the multiplexer after the other.
:class:`ShoeLineReader`
    The ASCII line protocol ``DBX1`` defined below, streamed by the shoe's firmware.

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

Eccel Pepper C1 binary protocol (as implemented here)
=====================================================
Confirmed from the vendor's own material -- the Arduino library "C1" by Eccel
Technology (``binary_protocol.cpp``, ``C1_Interface.h/.cpp``) and Eccel's Python
driver documentation (``C1-python/protocol.html``, ``commands.html``, ``api.html``):

* Same frame in both directions, 115200 8N1 by default::

      F5 | LEN_L LEN_H | LEN_L^FF LEN_H^FF | PAYLOAD (LEN-2 bytes) | CRC_L CRC_H

  ``LEN`` counts the payload plus the two CRC bytes, not the 5 header bytes.
* CRC: "CCITT-16", initial value 0xFFFF, over the payload only, sent low byte first.
  The vendor computes it with a 256-entry table, MSB first. Implemented here as
  CRC-16/CCITT-FALSE (polynomial 0x1021, no reflection, no final XOR); the
  polynomial itself was not printed in the material read, it is the one "CCITT"
  names.
* Command payload: ``[cmd] [arguments...]``. Answer payload:
  ``[00 ACK] [cmd echoed] [data...]``, ``[FF ERROR] [cmd] [error hi] [error lo]``, or
  ``[FE ASYNC] ...`` (unsolicited, when the reader's own polling is on).
  A command frame with a bad CRC is answered ``FF FF 02``.
* Commands used: ``01`` DUMMY; ``02`` GET_TAG_COUNT -> ``00 02 n`` (the discovery loop
  finds at most 5 tags); ``03`` GET_UID ``idx`` -> ``00 03 type param uid...`` (param
  is SAK or DSFID); ``06`` SET_POLLING ``0|1``; ``0B`` GET_VERSION -> ``00 0B ascii``.
  The vendor library waits 500 ms for each answer.
* The receiver hunts for a 5-byte header whose two XOR bytes match, so a byte
  stream can be joined at any point.

How this driver uses it: each poll selects each mapped antenna, asks GET_TAG_COUNT,
then GET_UID for each index. A command not answered within ``response_timeout`` is
sent again, up to ``retries`` times; before each resend a DUMMY command fences the
link, because an answer echoes only the opcode and a late answer to the first try
could otherwise be taken for the answer to a later GET_UID. (That the reader answers
commands in the order it received them is assumed, as the vendor library's
one-command-at-a-time use implies.)

NOT confirmed from the vendor material (assumptions, each in one constant below):

* Antenna multiplexing. The command table has an ``ANTENNA`` opcode (``0F``) but no
  documented arguments. This driver selects antenna *n* (1..8) by sending ``0F n``
  and expects ``00 0F``; an ``ERROR`` answer leaves that antenna's zone out of the
  poll and is counted in ``command_errors``. If real firmware uses
  another form, change :data:`PEPPER_ANTENNA_SELECT` / :meth:`PepperC1Reader._select_antenna`.
  With ``antenna_select=False`` (a C1 without multiplexer) only one antenna may be mapped.
* The layout of ASYNC payloads: they are counted (``unexpected_frames``) and ignored,
  and the driver turns the reader's own polling off (``06 00``) when it connects.
* The 5-tag limit means a sixth card on one antenna (a premature card on a full
  board) may go unseen by a C1; wire the board over two antennas if that matters.

Line protocol ``DBX1`` for a shoe with its own microcontroller
===============================================================
For firmware authors. Serial 115200 8N1 by default, no flow control. ASCII only.

Line format (both directions)::

    $<body> *<CC>\\n

* ``$`` starts a line; ``\\n`` ends it (a ``\\r`` before it is ignored).
* ``<body>`` is fields separated by single spaces; it never contains ``$``, ``*``,
  ``\\r`` or ``\\n``. The first field is a one-letter message type.
* ``<CC>`` is the CRC-8 of the body bytes (between ``$`` and `` *``, exclusive) as two
  upper-case hex digits. CRC-8: polynomial 0x07, initial value 0x00, no reflection,
  no final XOR (CRC-8/SMBUS; ``crc8(b"123456789") == 0xF4``). Example::

      $T 1 17 04A3C6CAE26180 *41

  More complete lines to test firmware against: ``$H DBX1 1.2.0 2 *F5``,
  ``$E 1 17 1 *BB``, ``$E 2 17 0 *C7``, ``$B 123456 *A6``,
  ``$X ANT2 antenna 2 open *5E``, ``$? *BD``.

* A whole line is at most 96 bytes. Longer lines are discarded by the host.
* The host resynchronises on ``$``: text before the last ``$`` of a line is
  discarded, so a line cut short by a reset costs only itself.

Device to host:

``H <protocol> <firmware> <antennas>``
    Hello. ``<protocol>`` is ``DBX1``; ``<firmware>`` a version without spaces;
    ``<antennas>`` how many antennas the shoe scans. Sent at boot and in answer to
    ``?``. A host that receives another protocol name reports a fault.
``T <antenna> <seq> <uid>``
    A tag seen during scan ``<seq>`` of ``<antenna>``. ``<antenna>`` is decimal 1..8;
    ``<seq>`` is decimal 0..255, counted per antenna, one more at each scan, wrapping
    to 0 after 255; ``<uid>`` is the tag's UID in hex, 2 digits a byte (4, 7 or 10
    bytes for ISO 14443 tags; other lengths are passed on as they are). One ``T``
    line per tag per scan.
``E <antenna> <seq> <count>``
    End of scan ``<seq>`` of ``<antenna>``; ``<count>`` is how many ``T`` lines the
    firmware sent for this scan. The host takes the scan only when it received
    exactly that many valid ``T`` lines with this antenna and ``<seq>``; otherwise the
    scan is dropped and counted (``incomplete_scans``), so a lost line can never
    make a card look absent. An empty field is ``E <antenna> <seq> 0``. Each antenna
    should be reported at least every 250 ms, because absence is learnt only from
    complete scans.
``B <uptime_ms>``
    Heartbeat, at least once a second even when scans stop. Any valid line counts
    as a sign of life; with nothing valid for ``stall_timeout`` (default 2 s) the
    host reports a fault, reopens the port and sends ``?``.
``X <code> [text...]``
    The firmware reports a problem of its own (antenna open, RF chip reset...);
    ``<code>`` is a short word of the firmware's choosing, the text is free.
    Logged (rate-limited) and counted (``device_errors``); not a fault by itself.

Host to device:

``?``
    Request a hello line. The host sends it each time it opens the port.

The firmware must ignore lines it does not understand or whose CRC is wrong, and
must never wait for the host: it streams scans and heartbeats on its own.
"""

from __future__ import annotations

import enum
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
    "LINE_PROTOCOL",
    "PEPPER_STX",
    "PepperC1Reader",
    "PepperCommand",
    "PepperFrameParser",
    "ReaderSetupError",
    "SerialReaderCounters",
    "SerialTagReader",
    "ShoeLineReader",
    "LineParser",
    "crc8",
    "crc16_ccitt",
    "encode_line",
    "encode_pepper_frame",
]

log = logging.getLogger(__name__)


class ReaderSetupError(DealerboxError, ValueError):
    """A serial reader was constructed with arguments that cannot work (bad zones, URL...)."""


class _LinkError(Exception):
    """The link to the reader is unusable: no answer, stall, wrong protocol. Internal."""


class _CommandRefused(Exception):
    """The Pepper answered ERROR to a command. Internal."""

    def __init__(self, cmd: int, code: int):
        self.cmd, self.code = cmd, code
        super().__init__(f"command 0x{cmd:02X} refused with error 0x{code:04X}")


# -- checksums ---------------------------------------------------------------------


def _crc16_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


def _crc8_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) if crc & 0x80 else (crc << 1)
        table.append(crc & 0xFF)
    return tuple(table)


_CRC16 = _crc16_table()
_CRC8 = _crc8_table()


def crc16_ccitt(data, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE of *data*: the checksum of Pepper C1 frames (payload only)."""
    for byte in data:
        crc = _CRC16[((crc >> 8) ^ byte) & 0xFF] ^ ((crc << 8) & 0xFFFF)
    return crc


def crc8(data) -> int:
    """CRC-8 (polynomial 0x07, init 0): the checksum of ``DBX1`` lines."""
    crc = 0
    for byte in data:
        crc = _CRC8[crc ^ byte]
    return crc


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


def _no_log(kind: str, message: str, *args) -> None:
    return None


# -- Pepper C1 framing -------------------------------------------------------------

PEPPER_STX = 0xF5
PEPPER_ACK = 0x00
PEPPER_ASYNC = 0xFE
PEPPER_ERROR = 0xFF
#: Opcode this driver uses to switch the multiplexer (argument: antenna 1..8). Assumed, see above.
PEPPER_ANTENNA_SELECT = 0x0F


class PepperCommand(enum.IntEnum):
    """The Pepper C1 opcodes this driver sends (values from the vendor's command table)."""

    DUMMY = 0x01
    GET_TAG_COUNT = 0x02
    GET_UID = 0x03
    SET_POLLING = 0x06
    GET_VERSION = 0x0B
    ANTENNA = PEPPER_ANTENNA_SELECT


def encode_pepper_frame(payload: bytes) -> bytes:
    """One Pepper C1 frame around *payload* (command or answer)."""
    payload = bytes(payload)
    length = len(payload) + 2
    if not payload or length > 0xFFFF:
        raise ValueError(f"a Pepper payload has 1..65533 bytes, not {len(payload)}")
    lo, hi = length & 0xFF, length >> 8
    crc = crc16_ccitt(payload)
    return bytes((PEPPER_STX, lo, hi, lo ^ 0xFF, hi ^ 0xFF)) + payload + bytes((crc & 0xFF, crc >> 8))


class PepperFrameParser:
    """Cuts a Pepper C1 byte stream into payloads, skipping and counting what is not a frame.

    Feed it bytes as they come (:meth:`feed`); it keeps an incomplete frame for the
    next call. After a checksum failure it searches again from the byte after the
    failed header, so a false header in garbage cannot swallow a real frame. A failed
    frame whose span holds the header of another frame was cut short: it is counted in
    ``partial_frames``, otherwise in ``crc_errors``.
    """

    def __init__(self, counters: SerialReaderCounters | None = None, *, max_payload: int = 1024, report=_no_log):
        self.counters = counters if counters is not None else SerialReaderCounters()
        self.max_length = max_payload + 2
        self._report = report
        self._buf = bytearray()

    @property
    def pending(self) -> bool:
        """True while bytes of an unfinished frame are held."""
        return bool(self._buf)

    def _header_at(self, i: int) -> int | None:
        b = self._buf
        if b[i] != PEPPER_STX or b[i + 1] != b[i + 3] ^ 0xFF or b[i + 2] != b[i + 4] ^ 0xFF:
            return None
        length = b[i + 1] | (b[i + 2] << 8)
        return length if 3 <= length <= self.max_length else None

    def feed(self, data) -> list[bytes]:
        """Add received bytes; return the payloads of the frames they complete."""
        buf = self._buf
        buf += data
        out: list[bytes] = []
        c = self.counters
        while buf:
            start = buf.find(PEPPER_STX)
            if start < 0:
                c.garbage_bytes += len(buf)
                self._report("garbage", "%d bytes of garbage skipped", len(buf))
                buf.clear()
                break
            if start:
                c.garbage_bytes += start
                self._report("garbage", "%d bytes of garbage skipped", start)
                del buf[:start]
            if len(buf) < 5:
                break
            length = self._header_at(0)
            if length is None:
                if buf[1] == buf[3] ^ 0xFF and buf[2] == buf[4] ^ 0xFF:
                    c.overlong += 1
                    self._report("length", "frame header with impossible length %d skipped", buf[1] | buf[2] << 8)
                c.garbage_bytes += 1
                del buf[:1]
                continue
            end = 5 + length
            if len(buf) < end:
                break
            payload = bytes(buf[5:end - 2])
            if crc16_ccitt(payload) == buf[end - 2] | (buf[end - 1] << 8):
                c.frames += 1
                out.append(payload)
                del buf[:end]
                continue
            if any(self._header_at(i) is not None for i in range(1, min(end, len(buf) - 4))):
                c.partial_frames += 1
                self._report("partial", "frame cut short by the next one")
            else:
                c.crc_errors += 1
                self._report("crc", "frame with a bad CRC skipped")
            del buf[:1]
        return out

    def abandon_partial(self) -> list[bytes]:
        """Give up the unfinished frame held (the line went quiet); return frames found behind it."""
        if not self._buf:
            return []
        self.counters.partial_frames += 1
        self._report("partial", "unfinished frame dropped after the line went quiet")
        del self._buf[:1]
        return self.feed(b"")

    def reset(self) -> None:
        """Forget held bytes (the port was closed); an unfinished frame counts as partial."""
        if self._buf:
            self.counters.partial_frames += 1
        self._buf.clear()


# -- DBX1 line framing ---------------------------------------------------------------

LINE_PROTOCOL = "DBX1"
LINE_MAX = 96


def encode_line(body: str) -> bytes:
    """One ``DBX1`` line (``$body *CC\\n``) around *body*."""
    raw = body.encode("ascii")
    if any(ch in raw for ch in b"$*\r\n"):
        raise ValueError(f"a DBX1 body cannot contain $, *, CR or LF: {body!r}")
    return b"$" + raw + b" *%02X\n" % crc8(raw)


class LineParser:
    """Cuts a ``DBX1`` byte stream into checked line bodies, counting what it throws away."""

    def __init__(self, counters: SerialReaderCounters | None = None, *, max_line: int = LINE_MAX, report=_no_log):
        self.counters = counters if counters is not None else SerialReaderCounters()
        self.max_line = max_line
        self._report = report
        self._buf = bytearray()
        self._discarding = False  # inside an overlong line, waiting for its end

    def feed(self, data) -> list[str]:
        """Add received bytes; return the bodies of the valid lines they complete."""
        buf = self._buf
        buf += data
        out: list[str] = []
        while True:
            nl = buf.find(b"\n")
            if nl < 0:
                if len(buf) > self.max_line:
                    # Keep a line that may have started inside the junk; drop the rest.
                    start = buf.rfind(b"$")
                    if not self._discarding:
                        self._overlong()
                    if start >= 0 and len(buf) - start <= self.max_line:
                        del buf[:start]
                        self._discarding = False
                    else:
                        buf.clear()
                        self._discarding = True
                break
            line = bytes(buf[:nl])
            del buf[:nl + 1]
            if self._discarding:
                # The end of an overlong line; a line may still start after its last $.
                self._discarding = False
                start = line.rfind(b"$")
                if start < 0:
                    continue
                line = line[start:]
            if len(line) > self.max_line:
                start = line.rfind(b"$")
                self._overlong()
                if start < 0 or len(line) - start > self.max_line:
                    continue
                line = line[start:]
            body = self._check(line)
            if body is not None:
                out.append(body)
        return out

    def _overlong(self) -> None:
        self.counters.overlong += 1
        self._report("overlong", "line longer than %d bytes skipped", self.max_line)

    def _check(self, line: bytes) -> str | None:
        c = self.counters
        if line.endswith(b"\r"):
            line = line[:-1]
        start = line.rfind(b"$")
        if start < 0:
            if line:
                c.garbage_lines += 1
                self._report("garbage", "line without a $ start skipped: %r", line[:24])
            return None
        if start > 0:
            head = line[:start]
            if b"$" in head:
                c.partial_frames += 1
                self._report("partial", "line cut short by the next one: %r", head[:24])
            else:
                c.garbage_lines += 1
                self._report("garbage", "garbage before a line skipped: %r", head[:24])
            line = line[start:]
        if len(line) < 5 or line[-4:-2] != b" *":
            c.garbage_lines += 1
            self._report("garbage", "line without a checksum skipped: %r", line[:24])
            return None
        raw = line[1:-4]
        try:
            expected = int(line[-2:].decode("ascii"), 16)
            body = raw.decode("ascii")
        except (UnicodeDecodeError, ValueError):
            c.garbage_lines += 1
            self._report("garbage", "line with non-ASCII bytes skipped: %r", line[:24])
            return None
        if crc8(raw) != expected:
            c.crc_errors += 1
            self._report("crc", "line with a bad CRC skipped: %r", line[:24])
            return None
        c.frames += 1
        return body

    def reset(self) -> None:
        """Forget held bytes (the port was closed); an unfinished line counts as partial."""
        if self._buf and not self._discarding:
            self.counters.partial_frames += 1
        self._buf.clear()
        self._discarding = False


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
            except (serial.SerialException, OSError, _LinkError) as exc:
                self._fail(str(exc) or type(exc).__name__)

    def _close(self) -> None:
        with self._lock:
            self._drop_port()
            self._status = "closed"

    # -- hooks for subclasses -------------------------------------------------------
    def _handshake(self) -> None:
        """Called right after the port opened. Raise ``_LinkError`` (or let a
        SerialException through) when the reader does not answer. Must override."""
        raise NotImplementedError

    def _observe(self) -> dict[str, frozenset[str]]:
        """Read the reader and return ``{zone: uids}``. Link failures propagate as
        SerialException/OSError/``_LinkError``; bad data is counted, never raised.
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
        except (serial.SerialException, OSError, _LinkError) as exc:
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


# -- Pepper C1 -----------------------------------------------------------------------


class PepperC1Reader(SerialTagReader):
    """An Eccel Pepper C1 with up to 8 multiplexed antennas, polled over its binary protocol.

    Extra parameters: ``response_timeout`` (seconds to wait for each answer, default
    0.5 like the vendor library), ``retries`` (resends before declaring a fault,
    default 1), ``frame_gap`` (silence after which an unfinished frame is dropped),
    ``antenna_select`` (send the multiplexer command; ``False`` for a bare C1 with
    one antenna), ``max_payload`` (longest answer accepted).

    After connecting, :attr:`firmware_version` holds what GET_VERSION answered.
    Each ``poll()`` costs, per antenna, one select, one GET_TAG_COUNT and one GET_UID per tag.
    """

    port_timeout = 0.01  # one read() slice while waiting for an answer

    def __init__(self, url: str, antennas: Mapping[int, str], *, response_timeout: float = 0.5,
                 retries: int = 1, frame_gap: float = 0.05, antenna_select: bool = True,
                 max_payload: int = 1024, **kwargs):
        if response_timeout <= 0 or retries < 0 or frame_gap <= 0:
            raise ReaderSetupError("response_timeout and frame_gap must be > 0 and retries >= 0")
        self.response_timeout, self.retries, self.frame_gap = response_timeout, retries, frame_gap
        self.antenna_select = antenna_select
        self.firmware_version: str | None = None
        self._max_payload = max_payload
        self._parser: PepperFrameParser | None = None
        if not antenna_select and len(antennas) > 1:
            raise ReaderSetupError("without antenna_select a Pepper C1 serves exactly one antenna")
        super().__init__(url, antennas, **kwargs)

    def _get_parser(self) -> PepperFrameParser:
        if self._parser is None:
            self._parser = PepperFrameParser(self.counters, max_payload=self._max_payload, report=self._report)
        return self._parser

    # -- hooks ------------------------------------------------------------------------
    def _handshake(self) -> None:
        try:
            version = self._command(PepperCommand.GET_VERSION)
            self.firmware_version = version.decode("ascii", "replace").rstrip("\x00")
        except _CommandRefused:
            self.firmware_version = None  # it answered, so it is alive; the version is a nicety
        try:
            # Answers must come only when asked; unsolicited ASYNC frames would
            # interleave with them.
            self._command(PepperCommand.SET_POLLING, b"\x00")
        except _CommandRefused:
            pass
        log.info("%s: Pepper C1 firmware %s on %s", self.name, self.firmware_version, self.url)
        self._mark_ok()

    def _observe(self) -> dict[str, frozenset[str]]:
        seen: dict[str, set[str]] = {}
        missed: set[str] = set()
        for antenna, zone in self.antenna_zones.items():
            uids = self._read_antenna(antenna)
            if uids is None:
                missed.add(zone)
            else:
                seen.setdefault(zone, set()).update(uids)
        self._mark_ok()
        return {zone: frozenset(uids) for zone, uids in seen.items() if zone not in missed}

    def _link_lost(self) -> None:
        if self._parser is not None:
            self._parser.reset()

    # -- protocol -------------------------------------------------------------------
    def _select_antenna(self, antenna: int) -> None:
        self._command(PepperCommand.ANTENNA, bytes((antenna,)))

    def _read_antenna(self, antenna: int) -> frozenset[str] | None:
        """The UIDs in the field of *antenna*, or None when the reader refused a command."""
        try:
            if self.antenna_select:
                self._select_antenna(antenna)
            answer = self._command(PepperCommand.GET_TAG_COUNT)
            if len(answer) < 1:
                raise _CommandRefused(PepperCommand.GET_TAG_COUNT, 0xFFFF)
            uids = set()
            for index in range(answer[0]):
                info = self._command(PepperCommand.GET_UID, bytes((index,)))
                if len(info) < 3:  # type, parameter, then at least one UID byte
                    raise _CommandRefused(PepperCommand.GET_UID, 0xFFFF)
                uids.add(self._uid(antenna, info[2:]))
            return frozenset(uids)
        except _CommandRefused as exc:
            self.counters.command_errors += 1
            self._report("refused", "antenna %d: %s", antenna, exc)
            return None

    def _command(self, cmd: int, data: bytes = b"") -> bytes:
        """Send one command and return the answer's data (after ACK and echo)."""
        port = self._port
        if port is None:
            raise _LinkError("port closed")
        for attempt in range(1 + self.retries):
            if attempt and not self._resync(port):
                continue
            answer = self._exchange(port, cmd, data)
            if answer is not None:
                return answer
        raise _LinkError(f"no answer to command 0x{cmd:02X} after {1 + self.retries} tries")

    def _exchange(self, port, cmd: int, data: bytes = b"") -> bytes | None:
        """Send *cmd* once; its answer's data, or None (counted) when none came in time."""
        if port.in_waiting:  # leftovers are parsed (and counted) now, not taken for the answer
            self._absorb(port.read(port.in_waiting), None)
        port.write(encode_pepper_frame(bytes((cmd,)) + data))
        answer = self._await(port, cmd)
        if answer is None:
            self.counters.timeouts += 1
            self._report("timeout", "no answer to command 0x%02X within %.3f s", cmd, self.response_timeout)
        return answer

    def _resync(self, port) -> bool:
        """After a lost answer: fence the link with DUMMY before resending.

        An answer echoes only the opcode, so a late answer to the first try could be
        taken for the answer to the resend (or to the next GET_UID). The reader
        answers in order, so once DUMMY's answer is in, every older answer is too and
        has been set aside as unexpected.
        """
        try:
            return self._exchange(port, PepperCommand.DUMMY) is not None
        except _CommandRefused:
            return True  # an answer all the same: the link is in step

    def _absorb(self, data: bytes, cmd: int | None) -> bytes | None:
        """Parse *data*; return the answer to *cmd* if it is among the frames."""
        return self._sort(self._get_parser().feed(data), cmd) if data else None

    def _sort(self, payloads: list[bytes], cmd: int | None) -> bytes | None:
        """Pick the answer to *cmd* out of *payloads*; count the others as unexpected."""
        answer = refused = None
        for payload in payloads:
            if (answer is None and refused is None and cmd is not None and len(payload) >= 2
                    and payload[1] == cmd and payload[0] in (PEPPER_ACK, PEPPER_ERROR)):
                if payload[0] == PEPPER_ACK:
                    answer = payload[2:]
                else:
                    code = int.from_bytes(payload[2:4], "big") if len(payload) > 2 else 0
                    refused = _CommandRefused(cmd, code)
                continue
            self.counters.unexpected_frames += 1
            if payload[:2] == bytes((PEPPER_ERROR, PEPPER_ERROR)):
                self._report("nak", "reader says a command of ours arrived damaged")
            else:
                self._report("unexpected", "frame nobody waited for skipped: %s", payload[:8].hex())
        if refused is not None:
            raise refused
        return answer

    def _await(self, port, cmd: int) -> bytes | None:
        deadline = time.monotonic() + self.response_timeout
        last_byte = time.monotonic()
        parser = self._get_parser()
        while True:
            chunk = port.read(1)
            now = time.monotonic()
            if chunk:
                if port.in_waiting:
                    chunk += port.read(port.in_waiting)
                last_byte = now
                answer = self._absorb(chunk, cmd)
                if answer is not None:
                    return answer
            elif parser.pending and now - last_byte >= self.frame_gap:
                last_byte = now
                answer = self._sort(parser.abandon_partial(), cmd)
                if answer is not None:
                    return answer
            if now >= deadline:
                return None


# -- DBX1 line-protocol shoe -------------------------------------------------------


class ShoeLineReader(SerialTagReader):
    """A shoe (or any antenna board) whose microcontroller streams the ``DBX1`` line protocol.

    Extra parameters: ``stall_timeout`` (seconds without a valid line before a fault,
    default 2.0), ``max_line`` (longest accepted line, default 96).

    ``poll()`` reads what has arrived without waiting. A zone is in the result when
    each of its antennas completed a scan since the previous poll; its UIDs are the
    union of those scans, so a card that slid past an antenna between two polls is
    still reported once. :attr:`hello` holds the last hello line as
    ``(protocol, firmware, antennas)``.
    """

    port_timeout = 0.0  # poll() never waits for bytes

    def __init__(self, url: str, antennas: Mapping[int, str], *, stall_timeout: float = 2.0,
                 max_line: int = LINE_MAX, **kwargs):
        if stall_timeout <= 0:
            raise ReaderSetupError("stall_timeout must be > 0")
        self.stall_timeout = stall_timeout
        self.hello: tuple[str, str, int] | None = None
        self._max_line = max_line
        self._parser: LineParser | None = None
        self._pending: dict[tuple[int, int], list[str]] = {}  # (antenna, seq) -> UIDs
        self._fresh: dict[int, set[str]] = {}  # antenna -> union of scans since the last poll
        self._last_alive = 0.0
        super().__init__(url, antennas, **kwargs)

    def _get_parser(self) -> LineParser:
        if self._parser is None:
            self._parser = LineParser(self.counters, max_line=self._max_line, report=self._report)
        return self._parser

    def _handshake(self) -> None:
        self._last_alive = self._clock()
        self._port.write(encode_line("?"))

    def _link_lost(self) -> None:
        if self._parser is not None:
            self._parser.reset()
        self._pending.clear()
        self._fresh.clear()

    def _observe(self) -> dict[str, frozenset[str]]:
        port = self._port
        data = port.read(65536)
        now = self._clock()
        if data:
            for body in self._get_parser().feed(data):
                if self._handle(body):
                    self._last_alive = now
                    self._mark_ok()
        if now - self._last_alive > self.stall_timeout:
            raise _LinkError(f"no valid line for {now - self._last_alive:.2f} s")
        out: dict[str, frozenset[str]] = {}
        for zone, antennas in self._zone_antennas.items():
            # A zone waits until each of its antennas finished a scan; what one of them
            # saw meanwhile is kept (as a union) for that poll.
            if all(a in self._fresh for a in antennas):
                out[zone] = frozenset().union(*(self._fresh.pop(a) for a in antennas))
        for antenna in [a for a in self._fresh if a not in self.antenna_zones]:
            del self._fresh[antenna]
        return out

    def _handle(self, body: str) -> bool:
        """Act on one checked line; False when it is not a well-formed DBX1 message."""
        f = body.split(" ")
        kind = f[0]
        try:
            if kind == "T" and len(f) == 4:
                antenna, seq = int(f[1]), int(f[2])
                raw = bytes.fromhex(f[3])  # not hex: ValueError, a garbage line
                if not raw:
                    raise ValueError("empty UID")
                uid = self._uid(antenna, raw)
                key = (antenna, seq)
                if key not in self._pending and len(self._pending) >= 64:
                    self._pending.clear()  # E lines keep getting lost; bound the memory
                pending = self._pending.setdefault(key, [])
                if len(pending) < 64:
                    pending.append(uid)
                return True
            if kind == "E" and len(f) == 4:
                antenna, seq, count = int(f[1]), int(f[2]), int(f[3])
                got = self._pending.pop((antenna, seq), [])
                for key in [k for k in self._pending if k[0] == antenna]:
                    del self._pending[key]  # older scans of this antenna whose E line was lost
                if len(got) == count:
                    self._fresh.setdefault(antenna, set()).update(got)
                else:
                    self.counters.incomplete_scans += 1
                    self._report("scan", "antenna %d: scan %d announced %d tags, %d arrived; dropped",
                                 antenna, seq, count, len(got))
                return True
            if kind == "B" and len(f) == 2:
                int(f[1])
                return True
            if kind == "H" and len(f) == 4:
                protocol, firmware, antennas = f[1], f[2], int(f[3])
                if protocol != LINE_PROTOCOL:
                    raise _LinkError(f"shoe speaks {protocol!r}, not {LINE_PROTOCOL}")
                if self.hello != (protocol, firmware, antennas):
                    log.info("%s: shoe firmware %s, %d antennas, protocol %s", self.name, firmware, antennas, protocol)
                self.hello = (protocol, firmware, antennas)
                return True
            if kind == "X" and len(f) >= 2:
                self.counters.device_errors += 1
                self._report("device", "shoe reports: %s", " ".join(f[1:]))
                return True
        except ValueError:
            pass
        self.counters.garbage_lines += 1
        self._report("garbage", "line not understood: %r", body[:40])
        return False
