"""The room's registry in the store, on SQLite and PostgreSQL: a deck's whole life, first
registration wins, badges, the registry pass filing the tables' registry events and each
deck's hands, and a deck past the house's limit raising one alert."""

from __future__ import annotations

import csv
import io
import time
import uuid

import pytest

from dealerbox.domain.decks import deck_name_refusal
from dealerbox.errors import ConfigError
from dealerbox.floor.collecting.registry_pass import RegistryPass
from dealerbox.floor.collecting.registry_publish import RegistryPublisher
from dealerbox.floor.operating.settings import load_collector, load_registry
from dealerbox.floor.store import Store
from dealerbox.floor.store.registry import (ALERT_KIND_CONFLICT, ALERT_KIND_LIMIT, DeckLimits, RegistryRefused,
                                           check_deck_name)
from dealerbox.floor.telling import card_log as L
from dealerbox.floor.telling.language import Language
from dealerbox.link import protocol as P
from tests.floor.registry_support import TableJournal, deck_tags, file_journal

T0 = time.time() - 4 * 3600


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    """A new store on each backend: an SQLite file, a fresh PostgreSQL database."""
    if request.param == "sqlite":
        target = tmp_path / "floor.sqlite"
    else:
        target = request.getfixturevalue("postgres_cluster").database(f"floor_{uuid.uuid4().hex[:12]}")
    with Store(target) as opened:
        yield opened


def steps(store, deck):
    return [s["step"] for s in store.registry_steps(deck=deck)]


def test_a_deck_from_delivery_to_destruction(store):
    red = deck_tags("Red 7")
    assert store.registry_version() == 0
    store.receive_deck("Red 7", "red", 54, "ann", now=T0)
    assert store.registry_version() == 0   # nothing the tables are sent yet
    store.register_deck("Red 7", "red", red, "ann", now=T0 + 60)
    version, fingerprint, payload = store.registry_payload()
    sent = P.parse_registry(payload)
    assert version == sent.version == 1 and sent.fingerprint == fingerprint
    assert sent.decks["Red 7"][1] == red and not sent.retired
    # The same deck again changes nothing; one of its tags in another deck is refused with what it is.
    store.register_deck("Red 7", "red", red, "bob")
    assert store.registry_version() == 1
    uid, card = next(iter(red.items()))
    with pytest.raises(RegistryRefused, match=f"tag {uid} is already registered as {card} of deck Red 7"):
        store.register_deck("Blue 1", "blue", {uid: card}, "bob")
    assert store.deck("Blue 1") is None and store.registry_version() == 1
    with pytest.raises(RegistryRefused, match="retire it first"):
        store.destroy_deck("Red 7", "ann", "bob")
    store.retire_deck("Red 7", "ann", "a corner bent on the seven of clubs", now=T0 + 3600)
    sent = P.parse_registry(store.registry_payload()[2])
    # Its cards stay in the registry beside their retirement: a table that never had it names them.
    assert sent.version == 2 and sent.decks["Red 7"][1] == red and sent.retired == frozenset(red)
    with pytest.raises(RegistryRefused, match="witness their own"):
        store.destroy_deck("Red 7", "ann", "Ann")
    store.destroy_deck("Red 7", "ann", "bob", now=T0 + 7200)
    deck = store.deck("Red 7")
    assert (deck["state"], deck["destroyed_by"], deck["destroyed_witness"]) == ("destroyed", "ann", "bob")
    assert steps(store, "Red 7") == ["received", "registered", "retired", "destroyed"]
    with pytest.raises(RegistryRefused, match="never registered again"):
        store.register_deck("Red 7", "red", red, "ann")
    assert [a["action"] for a in store.audit()] == ["deck_receive", "deck_register", "deck_retire", "deck_destroy"]
    assert all(a["who"] == "ann" for a in store.audit())


