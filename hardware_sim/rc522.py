"""A register-level emulator of the NXP MFRC522 (RC522) and the ISO 14443-3A tags in its field.

It stands in for an open ``spidev.SpiDev``: the dealerbox driver (and the stock
``mfrc522`` code it builds on) talk to it exactly as they would to
``/dev/spidevB.D``, byte for byte. An :class:`RC522Emulator` *is* such an SPI
device (``open``, ``xfer2``, ``close``, ``max_speed_hz``, ``mode``), handed to a
driver as its bus (``spi=``, or :mod:`dealerbox.hw.buses`); no module is ever
swapped for it. Nothing here is chosen by default.

Section numbers below are those of the MFRC522 datasheet (NXP, rev. 3.9) and, for
the tags, of ISO/IEC 14443-3 and the NTAG203 / NTAG21x datasheets.
``tests/sim/test_rc522.py`` checks each behaviour against the section it cites.

Chip side (what is modelled):

- SPI framing (8.1.2): the first byte is the address (bit 7 = read); a write transfer
  writes every following byte to that one register, in order (a FIFO burst, or
  CommandReg Idle then Transceive in one transfer); a read transfer returns, for
  each following byte, the register named by the byte before it. Each byte happens
  at its own time on the wire, so a long read sees the chip change under it.
- Registers: CommandReg, ComIEnReg, ComIrqReg/DivIrqReg (bit 7 Set1/Set2, 9.3.1.5-6),
  ErrorReg (9.3.1.7: ProtocolErr, ParityErr, CRCErr, CollErr, BufferOvfl, WrErr;
  ErrIRq follows it), Status1Reg, FIFODataReg/FIFOLevelReg (8.3: 64 bytes,
  FlushBuffer, overflow), ControlReg (RxLastBits, TStartNow/TStopNow), BitFramingReg
  (TxLastBits, RxAlign, StartSend), CollReg (ValuesAfterColl, CollPosNotValid,
  CollPos), ModeReg (CRC preset), TxModeReg/RxModeReg (TxCRCEn, RxCRCEn),
  TxControlReg (antenna), the timer (8.5, 9.3.3.10-12: TAuto, TAutoRestart,
  TPrescaler, TReload, TCounterVal), CRCResultReg, VersionReg (0x92). Other
  registers just store what is written.
- Commands (10.3.1) Idle, CalcCRC (CRC_A with the ModeReg preset), Transceive and
  SoftReset; others are stored and counted in ``unmodelled_commands``. Transceive
  (10.3.1.8) stays active: it transmits when StartSend is written, then receives;
  after a frame has been received it waits for the next StartSend. While the
  receiver still waits for an answer (e.g. after the timer fired) StartSend does
  nothing (counted in ``ignored_start_sends``): a driver restarts the command.

Time is *emulated*, so results are deterministic: every SPI transfer costs the
host's per-transfer overhead (:class:`HostBus`: ``PI4`` 50 us, ``PI5`` 25 us) plus
its bytes at the SPI clock; frames take their air time at 106 kbit/s, a tag answers
after the ISO frame delay (about 91 us), the TAuto timer starts when a transmission
ends and stops when an answer starts. ``now_us`` is the chip's clock, ``bus_us`` the
part of it spent on SPI, ``air_us`` the part the RF field was busy. With a *clock*
(e.g. ``time.monotonic``) the chip's clock never lags that clock, and with
``pace=True`` a transfer also takes at least its modelled time in real time, so a
live daemon on the emulator pays a Pi's bus time (:func:`charge_bus_time`).

Card side: :class:`SimulatedTag` implements the ISO 14443-3A state machine as NTAG
tags do (IDLE, READY1/2/3, ACTIVE, HALT, and READY*/ACTIVE* of a tag woken from HALT):
REQA, WUPA (ATQA), anticollision at each cascade level with partial-bit frames,
SELECT (SAK, CRC_A checked), HLTA. With ``strict`` (the default), any frame a tag
does not expect in READY or ACTIVE sends it back to IDLE, or to HALT when it was
woken from HALT (NTAG203 8.2.2-8.2.3, NTAG213F/216F 8.4.4), including a SELECT of
another tag's UID; ``strict=False`` keeps the old, kinder tags that stay READY then.
A tag answers only ``power_up_us`` after it enters a powered field (ISO 14443-3
section 5 allows a PICC up to 5 ms; the default is 1 ms when the chip follows a
clock, see :class:`RC522Emulator`). Per tag: ``loss`` (the tag
misses a reader frame), ``garble`` (its answer arrives with a parity error, or a bad
start of frame: ParityErr / ProtocolErr) and ``collide`` (its answer is hit by
interference at a random bit: CollErr). Several tags answering at once are combined
bit by bit like a real receiver: the FIFO gets the OR of the answers, ErrorReg
CollErr and CollReg the position of the first colliding bit (in FIFO bit positions,
RxAlign included; 1..32, 32 encoded as 0). With ValuesAfterColl cleared, the bits
after the first collision read as 0.

Test-only methods put tags in and out of the field (:meth:`RC522Emulator.place`,
:meth:`~RC522Emulator.remove`, :meth:`~RC522Emulator.remove_after`), let chip time
pass (:meth:`~RC522Emulator.advance`), make the whole field flaky (``dropout``: each
tag misses a REQA/WUPA and everything up to the next one; ``loss``: the default
per-frame loss of tags placed), or cut the SPI lines (:meth:`~RC522Emulator.unplug`).
``transfers`` counts SPI transfers, ``frames`` RF frames, and ``history`` keeps the
last frames sent to the tags.
"""

from __future__ import annotations

