"""RC522 (NXP MFRC522) readers on SPI, through the ``mfrc522`` package with its bugs fixed.

``mfrc522`` 0.0.7 is what Pi tutorials install, and it is broken in ways that matter
at a card table (see ARCHITECTURE.md, "Known traps"):

- its wait loop negates with ``~`` instead of ``not``, so it never stops on the chip's
  timer: a poll with no card spins through 2,000 register reads (about 1 s on a Pi);
- it reads only cascade level 1, so a 7-byte NTAG comes back as ``0x88`` + 3 bytes and
  two cards from one batch can read the same; any collision reads as "no card";
- it does not check the SAK's CRC; ``Close_MFRC522()`` calls ``GPIO.cleanup()`` on
  every pin of the process; its default reset pin in BCM mode is 15 (UART RX); each
  instance adds another handler to one logger; ``AntennaOn`` tests ``~x`` (always true).

:class:`FixedMFRC522` holds the replacements. The class actually used is built at open
time as a subclass of ``mfrc522.MFRC522`` (:func:`mfrc522_class`), because the Pi-only
libraries may only be imported on the code path that opens real hardware.
:class:`RC522Reader` is the :class:`~dealerbox.hw.reader.TagReader` the daemon uses.

Costs, counted in SPI transfers on the chip emulator (``bench/bench_rc522.py``): a
poll of an empty field is a WUPA and its timer timeout, about 15 transfers, where the
stock path needs about 2,000.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass

from ..errors import ReaderError
from ..rules.registry import normalize_uid
from .reader import TagReader

log = logging.getLogger(__name__)

# MFRC522 registers and bits (datasheet section 9). Kept here rather than borrowed from
# the simulator: the driver must not depend on hardware_sim.
COMMAND, COM_IRQ, DIV_IRQ, ERROR = 0x01, 0x04, 0x05, 0x06
FIFO_DATA, FIFO_LEVEL, CONTROL, BIT_FRAMING, COLL = 0x09, 0x0A, 0x0C, 0x0D, 0x0E
MODE, TX_MODE, RX_MODE, TX_CONTROL, TX_ASK = 0x11, 0x12, 0x13, 0x14, 0x15
CRC_RESULT_H, CRC_RESULT_L = 0x21, 0x22
T_MODE, T_PRESCALER, T_RELOAD_H, T_RELOAD_L = 0x2A, 0x2B, 0x2C, 0x2D
VERSION = 0x37

CMD_IDLE, CMD_CALC_CRC, CMD_TRANSCEIVE, CMD_SOFT_RESET = 0x00, 0x03, 0x0C, 0x0F
IRQ_TIMER, IRQ_ERR, IRQ_IDLE, IRQ_RX = 0x01, 0x02, 0x10, 0x20
DIV_CRC = 0x04
ERR_PROTOCOL, ERR_PARITY, ERR_CRC, ERR_COLL, ERR_BUFFER_OVFL = 0x01, 0x02, 0x04, 0x08, 0x10
POWER_DOWN = 0x10

REQA, WUPA, HLTA, CASCADE_TAG = 0x26, 0x52, 0x50, 0x88
SEL = (0x93, 0x95, 0x97)
SAK_CASCADE = 0x04
FC_MHZ = 13.56


def crc_a(data) -> bytes:
    """ISO/IEC 14443-3 CRC_A, low byte first.

    Computed here rather than with the chip's CalcCRC: one CalcCRC round trip costs
    about eight SPI transfers per frame, this costs none.
    """
    crc = 0x6363
    for byte in data:
        byte ^= crc & 0xFF
        byte = (byte ^ (byte << 4)) & 0xFF
        crc = (crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)
    return bytes((crc & 0xFF, crc >> 8))


def _bcc(part) -> int:
    value = 0
    for b in part:
        value ^= b
    return value


def timer_settings(timeout_us: float) -> tuple[int, int]:
    """(TPrescaler, TReload) giving a timer period of at least *timeout_us*.

    Period = (2 * TPrescaler + 1) * (TReload + 1) / 13.56 MHz; the smallest prescaler
    that fits keeps the resolution fine.
    """
    if not 1 <= timeout_us <= 5_000_000:
        raise ValueError(f"timeout_us must be between 1 us and 5 s, not {timeout_us!r}")
    cycles = timeout_us * FC_MHZ
    prescaler = max(0, math.ceil((cycles / 0x10000 - 1) / 2))
    reload = min(0xFFFF, math.ceil(cycles / (2 * prescaler + 1)) - 1)
    return prescaler, max(reload, 0)


@dataclass(frozen=True, slots=True)
class Frame:
    """What one Transceive got back."""

    timed_out: bool
    data: bytes = b""
    bits: int = 0              # valid bits in the FIFO, RxAlign offset included
    errors: int = 0            # ErrorReg
    coll_pos: int | None = None  # 1-based FIFO bit position of the first collision


class FixedMFRC522:
    """The fixes, mixed in front of ``mfrc522.MFRC522`` by :func:`mfrc522_class`.

    Overrides of the stock API (same signatures and return values, so code written
    for ``mfrc522``, e.g. ``SimpleMFRC522``'s calls, keeps working):
    ``__init__`` (takes an open SPI device; no RPi.GPIO, no log handler),
    ``MFRC522_Init`` (soft reset, version check, chip timer, antenna),
    ``MFRC522_ToCard`` (waits for the IRQ bits properly and is bounded by the chip
    timer), ``CalulateCRC`` (clears CRCIRq properly), ``MFRC522_Anticoll``
    (resolves collisions bit by bit), ``MFRC522_SelectTag`` (checks the SAK's CRC),
    ``AntennaOn`` and ``Close_MFRC522`` (closes SPI only, never ``GPIO.cleanup()``).

    New API: :meth:`transceive`, :meth:`request`, :meth:`walk_level`,
    :meth:`select`, :meth:`halt`, :meth:`inventory`.
    """

    def __init__(self, spi, *, timeout_us: float = 500.0, max_irq_polls: int = 100,
                 logger: logging.Logger | None = None):
        # The stock __init__ opens spidev itself, calls RPi.GPIO and adds a log
        # handler; none of that is wanted, so it is not called.
        self.spi = spi
        self.logger = logger or log
        self.timeout_us = timeout_us
        self.max_irq_polls = max_irq_polls
        self.counters: Counter = Counter()
        self.version: int | None = None
        self._truncated = False

    # -- SPI primitives --------------------------------------------------------------
    def _write(self, addr: int, *values: int) -> None:
        # A write transfer stores every data byte in the one register addressed,
        # which is how a whole frame goes into the FIFO in one transfer.
        self.spi.xfer2([(addr << 1) & 0x7E, *values])

    def _read(self, *addrs: int) -> list[int]:
        # A read transfer returns, for each byte after the first, the register
        # addressed by the byte before it: several registers in one transfer.
        reply = self.spi.xfer2([((a << 1) & 0x7E) | 0x80 for a in addrs] + [0])
        return reply[1:]

    def _note(self, kind: str, message: str, *args) -> None:
        """Count a problem; log it at WARNING the 1st, 10th, 100th... time, else DEBUG."""
        self.counters[kind] += 1
        n = self.counters[kind]
        level = logging.WARNING if n in (1, 10, 100, 1000, 10000) or n % 100000 == 0 else logging.DEBUG
        self.logger.log(level, message + " (%s #%d)", *args, kind, n)

    def _wait_irq(self, mask: int, *, fatal: bool = True) -> int:
        for _ in range(self.max_irq_polls):
            irq = self._read(COM_IRQ)[0]
            if irq == 0xFF:
                # Every IRQ at once (Set1 included, FIFO both nearly empty and nearly
                # full) cannot happen on a live chip: MISO is stuck high.
                raise ReaderError("RC522 ComIrqReg reads 0xFF: SPI lines stuck high or the reader is unplugged")
            if irq & mask:
                return irq
        self._note("irq_timeouts", "RC522 raised no interrupt within %d polls", self.max_irq_polls)
        if fatal:
            raise ReaderError(f"RC522 raised no interrupt within {self.max_irq_polls} register polls: "
                              "the chip stopped answering or the reader is unplugged")
        return 0

    # -- stock API, fixed ------------------------------------------------------------------
    def MFRC522_Init(self):
        """Soft reset, check the chip answers, program a short TAuto timer, antenna on."""
        self._write(COMMAND, CMD_SOFT_RESET)
        for _ in range(50):
            if not self._read(COMMAND)[0] & POWER_DOWN:
                break
        else:
            raise ReaderError("RC522 stayed in power-down after a soft reset")
        self.version = self._read(VERSION)[0]
        if self.version in (0x00, 0xFF):
            raise ReaderError(f"no RC522 answering: VersionReg reads 0x{self.version:02X}")
        prescaler, reload = timer_settings(self.timeout_us)
        # TAuto: the timer starts when a transmission ends and stops when an answer
        # starts, so TimerIRq means "no tag answered" without any clock on the Pi side.
        self._write(T_MODE, 0x80 | (prescaler >> 8))
        self._write(T_PRESCALER, prescaler & 0xFF)
        self._write(T_RELOAD_H, reload >> 8)
        self._write(T_RELOAD_L, reload & 0xFF)
        self._write(TX_ASK, 0x40)     # 100 % ASK, as ISO 14443-A needs
        self._write(MODE, 0x3D)       # CRC preset 0x6363 (CRC_A) for CalcCRC users
        self._write(TX_MODE, 0x00)    # 106 kBd, CRC appended by us
        self._write(RX_MODE, 0x00)
        self._write(COLL, 0x00)       # ValuesAfterColl = 0: bits after a collision read 0
        self.AntennaOn()
        self.logger.debug("RC522 version 0x%02X ready, timeout %d us (prescaler %d, reload %d)",
                          self.version, self.timeout_us, prescaler, reload)

    def AntennaOn(self):
        value = self._read(TX_CONTROL)[0]
        if value & 0x03 != 0x03:
            self._write(TX_CONTROL, value | 0x03)

    def AntennaOff(self):
        value = self._read(TX_CONTROL)[0]
        self._write(TX_CONTROL, value & ~0x03 & 0xFF)

    def Close_MFRC522(self):
        """Antenna off and SPI closed. Pins are not this method's business."""
        try:
            self.AntennaOff()
        except OSError:
            pass  # the reader may already be gone; closing must still succeed
        self.spi.close()

    def MFRC522_ToCard(self, command, sendData):
        """Stock signature and results: (MI_OK / MI_NOTAGERR / MI_ERR, data, bits)."""
        if command == CMD_TRANSCEIVE:
            framing = self._read(BIT_FRAMING)[0]
            frame = self.transceive(sendData, tx_last_bits=framing & 0x07, rx_align=(framing >> 4) & 0x07)
            if frame.timed_out:
                return (self.MI_NOTAGERR, [], 0)
            status = self.MI_ERR if frame.errors & (ERR_BUFFER_OVFL | ERR_COLL | ERR_PARITY | ERR_PROTOCOL) else self.MI_OK
            return (status, list(frame.data), frame.bits)
        self._write(COMMAND, CMD_IDLE)
        self._write(COM_IRQ, 0x7F)
        self._write(FIFO_LEVEL, 0x80)
        if sendData:
            self._write(FIFO_DATA, *sendData)
        self._write(COMMAND, command)
        irq = self._wait_irq(IRQ_IDLE | IRQ_TIMER | IRQ_ERR, fatal=False)
        if not irq & IRQ_IDLE or self._read(ERROR)[0] & 0x1B:
            return (self.MI_ERR, [], 0)
        return (self.MI_OK, [], 0)

    def CalulateCRC(self, pIndata):
        """The chip's CRC coprocessor; the stock version can leave a stale CRCIRq set."""
        self._write(COMMAND, CMD_IDLE)
        self._write(DIV_IRQ, DIV_CRC)       # Set2 = 0: clears CRCIRq
        self._write(FIFO_LEVEL, 0x80)
        self._write(FIFO_DATA, *pIndata)
        self._write(COMMAND, CMD_CALC_CRC)
        for _ in range(self.max_irq_polls):
            if self._read(DIV_IRQ)[0] & DIV_CRC:
                break
        else:
            raise ReaderError("RC522 CRC coprocessor did not finish")
        low, high = self._read(CRC_RESULT_L, CRC_RESULT_H)
        self._write(COMMAND, CMD_IDLE)
        return [low, high]

    def MFRC522_Anticoll(self):
        """Cascade level 1 of one tag, collisions resolved: (MI_OK, 5 bytes) or (MI_ERR, [])."""
        blocks = self.walk_level(1, limit=1)
        return (self.MI_OK, list(blocks[0])) if blocks else (self.MI_ERR, [])

    def MFRC522_SelectTag(self, serNum):
        """SELECT at level 1 like the stock method, with the SAK's CRC checked: SAK or 0."""
        sak = self.select(1, bytes(serNum[:5]))
        return sak or 0

    # -- new API -------------------------------------------------------------------------
    def transceive(self, data, *, tx_last_bits: int = 0, rx_align: int = 0) -> Frame:
        """Send *data* and wait for an answer or the chip timer. Never more than
        ``max_irq_polls`` register polls; raises ReaderError if the chip is silent."""
        self.counters["frames"] += 1
        self._write(COMMAND, CMD_IDLE)          # stop a Transceive still receiving
        self._write(COM_IRQ, 0x7F)              # Set1 = 0: clear every IRQ bit
        self._write(FIFO_LEVEL, 0x80)           # FlushBuffer
        self._write(FIFO_DATA, *data)
        self._write(COMMAND, CMD_TRANSCEIVE)
        self._write(BIT_FRAMING, 0x80 | (rx_align & 0x07) << 4 | (tx_last_bits & 0x07))  # StartSend
        irq = self._wait_irq(IRQ_RX | IRQ_IDLE | IRQ_TIMER)
        if not irq & (IRQ_RX | IRQ_IDLE):
            self.counters["timeouts"] += 1
            return Frame(True)
        errors, level, control, coll = self._read(ERROR, FIFO_LEVEL, CONTROL, COLL)
        level = min(level, 64)
        payload = bytes(self._read(*[FIFO_DATA] * level)) if level else b""
        last = control & 0x07
        bits = (level - 1) * 8 + last if last and level else level * 8
        coll_pos = None
        if errors & ERR_COLL and not coll & 0x20:
            coll_pos = (coll & 0x1F) or 32
        return Frame(False, payload, bits, errors, coll_pos)

    def request(self, *, wake: bool) -> bytes | None:
        """REQA (IDLE tags) or WUPA (IDLE and HALT tags): the ATQA, or None if no tag answered.

        Several tags answering garble the ATQA; that still means "tags present".
        """
        frame = self.transceive([WUPA if wake else REQA], tx_last_bits=7)
        if frame.timed_out:
            return None
        if frame.bits != 16 and not frame.errors & ERR_COLL:
            self._note("bad_atqa", "RC522: ATQA of %d bits", frame.bits)
        return frame.data

    def walk_level(self, level: int, *, limit: int = 6, budget: int | None = None) -> list[bytes]:
        """Every UID block (4 bytes + BCC) answering anticollision at cascade *level*.

        A depth-first walk of the bit tree: at a collision both branches are taken,
        bit 1 first, by repeating the anticollision frame with the known bits. Tags
        stay READY through anticollision frames, so one wake-up serves the whole
        walk. Blocks failing their BCC are counted and left out. Stops after *limit*
        blocks or *budget* frames.
        """
        sel = SEL[level - 1]
        budget = budget if budget is not None else 4 * limit + 4
        found: list[bytes] = []
        stack = [(0, bytes(5))]
        while stack and budget > 0 and len(found) < limit:
            budget -= 1
            known_bits, known = stack.pop()
            full, rem = divmod(known_bits, 8)
            frame_bytes = bytes([sel, ((2 + full) << 4) | rem]) + known[:full + (1 if rem else 0)]
            frame = self.transceive(frame_bytes, tx_last_bits=rem, rx_align=rem)
            if frame.timed_out:
                self._note("lost", "RC522: no answer to anticollision at level %d, %d bits known", level, known_bits)
                continue
            merged = bytearray(known)
            for i, byte in enumerate(frame.data[:5 - full]):
                keep = ((1 << rem) - 1) if i == 0 else 0
                merged[full + i] = (known[full + i] & keep) | (byte & ~keep & 0xFF)
            if frame.errors & ERR_COLL:
                position = full * 8 + frame.coll_pos if frame.coll_pos else 0
                if not known_bits < position <= 40:
                    self._note("protocol_errors", "RC522: collision at bit %d with %d bits known", position, known_bits)
                    continue
                bit = position - 1
                for i in range(bit, 40):
                    merged[i // 8] &= ~(1 << (i % 8)) & 0xFF
                zero = bytes(merged)
                merged[bit // 8] |= 1 << (bit % 8)
                stack.append((position, zero))
                stack.append((position, bytes(merged)))
                self.counters["collisions"] += 1
                continue
            if frame.errors & (ERR_PROTOCOL | ERR_PARITY | ERR_BUFFER_OVFL) or full * 8 + frame.bits != 40:
                self._note("protocol_errors", "RC522: anticollision answer of %d bits, errors 0x%02X",
                           full * 8 + frame.bits, frame.errors)
                continue
            block = bytes(merged)
            if _bcc(block[:4]) != block[4]:
                self._note("bcc_errors", "RC522: UID part %s fails its BCC; tag ignored", block.hex().upper())
                continue
            found.append(block)
        if stack and len(found) >= limit:
            self._truncated = True
        return found

    def select(self, level: int, block: bytes) -> int | None:
        """SELECT one UID block at *level*: the SAK, or None (no answer, error, bad CRC)."""
        frame_bytes = bytes([SEL[level - 1], 0x70]) + bytes(block)
        frame = self.transceive(frame_bytes + crc_a(frame_bytes))
        if frame.timed_out:
            self._note("lost", "RC522: tag %s did not answer SELECT", bytes(block).hex().upper())
            return None
        if frame.errors & ~ERR_CRC or frame.bits != 24:
            self._note("protocol_errors", "RC522: SAK of %d bits, errors 0x%02X", frame.bits, frame.errors)
            return None
        if crc_a(frame.data[:1]) != frame.data[1:3]:
            self._note("crc_errors", "RC522: SAK of %s fails its CRC_A; tag ignored", bytes(block).hex().upper())
            return None
        return frame.data[0]

    def halt(self) -> None:
        """HLTA: the selected tag goes to HALT, tags still READY fall back to IDLE/HALT.

        Success is silence (ISO 14443-3); an answer is counted.
        """
        frame = self.transceive(bytes([HLTA, 0x00]) + crc_a([HLTA, 0x00]))
        if not frame.timed_out:
            self._note("halt_answered", "RC522: a tag answered HLTA")

    def inventory(self, max_tags: int = 6) -> list[bytes]:
        """Complete UIDs (4, 7 or 10 bytes) of every tag in the field, at most *max_tags*.

        WUPA wakes every tag (also those halted by the previous poll); anticollision
        walks list the UID blocks at a cascade level; SELECT of each block gives its
        SAK, whose cascade bit (not a 0x88 first byte, which a 4-byte UID may have)
        says whether another level follows. A tag needing another level is revisited
        in a later round: HLTA (everyone back to IDLE/HALT), WUPA, SELECT along its
        known path, walk the next level. The last block of a level goes straight on,
        saving a round. The poll ends with HLTA, so the next poll's WUPA finds every
        tag in a state that answers it.
        """
        found: list[bytes] = []
        self._truncated = False
        todo: deque[tuple[bytes, ...]] = deque([()])
        selected: tuple[bytes, ...] | None = None   # path the field is already selected along
        rounds = 0
        awake = False
        while todo and len(found) < max_tags and rounds < 4 * max_tags + 2:
            rounds += 1
            path = todo.popleft()
            if selected != path:
                if awake:
                    self.halt()
                if self.request(wake=True) is None:
                    if path:
                        self._note("lost", "RC522: no tag answered WUPA while finishing a UID")
                        continue
                    return found      # empty field: the cheap, common case
                awake = True
                if not self._select_path(path):
                    continue
            selected = None
            level = len(path) + 1
            blocks = self.walk_level(level, limit=max_tags - len(found))
            for i, block in enumerate(blocks):
                sak = self.select(level, block)
                if sak is None:
                    continue
                if sak & SAK_CASCADE:
                    if level == 3 or block[0] != CASCADE_TAG:
                        self._note("protocol_errors", "RC522: cascade SAK for %s at level %d", block.hex().upper(), level)
                        continue
                    if i == len(blocks) - 1:
                        todo.appendleft(path + (block,))
                        selected = path + (block,)
                    else:
                        todo.append(path + (block,))
                else:
                    found.append(b"".join(b[1:4] for b in path) + block[:4])
                    if len(found) >= max_tags:
                        break
        if awake:
            self.halt()
        if len(found) >= max_tags and (todo or self._truncated):
            self._note("too_many_tags", "RC522: more than %d tags in the field", max_tags)
        return found

    def _select_path(self, path: tuple[bytes, ...]) -> bool:
        for level, block in enumerate(path, 1):
            sak = self.select(level, block)
            if sak is None or not sak & SAK_CASCADE:
                return False
        return True


_CLASSES: dict[type, type] = {}
_IMPORT_LOCK = threading.Lock()


class _StandaloneMFRC522(FixedMFRC522):
    """:class:`FixedMFRC522` without the stock base (off a Pi, where ``mfrc522`` cannot import)."""

    MI_OK, MI_NOTAGERR, MI_ERR = 0, 1, 2   # the stock class's status codes


def mfrc522_class() -> type:
    """The driver class: ``mfrc522.MFRC522`` with :class:`FixedMFRC522` in front.

    Imports ``mfrc522`` (and so ``RPi.GPIO`` and ``spidev``) on first call. Raises
    :class:`ReaderError` when they cannot be imported: off a Pi ``RPi.GPIO`` raises
    RuntimeError, on a Pi 5 install ``rpi-lgpio`` to provide it.
    """
    # One import at a time: readers open from their own threads, and an import that fails
    # half-way (RPi.GPIO off a Pi) would show the other thread a half-made module.
    with _IMPORT_LOCK:
        try:
            import mfrc522
        except (ImportError, RuntimeError) as exc:
            raise ReaderError(f"cannot import mfrc522 ({exc}); it needs RPi.GPIO (rpi-lgpio on a Pi 5) "
                              "and spidev") from exc
        base = mfrc522.MFRC522
        cls = _CLASSES.get(base)
        if cls is None:
            cls = type("RC522Chip", (FixedMFRC522, base), {"__module__": __name__, "__doc__": FixedMFRC522.__doc__})
            _CLASSES[base] = cls
        return cls


class RC522Reader(TagReader):
    """One RC522 on SPI bus *bus*, chip select *device*, watching one zone.

    Parameters (all config values):

    - *zone*: what the antenna watches (``board``, ``shoe``, ``burn``...).
    - *bus*, *device*: ``/dev/spidev<bus>.<device>``. Boards that do not release MISO
      must not share a bus; give each reader its own bus (SPI0, SPI1).
    - *reset_pin*: BCM number (or any gpiozero pin name) wired to the board's RST
      (NRSTPD). It is driven through gpiozero, low then high at open and low at close,
      and released alone: no other pin is touched. ``None`` if RST is tied high.
    - *spi_hz*: SPI clock; the MFRC522 takes up to 10 MHz, 1 MHz is safe on long wires.
    - *timeout_us*: the chip timer: how long after a frame a tag may start answering.
      ISO 14443-3 tags answer REQA/WUPA/anticollision/SELECT after about 91 us, and the
      timer stops as soon as an answer starts, so 500 us is a safe margin.
    - *max_tags*: stop an inventory after this many tags (5 board cards + 1 extra).
    - *pin_factory*: a gpiozero pin factory; ``None`` uses gpiozero's default.
    - *spi*: an unopened ``spidev.SpiDev``-like object (``open``, ``xfer2``, ``close``)
      handed in by :class:`dealerbox.hw.buses.Buses`; ``None`` opens ``spidev`` itself.
      With a handed-in bus the stock ``mfrc522`` base class is used when it imports
      and :class:`FixedMFRC522` alone otherwise (it needs ``RPi.GPIO``, which imports
      only on a Pi; the fixed class overrides every method the reader calls).

    ``poll()`` returns ``{zone: frozenset(UIDs)}`` and raises
    :class:`~dealerbox.errors.ReaderError` when the chip stops answering.
    ``counters`` counts frames, timeouts, collisions and each kind of tag error.
    """

    def __init__(self, name: str = "rc522", *, zone: str = "board", bus: int = 0, device: int = 0,
                 reset_pin: int | str | None = 25, spi_hz: int = 1_000_000, timeout_us: float = 500.0,
                 max_tags: int = 6, pin_factory=None, spi=None):
        super().__init__(name)
        if not isinstance(zone, str) or not zone:
            raise ValueError(f"zone must name a zone, not {zone!r}")
        if not 1 <= max_tags <= 16:
            raise ValueError(f"max_tags must be 1..16, not {max_tags!r}")
        timer_settings(timeout_us)  # validates
        self.zone, self.bus, self.device = zone, bus, device
        self.max_tags = max_tags
        self._reset = None
        self._chip = None
        try:
            self._open(reset_pin, spi_hz, timeout_us, pin_factory, spi)
        except BaseException:
            self.close()
            raise

    def _open(self, reset_pin, spi_hz, timeout_us, pin_factory, spi) -> None:
        if reset_pin is not None:
            from gpiozero import DigitalOutputDevice

            # Low first: a hard reset, so a chip left half-configured starts clean.
            self._reset = DigitalOutputDevice(reset_pin, initial_value=False, pin_factory=pin_factory)
            time.sleep(0.001)
            self._reset.on()
            time.sleep(0.001)
        if spi is None:
            try:
                import spidev
            except ImportError as exc:
                raise ReaderError(f"reader {self.name!r}: spidev is not installed ({exc})") from exc
            chip_class = mfrc522_class()
            spi = spidev.SpiDev()
        else:
            try:
                chip_class = mfrc522_class()
            except ReaderError:
                chip_class = _StandaloneMFRC522
        try:
            spi.open(self.bus, self.device)
        except OSError as exc:
            raise ReaderError(f"reader {self.name!r}: cannot open /dev/spidev{self.bus}.{self.device} ({exc})") from exc
        spi.max_speed_hz = spi_hz
        spi.mode = 0
        self._chip = chip_class(spi, timeout_us=timeout_us)
        try:
            self._chip.MFRC522_Init()
        except OSError as exc:
            if isinstance(exc, ReaderError):
                raise ReaderError(f"reader {self.name!r} on spi{self.bus}.{self.device}: {exc}") from exc
            raise ReaderError(f"reader {self.name!r}: SPI failed ({exc})") from exc
        log.info("reader %s: RC522 version 0x%02X on spi%d.%d watching %s",
                 self.name, self._chip.version, self.bus, self.device, self.zone)

    @property
    def zones(self) -> tuple[str, ...]:
        return (self.zone,)

    @property
    def chip(self):
        """The underlying driver object (an ``mfrc522.MFRC522`` subclass)."""
        return self._chip

    @property
    def counters(self) -> Counter:
        return self._chip.counters if self._chip is not None else Counter()

    def _poll(self) -> dict[str, frozenset[str]]:
        self._chip.counters["polls"] += 1
        try:
            uids = self._chip.inventory(self.max_tags)
        except ReaderError:
            raise
        except OSError as exc:
            raise ReaderError(f"reader {self.name!r}: SPI failed ({exc})") from exc
        return {self.zone: frozenset(normalize_uid(u) for u in uids)}

    def _close(self) -> None:
        if self._chip is not None:
            try:
                self._chip.Close_MFRC522()
            except OSError as exc:
                log.warning("reader %s: closing SPI failed: %s", self.name, exc)
        if self._reset is not None:
            try:
                self._reset.off()   # hold the chip powered down: RF field off
            finally:
                self._reset.close()
