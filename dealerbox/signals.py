"""Waiting for the stop signal a long-running command ends on (SIGTERM from systemd, SIGINT from a terminal)."""

from __future__ import annotations

import signal
import threading

__all__ = ["catch_stop_signals", "wait_for_stop_signal"]


def catch_stop_signals() -> threading.Event:
    """From now on, SIGTERM and SIGINT set the returned event instead of ending the process.

    Called first thing by a command that starts something slow (a collector joining its
    broker): a stop that comes during the start then ends the command cleanly, not with
    the signal's default death.
    """
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def wait_for_stop_signal(*also: threading.Event, stop: threading.Event | None = None) -> None:
    """Wait for SIGTERM/SIGINT (caught here, or earlier by :func:`catch_stop_signals` as
    *stop*), or for any of *also* to be set."""
    done = stop if stop is not None else catch_stop_signals()
    for event in also:
        threading.Thread(target=lambda e=event: (e.wait(), done.set()), daemon=True).start()
    done.wait()
