"""Serial card readers emulated on a pseudo-terminal: a Pepper C1 and a ``DBX1`` shoe.

Each emulator owns a pty pair (:func:`os.openpty`) and a background thread that
plays the device end. The driver opens :attr:`PtySerialDevice.port` with
``serial.serial_for_url`` exactly as it would open ``/dev/ttyUSB0``. That path is a
symbolic link to the current pty, like a ``/dev/serial/by-id`` link: "unplugging"
closes the pty and removes the link; "plugging in" makes a new pty and points the
link at it, so the driver can reconnect to the same path.

The wire formats are written here from the protocol descriptions, deliberately
without the drivers' code (:mod:`dealerbox.hw.serial`), so that a mistake on
one side shows up as a failing test instead of cancelling out.

Test-only methods, in the manner of gpiozero's mock pins:
``place_tag(antenna, uid)``, ``remove_tag(antenna, uid)``, ``clear_tags()``,
``tags(antenna)``; and a history of what the driver sent (:attr:`received`).

Fault injection, in the manner of OctoPrint's virtual printer (settings you flip,
plus one-shot injections):

* drop: :meth:`unplug` / :meth:`plug` (the port goes away and comes back);
* stall: :meth:`stall` (stop answering and sending, for a while or until :meth:`resume`);
* garbage: ``garbage_rate`` (chance of random bytes before each frame/line),
  ``bad_crc_rate`` (chance a frame/line goes out with a wrong checksum),
  ``split_writes`` (send each frame in two writes with a pause between),
  :meth:`inject_garbage`, :meth:`inject_bad_crc`, :meth:`inject_partial`, :meth:`inject_raw`.

Every device is a context manager; :meth:`close` stops the thread and is safe twice.
No pyserial URL handler is registered: the pty path works with every pyserial URL
consumer and keeps the real port code path under test.
"""

from __future__ import annotations

import collections
import errno
import logging
import os
import random
import select
import shutil
import tempfile
import threading
import time
import tty

__all__ = ["PtySerialDevice", "PepperC1Emulator", "ShoeLineEmulator"]

_OUT_LIMIT = 1 << 20  # bytes queued towards the host before new output is dropped, like an overrun


def _uid_bytes(uid) -> bytes:
    if isinstance(uid, (bytes, bytearray)):
        raw = bytes(uid)
    else:
        raw = bytes.fromhex(str(uid).replace(":", "").replace(" ", ""))
    if not 1 <= len(raw) <= 10:
        # Real tags have 4, 7 or 10; other lengths are allowed to test odd tags.
        raise ValueError(f"a tag UID has 1..10 bytes, not {len(raw)}")
    return raw


