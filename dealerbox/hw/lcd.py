"""The panel's character LCD: RPLCD over I2C (smbus2) with a PCF8574 backpack.

:class:`PanelLcd` shows :class:`dealerbox.service.panel.PanelView` frames on a 20x4 or
16x2 HD44780 display. It programs the four suit glyphs into CGRAM slots 0..3
(:data:`dealerbox.domain.cards.SUIT_GLYPH`) and, for each frame, writes only the
cells that changed.

Why not RPLCD's ``write_string`` as it is:

* A full repaint through the stock PCF8574 backend costs eight I2C
  transactions per character (four per nibble: a set-up byte and an E pulse
  in three single-byte writes); 80 cells take about 160-200 ms at 100 kHz.
* RPLCD's own content cache skips unchanged cells, but it pays a "set DDRAM
  address" instruction for every skipped cell, which costs as much as writing
  the cell.
* Characters its codec does not know silently become spaces (on the A00 ROM
  that includes ``\\`` and ``~``). The suit glyphs ``\\x00``..``\\x03`` are
  mapped by both codecs to the CGRAM codes, so they are safe.

So :class:`Pcf8574CharLCD` keeps RPLCD's user API and its initialisation
sequence but overrides the backend hooks (``_init_connection``,
``_close_connection``, ``_send_instruction``, ``_send_data``): each byte goes
out as four expander bytes (E high and low per nibble, plus one set-up byte
when RS changes), and a frame's bytes go in one I2C write message through
``i2c_rdwr``. Between two latched bytes there are at least two expander
bytes on the wire: 180 us at the Pi's default 100 kHz, 45 us at 400 kHz, both
longer than the 37 us an HD44780 needs per data write or address set. Clear
and home (1.5 ms) are sent on their own, followed by RPLCD's sleep.

The bus: RPLCD's own backend builds ``SMBus(port)`` from whichever of ``smbus``
or ``smbus2`` imports first, bound at import time. This driver instead looks up
``smbus2.SMBus`` when it opens, or uses a bus object passed in; either way
:class:`hardware_sim.i2c_lcd.SimulatedI2cBus` can stand in for it.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager

from RPLCD import codecs as rplcd_codecs
from RPLCD import common as rplcd_common
from RPLCD.i2c import CharLCD

from dealerbox.domain.cards import SUIT_GLYPH
from dealerbox.errors import HardwareError
from dealerbox.hw.device import Device

log = logging.getLogger(__name__)

#: 5x8 bitmaps of the suit glyphs (bit 4 is the leftmost pixel; the last row
#: is left empty because the underline cursor lives there).
SUIT_BITMAPS = {
    "c": (0b01110, 0b01110, 0b11111, 0b11111, 0b11111, 0b00100, 0b01110, 0b00000),
    "d": (0b00100, 0b01110, 0b11111, 0b11111, 0b11111, 0b01110, 0b00100, 0b00000),
    "h": (0b01010, 0b11111, 0b11111, 0b11111, 0b01110, 0b00100, 0b00000, 0b00000),
    "s": (0b00100, 0b01110, 0b11111, 0b11111, 0b00100, 0b01110, 0b00000, 0b00000),
}

# PCF8574 backpack wiring: P0=RS, P1=RW, P2=E, P3=backlight, P4..P7=D4..D7.
_RS, _RW, _E = 0x01, 0x02, 0x04
_PLAIN_SPACE = frozenset(" \u00a0")
_CODECS = {"A00": rplcd_codecs.A00Codec, "A02": rplcd_codecs.A02Codec, "ST0B": rplcd_codecs.ST0BCodec}


class Pcf8574CharLCD(CharLCD):
    """RPLCD's I2C ``CharLCD`` on a PCF8574, with a lean byte stream and batching.

    ``bus`` is an open ``smbus2.SMBus``-like object (it needs ``i2c_rdwr`` and
    ``write_byte``) that stays the caller's; without it the LCD opens
    ``smbus2.SMBus(port)`` and closes it again. ``max_transfer`` caps the bytes
    per I2C message. Everything else is as for :class:`RPLCD.i2c.CharLCD`.

    Overrides the RPLCD backend hooks only; use :meth:`batched` to gather the
    writes of several calls into one transfer, and :meth:`write_cells` to write
    a run of DDRAM cells from a given address.
    """

    def __init__(self, *, bus=None, port: int = 1, address: int = 0x27, cols: int = 20,
                 rows: int = 4, charmap: str = "A00", backlight_enabled: bool = True,
                 max_transfer: int = 256):
        self._given_bus = bus
        self._owns_bus = False
        self._outputs: int | None = None  # what the expander drives now, if known
        self._batch: bytearray | None = None
        self._address_counter: int | None = None
        self._max_transfer = max_transfer
        self._row_offsets = (0x00, 0x40, cols, 0x40 + cols)[:rows]
        self.bus = None
        try:
            super().__init__("PCF8574", address, port=port, cols=cols, rows=rows,
                             charmap=charmap, auto_linebreaks=False,
                             backlight_enabled=backlight_enabled)
        except BaseException:
            self._close_connection()  # do not leak a bus opened before the display failed
            raise

    # -- RPLCD backend hooks ------------------------------------------------------

    def _init_connection(self):
        if self._given_bus is not None:
            self.bus = self._given_bus
        else:
            import smbus2  # looked up now so a stand-in installed by a test is used
            self.bus = smbus2.SMBus(self._port)
            self._owns_bus = True
        # The HD44780 needs 40 ms after power comes up before it takes instructions.
        rplcd_common.msleep(50)

    def _close_connection(self):
        bus, self.bus = self.bus, None
        if bus is not None and self._owns_bus:
            bus.close()

    def _send_instruction(self, value):
        self._address_counter = None
        self._send_byte(value, 0)

    def _send_data(self, value):
        self._send_byte(value, _RS)

    # The backlight setter writes the expander directly; redefine the property so
    # the stream knows RS and E went low with it.
    def _set_backlight(self, value):
        self._flush()
        CharLCD._set_backlight_enabled(self, value)
        self._outputs = self._backlight

    backlight_enabled = property(CharLCD._get_backlight_enabled, _set_backlight,
                                 doc="Whether the backlight is on.")

    def clear(self):
        # Clear and home take 1.5 ms; what was batched must go out before the wait.
        self._flush()
        super().clear()
        self._flush()

    def home(self):
        self._flush()
        super().home()
        self._flush()

    # -- additions ----------------------------------------------------------------

    @contextmanager
    def batched(self):
        """Collect the bytes written inside the block and send them in one transfer."""
        if self._batch is not None:
            yield self
            return
        self._batch = bytearray()
        try:
            yield self
        finally:
            data, self._batch = self._batch, None
            self._write(data)

    def cell_of(self, address: int) -> tuple[int, int] | None:
        """(row, col) of the glass cell showing DDRAM ``address``, or None if off the glass."""
        for row, first in enumerate(self._row_offsets):
            if first <= address < first + self.lcd.cols:
                return row, address - first
        return None

    def address_of(self, row: int, col: int) -> int:
        """The DDRAM address of a glass cell."""
        return self._row_offsets[row] + col

    def write_cells(self, address: int, codes) -> None:
        """Write character ``codes`` into DDRAM from ``address`` on, moving the cursor once."""
        if address != self._address_counter:
            self.command(rplcd_common.LCD_SETDDRAMADDR | address)
        for code in codes:
            self._send_data(code)
            cell = self.cell_of(address)
            if cell is not None:
                self._content[cell[0]][cell[1]] = code  # keep RPLCD's cache truthful
            address += 1
        self._address_counter = address
        end = self.cell_of(address - 1)
        if end is not None:
            self._cursor_pos = (end[0], end[1] + 1)

    # -- the byte stream ----------------------------------------------------------

    def _send_byte(self, value: int, rs: int) -> None:
        light = self._backlight
        high = (value & 0xF0) | rs | light
        low = ((value << 4) & 0xF0) | rs | light
        out = bytearray()
        if self._outputs is None or self._outputs & (_RS | _RW | _E) != rs:
            # RS and RW must be steady before E rises: set them with E low first.
            out.append(high)
        out += bytes((high | _E, high, low | _E, low))
        self._outputs = low
        if self._batch is not None:
            self._batch += out
        else:
            self._write(out)

    def _flush(self) -> None:
        if self._batch:
            data = bytes(self._batch)
            self._batch.clear()
            self._write(data)

    def _write(self, data) -> None:
        if not data:
            return
        from smbus2 import i2c_msg

        try:
            for start in range(0, len(data), self._max_transfer):
                self.bus.i2c_rdwr(i2c_msg.write(self._address, data[start:start + self._max_transfer]))
        except OSError:
            self._outputs = None  # a transfer broke off: the expander state is unknown
            raise


class PanelLcd(Device):
    """The panel's LCD: shows :class:`~dealerbox.service.panel.PanelView` frames cell by cell.

    Parameters: ``cols`` x ``rows`` of the glass (20x4 or 16x2), I2C ``port``
    and ``address`` of the backpack (0x27 or 0x3F usually), ``charmap`` the
    module's character ROM (``A00`` on most backpack modules, else ``A02``),
    ``bus`` an open smbus2-compatible bus to use instead of opening
    ``/dev/i2c-<port>`` (a simulator, or a bus shared with other devices),
    ``backlight`` the initial backlight state.

    Raises :class:`~dealerbox.errors.HardwareError` when the LCD cannot be
    opened. Later bus errors are logged and counted; the next :meth:`show`
    re-initialises the display and paints it whole.

    Counters: ``frames``, ``cells_written``, ``unmapped_chars`` (shown as ``?``),
    ``bad_views`` (wrong size, fitted and shown), ``bus_errors``.

    Call it from one thread (the daemon's display loop); it keeps no lock.
    """

    def __init__(self, *, cols: int = 20, rows: int = 4, port: int = 1, address: int = 0x27,
                 charmap: str = "A00", bus=None, backlight: bool = True):
        if (cols, rows) not in ((20, 4), (16, 2), (20, 2), (16, 4)):
            raise ValueError(f"an LCD of {cols}x{rows} is not supported (20x4 or 16x2)")
        if charmap not in _CODECS:
            raise ValueError(f"charmap must be one of {sorted(_CODECS)}, not {charmap!r}")
        self.cols, self.rows = cols, rows
        self._codec = _CODECS[charmap]()
        self.port, self.address, self.charmap = port, address, charmap
        self._bus = bus
        self._backlight = backlight
        self.frames = self.cells_written = self.unmapped_chars = 0
        self.bad_views = self.bus_errors = 0
        self._codes: dict[str, int] = {}
        self._warned_chars: set[str] = set()
        self._shadow: list[list[int]] | None = None
        self._text: list[str] = []
        self._lcd: Pcf8574CharLCD | None = None
        self._closed = False
        try:
            self._open()
        except OSError as exc:
            raise HardwareError(
                f"LCD at I2C port {port} address {address:#04x} does not answer: {exc}") from exc

    # -- life cycle ---------------------------------------------------------------

    def _open(self) -> None:
        self._lcd = Pcf8574CharLCD(bus=self._bus, port=self.port, address=self.address,
                                   cols=self.cols, rows=self.rows, charmap=self.charmap,
                                   backlight_enabled=self._backlight)
        for suit, slot in SUIT_GLYPH.items():
            self._lcd.create_char(ord(slot), SUIT_BITMAPS[suit])
        # RPLCD's initialisation cleared the display.
        self._shadow = [[0x20] * self.cols for _ in range(self.rows)]
        self._text = [" " * self.cols for _ in range(self.rows)]

    def close(self, clear: bool = False) -> None:
        """Release the bus (closing it if this LCD opened it). Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        lcd, self._lcd = self._lcd, None
        if lcd is not None:
            try:
                lcd.close(clear=clear)
            except OSError as exc:
                log.warning("LCD: bus error while closing: %s", exc)

    # -- what it shows ------------------------------------------------------------

    @property
    def lines(self) -> list[str]:
        """What the glass shows after the last frame (glyphs as ``\\x00``.., unmapped as ``?``)."""
        return list(self._text)

    @property
    def backlight(self) -> bool:
        return self._backlight

    @backlight.setter
    def backlight(self, value: bool) -> None:
        self._backlight = bool(value)
        if self._lcd is not None:
            try:
                self._lcd.backlight_enabled = self._backlight
            except OSError as exc:
                self._bus_failed(exc)

    def show(self, view) -> int:
        """Bring the glass to ``view.lines``; returns how many cells were written."""
        if self._closed:
            raise HardwareError("the LCD is closed")
        target, text = self._encode_view(view)
        self.frames += 1
        if self._lcd is None:
            try:
                self._open()
            except OSError as exc:
                self._bus_failed(exc)
                return 0
        runs = self._plan(target)
        written = 0
        try:
            with self._lcd.batched():
                for start, codes in runs:
                    self._lcd.write_cells(start, codes)
                    written += len(codes)
        except OSError as exc:
            self._bus_failed(exc)
            return 0
        self._shadow, self._text = target, text
        self.cells_written += written
        return written

    def repaint(self, view) -> int:
        """Re-initialise the controller, then write ``view`` whole.

        For when the display may have lost its state behind the driver's back
        (a brown-out of the LCD alone, a loose cable): the initialisation
        sequence brings an HD44780 back from any mode.
        """
        if self._closed:
            raise HardwareError("the LCD is closed")
        self._drop_lcd()
        return self.show(view)

    # -- internals ----------------------------------------------------------------

    def _drop_lcd(self) -> None:
        """Forget the RPLCD object; the next frame initialises the display afresh."""
        lcd, self._lcd = self._lcd, None
        if lcd is not None:
            try:
                lcd.close()
            except OSError:
                pass

    def _bus_failed(self, exc: OSError) -> None:
        self.bus_errors += 1
        log.error("LCD: I2C error (%s); the display is re-initialised on the next frame", exc)
        self._drop_lcd()

    def _plan(self, target: list[list[int]]) -> list[tuple[int, list[int]]]:
        """Runs of (DDRAM address, codes) covering every changed cell, in address order.

        A cursor move costs six expander bytes and a rewritten cell four, so a
        run absorbs a one-cell gap of unchanged text rather than restart after it.
        """
        lcd = self._lcd
        changed = sorted(
            lcd.address_of(r, c)
            for r in range(self.rows) for c in range(self.cols)
            if self._shadow[r][c] != target[r][c]
        )
        spans: list[list[int]] = []
        for addr in changed:
            if spans and (addr == spans[-1][1] + 1
                          or addr == spans[-1][1] + 2 and lcd.cell_of(addr - 1) is not None):
                spans[-1][1] = addr
            else:
                spans.append([addr, addr])
        runs = []
        for first, last in spans:
            codes = []
            for addr in range(first, last + 1):
                row, col = lcd.cell_of(addr)
                codes.append(target[row][col])
            runs.append((first, codes))
        return runs

    def _encode_view(self, view) -> tuple[list[list[int]], list[str]]:
        lines = getattr(view, "lines", None)
        if not isinstance(lines, (tuple, list)) or not all(isinstance(x, str) for x in lines):
            self.bad_views += 1
            log.warning("LCD: a view without text lines (%r); showing a blank screen", view)
            lines = ()
        fixed = [(lines[r] if r < len(lines) else "")[:self.cols].ljust(self.cols)
                 for r in range(self.rows)]
        if len(lines) != self.rows or any(len(x) != self.cols for x in lines):
            if lines:
                self.bad_views += 1
                log.warning("LCD: view of %d lines x %s columns cut or padded to %dx%d",
                            len(lines), sorted({len(x) for x in lines}), self.rows, self.cols)
        codes = [[self._code_of(ch) for ch in line] for line in fixed]
        text = ["".join(ch if self._codes.get(ch) == code else "?" for ch, code in zip(line, row))
                for line, row in zip(fixed, codes)]
        return codes, text

    def _code_of(self, ch: str) -> int:
        code = self._codes.get(ch)
        if code is not None:
            return code
        if ch in SUIT_GLYPH.values():
            code = ord(ch)
        else:
            encoded = self._codec.encode(ch)
            # Codes below 0x20 are CGRAM slots; only the suit slots are programmed.
            if len(encoded) == 1 and encoded[0] >= 0x20 and (encoded[0] != 0x20 or ch in _PLAIN_SPACE):
                code = encoded[0]
            else:
                # RPLCD would show a space; a question mark tells the technician.
                self.unmapped_chars += 1
                if ch not in self._warned_chars:
                    self._warned_chars.add(ch)
                    log.warning("LCD: %r is not in the %s character ROM; shown as '?'",
                                ch, self.charmap)
                return ord("?")
        self._codes[ch] = code
        return code
