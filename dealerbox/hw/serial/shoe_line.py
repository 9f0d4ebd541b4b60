"""A shoe with its own microcontroller on a serial port: the ``DBX1`` line protocol and :class:`ShoeLineReader`.

The shoe's firmware streams its scans; the host never asks for them. What ``poll()``
returns, the faults it raises and how bad input is counted are
:mod:`dealerbox.hw.serial.base`'s.

Line protocol ``DBX1``
======================
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

import logging
from collections.abc import Mapping

from dealerbox.hw.serial.base import LinkError, ReaderSetupError, SerialReaderCounters, SerialTagReader, no_report

__all__ = [
    "LINE_PROTOCOL",
    "LineParser",
    "ShoeLineReader",
    "crc8",
    "encode_line",
]

log = logging.getLogger(__name__)


# -- checksum ------------------------------------------------------------------------


def _crc8_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) if crc & 0x80 else (crc << 1)
        table.append(crc & 0xFF)
    return tuple(table)


_CRC8 = _crc8_table()


def crc8(data) -> int:
    """CRC-8 (polynomial 0x07, init 0): the checksum of ``DBX1`` lines."""
    crc = 0
    for byte in data:
        crc = _CRC8[crc ^ byte]
    return crc


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

    def __init__(self, counters: SerialReaderCounters | None = None, *, max_line: int = LINE_MAX, report=no_report):
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
            raise LinkError(f"no valid line for {now - self._last_alive:.2f} s")
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
                    raise LinkError(f"shoe speaks {protocol!r}, not {LINE_PROTOCOL}")
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
