"""A minimal client for systemd's readiness and watchdog protocol (sd_notify).

systemd (``Type=notify``) passes the path of a datagram socket in
``NOTIFY_SOCKET``; the service sends newline-separated ``KEY=VALUE`` lines
to it: ``READY=1`` once started, ``WATCHDOG=1`` at least every
``WATCHDOG_USEC`` microseconds while healthy, ``STATUS=`` for
``systemctl status``, ``STOPPING=1`` and ``RELOADING=1`` around a stop or a
reload. A path that starts with ``@`` names a socket in Linux's abstract
namespace.

Written here rather than taken from PyPI: the ``sdnotify`` package (0.3.2,
last released 2017) silently swallows every error and has no watchdog-interval
helper, and ``systemd-python`` / ``cysystemd`` need libsystemd headers and a C
build on the Pi. The protocol itself is a single ``sendto()``.

Outside systemd (``NOTIFY_SOCKET`` unset) every call does nothing and returns
False, so the daemon can call it unconditionally. A failed send is logged and
counted, never raised: losing systemd must not take the table down.
"""

from __future__ import annotations

import logging
import os
import socket
import time

__all__ = ["Notifier"]

log = logging.getLogger(__name__)


class Notifier:
    """Sends sd_notify messages to the socket systemd gave this process.

    :param environ: where to read ``NOTIFY_SOCKET``, ``WATCHDOG_USEC`` and
        ``WATCHDOG_PID``; default ``os.environ``.

    A context manager; :meth:`close` is safe to call twice.
    """

    def __init__(self, environ=None):
        env = os.environ if environ is None else environ
        self.address = self._address(env.get("NOTIFY_SOCKET", ""))
        self.watchdog_usec = self._watchdog_usec(env)
        #: Messages that could not be sent.
        self.errors = 0
        self._sock: socket.socket | None = None
        if self.address is not None:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)

    @staticmethod
    def _address(path: str) -> str | None:
        if not path:
            return None
        if path.startswith("@"):
            return "\0" + path[1:]
        if path.startswith("/"):
            return path
        # Other forms (vsock:...) are for VMs and containers, not a table.
        log.warning("sd_notify: NOTIFY_SOCKET=%r is not a unix socket path; not notifying", path)
        return None

    @staticmethod
    def _watchdog_usec(env) -> int | None:
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        # The watchdog is meant for the PID systemd started, not for children.
        if pid and pid != str(os.getpid()):
            return None
        try:
            value = int(usec)
        except ValueError:
            return None
        return value if value > 0 else None

    @property
    def enabled(self) -> bool:
        """True when running under systemd with a notify socket."""
        return self._sock is not None

    @property
    def watchdog_interval(self) -> float | None:
        """Seconds between ``WATCHDOG=1`` pings (half the systemd timeout, as
        sd_watchdog_enabled(3) advises), or None when no watchdog is set."""
        if self.watchdog_usec is None:
            return None
        return self.watchdog_usec / 2e6

    def notify(self, **fields) -> bool:
        """Send ``KEY=VALUE`` lines (keyword names are upper-cased); True if sent."""
        lines = []
        for key, value in fields.items():
            text = str(value).replace("\n", " ")  # a newline would start a new field
            lines.append(f"{key.upper()}={text}")
        return self.send("\n".join(lines))

    def send(self, message: str) -> bool:
        """Send a raw message; True if it went out."""
        if self._sock is None:
            return False
        try:
            self._sock.sendto(message.encode("utf-8"), self.address)
        except OSError as exc:
            self.errors += 1
            log.warning("sd_notify: could not send %r: %s", message.split("\n", 1)[0], exc)
            return False
        return True

    def ready(self, status: str | None = None) -> bool:
        """Startup finished."""
        return self.notify(ready=1, **({"status": status} if status is not None else {}))

    def watchdog(self) -> bool:
        """The main loop is alive. Send only from the loop the watchdog guards."""
        return self.notify(watchdog=1)

    def status(self, text: str) -> bool:
        """One line shown by ``systemctl status``."""
        return self.notify(status=text)

    def reloading(self) -> bool:
        """A reload (SIGHUP) started; follow it with :meth:`ready`."""
        return self.notify(reloading=1, monotonic_usec=time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000)

    def stopping(self) -> bool:
        """A clean stop started."""
        return self.notify(stopping=1)

    def close(self) -> None:
        """Close the socket; safe to call twice."""
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()

    def __enter__(self) -> "Notifier":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
