"""The journal's strict check of one line's content (``parse_line``): what it
refuses, and what it must not refuse (a false alarm would quarantine a good line)."""

from __future__ import annotations

import json

import pytest

from dealerbox.domain.events import Event
from dealerbox.domain.messages import load_messages
from dealerbox.rules.engine import HandEngine
from dealerbox.service.journal.lines import GENESIS, encode_line, parse_line, utc_text
from dealerbox.service.output import decision_record

T0 = 1795341600.0  # 2026-11-22 10:00 UTC


def line(**fields) -> bytes:
    d = {"seq": 3, "prev": GENESIS, "wall": "2026-11-22T10:00:00.000000Z"}
    d.update(fields)
    if not any(k in d for k in ("event", "decision", "gap", "journal_damage")):
        d["event"] = {"t": 1.0, "ev": "tick"}
    return json.dumps({k: v for k, v in d.items() if v is not ...}, separators=(",", ":")).encode()


def problem(raw: bytes) -> str | None:
    return parse_line("journal-2026-11-22.jsonl", 3, raw).error


def a_decision() -> dict:
    """A decision as the daemon journals it: an exposed card's correction."""
    engine = HandEngine("tda-2019")
    events = [Event(0.0, "new_hand", players=3)] + [Event(1.0 + i, "shoe", card=c) for i, c in
                                                     enumerate(["Ah", "Kd", "7c"])]
    events.append(Event(4.0, "button", name="exposed", id=7))
    for e in events:
        decisions = engine.feed(e)
    [d] = decisions
    return decision_record(d, load_messages("en"), 2, events[-1])


@pytest.mark.parametrize("when", [0.0, T0, T0 + 0.999999, 1709164800.5,  # 2024-02-29
                                  1798761599.25, 4102444800.0])           # 2026-12-31 23:59:59, 2100
def test_every_wall_the_writer_writes_is_accepted(when):
    raw = encode_line(5, GENESIS, when, "event", {"t": 1.0, "ev": "tick"})
    assert problem(raw) is None and parse_line("f", 1, raw).wall == utc_text(when)


@pytest.mark.parametrize("wall", [
    "2026-11-25T10:p3:18.000000Z",   # the bit flip the bench found
    "2026-13-25T10:03:18.000000Z",   # no month 13
    "2026-02-30T10:03:18.000000Z",   # no 30 February
    "2026-11-25T24:03:18.000000Z",
    "2026-11-25T10:03:18Z",          # not as the writer writes it
    "2026-11-25 10:03:18.000000Z",
    "2026-11-25T10:03:18.000000",
    "2026-11-25T10:03:18.000000Z ",
    "２026-11-25T10:03:18.000000Z",  # a digit, but not an ASCII one
    "", 1795341600.0, None, ...,     # ... : no wall at all
])
def test_a_wall_that_is_not_a_time_makes_the_line_malformed(wall):
    found = problem(line(wall=wall))
    assert found is not None and found.startswith("'wall'"), found


def test_prev_must_be_hex():
    assert problem(line(prev="ab" * 32)) is None
    assert "'prev' must be 64 hex digits" in problem(line(prev="ab" * 31 + "aq"))
    assert "'prev' must be 64 hex digits" in problem(line(prev="AB" * 32))


def test_a_decision_as_the_daemon_journals_it_is_accepted():
    d = a_decision()
    assert problem(line(decision=d, event=...)) is None
    del d["id"]  # an event without an id gives a decision without one
    assert problem(line(decision=d, event=...)) is None


@pytest.mark.parametrize("key", ["t", "verdict", "irregularity", "cards", "rule", "steps", "step", "phase"])
def test_a_decision_missing_a_key_is_malformed(key):
    d = a_decision()
    del d[key]
    assert problem(line(decision=d, event=...)) == f"not a CONTRACT.md decision: {key!r} is missing"


@pytest.mark.parametrize("key, value, said", [
    ("verdict", "maybe", "'verdict' must be one of"),
    ("irregularity", 7, "'irregularity' must be a name or null"),
    ("t", -1.0, "'t' must be a number of seconds"),
    ("t", True, "'t' must be a number of seconds"),
    ("cards", "9h", "'cards' must be a list of strings"),
    ("steps", ["a", 1], "'steps' must be a list of strings"),
    ("rule", None, "'rule' must be a string"),
    ("phase", 3, "'phase' must be a string"),
    ("step", 5, "'step' must be an index into 'steps' (0..4)"),
    ("step", -1, "'step' must be an index"),
    ("seq", 3, "'seq' must name an earlier journal line (1..2)"),   # its own line: seq 3
    ("seq", 9, "'seq' must name an earlier journal line"),
    ("seq", 0, "'seq' must name an earlier journal line"),
    ("id", True, "'id' must be a number or a string"),
    ("id", [7], "'id' must be a number or a string"),
])
def test_a_decision_the_daemon_could_not_have_given_is_malformed(key, value, said):
    d = a_decision()
    d[key] = value
    found = problem(line(decision=d, event=...))
    assert found is not None and found.startswith(f"not a CONTRACT.md decision: {said}"), found


def test_a_decision_with_a_step_past_its_last_and_a_null_irregularity_is_accepted():
    d = a_decision()
    d.update(step=len(d["steps"]), irregularity=None, id="r-7")   # every step done
    assert problem(line(decision=d, event=...)) is None


def test_an_event_that_does_not_parse_makes_the_line_malformed():
    assert problem(line(event={"t": 1.0, "ev": "shoe", "card": "2s"})) is None
    assert problem(line(event={"t": 1.0, "ev": "shoe", "card": "2z"})).startswith("not a CONTRACT.md event")
    assert problem(line(event={"t": 1.0, "ev": "shoe", "card": "2s", "car": "2s"})).startswith(
        "not a CONTRACT.md event: unknown key")
