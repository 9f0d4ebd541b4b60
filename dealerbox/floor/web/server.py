"""Serving the floor view: Hypercorn (asyncio), one process, no thread per connection.

Why Hypercorn and not uvicorn: uvicorn (0.54, h11 and httptools alike) arms
no timer until a first response is sent, and every byte received disarms its
keep-alive timer, so a client that sends half a request head, or nothing,
holds its connection for ever (uvicorn issue 157 asks for a request-start
timeout; it was never added). Hypercorn starts its idle timer when the
connection opens and stops it only once a whole request head has arrived, so
``keep_alive_timeout`` is also the time a client has to send its head; a
slow body is cut by :func:`~.auth.read_body`'s own deadline. Malformed heads
(a negative ``Content-Length``, junk) are refused by h11 with a 400.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import ssl

from hypercorn.asyncio.run import worker_serve
from hypercorn.config import Config as HypercornConfig
from hypercorn.utils import wrap_app

from dealerbox.errors import FloorError
from dealerbox.floor.operating.settings import WebSettings
from dealerbox.floor.web import http11
from dealerbox.floor.web.app import FloorApp

__all__ = ["serve", "hypercorn_config"]

log = logging.getLogger(__name__)


def hypercorn_config(settings: WebSettings) -> HypercornConfig:
    config = HypercornConfig()
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    config.bind = [f"{host}:{settings.port}"]
    if settings.tls:
        for what, path in (("cert", settings.cert), ("key", settings.key)):
            if not path.is_file():
                raise FloorError(f"{settings.config}: web.{what} = {str(path)!r}: no such file")
        config.certfile, config.keyfile = str(settings.cert), str(settings.key)
    # HTTP/1.1 only: the head deadline below is what protects the server, and a
    # floor page needs one event stream, not multiplexing (a preface without TLS
    # is refused by http11.Http11Only, which serve() installs).
    config.alpn_protocols = ["http/1.1"]
    config.keep_alive_timeout = settings.request_timeout_s
    config.ssl_handshake_timeout = settings.request_timeout_s
    config.read_timeout = None  # an event stream's client sends nothing for hours
    config.h11_max_incomplete_size = 16 * 1024
    config.graceful_timeout = 3.0
    config.include_server_header = False
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    return config


def serve(settings: WebSettings, ready=None) -> int:
    """Serve until SIGTERM or SIGINT; *ready* gets the view's URL once it listens."""
    config = hypercorn_config(settings)
    if settings.tls:
        try:
            config.create_ssl_context()
        except (OSError, ssl.SSLError) as exc:
            raise FloorError(f"{settings.config}: web.cert / web.key cannot be used for TLS: {exc}") from None
    try:
        sockets = config.create_sockets()
    except OSError as exc:
        raise FloorError(f"the floor view cannot listen on {config.bind[0]}: {exc.strerror or exc}") from None
    sock = (sockets.secure_sockets or sockets.insecure_sockets)[0]
    port = sock.getsockname()[1]
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    url = f"{'https' if settings.tls else 'http'}://{host}:{port}/"
    floor_app = FloorApp(settings)
    http11.install()
    app = wrap_app(floor_app.asgi(), config.wsgi_max_body_size, "asgi")

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)

        async def shutdown_trigger() -> None:
            await stop.wait()
            floor_app.close_streams()

        async def announce() -> None:
            # The lifespan (the store's first read) is done before the server listens.
            while not floor_app.floor.refreshes:
                await asyncio.sleep(0.02)
            if ready is not None:
                ready(url)

        announcer = asyncio.create_task(announce())
        try:
            await worker_serve(app, config, sockets=sockets, shutdown_trigger=shutdown_trigger)
        finally:
            announcer.cancel()

    asyncio.run(main())
    return 0
