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

How a poll reads the field, lean and right under NTAG21x tags (which drop back to
IDLE, or HALT, on any frame they do not expect: NTAG203 8.2.2):

How a poll reads a field depends on what the antenna watches (*field*):

- ``resting`` (the board): cards lie still, and a card missed once is far likelier
  to be a lost frame than a card gone. Everything below applies.
- ``pass_through`` (the shoe's mouth): cards slide through in 30-100 ms, and what
  costs latency is the poll already under way when the next card arrives. The new
  card is looked for first (REQA rounds, then the checks of known cards); a known
  card is forgotten after one missed poll, a silent SELECT is not tried again, and
  a forget starts no WUPA search (the periodic one every ``rewake_every`` polls
  still finds a card lingering HALTed at the mouth, well inside the presence
  layer's shoe rearm window, so it never reads as a second draw).

The ``resting`` poll:

- Cards already known stay HALTed between polls. Each is checked on its own: WUPA,
  then SELECT of its UID at every cascade level; the SAK proves it is there. The
  next frame sends it back to HALT. A failed check is retried once after an HLTA.
  A card missing ``forget_after`` polls in a row is forgotten.
- New cards (powered up in IDLE) answer REQA: one anticollision round resolves one
  of them, SELECTs and HALTs it; rounds repeat (up to ``new_per_poll``) while REQA
  is answered, so cards laid down together are reported together. HALTed cards
  never answer REQA, so a steady poll ends with one unanswered REQA. Every
  ``rewake_every`` polls, and after a card was forgotten, the first search uses
  WUPA instead: it walks the UID tree whole (anticollision SELECTs nothing) and
  SELECTs a tag no known UID matches, so a card forgotten while still lying
  there comes back.
- Per frame: the Transceive command stays active (10.3.1.8), the frame is one FIFO
  burst and one StartSend write, and the wait is one read transfer whose length
  in bytes covers the frame's air time at the SPI clock (the bus itself times the
  wait), ending with ErrorReg, FIFOLevelReg, ControlReg and CollReg; the answer is
  one FIFO burst read. The chip timer is 150 us: tags answer 91 us after a frame.

Costs, counted on the chip emulator with Pi 4 bus costs (``bench/bench_rc522.py``):
an empty poll is about 5 transfers, five known 7-byte cards 80.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import Counter

from dealerbox.errors import ReaderError
from dealerbox.domain.decks import normalize_uid
from dealerbox.hw.iso14443 import ERR_BUFFER_OVFL, ERR_COLL, ERR_PARITY, ERR_PROTOCOL, Frame, Iso14443Protocol
from dealerbox.hw.reader import TagReader

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
POWER_DOWN = 0x10

FC_MHZ = 13.56
BIT_US = 128 / FC_MHZ          # one bit on air at 106 kbit/s
FDT_US = 1236 / FC_MHZ         # ISO 14443-3: a tag's answer starts this long after a frame ends

# Defaults, each a config value (dealerbox/service/config.py):
# - 4 MHz SPI: the MFRC522 takes up to 10 Mbit/s (datasheet 8.1.2), but RC522 modules
#   hang on 10-20 cm jumper wires where 10 MHz edges ring; 4 MHz is what the common
#   Arduino MFRC522 library runs them at. Faster buys little: a byte is 2 us here,
#   against the ~50 us a Pi 4 pays per transfer, and waits are timed by air time.
# - 150 us chip timer: tags answer 91 us after a frame (ISO 14443-3 FDT, 1236/fc) and
#   the TAuto timer stops as soon as an answer starts, so 150 us only decides how
#   long silence takes to be sure of.
# - 24 tags: five board cards plus a sweep of folded hands across the antenna.
SPI_HZ = 4_000_000
TIMEOUT_US = 150.0
MAX_TAGS = 24
MAX_TAGS_LIMIT = 64

#: What an antenna watches: cards lying still (``resting``, the board) or cards
#: sliding through (``pass_through``, the shoe's mouth). See the module docstring.
FIELDS = ("resting", "pass_through")
FIELD = "resting"

# ISO 14443-3 section 5: a tag answers at most 5 ms after entering the field, so a
# reader leaves a field it has just switched on unmodulated for 5.1 ms first.
GUARD_S = 0.0051

# Longest transfer used to wait: py-spidev's default buffer is 4096 bytes.
_MAX_WAIT_BYTES = 4000
_STATUS = (ERROR, FIFO_LEVEL, CONTROL, COLL)
_READ_COM_IRQ = 0x80 | (COM_IRQ << 1)
_READ_STATUS = [0x80 | (a << 1) for a in _STATUS] + [0]


def air_time_us(nbits: int) -> float:
    """Air time of an ISO 14443-A frame of *nbits* data bits (parity, SOF, EOF added)."""
    return (nbits + nbits // 8 + 2) * BIT_US


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


class FixedMFRC522(Iso14443Protocol):
    """The fixes and the lean poll, mixed in front of ``mfrc522.MFRC522`` by :func:`mfrc522_class`.

    Overrides of the stock API (same signatures and return values, so code written
    for ``mfrc522``, e.g. ``SimpleMFRC522``'s calls, keeps working):
    ``__init__`` (takes an open SPI device; no RPi.GPIO, no log handler),
    ``MFRC522_Init`` (soft reset, version check, chip timer, antenna),
    ``MFRC522_ToCard`` (waits for the IRQ bits properly and is bounded by the chip
    timer), ``CalulateCRC`` (clears CRCIRq properly), ``MFRC522_Anticoll``
    (resolves collisions bit by bit), ``MFRC522_SelectTag`` (checks the SAK's CRC),
    ``AntennaOn`` and ``Close_MFRC522`` (closes SPI only, never ``GPIO.cleanup()``).

    New API: :meth:`transceive`, :meth:`request`, :meth:`resolve_level`,
    :meth:`walk_level`, :meth:`select`, :meth:`halt`, :meth:`check_tag`,
    :meth:`discover`.
    """

    MI_OK, MI_NOTAGERR, MI_ERR = 0, 1, 2   # the stock values, for use without the stock class

    def __init__(self, spi, *, timeout_us: float = TIMEOUT_US, max_irq_polls: int = 100,
                 logger: logging.Logger | None = None, label: str = "RC522"):
        # The stock __init__ opens spidev itself, calls RPi.GPIO and adds a log
        # handler; none of that is wanted, so it is not called.
        self.spi = spi
        self.logger = logger or log
        self.label = label
        self.timeout_us = timeout_us
        self.max_irq_polls = max_irq_polls
        self.counters: Counter = Counter()
        self.version: int | None = None
        self._armed = False        # Transceive active and waiting for StartSend
        self._fifo_dirty = True
        Iso14443Protocol.__init__(self)
        self._field_on_at: float | None = None   # when the antenna last came on, until the first frame

    # -- SPI primitives --------------------------------------------------------------
    def _write(self, addr: int, *values: int) -> None:
        # A write transfer stores every data byte in the one register addressed
        # (8.1.2.2): a whole frame goes into the FIFO in one transfer.
        self.spi.xfer2([(addr << 1) & 0x7E, *values])

    def _read(self, *addrs: int) -> list[int]:
        # A read transfer returns, for each byte after the first, the register
        # addressed by the byte before it (8.1.2.1): several registers in one transfer.
        reply = self.spi.xfer2([((a << 1) & 0x7E) | 0x80 for a in addrs] + [0])
        return reply[1:]

    def _note(self, kind: str, message: str, *args, warn: bool = True) -> None:
        """Count a problem; log it at WARNING the 1st, 10th, 100th... time (if *warn*), else DEBUG."""
        self.counters[kind] += 1
        n = self.counters[kind]
        loud = warn and (n in (1, 10, 100, 1000, 10000) or n % 100000 == 0)
        self.logger.log(logging.WARNING if loud else logging.DEBUG, "%s: " + message + " (%s #%d)",
                        self.label, *args, kind, n)

    def _spi_hz(self) -> int:
        return int(getattr(self.spi, "max_speed_hz", 0) or 1_000_000)

    def _timer_period_us(self) -> float:
        prescaler, reload = timer_settings(self.timeout_us)
        return (2 * prescaler + 1) * (reload + 1) / FC_MHZ

    def _guard_time(self) -> None:
        """Before the first frame in a field just switched on, let it stand unmodulated for GUARD_S.

        Tags lying on the antenna power up with it and may take up to 5 ms to answer
        (ISO 14443-3 section 5); a REQA sooner would miss them on the first poll.
        """
        wait = self._field_on_at + GUARD_S - time.monotonic()
        self._field_on_at = None
        if wait > 0:
            time.sleep(wait)

    def _wait(self, wait_us: float) -> list[int]:
        """Wait for RxIRq or TimerIRq: [ComIrq, Error, FIFOLevel, Control, Coll].

        The first read lasts *wait_us* on the wire (ComIrqReg read over and over),
        the earliest the outcome can be known; then short polls, at most
        ``max_irq_polls``.
        """
        repeat = min(_MAX_WAIT_BYTES, max(1, math.ceil(wait_us * self._spi_hz() / 8e6)))
        status = self.spi.xfer2([_READ_COM_IRQ] * repeat + _READ_STATUS)[repeat:]
        polls = 0
        while True:
            irq = status[0]
            if irq == 0xFF:
                # Every IRQ at once (Set1 included, FIFO both nearly empty and nearly
                # full) cannot happen on a live chip: MISO is stuck high.
                raise ReaderError("RC522 ComIrqReg reads 0xFF: SPI lines stuck high or the reader is unplugged")
            if irq & (IRQ_RX | IRQ_TIMER):
                return status
            if polls >= self.max_irq_polls:
                self._note("irq_timeouts", "raised no interrupt within %d polls", self.max_irq_polls)
                self._armed = False
                raise ReaderError(f"RC522 raised no interrupt within {self.max_irq_polls} register polls: "
                                  "the chip stopped answering or the reader is unplugged")
            polls += 1
            status = self._read(COM_IRQ, *_STATUS)

    # -- stock API, fixed ------------------------------------------------------------------
    def MFRC522_Init(self):
        """Soft reset, check the chip answers, program a short TAuto timer, antenna on."""
        self._armed = False
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
        self._fifo_dirty = True
        self.logger.debug("%s: version 0x%02X ready, timeout %d us (prescaler %d, reload %d)",
                          self.label, self.version, self.timeout_us, prescaler, reload)

    def AntennaOn(self):
        value = self._read(TX_CONTROL)[0]
        if value & 0x03 != 0x03:
            self._write(TX_CONTROL, value | 0x03)
            self._field_on_at = time.monotonic()

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
        self._armed = False
        self._write(COMMAND, CMD_IDLE)
        self._write(COM_IRQ, 0x7F)
        self._write(FIFO_LEVEL, 0x80)
        if sendData:
            self._write(FIFO_DATA, *sendData)
        self._write(COMMAND, command)
        for _ in range(self.max_irq_polls):
            irq = self._read(COM_IRQ)[0]
            if irq & (IRQ_IDLE | IRQ_TIMER | IRQ_ERR):
                break
        else:
            return (self.MI_ERR, [], 0)
        if not irq & IRQ_IDLE or self._read(ERROR)[0] & 0x1B:
            return (self.MI_ERR, [], 0)
        return (self.MI_OK, [], 0)

    def CalulateCRC(self, pIndata):
        """The chip's CRC coprocessor; the stock version can leave a stale CRCIRq set."""
        self._armed = False
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
        block = self.resolve_level(1)
        return (self.MI_OK, list(block)) if block else (self.MI_ERR, [])

    def MFRC522_SelectTag(self, serNum):
        """SELECT at level 1 like the stock method, with the SAK's CRC checked: SAK or 0."""
        sak = self.select(1, bytes(serNum[:5]))
        return sak or 0

    # -- frames --------------------------------------------------------------------------
    def transceive(self, data, *, tx_last_bits: int = 0, rx_align: int = 0,
                   answer_bits: int | None = None) -> Frame:
        """Send *data* and wait for an answer or the chip timer. Raises ReaderError if the chip is silent.

        *answer_bits* is the length of the answer expected (None: silence is the
        likely outcome); it only sizes the first wait, never what is accepted.
        """
        self.counters["frames"] += 1
        if self._field_on_at is not None:
            self._guard_time()
        if not self._armed:
            # Idle stops a receiver still waiting; Transceive then waits for StartSend.
            # Both go to CommandReg in one transfer.
            self._write(COMMAND, CMD_IDLE, CMD_TRANSCEIVE)
            self._armed = True
        if self._fifo_dirty:
            self._write(FIFO_LEVEL, 0x80)          # FlushBuffer
        self._write(COM_IRQ, 0x7F)                  # Set1 = 0: clear every IRQ bit
        self._write(FIFO_DATA, *data)
        self._write(BIT_FRAMING, 0x80 | (rx_align & 0x07) << 4 | (tx_last_bits & 0x07))  # StartSend
        nbits = 8 * len(data) if not tx_last_bits else 8 * (len(data) - 1) + tx_last_bits
        if answer_bits:
            wait_us = air_time_us(nbits) + FDT_US + air_time_us(answer_bits)
        else:
            wait_us = air_time_us(nbits) + self._timer_period_us()
        irq, errors, level, control, coll = self._wait(wait_us)
        if not irq & IRQ_RX:
            # Silence: the receiver still waits, so the next frame restarts Transceive.
            self._armed = False
            self._fifo_dirty = level != 0
            self.counters["timeouts"] += 1
            return Frame(True)
        level = min(level, 64)
        payload = bytes(self._read(*[FIFO_DATA] * level)) if level else b""
        self._fifo_dirty = False
        last = control & 0x07
        bits = (level - 1) * 8 + last if last and level else level * 8
        coll_pos = None
        if errors & ERR_COLL and not coll & 0x20:
            coll_pos = (coll & 0x1F) or 32
        return Frame(False, payload, bits, errors, coll_pos)


_CLASSES: dict[type, type] = {}
_IMPORT_LOCK = threading.Lock()


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

    Parameters (config values unless said otherwise):

    - *zone*: what the antenna watches (``board``, ``shoe``, ``burn``...).
    - *bus*, *device*: ``/dev/spidev<bus>.<device>``. Boards that do not release MISO
      must not share a bus; give each reader its own bus (SPI0, SPI1).
    - *reset_pin*: BCM number (or any gpiozero pin name) wired to the board's RST
      (NRSTPD). It is driven through gpiozero, low then high at open and low at close,
      and released alone: no other pin is touched. ``None`` if RST is tied high.
    - *spi_hz*: SPI clock, 4 MHz by default (why: see ``SPI_HZ`` in the source).
    - *timeout_us*: the chip timer: how long after a frame a tag may start answering;
      tags answer after about 91 us and the timer stops when they do, so 150 us.
    - *max_tags*: how many cards the reader tracks at once (a full board plus a
      sweep of folded cards); more are counted as ``too_many_tags``, and the cards
      already known are always kept.
    - *field*: ``"resting"`` (cards lie still: the board) or ``"pass_through"``
      (cards slide through: the shoe's mouth); see the module docstring.
    - *forget_after*: polls in a row a known card may miss before it is forgotten;
      ``None``: 3 for a resting field, 1 for a pass-through one.
    - *rewake_every*: every this many polls (and on the *forget_after* polls after
      a card is forgotten) the search for new cards uses WUPA.
    - *new_per_poll*: most new cards one poll looks for (a round each, ~5 ms for a
      7-byte UID on a Pi 4); more wait for the next poll.
    - *pin_factory*: a gpiozero pin factory; ``None`` uses gpiozero's default.
    - *spi* (not a config value): an SPI device to use instead of opening
      ``spidev.SpiDev()`` (anything with ``open``, ``xfer2``, ``close``,
      ``max_speed_hz`` and ``mode``, e.g. a chip emulator). The driver opens it.

    ``poll()`` returns ``{zone: frozenset(UIDs)}`` and raises
    :class:`~dealerbox.errors.ReaderError` when the chip stops answering.
    ``counters`` counts polls, frames, timeouts, collisions, retries and each kind of
    tag error.
    """

    def __init__(self, name: str = "rc522", *, zone: str = "board", bus: int = 0, device: int = 0,
                 reset_pin: int | str | None = 25, spi_hz: int = SPI_HZ, timeout_us: float = TIMEOUT_US,
                 max_tags: int = MAX_TAGS, field: str = FIELD, forget_after: int | None = None,
                 rewake_every: int = 20,
                 new_per_poll: int = 6, pin_factory=None, spi=None):
        super().__init__(name)
        if not isinstance(zone, str) or not zone:
            raise ValueError(f"zone must name a zone, not {zone!r}")
        if not 1 <= max_tags <= MAX_TAGS_LIMIT:
            raise ValueError(f"max_tags must be 1..{MAX_TAGS_LIMIT}, not {max_tags!r}")
        if field not in FIELDS:
            raise ValueError(f"field must be one of {', '.join(FIELDS)}, not {field!r}")
        if forget_after is None:
            forget_after = 1 if field == "pass_through" else 3
        if forget_after < 1 or rewake_every < 1 or new_per_poll < 1:
            raise ValueError("forget_after, rewake_every and new_per_poll must be at least 1")
        timer_settings(timeout_us)  # validates
        self.zone, self.bus, self.device = zone, bus, device
        self.max_tags = max_tags
        self.field = field
        self.forget_after = forget_after
        self.rewake_every = rewake_every
        self.new_per_poll = new_per_poll
        self._known: dict[bytes, int] = {}    # UID -> polls missed in a row
        self._polls = 0
        self._rewake = 1         # polls to come whose first search uses WUPA
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
                chip_class = FixedMFRC522   # a handed-in bus needs no Pi library
        try:
            spi.open(self.bus, self.device)
        except OSError as exc:
            raise ReaderError(f"reader {self.name!r}: cannot open /dev/spidev{self.bus}.{self.device} ({exc})") from exc
        spi.max_speed_hz = spi_hz
        spi.mode = 0
        self._chip = chip_class(spi, timeout_us=timeout_us, label=f"RC522 {self.name}")
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

    @property
    def known(self) -> tuple[str, ...]:
        """The UIDs the reader tracks (checked on every poll), oldest first."""
        return tuple(normalize_uid(u) for u in self._known)

    def _poll(self) -> dict[str, frozenset[str]]:
        try:
            seen = self._read_field()
        except ReaderError:
            raise
        except OSError as exc:
            raise ReaderError(f"reader {self.name!r}: SPI failed ({exc})") from exc
        return {self.zone: frozenset(normalize_uid(u) for u in seen)}

    def _read_field(self) -> list[bytes]:
        chip = self._chip
        chip.counters["polls"] += 1
        self._polls += 1
        if self.field == "pass_through":
            # The card that just arrived first: it is what the table waits for, and a
            # check's WUPA before it would wake it only for the wrong SELECT to send it
            # back to IDLE. Checks come after, of the cards this search did not see.
            wake = self._rewake > 0 or self._polls % self.rewake_every == 0
            self._rewake = 0
            seen = self._search(wake=wake)
            self._check_known(seen, tries=1)
            return seen
        seen = []
        nobody = self._check_known(seen, tries=2)
        if nobody and self._known:
            return seen      # WUPA reaches IDLE tags too: nothing new is there either
        wake = self._rewake > 0 or self._polls % self.rewake_every == 0
        self._rewake = max(0, self._rewake - 1)
        for uid in self._search(wake=wake):
            if uid not in seen:
                seen.append(uid)
        return seen

    def _check_known(self, seen: list[bytes], *, tries: int) -> bool:
        """Check each known card not in *seen*, appending those present; True if no tag answered WUPA."""
        chip = self._chip
        nobody = False
        for uid in [u for u in self._known if u not in seen]:
            present = False if nobody else chip.check_tag(uid, tries=tries)
            if present is None:
                nobody = present = False    # no tag answered WUPA: the rest are gone too
            if present:
                self._known[uid] = 0
                seen.append(uid)
                continue
            self._known[uid] += 1
            if self._known[uid] >= self.forget_after:
                del self._known[uid]
                chip.counters["forgotten"] += 1
                if self.field == "resting":
                    # It may still lie there HALTed, out of REQA's reach, having missed
                    # a few frames: search with WUPA for a while.
                    self._rewake = self.forget_after
        return nobody

    def _search(self, *, wake: bool) -> list[bytes]:
        """New cards (and, with *wake*, cards forgotten while still there): the UIDs found."""
        chip = self._chip
        found: list[bytes] = []
        # Rounds go on while they find tags, so cards laid down together (a flop) are
        # reported together; an empty field or a known one costs one REQA.
        for _ in range(self.new_per_poll):
            uid = chip.discover(wake=wake, avoid=list(self._known) if wake else ())
            wake = False
            if uid is None:
                break
            if uid in self._known:
                self._known[uid] = 0
                if uid not in found:
                    found.append(uid)
            elif len(self._known) < self.max_tags:
                self._known[uid] = 0
                found.append(uid)
            else:
                chip._note("too_many_tags", "more than %d tags in the field; %s not tracked",
                           self.max_tags, uid.hex().upper())
                break
        return found

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
