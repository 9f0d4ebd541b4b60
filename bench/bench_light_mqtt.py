"""The group bench's simulated tables: CPU per journal line with bench.light_mqtt against paho, same broker, same load, same run.

One group bench worker's share of tables (250) connects to the shipped mosquitto
over TLS, each with its own certificate, and sends a journal message (QoS 1) a
second; a collector stand-in (paho, in this process) answers each with an ack
(QoS 0), as the floor does. The tables' process counts its own CPU time while
they deal, first with paho driven through its external-loop API (what the group
bench used before), then with ``bench.light_mqtt``. Keys:

- ``light_mqtt_cpu_ms_per_line``: the tables' CPU per line sent and
  acknowledged, beside paho's (``paho_cpu_ms_per_line``) measured in the same run.
- ``light_mqtt_cpu_vs_paho``: the ratio of the two. Goal: at most 0.5, so that the
  group bench's tables leave the floor it measures at least half the CPU they took.
- ``light_mqtt_acked`` / ``paho_acked``: lines acknowledged of those sent (all).
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from bench import mosquitto_missing, show_goals

TABLES = 250
DEAL_S = 20.0
CONNECT_S = 60.0
LINE = "x" * 160  # about a journal line's size

#: key: (comparison, goal, baseline shown beside it)
GOALS = {
    "light_mqtt_cpu_ms_per_line": ("", None, "paho {paho_cpu_ms_per_line}"),
    "light_mqtt_cpu_vs_paho": ("<=", 0.5, ""),
    "light_mqtt_acked": ("", None, "paho {paho_acked}"),
}


class _PahoLoop:
    """paho clients' sockets in one selector (paho's external-loop API), as the group bench had."""

    def __init__(self):
        import selectors
        self.selectors = selectors
        self.selector = selectors.DefaultSelector()
        self.clients: list = []

    def attach(self, client) -> None:
        sel, READ, WRITE = self.selector, self.selectors.EVENT_READ, self.selectors.EVENT_WRITE

        def modify(sock, events):
            try:
                sel.modify(sock, events, client)
            except (KeyError, ValueError):
                pass

        def closed(_c, _u, sock):
            try:
                sel.unregister(sock)
            except (KeyError, ValueError):
                pass
        client.on_socket_open = lambda _c, _u, sock: sel.register(sock, READ, client)
        client.on_socket_close = closed
        client.on_socket_register_write = lambda _c, _u, sock: modify(sock, READ | WRITE)
        client.on_socket_unregister_write = lambda _c, _u, sock: modify(sock, READ)
        self.clients.append(client)

    def run(self, timeout: float) -> None:
        for key, mask in self.selector.select(timeout):
            client = key.data
            if mask & self.selectors.EVENT_READ:
                client.loop_read()
                sock = client.socket()
                while sock is not None and sock.pending():  # TLS may hold bytes select() cannot see
                    client.loop_read()
                    sock = client.socket()
            if mask & self.selectors.EVENT_WRITE and client.socket() is not None:
                client.loop_write()


def _paho_table(name, port, pki, loop, heard):
    from dealerbox.link import protocol as P
    from dealerbox.link.client import Identity, make_client

    client = make_client(Identity("127.0.0.1", port, pki / "ca.crt", pki / f"{name}.crt", pki / f"{name}.key"), name)
    client.on_connect = lambda c, _u, _f, rc, _p: (c.subscribe(P.ack_topic(name), 1), heard["connected"].add(name))
    client.on_message = lambda _c, _u, msg: heard.__setitem__("acks", heard["acks"] + 1)
    client.on_publish = lambda *_a: None
    loop.attach(client)
    client.connect("127.0.0.1", port, keepalive=30, clean_start=True)
    return lambda payload: client.publish(P.journal_topic(name), payload, qos=1)


def _light_table(name, port, pki, loop, heard):
    from dealerbox.link import protocol as P

    from bench.light_mqtt import LightMQTT, table_context
    client = LightMQTT(name, table_context(pki, name), keepalive=30)
    client.on_connect = lambda _rc: (client.subscribe([(P.ack_topic(name), 1)]), heard["connected"].add(name))
    client.on_message = lambda _t, _p, _r: heard.__setitem__("acks", heard["acks"] + 1)
    client.connect("127.0.0.1", port)
    loop.attach(client)
    return lambda payload: client.publish(P.journal_topic(name), payload, qos=1)


def _deal(kind: str, names, port, pki, out_path) -> None:
    """A worker process: *names* connect with *kind*'s client, then each sends a line a
    second for DEAL_S; its CPU time over the dealing, the lines sent and acknowledged."""
    import heapq

    from dealerbox.link import protocol as P

    from bench.light_mqtt import Loop
    loop = _PahoLoop() if kind == "paho" else Loop()
    heard = {"connected": set(), "acks": 0}
    make = _paho_table if kind == "paho" else _light_table
    publish = [make(n, port, pki, loop, heard) for n in names]
    deadline = time.monotonic() + CONNECT_S
    while len(heard["connected"]) < len(names) and time.monotonic() < deadline:
        loop.run(0.05)
    loop.run(1.0)  # the SUBACKs
    sent = 0
    cpu, start = time.process_time(), time.monotonic()
    due = [(start + i / len(names), i) for i in range(len(names))]  # a heap, by time
    while time.monotonic() - start < DEAL_S:
        now = time.monotonic()
        while due[0][0] <= now:
            at, i = heapq.heappop(due)
            sent += 1
            publish[i](P.encode({"table": names[i], "boot": 1, "oldest": 1, "lines": [LINE]}))
            heapq.heappush(due, (at + 1.0, i))
        loop.run(0.02)
    settle = time.monotonic() + 5.0
    while heard["acks"] < sent and time.monotonic() < settle:
        loop.run(0.05)
    cpu = time.process_time() - cpu
    Path(out_path).write_text(json.dumps({"cpu_s": cpu, "sent": sent, "acks": heard["acks"],
                                          "connected": len(heard["connected"])}))


def _one(kind: str, names, port, pki, tmp: Path) -> dict:
    import multiprocessing

    out = tmp / f"{kind}.json"
    proc = multiprocessing.get_context("spawn").Process(target=_deal, args=(kind, names, port, pki, out))
    proc.start()
    proc.join(timeout=CONNECT_S + DEAL_S + 60)
    if proc.is_alive():
        proc.kill()
    return json.loads(out.read_text())


def run() -> dict:
    missing = mosquitto_missing()
    if missing:
        return {"light_mqtt_skipped": missing}
    from dealerbox.link import protocol as P
    from dealerbox.floor.operating.broker import Broker, make_pki
    from dealerbox.link.client import Identity, make_client

    names = [f"T{i:04d}" for i in range(1, TABLES + 1)]
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench_light_mqtt_") as tmp:
        tmp = Path(tmp)
        pki = make_pki(tmp / "pki", [*names, "floor-collector"])
        (tmp / "broker").mkdir()
        broker = Broker(tmp / "broker", pki).start()
        # The collector stand-in: an ack for each journal message.
        floor = make_client(Identity("127.0.0.1", broker.port, pki / "ca.crt", pki / "floor-collector.crt",
                                     pki / "floor-collector.key"), "floor-collector")
        floor.on_connect = lambda c, _u, _f, _rc, _p: c.subscribe(P.journal_topic("+"), 1)
        floor.on_message = lambda c, _u, msg: c.publish(P.ack_topic(msg.topic.split("/")[-2]),
                                                        P.encode({"acked": 1}), qos=0)
        try:
            floor.connect("127.0.0.1", broker.port)
            floor.loop_start()
            for kind in ("paho", "light_mqtt"):
                r = _one(kind, names, broker.port, pki, tmp)
                out[f"{kind}_cpu_ms_per_line"] = round(r["cpu_s"] * 1000.0 / max(1, r["sent"]), 3)
                out[f"{kind}_acked"] = f"{r['acks']} of {r['sent']}"
                out[f"{kind}_connected"] = r["connected"]
        finally:
            floor.disconnect()
            floor.loop_stop()
            broker.stop()
    out["light_mqtt_cpu_vs_paho"] = round(out["light_mqtt_cpu_ms_per_line"] / out["paho_cpu_ms_per_line"], 2)
    show_goals(GOALS, out)
    return out


if __name__ == "__main__":
    print(json.dumps(run()))
