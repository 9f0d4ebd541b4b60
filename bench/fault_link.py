"""The group broker's address as a property's bridge meets it on a real link: a TCP relay
on a port of its own that can refuse, accept and close, blackhole, or answer with another
CA's certificate (tests/floor/test_bridge_faults.py, bench/bench_bridge_wedge.py)."""

from __future__ import annotations

import socket
import threading

__all__ = ["FaultyLink", "free_port"]


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FaultyLink:
    """The group broker's address as the property's bridge meets it, on a port of its own.

    ``up``: a TCP relay to the group broker. ``refuse``: nothing listens (connections
    refused). ``close``: accepts and closes at once. ``blackhole``: accepts and never
    answers; the connections open when it began stop carrying bytes but stay open, as
    behind a dead router. ``badtls``: relays to another broker, whose certificate is of
    another CA. Every fault but the blackhole also ends the connections open when it
    begins, as the far end's restart or a firewall's reset would.
    """

    def __init__(self, group_port: int, other_port: int, port: int | None = None):
        self.ports = {"up": group_port, "badtls": other_port}
        self.port = port or free_port()
        self.mode = "up"
        self._links: list[dict] = []
        self._every: list[dict] = []  # closed at the end
        self._lock = threading.Lock()
        self._closed = False
        self._listener: socket.socket | None = None
        self._listen()

    def _listen(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while not self._closed:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            mode = self.mode
            if mode in ("close", "refuse"):  # refuse: came in as the listener closed
                client.close()
                continue
            link = {"dead": mode == "blackhole", "socks": [client]}
            with self._lock:
                self._links.append(link)
                self._every.append(link)
            if mode == "blackhole":
                continue
            try:
                server = socket.create_connection(("127.0.0.1", self.ports[mode]))
            except OSError:
                client.close()
                continue
            link["socks"].append(server)
            threading.Thread(target=self._pump, args=(client, server, link), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, link), daemon=True).start()

    @staticmethod
    def _pump(src, dst, link) -> None:
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
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def fault(self, mode: str) -> None:
        """Begin the fault *mode* (``refuse``, ``close``, ``blackhole``, ``badtls``)."""
        self.mode = mode
        with self._lock:
            links, self._links = self._links, []
        for link in links:
            link["dead"] = True
            if mode != "blackhole":
                for s in link["socks"]:
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
            else:
                with self._lock:
                    self._links.append(link)
        if mode == "refuse":
            self._listener.close()
            self._listener = None

    def heal(self) -> None:
        """The group's address answers again, for new connections."""
        self.mode = "up"
        if self._listener is None:
            self._listen()

    def close(self) -> None:
        self._closed = True
        if self._listener is not None:
            self._listener.close()
        with self._lock:
            every = list(self._every)
        for link in every:
            for s in link["socks"]:
                s.close()
