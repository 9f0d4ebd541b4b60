"""What ``dealerbox floor ...`` runs (cli.py only parses and calls these)."""

from __future__ import annotations

import getpass
import logging
import signal
import sys
import threading
import time
from pathlib import Path

from . import FloorError
from .config import load_collector, load_table_floor, load_web

log = logging.getLogger(__name__)


def _wait_for_signal(*also: threading.Event) -> None:
    """Wait for SIGTERM/SIGINT, or for any of *also* to be set."""
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    for event in also:
        threading.Thread(target=lambda e=event: (e.wait(), done.set()), daemon=True).start()
    done.wait()


def collect(config: Path, *, ready=None) -> int:
    """Run the collector until SIGTERM/SIGINT (the web view is ``floor web``, a process of its own)."""
    from .collector import Collector
    from .store import Store

    settings = load_collector(config)
    settings.identity.check()
    with Store(settings.store) as store:
        collector = Collector(settings.identity, store, limits=settings.limits)
        with collector:
            print(f"floor collector: store {settings.store}", file=sys.stderr, flush=True)
            _wait_for_signal(collector.failed)
    if collector.failed.is_set():
        print(f"floor collector: {collector.failure}", file=sys.stderr, flush=True)
        return 1
    return 0


def _floor_extra(module: str = "web"):
    """``dealerbox.floor.<module>``, or one line saying which extra to install."""
    import importlib
    try:
        return importlib.import_module(f"{__package__}.{module}")
    except ImportError as exc:
        raise FloorError(f"the floor web view needs the 'floor' extra ({exc.name} is missing): "
                         "pip install 'dealerbox[floor]'") from None


def web(config: Path) -> int:
    """Serve the floor view until SIGTERM/SIGINT."""
    settings = load_web(config)
    serve = _floor_extra().serve
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    return serve(settings, ready=lambda url: print(f"floor web: store {settings.store}, view {url}",
                                                   file=sys.stderr, flush=True))


def _new_password(name: str) -> str:
    """From a prompt (twice) on a terminal, else the first line of stdin; never argv."""
    if sys.stdin.isatty():
        first = getpass.getpass(f"password for {name}: ")
        if getpass.getpass("again: ") != first:
            raise FloorError("the two passwords differ")
        return first
    line = sys.stdin.readline()
    return line[:-1] if line.endswith("\n") else line


def user(config: Path, action: str, name: str | None = None, role: str | None = None) -> int:
    """``floor user add|remove|passwd|list``: the web view's users, in the store."""
    _floor_extra("accounts")  # argon2-cffi, or one line saying what to install
    from .accounts import AccountError, Accounts, check_name, check_role
    from .store import Store

    settings = load_web(config)
    with Store(settings.store) as store:
        accounts = Accounts(store)
        try:
            if action == "list":
                for u in accounts.list():
                    since = time.strftime("%Y-%m-%d %H:%M", time.localtime(u["changed"]))
                    print(f"{u['name']}\t{u['role']}\tpassword set {since}\t{u['sessions']} session(s)")
            elif action == "add":
                check_name(name), check_role(role)
                if store.user(name) is not None:
                    raise AccountError(f"user {name!r} exists already (remove it first, or passwd)")
                accounts.add(name, role, _new_password(name))
                print(f"added {name} ({role})", file=sys.stderr)
            elif action == "passwd":
                if store.user(name) is None:
                    raise AccountError(f"no user {name!r}")
                accounts.passwd(name, _new_password(name))
                print(f"new password for {name}; their sessions ended", file=sys.stderr)
            elif action == "remove":
                accounts.remove(name)
                print(f"removed {name}; their sessions ended", file=sys.stderr)
        except AccountError as exc:
            print(f"dealerbox floor user {action}: {exc}", file=sys.stderr)
            return 2
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


def view(url: str, user_name: str | None = None, cafile: Path | None = None) -> int:
    """The Textual floor view, signed in to the web view."""
    from .view import run_view
    return run_view(url, user_name, cafile)


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
