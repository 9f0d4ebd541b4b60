"""The table's side of floor reporting: the journal is the outbox.

A :class:`Publisher` runs in its own threads and never blocks the engine or
the LED: the daemon only appends to the journal, as it always does, and the
publisher reads the stored lines back and sends them, exactly as stored, from
the floor's last acknowledged ``seq``.

- At most ``window`` lines are in flight (sent, not yet acknowledged), in
  batches of at most ``batch`` lines per message.
- The cursor (the last ``seq`` the floor acknowledged) moves only on the
  collector's application acknowledgement on ``dealerbox/v1/ack/<table>``,
  which the collector sends after committing to its store, never on a PUBACK:
  a PUBACK only says the broker took the message (a broker may acknowledge
  with reason 16, no subscribers, and a SIGKILLed broker forgets it).
- Unacknowledged lines are sent again from the cursor on every (re)connect,
  when a collector goes (its Last Will), when it asks for a resend, and when no
  acknowledgement came for ``ack_timeout`` seconds. When a collector announces
  itself they are sent again at once if the broker took a message that no
  subscriber got (PUBACK reason 16: no collector was there), and otherwise only
  those still unacknowledged :data:`BIRTH_GRACE_S` later: the collectors
  already running have them.
- The cursor is kept in ``floor-cursor.json`` next to the journal, so after
  a crash the table resumes where the floor stands; journal retention asks
  :meth:`Publisher.keep_from_seq` and keeps every line not yet acknowledged.
- Retained ``status`` (birth; the Last Will says the same ``boot`` and
  ``conn``), ``state`` and ``health`` are published on every connect.
- The broker keeps no session for the table: every connection starts clean
  and its session ends with it (session expiry 0), and the Last Will has no
  delay. What a session would keep, the journal and the acknowledgements
  keep already; and a session that outlives its connection is what Debian's
  mosquitto 2.0.11 mishandles on a reload (SIGHUP), until it crashes.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from dealerbox.atomic import save_atomic
from dealerbox.service.journal import journal_files
from dealerbox.errors import ConfigError
from dealerbox.options import (Flag, Integer, Number, Option, RaisingReporter, Text, option, options_of,
                               read_fields, unknown_keys)
from dealerbox.tomlfile import read_toml
from dealerbox.link import protocol as P
from dealerbox.link.client import Complaints, Identity, make_client, mqtt

__all__ = ["FloorSettings", "Publisher", "JournalReader", "clock_problem", "floor_settings", "load_table_floor"]

log = logging.getLogger(__name__)

CURSOR_NAME = "floor-cursor.json"
CURSOR_SAVE_S = 1.0
POLL_S = 0.2
#: After a collector's birth, lines that reached a collector are sent again only if still
#: unacknowledged this much later: the collectors that took them file them. Sent again at
#: once, a group of three filed every table's lines in flight twice whenever one of them
#: started (the group bench: nearly half the tables at once).
BIRTH_GRACE_S = 1.0
_NO_MATCHING_SUBSCRIBERS = 16
BOOT_NAME = "floor-boot"
_SEQ_RE = re.compile(rb'^\{"seq":(\d+),')
#: Before this (2020-01-01) a wall clock is certainly wrong: a Pi without an
#: RTC that has not synchronised yet starts near 1970.
PLAUSIBLE_EPOCH = 1577836800.0


@dataclass(frozen=True)
class _Removed(Option):
    """A key that was taken out: any value is refused, saying why and what to do (the doc)."""

    def convert(self, ctx, key, value):
        return ctx.fail(key, f"no such key any more: {self.doc}", value)

    def expected(self) -> str:
        return "nothing (the key was removed)"

    def type_name(self) -> str:
        return "removed"


#: What ``check-config`` says when ``[floor]`` is on and paho-mqtt cannot be imported.
MQTT_MISSING = ("paho-mqtt installed, which reporting to the floor needs: install dealerbox's mqtt extra "
                "(systemd/install.sh adds it when [floor] is enabled: run it again; or by hand: "
                "/opt/dealerbox/.venv/bin/pip install 'paho-mqtt>=2.0')")


@dataclass(frozen=True, kw_only=True)
class FloorSettings:
    """[floor]: the table's journal streamed to the floor over MQTT v5 (docs/floor/install.md); off when left out."""

    enabled: bool = option(Flag(doc="report to the floor"), False)
    table: str = option(Text(doc="the table id: the CN of its certificate", max_len=64,
                             expect="letters, digits, _ . - (1 to 64), not starting with floor-"), "")
    host: str = option(Text(doc="the broker (its certificate must name it)", max_len=253), "127.0.0.1")
    port: int = option(Integer(doc="the broker's TLS port", lo=1, hi=65535), 8883)
    ca: str = option(Text(doc="the casino CA certificate (absolute path)"), "/etc/dealerbox/floor/ca.crt")
    cert: str = option(Text(doc="the table's certificate (absolute path)"), "/etc/dealerbox/floor/table.crt")
    key: str = option(Text(doc="the table's private key (absolute path)"), "/etc/dealerbox/floor/table.key")
    keepalive_s: int = option(Integer(doc="MQTT keepalive; the broker declares the table lost after 1.5x",
                                      lo=5, hi=600), 30)
    will_delay_s: None = option(_Removed(
        doc="removed: the broker keeps no session for a table (Debian's mosquitto 2.0.11 crashes on a reload "
            "that meets one), so its Last Will cannot wait: a lost table shows offline at once. Delete the line"),
        None)
    window: int = option(Integer(doc="journal lines in flight at most", lo=1, hi=10000), 256)
    batch: int = option(Integer(doc="journal lines per message at most", lo=1, hi=1000), 64)
    ack_timeout_s: float = option(Number(doc="send again from the cursor when no ack came this long",
                                         lo=1.0, hi=600.0), 15.0)
    health_interval_s: float = option(Number(doc="how often health is published", lo=1.0, hi=3600.0), 30.0)

    def __post_init__(self):
        if self.will_delay_s is not None:
            raise ValueError("floor: will_delay_s was removed (the broker keeps no session for a table)")

    @staticmethod
    def validate(values: dict, fail) -> None:
        table = values.get("table")
        if values.get("enabled") and table is not None and not P.valid_table_id(table):
            fail("table", "the table id, as the CN of its certificate (letters, digits, _ . -; "
                          "not starting with floor-)", table)
        if values.get("enabled") and mqtt is None:
            fail("enabled", MQTT_MISSING, True)

    @property
    def identity(self) -> Identity:
        return Identity(self.host, self.port, Path(self.ca), Path(self.cert), Path(self.key))


