"""sd_notify against real AF_UNIX datagram sockets, as systemd would listen."""

from __future__ import annotations

import os
import socket
import time
import uuid

import pytest

from dealerbox.service.sdnotify import Notifier


@pytest.fixture
def listener(tmp_path):
    """A datagram socket bound in tmp, standing where systemd's would be."""
    path = tmp_path / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(5)
    yield str(path), sock
    sock.close()


@pytest.fixture
def abstract_listener():
    name = f"dealerbox-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(5)
    yield "@" + name, sock
    sock.close()


def received(sock):
    return sock.recv(4096).decode()


def test_messages_reach_a_path_socket(listener):
    path, sock = listener
    with Notifier({"NOTIFY_SOCKET": path}) as n:
        assert n.enabled
        assert n.ready(status="dealing")
        assert received(sock) == "READY=1\nSTATUS=dealing"
        assert n.watchdog()
        assert received(sock) == "WATCHDOG=1"
        assert n.status("hand 12: flop")
        assert received(sock) == "STATUS=hand 12: flop"
        assert n.stopping()
        assert received(sock) == "STOPPING=1"
        assert n.errors == 0


def test_messages_reach_an_abstract_socket(abstract_listener):
    name, sock = abstract_listener
    with Notifier({"NOTIFY_SOCKET": name}) as n:
        assert n.ready()
        assert received(sock) == "READY=1"


def test_reloading_carries_the_monotonic_time(listener):
    path, sock = listener
    with Notifier({"NOTIFY_SOCKET": path}) as n:
        before = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        assert n.reloading()
        reloading, stamp = received(sock).split("\n")
    assert reloading == "RELOADING=1"
    key, value = stamp.split("=")
    assert key == "MONOTONIC_USEC" and int(value) >= before


def test_a_newline_cannot_inject_another_field(listener):
    path, sock = listener
    with Notifier({"NOTIFY_SOCKET": path}) as n:
        n.status("reader lost\nREADY=1")
        assert received(sock) == "STATUS=reader lost READY=1"


def test_without_notify_socket_nothing_is_sent():
    with Notifier({}) as n:
        assert not n.enabled
        assert not n.ready()
        assert not n.watchdog()
        assert n.watchdog_interval is None
        assert n.errors == 0


def test_a_non_unix_address_is_ignored(caplog):
    with Notifier({"NOTIFY_SOCKET": "vsock:2:1234"}) as n:
        assert not n.enabled and not n.ready()
    assert "not a unix socket" in caplog.text


def test_a_vanished_socket_is_counted_not_raised(tmp_path, caplog):
    with Notifier({"NOTIFY_SOCKET": str(tmp_path / "gone")}) as n:
        assert n.enabled
        assert not n.watchdog()
        assert not n.watchdog()
        assert n.errors == 2
    assert "could not send" in caplog.text


def test_watchdog_interval_is_half_the_timeout():
    n = Notifier({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": str(os.getpid())})
    assert n.watchdog_interval == 5.0
    assert Notifier({"WATCHDOG_USEC": "10000000"}).watchdog_interval == 5.0


def test_watchdog_meant_for_another_process_is_ignored():
    assert Notifier({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "1"}).watchdog_interval is None
    assert Notifier({"WATCHDOG_USEC": "soon"}).watchdog_interval is None
    assert Notifier({"WATCHDOG_USEC": "0"}).watchdog_interval is None


def test_reads_os_environ_by_default(listener, monkeypatch):
    path, sock = listener
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    with Notifier() as n:
        n.watchdog()
    assert received(sock) == "WATCHDOG=1"


def test_close_twice_and_send_after_close():
    n = Notifier({"NOTIFY_SOCKET": "/nonexistent/socket"})
    n.close()
    n.close()
    assert not n.enabled and not n.ready()