class PtySerialDevice:
    """A device at the far end of a pseudo-terminal, run by a background thread.

    Subclasses override :meth:`_on_bytes` (bytes the driver sent), :meth:`_on_tick`
    (called every ``tick`` seconds for spontaneous output) and may override
    :meth:`_on_plug` (the device has just been powered/plugged).
    """

    def __init__(self, *, name: str = "serial-sim", seed: int = 0, tick: float = 0.002,
                 link_dir: str | None = None):
        self.name = name
        self.rng = random.Random(seed)
        #: Seconds a split write pauses between its two halves.
        self.split_pause = 0.003
        self._pauses: list[int] = []  # offsets in the output where a split write pauses
        self._hold_until = 0.0
        self.tick = tick
        self.garbage_rate = 0.0
        self.bad_crc_rate = 0.0
        self.split_writes = False
        #: Bounded history of what the driver sent, oldest first.
        self.received: collections.deque = collections.deque(maxlen=1000)
        self.bytes_in = 0
        self.bytes_out = 0
        self.dropped_out = 0
        self.plug_count = 0
        self._tags: dict[int, dict[bytes, None]] = {}  # antenna -> UIDs in order of arrival
        self._lock = threading.RLock()
        self._out = bytearray()
        self._master: int | None = None
        self._slave: int | None = None
        self._slave_path: str | None = None
        self._stalled_until = 0.0
        self._own_dir = link_dir is None
        self._dir = tempfile.mkdtemp(prefix="dealerbox-sim-") if link_dir is None else link_dir
        self.port = os.path.join(self._dir, name)
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self._stop = threading.Event()
        self._closed = False
        self.plug()
        self._thread = threading.Thread(target=self._run, name=f"{name}-emulator", daemon=True)
        self._thread.start()

    # -- the table: tags in the field of each antenna ----------------------------------
    def place_tag(self, antenna: int, uid) -> None:
        """Put a tag (hex string or bytes, normally 4/7/10 bytes) in the field of *antenna*."""
        with self._lock:
            self._tags.setdefault(antenna, {})[_uid_bytes(uid)] = None

    def remove_tag(self, antenna: int, uid) -> None:
        """Take a tag out of the field of *antenna* (no error if it was not there)."""
        with self._lock:
            self._tags.get(antenna, {}).pop(_uid_bytes(uid), None)

    def clear_tags(self, antenna: int | None = None) -> None:
        with self._lock:
            if antenna is None:
                self._tags.clear()
            else:
                self._tags.pop(antenna, None)

    def tags(self, antenna: int) -> list[str]:
        """The UIDs in the field of *antenna*, upper-case hex, in order of arrival."""
        with self._lock:
            return [u.hex().upper() for u in self._tags.get(antenna, {})]

    def _tag_list(self, antenna: int) -> list[bytes]:
        with self._lock:
            return list(self._tags.get(antenna, {}))

    # -- faults ------------------------------------------------------------------------
    @property
    def plugged(self) -> bool:
        return self._master is not None

    @property
    def slave_path(self) -> str | None:
        """The current /dev/pts/N (changes at each plug); prefer :attr:`port`."""
        return self._slave_path

    def unplug(self) -> None:
        """Pull the cable: close the pty and remove the port's link."""
        with self._lock:
            self._close_pty()
        self._wake()

    def plug(self) -> None:
        """Plug the cable back in (a new pty behind the same :attr:`port` path)."""
        with self._lock:
            if self._closed or self._master is not None:
                return
            master, slave = os.openpty()
            # Raw, no echo: otherwise the line discipline would bounce our own output
            # back to us before the driver opens the port and sets it up.
            tty.setraw(slave)
            os.set_blocking(master, False)
            self._master, self._slave = master, slave
            self._slave_path = os.ttyname(slave)
            self._out.clear()
            tmp = self.port + ".new"
            if os.path.lexists(tmp):
                os.unlink(tmp)
            os.symlink(self._slave_path, tmp)
            os.replace(tmp, self.port)
            self.plug_count += 1
            self._on_plug()
        self._wake()

    def stall(self, seconds: float | None = None) -> None:
        """Stop answering and sending for *seconds* (None: until :meth:`resume`)."""
        self._stalled_until = float("inf") if seconds is None else time.monotonic() + seconds

    def resume(self) -> None:
        self._stalled_until = 0.0
        self._wake()

    @property
    def stalled(self) -> bool:
        return time.monotonic() < self._stalled_until

    def inject_raw(self, data: bytes) -> None:
        """Send *data* to the host as it is."""
        self._send(bytes(data), raw=True)

    def inject_garbage(self, nbytes: int) -> None:
        """Send *nbytes* random bytes to the host."""
        self._send(self.rng.randbytes(nbytes), raw=True)

    # -- life cycle --------------------------------------------------------------------
    def close(self) -> None:
        """Stop the thread, close the pty, remove the link. Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._stop.set()
        self._wake()
        self._thread.join(timeout=5)
        with self._lock:
            self._close_pty()
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        if self._own_dir:
            shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- for subclasses ----------------------------------------------------------------
    def _on_bytes(self, data: bytes) -> None:
        raise NotImplementedError

    def _on_tick(self, now: float) -> None:
        pass

    def _on_plug(self) -> None:
        pass

    def _send(self, data: bytes, *, raw: bool = False) -> None:
        """Queue *data* for the host, with the configured garbage before it."""
        with self._lock:
            if self._master is None:
                return
            if not raw and self.garbage_rate and self.rng.random() < self.garbage_rate:
                self._queue(self.rng.randbytes(self.rng.randint(1, 16)))
            if not raw and self.split_writes and len(data) > 1:
                cut = self.rng.randint(1, len(data) - 1)
                self._queue(data[:cut])
                self._queue(None)  # a pause marker: the rest goes out on a later turn
                self._queue(data[cut:])
            else:
                self._queue(data)
        self._wake()

    def _queue(self, data: bytes | None) -> None:
        if data is None:
            self._pauses.append(len(self._out))
            return
        if len(self._out) + len(data) > _OUT_LIMIT:
            self.dropped_out += len(data)
            return
        self._out += data

    # -- internals ---------------------------------------------------------------------
    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"!")
        except OSError:
            pass

    def _close_pty(self) -> None:
        for fd in (self._master, self._slave):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._master = self._slave = None
        self._slave_path = None
        self._out.clear()
        self._pauses.clear()
        self._hold_until = 0.0
        if os.path.lexists(self.port):
            try:
                os.unlink(self.port)
            except OSError:
                pass

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._turn()
            except Exception:  # the emulator must outlive any one bad turn
                logging.getLogger(__name__).exception("%s: emulator turn failed", self.name)
                time.sleep(self.tick)

    def _turn(self) -> None:
        with self._lock:
            fd = self._master
            want_write = (fd is not None and bool(self._out) and not self.stalled
                          and time.monotonic() >= self._hold_until)
        rlist = [self._wake_r] + ([fd] if fd is not None else [])
        wlist = [fd] if want_write else []
        try:
            readable, writable, _ = select.select(rlist, wlist, [], self.tick)
        except (OSError, ValueError):
            return  # the pty closed under us (unplug); the next turn sees it
        if self._wake_r in readable:
            try:
                os.read(self._wake_r, 4096)
            except OSError:
                pass
        with self._lock:
            if fd is None or fd != self._master:
                return
            if fd in readable:
                try:
                    data = os.read(fd, 4096)
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EIO):
                        raise
                    data = b""
                if data:
                    self.bytes_in += len(data)
                    if not self.stalled:
                        self._on_bytes(data)
            if fd in writable and self._out and not self.stalled:
                self._write_some(fd)
            if not self.stalled:
                self._on_tick(time.monotonic())

    def _write_some(self, fd: int) -> None:
        if time.monotonic() < self._hold_until:
            return
        limit = len(self._out)
        if self._pauses:
            limit = self._pauses[0]
            if limit == 0:
                self._pauses.pop(0)
                self._hold_until = time.monotonic() + self.split_pause
                return
        try:
            n = os.write(fd, self._out[:min(limit, 4096)])
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EIO):
                return
            raise
        del self._out[:n]
        self.bytes_out += n
        self._pauses = [p - n for p in self._pauses]


# -- Eccel Pepper C1 ---------------------------------------------------------------------


def _crc16_bitwise(data: bytes) -> int:
    """CRC-16/CCITT-FALSE, bit by bit (the driver uses a table; they must agree)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = (crc << 1) ^ 0x1021 if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def _pepper_frame(payload: bytes, *, bad_crc: bool = False) -> bytes:
    n = len(payload) + 2
    header = bytes((0xF5, n & 0xFF, n >> 8, (n & 0xFF) ^ 0xFF, (n >> 8) ^ 0xFF))
    crc = _crc16_bitwise(payload) ^ (0x5A5A if bad_crc else 0)
    return header + payload + crc.to_bytes(2, "little")