# --------------------------------------------------------------------------
# Reading stored lines back


class _AtEnd(Exception):
    """Nothing new in the current file."""


class JournalReader:
    """Complete stored lines of a journal directory, from a given ``seq``.

    Remembers where it stopped, so following the newest file costs one read
    of what was appended since. Only lines ending in a newline are read: a
    line being written (or torn by a power cut) is not sent.
    """

    def __init__(self, directory):
        self.directory = Path(directory)
        self._path: Path | None = None
        self._offset = 0
        self._next = 0  # the seq expected at (_path, _offset); 0 = unknown
        self._next_listing = 0.0
        self.problem: str | None = None

    def oldest(self) -> int | None:
        """The oldest ``seq`` still stored, or None for an empty journal."""
        for _day, path in journal_files(self.directory):
            with open(path, "rb") as f:
                m = _SEQ_RE.match(f.readline())
            if m:
                return int(m.group(1))
        return None

    def _seek(self, seq: int) -> None:
        self._path, self._offset, self._next = None, 0, 0
        files = journal_files(self.directory)
        for i, (_day, path) in enumerate(files):
            if i < len(files) - 1:
                last = _last_seq(path)
                if last is not None and last < seq:
                    continue  # the whole day is before seq: not read
            with open(path, "rb") as f:
                offset = 0
                for raw in f:
                    m = _SEQ_RE.match(raw)
                    if not raw.endswith(b"\n") or not m:
                        break
                    if int(m.group(1)) >= seq:
                        self._path, self._offset, self._next = path, offset, int(m.group(1))
                        return
                    offset += len(raw)
            if i == len(files) - 1:  # not written yet: wait at the end
                self._path, self._offset, self._next = path, offset, seq

    def read(self, seq: int, limit: int) -> list[tuple[int, bytes]]:
        """Up to ``limit`` lines ``(seq, bytes without newline)`` from ``seq`` on."""
        if self._next != seq or self._path is None:
            self._seek(seq)
            if self._path is None:
                return []
        out: list[tuple[int, bytes]] = []
        while len(out) < limit:
            try:
                if os.stat(self._path).st_size <= self._offset:
                    raise _AtEnd
                with open(self._path, "rb") as f:
                    f.seek(self._offset)
                    for raw in f:
                        if not raw.endswith(b"\n"):
                            break
                        m = _SEQ_RE.match(raw)
                        if not m or int(m.group(1)) != self._next:
                            self.problem = (f"{self._path.name}: line at byte {self._offset} "
                                            f"is not seq {self._next}")
                            return out
                        out.append((self._next, raw[:-1]))
                        self._offset += len(raw)
                        self._next += 1
                        if len(out) >= limit:
                            return out
            except FileNotFoundError:
                self._path = None
                return out
            except _AtEnd:
                pass
            # End of this file: go on in the next day's file, if there is one
            # (looked for at most once a second: a listing per poll is costly).
            mono = time.monotonic()
            if mono < self._next_listing:
                return out
            self._next_listing = mono + 1.0
            files = [p for _d, p in journal_files(self.directory)]
            try:
                i = files.index(self._path)
            except ValueError:
                return out
            if i + 1 >= len(files):
                return out
            self._path, self._offset = files[i + 1], 0
        return out


