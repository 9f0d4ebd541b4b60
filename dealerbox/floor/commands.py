"""What ``dealerbox floor ...`` runs (cli.py only parses and calls these)."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from pathlib import Path

from .config import load_collector, load_table_floor

log = logging.getLogger(__name__)


def _wait_for_signal() -> None:
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    done.wait()


def collect(config: Path, *, ready=None) -> int:
    """Run the collector and its web view until SIGTERM/SIGINT."""
    from .collector import Collector
    from .store import Store
    from .web import FloorWeb

    settings = load_collector(config)
    settings.identity.check()
    with Store(settings.store) as store:
        collector = Collector(settings.identity, store)
        web = FloorWeb(collector, settings.web_host, settings.web_port)
        with collector, web:
            print(f"floor collector: store {settings.store}, view {web.url}", file=sys.stderr, flush=True)
            _wait_for_signal()
    return 0


def publish(config: Path, journal: Path) -> int:
    """Run a table's publisher on its own, outside the daemon, until SIGTERM/SIGINT."""
    from .publisher import Publisher

    settings = load_table_floor(config)
    if not settings.enabled:
        print(f"dealerbox floor publish: {config}: [floor] enabled is not true; nothing to do",
              file=sys.stderr)
        return 2
    settings.identity.check()
    with Publisher(settings, journal):
        print(f"floor publisher: table {settings.table}, journal {journal}", file=sys.stderr, flush=True)
        _wait_for_signal()
    return 0


def view(url: str) -> int:
    """The Textual floor view, fed by the collector's web server."""
    from .view import run_view
    return run_view(url)


def verify(store_path: Path) -> int:
    """Check every table's stored chain; exit 1 if a problem is found."""
    from .store import Store

    bad = 0
    with Store(store_path) as store:
        for row in store.tables():
            problems = store.verify(row["table_id"])
            for p in problems:
                print(f"{row['table_id']}: {p}")
            bad += bool(problems)
            if not problems:
                print(f"{row['table_id']}: {row['last_seq']} lines, chain ok")
    return 1 if bad else 0