def test_badges_registered_once_and_revoked(store):
    store.register_badge("08a1b2c3", "1042", "ann")
    with pytest.raises(RegistryRefused, match="registered to dealer 1042 already"):
        store.register_badge("08A1B2C3", "2077", "ann")
    red = deck_tags("Red 7")
    store.register_deck("Red 7", "red", red, "ann")
    with pytest.raises(RegistryRefused, match="of deck Red 7"):
        store.register_badge(next(iter(red)), "2077", "ann")
    with pytest.raises(RegistryRefused, match="dealer 1042's badge"):
        store.register_deck("Odd", "", {"08A1B2C3": "Ah"}, "ann")
    sent = P.parse_registry(store.registry_payload()[2])
    assert sent.badges == {"08A1B2C3": "1042"} and not sent.revoked
    store.revoke_badge("08A1B2C3", "ann", "the dealer left")
    sent = P.parse_registry(store.registry_payload()[2])
    assert not sent.badges and sent.revoked == frozenset({"08A1B2C3"})
    with pytest.raises(RegistryRefused, match="revoked"):
        store.register_badge("08A1B2C3", "1042", "ann")


def test_the_pass_files_a_tables_registrations_checks_and_hands(store):
    red, blue = deck_tags("Red 7"), deck_tags("Blue 1")
    t01, t02 = TableJournal("T01"), TableJournal("T02")
    t01.add(T0, "deck_registered", deck="Red 7", back="red", tags=red)
    t01.add(T0 + 1, "badge_registered", uid="04A1B2C3D4E5F6", dealer="2077")
    t01.add(T0 + 2, "deck_checked", deck="Red 7", missing=["Qs"], damaged=[], ok=False)
    t01.add(T0 + 3, "registry_applied", version=1, fingerprint="0" * 64)
    first = t01.hand(T0 + 10, red, deck="Red 7")
    # T02 registers Blue 1 with one of Red 7's tags: refused, an alert naming both.
    stolen = dict(list(blue.items())[:-1]) | {next(iter(red)): "Ah"}
    t02.add(T0 + 20, "deck_registered", deck="Blue 1", back="blue", tags=stolen)
    t02.hand(T0 + 200, red, by_uid=True)      # Red 7's cards by their tags, at T02
    file_journal(store, t01)
    file_journal(store, t02)
    registry = RegistryPass(store)
    alerts = registry.catch_up()
    assert [a["kind"] for a in alerts] == [ALERT_KIND_CONFLICT]
    assert alerts[0]["table"] == "T02" and "Blue 1" in alerts[0]["text"] and "deck Red 7" in alerts[0]["text"]
    assert store.deck("Blue 1") is None
    deck = store.deck("Red 7")
    assert deck["state"] == "in_play" and deck["first_play_table"] == "T01" and deck["hands"] == 2
    assert deck["registered_by"] == "a technician at T01"
    assert [t["table"] for t in store.deck_tables("Red 7")] == ["T01", "T02"]
    assert [h["start_seq"] for h in store.deck_hands("Red 7")][0] == first
    assert steps(store, "Red 7") == ["registered", "checked", "in_play"]
    checked = [s for s in store.registry_steps(deck="Red 7") if s["step"] == "checked"][0]
    assert checked["detail"] == {"missing": ["Qs"], "damaged": [], "ok": False} and checked["table_id"] == "T01"
    assert P.parse_registry(store.registry_payload()[2]).badges == {"04A1B2C3D4E5F6": "2077"}
    # Filed once: the pass again, and another pass (another collector), file nothing more.
    assert registry.catch_up() == [] and RegistryPass(store).catch_up() == []
    assert store.deck("Red 7")["hands"] == 2 and len(store.alerts()) == 1
    assert len(store.registry_steps()) == len(set((s["table_id"], s["seq"], s["step"])
                                                  for s in store.registry_steps()))


def test_a_deck_past_its_limit_raises_one_alert(store):
    red = deck_tags("Red 7")
    store.register_deck("Red 7", "red", red, "ann", now=T0)
    t01 = TableJournal("T01")
    registry = RegistryPass(store, DeckLimits(hands=3))
    for i in range(3):
        t01.hand(T0 + 100 * i, red, deck="Red 7")
    file_journal(store, t01)
    assert registry.catch_up() == []   # at the limit, not past it: no false alarm
    filed = len(t01.lines)
    for i in range(3, 8):
        t01.hand(T0 + 100 * i, red, deck="Red 7")
    file_journal(store, t01, filed)
    alerts = registry.catch_up()
    assert [a["kind"] for a in alerts] == [ALERT_KIND_LIMIT]
    assert "Red 7" in alerts[0]["text"] and "4 hands (limit 3)" in alerts[0]["text"]
    assert [a["kind"] for a in store.alerts()] == [ALERT_KIND_LIMIT] and store.alerts()[0]["count"] == 1
    assert steps(store, "Red 7").count("limit") == 1