def _last_seq(path: Path) -> int | None:
    """The ``seq`` of the last complete line of a day file, reading only its end."""
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        step = 4096
        while True:
            start = max(0, size - step)
            f.seek(start)
            data = f.read(size - start)
            body = data[:data.rfind(b"\n") + 1]
            lines = body.split(b"\n")[:-1]
            if start > 0 and len(lines) > 0:
                lines = lines[1:]  # the first may be cut
            for raw in reversed(lines):
                m = _SEQ_RE.match(raw)
                if m:
                    return int(m.group(1))
            if start == 0:
                return None
            step *= 4


def clock_problem(wall: float) -> str | None:
    """Why the wall clock cannot be trusted, or None."""
    if wall < PLAUSIBLE_EPOCH:
        return "the wall clock is before 2020: not set, or jumped back"
    return None


def kernel_clock_synchronised() -> bool | None:
    """The kernel's NTP state (adjtimex): True when synchronised, None when unknown."""
    try:
        import ctypes
        import ctypes.util

        class Timex(ctypes.Structure):
            _fields_ = [("modes", ctypes.c_uint), ("_pad", ctypes.c_long * 64)]

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        state = libc.adjtimex(ctypes.byref(Timex()))
    except (OSError, AttributeError):
        return None
    return None if state < 0 else state != 5  # 5 = TIME_ERROR: not synchronised


# --------------------------------------------------------------------------
# The publisher


def _read_json(path: Path) -> dict:
    try:
        d = json.loads(path.read_text())
        return d if isinstance(d, dict) else {}
    except (OSError, ValueError):
        return {}


@dataclass
class _Link:
    connected: bool = False
    conn: int = 0
    rewind_to: int | None = None
    #: The broker took a journal message no subscriber got, since the last rewind.
    unheard: bool = False
    #: The journal messages sent on this connection that the broker has not acknowledged.
    in_flight: set[int] = field(default_factory=set)
    #: After a collector's birth: when to look again, and the last seq sent before it.
    recheck: tuple[float, int] | None = None


