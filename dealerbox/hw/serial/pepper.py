"""The Eccel Pepper C1 on a serial port: its binary frames and :class:`PepperC1Reader`.

The reader is polled command by command, one antenna of the multiplexer after the
other. What ``poll()`` returns, the faults it raises and how bad input is counted
are :mod:`dealerbox.hw.serial.base`'s.

The binary protocol (as implemented here)
=========================================
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
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Mapping

from dealerbox.hw.serial.base import LinkError, ReaderSetupError, SerialReaderCounters, SerialTagReader, no_report

__all__ = [
    "PEPPER_STX",
    "PepperC1Reader",
    "PepperCommand",
    "PepperFrameParser",
    "crc16_ccitt",
    "encode_pepper_frame",
]

log = logging.getLogger(__name__)


class _CommandRefused(Exception):
    """The Pepper answered ERROR to a command. Internal."""

    def __init__(self, cmd: int, code: int):
        self.cmd, self.code = cmd, code
        super().__init__(f"command 0x{cmd:02X} refused with error 0x{code:04X}")


# -- checksum ------------------------------------------------------------------------


def _crc16_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


_CRC16 = _crc16_table()


def crc16_ccitt(data, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE of *data*: the checksum of Pepper C1 frames (payload only)."""
    for byte in data:
        crc = _CRC16[((crc >> 8) ^ byte) & 0xFF] ^ ((crc << 8) & 0xFFFF)
    return crc


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

    def __init__(self, counters: SerialReaderCounters | None = None, *, max_payload: int = 1024, report=no_report):
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
            raise LinkError("port closed")
        for attempt in range(1 + self.retries):
            if attempt and not self._resync(port):
                continue
            answer = self._exchange(port, cmd, data)
            if answer is not None:
                return answer
        raise LinkError(f"no answer to command 0x{cmd:02X} after {1 + self.retries} tries")

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