def test_a_deck_given_a_higher_limit_alerts_again_when_it_passes_that(store):
    red = deck_tags("Red 7")
    store.register_deck("Red 7", "red", red, "ann", now=T0)
    store.set_deck_limit("Red 7", None, 2, "ann")
    t01 = TableJournal("T01")
    registry = RegistryPass(store)
    for i in range(3):
        t01.hand(T0 + 100 * i, red, deck="Red 7")
    file_journal(store, t01)
    assert [a["kind"] for a in registry.catch_up()] == [ALERT_KIND_LIMIT]
    store.set_deck_limit("Red 7", None, 5, "ann")   # the house lets it deal on
    filed = len(t01.lines)
    for i in range(3, 5):
        t01.hand(T0 + 100 * i, red, deck="Red 7")
    file_journal(store, t01, filed)
    assert registry.catch_up() == []   # five hands: at its new limit, not past it
    filed = len(t01.lines)
    t01.hand(T0 + 600, red, deck="Red 7")
    file_journal(store, t01, filed)
    alerts = registry.catch_up()
    assert [a["kind"] for a in alerts] == [ALERT_KIND_LIMIT] and "6 hands (limit 5)" in alerts[0]["last_text"]
    assert steps(store, "Red 7").count("limit") == 2


def test_a_deck_name_with_a_slash_is_refused(store):
    with pytest.raises(RegistryRefused, match="printable characters, no '/', not 'Red/7'"):
        store.receive_deck("Red/7", "red", 54, "ann")
    with pytest.raises(RegistryRefused, match="printable characters, no '/', not 'Red/7'"):
        store.register_deck("Red/7", "red", deck_tags("Red/7"), "ann")
    assert store.decks() == [] and store.registry_version() == 0


def test_one_tables_lines_the_store_refuses_leave_the_other_tables_filed(store):
    red = deck_tags("Red 7")
    t01, t02 = TableJournal("T01"), TableJournal("T02")
    t01.add(T0, "badge_registered", uid="08A1B2C3", dealer="1042")
    t02.add(T0, "deck_registered", deck="Red 7", back="red", tags=red)
    file_journal(store, t01)
    file_journal(store, t02)
    registry = RegistryPass(store)
    filed = store.file_registry_part

    def refusing(table, *args):
        if table == "T01":
            raise RuntimeError("the store refused T01's lines")
        return filed(table, *args)
    store.file_registry_part = refusing
    assert registry.catch_up() == [] and registry.catch_up() == []
    assert store.deck("Red 7")["registered_by"] == "a technician at T02" and store.badges() == []
    assert set(registry.failing) == {"T01"}
    store.file_registry_part = filed   # T01's lines are filed once the store takes them
    registry.catch_up()
    assert [b["uid"] for b in store.badges()] == ["08A1B2C3"] and registry.failing == {}


def test_a_decks_own_limit_in_hours_comes_before_the_houses(store):
    red = deck_tags("Red 7")
    store.register_deck("Red 7", "red", red, "ann", now=T0)
    store.set_deck_limit("Red 7", 0.05, None, "ann")   # three minutes
    t01 = TableJournal("T01")
    for i in range(3):
        t01.hand(T0 + 90 * i, red, deck="Red 7", seconds=60)   # 30 s pauses count as play
    file_journal(store, t01)
    alerts = RegistryPass(store, DeckLimits(hands=1000)).catch_up()
    assert [a["kind"] for a in alerts] == [ALERT_KIND_LIMIT] and "hours in play (limit 0.05)" in alerts[0]["text"]


