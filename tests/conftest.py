"""Fixtures shared by the tests, and what lets the suite run on every core
(``make test``: pytest-xdist, one session per worker).

Under xdist each worker has its own session, so each has its own session
fixtures: its own PostgreSQL cluster (tests kill and restart it, so it cannot be
shared; tests/floor/conftest.py), its own PKI. What the workers could still
collide on is set apart here: the ports servers listen on (:func:`worker_free_port`)
and the temporary directories (:func:`pytest_configure`).
"""

import logging
import os
import random
import shutil
import socket
import tempfile
import time
from pathlib import Path

import pytest

import dealerbox.floor.operating.broker
from dealerbox.floor.operating.security_log import SOCKET_ENV

# Ports the tests' servers listen on come from below the kernel's ephemeral range,
# one slice per xdist worker. A port from ``bind(0)`` is an ephemeral one: between
# the moment it is picked and the moment mosquitto, PostgreSQL or the web view binds
# it (or binds it again after a kill), any outgoing connection of any worker may be
# given it as its local port, and another worker's ``bind(0)`` may return it too.
# Neither can happen to a port below the range in this worker's own slice.
LOWEST_PORT = 10000


def _port_slice() -> range | None:
    """This worker's ports, or None when there is no room below the ephemeral range."""
    try:
        ephemeral = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral = 32768
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker[2:].isdigit() else 0
    count = max(int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")), index + 1)
    size = (ephemeral - LOWEST_PORT) // count
    if size < 200:
        return None
    return range(LOWEST_PORT + index * size, LOWEST_PORT + (index + 1) * size)


class _WorkerPorts:
    """Hands out this worker's ports in turn, from a random start (another pytest
    session on the machine uses the same slices), skipping any that is taken."""

    def __init__(self, ports: range):
        self.ports = ports
        self.next = random.randrange(len(ports))

    def __call__(self) -> int:
        for _ in range(len(self.ports)):
            port = self.ports[self.next]
            self.next = (self.next + 1) % len(self.ports)
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
            return port
        raise OSError(f"no free port left in {self.ports}")


_kernel_free_port = dealerbox.floor.operating.broker.free_port
_slice = _port_slice()
#: A TCP port nobody listens on, on 127.0.0.1, from this worker's own slice.
worker_free_port = _WorkerPorts(_slice) if _slice else _kernel_free_port
# Installed before any test module is imported, so that the modules that import
# ``free_port`` by name (the tests, dealerbox.floor.operating.pgcluster) take this one too,
# and a Broker() or PostgresCluster() without a port gets one from the slice.
dealerbox.floor.operating.broker.free_port = worker_free_port


_OWN_BASETEMP = pytest.StashKey[str]()
#: Names the base temporary directories :func:`pytest_configure` made (and only those).
_BASETEMP_TAG = "made-by-tests-conftest"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    """Under xdist, give the workers a short fresh base temporary directory.

    pytest's own would be ``/tmp/pytest-of-USER/pytest-N/popen-gwK``: messages that
    cut a path's repr at 80 characters (dealerbox.errors) would cut a test's tmp_path
    that a serial run shows whole. ``/tmp/pytest-XXXXXXXX/popen-gwK`` is no longer
    than the serial path. Removed when the run passes; kept for a day when it fails
    (for a look at what the failing test left), then removed by a later run. An
    explicit ``--basetemp`` is left alone."""
    if (getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput")
            and config.option.basetemp is None):
        _remove_old_basetemps()
        config.option.basetemp = tempfile.mkdtemp(prefix="pytest-")
        config.stash[_OWN_BASETEMP] = config.option.basetemp


@pytest.hookimpl(wrapper=True)
def pytest_sessionstart(session):
    """Tag the base temporary directory as this conftest's, once pytest has made it
    afresh (it empties a ``--basetemp`` as the workers are set up)."""
    result = yield
    base = session.config.stash.get(_OWN_BASETEMP, None)
    if base is not None and os.path.isdir(base):
        Path(base, _BASETEMP_TAG).touch()
    return result


def _remove_old_basetemps(days: float = 1.0) -> None:
    cutoff = time.time() - days * 86400
    for tag in Path(tempfile.gettempdir()).glob(f"pytest-*/{_BASETEMP_TAG}"):
        try:
            stat = tag.stat()
        except OSError:
            continue
        if stat.st_uid == os.getuid() and stat.st_mtime < cutoff:
            shutil.rmtree(tag.parent, ignore_errors=True)


def pytest_sessionfinish(session, exitstatus):
    """Remove the base temporary directory :func:`pytest_configure` made, if the run passed."""
    base = session.config.stash.get(_OWN_BASETEMP, None)
    if base is not None and exitstatus == 0:
        shutil.rmtree(base, ignore_errors=True)


#: The tests marked ``slow``: each line a module or a test (``path::name``, every parameter).
SLOW_LIST = Path(__file__).with_name("slow_tests.txt")


def _slow_tests() -> frozenset[str]:
    lines = (line.split("#", 1)[0].strip() for line in SLOW_LIST.read_text(encoding="utf-8").splitlines())
    return frozenset(line for line in lines if line)


def pytest_collection_modifyitems(config, items):
    """Mark ``slow`` the tests tests/slow_tests.txt names (``make test-quick`` runs the rest)."""
    slow = _slow_tests()
    for item in items:
        test = item.nodeid.split("[", 1)[0]
        if test in slow or test.split("::", 1)[0] in slow:
            item.add_marker(pytest.mark.slow)


# Every floor process a test starts (the floor's tests, the docs' recipes, the bench's
# tests) sends its security events to a journal socket that is never the host's: none is
# there, so they fall back to stderr; tests/floor/test_security_log.py gives its own.
os.environ.setdefault(SOCKET_ENV, "/nonexistent/dealerbox-tests/journal.socket")


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