class PepperC1Emulator(PtySerialDevice):
    """An Eccel Pepper C1 with an antenna multiplexer, speaking its binary protocol.

    It answers DUMMY, GET_TAG_COUNT, GET_UID, SET_POLLING, GET_VERSION and the
    antenna select command (``0F n``, as the driver assumes it); other opcodes get
    ``ERROR 0x0024`` (not supported), a command with a bad CRC gets ``FF FF 02`` as
    the vendor's firmware does. GET_TAG_COUNT finds at most ``max_tags`` tags (5, the
    vendor's documented discovery-loop limit) on the selected antenna.

    Extra fault injection: :meth:`corrupt_next` (the next answers go out with a bad
    CRC), :meth:`delay_answer` (an answer comes late), :meth:`inject_bad_crc` (extra
    well-formed frames with a bad CRC), :meth:`inject_partial` (half a frame).
    """

    ERROR_NOT_SUPPORTED = 0x0024
    ERROR_BAD_PARAMETER = 0x0021

    def __init__(self, *, antennas: int = 8, firmware: str = "1.0.3-sim", max_tags: int = 5, **kwargs):
        self.antennas = antennas
        self.firmware = firmware
        self.max_tags = max_tags
        self.selected_antenna = 1
        self.polling = False
        self.commands = 0
        self._inventory: list[bytes] = []
        self._corrupt = 0
        self._delay: list = []  # [answers still to go before the late one, seconds]
        self._rx = bytearray()
        super().__init__(**kwargs)

    def delay_answer(self, seconds: float, nth: int = 1) -> None:
        """Hold the *nth* answer from now (and everything after it) back for *seconds*,
        as a reader busy with its RF field would."""
        with self._lock:
            self._delay = [nth, seconds]

    def corrupt_next(self, count: int = 1) -> None:
        """Send the next *count* answers with a wrong CRC."""
        with self._lock:
            self._corrupt += count

    def inject_bad_crc(self, count: int) -> None:
        """Send *count* well-formed frames whose CRC is wrong (each a plausible answer)."""
        with self._lock:
            chunk = b"".join(_pepper_frame(bytes((0x00, 0x02, i % 6)), bad_crc=True) for i in range(count))
        self._send(chunk, raw=True)

    def inject_partial(self) -> None:
        """Send the first half of a valid answer frame and nothing more."""
        frame = _pepper_frame(b"\x00\x02\x01")
        self._send(frame[:len(frame) // 2 + 1], raw=True)

    def _on_plug(self) -> None:
        self._rx.clear()
        self.selected_antenna = 1
        self._inventory = []

    def _on_bytes(self, data: bytes) -> None:
        # The vendor's receiver: hunt for a header whose XOR bytes match, then take LEN bytes.
        rx = self._rx
        rx += data
        def header_at(i: int) -> bool:
            return rx[i] == 0xF5 and rx[i + 1] == rx[i + 3] ^ 0xFF and rx[i + 2] == rx[i + 4] ^ 0xFF

        while True:
            i = 0
            while i + 5 <= len(rx) and not header_at(i):
                i += 1
            del rx[:i]
            if len(rx) < 5:
                return
            n = rx[1] | rx[2] << 8
            if n < 3 or n > 1026:
                del rx[:1]
                continue
            if len(rx) < 5 + n:
                return
            payload, crc = bytes(rx[5:5 + n - 2]), rx[5 + n - 2] | rx[5 + n - 1] << 8
            del rx[:5 + n]
            if _crc16_bitwise(payload) != crc:
                self._answer(b"\xff\xff\x02")
                continue
            self.received.append((payload[0], payload[1:]))
            self.commands += 1
            self._execute(payload[0], payload[1:])

    def _answer(self, payload: bytes) -> None:
        late = False
        if self._delay:
            self._delay[0] -= 1
            if self._delay[0] == 0:
                self._hold_until = time.monotonic() + self._delay[1]
                self._delay, late = [], True
        bad = False
        if self._corrupt:
            self._corrupt -= 1
            bad = True
        elif self.bad_crc_rate and self.rng.random() < self.bad_crc_rate:
            bad = True
        self._send(_pepper_frame(payload, bad_crc=bad))
        if late:
            with self._lock:
                # The commands that queued up meanwhile take their own time to run.
                self._queue(None)

    def _ack(self, cmd: int, data: bytes = b"") -> None:
        self._answer(bytes((0x00, cmd)) + data)

    def _error(self, cmd: int, code: int) -> None:
        self._answer(bytes((0xFF, cmd)) + code.to_bytes(2, "big"))

    def _execute(self, cmd: int, args: bytes) -> None:
        if cmd == 0x01:
            self._ack(cmd)
        elif cmd == 0x02:
            self._inventory = self._tag_list(self.selected_antenna)[:self.max_tags]
            self._ack(cmd, bytes((len(self._inventory),)))
        elif cmd == 0x03:
            if len(args) != 1 or args[0] >= len(self._inventory):
                self._error(cmd, self.ERROR_BAD_PARAMETER)
                return
            uid = self._inventory[args[0]]
            # Tag type and SAK as the vendor reports them: Ultralight/NTAG for 7 bytes, Classic 1k else.
            kind, sak = (0x01, 0x00) if len(uid) == 7 else (0x04, 0x08)
            self._ack(cmd, bytes((kind, sak)) + uid)
        elif cmd == 0x06:
            if not args:
                self._error(cmd, self.ERROR_BAD_PARAMETER)
                return
            self.polling = bool(args[0])
            self._ack(cmd)
        elif cmd == 0x0B:
            self._ack(cmd, self.firmware.encode("ascii"))
        elif cmd == 0x0F:
            if len(args) != 1 or not 1 <= args[0] <= self.antennas:
                self._error(cmd, self.ERROR_BAD_PARAMETER)
                return
            self.selected_antenna = args[0]
            self._ack(cmd)
        else:
            self._error(cmd, self.ERROR_NOT_SUPPORTED)


# -- DBX1 shoe -----------------------------------------------------------------------------


def _crc8_bitwise(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def _dbx1_line(body: str, *, bad_crc: bool = False) -> bytes:
    raw = body.encode("ascii")
    crc = _crc8_bitwise(raw) ^ (0x55 if bad_crc else 0)
    return b"$" + raw + b" *" + f"{crc:02X}".encode() + b"\n"


class ShoeLineEmulator(PtySerialDevice):
    """A shoe's microcontroller streaming the ``DBX1`` line protocol.

    It sends a hello at plug-in and on ``?``, a full scan report (``T`` lines then an
    ``E`` line) for each of its ``antennas`` every ``scan_interval`` seconds, and a
    heartbeat every ``heartbeat_interval`` seconds. ``protocol`` may be changed to
    make it announce a protocol the host does not speak.

    Extra fault injection: :meth:`inject_bad_crc` (lines with a wrong CRC),
    :meth:`inject_partial` (a line cut short), :meth:`inject_line` (any body, e.g. an
    ``X`` error report).
    """

    def __init__(self, *, antennas: int = 2, firmware: str = "1.0.0-sim", protocol: str = "DBX1",
                 scan_interval: float = 0.02, heartbeat_interval: float = 0.5, **kwargs):
        self.antennas = antennas
        self.firmware = firmware
        self.protocol = protocol
        self.scan_interval = scan_interval
        self.heartbeat_interval = heartbeat_interval
        self.scans_sent = 0
        self._seq: dict[int, int] = {}
        self._started = time.monotonic()
        self._next_scan = 0.0
        self._next_beat = 0.0
        self._rx = bytearray()
        super().__init__(**kwargs)

    def inject_line(self, body: str) -> None:
        """Send one valid line with *body*."""
        self._send(_dbx1_line(body), raw=True)

    def inject_bad_crc(self, count: int) -> None:
        """Send *count* plausible tag lines whose CRC is wrong."""
        with self._lock:
            uids = self._tag_list(1) or [b"\x04\x11\x22\x33\x44\x55\x66"]
            chunk = b"".join(_dbx1_line(f"T 1 {i % 256} {uids[i % len(uids)].hex().upper()}", bad_crc=True)
                             for i in range(count))
        self._send(chunk, raw=True)

    def inject_partial(self) -> None:
        """Send the start of a tag line, cut before its end."""
        self._send(_dbx1_line("T 1 0 04A3C6CAE26180")[:10], raw=True)

    def _line(self, body: str) -> None:
        bad = bool(self.bad_crc_rate) and self.rng.random() < self.bad_crc_rate
        self._send(_dbx1_line(body, bad_crc=bad))

    def _hello(self) -> None:
        self._line(f"H {self.protocol} {self.firmware} {self.antennas}")

    def _on_plug(self) -> None:
        self._rx.clear()
        self._started = time.monotonic()
        self._next_scan = self._next_beat = 0.0
        self._hello()

    def _on_bytes(self, data: bytes) -> None:
        self._rx += data
        while (nl := self._rx.find(b"\n")) >= 0:
            line = bytes(self._rx[:nl]).rstrip(b"\r")
            del self._rx[:nl + 1]
            start = line.rfind(b"$")
            if start < 0 or len(line) - start < 5:
                continue
            line = line[start:]
            raw, tail = line[1:-4], line[-4:]
            if tail[:2] != b" *":
                continue
            try:
                ok = int(tail[2:], 16) == _crc8_bitwise(raw)
            except ValueError:
                ok = False
            if not ok:
                continue
            body = raw.decode("ascii", "replace")
            self.received.append(body)
            if body == "?":
                self._hello()
        if len(self._rx) > 256:
            self._rx.clear()

    def _on_tick(self, now: float) -> None:
        if now >= self._next_scan:
            self._next_scan = now + self.scan_interval
            for antenna in range(1, self.antennas + 1):
                seq = self._seq[antenna] = (self._seq.get(antenna, -1) + 1) % 256
                uids = self._tag_list(antenna)
                for uid in uids:
                    self._line(f"T {antenna} {seq} {uid.hex().upper()}")
                self._line(f"E {antenna} {seq} {len(uids)}")
            self.scans_sent += 1
        if now >= self._next_beat:
            self._next_beat = now + self.heartbeat_interval
            self._line(f"B {int((now - self._started) * 1000)}")
