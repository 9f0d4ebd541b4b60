"""Waiting for the stop signal a long-running command ends on (SIGTERM from systemd, SIGINT from a terminal)."""

from __future__ import annotations

import signal
import threading


def wait_for_stop_signal(*also: threading.Event) -> None:
    """Wait for SIGTERM/SIGINT, or for any of *also* to be set."""
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    for event in also:
        threading.Thread(target=lambda e=event: (e.wait(), done.set()), daemon=True).start()
    done.wait()