def test_registry_section_of_floor_toml(tmp_path):
    path = tmp_path / "floor.toml"
    path.write_text("[registry]\ndeck_hours = 8\ndeck_hands = 400\n")
    assert load_registry(path) == DeckLimits(8.0, 400)
    for body, key in (('deck_hours = "8"', "registry.deck_hours"), ("deck_hands = 0", "registry.deck_hands"),
                      ("deck_hand = 3", "registry.deck_hand")):
        path.write_text(f"[registry]\n{body}\n")
        with pytest.raises(ConfigError, match=key) as caught:
            load_registry(path)
        assert str(path) in str(caught.value)
    path.write_text("")
    assert load_registry(path) == DeckLimits()
    broker = '[broker]\nca = "ca.crt"\ncert = "c.crt"\nkey = "c.key"\n[store]\npath = "floor.sqlite"\n'
    path.write_text(broker)
    assert load_collector(path).registry_publish is True
    path.write_text(broker + "[registry]\npublish = false\ndeck_hands = 500\n")
    settings = load_collector(path)
    assert settings.registry_publish is False and settings.registry == DeckLimits(None, 500)
    # A group's floor (it watches the properties' bridges) sends no registry unless told to.
    path.write_text(broker + "[bridges]\nblind_alert_s = 120\n")
    assert load_collector(path).registry_publish is False
    path.write_text(broker + "[bridges]\n[registry]\npublish = true\n")
    assert load_collector(path).registry_publish is True
    path.write_text(broker + '[registry]\npublish = "no"\n')
    with pytest.raises(ConfigError, match="registry.publish"):
        load_collector(path)
    with pytest.raises(ConfigError, match="registry"):
        load_collector(path.with_name("missing.toml"))


def test_the_floor_deck_and_badge_commands(tmp_path):
    import getpass
    import subprocess
    import sys

    from dealerbox.domain.decks import DeckRegistry

    config = tmp_path / "floor.toml"
    config.write_text(f'[store]\npath = "{tmp_path / "floor.sqlite"}"\n')
    local = DeckRegistry()
    for uid, card in deck_tags("R").items():
        local.add(uid, "R", card)
    local.backs["R"] = "red"
    local.save(tmp_path / "decks.toml")

    def floor(*args):
        return subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", *args, "--config", str(config)],
                              capture_output=True, text=True, timeout=120)
    assert floor("deck", "receive", "Red 7", "--back", "red", "--count", "54").returncode == 0
    added = floor("deck", "add", "Red 7", "--from", str(tmp_path / "decks.toml"), "--deck", "R")
    assert added.returncode == 0 and "54 tags registered" in added.stderr
    again = floor("deck", "add", "Blue", "--from", str(tmp_path / "decks.toml"), "--deck", "R")
    assert again.returncode != 0 and "dealerbox floor deck add: tag" in again.stderr and "of deck Red 7" in again.stderr
    missing = floor("deck", "add", "Blue", "--from", str(tmp_path / "decks.toml"))
    assert missing.returncode != 0 and "has no deck 'Blue'" in missing.stderr
    assert "Red 7\tregistered\tback red\t54 tags" in floor("deck", "list").stdout
    assert floor("deck", "limit", "Red 7", "--hands", "300").returncode == 0
    issued = floor("deck", "issue", "Red 7", "--table", "T02", "--witness", "Bob Witness")
    assert issued.returncode == 0 and "deck Red 7 issued to T02" in issued.stderr
    assert floor("deck", "list").stdout.rstrip("\n").endswith("never dealt\tissued to T02")
    assert floor("deck", "retire", "Red 7", "--why", "a bent corner").returncode == 0
    out = floor("deck", "issue", "Red 7", "--table", "T03")
    assert out.returncode != 0 and "dealerbox floor deck issue: deck Red 7 is retired" in out.stderr
    own = floor("deck", "destroy", "Red 7", "--witness", getpass.getuser())
    assert own.returncode != 0 and "cannot witness their own" in own.stderr
    assert floor("deck", "destroy", "Red 7", "--witness", "Bob Witness").returncode == 0
    assert floor("badge", "add", "08a1b2c3", "1042").returncode == 0
    assert floor("badge", "revoke", "08A1B2C3", "--why", "left the casino").returncode == 0
    assert "08A1B2C3\tdealer 1042\trevoked by" in floor("badge", "list").stdout
    log = list(csv.DictReader(io.StringIO(floor("deck", "log", "Red 7").stdout)))
    assert [row["what"].split(":")[0] for row in log] == [
        "Received sealed", "Registered", "Its own limit", "Issued to T02", "Retired", "Destroyed"]
    assert (log[3]["table"], log[3]["witness"]) == ("T02", "Bob Witness")
    assert (log[-1]["person"], log[-1]["witness"]) == (getpass.getuser(), "Bob Witness")
    pdf, html = tmp_path / "log.pdf", tmp_path / "log.html"
    assert floor("deck", "log", "--pdf", str(pdf)).returncode == 0 and pdf.read_bytes().startswith(b"%PDF")
    assert floor("deck", "log", "Red 7", "--html", str(html), "--base-url", "https://floor.example").returncode == 0
    page = html.read_text()
    assert "Card control log: deck Red 7" in page and "Bob Witness" in page and "<script" not in page
    with Store(tmp_path / "floor.sqlite") as store:
        assert {a["who"] for a in store.audit()} == {getpass.getuser()}
        assert P.parse_registry(store.registry_payload()[2]).revoked == frozenset({"08A1B2C3"})


