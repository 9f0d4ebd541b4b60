"""Shared helpers of the floor tests (no tests here; the fixtures are in conftest.py).

Every floor test uses a real mosquitto, started on a free loopback port with
the shipped mosquitto.conf and ACL, TLS, and certificates from the shipped
make-ca.sh. There are no mocks of MQTT.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("paho.mqtt", reason="paho-mqtt is not installed (pip install 'dealerbox[mqtt]')")

from dealerbox.floor.operating.broker import Broker  # noqa: E402
from dealerbox.link.client import Identity, make_client  # noqa: E402
from dealerbox.service.uplink import FloorSettings  # noqa: E402
from dealerbox.service.journal import Journal  # noqa: E402
# The fixtures live in tests/floor/conftest.py; here for the modules that import them by name.
from tests.floor.conftest import TABLES, broker, need, pki  # noqa: E402, F401

TIMEOUT = 60.0


def identity(pki: Path, broker: Broker, name: str) -> Identity:
    return Identity("127.0.0.1", broker.port, pki / "ca.crt", pki / f"{name}.crt", pki / f"{name}.key")


def settings(pki: Path, broker: Broker, table: str, **kw) -> FloorSettings:
    base = dict(enabled=True, table=table, host="127.0.0.1", port=broker.port, ca=pki / "ca.crt",
                cert=pki / f"{table}.crt", key=pki / f"{table}.key", keepalive_s=5,
                ack_timeout_s=3.0, health_interval_s=1.0)
    base.update(kw)
    return FloorSettings(**base)


def wait_for(predicate, what: str, timeout: float = TIMEOUT):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Client:
    """A connected MQTT v5 client that records what it receives and the
    reason codes of its PUBACKs."""

    def __init__(self, ident: Identity, client_id: str):
        self.messages: list = []
        self.pubacks: dict[int, object] = {}
        self.connect_result = None
        self.disconnects: list = []
        self.connected = threading.Event()
        self.done = threading.Event()
        self.client = make_client(ident, client_id)
        self.client.on_connect = self._on_connect
        self.client.on_message = lambda _c, _u, msg: self.messages.append((msg.topic, msg.payload))
        self.client.on_publish = self._on_publish
        self.client.on_disconnect = lambda _c, _u, _f, rc, _p: (self.disconnects.append(rc), self.done.set())
        self.client.on_connect_fail = lambda *_: self.done.set()

    def _on_connect(self, _c, _u, _f, rc, _p):
        self.connect_result = rc
        if not rc.is_failure:
            self.connected.set()
        self.done.set()

    def _on_publish(self, _c, _u, mid, rc, _p):
        self.pubacks[mid] = rc

    def connect(self, port: int, timeout: float = 20.0) -> bool:
        try:
            self.client.connect("127.0.0.1", port, keepalive=10)
        except OSError:
            return False
        self.client.loop_start()
        self.done.wait(timeout)
        return self.connected.is_set()

    def publish(self, topic: str, payload: bytes, *, retain: bool = False):
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        wait_for(lambda: info.mid in self.pubacks, f"PUBACK of {topic}", 20)
        return self.pubacks[info.mid]

    def subscribe(self, topic: str) -> None:
        got = threading.Event()
        self.client.on_subscribe = lambda *_: got.set()
        self.client.subscribe(topic, qos=1)
        assert got.wait(20), f"no SUBACK for {topic}"

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def append_lines(journal: Journal, count: int) -> None:
    """Append ``count`` lines as the daemon does: events, with a decision now and then."""
    from dealerbox.domain.events import Event
    for i in range(count):
        journal.append(Event.from_dict({"t": float(i), "ev": "tick"}))


def open_journal(directory: Path, **kw) -> Journal:
    return Journal(directory, sync="none", **kw)


def write_collector_config(path: Path, pki: Path, broker: Broker, store: Path, web_port: int = 0,
                           collector: str = "floor-collector") -> Path:
    path.write_text(f"""
[broker]
host = "localhost"
port = {broker.port}
ca = "{pki / 'ca.crt'}"
cert = "{pki / f'{collector}.crt'}"
key = "{pki / f'{collector}.key'}"
[store]
{'url' if '://' in str(store) else 'path'} = "{store}"
[web]
host = "127.0.0.1"
port = {web_port}
""")
    return path


def write_table_config(path: Path, pki: Path, port: int, table: str, **extra) -> Path:
    lines = ["[floor]", "enabled = true", f'table = "{table}"', 'host = "localhost"', f"port = {port}",
             f'ca = "{pki / "ca.crt"}"', f'cert = "{pki / (table + ".crt")}"',
             f'key = "{pki / (table + ".key")}"', "keepalive_s = 5",
             "ack_timeout_s = 3", "health_interval_s = 1"]
    lines += [f"{k} = {v}" for k, v in extra.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


class TcpProxy:
    """A TCP relay on loopback that can cut the network: ``partition()``
    drops every byte both ways (connections stay open, as through a dead
    switch), ``heal()`` forwards again for new connections."""

    def __init__(self, target_port: int):
        import socket
        self.target = target_port
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.partitioned = False
        self._closed = False
        self._links: list = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            link = {"dead": self.partitioned, "socks": (client, server)}
            self._links.append(link)
            threading.Thread(target=self._pump, args=(client, server, link), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, link), daemon=True).start()

    def _pump(self, src, dst, link) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if not link["dead"]:
                    dst.sendall(data)
        except OSError:
            pass
        for s in link["socks"]:
            try:
                s.close()
            except OSError:
                pass

    def partition(self) -> None:
        self.partitioned = True
        for link in self._links:
            link["dead"] = True

    def heal(self) -> None:
        self.partitioned = False

    def close(self) -> None:
        self._closed = True
        self.listener.close()
        for link in self._links:
            for s in link["socks"]:
                try:
                    s.close()
                except OSError:
                    pass
