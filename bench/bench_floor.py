"""Floor reporting under load: 100 tables, each with its own certificate, each
dealing at ten times a real table's rate, through one mosquitto and one
collector on this machine.

A real table journals about one line a second on average (a hand every two
minutes: some 60 events and a few decisions, bursts during the deal), so each
simulated table here writes 10 lines a second (one in five a decision) for
``DEAL_S`` seconds. Keys:

- ``floor_tables``: tables that reported (goal: 100).
- ``floor_lines_lost`` / ``floor_lines_duplicated``: lines missing from the
  collector's store, or stored more than once (goal: 0 and 0).
- ``floor_ms_p99``: from the decision (the line appended) to committed in the
  store (the collector acknowledges only after its commit, so the ack's
  arrival at the table bounds the commit from above). Goal: at most 500 ms.
- ``floor_ms_p99_to_view``: from the decision to shown in the view (the web
  view's server-sent events, as a signed-in page receives them: ``floor web``
  is a process of its own that polls the store for the collector's commits).
- ``floor_ms_p50``: the median of the same.
- ``floor_lines_per_s``: lines committed per second over the run.
- ``floor_load_avg_1min``: the machine's load at the end (the latencies
  depend on it: this machine is shared).
Baseline: a supervisor notices a red table within a second or two.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench import mosquitto_missing

TABLES = 100
RATE = 10.0          # lines per second per table: ten times a real table
DEAL_S = 30.0
DRAIN_S = 60.0
WORKERS = 4        # processes the simulated tables are spread over (one GIL each)

DECISION = {"t": 0.0, "verdict": "correct", "irregularity": "EXPOSED_DEAL", "cards": ["Ah"],
            "rule": "002 r35", "steps": ["Show the card to all players"], "step": 0, "phase": "deal"}


def _p50(values):
    values = sorted(values)
    return round(values[len(values) // 2] * 1000.0, 1) if values else None


def _p99(values):
    values = sorted(values)
    return round(values[min(len(values) - 1, int(0.99 * len(values)))] * 1000.0, 1) if values else None


def _deal(names, port, pki, tables_dir, start_at, out_path) -> None:
    """A worker process: some of the tables, each with its journal and its
    publisher, dealing from ``start_at`` (wall clock) for DEAL_S seconds."""
    from dealerbox.service.uplink import FloorSettings, Publisher
    from dealerbox.domain.events import Event
    from dealerbox.service.journal import Journal

    journals, pubs = {}, {}
    decided = {n: {} for n in names}
    committed = {n: {} for n in names}
    for n in names:
        journals[n] = Journal(tables_dir / n, sync="none")
        s = FloorSettings(enabled=True, table=n, host="127.0.0.1", port=port,
                          ca=pki / "ca.crt", cert=pki / f"{n}.crt", key=pki / f"{n}.key",
                          health_interval_s=10.0)

        def acked(seq, n=n):
            committed[n].setdefault(seq, time.time())
        pubs[n] = Publisher(s, tables_dir / n, on_acked=acked, clock_synchronised=lambda: True).start()
    try:
        while time.time() < start_at:
            time.sleep(0.01)
        period = 1.0 / RATE
        count = 0
        tick = Event(0.0, "tick")
        start = time.monotonic()
        while time.monotonic() - start < DEAL_S:
            for n in names:
                j = journals[n]
                decided_at = time.time()
                if count % 5 == 4:
                    decided[n][j.append_decision(DECISION)] = decided_at
                else:
                    j.append(tick)
                pubs[n].notify()
            count += 1
            lag = start + count * period - time.monotonic()
            if lag > 0:
                time.sleep(lag)
        lines = {n: j.head[0] for n, j in journals.items()}
        deadline = time.monotonic() + DRAIN_S
        while any(pubs[n].acked < lines[n] for n in names) and time.monotonic() < deadline:
            time.sleep(0.1)
        drained = time.monotonic() - start
    finally:
        for p in pubs.values():
            p.close()
        for j in journals.values():
            j.close()
    Path(out_path).write_text(json.dumps({"lines": lines, "decided": decided, "committed": committed,
                                          "drained_s": drained, "connected": True}))


def run() -> dict:
    missing = mosquitto_missing()
    if missing:
        return {"floor_skipped": missing}
    import multiprocessing

    from dealerbox.floor.operating.broker import Broker, free_port, make_pki
    from dealerbox.floor.store import Store
    from dealerbox.floor.operating.accounts import Accounts
    from dealerbox.floor.terminal.view import FloorClient

    names = [f"T{i:03d}" for i in range(1, TABLES + 1)]
    with tempfile.TemporaryDirectory(prefix="bench_floor_") as tmp:
        tmp = Path(tmp)
        pki = make_pki(tmp / "pki", [*names, "floor-collector"])
        (tmp / "broker").mkdir()
        broker = Broker(tmp / "broker", pki).start()
        db = tmp / "floor.sqlite"
        config = tmp / "floor.toml"
        web_port = free_port()
        config.write_text(
            f'[broker]\nhost = "localhost"\nport = {broker.port}\nca = "{pki / "ca.crt"}"\n'
            f'cert = "{pki / "floor-collector.crt"}"\nkey = "{pki / "floor-collector.key"}"\n'
            f'[store]\npath = "{db}"\n[web]\nhost = "127.0.0.1"\nport = {web_port}\n')
        with Store(db) as store:
            Accounts(store).add("bench", "viewer", "bench viewer password")
        collector = subprocess.Popen([sys.executable, "-m", "dealerbox.cli", "floor", "collect",
                                      "--config", str(config)], stderr=subprocess.DEVNULL)
        web = subprocess.Popen([sys.executable, "-m", "dealerbox.cli", "floor", "web",
                                "--config", str(config)], stderr=subprocess.DEVNULL)
        viewed: dict[str, dict[int, float]] = {n: {} for n in names}
        stop = threading.Event()
        workers = []
        try:
            # The view: the web view's SSE stream, signed in, as the page gets it.
            def watch():
                while not stop.is_set():
                    try:
                        client = FloorClient(f"http://127.0.0.1:{web_port}/")
                        client.sign_in("bench", "bench viewer password")
                        for name, data in client.events(stop):
                            if name == "tables":
                                now = time.time()
                                for t in data["tables"]:
                                    viewed.get(t["table"], {}).setdefault(t["last_seq"], now)
                    except OSError:
                        time.sleep(0.2)
            threading.Thread(target=watch, daemon=True).start()
            ctx = multiprocessing.get_context("spawn")
            start_at = time.time() + 15.0  # every worker connected by then
            for w in range(WORKERS):
                part = names[w::WORKERS]
                out = tmp / f"worker{w}.json"
                proc = ctx.Process(target=_deal, args=(part, broker.port, pki, tmp / "tables", start_at, out))
                proc.start()
                workers.append((proc, out))
            for proc, _out in workers:
                proc.join(timeout=DEAL_S + DRAIN_S + 60)
            time.sleep(1.0)  # the last view events
        finally:
            stop.set()
            for proc, _out in workers:
                if proc.is_alive():
                    proc.kill()
            for proc in (collector, web):
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
            broker.stop()
        results = [json.loads(out.read_text()) for _p, out in workers]
        lines, decided, committed = {}, {}, {}
        for r in results:
            lines.update(r["lines"])
            for key, target in (("decided", decided), ("committed", committed)):
                for n, marks in r[key].items():
                    target[n] = {int(k): v for k, v in marks.items()}
        drained_s = max(r["drained_s"] for r in results)

        with Store(db) as store:
            stored = store.line_counts()
            chains_ok = all(not store.verify(n) for n in names)
        lost = sum(lines[n] - stored.get(n, (0, 0, 0))[1] for n in names)
        duplicated = sum(c - d for c, d, _m in stored.values())

        def latencies(marks):
            out = []
            for n in names:
                seen = sorted(marks[n].items())
                k = 0
                for seq, at in sorted(decided[n].items()):
                    while k < len(seen) and seen[k][0] < seq:
                        k += 1
                    if k < len(seen):
                        out.append(seen[k][1] - at)
            return out

        total = sum(lines.values())
        to_commit, to_view = latencies(committed), latencies(viewed)
        return {
            "floor_tables": sum(1 for n in names if stored.get(n, (0,))[0] > 0),
            "floor_lines": total,
            "floor_lines_lost": lost,
            "floor_lines_duplicated": duplicated,
            "floor_ms_p50": _p50(to_commit),
            "floor_ms_p99": _p99(to_commit),
            "floor_ms_p99_to_view": _p99(to_view),
            # The machine is shared: latency figures mean little without its load.
            "floor_load_avg_1min": round(os.getloadavg()[0], 1),
            "floor_lines_per_s": round(total / drained_s, 1),
            "floor_chains_ok": chains_ok,
        }


if __name__ == "__main__":
    print(json.dumps(run()))