def test_a_tables_garbage_is_refused_for_it_alone_and_the_same_deck_twice_is_no_alarm(store):
    red = deck_tags("Red 7")
    t01, t02 = TableJournal("T01"), TableJournal("T02")
    t01.add(T0, "deck_registered", deck="Red 7", back="red", tags=red)
    # The same deck registered again at another table (moved there, registered anew): nothing to say.
    t02.add(T0 + 5, "deck_registered", deck="Red 7", back="red", tags=red)
    t02.add(T0 + 6, "badge_registered", uid="08A1B2C3", dealer="1042")
    t01.add(T0 + 7, "badge_registered", uid="08a1b2c3", dealer="1042")
    # Garbage: refused one by one, each named; the lines after them are filed all the same.
    t02.add(T0 + 10, "deck_registered", deck="Odd", back="x", tags="not a table")
    t02.add(T0 + 11, "deck_registered", deck=7, back="x", tags={"zz": "Ah"})
    t02.add(T0 + 12, "badge_registered", uid=[1, 2], dealer="1042")
    t02.add(T0 + 13, "badge_registered", uid="08A1B2C3", dealer="not an id at all")
    t02.add(T0 + 14, "deck_checked", deck=None, missing="everything", damaged=None, ok="yes")
    t02.add(T0 + 15, "registry_applied", version="seven", fingerprint=None)
    # Strings PostgreSQL's text cannot hold (a NUL, a lone surrogate), where the table names a deck or badge.
    for i, bad in enumerate(("\u0000", "\ud800", "R\u00007", "Red\ud800")):
        t02.add(T0 + 16 + i / 10, "deck_checked", deck=bad, missing=[bad], damaged=[bad], ok=False)
        t02.add(T0 + 16 + i / 10, "registry_applied", version=bad, fingerprint=bad)
    t02.add(T0 + 17, "deck_registered", deck="\u0000", back="x", tags={"zz": "Ah"})
    t02.add(T0 + 17, "deck_registered", deck="Odd\ud800", back="x", tags=deck_tags("Odd"))
    t02.add(T0 + 17, "badge_registered", uid="\ud800", dealer="1042")
    t02.hand(T0 + 18, deck_tags("Odd"), deck="Odd\ud800")   # a hand of the deck refused: counts for none
    t02.add(T0 + 19, "deck_registered", deck="Red/7", back="red", tags=deck_tags("Red/7"))
    t02.hand(T0 + 20, red, by_uid=True)
    # A deck refused for one stolen tag: its other tags' hands count for no deck.
    blue = deck_tags("Blue 1")
    stolen = dict(list(blue.items())[1:]) | {next(iter(red)): "Ah"}
    t02.add(T0 + 30, "deck_registered", deck="Blue 1", back="blue", tags=stolen)
    t02.hand(T0 + 40, dict(list(blue.items())[1:]), by_uid=True)
    file_journal(store, t01)
    file_journal(store, t02)
    registry = RegistryPass(store)
    alerts = registry.catch_up()
    assert registry.failing == {}
    assert [a["table"] for a in alerts] == ["T02"] * 9 and {a["kind"] for a in alerts} == {ALERT_KIND_CONFLICT}
    assert {a["table"] for a in store.alerts()} == {"T02"}
    assert [d["name"] for d in store.decks()] == ["Red 7"] and store.deck("Red 7")["hands"] == 1
    assert store.deck("Red 7")["registered_by"] == "a technician at T01"
    assert [b["dealer"] for b in store.badges()] == ["1042"]
    refused = [s for s in store.registry_steps() if s["step"] == "refused"]
    assert len(refused) == 9 and all(s["table_id"] == "T02" for s in refused)
    assert any("printable characters, no '/'" in s["detail"]["why"] for s in refused)
    # The checks of decks named with what no deck's name holds are kept, naming no deck.
    checks = [s for s in store.registry_steps() if s["step"] == "checked" and s["table_id"] == "T02"]
    assert len(checks) == 5 and all(s["deck"] is None for s in checks)
    assert [s["detail"].get("named") for s in checks[1:]] == ["\u0000", "\ud800", "R\u00007", "Red\ud800"]
    assert store.deck_hands("Blue 1") == []
    assert P.parse_registry(store.registry_payload()[2]).version == 2


