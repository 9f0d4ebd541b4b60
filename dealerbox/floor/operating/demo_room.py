"""A live room on one machine: ``make floor`` (``python -m dealerbox.floor.operating.demo_room``).

It sets up, in one folder (``state/floor-demo`` by default), what docs/floor/install.md has an
operator set up by hand: a casino CA and certificates (``make-ca.sh``), Debian's
mosquitto with the shipped configuration, the collector, the web view, a demo
supervisor with a fresh password, and three simulated tables (each a real
``dealerbox run --demo --forever`` on the simulated hardware, publishing to the
floor with its own certificate). It prints the web view's address and the sign-in,
then runs until Ctrl-C or SIGTERM (or ``--for`` seconds), and stops every part it
started. It never reads stdin, so CI can run it.

The room looks like a room: each table plays its own part (``room.toml`` beside its
config, :mod:`dealerbox.tools.room_table` reads it): its own seeded hands, mostly
clean with a few irregularities per hundred, starting :data:`OFFSET_S` after the
table before it, at a live table's pace (about 30 hands an hour) unless ``--speed``
says otherwise (the banner then says the room is accelerated). Four dealers with
names on the floor deal at three tables; every :data:`RELIEF_S`, one table at a
time, the dealer back from break signs in and relieves the table's dealer.
"""

from __future__ import annotations

import argparse
import json
import secrets
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from dealerbox.domain.badges import SIMULATED_DEALERS
from dealerbox.errors import FloorError
from dealerbox.floor.operating.accounts import Accounts
from dealerbox.floor.operating.broker import Broker, free_port, make_pki
from dealerbox.floor.store import Store
from dealerbox.resources import data_dir

__all__ = ["DemoRoom", "main"]

TABLES = ("T01", "T02", "T03")
DEMO_USER = "demo"
#: Where the demo's tables stand in the room (pit, row, column), as an admin would set it
#: with ``floor layout set``; a place set by hand in the demo's store is kept.
DEMO_LAYOUT = {"T01": ("Pit A", 1, 1), "T02": ("Pit A", 1, 2), "T03": ("Pit B", 1, 1)}
#: The names the floor shows for the simulated badges' dealers (the tables keep ids only).
DEALER_NAMES = dict(zip(SIMULATED_DEALERS, ("Jana Novakova", "Petr Svoboda", "Eva Dvorakova", "Tomas Horak")))
#: Room seconds between two reliefs (each at one table): every dealer deals an hour, then has 20 minutes off.
RELIEF_S = 1200.0
#: Room seconds between two tables' first hands.
OFFSET_S = 40.0
#: Irregular hands per 100 a real room sees (a few), the default.
IRREGULAR_PER_100 = 4.0
#: The name of the file beside a table's config that gives it its part
#: (what dealerbox.tools.room_table reads; the floor does not import the table's tools).
PART_FILE = "room.toml"


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

    def __init__(self, directory: Path, *, web_port: int = 8080, speed: float = 1.0, seed: int = 1,
                 irregular_per_100: float = IRREGULAR_PER_100):
        self.directory = Path(directory).resolve()
        self.web_port = web_port
        self.speed, self.seed, self.irregular_per_100 = speed, seed, irregular_per_100
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
        start = time.time()
        for place, table in enumerate(TABLES):
            table_config = _sim_config(table, d / "tables" / table, pki, self.broker.port)
            self._write_part(table_config, place, start)
            self._spawn(table, [*me, "run", "--demo", "--forever", "--config", str(table_config)], logs)
        self.url = f"http://127.0.0.1:{port}/"
        return self

    def _write_part(self, table_config: Path, place: int, start: float) -> None:
        """The table's part in the room, beside its config (read by ``run --demo``)."""
        part = {"table": place, "tables": len(TABLES), "dealers": list(DEALER_NAMES), "relief_s": RELIEF_S,
                "start": start, "offset_s": OFFSET_S * place, "speed": float(self.speed),
                "seed": self.seed * 100 + place, "irregular_per_100": float(self.irregular_per_100)}
        # JSON's strings, lists and numbers are TOML's too.
        lines = "".join(f"{key} = {json.dumps(value)}\n" for key, value in part.items())
        (table_config.parent / PART_FILE).write_text("[room]\n" + lines, encoding="utf-8")

    def _demo_user(self, store_path: Path) -> str:
        """A supervisor for the demo, with a new password each start (never a fixed one); the
        dealers' names, and the tables' places in the room (unless placed already)."""
        password = secrets.token_urlsafe(12)
        with Store(store_path) as store:
            accounts = Accounts(store)
            if store.user(DEMO_USER) is None:
                accounts.add(DEMO_USER, "supervisor", password)
            else:
                accounts.passwd(DEMO_USER, password)
            for dealer, name in DEALER_NAMES.items():
                store.set_dealer_name(dealer, name, time.time())
            placed = store.table_places()
            for table, (pit, row, col) in DEMO_LAYOUT.items():
                if table not in placed:
                    store.place_table(table, pit, row, col, DEMO_USER)
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


def _number(ok, expected: str):
    """An argparse type: a number *ok* accepts, else an error saying *expected*."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")   # fails every check below
        if not ok(value):
            raise argparse.ArgumentTypeError(f"{expected}, not {text!r}")
        return value
    return parse


_positive = _number(lambda v: 0 < v < float("inf"), "a number of times a live pace, more than 0")
_rate = _number(lambda v: 0 <= v <= 100, "a number of hands from 0 to 100")


def _duration(seconds: float) -> str:
    return f"{seconds / 60:.0f} minutes" if seconds >= 120 else f"{seconds:.0f} seconds"


def _pace(speed: float) -> str:
    if speed == 1:
        return "at a live table's pace (about 30 hands an hour each)"
    return f"ACCELERATED {speed:g} times a live table's pace (about {30 * speed:g} hands an hour each)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dealerbox.floor.operating.demo_room",
                                     description="A live room on this machine: broker, collector, web "
                                                 "view and three simulated tables (make floor).")
    parser.add_argument("--dir", type=Path, default=Path("state/floor-demo"),
                        help="where the room keeps its certificates, store and logs (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8080,
                        help="the web view's port (default: %(default)s; another free one if taken)")
    parser.add_argument("--speed", type=_positive, default=1.0,
                        help="how many times a live table's pace (about 30 hands an hour) the tables deal "
                             "(default: %(default)s, live; more is accelerated, and the banner says so)")
    parser.add_argument("--irregular-per-100", type=_rate, default=IRREGULAR_PER_100,
                        help="irregular hands per 100 hands, on average (default: %(default)s, as a real room)")
    parser.add_argument("--seed", type=int, default=1, help="the tables' hands (default: %(default)s)")
    parser.add_argument("--for", dest="seconds", type=float, default=None,
                        help="stop after this many seconds (default: until Ctrl-C or SIGTERM)")
    args = parser.parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    room = DemoRoom(args.dir, web_port=args.port, speed=args.speed, seed=args.seed,
                    irregular_per_100=args.irregular_per_100)
    try:
        room.start()
    except (FloorError, OSError) as exc:
        room.stop()
        print(f"make floor: {exc}", file=sys.stderr)
        return 2
    print(f"the floor: {room.url}\nsign in as {DEMO_USER} with the password {room.password}\n"
          f"(three simulated tables deal, {_pace(args.speed)}, about {args.irregular_per_100:g} irregular hands "
          f"per 100; four dealers take turns, one table relieved every {_duration(RELIEF_S / args.speed)}; "
          f"their logs are in {room.directory / 'logs'}; Ctrl-C stops the room)", flush=True)
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