class StateBoard:
    """The floor's ``state`` board of one table: the open irregularity (since when, which
    step) and the phase, as the box's decisions in the journal say."""

    def __init__(self):
        self.state: dict = {"open": None, "phase": None}

    def note(self, raw: bytes) -> bool:
        """Take one journal line into account; whether the board changed."""
        if b'"decision"' not in raw and b'"new_hand"' not in raw:
            return False
        try:
            d = json.loads(raw)
        except ValueError:
            return False
        if isinstance(d.get("decision"), dict):
            dec = d["decision"]
            if dec.get("verdict") in (None, "ok") or not dec.get("irregularity"):
                new = {"open": None, "phase": dec.get("phase")}
            else:
                old = self.state.get("open") or {}
                since = (old.get("since") if old.get("irregularity") == dec.get("irregularity")
                         else d.get("wall"))
                new = {"open": {"irregularity": dec.get("irregularity"), "verdict": dec.get("verdict"),
                                "seq": d.get("seq"), "since": since, "step": dec.get("step"),
                                "steps": dec.get("steps")},
                       "phase": dec.get("phase")}
        elif isinstance(d.get("event"), dict) and d["event"].get("ev") == "new_hand":
            new = {"open": None, "phase": "deal"}
        else:
            return False
        if new != self.state:
            self.state = new
            return True
        return False


class JournalTail:
    """The journal's end as the publisher follows it: the newest ``seq`` (``head``, for
    ``backlog``), the :class:`StateBoard` fed with every new line, and the lines the
    sender will need soon (``recent``, at most two windows), so it need not read them again."""

    def __init__(self, directory: Path, window: int):
        self.directory = directory
        self.window = window
        self.head = 0
        self.recent: dict[int, bytes] = {}
        self.board = StateBoard()
        self._reader: JournalReader | None = None

    def follow(self, acked: int) -> bool:
        """Read what was appended since the last call; whether the state board changed."""
        if self._reader is None:
            # The board is followed from the cursor on: what is older was seen by the floor already.
            self._reader = JournalReader(self.directory)
            self.head = acked
        changed = False
        while True:
            lines = self._reader.read(self.head + 1, 512)
            if not lines:
                break
            for seq, raw in lines:
                changed |= self.board.note(raw)
                self.recent[seq] = raw
            self.head = lines[-1][0]
        if len(self.recent) > 2 * self.window:
            floor = self.head - self.window
            self.recent = {k: v for k, v in self.recent.items() if k > floor}
        return changed


