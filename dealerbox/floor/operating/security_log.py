"""The floor's security events in systemd's journal, as structured fields a SIEM takes.

Sign-ins (and the failed and refused ones), sign-outs, alerts cleared, users added,
removed or given a new password, and a table whose messages the collector refused are
each one journal entry under ``SYSLOG_IDENTIFIER=dealerbox-floor-security``, with its
kind in ``DEALERBOX_EVENT``, a ``MESSAGE_ID`` per kind and the details in ``DEALERBOX_*``
fields (docs/floor/security.md, "Security events in the journal", lists them).

The code says what happened with :func:`security_event`, a record on the logger
:data:`LOGGER`; a process that serves the floor installs :class:`SecurityJournal`
on it (:func:`install`), which sends each record to the journal over its native
protocol. Without a journal socket (a container, a machine without systemd) the same
fields go to stderr as one JSON line, which systemd or any supervisor captures too.
A part of the floor below this one (the collector's filing) logs on :data:`LOGGER` by
its name with the same ``security`` extra, as code logs on any named logger.

The sender is written here rather than taken from a library: python-systemd's
``journal.send`` (PyPI ``systemd-python``) ships as source only and builds against
libsystemd's headers and a compiler (it does not build here without them), and both it
and ``cysystemd`` send through libsystemd, which always writes to the host's socket, so a
test could not receive the events on a socket of its own. The native protocol is a few
lines: one datagram per entry, ``KEY=value`` lines, and a length-prefixed form for
values with a newline (https://systemd.io/JOURNAL_NATIVE_PROTOCOL/).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import socket
import struct
import sys
from typing import TextIO

__all__ = ["LOGGER", "IDENTIFIER", "EVENTS", "SOCKET_ENV", "DEFAULT_SOCKET", "security_event",
           "journal_fields", "encode_entry", "JournalSocket", "SecurityJournal", "install"]

#: The logger every security event is a record of.
LOGGER = "dealerbox.floor.security"
#: Every entry's ``SYSLOG_IDENTIFIER``: one name for the web view's and every collector's.
IDENTIFIER = "dealerbox-floor-security"
#: The journal's socket, unless :data:`SOCKET_ENV` names another (the tests' own).
DEFAULT_SOCKET = "/run/systemd/journal/socket"
SOCKET_ENV = "DEALERBOX_JOURNAL_SOCKET"
#: ``SYSLOG_FACILITY``: authpriv (10), where sshd and sudo put theirs, so IT's filters find them.
FACILITY = 10
#: Each event's ``MESSAGE_ID`` (a journal catalog's 128-bit id, fixed for good) and level.
EVENTS = {
    "signin": ("6f1b2c7e9a3d4e0f8b21c5d7a9e3f101", logging.INFO),
    "signin_failed": ("6f1b2c7e9a3d4e0f8b21c5d7a9e3f102", logging.WARNING),
    "signin_refused": ("6f1b2c7e9a3d4e0f8b21c5d7a9e3f103", logging.WARNING),
    "signout": ("6f1b2c7e9a3d4e0f8b21c5d7a9e3f104", logging.INFO),
    "alert_cleared": ("6f1b2c7e9a3d4e0f8b21c5d7a9e3f105", logging.INFO),
    "user_added": ("6f1b2c7e9a3d4e0f8b21c5d7a9e3f106", logging.WARNING),
    "user_removed": ("6f1b2c7e9a3d4e0f8b21c5d7a9e3f107", logging.WARNING),
    "password_changed": ("6f1b2c7e9a3d4e0f8b21c5d7a9e3f108", logging.WARNING),
    "table_refused": ("6f1b2c7e9a3d4e0f8b21c5d7a9e3f109", logging.WARNING),
}
#: A field's value is cut to this many characters (parts come from browsers and tables).
VALUE_MAX = 1000
#: syslog's priorities for logging's levels (NOTICE has no level of its own).
_PRIORITY = ((logging.CRITICAL, 2), (logging.ERROR, 3), (logging.WARNING, 4), (logging.INFO, 6))
_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")

log = logging.getLogger(LOGGER)
# A process that never installed the journal (make floor's room, a library user) keeps the
# events to its own log setup: without a handler here, logging's last resort would print
# each one on stderr, beside what that process says to its user.
log.addHandler(logging.NullHandler())


def security_event(event: str, message: str, **fields) -> None:
    """Record *event* (a key of :data:`EVENTS`) saying *message*, with *fields* (``user``,
    ``address``, ``table``...; None left out) as ``DEALERBOX_<FIELD>``."""
    if event not in EVENTS:
        raise ValueError(f"unknown security event {event!r}: expected one of {', '.join(EVENTS)}")
    details = {k: v for k, v in fields.items() if v is not None}
    # stacklevel: CODE_FILE/LINE/FUNC name the code that said it, not this function.
    log.log(EVENTS[event][1], "%s", message, extra={"security": {"event": event, **details}}, stacklevel=2)


def _priority(level: int) -> int:
    return next((p for at, p in _PRIORITY if level >= at), 7)


def _text(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value) if isinstance(value, (dict, list)) else str(value)
    return text[:VALUE_MAX]


def journal_fields(record: logging.LogRecord, identifier: str = IDENTIFIER) -> dict[str, str]:
    """The journal entry of *record*: ``MESSAGE``, ``PRIORITY``, ``SYSLOG_IDENTIFIER``,
    ``SYSLOG_FACILITY``, ``MESSAGE_ID`` and ``DEALERBOX_EVENT`` of its event, its details
    as ``DEALERBOX_*``, and where in the code it was said (``CODE_FILE``...)."""
    details = dict(getattr(record, "security", None) or {})
    event = str(details.pop("event", "other"))
    fields = {"MESSAGE": _text(record.getMessage()), "PRIORITY": str(_priority(record.levelno)),
              "SYSLOG_IDENTIFIER": identifier, "SYSLOG_FACILITY": str(FACILITY)}
    if event in EVENTS:
        fields["MESSAGE_ID"] = EVENTS[event][0]
    fields["DEALERBOX_EVENT"] = event
    for key, value in details.items():
        name = "DEALERBOX_" + re.sub(r"[^A-Z0-9_]", "_", str(key).upper())
        if _NAME.match(name):
            fields[name] = _text(value)
    fields.update(CODE_FILE=record.pathname, CODE_LINE=str(record.lineno), CODE_FUNC=record.funcName)
    return fields


def encode_entry(fields: dict[str, str]) -> bytes:
    """*fields* in the journal's native protocol: ``KEY=value`` a line, or for a value with a
    newline ``KEY``, a newline, its length (64-bit little-endian) and the value."""
    out = bytearray()
    for key, value in fields.items():
        if not _NAME.match(key):
            raise ValueError(f"{key!r} is no journal field name (A-Z, 0-9 and _, a letter first)")
        data = value.encode("utf-8", "replace")
        if b"\n" in data:
            out += key.encode() + b"\n" + struct.pack("<Q", len(data)) + data + b"\n"
        else:
            out += key.encode() + b"=" + data + b"\n"
    return bytes(out)


class JournalSocket:
    """Datagrams to the journal's socket at *path*; :meth:`send` raises :class:`OSError` when
    no journal listens there (no such socket, refused, its queue full past *timeout_s*)."""

    def __init__(self, path: str, timeout_s: float = 0.5):
        self.path = path
        self.timeout_s = timeout_s
        self._sock: socket.socket | None = None

    def send(self, entry: bytes) -> None:
        if self._sock is None:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self._sock.settimeout(self.timeout_s)
        try:
            self._sock.sendto(entry, self.path)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ECONNREFUSED):
                self.close()  # a fresh socket next time
            raise

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


class SecurityJournal(logging.Handler):
    """A logging handler: each security record as one journal entry (:func:`journal_fields`)
    over *socket_path*; where no journal takes it, one JSON line of the same fields on
    *stream* (stderr)."""

    def __init__(self, socket_path: str | None = None, *, identifier: str = IDENTIFIER,
                 stream: TextIO | None = None):
        super().__init__(logging.INFO)
        self.journal = JournalSocket(socket_path or os.environ.get(SOCKET_ENV) or DEFAULT_SOCKET)
        self.identifier = identifier
        self.stream = stream

    def emit(self, record: logging.LogRecord) -> None:
        try:
            fields = journal_fields(record, self.identifier)
            try:
                self.journal.send(encode_entry(fields))
                return
            except OSError:
                pass  # no journal here: the line below, which a supervisor captures
            stream = self.stream or sys.stderr
            stream.write(json.dumps(fields, ensure_ascii=False, separators=(",", ":")) + "\n")
            stream.flush()
        except Exception:
            self.handleError(record)

    def close(self) -> None:
        self.journal.close()
        super().close()


def install(socket_path: str | None = None, *, identifier: str = IDENTIFIER,
            stream: TextIO | None = None) -> SecurityJournal:
    """Send the security events of this process to the journal (:class:`SecurityJournal`),
    replacing one installed before; they no longer reach the plain log too, where the
    journal would hold each twice."""
    logger = logging.getLogger(LOGGER)
    for old in [h for h in logger.handlers if isinstance(h, SecurityJournal)]:
        logger.removeHandler(old)
        old.close()
    handler = SecurityJournal(socket_path, identifier=identifier, stream=stream)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return handler