def test_a_deck_issued_to_a_table_moves_with_its_next_issue(store):
    red = deck_tags("Red 7")
    store.receive_deck("Blue 1", "blue", 54, "ann", now=T0)
    with pytest.raises(RegistryRefused, match="register its tags before it is issued"):
        store.issue_deck("Blue 1", "T01", "ann")
    with pytest.raises(RegistryRefused, match="no deck Green in the registry"):
        store.issue_deck("Green", "T01", "ann")
    store.register_deck("Red 7", "red", red, "ann", now=T0 + 60)

    def sent(table):
        return P.parse_registry(store.registry_payload(table)[2])
    assert not sent("T01").issues_active and "active" not in P.decode(store.registry_payload("T01")[2])
    version = store.registry_version()
    deck = store.issue_deck("Red 7", "T01", "ann", "Bob", now=T0 + 120)
    assert deck["issued_to"] == "T01" and store.registry_version() == version + 1
    assert sent("T01").active == "Red 7" and not sent("T02").issues_active
    with pytest.raises(RegistryRefused, match="issued to T01 already"):
        store.issue_deck("Red 7", "T01", "ann")
    with pytest.raises(RegistryRefused, match="witness their own issue"):
        store.issue_deck("Red 7", "T02", "ann", "ANN")
    with pytest.raises(RegistryRefused, match="a table's id"):
        store.issue_deck("Red 7", "T 2", "ann")
    # Issued to T02: moved, T01 is left with no deck of the floor's (its cards are foreign there).
    store.issue_deck("Red 7", "T02", "bob", now=T0 + 180)
    assert store.issued_decks() == {"T01": None, "T02": "Red 7"} and store.deck("Red 7")["issued_to"] == "T02"
    t01, t02, t03 = sent("T01"), sent("T02"), sent("T03")
    assert (t01.issues_active, t01.active, t02.active, t03.issues_active) == (True, None, "Red 7", False)
    assert t01.version == t02.version == t03.version and t01.decks == t02.decks == t03.decks
    assert len({t01.fingerprint, t02.fingerprint, t03.fingerprint}) == 3
    # Retired: no table deals it, and a retired deck is never issued.
    store.retire_deck("Red 7", "ann", "marked cards suspected", now=T0 + 240)
    assert store.issued_decks() == {"T01": None, "T02": None} and store.deck("Red 7")["issued_to"] is None
    assert sent("T02").active is None and sent("T02").decks["Red 7"][1] == red
    with pytest.raises(RegistryRefused, match="is retired: a deck out of play is never issued"):
        store.issue_deck("Red 7", "T03", "ann")
    log = store.registry_steps(deck="Red 7")
    assert [(s["step"], s["table_id"], s["person"], s["witness"]) for s in log] == [
        ("registered", None, "ann", None), ("issued", "T01", "ann", "Bob"), ("issued", "T02", "bob", None),
        ("retired", None, "ann", None)]
    assert L.step_words(log[2]) == "Issued to T02: the deck that table deals, moved from T01"
    assert [a["action"] for a in store.audit()].count("deck_issue") == 2
    assert "deck Red 7 issued to T02, moved from T01" in [a["detail"] for a in store.audit()]


