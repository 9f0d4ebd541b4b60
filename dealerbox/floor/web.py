"""The floor view as a web page, served by the collector: plain HTTP with
server-sent events (Debian's mosquitto cannot serve WebSockets, and a page
needs no MQTT client this way).

- ``GET /``: the page.
- ``GET /api/floor``: the snapshot (tables, open alerts) as JSON.
- ``GET /api/audit``: who cleared which alert, when.
- ``GET /events``: server-sent events; first ``snapshot``, then ``tables``,
  ``alert`` and ``cleared`` as they happen.
- ``POST /api/alerts/<id>/clear`` with ``{"who": ..., "note": ...}``: clears
  an alert. A reverse proxy that authenticates users may pass the name in
  ``X-Remote-User``, which then wins over ``who``.
"""

from __future__ import annotations

import json
import logging
import queue
import re
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .collector import Collector
from .page import PAGE

__all__ = ["FloorWeb"]

log = logging.getLogger(__name__)

_CLEAR_RE = re.compile(r"^/api/alerts/(\d+)/clear$")
_KEEPALIVE_S = 15.0
_CLIENT_QUEUE = 1000


class FloorWeb:
    """The HTTP server of the floor view, in a background thread."""

    def __init__(self, collector: Collector, host: str = "127.0.0.1", port: int = 8080):
        self.collector = collector
        web = self

        class Handler(_Handler):
            floor = web

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self.host, self.port = self.server.server_address[:2]
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def start(self) -> "FloorWeb":
        self._thread = threading.Thread(target=self.server.serve_forever, name="floor-web", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._closing.is_set():
            return
        self._closing.set()
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "FloorWeb":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


class _Handler(BaseHTTPRequestHandler):
    floor: FloorWeb
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # the access log goes to debug, not stderr
        log.debug("floor web: " + fmt, *args)

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, obj, status: int = 200) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json")

    def do_GET(self):
        collector = self.floor.collector
        if self.path in ("/", "/index.html"):
            self._send(200, PAGE.encode(), "text/html; charset=utf-8")
        elif self.path == "/api/floor":
            self._json(collector.snapshot())
        elif self.path == "/api/audit":
            self._json({"audit": collector.store.audit(),
                        "alerts": collector.store.alerts(open_only=False)})
        elif self.path == "/events":
            self._events()
        else:
            self._json({"error": "not found"}, HTTPStatus.NOT_FOUND)

    def do_POST(self):
        m = _CLEAR_RE.match(self.path)
        if not m:
            self._json({"error": "not found"}, HTTPStatus.NOT_FOUND)
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}") if length <= 65536 else None
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self._json({"error": "expected a JSON object"}, HTTPStatus.BAD_REQUEST)
            return
        who = self.headers.get("X-Remote-User") or body.get("who")
        if not isinstance(who, str) or not who.strip():
            self._json({"error": "say who clears the alert ('who')"}, HTTPStatus.BAD_REQUEST)
            return
        note = body.get("note") if isinstance(body.get("note"), str) else ""
        alert = self.floor.collector.clear_alert(int(m.group(1)), who.strip()[:100], note[:500])
        if alert is None:
            self._json({"error": "no such open alert"}, HTTPStatus.NOT_FOUND)
        else:
            self._json(alert)

    def _events(self) -> None:
        q: queue.Queue = queue.Queue(_CLIENT_QUEUE)
        overrun = threading.Event()

        def listener(event):
            try:
                q.put_nowait(event)
            except queue.Full:  # a stalled page: end its stream; EventSource reconnects
                overrun.set()

        collector = self.floor.collector
        collector.listen(listener)
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            self._event("snapshot", collector.snapshot())
            while not self.floor._closing.is_set() and not overrun.is_set():
                try:
                    event = q.get(timeout=_KEEPALIVE_S)
                except queue.Empty:
                    self.wfile.write(b": keepalive\n\n")
                    self.wfile.flush()
                    continue
                self._event(event["type"], event)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            collector.unlisten(listener)

    def _event(self, name: str, data) -> None:
        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()
