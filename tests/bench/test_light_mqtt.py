"""The group bench's lean MQTT v5 client speaks the protocol the floor's broker and
paho speak: against the shipped mosquitto (test_floor_support), and packet by
packet through a socket pair for what a read may cut in two."""

from __future__ import annotations

import socket
import ssl
import struct
import threading
import time

from tests.floor.support import Client, broker, identity, pki, wait_for  # noqa: F401
from bench.light_mqtt import LightMQTT, Loop, table_context
from dealerbox.link import protocol as P


class _Table:
    """A light client and what it heard."""

    def __init__(self, pki, broker, loop: Loop, name: str, *, will: bytes | None = None):
        self.connacks: list[int] = []
        self.messages: list[tuple[str, bytes, bool]] = []
        self.pubacks: dict[int, int] = {}
        self.disconnected = False
        self.client = LightMQTT(name, table_context(pki, name), keepalive=10,
                                will=(P.status_topic(name), will, 1, True) if will else None)
        self.client.on_connect = self.connacks.append
        self.client.on_message = lambda topic, payload, retain: self.messages.append((topic, payload, retain))
        self.client.on_publish = self.pubacks.__setitem__
        self.client.on_disconnect = lambda: setattr(self, "disconnected", True)
        self.client.connect("127.0.0.1", broker.port)
        loop.attach(self.client)