class Publisher:
    """Streams a table's journal to the floor; see the module docstring.

    :param settings: the ``[floor]`` settings.
    :param journal_dir: the journal directory (the cursor and boot counter
        files live there too).
    :param readers: returns ``{reader name: {"last_seen_s": seconds since its
        last good poll, "faulted": bool}}`` for ``health``; optional.
    :param box: returns more ``health`` keys of the box itself (the journal's
        storage fault); optional.
    :param clock: the wall clock (POSIX seconds), injected like the journal's.
    :param on_acked: called with the new cursor each time the floor
        acknowledges more lines (from paho's thread; keep it short).
    :param on_registry: called with the payload of each message on the table's room
        registry topic (from paho's thread; keep it short); None: not subscribed.
    :param registry: returns the room registry the box judges with, ``{"version",
        "fingerprint"}`` or None, for ``health``; optional.

    A context manager; :meth:`close` is safe twice. :meth:`start` returns at
    once: connecting, sending and retrying all happen in background threads.
    """

    def __init__(self, settings: FloorSettings, journal_dir, *,
                 readers: Callable[[], dict] | None = None,
                 box: Callable[[], dict] | None = None,
                 clock: Callable[[], float] = time.time,
                 monotonic: Callable[[], float] = time.monotonic,
                 clock_synchronised: Callable[[], bool | None] = kernel_clock_synchronised,
                 on_acked: Callable[[int], None] | None = None,
                 on_registry: Callable[[bytes], None] | None = None,
                 registry: Callable[[], dict | None] | None = None):
        if not P.valid_table_id(settings.table):
            raise ValueError(f"floor: table id {settings.table!r} is not valid "
                             "(letters, digits, _ . -; not starting with floor-)")
        self.settings = settings
        self.table = settings.table
        self.directory = Path(journal_dir)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._readers = readers or (lambda: {})
        self._box = box or (lambda: {})
        self._clock = clock
        self._monotonic = monotonic
        self._clock_synchronised = clock_synchronised
        self._on_acked = on_acked
        self._on_registry = on_registry
        self._registry = registry
        #: Health is published at the next turn of the sending thread, not at its interval.
        self._health_due = False
        self._reader = JournalReader(self.directory)
        self._lock = threading.Condition()
        self._link = _Link()
        self._stop = False
        self._kick = False
        self._thread: threading.Thread | None = None
        self._client = None
        self._refusals = Complaints(logger=log)
        self._started = monotonic()
        self._last_wall = clock()
        self._last_mono = self._started
        self._clock_jump: str | None = None
        cursor = _read_json(self.directory / CURSOR_NAME)
        acked = cursor.get("acked", 0)
        self.acked = acked if isinstance(acked, int) and acked >= 0 else 0
        self._saved_acked = self.acked
        self._saved_at = 0.0
        self._tail = JournalTail(self.directory, settings.window)
        self._oldest: int | None = None
        self._next = self.acked + 1
        self._last_ack_at = monotonic()
        boot_path = self.directory / BOOT_NAME
        try:
            self.boot = int(boot_path.read_text().strip() or 0) + 1
        except (OSError, ValueError):
            self.boot = 1
        save_atomic(boot_path, f"{self.boot}\n")
        self.sent_batches = 0

    # -- public API

    @property
    def head(self) -> int:
        """The newest ``seq`` seen in the journal."""
        return self._tail.head

    @property
    def state(self) -> dict:
        """The ``state`` board: the open irregularity and the phase."""
        return self._tail.board.state

    def keep_from_seq(self) -> int:
        """The oldest ``seq`` the journal must keep: the first one the floor
        has not acknowledged (journal retention calls this)."""
        with self._lock:
            return self.acked + 1

    def notify(self) -> None:
        """Tell the publisher a line was appended (it also polls)."""
        with self._lock:
            self._kick = True
            self._lock.notify()

    def start(self) -> "Publisher":
        client = make_client(self.settings.identity, self.table)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.on_publish = self._on_publish
        client.reconnect_delay_set(min_delay=1, max_delay=5)
        self._client = client
        self._set_will(1)
        # A clean start and no session expiry property (0: the session ends
        # with the connection): see the module docstring.
        client.connect_async(self.settings.host, self.settings.port,
                             keepalive=self.settings.keepalive_s, clean_start=True)
        client.loop_start()
        self._thread = threading.Thread(target=self._run, name=f"floor-{self.table}", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        with self._lock:
            if self._stop:
                return
            self._stop = True
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=10)
        client = self._client
        if client is not None:
            if self._link.connected:
                # A clean stop says so: the floor sees "stopped", not a lost table.
                info = client.publish(P.status_topic(self.table), self._status(False, "stopped"),
                                      qos=1, retain=True)
                try:
                    info.wait_for_publish(timeout=2)
                except (RuntimeError, ValueError):
                    pass
                client.disconnect()
            client.loop_stop()
        self._save_cursor(now=True)

    def __enter__(self) -> "Publisher":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def connected(self) -> bool:
        return self._link.connected

    def health_changed(self) -> None:
        """Publish ``health`` soon (the room registry in use changed): the floor's tables page
        shows the new version without waiting for the health interval."""
        with self._lock:
            self._health_due = True
            self._kick = True
            self._lock.notify()

    # -- payloads

    def _status(self, online: bool, why: str, conn: int | None = None) -> bytes:
        return P.encode({"table": self.table, "online": online, "why": why, "boot": self.boot,
                         "conn": self._link.conn if conn is None else conn,
                         "wall": self._clock()})

    def _set_will(self, conn: int) -> None:
        # No will delay: the broker sends it as soon as it knows the connection is gone.
        self._client.will_set(P.status_topic(self.table), self._status(False, "lost", conn),
                              qos=1, retain=True)

    def health(self) -> dict:
        wall, mono = self._clock(), self._monotonic()
        # A wall clock that moved by more than the monotonic clock (either
        # way, beyond a little drift) was set or jumped.
        drift = (wall - self._last_wall) - (mono - self._last_mono)
        if abs(drift) > 2.0:
            self._clock_jump = f"the wall clock jumped by {drift:+.0f} s"
        self._last_wall, self._last_mono = wall, mono
        problem = clock_problem(wall) or self._clock_jump
        with self._lock:
            backlog = max(0, self.head - self.acked)
            acked = self.acked
        return {"table": self.table, "boot": self.boot, "wall": wall,
                "uptime_s": round(mono - self._started, 1), "restarts": self.boot - 1,
                "readers": self._readers(), "head": self.head, "acked": acked,
                "backlog": backlog, "clock_synchronised": self._clock_synchronised(),
                "clock_ok": problem is None, "clock_problem": problem,
                "journal_problem": self._reader.problem,
                **({"registry": self._registry()} if self._registry is not None else {}), **self._box()}

    # -- paho callbacks (paho's network thread)

    def _on_connect(self, client, _userdata, _flags, reason_code, _properties):
        if reason_code.is_failure:
            log.warning("floor: the broker refused %s: %s", self.table, reason_code)
            return
        with self._lock:
            self._link.conn += 1
            conn = self._link.conn
        client.subscribe([(P.ack_topic(self.table), 1), (P.COLLECTOR_TOPIC, 1)]
                         + ([(P.registry_topic(self.table), 1)] if self._on_registry is not None else []))
        client.publish(P.status_topic(self.table), self._status(True, "birth", conn), qos=1, retain=True)
        client.publish(P.state_topic(self.table), P.encode({"table": self.table, **self.state}),
                       qos=1, retain=True)
        client.publish(P.health_topic(self.table), P.encode(self.health()), qos=1, retain=True)
        # The next connection's will carries the next connection number, so
        # the floor can tell a late will from the table's current life.
        self._set_will(conn + 1)
        with self._lock:
            self._link.connected = True
            self._link.in_flight.clear()  # their PUBACKs went with the last connection
            self._link.rewind_to = self.acked + 1
            self._kick = True
            self._lock.notify()
        log.info("floor: %s connected (boot %d, connection %d)", self.table, self.boot, conn)

    def _on_publish(self, _client, _userdata, mid, reason_code, _properties):
        with self._lock:
            # Only a journal message counts: nobody may hear a table's health, and no line is lost.
            # (One acknowledged before the sender noted it counts as heard: its lines are sent
            # again a moment after a birth all the same.)
            if mid in self._link.in_flight:
                self._link.in_flight.discard(mid)
                if getattr(reason_code, "value", None) == _NO_MATCHING_SUBSCRIBERS:
                    self._link.unheard = True
        if reason_code.is_failure:
            # The ACL refused it: a certificate whose CN is not this table's id (reason 135).
            self._refusals.say(f"floor: the broker refused a message of {self.table} ({reason_code}): "
                               f"the certificate in use must be {self.table}'s (its CN is the table id)")

    def _on_disconnect(self, _client, _userdata, _flags, reason_code, _properties):
        with self._lock:
            accepted, self._link.connected = self._link.connected, False
        if not accepted and not self._stop:
            # Closed before the broker accepted us: with TLS 1.3 the broker's verdict on
            # our certificate comes after the handshake, as this.
            self._refusals.say(f"floor: the broker at {self.settings.host}:{self.settings.port} closed the "
                               f"connection before accepting {self.table} ({reason_code}): most often it "
                               "refused the certificate (revoked, expired, not from the casino CA), or its CRL "
                               "expired (docs/floor/metrics.md, Troubleshooting)")
        elif getattr(reason_code, "value", None) == 152:  # MQTT v5: administrative action
            log.warning("floor: the broker ended %s's session (administrative action): a revoked table "
                        "is kicked so (docs/floor/security.md, Revoking a table)", self.table)
        else:
            log.info("floor: %s disconnected: %s", self.table, reason_code)

    def _on_message(self, _client, _userdata, msg):
        if msg.topic == P.registry_topic(self.table) and self._on_registry is not None:
            # The room's registry: checked (and refused with a log line) by the box, not here.
            try:
                self._on_registry(msg.payload)
            except Exception:  # paho's thread must live on
                log.exception("floor: the room registry could not be taken")
            return
        try:
            d = P.decode(msg.payload)
        except P.PayloadError as exc:
            log.warning("floor: ignoring a message on %s: %s", msg.topic, exc)
            return
        with self._lock:
            if msg.topic == P.COLLECTOR_TOPIC:
                # A collector that stopped or died (its Last Will) lost what was in flight to
                # it: what it had taken and not yet filed died with it, and the collectors left
                # file it now rather than after the ack timeout. One that started needs at once
                # only what the broker gave nobody (no collector ran); what reached the others
                # they file. The retained message delivered on every subscribe is not news.
                if not msg.retain:
                    if d.get("online") is True and not self._link.unheard:
                        self._link.recheck = (self._monotonic() + BIRTH_GRACE_S, self._next - 1)
                    else:
                        self._link.rewind_to = self.acked + 1
            elif isinstance(d.get("resend_from"), int):
                start = max(1, d["resend_from"])
                if start <= self.acked:
                    # The floor lost lines it had acknowledged (a store
                    # restored from a backup): it is the authority.
                    log.warning("floor: the floor asks again from seq %d, below the cursor %d",
                                start, self.acked)
                    self.acked = start - 1
                self._link.rewind_to = start
            elif isinstance(d.get("acked"), int):
                if d["acked"] > self.acked:
                    # Wake the sender only if the window held it back.
                    blocked = self._next - 1 - self.acked >= self.settings.window
                    self.acked = d["acked"]
                    self._last_ack_at = self._monotonic()
                    if self._on_acked is not None:
                        self._on_acked(self.acked)
                    if not blocked:
                        return
            self._kick = True
            self._lock.notify()

    # -- the sending thread

    def _save_cursor(self, *, now: bool = False) -> None:
        """Keep the cursor on disk, at most once a second: a cursor that lags
        only makes the table send a few lines twice, which the floor drops."""
        with self._lock:
            acked = self.acked
        mono = self._monotonic()
        if acked != self._saved_acked and (now or mono - self._saved_at >= CURSOR_SAVE_S):
            self._saved_at = mono
            try:
                save_atomic(self.directory / CURSOR_NAME, json.dumps({"acked": acked}) + "\n")
                self._saved_acked = acked
            except OSError:
                log.exception("floor: cannot save the cursor")

    def _run(self) -> None:
        next_health = self._monotonic() + self.settings.health_interval_s
        while True:
            with self._lock:
                if self._stop:
                    return
                # A kick that came while we were busy is not lost.
                if not self._kick:
                    self._lock.wait(timeout=POLL_S)
                self._kick = False
                if self._stop:
                    return
                connected = self._link.connected
                recheck = self._link.recheck
                if recheck is not None and self._monotonic() >= recheck[0]:
                    self._link.recheck = None
                    if self.acked < recheck[1]:
                        self._link.rewind_to = self.acked + 1
                if self._link.rewind_to is not None:
                    self._rewind(self._link.rewind_to)
                if self._next <= self.acked:
                    self._next = self.acked + 1
                if (self._next > self.acked + 1
                        and self._monotonic() - self._last_ack_at > self.settings.ack_timeout_s):
                    log.info("floor: no acknowledgement for %.0f s; sending again from seq %d",
                             self.settings.ack_timeout_s, self.acked + 1)
                    self._rewind(self.acked + 1)
            self._save_cursor()
            try:
                self._track_head()
                if connected:
                    self._send()
                if connected and (self._monotonic() >= next_health or self._health_due):
                    self._health_due = False
                    next_health = self._monotonic() + self.settings.health_interval_s
                    self._client.publish(P.health_topic(self.table), P.encode(self.health()),
                                         qos=1, retain=True)
            except Exception:  # never let the floor take the thread down
                log.exception("floor: publisher error")
                time.sleep(1)

    def _rewind(self, seq: int) -> None:
        """Send again from *seq* (the lock held)."""
        self._next = seq
        self._link.rewind_to = None
        # Everything unacknowledged goes again now: what the broker took for nobody, and
        # what a collector's birth would have looked at again.
        self._link.unheard = False
        self._link.recheck = None
        self._last_ack_at = self._monotonic()

    def _track_head(self) -> None:
        """Follow the journal's end; publish ``state`` when the board changed."""
        if self._tail.follow(self.acked) and self._link.connected:
            self._client.publish(P.state_topic(self.table), P.encode({"table": self.table, **self.state}),
                                 qos=1, retain=True)

    def _send(self) -> None:
        while True:
            with self._lock:
                room = self.acked + self.settings.window - (self._next - 1)
                start = self._next
            if room <= 0:
                return
            want = min(room, self.settings.batch)
            lines = []
            recent = self._tail.recent
            while len(lines) < want and (start + len(lines)) in recent:
                seq = start + len(lines)
                lines.append((seq, recent[seq]))
            if not lines:
                lines = self._reader.read(start, want)
            if not lines:
                if start < (self._reader.oldest() or start):
                    # Lines the floor asked for are gone (retention before
                    # floor reporting was on): say where the journal starts.
                    with self._lock:
                        self._next = self._reader.oldest()
                    continue
                return
            payload = P.encode({"table": self.table, "boot": self.boot,
                                "oldest": self._oldest_cached(),
                                "lines": [raw.decode("ascii", "replace") for _s, raw in lines]})
            info = self._client.publish(P.journal_topic(self.table), payload, qos=1)
            if info.rc != mqtt.MQTT_ERR_SUCCESS:
                return  # not connected after all: the next connect rewinds
            self.sent_batches += 1
            with self._lock:
                self._link.in_flight.add(info.mid)
                if self._next == start:
                    self._next = lines[-1][0] + 1

    def _oldest_cached(self) -> int | None:
        if self._oldest is None:
            self._oldest = self._reader.oldest()
        return self._oldest


def floor_settings(path: Path, data) -> FloorSettings:
    """A table's ``[floor]`` section, checked as the table config checks it
    (off when missing); raises the first :class:`ConfigError`."""
    ctx = RaisingReporter(str(path))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(path, "floor", "a table", data)
    unknown_keys(ctx, "floor", data, [k for k, _o, _d in options_of(FloorSettings)])
    values = read_fields(ctx, "floor", data, FloorSettings)
    if values["enabled"] and "table" not in data:
        ctx.fail("floor.table", "the table id, as the CN of its certificate", found=False)
    FloorSettings.validate(values, lambda key, expected, value=None: ctx.fail(f"floor.{key}", expected, value))
    return FloorSettings(**values)


def load_table_floor(path) -> FloorSettings:
    """The ``[floor]`` section of a table config file."""
    path = Path(path)
    return floor_settings(path, read_toml(path, "a table config").get("floor"))
