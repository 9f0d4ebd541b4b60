"""Fixtures shared by the tests."""

import logging

import pytest


@pytest.fixture(autouse=True)
def root_logging():
    """Give each test the root logger it started with. ``dealerbox run`` sets logging up
    (``force=True``) on the stderr of its moment, which in a test is a capture that is
    closed when the test ends; a later test's log lines would then go to a closed file."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture(scope="session")
def postgres_cluster():
    """One throwaway PostgreSQL (Debian's server binaries) for the whole session: here,
    so that every module shares it (a fixture imported into a module is that module's
    own). Tests take databases of their own from it (``postgres_cluster.database(name)``)."""
    from dealerbox.floor.pgcluster import PostgresCluster, unavailable_reason
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    with PostgresCluster() as cluster:
        yield cluster


@pytest.fixture
def pins():
    """A fresh gpiozero MockFactory as the default pin factory, restored afterwards."""
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory

    saved = Device.pin_factory
    Device.pin_factory = MockFactory()
    yield Device.pin_factory
    Device.pin_factory.reset()
    Device.pin_factory = saved


class PtyRun:
    """What a program did on a pseudo-terminal: its exit code, the screen text
    with the escape sequences taken out, and whether *until* was seen."""

    def __init__(self, code, text, seen):
        self.code, self.text, self.seen = code, text, seen


def run_in_pty(argv, *, until: str, timeout: float = 60.0, size=(40, 120), **popen):
    """Run *argv* on a pseudo-terminal of *size* rows x columns; once *until*
    shows on the screen, send SIGTERM; return a :class:`PtyRun` once it exited
    (killed, with code None, if it did not within *timeout*)."""
    import fcntl
    import os
    import pty
    import re
    import select
    import signal
    import struct
    import subprocess
    import termios
    import time

    ansi = re.compile(rb"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78cDEHM])")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", *size, 0, 0))
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, start_new_session=True, **popen)
    os.close(slave)
    raw, seen, deadline = b"", False, time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:   # EIO: the program closed the terminal
                    break
                if not chunk:
                    break
                raw += chunk
            if not seen and until.encode() in ansi.sub(b"", raw):
                seen = True
                proc.send_signal(signal.SIGTERM)
            if not ready and proc.poll() is not None:
                break
    finally:
        os.close(master)
    try:
        code = proc.wait(max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        code = None
    return PtyRun(code, ansi.sub(b"", raw).decode("utf-8", "replace"), seen)
