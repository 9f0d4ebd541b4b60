"""The floor's security events reach systemd's journal as structured fields (issue 41):
the floor's own processes (``floor web``, ``floor collect``, ``floor user``) send them to
a real unix datagram socket standing in for the journal's, named by
``DEALERBOX_JOURNAL_SOCKET`` (never the host's); each kind is checked field by field, a
value with a newline in the protocol's length-prefixed form; without a journal the same
fields are one JSON line on stderr."""

from __future__ import annotations

import io
import json
import logging
import os
import socket
import struct
import subprocess
import sys
import time

import pytest

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


def test_the_web_views_sign_ins_sign_outs_clears_and_user_changes_reach_the_journal(journal, tmp_path):
    store = tmp_path / "floor.sqlite"
    add_users(store)
    with WebProcess(tmp_path, store, signin_limit_user=2) as web:
        # A failed sign-in, twice, then refused: too many failures.
        for _ in range(2):
            assert call(web, "POST", "/api/session", {"user": "mallory", "password": "guessed password"})[0] == 401
        failed = journal.wait("signin_failed", user="mallory")
        _common(failed, "signin_failed", "4")
        assert failed["DEALERBOX_ADDRESS"] == "127.0.0.1" and "guessed" not in json.dumps(failed)
        assert call(web, "POST", "/api/session", {"user": "mallory", "password": "guessed password"})[0] == 429
        refused = journal.wait("signin_refused", user="mallory")
        _common(refused, "signin_refused", "4")
        assert int(refused["DEALERBOX_RETRY_AFTER_S"]) > 0
        # A sign-in: who, their role, from where, how.
        sam_cookie, sam_csrf = sign_in(web, "sam")
        signin = journal.wait("signin", user="sam")
        _common(signin, "signin", "6")
        assert (signin["DEALERBOX_ROLE"], signin["DEALERBOX_ADDRESS"], signin["DEALERBOX_VIA"]) == \
            ("supervisor", "127.0.0.1", "password")
        assert PASSWORDS["sam"] not in json.dumps(journal.entries)
        # A clear names the supervisor, the alert, its table and the note.
        alert_id = open_alert(web)
        assert clear(web, alert_id, sam_cookie, sam_csrf, body={"note": "cards counted"})[0] == 200
        cleared = journal.wait("alert_cleared", alert=str(alert_id))
        _common(cleared, "alert_cleared", "6")
        assert (cleared["DEALERBOX_USER"], cleared["DEALERBOX_TABLE"], cleared["DEALERBOX_KIND"],
                cleared["DEALERBOX_NOTE"]) == ("sam", "T02", "floor", "cards counted")
        # A sign-out.
        assert call(web, "DELETE", "/api/session", cookie=sam_cookie, headers={"X-CSRF-Token": sam_csrf})[0] == 204
        _common(journal.wait("signout", user="sam"), "signout", "6")
        # An admin adds and removes a user: both name the admin.
        ada_cookie, ada_csrf = sign_in(web, "ada")
        status, _h, _b = call(web, "POST", "/api/users", {"name": "kim", "role": "viewer",
                                                          "password": "kim's long password"},
                              cookie=ada_cookie, headers={"X-CSRF-Token": ada_csrf})
        assert status == 201
        added = journal.wait("user_added", user="kim")
        _common(added, "user_added", "4")
        assert (added["DEALERBOX_ROLE"], added["DEALERBOX_BY"]) == ("viewer", "ada")
        assert "kim's long password" not in json.dumps(journal.entries)
        assert call(web, "DELETE", "/api/users/kim", cookie=ada_cookie, headers={"X-CSRF-Token": ada_csrf})[0] == 204
        assert journal.wait("user_removed", user="kim")["DEALERBOX_BY"] == "ada"
        # The command line's password change names who ran it.
        result = subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", "user", "passwd", "vera",
                                 "--config", str(web.config)], input="a brand new password\n",
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        changed = journal.wait("password_changed", user="vera")
        _common(changed, "password_changed", "4")
        assert changed["DEALERBOX_BY"].endswith("(command line)")
    # One entry per event: nothing was sent twice.
    keys = [(e["DEALERBOX_EVENT"], e.get("DEALERBOX_USER")) for e in journal.entries]
    assert len(keys) == len(set(keys)) + 1, keys  # mallory failed twice


def test_a_hostile_table_refused_by_the_collector_reaches_the_journal(journal, broker, pki, tmp_path):
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
        _common(entry, "table_refused", "4")
        assert entry["DEALERBOX_REASON"].startswith("journal message refused")
        assert int(entry["DEALERBOX_ALERT"]) >= 1 and int(entry["DEALERBOX_COUNT"]) >= 1
        hostile.client.disconnect()
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    # The journal took it: no fallback line on stderr.
    assert "DEALERBOX_EVENT" not in err


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
