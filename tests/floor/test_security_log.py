"""The floor's security events reach systemd's journal as structured fields (issue 41):
the floor's own processes (``floor web``, ``floor collect``, ``floor user``) send them to
a real unix datagram socket standing in for the journal's, named by
``DEALERBOX_JOURNAL_SOCKET`` (never the host's). Every event of the manual's own table of
security events is made for real, in each case its rows tell apart, and checked field by
field against that table (issue 47: the failed password sign-ins lacked the ``VIA`` it
lists); a value with a newline goes in the protocol's length-prefixed form; without a
journal the same fields are one JSON line on stderr."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from dealerbox.floor.commands import command_line_user
from dealerbox.floor.operating.security_log import (EVENTS, IDENTIFIER, LOGGER, SOCKET_ENV, encode_entry, install,
                                                    security_event)
from dealerbox.link import protocol as P

from tests.floor.support import Client, broker, identity, pki, write_collector_config  # noqa: F401
from tests.floor.test_accounts import clear, open_alert
from tests.floor.web.test_app import PASSWORDS, WebProcess, add_users, call, sign_in


def parse_entry(data: bytes) -> dict[str, str]:
    """One datagram of the journal's native protocol as its fields, as journald reads it."""
    fields: dict[str, str] = {}
    i = 0
    while i < len(data):
        end = data.index(b"\n", i)
        line = data[i:end]
        if b"=" in line:
            key, value = line.split(b"=", 1)
            fields[key.decode()] = value.decode()
            i = end + 1
        else:  # KEY \n length (64-bit little-endian) value \n
            size = struct.unpack("<Q", data[end + 1:end + 9])[0]
            fields[line.decode()] = data[end + 9:end + 9 + size].decode()
            assert data[end + 9 + size:end + 10 + size] == b"\n"
            i = end + 10 + size
    return fields


class Journal:
    """A unix datagram socket where the journal's would be, and the entries it received."""

    def __init__(self, path):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.2)
        self.entries: list[dict[str, str]] = []

    def wait(self, event: str, timeout: float = 30.0, **fields) -> dict[str, str]:
        """The first entry of *event* whose ``DEALERBOX_<FIELD>`` are *fields*."""
        deadline = time.monotonic() + timeout
        while True:
            for entry in self.entries:
                if entry.get("DEALERBOX_EVENT") == event and all(
                        entry.get(f"DEALERBOX_{k.upper()}") == v for k, v in fields.items()):
                    return entry
            if time.monotonic() > deadline:
                raise AssertionError(f"no {event} {fields} in {[e.get('MESSAGE') for e in self.entries]}")
            try:
                self.entries.append(parse_entry(self.sock.recv(65536)))
            except TimeoutError:
                pass

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def journal(tmp_path, monkeypatch):
    j = Journal(tmp_path / "journal.socket")
    monkeypatch.setenv(SOCKET_ENV, j.path)  # the floor processes started here inherit it
    yield j
    j.close()


@pytest.fixture
def security_logger():
    """The test process's security logger, as it was before the test installed a handler."""
    logger = logging.getLogger(LOGGER)
    handlers, propagate, level = list(logger.handlers), logger.propagate, logger.level
    yield logger
    for h in logger.handlers:
        if h not in handlers:
            h.close()
    logger.handlers[:], logger.propagate = handlers, propagate
    logger.setLevel(level)


def _common(entry: dict[str, str], event: str, priority: str) -> None:
    assert entry["SYSLOG_IDENTIFIER"] == IDENTIFIER
    assert entry["MESSAGE_ID"] == EVENTS[event][0]
    assert entry["PRIORITY"] == priority and entry["SYSLOG_FACILITY"] == "10"
    assert entry["MESSAGE"] and "\n" not in entry["MESSAGE"]


def test_a_hostile_table_refused_by_the_collector_reaches_the_journal(journal, broker, pki, tmp_path):  # noqa: F811
    entry = refused_by_the_collector(journal, broker, pki, tmp_path)
    _common(entry, "table_refused", "4")
    assert entry["DEALERBOX_REASON"].startswith("journal message refused")
    assert int(entry["DEALERBOX_ALERT"]) >= 1 and int(entry["DEALERBOX_COUNT"]) >= 1