import errno
import math
import random
import time
from collections import deque
from dataclasses import dataclass

# -- registers (datasheet table 20) ---------------------------------------------
COMMAND, COM_IEN, DIV_IEN, COM_IRQ, DIV_IRQ, ERROR, STATUS1, STATUS2 = range(0x01, 0x09)
FIFO_DATA, FIFO_LEVEL, WATER_LEVEL, CONTROL, BIT_FRAMING, COLL = range(0x09, 0x0F)
MODE, TX_MODE, RX_MODE, TX_CONTROL, TX_ASK = range(0x11, 0x16)
CRC_RESULT_H, CRC_RESULT_L = 0x21, 0x22
T_MODE, T_PRESCALER, T_RELOAD_H, T_RELOAD_L, T_COUNTER_H, T_COUNTER_L = range(0x2A, 0x30)
VERSION = 0x37

# -- commands -------------------------------------------------------------------
CMD_IDLE, CMD_CALC_CRC, CMD_TRANSCEIVE, CMD_SOFT_RESET = 0x0, 0x3, 0xC, 0xF

# -- bits ------------------------------------------------------------------------
IRQ_TIMER, IRQ_ERR, IRQ_LOALERT, IRQ_HIALERT, IRQ_IDLE, IRQ_RX, IRQ_TX = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40
DIV_CRC = 0x04
ERR_PROTOCOL, ERR_PARITY, ERR_CRC, ERR_COLL, ERR_BUFFER_OVFL, ERR_TEMP, ERR_WR = 0x01, 0x02, 0x04, 0x08, 0x10, 0x40, 0x80
# Cleared when the receiver starts up (9.3.1.7); BufferOvfl only by FlushBuffer.
_RX_ERRORS = ERR_PROTOCOL | ERR_PARITY | ERR_CRC | ERR_COLL
CRC_EN = 0x80  # TxModeReg TxCRCEn, RxModeReg RxCRCEn

# -- ISO 14443-3A ---------------------------------------------------------------
REQA, WUPA, HLTA, CASCADE_TAG = 0x26, 0x52, 0x50, 0x88
SEL = (0x93, 0x95, 0x97)
SAK_CASCADE = 0x04

FC_MHZ = 13.56
BIT_US = 128 / FC_MHZ          # one bit at 106 kbit/s
FDT_US = 1236 / FC_MHZ         # frame delay time before a tag's answer (ISO 14443-3 6.2.1.1)
FIFO_SIZE = 64
VERSION_VALUE = 0x92
POWER_UP_US = 1000.0           # a tag's default wait after entering the field; ISO allows 5 ms


@dataclass(frozen=True)
class HostBus:
    """What one SPI transfer costs the host besides its bytes' time on the wire.

    ``transfer_us`` is one ``spidev.xfer2`` call from Python: the syscall, the
    kernel's SPI driver and chip select, measured in the tens of microseconds.
    """

    name: str
    transfer_us: float


PI4 = HostBus("pi4", 50.0)
PI5 = HostBus("pi5", 25.0)