def test_the_publisher_sends_each_table_the_deck_issued_to_it(store):
    for table in ("T01", "T02"):
        journal = TableJournal(table)
        journal.add(T0, "tick")
        file_journal(store, journal)
    store.register_deck("Red 7", "red", deck_tags("Red 7"), "ann")
    store.issue_deck("Red 7", "T02", "ann")
    publisher = RegistryPublisher(store)
    due = {table: P.parse_registry(payload) for table, _topic, payload in publisher.due()}
    assert set(due) == set(store.known_tables()) >= {"T01", "T02"}
    assert due["T02"].active == "Red 7" and not due["T01"].issues_active
    for table in due:
        publisher.sent(table)
    assert publisher.due() == []
    store.issue_deck("Red 7", "T01", "ann")      # a new version: every table is sent its own again
    due = {table: P.parse_registry(payload) for table, _topic, payload in publisher.due()}
    assert (due["T01"].active, due["T02"].active) == ("Red 7", None)


def test_the_publisher_sends_no_older_registry_than_the_stores(store):
    journal = TableJournal("T01")
    journal.add(T0, "tick")
    file_journal(store, journal)
    store.register_deck("Red 7", "red", deck_tags("Red 7"), "ann")
    publisher = RegistryPublisher(store)
    topic = P.registry_topic("T01")
    [(_, _, payload)] = publisher.due()
    publisher.sent("T01")
    assert publisher.due() == []
    # Another collector's older copy, heard late on the table's topic: sent again.
    old = P.build_registry(0, {}, [], {}, [])
    assert publisher.heard(topic, old) and not publisher.heard(P.COLLECTOR_TOPIC, old)
    assert [(t, p) for t, _, p in publisher.due()] == [("T01", payload)]
    publisher.sent("T01")
    assert publisher.heard(topic, b"garbage") and [t for t, _, _ in publisher.due()] == ["T01"]
    publisher.sent("T01")
    # The store moving while the payloads are made: none is sent; the next call sends the newer.
    publisher.reset()
    reading = store.known_tables
    moved = []

    def changing():
        if not moved:
            moved.append(store.retire_deck("Red 7", "ann", "marked cards suspected"))
        return reading()
    store.known_tables = changing
    assert publisher.due() == [] and moved
    store.known_tables = reading
    [(_, _, newer)] = publisher.due()
    assert P.parse_registry(newer).version == store.registry_version() == 2


def test_a_deck_received_after_the_pass_read_the_registry_counts_its_hands(store):
    store.register_deck("Red 7", "red", deck_tags("Red 7"), "ann", now=T0)
    t01 = TableJournal("T01")
    t01.hand(T0, deck_tags("Red 7"), deck="Red 7")
    file_journal(store, t01)
    registry = RegistryPass(store)
    registry.catch_up()
    store.receive_deck("Blue 1", "blue", 54, "ann")   # moves no version: the pass must see it all the same
    filed = len(t01.lines)
    t01.hand(T0 + 100, deck_tags("Blue 1"), deck="Blue 1")
    file_journal(store, t01, filed)
    registry.catch_up()
    assert store.deck("Blue 1")["state"] == "in_play" and store.deck("Blue 1")["hands"] == 1


@pytest.mark.parametrize("bad_name", ["", "x" * 65, "Red/7", "Red\x007", "Red\ud8007"])
def test_a_refused_deck_name_says_the_domains_rule_in_english_and_the_readers_words_in_czech(bad_name):
    from_domain = deck_name_refusal(bad_name)
    with pytest.raises(RegistryRefused) as refused:
        check_deck_name(bad_name)
    assert str(refused.value) == from_domain
    czech = refused.value.told(Language("cs").gettext)
    assert czech != from_domain and czech.startswith("název balíčku") and "64" in czech, czech
