"""A live room on one machine: ``make floor`` (``python -m dealerbox.floor.demo_room``).

It sets up, in one folder (``state/floor-demo`` by default), what FLOOR.md has an
operator set up by hand: a casino CA and certificates (``make-ca.sh``), Debian's
mosquitto with the shipped configuration, the collector, the web view, a demo
supervisor with a fresh password, and three simulated tables (each a real
``dealerbox run --demo --forever`` on the simulated hardware, publishing to the
floor with its own certificate) whose scripted dealers sign in with their badges
and take turns. It prints the web view's address and the sign-in, then runs until
Ctrl-C or SIGTERM (or ``--for`` seconds), and stops every part it started. It
never reads stdin, so CI can run it.
"""

from __future__ import annotations

import argparse
import secrets
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from dealerbox.errors import FloorError
from dealerbox.floor.accounts import Accounts
from dealerbox.floor.broker import Broker, free_port, make_pki
from dealerbox.floor.store import Store
from dealerbox.resources import data_dir

__all__ = ["DemoRoom", "main"]

TABLES = ("T01", "T02", "T03")
DEMO_USER = "demo"


def _sim_config(table: str, directory: Path, pki: Path, port: int) -> Path:
    """The shipped simulated table, as *table*, its state in *directory*, on the floor."""
    text = (data_dir() / "tables" / "sim.toml").read_text(encoding="utf-8")
    text = text.replace('name = "sim-table"', f'name = "{table}"', 1)
    text = text.replace('state_dir = "state"', f'state_dir = "{directory / "state"}"', 1)
    text += (f'\n[floor]\nenabled = true\ntable = "{table}"\nhost = "localhost"\nport = {port}\n'
             f'ca = "{pki / "ca.crt"}"\ncert = "{pki / f"{table}.crt"}"\nkey = "{pki / f"{table}.key"}"\n')
    path = directory / "table.toml"
    directory.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class DemoRoom:
    """The broker, the collector, the web view and the tables of a demo room in *directory*."""

    def __init__(self, directory: Path, *, web_port: int = 8080, pace_s: float = 0.25):
        self.directory = Path(directory).resolve()
        self.web_port = web_port
        self.pace_s = pace_s
        self.password = ""
        self.url = ""
        self.broker: Broker | None = None
        self.procs: list[tuple[str, subprocess.Popen]] = []

    def start(self) -> "DemoRoom":
        d = self.directory
        d.mkdir(parents=True, exist_ok=True)
        pki = make_pki(d / "pki", [*TABLES, "floor-collector"])
        (d / "broker").mkdir(exist_ok=True)
        self.broker = Broker(d / "broker", pki).start()
        port = self.web_port if self.web_port and _free(self.web_port) else free_port()
        config = d / "floor.toml"
        config.write_text(f'[broker]\nhost = "localhost"\nport = {self.broker.port}\nca = "{pki / "ca.crt"}"\n'
                          f'cert = "{pki / "floor-collector.crt"}"\nkey = "{pki / "floor-collector.key"}"\n'
                          f'[store]\npath = "{d / "floor.sqlite"}"\n'
                          f'[web]\nhost = "127.0.0.1"\nport = {port}\n', encoding="utf-8")
        self.password = self._demo_user(d / "floor.sqlite")
        logs = d / "logs"
        logs.mkdir(exist_ok=True)
        me = [sys.executable, "-m", "dealerbox.cli"]
        self._spawn("collector", [*me, "floor", "collect", "--config", str(config)], logs)
        self._spawn("web", [*me, "floor", "web", "--config", str(config)], logs)
        for table in TABLES:
            table_config = _sim_config(table, d / "tables" / table, pki, self.broker.port)
            self._spawn(table, [*me, "run", "--demo", "--forever", "--pace", str(self.pace_s),
                                "--config", str(table_config)], logs)
        self.url = f"http://127.0.0.1:{port}/"
        return self

    def _demo_user(self, store_path: Path) -> str:
        """A supervisor for the demo, with a new password each start (never a fixed one)."""
        password = secrets.token_urlsafe(12)
        with Store(store_path) as store:
            accounts = Accounts(store)
            if store.user(DEMO_USER) is None:
                accounts.add(DEMO_USER, "supervisor", password)
            else:
                accounts.passwd(DEMO_USER, password)
            for dealer, name in (("1042", "Jana Novakova"), ("2077", "Petr Svoboda")):
                store.set_dealer_name(dealer, name, time.time())
        return password

    def _spawn(self, name: str, argv: list[str], logs: Path) -> None:
        log = open(logs / f"{name}.log", "ab")
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                cwd=self.directory, start_new_session=True)
        log.close()
        self.procs.append((name, proc))

    def check(self) -> str | None:
        """The first part that died, with its log's path; None while all run."""
        for name, proc in self.procs:
            if proc.poll() is not None:
                return f"{name} exited ({proc.returncode}): see {self.directory / 'logs' / (name + '.log')}"
        return None

    def stop(self) -> None:
        """Stop the tables, the web view, the collector, then the broker."""
        for _name, proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for _name, proc in reversed(self.procs):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs.clear()
        if self.broker is not None:
            self.broker.stop()
            self.broker = None


def _free(port: int) -> bool:
    import socket

    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dealerbox.floor.demo_room",
                                     description="A live room on this machine: broker, collector, web "
                                                 "view and three simulated tables (make floor).")
    parser.add_argument("--dir", type=Path, default=Path("state/floor-demo"),
                        help="where the room keeps its certificates, store and logs (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8080,
                        help="the web view's port (default: %(default)s; another free one if taken)")
    parser.add_argument("--pace", type=float, default=0.25,
                        help="seconds between the scripted dealers' actions (default: %(default)s)")
    parser.add_argument("--for", dest="seconds", type=float, default=None,
                        help="stop after this many seconds (default: until Ctrl-C or SIGTERM)")
    args = parser.parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    room = DemoRoom(args.dir, web_port=args.port, pace_s=args.pace)
    try:
        room.start()
    except (FloorError, OSError) as exc:
        room.stop()
        print(f"make floor: {exc}", file=sys.stderr)
        return 2
    print(f"the floor: {room.url}\nsign in as {DEMO_USER} with the password {room.password}\n"
          f"(three simulated tables deal; their logs are in {room.directory / 'logs'}; Ctrl-C stops the room)",
          flush=True)
    deadline = None if args.seconds is None else time.monotonic() + args.seconds
    failed = None
    try:
        while not stop.wait(0.5):
            failed = room.check()
            if failed or (deadline is not None and time.monotonic() >= deadline):
                break
    finally:
        room.stop()
    if failed:
        print(f"make floor: {failed}", file=sys.stderr)
        return 1
    print("the room is stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