def air_time_us(nbits: int) -> float:
    """Air time of an ISO 14443-A frame of *nbits* data bits (parity, SOF and EOF added)."""
    return (nbits + nbits // 8 + 2) * BIT_US


_RESET_VALUES = {
    COMMAND: 0x20, COM_IEN: 0x80, DIV_IEN: 0x00, WATER_LEVEL: 0x08, CONTROL: 0x10,
    BIT_FRAMING: 0x00, COLL: 0x80, MODE: 0x3F, TX_MODE: 0x00, RX_MODE: 0x00,
    TX_CONTROL: 0x80, TX_ASK: 0x00, 0x16: 0x10, 0x17: 0x84, 0x18: 0x84, 0x19: 0x4D,
    0x1C: 0x62, CRC_RESULT_H: 0xFF, CRC_RESULT_L: 0xFF, 0x24: 0x26, 0x26: 0x48,
    0x27: 0x88, 0x28: 0x20, 0x29: 0x20, T_MODE: 0x00, T_PRESCALER: 0x00,
    T_RELOAD_H: 0x00, T_RELOAD_L: 0x00, VERSION: VERSION_VALUE,
}


def crc_a(data, preset: int = 0x6363) -> bytes:
    """ISO/IEC 14443-3 CRC_A of *data*, low byte first as it goes on air."""
    crc = preset
    for byte in data:
        byte ^= crc & 0xFF
        byte = (byte ^ (byte << 4)) & 0xFF
        crc = (crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)
    return bytes((crc & 0xFF, crc >> 8))


def bcc(block) -> int:
    """Block check character of a 4-byte UID part: their XOR."""
    value = 0
    for b in block:
        value ^= b
    return value


def _to_bits(data, count: int | None = None) -> list[int]:
    bits = [(byte >> i) & 1 for byte in data for i in range(8)]
    return bits if count is None else bits[:count]


def _pack(bits, align: int = 0) -> tuple[bytes, int]:
    """Bits (first on air first) into bytes starting at bit *align*; returns (bytes, valid bits of the last byte, 0 = 8)."""
    total = align + len(bits)
    out = bytearray(math.ceil(total / 8))
    for i, bit in enumerate(bits):
        if bit:
            pos = align + i
            out[pos // 8] |= 1 << (pos % 8)
    return bytes(out), total % 8


# -- tags -------------------------------------------------------------------------
IDLE, READY, ACTIVE, HALT = "idle", "ready", "active", "halt"


@dataclass(eq=False)
class SimulatedTag:
    """One ISO 14443-3A tag. ``state`` and ``level`` follow ISO/IEC 14443-3 section 6.3
    (READY with ``level`` 1, 2, 3 is NTAG's READY1, READY2...; ``woken`` marks the
    READY*/ACTIVE* states of a tag woken from HALT).

    ``corrupt_bcc`` makes the tag send a wrong BCC at every cascade level and
    ``corrupt_crc`` a wrong CRC_A after its SAK: both are faults a driver must reject.
    ``loss``, ``garble`` and ``collide`` are probabilities per frame (see the module
    docstring); ``ready_at_us`` is when, on the chip's clock, it can first answer.
    """

    uid: bytes
    sak: int
    atqa: bytes
    corrupt_bcc: bool = False
    corrupt_crc: bool = False
    state: str = IDLE
    woken: bool = False
    level: int = 1
    loss: float = 0.0
    garble: float = 0.0
    collide: float = 0.0
    power_up_us: float | None = None     # None: the chip's default
    ready_at_us: float = 0.0

    @property
    def levels(self) -> int:
        return {4: 1, 7: 2, 10: 3}[len(self.uid)]

    @property
    def iso_state(self) -> str:
        """The state as the NTAG datasheets name it: IDLE, READY1, READY2*, ACTIVE*, HALT..."""
        name = f"READY{self.level}" if self.state == READY else self.state.upper()
        return name + ("*" if self.woken and self.state in (READY, ACTIVE) else "")

    def block(self, level: int) -> bytes:
        """The 5 bytes a tag sends at cascade *level* (1-based): UID part + BCC."""
        u = self.uid
        parts = {4: [u], 7: [bytes([CASCADE_TAG]) + u[:3], u[3:]],
                 10: [bytes([CASCADE_TAG]) + u[:3], bytes([CASCADE_TAG]) + u[3:6], u[6:]]}[len(u)]
        part = parts[level - 1]
        check = bcc(part) ^ (0x01 if self.corrupt_bcc else 0)
        return part + bytes([check])

    def power_off(self) -> None:
        self.state, self.woken, self.level = IDLE, False, 1

    def _fall_back(self) -> None:
        # NTAG203 8.2.2-8.2.3 / NTAG213F/216F 8.4.4: data a tag does not expect in
        # READY1/2 or ACTIVE is an error; it returns to IDLE, or to HALT when WUPA
        # had woken it from HALT.
        self.state = HALT if self.woken else IDLE
        self.level = 1

    def hear(self, data: bytes, nbits: int, strict: bool = True) -> list[int] | None:
        """React to one reader frame; return the answer's bits or None for silence."""
        if not data:
            return None
        if nbits == 7 and len(data) == 1:
            cmd = data[0] & 0x7F
            if cmd == REQA and self.state == IDLE or cmd == WUPA and self.state in (IDLE, HALT):
                self.woken = self.state == HALT
                self.state, self.level = READY, 1
                return _to_bits(self.atqa)
            if self.state in (READY, ACTIVE):
                self._fall_back()
            return None
        if self.state in (IDLE, HALT):
            return None  # NTAG203 8.2.1, NTAG213F/216F 8.4.6: anything else leaves IDLE/HALT unchanged
        if nbits == 32 and len(data) == 4 and data[0] == HLTA and data[1] == 0 and crc_a(data[:2]) == data[2:]:
            if self.state == ACTIVE:
                self.state, self.level = HALT, 1
            else:
                self._fall_back()
            return None
        if self.state == READY and len(data) >= 2 and data[0] in SEL:
            level = SEL.index(data[0]) + 1
            if level != self.level:
                self._fall_back()
                return None
            nvb = data[1]
            mine = self.block(level)
            if nvb == 0x70:
                if nbits != 72 or crc_a(data[:7]) != data[7:9]:
                    if strict:
                        self._fall_back()  # a damaged frame is an error too
                    return None
                if data[2:7] != mine:
                    if strict:
                        self._fall_back()  # another tag's SELECT: NTAG203 8.2.2 "any other data"
                    return None
                if level < self.levels:
                    sak = SAK_CASCADE
                    self.level += 1
                else:
                    sak = self.sak & ~SAK_CASCADE & 0xFF
                    self.state = ACTIVE
                check = bytearray(crc_a([sak]))
                if self.corrupt_crc:
                    check[0] ^= 0x5A
                return _to_bits(bytes([sak]) + bytes(check))
            nbytes, extra = nvb >> 4, nvb & 0x0F
            known = (nbytes - 2) * 8 + extra
            if not (2 <= nbytes <= 6 and extra <= 7 and 0 <= known < 40) or nbits != known + 16:
                self._fall_back()
                return None
            mine_bits = _to_bits(mine)
            if _to_bits(data[2:], known) != mine_bits[:known]:
                return None  # ISO 14443-3 6.4.3.2: not matching the known bits, stays silent in READY
            return mine_bits[known:]
        self._fall_back()
        return None


def make_tag(uid, *, sak: int | None = None, atqa=None, corrupt_bcc: bool = False,
             corrupt_crc: bool = False, loss: float = 0.0, garble: float = 0.0, collide: float = 0.0,
             power_up_us: float | None = None) -> SimulatedTag:
    """A tag with a 4-, 7- or 10-byte *uid* (bytes or hex) and typical ATQA/SAK for its size."""
    raw = bytes.fromhex(uid) if isinstance(uid, str) else bytes(uid)
    if len(raw) not in (4, 7, 10):
        raise ValueError(f"a tag UID has 4, 7 or 10 bytes, not {len(raw)}")
    for name, p in (("loss", loss), ("garble", garble), ("collide", collide)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name} is a probability between 0 and 1, not {p!r}")
    if power_up_us is not None and power_up_us < 0:
        raise ValueError(f"power_up_us must not be negative, not {power_up_us!r}")
    size_bits = {4: 0, 7: 1, 10: 2}[len(raw)]
    if atqa is None:
        atqa = bytes([(size_bits << 6) | 0x04, 0x00])
    if sak is None:
        sak = {4: 0x08, 7: 0x00, 10: 0x20}[len(raw)]
    return SimulatedTag(raw, sak, bytes(atqa), corrupt_bcc, corrupt_crc, loss=loss, garble=garble,
                        collide=collide, power_up_us=power_up_us)


# -- the chip ---------------------------------------------------------------------
@dataclass
class _Exchange:
    tx_end: float
    rx_begin: float | None
    rx_end: float | None
    data: bytes = b""
    last_bits: int = 0
    errors: int = 0
    coll: int | None = None     # CollReg low bits to show, None = no collision
    tx_done: bool = False
    rx_started: bool = False


_NEVER = math.inf
_READ_COM_IRQ = 0x80 | (COM_IRQ << 1)
_READ_COM_IRQ_BYTE = bytes([_READ_COM_IRQ])


class RfField:
    """The tags in an antenna's field and what they answer to one reader frame.

    It owns the tags (``tags``, by UID), the ones due to leave after a number of
    frames, the per-wake dropouts and the random faults (each tag's ``loss`` per
    frame, *dropout* per wake, ``garble`` and ``collide``); *strict* tags fall back
    on unexpected frames. The chip (:class:`RC522Emulator`) owns the time, the power
    and what reaches its registers.
    """

    def __init__(self, *, strict: bool, dropout: float, rng: random.Random):
        self.strict = strict
        self.dropout = dropout
        self.rng = rng
        self.tags: dict[bytes, SimulatedTag] = {}
        self._removals: list[tuple[int, bytes]] = []
        self._deaf: set[bytes] = set()

    def remove(self, key: bytes) -> None:
        self.tags.pop(key, None)
        self._deaf.discard(key)

    def remove_after(self, key: bytes, frame: int) -> None:
        """The tag leaves once frame number *frame* has been sent."""
        self._removals.append((frame, key))

    def clear(self) -> None:
        self.tags.clear()
        self._deaf.clear()
        self._removals.clear()

    def hear(self, data: bytes, nbits: int, frame: int, now_us: float) -> list:
        """(tag, answer bits) of every tag that hears frame number *frame* and answers it."""
        for _, key in [r for r in self._removals if r[0] < frame]:
            self.remove(key)
        self._removals = [r for r in self._removals if r[0] >= frame]
        rng = self.rng
        if nbits == 7 and len(data) == 1:
            self._deaf = {u for u in self.tags if self.dropout and rng.random() < self.dropout}
        answers = []
        for uid, tag in self.tags.items():
            if uid in self._deaf or now_us < tag.ready_at_us:
                continue
            if tag.loss and rng.random() < tag.loss:
                continue       # too little coupling: the tag misses the frame
            bits = tag.hear(data, nbits, self.strict)
            if bits is not None:
                answers.append((tag, bits))
        return answers

    def superpose(self, answers: list) -> tuple[list[int], int, int | None]:
        """The bits the receiver gets from *answers* sent at once: (bits, ErrorReg flags,
        first collision bit or None). A garbled answer breaks a byte's parity or its start."""
        length = max(len(bits) for _, bits in answers)
        errors, first_coll = 0, None
        answers_bits = []
        for tag, bits in answers:
            bits = list(bits)
            if tag.garble and self.rng.random() < tag.garble:
                where = self.rng.randrange(-1, len(bits))
                if where < 0:
                    errors |= ERR_PROTOCOL     # a bad start of frame (9.3.1.7)
                else:
                    bits[where] ^= 1
                    errors |= ERR_PARITY       # the flipped bit breaks its byte's parity
            if tag.collide and self.rng.random() < tag.collide:
                hit = self.rng.randrange(len(bits))
                first_coll = hit if first_coll is None else min(first_coll, hit)
            answers_bits.append(bits)
        combined = []
        for i in range(length):
            values = {bits[i] for bits in answers_bits if i < len(bits)}
            if len(values) > 1 and (first_coll is None or i < first_coll):
                first_coll = i
            combined.append(1 if 1 in values else 0)
        return combined, errors, first_coll


class EmulatedSpiDevice:
    """An SPI device as ``spidev.SpiDev`` shows it, on a host that pays for every transfer.

    It owns the spidev API (``open``, ``xfer2``, ``xfer``, ``writebytes``, ``close``,
    ``max_speed_hz``, ``mode``), the time on the device's clock (``now_us``: each
    transfer costs ``transfer_us``, then 8 SPI clock periods a byte; with *clock* it
    also follows real time, and with *pace* it sleeps until real time catches up),
    the counts (``transfers``, ``bus_us``) and the loose cable (:meth:`unplug`).

    A subclass must override :meth:`_transfer_bytes`, which gets the bytes of one
    transfer (chip select held) and returns what the device shifts out.
    """

    def __init__(self, bus: int, device: int, *, host: HostBus, transfer_us: float | None, clock, pace: bool):
        if pace and clock is None:
            raise ValueError("pace needs a clock to pace against")
        self.bus, self.device = bus, device
        self.host = host
        self.transfer_us = host.transfer_us if transfer_us is None else transfer_us
        self.clock = clock
        self.pace = pace
        self._clock_origin = clock() if clock is not None else 0.0
        self.transfers = 0
        self.now_us = 0.0
        self.bus_us = 0.0
        self.plugged = True
        self.miso_idle = 0x00
        # spidev-like attributes
        self.mode = 0
        self.max_speed_hz = 0
        self.bits_per_word = 0
        self._opened = False

    def unplug(self, miso: int = 0x00) -> None:
        """Cut the SPI lines like a loose cable: writes are lost and every byte read is
        *miso* (0x00 with a pull-down or a floating line, 0xFF with a pull-up)."""
        self.plugged = False
        self.miso_idle = miso & 0xFF

    def plug(self) -> None:
        self.plugged = True

    # -- spidev.SpiDev API ---------------------------------------------------------------
    def open(self, bus: int, device: int) -> None:
        if (bus, device) != (self.bus, self.device):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", f"/dev/spidev{bus}.{device}")
        self._opened = True
        self.max_speed_hz = self.max_speed_hz or 500_000
        self.bits_per_word = 8

    def close(self) -> None:
        self._opened = False

    def xfer2(self, data, speed_hz: int = 0, delay_usec: int = 0, bits_per_word: int = 0) -> list[int]:
        if not self._opened:
            raise OSError(errno.EBADF, "Bad file descriptor")
        reply = self.transfer(data, speed_hz or self.max_speed_hz)
        self.pace_host()
        return reply

    # Real py-spidev may release chip select between bytes in xfer(); both drivers use
    # xfer2, so xfer is treated as xfer2 here.
    xfer = xfer2

    def writebytes(self, data) -> None:
        self.xfer2(data)

    # -- time -----------------------------------------------------------------------------
    def _wall_us(self) -> float:
        return (self.clock() - self._clock_origin) * 1e6

    def _follow_clock(self) -> None:
        if self.clock is not None:
            wall = self._wall_us()
            if wall > self.now_us:
                self.now_us = wall

    def pace_host(self) -> None:
        """With ``pace``: sleep until real time catches up with the chip's clock.

        Called by the SPI entry points after a transfer, outside any lock a
        thread-safe subclass holds around :meth:`transfer`.
        """
        if not self.pace:
            return
        ahead = self.now_us - self._wall_us()
        if ahead > 200.0:   # sleeping in smaller slices than this costs more than it models
            time.sleep(ahead / 1e6)

    # -- the SPI transfer -------------------------------------------------------------------
    def transfer(self, data, speed_hz: int = 1_000_000) -> list[int]:
        """One SPI transfer with chip select held; returns the MISO bytes.

        The transfer costs ``transfer_us`` (before its first byte) and then each byte
        its 8 clock periods; every byte acts at the chip-clock time it ends.
        """
        try:
            data = bytes(data)
        except (ValueError, TypeError):
            data = bytes(int(b) & 0xFF for b in data)
        self.transfers += 1
        self._follow_clock()
        byte_us = 8e6 / max(speed_hz or 1_000_000, 1)
        self.bus_us += self.transfer_us + len(data) * byte_us
        self.now_us += self.transfer_us
        return self._transfer_bytes(data, byte_us)

    def _transfer_bytes(self, data: bytes, byte_us: float) -> list[int]:
        raise NotImplementedError


class RC522Emulator(EmulatedSpiDevice):
    """An MFRC522 on SPI bus *bus*, chip select *device*, with an RF field of tags.

    It has the ``spidev.SpiDev`` API itself (``open``, ``xfer2``, ``close``,
    ``max_speed_hz``, ``mode``), so a driver takes it as its SPI device.

    *host* is the SPI cost model (:data:`PI4`, the default, or :data:`PI5`);
    *transfer_us*, when given, overrides its per-transfer overhead. *strict* tags
    (the default) fall back on unexpected frames as NTAG21x do. *loss* is the
    per-frame loss given to tags placed without their own; *dropout* is the older
    per-wake fault: a tag misses a REQA/WUPA and everything up to the next one.
    *seed* makes the faults reproducible. *power_up_us* is the default delay of
    tags placed; left None it is :data:`POWER_UP_US` when the chip follows a
    *clock* and 0 when it does not: without a clock the host's idle time between
    polls is invisible to the chip, and a delay counted in bus time alone would
    last 20 to 30 times longer than it should at a 10 ms poll period. *reset_line*, when given, is a callable returning the NRSTPD pin
    level: while it is low the chip is powered down, answers 0x00 and forgets its
    registers. *clock* and *pace*: see the module docstring.
    """

    def __init__(self, bus: int = 0, device: int = 0, *, host: HostBus = PI4, transfer_us: float | None = None,
                 strict: bool = True, loss: float = 0.0, dropout: float = 0.0, seed: int = 0,
                 power_up_us: float | None = None, reset_line=None, history: int = 1000,
                 clock=None, pace: bool = False):
        for name, p in (("dropout", dropout), ("loss", loss)):
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{name} is a probability between 0 and 1, not {p!r}")
        super().__init__(bus, device, host=host, transfer_us=transfer_us, clock=clock, pace=pace)
        self.loss = loss
        self.power_up_us = power_up_us
        self.reset_line = reset_line
        self._rng = random.Random(seed)
        self.rf = RfField(strict=strict, dropout=dropout, rng=self._rng)
        self.field = self.rf.tags
        self.history: deque = deque(maxlen=history)
        self.frames = 0
        self.unmodelled_commands = 0
        self.ignored_start_sends = 0
        self.air_us = 0.0
        self.powered = True
        self._due = _NEVER
        self._reset_chip()

    # -- test-only: the field ------------------------------------------------------
    @property
    def strict(self) -> bool:
        """Tags fall back on unexpected frames, as NTAG21x do."""
        return self.rf.strict

    @strict.setter
    def strict(self, value: bool) -> None:
        self.rf.strict = value

    @property
    def dropout(self) -> float:
        """The chance that a tag misses a REQA/WUPA and everything up to the next one."""
        return self.rf.dropout

    @dropout.setter
    def dropout(self, p: float) -> None:
        self.rf.dropout = p

    def place(self, uid, **kwargs) -> SimulatedTag:
        """Put a tag in the field; keyword args as :func:`make_tag` (``loss`` defaults to
        the emulator's). It powers up in IDLE and answers ``power_up_us`` later."""
        if isinstance(uid, SimulatedTag):
            tag = uid
        else:
            kwargs.setdefault("loss", self.loss)
            tag = make_tag(uid, **kwargs)
        self._follow_clock()
        tag.power_off()
        tag.ready_at_us = self.now_us + self._power_up_of(tag)
        self.field[tag.uid] = tag
        return tag

    @property
    def default_power_up_us(self) -> float:
        """The power-up delay of a tag placed without its own (see the class docstring)."""
        if self.power_up_us is not None:
            return self.power_up_us
        return POWER_UP_US if self.clock is not None else 0.0

    def remove(self, uid) -> None:
        """Take a tag out of the field (it loses power). Unknown UIDs are ignored."""
        self.rf.remove(self._key(uid))

    def remove_after(self, uid, frames: int) -> None:
        """The tag hears the next *frames* reader frames, then leaves the field (a card leaving mid-read)."""
        self.rf.remove_after(self._key(uid), self.frames + frames)

    def clear_field(self) -> None:
        self.rf.clear()

    def tag(self, uid) -> SimulatedTag:
        return self.field[self._key(uid)]

    def advance(self, us: float) -> None:
        """Let *us* microseconds of chip time pass with the host silent."""
        self.now_us += us
        self._settle()

    def reset_counters(self) -> None:
        self.transfers = 0
        self.frames = 0
        self.bus_us = 0.0
        self.air_us = 0.0
        self.history.clear()

    @staticmethod
    def _key(uid) -> bytes:
        if isinstance(uid, SimulatedTag):
            return uid.uid
        return bytes.fromhex(uid) if isinstance(uid, str) else bytes(uid)

    def _transfer_bytes(self, data: bytes, byte_us: float) -> list[int]:
        if not self.plugged:
            self.now_us += len(data) * byte_us
            return [self.miso_idle] * len(data)
        out = [0] * len(data)
        if not data:
            return out
        if self.reset_line is not None and not self.reset_line():
            self.now_us += len(data) * byte_us
            if self.powered:
                self.powered = False
                self._reset_chip()
                self._power_off_field()
            return out
        if not self.powered:
            self.powered = True
            self.booting_until = self.now_us + 100.0
        self.now_us += byte_us   # the address byte
        if self.now_us >= self._due:
            self._settle()
        first = data[0]
        if first & 0x80:
            read = self._read
            n = len(data)
            i = 1
            while i < n:
                addr_byte = data[i - 1]
                if addr_byte == _READ_COM_IRQ and i + 1 < n and data[i] == addr_byte:
                    # A wait: ComIrqReg read over and over. It changes only at chip
                    # events, so the bytes before the next one all read the same value.
                    rest = data[i:]
                    run = min(n, i + len(rest) - len(rest.lstrip(_READ_COM_IRQ_BYTE)) + 1)
                    ahead = self._due - self.now_us
                    quiet = run - i if ahead == _NEVER else min(run - i, max(0, math.ceil(ahead / byte_us) - 1))
                    if quiet:
                        value = self.com_irq & 0x7F
                        out[i:i + quiet] = [value] * quiet
                        self.now_us += quiet * byte_us
                        i += quiet
                        continue
                self.now_us += byte_us
                if self.now_us >= self._due:
                    self._settle()
                out[i] = read((addr_byte >> 1) & 0x3F) if addr_byte & 0x80 else 0
                i += 1
        else:
            addr = (first >> 1) & 0x3F
            for value in data[1:]:
                self.now_us += byte_us
                if self.now_us >= self._due:
                    self._settle()
                self._write(addr, value)
        return out

    # -- registers ------------------------------------------------------------------------
    def _reset_chip(self) -> None:
        self.regs = [0] * 64
        for addr, value in _RESET_VALUES.items():
            self.regs[addr] = value
        self.fifo: deque[int] = deque()
        self.command = CMD_IDLE
        self.com_irq = IRQ_IDLE | IRQ_LOALERT
        self.div_irq = 0
        self.error = 0
        self.coll = 0xA0
        self.rx_last_bits = 0
        self.exchange: _Exchange | None = None
        self.awaiting_start_send = False   # Transceive is between frames
        self.timer_end: float | None = None
        self.booting_until = self.now_us + 100.0
        self._crc_state = None
        self._due = _NEVER

    def _power_off_field(self) -> None:
        for tag in self.field.values():
            tag.power_off()

    def _power_up_of(self, tag: SimulatedTag) -> float:
        return tag.power_up_us if tag.power_up_us is not None else self.default_power_up_us

    def _power_on_field(self) -> None:
        for tag in self.field.values():
            tag.power_off()
            tag.ready_at_us = self.now_us + self._power_up_of(tag)

    def _timer_period_us(self) -> float:
        prescaler = ((self.regs[T_MODE] & 0x0F) << 8) | self.regs[T_PRESCALER]
        reload = (self.regs[T_RELOAD_H] << 8) | self.regs[T_RELOAD_L]
        return (2 * prescaler + 1) * (reload + 1) / FC_MHZ

    def _start_timer(self, at: float) -> None:
        self.timer_end = at + self._timer_period_us()
        self._reschedule()

    def _reschedule(self) -> None:
        """Remember when the next chip event is due, so bytes in between cost nothing."""
        due = _NEVER
        ex = self.exchange
        if ex is not None:
            if not ex.tx_done:
                due = ex.tx_end
            elif ex.rx_begin is not None and not ex.rx_started:
                due = ex.rx_begin
            elif ex.rx_end is not None and ex.rx_started:
                due = ex.rx_end
        if self.timer_end is not None and self.timer_end < due:
            due = self.timer_end
        self._due = due

    def _settle(self) -> None:
        """Run every chip event due by ``now_us``, in time order."""
        while True:
            events = []
            ex = self.exchange
            if ex is not None:
                if not ex.tx_done:
                    events.append((ex.tx_end, 0, "tx"))
                elif ex.rx_begin is not None and not ex.rx_started:
                    events.append((ex.rx_begin, 1, "rx_begin"))
                elif ex.rx_end is not None and ex.rx_started:
                    events.append((ex.rx_end, 3, "rx_end"))
            if self.timer_end is not None:
                events.append((self.timer_end, 2, "timer"))
            due = [e for e in events if e[0] <= self.now_us]
            if not due:
                self._reschedule()
                return
            when, _, kind = min(due)
            if kind == "tx":
                ex.tx_done = True
                self.com_irq |= IRQ_TX
                if self.regs[T_MODE] & 0x80:
                    self.timer_end = when + self._timer_period_us()
            elif kind == "rx_begin":
                ex.rx_started = True
                if self.regs[T_MODE] & 0x80 and self.timer_end is not None:
                    self.timer_end = None  # TAuto: the timer stops once an answer starts (8.5)
            elif kind == "rx_end":
                self._receive(ex)
                self.exchange = None
                self.awaiting_start_send = self.command == CMD_TRANSCEIVE
            else:
                self.com_irq |= IRQ_TIMER
                self.timer_end = when + self._timer_period_us() if self.regs[T_MODE] & 0x10 else None

    def _receive(self, ex: _Exchange) -> None:
        for byte in ex.data:
            self._fifo_put(byte)
        self.rx_last_bits = ex.last_bits
        errors = ex.errors
        if self.regs[RX_MODE] & CRC_EN and (len(ex.data) < 3 or ex.last_bits or crc_a(ex.data[:-2]) != ex.data[-2:]):
            errors |= ERR_CRC      # 9.3.1.7: RxCRCEn set and the CRC fails
        self.error |= errors
        if ex.coll is None:
            self.coll = (self.coll & 0x80) | 0x20
        else:
            self.coll = (self.coll & 0x80) | ex.coll
        self.com_irq |= IRQ_RX | (IRQ_ERR if self.error & ~ERR_TEMP else 0)

    def _fifo_put(self, byte: int) -> None:
        if len(self.fifo) >= FIFO_SIZE:
            self.error |= ERR_BUFFER_OVFL   # 9.3.1.7: written while the FIFO is full
            self.com_irq |= IRQ_ERR
            return
        self.fifo.append(byte)

    def _read(self, addr: int) -> int:
        if addr == COM_IRQ:
            return self.com_irq & 0x7F
        if addr == COMMAND:
            booting = 0x10 if self.now_us < self.booting_until else 0
            return (self.regs[COMMAND] & 0x20) | booting | self.command
        if addr == DIV_IRQ:
            return self.div_irq & 0x7F
        if addr == ERROR:
            return self.error
        if addr == STATUS1:
            level = len(self.fifo)
            value = 0
            value |= 0x01 if level <= self.regs[WATER_LEVEL] else 0
            value |= 0x02 if FIFO_SIZE - level <= self.regs[WATER_LEVEL] else 0
            value |= 0x08 if self.timer_end is not None else 0
            value |= 0x10 if self.com_irq & self.regs[COM_IEN] & 0x7F else 0
            value |= 0x20 if self.div_irq & DIV_CRC else 0
            return value
        if addr == FIFO_LEVEL:
            return len(self.fifo)
        if addr == FIFO_DATA:
            return self.fifo.popleft() if self.fifo else 0
        if addr == CONTROL:
            return (self.regs[CONTROL] & 0x30) | self.rx_last_bits
        if addr == COLL:
            return self.coll
        if addr in (T_COUNTER_H, T_COUNTER_L):
            count = 0
            if self.timer_end is not None:
                prescaler = ((self.regs[T_MODE] & 0x0F) << 8) | self.regs[T_PRESCALER]
                count = min(0xFFFF, math.ceil((self.timer_end - self.now_us) * FC_MHZ / (2 * prescaler + 1)))
            return count >> 8 if addr == T_COUNTER_H else count & 0xFF
        return self.regs[addr]

    def _write(self, addr: int, value: int) -> None:
        if addr == COMMAND:
            self.regs[COMMAND] = value & 0x30
            self._command(value & 0x0F)
        elif addr == COM_IRQ:
            self.com_irq = self.com_irq | (value & 0x7F) if value & 0x80 else self.com_irq & ~value & 0x7F
        elif addr == DIV_IRQ:
            self.div_irq = self.div_irq | (value & 0x7F) if value & 0x80 else self.div_irq & ~value & 0x7F
        elif addr == FIFO_LEVEL:
            if value & 0x80:
                self.fifo.clear()
                self.error &= ~ERR_BUFFER_OVFL
        elif addr == FIFO_DATA:
            ex = self.exchange
            if ex is not None and ex.tx_done and (ex.rx_end is None or self.now_us < ex.rx_end):
                # 9.3.1.7 WrErr: written between the last bit sent and the last bit received
                self.error |= ERR_WR
                self.com_irq |= IRQ_ERR
            if self.command == CMD_CALC_CRC:
                self._crc_feed([value])  # CalcCRC consumes FIFO bytes as they arrive
            else:
                self._fifo_put(value)
        elif addr == CONTROL:
            if value & 0x80:
                self.timer_end = None
            if value & 0x40:
                self._start_timer(self.now_us)
            self.regs[CONTROL] = value & 0x30
            self._reschedule()
        elif addr == BIT_FRAMING:
            self.regs[BIT_FRAMING] = value
            if value & 0x80 and self.command == CMD_TRANSCEIVE:
                if self.awaiting_start_send:
                    self._transmit()
                else:
                    self.ignored_start_sends += 1
        elif addr == COLL:
            self.coll = (value & 0x80) | (self.coll & 0x7F)
        elif addr == TX_CONTROL:
            was_on = self.regs[TX_CONTROL] & 0x03
            self.regs[TX_CONTROL] = value
            if was_on and not value & 0x03:
                self._power_off_field()
            elif value & 0x03 and not was_on:
                self._power_on_field()
        elif addr in (ERROR, STATUS1, VERSION, CRC_RESULT_H, CRC_RESULT_L, T_COUNTER_H, T_COUNTER_L):
            pass  # read-only
        else:
            self.regs[addr] = value

    def _command(self, cmd: int) -> None:
        if cmd == CMD_SOFT_RESET:
            if self.regs[TX_CONTROL] & 0x03:
                self._power_off_field()   # the reset turns the antenna off
            self._reset_chip()
            return
        self.exchange = None  # any new command cancels a reception in progress
        self.awaiting_start_send = cmd == CMD_TRANSCEIVE
        self.command = cmd
        self.error &= ~ERR_WR
        self._reschedule()
        if cmd == CMD_CALC_CRC:
            preset = (0x0000, 0x6363, 0xA671, 0xFFFF)[self.regs[MODE] & 0x03]
            self._crc_state = preset
            self.div_irq &= ~DIV_CRC
            data = list(self.fifo)
            self.fifo.clear()
            self._crc_feed(data)
        elif cmd not in (CMD_IDLE, CMD_TRANSCEIVE):
            self.unmodelled_commands += 1

    def _crc_feed(self, data) -> None:
        crc = self._crc_state
        for byte in data:
            byte ^= crc & 0xFF
            byte = (byte ^ (byte << 4)) & 0xFF
            crc = (crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)
        self._crc_state = crc
        self.regs[CRC_RESULT_H], self.regs[CRC_RESULT_L] = crc >> 8, crc & 0xFF
        self.div_irq |= DIV_CRC

    # -- the RF side -------------------------------------------------------------------------
    def _transmit(self) -> None:
        data = bytes(self.fifo)
        self.fifo.clear()
        if not data:
            return
        framing = self.regs[BIT_FRAMING]
        last_bits, align = framing & 0x07, (framing >> 4) & 0x07
        if self.regs[TX_MODE] & CRC_EN and last_bits == 0:
            data += crc_a(data)   # TxCRCEn: the chip appends CRC_A (9.3.2.3)
        nbits = 8 * len(data) if last_bits == 0 else 8 * (len(data) - 1) + last_bits
        self.error &= ~_RX_ERRORS
        self.awaiting_start_send = False
        self.frames += 1
        answers = []
        if self.regs[TX_CONTROL] & 0x03:
            answers = self.rf.hear(data, nbits, self.frames, self.now_us)
            if self.regs[COMMAND] & 0x20:
                answers = []  # RcvOff: the tags heard the frame, the receiver is off
        self.history.append((_frame_name(data, nbits), data.hex().upper(),
                             tuple(t.uid.hex().upper() for t, _ in answers)))
        tx_air = air_time_us(nbits)
        tx_end = self.now_us + tx_air
        if not answers:
            self.air_us += tx_air
            self.exchange = _Exchange(tx_end, None, None)
            self._reschedule()
            return
        combined, errors, first_coll = self.rf.superpose(answers)
        length = len(combined)
        coll = None
        if first_coll is not None:
            errors |= ERR_COLL
            if not self.coll & 0x80:  # ValuesAfterColl = 0: bits after the collision are cleared
                combined = combined[:first_coll + 1] + [0] * (length - first_coll - 1)
            position = align + first_coll + 1
            coll = 0x20 if position > 32 else position % 32
        packed, rx_last = _pack(combined, align)
        rx_begin = tx_end + FDT_US
        rx_end = rx_begin + air_time_us(length)
        self.air_us += rx_end - self.now_us
        self.exchange = _Exchange(tx_end, rx_begin, rx_end, packed, rx_last, errors, coll)
        self._reschedule()


def _frame_name(data: bytes, nbits: int) -> str:
    if nbits == 7:
        return {REQA: "REQA", WUPA: "WUPA"}.get(data[0], "SHORT")
    if data[0] == HLTA:
        return "HLTA"
    if data[0] in SEL and len(data) > 1:
        level = SEL.index(data[0]) + 1
        return f"SELECT CL{level}" if data[1] == 0x70 else f"ANTICOLL CL{level}"
    return "FRAME"


def charge_bus_time(chips, host: HostBus = PI4, clock=time.monotonic) -> None:
    """Make live emulators (e.g. a ``SimulatedTable``'s ``chips.values()``) cost what a Pi pays.

    Each chip takes *host*'s per-transfer overhead, follows *clock* (so tags power up
    and timers run in real time between polls) and paces every transfer to take at
    least its modelled time, so latencies measured in real time include the Pi's bus
    time and RF air time.
    """
    for chip in chips:
        chip.host = host
        chip.transfer_us = host.transfer_us
        chip.clock = clock
        chip._clock_origin = clock() - chip.now_us / 1e6
        chip.pace = True
