"""An I2C bus with an HD44780 character LCD on a PCF8574 backpack.

:class:`SimulatedI2cBus` stands in for :class:`smbus2.SMBus`: it has the
methods a character-LCD driver uses (``write_byte``, ``write_byte_data``,
``write_i2c_block_data``, ``i2c_rdwr``, ``read_byte``, ``close``) and raises
what the kernel would (``OSError`` errno 121 for an address nobody answers).
Devices are attached by address; :class:`Pcf8574Lcd` is the LCD module.

:class:`Pcf8574Lcd` decodes the byte stream the way the chips do:

* the PCF8574 drives its eight outputs with each byte it receives; a
  backpack wires them P0=RS, P1=RW, P2=E, P3=backlight, P4..P7=D4..D7;
* the HD44780 samples RS and RW when E rises and latches the data lines when E
  falls. It powers up in 8-bit mode (D0..D3 are not wired on a backpack, so
  they read as 0) and pairs nibbles, high first, once a function set selects
  4-bit mode;
* instructions: clear, home, entry mode (increment/decrement, shift on write),
  display control, cursor/display shift, function set, set CGRAM address,
  set DDRAM address; data writes go to DDRAM or CGRAM at the address counter.

:meth:`Pcf8574Lcd.glass` renders what a person would read on the glass, with
the usual row mapping (rows at DDRAM 0x00, 0x40, 0x00+cols, 0x40+cols, which
is 0x00, 0x40, 0x14, 0x54 on a 20x4). Custom characters come back as their
slot characters ``\\x00``..``\\x07``; their bitmaps are in :attr:`Pcf8574Lcd.cgram`.

Not modelled: instruction execution times (the busy flag), reads of DDRAM or
the busy flag (counted and ignored), and the ROM's katakana half (codes
0x80..0xFF render as U+FFFD).

Test-only helpers follow gpiozero's mock pins: counters you can reset
(:meth:`SimulatedI2cBus.reset_counters`), a history of transactions, and
:meth:`Pcf8574Lcd.power_cycle`.

This module is never chosen by default; a test or a config passes it in.
"""

from __future__ import annotations

import errno
import os
import threading
from collections import deque

#: PCF8574 output bits as an LCD backpack wires them.
RS, RW, E, BACKLIGHT = 0x01, 0x02, 0x04, 0x08

_DDRAM_LINE_LEN = 40  # each of the two controller lines holds 40 cells
_SMBUS_BLOCK_MAX = 32  # smbus2 refuses longer block writes

# Character ROM differences from ASCII in the printable range (0x20..0x7F).
_ROM_OVERRIDES = {
    "A00": {0x5C: "\u00a5", 0x7E: "\u2192", 0x7F: "\u2190"},
    "A02": {0x7F: "\u2302"},
}