def test_a_value_with_a_newline_goes_in_the_length_prefixed_form(journal, security_logger):
    install(journal.path)
    security_event("alert_cleared", "floor web: sam cleared alert 7", user="sam", alert=7,
                   note="first line\nsecond line")
    entry = journal.wait("alert_cleared", alert="7")
    assert entry["DEALERBOX_NOTE"] == "first line\nsecond line"
    assert entry["CODE_FUNC"] == "test_a_value_with_a_newline_goes_in_the_length_prefixed_form"
    assert b"DEALERBOX_NOTE\n" + struct.pack("<Q", 22) + b"first line\nsecond line\n" in encode_entry(
        {"DEALERBOX_NOTE": "first line\nsecond line"})


def test_without_a_journal_each_event_is_one_json_line_on_stderr(tmp_path, security_logger):
    stream = io.StringIO()
    install(str(tmp_path / "no-journal-here.socket"), stream=stream)
    security_event("signin_failed", "floor web: failed sign-in for 'eve' from 10.0.0.9", user="eve",
                   address="10.0.0.9")
    security_event("signout", "floor web: sam signed out", user="sam", address=None)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert (first["SYSLOG_IDENTIFIER"], first["DEALERBOX_EVENT"], first["DEALERBOX_USER"],
            first["DEALERBOX_ADDRESS"], first["PRIORITY"]) == (IDENTIFIER, "signin_failed", "eve", "10.0.0.9", "4")
    assert "DEALERBOX_ADDRESS" not in second  # None is left out


def test_an_unknown_event_or_field_name_is_refused(security_logger):
    with pytest.raises(ValueError, match="unknown security event 'login'"):
        security_event("login", "someone")
    with pytest.raises(ValueError, match="no journal field name"):
        encode_entry({"lower": "x"})


def test_the_tests_floor_processes_never_use_the_hosts_journal():
    # tests/floor/conftest.py names a socket of no journal unless a test gives its own.
    assert os.environ[SOCKET_ENV] != "/run/systemd/journal/socket"


# -- every event and field as the manual's table lists them

#: The manual's page holding the table of security events (one place: the page may move).
SECURITY_EVENTS_DOC = Path(__file__).resolve().parents[2] / "docs" / "floor" / "security.md"
_FIELD = re.compile(r"`([A-Z][A-Z0-9_]*)`(?:\s*\(\s*(`[a-z_]+`(?:\s*(?:,|or)\s*`[a-z_]+`)*)\s*\))?")


@dataclass
class DocumentedEvent:
    """One row of the manual's table: its events, the fields each entry of them has (with the
    values a field may take, where the row names them) and its ``PRIORITY``."""
    events: tuple[str, ...]
    fields: dict[str, set[str] | None]
    priority: str

    def covers(self, entry: dict[str, str]) -> bool:
        """Whether *entry* is a case of this row: one of its events, with each value the row names."""
        return entry["DEALERBOX_EVENT"] in self.events and all(
            values is None or entry.get(f"DEALERBOX_{name}") in values for name, values in self.fields.items())


def documented_events(path: Path = SECURITY_EVENTS_DOC) -> list[DocumentedEvent]:
    """The table of security events in the manual, row by row (the one whose header names
    ``DEALERBOX_EVENT``)."""
    rows, in_table = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else None
        if cells is None:
            if in_table:
                break
            continue
        if cells[0] == "`DEALERBOX_EVENT`":
            in_table = True
            continue
        if not in_table or set(cells[0]) <= {"-", " ", ":"}:
            continue
        events = tuple(re.findall(r"`([a-z_]+)`", cells[0]))
        fields = {name: (set(re.findall(r"`([a-z_]+)`", values)) if values else None)
                  for name, values in _FIELD.findall(cells[2])}
        rows.append(DocumentedEvent(events, fields, cells[3]))
    assert rows, f"no table of security events in {path}"
    return rows


def test_the_manuals_table_is_read_as_written():
    rows = documented_events()
    assert [e for row in rows for e in row.events if e not in
            {e for earlier in rows[:rows.index(row)] for e in earlier.events}] == list(EVENTS)
    assert all(row.fields and row.priority in ("4", "6") for row in rows)


