"""HTTP/1.1 only, whatever a client opens with.

Hypercorn switches a connection to HTTP/2 when its first bytes are the HTTP/2
preface, even when TLS offered ``http/1.1`` alone, and its idle timer then waits
for a first stream: a client that sends the preface and nothing more held its
connection (and a file descriptor) for ever (issue 32). The floor needs no
multiplexing (a page holds one event stream), and the head deadline that
protects the server is HTTP/1.1's, so the preface is refused at once: the
server's own (empty) SETTINGS, then GOAWAY with ``HTTP_1_1_REQUIRED`` (RFC 9113,
section 7), and the connection closes. An ``Upgrade: h2c`` header is ignored and
the request answered in HTTP/1.1, as RFC 9110 (section 7.8) lets a server do.

Hypercorn has no setting for this: :func:`install` puts :class:`Http11Only` in
place of the protocol choice its asyncio server makes for each connection.
"""

from __future__ import annotations

import struct

import hypercorn.asyncio.tcp_server as hypercorn_tcp
from hypercorn.events import Closed, RawData
from hypercorn.protocol import ProtocolWrapper
from hypercorn.protocol.h11 import H11Protocol

__all__ = ["Http11Only", "install", "HTTP2_REFUSAL"]

#: HTTP/2's error code "use HTTP/1.1 instead" (RFC 9113, section 7).
HTTP_1_1_REQUIRED = 0xD


def _frame(kind: int, payload: bytes) -> bytes:
    """One HTTP/2 frame on stream 0, no flags (RFC 9113, section 4.1)."""
    return struct.pack(">I", len(payload))[1:] + bytes([kind, 0]) + struct.pack(">I", 0) + payload


#: What a client that opened with the HTTP/2 preface gets: the server preface (an
#: empty SETTINGS frame, type 4), then GOAWAY (type 7) naming no stream processed.
HTTP2_REFUSAL = _frame(0x4, b"") + _frame(0x7, struct.pack(">II", 0, HTTP_1_1_REQUIRED))


class _Http2Refused(Exception):
    """The client opened with the HTTP/2 preface."""


class _Http11Protocol(H11Protocol):
    async def _check_protocol(self, event) -> None:
        # Hypercorn's own check turns the preface into HTTP/2 and answers an h2c
        # Upgrade with 101; here the one is refused and the other ignored.
        if event.method == b"PRI" and event.target == b"*" and event.http_version == b"2.0":
            raise _Http2Refused()


class Http11Only(ProtocolWrapper):
    """Hypercorn's per-connection protocol, always HTTP/1.1 (the ALPN offer is
    ``http/1.1`` alone, see :func:`~.server.hypercorn_config`)."""

    def __init__(self, app, config, context, task_group, state, ssl, client, server, send,
                 alpn_protocol=None):
        super().__init__(app, config, context, task_group, state, ssl, client, server, send,
                         "http/1.1")
        self.protocol = _Http11Protocol(app, config, context, task_group, state, ssl, client,
                                        server, send)

    async def handle(self, event) -> None:
        try:
            return await self.protocol.handle(event)
        except _Http2Refused:
            await self.send(RawData(data=HTTP2_REFUSAL))
            await self.send(Closed())


def install() -> None:
    """Make every connection Hypercorn's asyncio server accepts from now on HTTP/1.1 only."""
    hypercorn_tcp.ProtocolWrapper = Http11Only