class Pcf8574Lcd:
    """An HD44780-compatible character LCD behind a PCF8574 I2C expander.

    ``cols`` x ``rows`` is the glass (20x4 and 16x2 are the common ones);
    ``rom`` selects the character ROM used to render codes (``A00``, the
    Japanese ROM most cheap modules carry, or ``A02``, the European one).
    """

    def __init__(self, cols: int = 20, rows: int = 4, rom: str = "A00"):
        if rows not in (1, 2, 4) or not 8 <= cols <= 40:
            raise ValueError(f"an HD44780 glass of {cols}x{rows} is not supported")
        if rom not in _ROM_OVERRIDES:
            raise ValueError(f"character ROM must be A00 or A02, not {rom!r}")
        self.cols = cols
        self.rows = rows
        self.rom = rom
        self.power_cycle()

    # -- test helpers -------------------------------------------------------------

    def power_cycle(self) -> None:
        """Return to the power-on state: 8-bit mode, display off, DDRAM blank."""
        # The PCF8574 outputs are quasi-bidirectional and come up high.
        self.outputs = 0xFF
        self._rs_at_rise = True
        self._rw_at_rise = True
        self._data_while_high = 0xF0
        self.eight_bit = True
        self.two_lines = False
        self.font_5x10 = False
        self.display_on = False
        self.cursor_on = False
        self.blink_on = False
        self.increment = True
        self.shift_on_write = False
        self.display_shift = 0
        self.address = 0
        self.in_cgram = False
        self.ddram = bytearray(b" " * 0x80)
        self._cgram = bytearray(64)
        self._pending_nibble: int | None = None
        self.reset_counters()

    def reset_counters(self) -> None:
        """Zero the decoding counters."""
        self.instructions = 0
        self.data_writes = 0
        self.ignored_reads = 0
        #: E rose in the same byte that changed RS or RW (no address set-up time).
        self.setup_violations = 0
        #: The data lines changed in the same byte that dropped E (no hold time).
        self.hold_violations = 0

    # -- what a person sees -------------------------------------------------------

    @property
    def backlight(self) -> bool:
        """True while the backpack's backlight transistor is on."""
        return bool(self.outputs & BACKLIGHT)

    @property
    def cgram(self) -> tuple[tuple[int, ...], ...]:
        """The eight custom characters, each eight rows of five pixels (bit 4 leftmost)."""
        return tuple(
            tuple(b & 0x1F for b in self._cgram[slot * 8:slot * 8 + 8]) for slot in range(8)
        )

    def cell_address(self, row: int, col: int) -> int:
        """The DDRAM address shown at (row, col) while the display is not shifted."""
        return self._address_on_glass(row, col, shift=0)

    def glass(self) -> list[str]:
        """The rows of characters the glass shows, custom characters as ``\\x00``..``\\x07``."""
        if not self.display_on:
            return [" " * self.cols for _ in range(self.rows)]
        out = []
        for row in range(self.rows):
            if not self.two_lines and row > 0:
                # One-line mode drives only the first line of the glass.
                out.append(" " * self.cols)
                continue
            out.append("".join(
                self._render(self.ddram[self._address_on_glass(row, col, self.display_shift)])
                for col in range(self.cols)
            ))
        return out

    def _address_on_glass(self, row: int, col: int, shift: int) -> int:
        if not self.two_lines:
            return (col - shift) % 80
        line, first = row % 2, (row // 2) * self.cols
        return 0x40 * line + (first + col - shift) % _DDRAM_LINE_LEN

    def _render(self, code: int) -> str:
        if code < 0x10:
            return chr(code & 0x07)  # 0x08..0x0F mirror the eight CGRAM slots
        if 0x20 <= code <= 0x7F:
            return _ROM_OVERRIDES[self.rom].get(code, chr(code))
        return "\ufffd"

    # -- the PCF8574 side ---------------------------------------------------------

    def pcf8574_write(self, value: int) -> None:
        """The expander received one byte: drive the outputs and let the LCD react."""
        value &= 0xFF
        before, self.outputs = self.outputs, value
        if not before & E and value & E:
            # E rising: the controller samples RS and RW now.
            if (before ^ value) & (RS | RW):
                self.setup_violations += 1
            self._rs_at_rise = bool(value & RS)
            self._rw_at_rise = bool(value & RW)
            self._data_while_high = value & 0xF0
        elif before & E and value & E:
            self._data_while_high = value & 0xF0
        elif before & E and not value & E:
            # E falling: the controller latches D4..D7 as they stood while E was high.
            if (before ^ value) & 0xF0 and not self._rw_at_rise:
                self.hold_violations += 1
            self._latch(self._data_while_high >> 4)

    def pcf8574_read(self) -> int:
        """Read the expander's pins: a quasi-bidirectional port reads back its outputs."""
        return self.outputs

    # -- the HD44780 side ---------------------------------------------------------

    def _latch(self, nibble: int) -> None:
        if self._rw_at_rise:
            self.ignored_reads += 1
            return
        if self.eight_bit:
            self._pending_nibble = None
            self._execute(nibble << 4, self._rs_at_rise)
        elif self._pending_nibble is None:
            self._pending_nibble = nibble
        else:
            value = (self._pending_nibble << 4) | nibble
            self._pending_nibble = None
            self._execute(value, self._rs_at_rise)

    def _execute(self, value: int, is_data: bool) -> None:
        if is_data:
            self.data_writes += 1
            self._write_ram(value)
            return
        self.instructions += 1
        if value & 0x80:
            self.address, self.in_cgram = value & 0x7F, False
        elif value & 0x40:
            self.address, self.in_cgram = value & 0x3F, True
        elif value & 0x20:
            self.eight_bit = bool(value & 0x10)
            self.two_lines = bool(value & 0x08)
            self.font_5x10 = bool(value & 0x04)
        elif value & 0x10:
            step = 1 if value & 0x04 else -1
            if value & 0x08:
                self.display_shift += step
            else:
                self._advance(step)
        elif value & 0x08:
            self.display_on = bool(value & 0x04)
            self.cursor_on = bool(value & 0x02)
            self.blink_on = bool(value & 0x01)
        elif value & 0x04:
            self.increment = bool(value & 0x02)
            self.shift_on_write = bool(value & 0x01)
        elif value & 0x02:
            self.address, self.in_cgram, self.display_shift = 0, False, 0
        elif value & 0x01:
            self.ddram[:] = b" " * 0x80
            self.address, self.in_cgram, self.display_shift = 0, False, 0
            self.increment = True
        # 0x00 is no instruction; the controller ignores it.

    def _write_ram(self, value: int) -> None:
        if self.in_cgram:
            self._cgram[self.address & 0x3F] = value
        else:
            self.ddram[self.address] = value
            if self.shift_on_write:
                # With S set the text moves and the cursor seems to stand still.
                self.display_shift += -1 if self.increment else 1
        self._advance(1 if self.increment else -1)

    def _advance(self, step: int) -> None:
        if self.in_cgram:
            self.address = (self.address + step) & 0x3F
        elif not self.two_lines:
            self.address = (self.address + step) % 80
        else:
            line, pos = self.address & 0x40, (self.address & 0x3F) + step
            if pos >= _DDRAM_LINE_LEN:
                line, pos = line ^ 0x40, 0
            elif pos < 0:
                line, pos = line ^ 0x40, _DDRAM_LINE_LEN - 1
            self.address = line | pos


class SimulatedI2cBus:
    """Stands in for :class:`smbus2.SMBus` on an I2C bus with the given devices.

    ``devices`` maps 7-bit addresses to device models with ``pcf8574_write``
    and ``pcf8574_read`` (a :class:`Pcf8574Lcd`). Use the instance itself as a
    driver's bus, or :meth:`open` where code calls ``smbus2.SMBus(port)``::

        bus = SimulatedI2cBus(devices={0x27: Pcf8574Lcd(20, 4)})
        monkeypatch.setattr(smbus2, "SMBus", bus.open)

    Counters: :attr:`bytes_written` (data bytes, without address bytes),
    :attr:`transactions` (I2C write messages) and :attr:`wire_bits` (start,
    address byte, data bytes at nine bits each with the ACK, stop).
    """

    def __init__(self, port: int = 1, devices: dict | None = None):
        self.port = port
        self.devices = dict(devices or {})
        self.closed = False
        self.fd: int | None = None
        self.opens = 0
        self._failures_left = 0
        self._fail_after_bytes = 0
        self._lock = threading.Lock()
        self.reset_counters()

    @classmethod
    def with_lcd(cls, cols: int = 20, rows: int = 4, *, address: int = 0x27,
                 port: int = 1, rom: str = "A00") -> "SimulatedI2cBus":
        """A bus with one LCD module at ``address``; the module is :attr:`lcd`."""
        return cls(port, {address: Pcf8574Lcd(cols, rows, rom)})

    @property
    def lcd(self) -> Pcf8574Lcd:
        """The (first) LCD module attached to this bus."""
        for device in self.devices.values():
            if isinstance(device, Pcf8574Lcd):
                return device
        raise LookupError("no LCD module on this simulated bus")

    def reset_counters(self) -> None:
        """Zero the traffic counters and forget the transaction history."""
        self.bytes_written = 0
        self.transactions = 0
        self.wire_bits = 0
        #: (address, bytes) of the latest write messages, oldest first.
        self.history: deque[tuple[int, bytes]] = deque(maxlen=10_000)

    def inject_failures(self, count: int = 1, *, after_bytes: int = 0) -> None:
        """Make the next ``count`` write messages fail with EREMOTEIO.

        Each failing message still delivers its first ``after_bytes`` bytes, as a
        transfer cut off by a loose cable would.
        """
        self._failures_left = count
        self._fail_after_bytes = after_bytes

    def wire_seconds(self, clock_hz: int = 100_000) -> float:
        """Time the counted traffic takes on the wire at ``clock_hz``."""
        return self.wire_bits / clock_hz

    # -- smbus2.SMBus surface -----------------------------------------------------

    def open(self, bus=None, force: bool = False) -> "SimulatedI2cBus":
        """Open like ``smbus2.SMBus(bus)``; returns this bus."""
        if bus is not None and bus != self.port and bus != f"/dev/i2c-{self.port}":
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), f"/dev/i2c-{bus}")
        self.closed = False
        self.fd = 3
        self.opens += 1
        return self

    def close(self) -> None:
        self.closed = True
        self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def write_quick(self, i2c_addr: int, force=None) -> None:
        self._transfer(i2c_addr, b"")

    def write_byte(self, i2c_addr: int, value: int, force=None) -> None:
        self._transfer(i2c_addr, bytes([value & 0xFF]))

    def write_byte_data(self, i2c_addr: int, register: int, value: int, force=None) -> None:
        self._transfer(i2c_addr, bytes([register & 0xFF, value & 0xFF]))

    def write_i2c_block_data(self, i2c_addr: int, register: int, data, force=None) -> None:
        if len(data) > _SMBUS_BLOCK_MAX:
            raise ValueError(f"Data length cannot exceed {_SMBUS_BLOCK_MAX} bytes")
        self._transfer(i2c_addr, bytes([register & 0xFF]) + bytes(b & 0xFF for b in data))

    def read_byte(self, i2c_addr: int, force=None) -> int:
        device = self._device(i2c_addr)
        with self._lock:
            self.transactions += 1
            self.wire_bits += 1 + 9 + 9 + 1
        return device.pcf8574_read()

    def i2c_rdwr(self, *msgs) -> None:
        """Combined transfer: each message gets a (repeated) start, one stop at the end."""
        for msg in msgs:
            if msg.flags & 0x0001:  # I2C_M_RD
                device = self._device(msg.addr)
                value = device.pcf8574_read()
                for i in range(msg.len):
                    msg.buf[i] = bytes([value])
                with self._lock:
                    self.transactions += 1
                    self.wire_bits += 1 + 9 + 9 * msg.len
            else:
                self._transfer(msg.addr, bytes(msg), stop=False)
        with self._lock:
            self.wire_bits += 1

    def _device(self, i2c_addr: int):
        if self.closed:
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        try:
            return self.devices[i2c_addr]
        except KeyError:
            # What the Pi's I2C controller reports when no device ACKs the address.
            raise OSError(errno.EREMOTEIO, os.strerror(errno.EREMOTEIO)) from None

    def _transfer(self, i2c_addr: int, data: bytes, stop: bool = True) -> None:
        device = self._device(i2c_addr)
        with self._lock:
            self.transactions += 1
            self.bytes_written += len(data)
            self.wire_bits += 1 + 9 * (1 + len(data)) + (1 if stop else 0)
            self.history.append((i2c_addr, data))
            failing = self._failures_left > 0
            if failing:
                self._failures_left -= 1
                data = data[:self._fail_after_bytes]
            for byte in data:
                device.pcf8574_write(byte)
        if failing:
            raise OSError(errno.EREMOTEIO, os.strerror(errno.EREMOTEIO))
