"""The technician's registrations reach the table's journal, box running or not
(dealerbox/service/registry_outbox.py, docs/TOOLS.md)."""

from __future__ import annotations

import json
import logging

import pytest

from dealerbox.domain.decks import simulated_uid
from dealerbox.errors import EventError
from dealerbox.service.config import load_config
from dealerbox.service.journal import read_entries
from dealerbox.service.registry_outbox import OUTBOX_NAME, RegistryOutbox, floor_keep_from_seq, post_registry_event
from dealerbox.service.uplink import CURSOR_NAME
from hardware_sim.script import HandScript
from tests.service.test_daemon import Box, table_config, wait_for

DECK = {"deck": "R1", "back": "green", "tags": {simulated_uid("R1", "Ah"): "Ah", simulated_uid("R1", "Kd"): "Kd"}}


def journal_events(config):
    return [e.event for e in read_entries(config.state_dir / "journal")]


def test_with_the_box_stopped_the_command_writes_the_journal_itself(tmp_path):
    path = table_config(tmp_path)
    box = Box(path)
    try:
        s = HandScript(seed=1)
        s.full_hand(2)
        box.play(s)
        box.settle()
        last_t = box.journal_events()[-1].t
    finally:
        box.close()
    config = load_config(path)
    said = post_registry_event(config, "deck_registered", **DECK)
    assert "written to the table's journal (1 line(s))" in said
    events = journal_events(config)
    assert events[-1].ev == "deck_registered" and events[-1].tags == DECK["tags"]
    assert events[-1].t == last_t                      # t never goes back
    assert list((config.state_dir / OUTBOX_NAME).iterdir()) == []
    # The box starts on the journal as usual: the line is chained like any other.
    box = Box(path)
    try:
        assert box.daemon.journal.verify().ok
    finally:
        box.close()


def test_with_the_box_running_the_box_journals_it(tmp_path):
    """The box takes the file while it runs (its courier looks every second; how soon is the
    bench's business, not a test's: this machine's load would decide it)."""
    path = table_config(tmp_path)
    box = Box(path)
    try:
        config = load_config(path)
        said = post_registry_event(config, "badge_registered", uid="08A1B2C3", dealer="1042")
        assert "handed to the running box" in said
        wait_for(lambda: any(e.ev == "badge_registered" for e in box.journal_events()), 30.0, "the line")
        e = next(e for e in box.journal_events() if e.ev == "badge_registered")
        assert (e.uid, e.dealer) == ("08A1B2C3", "1042")
        wait_for(lambda: list((config.state_dir / OUTBOX_NAME).iterdir()) == [], 5.0, "the outbox emptied")
        # A hand afterwards is judged as ever.
        s = HandScript(seed=2)
        s.full_hand(2)
        box.play(s)
        box.settle()
        assert [d for d in box.decisions if d["irregularity"]] == []
    finally:
        box.close()


def test_what_waited_while_nothing_could_write_goes_in_at_the_next_start(tmp_path):
    path = table_config(tmp_path)
    config = load_config(path)
    RegistryOutbox(config.state_dir).put("deck_checked", deck="A", missing=["Ks"], damaged=[], ok=False)
    box = Box(path)
    try:
        wait_for(lambda: any(e.ev == "deck_checked" for e in box.journal_events()), 5.0, "the line")
        e = next(e for e in box.journal_events() if e.ev == "deck_checked")
        assert (e.deck, e.missing, e.ok) == ("A", ("Ks",), False)
    finally:
        box.close()


def test_a_bad_event_never_waits_and_a_bad_file_is_moved_aside(tmp_path, caplog):
    outbox = RegistryOutbox(tmp_path)
    with pytest.raises(EventError, match="'tags'"):
        outbox.put("deck_registered", deck="R1", back="", tags={})
    with pytest.raises(EventError, match="'ev'"):
        outbox.put("new_hand", players=2)
    assert not outbox.directory.exists() or list(outbox.directory.iterdir()) == []
    outbox.put("badge_registered", uid="08A1B2C3", dealer="1042")
    (outbox.directory / "0-edited.json").write_text(json.dumps({"ev": "badge_registered", "uid": "zz"}))
    with caplog.at_level(logging.ERROR, logger="dealerbox"):
        waiting = outbox.waiting()
    assert [fields["ev"] for _p, fields in waiting] == ["badge_registered"]
    assert (outbox.directory / "0-edited.bad").exists()
    assert any("not a registry event" in r.message for r in caplog.records)


def test_deck_check_puts_its_result_in_the_journal(tmp_path, capsys):
    """The command itself, box stopped: nothing passed over the reader, so the deck is not fit,
    and the journal says which cards were missing."""
    from dealerbox import cli

    path = table_config(tmp_path)
    code = cli.main(["deck", "check", "--config", str(path), "--reader", "board", "--timeout", "0.5",
                     "--quiet", "0.5"])
    assert code == 1
    err = capsys.readouterr().err
    assert "deck_checked written to the table's journal" in err
    e = journal_events(load_config(path))[-1]
    assert (e.ev, e.deck, e.ok, len(e.missing), e.damaged) == ("deck_checked", "A", False, 52, ())


def test_a_command_holding_the_journal_keeps_what_the_floor_has_not_acknowledged(tmp_path):
    """The retention a command uses reads the cursor the uplink keeps, by the uplink's own name."""
    keep = floor_keep_from_seq(tmp_path)
    assert keep() == 1                                  # no cursor yet: keep everything
    (tmp_path / "journal").mkdir()
    (tmp_path / "journal" / CURSOR_NAME).write_text(json.dumps({"acked": 41}))
    assert keep() == 42
    (tmp_path / "journal" / CURSOR_NAME).write_text("garbage")
    assert keep() == 1