def _serve(loop: Loop, predicate, what: str, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        loop.run(0.05)
    return predicate()


def test_a_light_table_publishes_subscribes_and_reads_puback_reasons_through_the_broker(broker, pki):
    loop = Loop()
    table = _Table(pki, broker, loop, "T01")
    _serve(loop, lambda: table.connacks, "CONNACK")
    assert table.connacks == [0]
    collector = Client(identity(pki, broker, "floor-collector"), "floor-collector")
    assert collector.connect(broker.port)
    try:
        # A retained message before the table subscribes comes flagged so; a live one not.
        collector.publish(P.COLLECTOR_TOPIC, b'{"online": true}', retain=True)  # kept for later subscribers
        table.client.subscribe([(P.ack_topic("T01"), 1), (P.COLLECTOR_TOPIC, 1)])
        _serve(loop, lambda: table.messages, "the retained collector message")
        assert table.messages == [(P.COLLECTOR_TOPIC, b'{"online": true}', True)]

        # Nobody reads the journal yet: the broker says so in the PUBACK (reason 16).
        nobody = table.client.publish(P.journal_topic("T01"), b'{"lines": []}', qos=1)
        _serve(loop, lambda: nobody in table.pubacks, "the PUBACK for nobody")
        assert table.pubacks[nobody] == 16

        # Someone does: success, and a message larger than a TLS record arrives whole.
        collector.subscribe(P.journal_topic("+"))
        big = b'{"lines": ["' + b"x" * 100_000 + b'"]}'
        heard = table.client.publish(P.journal_topic("T01"), big, qos=1)
        _serve(loop, lambda: heard in table.pubacks, "the PUBACK")
        assert table.pubacks[heard] == 0
        wait_for(lambda: (P.journal_topic("T01"), big) in collector.messages, "the journal message")

        # More QoS 1 messages than the broker keeps in flight unacknowledged (20): all
        # arrive, so the table acknowledged each; QoS 0 ones arrive as well (MQTT keeps
        # the order within a QoS only).
        table.messages.clear()
        for seq in range(1, 51):
            collector.client.publish(P.ack_topic("T01"), P.encode({"acked": seq}), qos=1 if seq % 2 else 0)
        _serve(loop, lambda: len(table.messages) == 50, "fifty acks")
        acked = [P.decode(payload)["acked"] for _t, payload, _r in table.messages]
        assert sorted(acked) == list(range(1, 51))
        assert [seq for seq in acked if seq % 2] == list(range(1, 51, 2))
        assert not any(retain for _t, _p, retain in table.messages)

        # The keepalive: pings answered, the session kept.
        table.client.misc(time.monotonic() + 60)
        loop.run(0.5)
        assert not table.disconnected and table.client.sock is not None
    finally:
        table.client.disconnect()
        collector.close()


def test_a_light_tables_last_will_is_published_only_when_it_vanishes(broker, pki):
    collector = Client(identity(pki, broker, "floor-collector"), "floor-collector")
    assert collector.connect(broker.port)
    collector.subscribe(P.status_topic("+"))
    loop = Loop()
    try:
        polite = _Table(pki, broker, loop, "T02", will=b'{"online": false, "why": "lost"}')
        vanished = _Table(pki, broker, loop, "T03", will=b'{"online": false, "why": "lost"}')
        _serve(loop, lambda: polite.connacks and vanished.connacks, "both CONNACKs")
        polite.client.disconnect()   # DISCONNECT first: no Last Will
        vanished.client.close()      # the socket just goes
        assert polite.disconnected and vanished.disconnected and not loop.clients
        wait_for(lambda: any(topic == P.status_topic("T03") for topic, _p in collector.messages), "T03's Last Will")
        time.sleep(0.5)
        assert collector.messages == [(P.status_topic("T03"), b'{"online": false, "why": "lost"}')]
    finally:
        collector.close()


def _tls_pair(pki) -> tuple[ssl.SSLSocket, ssl.SSLSocket]:
    """A TLS connection over a socket pair: (the client's end, non-blocking; the broker's)."""
    raw_client, raw_broker = socket.socketpair()
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(str(pki / "broker.crt"), str(pki / "broker.key"))
    ends: dict = {}
    handshake = threading.Thread(target=lambda: ends.setdefault("broker", server.wrap_socket(raw_broker, server_side=True)))
    handshake.start()
    ours = table_context(pki, "T01").wrap_socket(raw_client, server_hostname="127.0.0.1")
    handshake.join(10)
    ours.setblocking(False)
    return ours, ends["broker"]


def test_packets_cut_anywhere_between_tls_records_are_handled_whole(pki):
    ours, broker_end = _tls_pair(pki)
    client = LightMQTT("T01", table_context(pki, "T01"))
    client.sock = ours
    heard: list = []
    client.on_message = lambda topic, payload, retain: heard.append(("message", topic, payload, retain))
    client.on_publish = lambda mid, reason: heard.append(("puback", mid, reason))
    topic = P.ack_topic("T01").encode()
    payload = b'{"acked": 7}' * 20  # past 127 bytes: a two-byte remaining length
    properties = b"\x02\x01\x00"     # one property (payload format indicator) to be skipped
    qos1 = struct.pack(">H", len(topic)) + topic + struct.pack(">H", 513) + properties + payload
    stream = (bytes((0x33,)) + bytes((len(qos1) % 128 | 128, len(qos1) // 128)) + qos1  # QoS 1, retained
              + b"\x40\x02\x00\x05"           # PUBACK 5, no reason code: success
              + b"\x40\x04\x00\x06\x10\x00"   # PUBACK 6: no matching subscribers
              + b"\xd0\x00")                  # PINGRESP
    try:
        for size in (1, 2, 3, 7, len(stream)):
            heard.clear()
            for at in range(0, len(stream), size):
                broker_end.sendall(stream[at:at + size])  # a TLS record each
                if at % (3 * size) == 0:
                    time.sleep(0.001)
                    client.readable()  # now and then: several records wait, some split
            deadline = time.monotonic() + 5
            while len(heard) < 3 and time.monotonic() < deadline:
                client.readable()
            assert heard == [("message", topic.decode(), payload, True), ("puback", 5, 0), ("puback", 6, 16)]
            # The QoS 1 message was acknowledged with its own packet id.
            assert broker_end.recv(100) == b"\x40\x02\x02\x01"
    finally:
        ours.close()
        broker_end.close()