def test_every_event_the_manual_lists_has_every_field_it_lists(journal, broker, pki, tmp_path):  # noqa: F811
    """Each event of the manual's table made for real, each case its rows tell apart (a sign-in
    with a password and one named by the trusted proxy, a user changed on the web view and on
    the command line): every entry has exactly the fields its row lists, each with the value
    the test caused, and the row's ``PRIORITY``; the ``MESSAGE_ID`` follows the table's order."""
    store = tmp_path / "floor.sqlite"
    add_users(store)
    proxy = "127.0.0.2"
    # (event, the values the test caused, its entry), each taken from the socket as it comes:
    # a datagram socket queues only a few (net.unix.max_dgram_qlen), and the sender falls back
    # to stderr past them.
    want: list[tuple[str, dict[str, str], dict[str, str]]] = []

    def caused(event: str, values: dict[str, str]) -> None:
        want.append((event, values, journal.wait(event, **{k.lower(): v for k, v in values.items()})))
    with WebProcess(tmp_path, store, signin_limit_user=2, trusted_proxies=[proxy]) as web:
        for password in ("guessed password", "another guess"):
            assert call(web, "POST", "/api/session", {"user": "mallory", "password": password})[0] == 401
        caused("signin_failed", {"USER": "mallory", "ADDRESS": "127.0.0.1", "VIA": "password"})
        assert call(web, "POST", "/api/session", {"user": "mallory", "password": "third guess"})[0] == 429
        caused("signin_refused", {"USER": "mallory", "ADDRESS": "127.0.0.1"})
        assert int(want[-1][2]["DEALERBOX_RETRY_AFTER_S"]) > 0
        assert call(web, "POST", "/api/session", {"user": "sam", "password": "not sam's"})[0] == 401
        caused("signin_failed", {"USER": "sam", "ADDRESS": "127.0.0.1", "VIA": "password"})
        sam_cookie, sam_csrf = sign_in(web, "sam")
        caused("signin", {"USER": "sam", "ROLE": "supervisor", "ADDRESS": "127.0.0.1", "VIA": "password"})
        # Through the trusted proxy: a user of the floor, then a name that is none.
        forwarded = {"X-Remote-User": "vera", "X-Forwarded-For": "10.0.0.7"}
        assert call(web, "GET", "/api/floor", headers=forwarded, source=proxy)[0] == 200
        caused("signin", {"USER": "vera", "ROLE": "viewer", "ADDRESS": "10.0.0.7", "VIA": "proxy",
                                "PROXY": proxy})
        assert call(web, "GET", "/api/floor", headers={**forwarded, "X-Remote-User": "nobody"},
                    source=proxy)[0] == 403
        caused("signin_failed", {"USER": "nobody", "ADDRESS": "10.0.0.7", "VIA": "proxy", "PROXY": proxy})
        alert_id = open_alert(web)
        assert clear(web, alert_id, sam_cookie, sam_csrf, body={"note": "cards counted"})[0] == 200
        caused("alert_cleared", {"USER": "sam", "ALERT": str(alert_id), "TABLE": "T02", "KIND": "floor",
                                       "NOTE": "cards counted"})
        assert call(web, "DELETE", "/api/session", cookie=sam_cookie, headers={"X-CSRF-Token": sam_csrf})[0] == 204
        caused("signout", {"USER": "sam", "ROLE": "supervisor", "ADDRESS": "127.0.0.1"})
        ada_cookie, ada_csrf = sign_in(web, "ada")
        caused("signin", {"USER": "ada", "ROLE": "admin", "ADDRESS": "127.0.0.1", "VIA": "password"})
        assert call(web, "POST", "/api/users", {"name": "kim", "role": "viewer", "password": "kim's long password"},
                    cookie=ada_cookie, headers={"X-CSRF-Token": ada_csrf})[0] == 201
        caused("user_added", {"USER": "kim", "ROLE": "viewer", "BY": "ada"})
        assert call(web, "DELETE", "/api/users/kim", cookie=ada_cookie, headers={"X-CSRF-Token": ada_csrf})[0] == 204
        caused("user_removed", {"USER": "kim", "BY": "ada"})
        # The command line's changes name who ran it.
        for args, stdin in ((["add", "lee", "--role", "viewer"], "lee's long password\n"),
                            (["passwd", "lee"], "a brand new password\n"), (["remove", "lee"], "")):
            done = subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", "user", *args,
                                   "--config", str(web.config)], input=stdin, capture_output=True, text=True,
                                  timeout=60)
            assert done.returncode == 0, done.stderr
        by = f"{command_line_user()} (command line)"
        caused("user_added", {"USER": "lee", "ROLE": "viewer", "BY": by})
        caused("password_changed", {"USER": "lee", "BY": by})
        caused("user_removed", {"USER": "lee", "BY": by})
    # A table whose message the collector refuses.
    entry = refused_by_the_collector(journal, broker, pki, tmp_path)
    caused("table_refused", {"TABLE": "T02", "ALERT": entry["DEALERBOX_ALERT"], "COUNT": "1",
                                   "REASON": entry["DEALERBOX_REASON"]})
    assert entry["DEALERBOX_REASON"].startswith("journal message refused")

    rows = documented_events()
    order = [e for row in rows for e in row.events]
    order = sorted(set(order), key=order.index)
    covered: set[int] = set()
    for event, values, entry in want:
        (row,) = [i for i, r in enumerate(rows) if r.covers(entry)] or [None]
        assert row is not None, f"no row of the manual's table for {event} {values}"
        covered.add(row)
        got = {k[len("DEALERBOX_"):]: v for k, v in entry.items() if k.startswith("DEALERBOX_") and k != "DEALERBOX_EVENT"}
        documented = rows[row].fields
        assert set(got) == set(documented), (event, values, sorted(got), sorted(documented))
        for name in documented:
            assert got[name] == values.get(name, got[name]) and got[name] != "", (event, name, got[name])
        assert set(values) <= set(documented), (event, values)
        assert entry["PRIORITY"] == rows[row].priority, (event, entry["PRIORITY"])
        assert entry["MESSAGE_ID"] == EVENTS[event][0] == f"6f1b2c7e9a3d4e0f8b21c5d7a9e3f{101 + order.index(event)}"
        _common(entry, event, rows[row].priority)
    assert covered == set(range(len(rows))), [rows[i].events for i in set(range(len(rows))) - covered]
    for secret in ("guessed password", "another guess", "kim's long password", "lee's long password",
                   PASSWORDS["sam"], PASSWORDS["ada"]):
        assert secret not in json.dumps(journal.entries)
    # One entry per event: nothing was sent twice (mallory failed twice; a table's refusals are
    # told at most every 10 s, however many).
    keys = [(e["DEALERBOX_EVENT"], e.get("DEALERBOX_USER")) for e in journal.entries
            if e["DEALERBOX_EVENT"] != "table_refused"]
    assert len(keys) == len(set(keys)) + 1, keys


def refused_by_the_collector(journal: Journal, broker, pki, tmp_path) -> dict[str, str]:  # noqa: F811
    """The ``table_refused`` entry of a real collector that table T02 sends garbage to, through
    mosquitto, until the collector has subscribed."""
    config = write_collector_config(tmp_path / "floor.toml", pki, broker, tmp_path / "floor.sqlite")
    proc = subprocess.Popen([sys.executable, "-m", "dealerbox.cli", "floor", "collect", "--config", str(config)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        hostile = Client(identity(pki, broker, "T02"), "T02")
        assert hostile.connect(broker.port)
        deadline = time.monotonic() + 30
        entry = None
        while entry is None:
            # Until the collector has subscribed, a message goes nowhere: send again.
            hostile.client.publish(P.journal_topic("T02"), b"{not json at all", qos=1).wait_for_publish(10)
            try:
                entry = journal.wait("table_refused", timeout=1.0, table="T02")
            except AssertionError:
                assert time.monotonic() < deadline and proc.poll() is None, "no table_refused from the collector"
        hostile.client.disconnect()
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "DEALERBOX_EVENT" not in err  # the journal took it: no fallback line on stderr
    return entry
