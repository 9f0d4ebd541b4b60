"""A lean MQTT v5 client for the group bench's simulated tables.

The group bench runs a thousand tables, the broker, three collectors and
PostgreSQL on one machine. On a real floor each table is a Pi of its own and
speaks through paho, as ``dealerbox.service.uplink`` does. Here the tables'
side took a third of the bench machine's two cores (0.6 to 0.75 of a core),
and py-spy put 62 % of that in paho's packet reading and handling: a
``Properties`` object, a ``ReasonCode`` and a message-info object made for
every PUBACK and every message, and a callback dispatch per packet. That CPU was
taken from the floor being measured, and it grew the floor's latencies with it.
With this client the same thousand tables took 0.31 to 0.35 of a core (read
from /proc each 5 s of a group bench run); ``bench_light_mqtt`` measures both
clients per line in one run.

The libraries on PyPI first: aiomqtt and asyncio-mqtt wrap paho; amqtt 0.12
speaks MQTT 3.1.1; gmqtt 0.8 speaks v5 but does not read a PUBACK's reason code,
and the tables' resend rule needs reason 16 (the broker took a line for no
collector).

This client speaks the same protocol on the wire (MQTT v5 over TLS with the
table's own certificate, a Last Will, QoS 1 publishes whose PUBACK reason codes
are read, QoS 0 and 1 subscriptions) and does no more than a light table needs:
no reconnect, no topic aliases, no QoS 2, no properties sent, the properties it
receives skipped. A worker process drives many of them from one selector:
:class:`Loop`.
"""

from __future__ import annotations

import selectors
import socket
import ssl
import struct
import time

CONNACK, PUBLISH, PUBACK, SUBACK, UNSUBACK, PINGRESP, DISCONNECT = 2, 3, 4, 9, 11, 13, 14
NO_MATCHING_SUBSCRIBERS = 16  # a PUBACK's reason code: the broker gave the message to nobody
PINGREQ_PACKET = b"\xc0\x00"
DISCONNECT_PACKET = b"\xe0\x00"  # normal disconnection: the broker drops the Last Will


def table_context(pki, name: str) -> ssl.SSLContext:
    """TLS for the table *name* of the CA in *pki* (``make_pki``'s files): its own
    certificate, checking the broker's against the CA and its name, as floor.client does."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(cafile=str(pki / "ca.crt"))
    context.load_cert_chain(str(pki / f"{name}.crt"), str(pki / f"{name}.key"))
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        n, digit = divmod(n, 128)
        out.append(digit | (128 if n else 0))
        if not n:
            return bytes(out)


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">H", len(raw)) + raw


def _packet(first: int, body: bytes) -> bytes:
    return bytes((first,)) + _varint(len(body)) + body


class LightMQTT:
    """One MQTT v5 client over TLS on a non-blocking socket.

    The owner calls :meth:`readable` and :meth:`writable` when the selector says so,
    and :meth:`misc` about once a second (keepalive). It sets the callbacks it wants:
    ``on_connect(reason)``, ``on_message(topic, payload, retain)``,
    ``on_publish(mid, reason)`` (a PUBACK), ``on_disconnect()``; and ``on_want_write(bool)``
    to hear when the socket has bytes waiting to go out.
    """

    def __init__(self, client_id: str, context: ssl.SSLContext, *, keepalive: int = 30,
                 will: tuple[str, bytes, int, bool] | None = None):
        self.client_id, self.context, self.keepalive, self.will = client_id, context, keepalive, will
        self.sock: ssl.SSLSocket | None = None
        self.on_connect = self.on_message = self.on_publish = self.on_disconnect = None
        self.on_want_write = None
        self._wants_write = False
        self._in = bytearray()
        self._out = bytearray()
        self._mid = 0
        self._sent_at = time.monotonic()

    # -- the connection

    def connect(self, host: str, port: int, timeout: float = 30.0) -> None:
        """TCP and the TLS handshake (blocking), then CONNECT; the CONNACK comes to
        :attr:`on_connect` through :meth:`readable`. OSError if the broker cannot be reached."""
        raw = socket.create_connection((host, port), timeout=timeout)
        try:
            sock = self.context.wrap_socket(raw, server_hostname=host)
        except BaseException:
            raw.close()
            raise
        sock.setblocking(False)
        self.sock = sock
        flags = 0x02  # clean start: the table keeps no session on the broker, as the publisher
        payload = _string(self.client_id)
        if self.will is not None:
            topic, message, qos, retain = self.will
            flags |= 0x04 | (qos << 3) | (0x20 if retain else 0)
            payload += b"\x00" + _string(topic) + struct.pack(">H", len(message)) + message
        body = _string("MQTT") + bytes((5, flags)) + struct.pack(">H", self.keepalive) + b"\x00" + payload
        self._send(_packet(0x10, body))

    def close(self) -> None:
        """Close the socket without a DISCONNECT (the broker publishes the Last Will)."""
        if self.sock is not None:
            sock, self.sock = self.sock, None
            try:
                if self.on_disconnect is not None:
                    self.on_disconnect()
            finally:
                sock.close()

    def disconnect(self) -> None:
        """A normal DISCONNECT (no Last Will), sent as far as the socket takes it now, then close."""
        if self.sock is not None:
            self._send(DISCONNECT_PACKET)
            self.writable()
            self.close()

    # -- what the owner sends

    def _next_mid(self) -> int:
        self._mid = self._mid % 65535 + 1
        return self._mid

    def publish(self, topic: str, payload: bytes, qos: int = 0, retain: bool = False) -> int:
        """Queue a PUBLISH; its packet id (0 for QoS 0)."""
        mid = self._next_mid() if qos else 0
        head = _string(topic) + (struct.pack(">H", mid) if qos else b"")
        self._send(_packet(0x30 | (qos << 1) | (1 if retain else 0), head + b"\x00" + payload))
        return mid

    def subscribe(self, topics: list[tuple[str, int]]) -> int:
        """SUBSCRIBE to each ``(filter, qos)`` (no other options); its packet id."""
        mid = self._next_mid()
        body = struct.pack(">H", mid) + b"\x00" + b"".join(_string(t) + bytes((qos,)) for t, qos in topics)
        self._send(_packet(0x82, body))
        return mid

    def misc(self, now: float) -> None:
        """A PINGREQ when nothing went out for half the keepalive."""
        if self.sock is not None and now - self._sent_at >= self.keepalive / 2:
            self._send(PINGREQ_PACKET)

    # -- the socket

    def _send(self, data: bytes) -> None:
        if self.sock is None:
            return
        self._sent_at = time.monotonic()
        waiting = bool(self._out)
        self._out += data
        if not waiting:
            self.writable()

    def writable(self) -> None:
        """Send what waits, as far as the socket takes it."""
        while self._out and self.sock is not None:
            try:
                sent = self.sock.send(self._out)
            except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
                break
            except OSError:
                self.close()
                return
            del self._out[:sent]
        wants = bool(self._out)
        if wants != self._wants_write and self.sock is not None:
            self._wants_write = wants
            if self.on_want_write is not None:
                self.on_want_write(wants)

    def readable(self) -> None:
        """Read what the socket has, and what TLS decrypted beyond it (the selector cannot
        see that), and handle each whole packet. More on the socket: the selector says so
        again (reading until it would block cost a failing read each time)."""
        while self.sock is not None:
            try:
                data = self.sock.recv(65536)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                break
            except OSError:
                self.close()
                return
            if not data:
                self.close()
                return
            self._in += data
            if not self.sock.pending():
                break
        self._handle_packets()

    def _handle_packets(self) -> None:
        buf = self._in
        at = 0
        while len(buf) - at >= 2:
            length, shift, i = 0, 0, at + 1
            while i < len(buf):
                digit = buf[i]
                length |= (digit & 127) << shift
                shift += 7
                i += 1
                if not digit & 128:
                    break
            else:
                break  # the length itself is not all here yet
            if len(buf) - i < length:
                break
            first = buf[at]
            body = bytes(buf[i:i + length])
            at = i + length
            self._handle(first >> 4, first & 15, body)
            if self.sock is None:
                break
        del buf[:at]

    def _handle(self, kind: int, flags: int, body: bytes) -> None:
        if kind == PUBLISH:
            qos = (flags >> 1) & 3
            (size,) = struct.unpack_from(">H", body)
            topic = body[2:2 + size].decode()
            at = 2 + size
            if qos:
                (mid,) = struct.unpack_from(">H", body, at)
                at += 2
                self._send(b"\x40\x02" + struct.pack(">H", mid))  # PUBACK, success
            props, shift = 0, 0
            while True:  # the properties' length, then the properties themselves: skipped
                digit = body[at]
                at += 1
                props |= (digit & 127) << shift
                shift += 7
                if not digit & 128:
                    break
            if self.on_message is not None:
                self.on_message(topic, body[at + props:], bool(flags & 1))
        elif kind == PUBACK:
            (mid,) = struct.unpack_from(">H", body)
            if self.on_publish is not None:
                self.on_publish(mid, body[2] if len(body) > 2 else 0)
        elif kind == CONNACK:
            if self.on_connect is not None:
                self.on_connect(body[1])
            if body[1] >= 0x80:
                self.close()
        elif kind == DISCONNECT:
            self.close()
        # SUBACK, UNSUBACK, PINGRESP: nothing to do for a light table


class Loop:
    """Many clients' sockets in one selector, driven by one thread."""

    def __init__(self):
        self.selector = selectors.DefaultSelector()
        self.clients: list[LightMQTT] = []
        self._misc_at = 0.0

    def attach(self, client: LightMQTT) -> None:
        """Serve *client*'s connected socket from now on (until it closes)."""
        sel, READ, WRITE = self.selector, selectors.EVENT_READ, selectors.EVENT_WRITE
        sock = client.sock
        on_disconnect = client.on_disconnect

        def want_write(wanted: bool) -> None:
            sel.modify(sock, READ | WRITE if wanted else READ, client)

        def closed() -> None:
            sel.unregister(sock)
            self.clients.remove(client)
            if on_disconnect is not None:
                on_disconnect()

        client.on_disconnect = closed
        client.on_want_write = want_write
        sel.register(sock, READ | WRITE if client._wants_write else READ, client)
        self.clients.append(client)

    def run(self, timeout: float) -> None:
        """Serve every socket that is ready, waiting at most *timeout* for one."""
        for key, mask in self.selector.select(timeout):
            client = key.data
            if mask & selectors.EVENT_READ:
                client.readable()
            if mask & selectors.EVENT_WRITE and client.sock is not None:
                client.writable()
        now = time.monotonic()
        if now - self._misc_at >= 1.0:  # keepalive pings
            self._misc_at = now
            for client in list(self.clients):  # a ping that fails closes its client
                client.misc(now)

    def run_until(self, when: float) -> None:
        """:meth:`run` until the wall clock reads *when*."""
        while True:
            left = when - time.time()
            if left <= 0:
                return
            self.run(min(left, 0.05))
