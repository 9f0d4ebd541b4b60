"""Dealer sign-in: the badge registry, the ``dealer`` event, and badges read at odd moments.

A badge is never a card. The engine takes a ``dealer`` event in any phase and judges
nothing by it: inserted anywhere into any hand, under both profiles, with and
without a mouth sensor, it leaves every decision as it was (time included). At the
box, a badge held to the shoe between hands signs its dealer in, held again signs
them out, and held during a hand takes effect once the hand is over; the LCD greets
the dealer and the LEDs stay as they were. The box tests run the daemon on the
simulated table with the real drivers on the chip emulators, as ``dealerbox run`` does.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

import pytest

from dealerbox import cli
from dealerbox.errors import ConfigError, EventError, RegistryError
from dealerbox.hw.presence import BadgeReads
from dealerbox.hw.rc522 import RC522Reader
from dealerbox.domain.badges import (SIMULATED_DEALERS, BadgeRegistry, check_dealer_id, simulated_badge_uid,
                                    simulation_badges)
from dealerbox.rules.book import NOT_PLAYING
from dealerbox.rules.engine import HandEngine
from dealerbox.domain.events import Event, read_events
from dealerbox.domain.messages import LANGUAGES, load_messages
from dealerbox.domain.decks import simulated_uid, simulation_registry
from dealerbox.rules.scenario import run_scenario
from dealerbox.service.config import DEFAULT_CONFIG, check_config, load_config
from dealerbox.service.daemon import Daemon
from dealerbox.service.journal import Journal, read_entries
from dealerbox.service.recovery import last_dealer_event
from dealerbox.service.sources import BadgeRead, DealerSignIn
from dealerbox.service.room_registry import REVOKED_BADGE
from dealerbox.tools.badge_registration import BadgeTimeout, format_badges, register_badge, remove_badges
from hardware_sim.demo import SESSION_FILE, play_demo
from hardware_sim.rc522 import RC522Emulator
from hardware_sim.script import HandScript, VirtualClock
from hardware_sim.table import SimulatedTable

from tests.service.test_daemon import Box, table_config, wait_for
from tests.tools.test_deck_registration import Screen, Technician
from tests.hw.test_mouth import MOUTH_SECTION

SCENARIOS = sorted((Path(__file__).parents[1] / "scenarios").glob("*.jsonl"))
PROFILES = ("tda-2019", "cz-c40")
BADGE_1042 = simulated_badge_uid("1042")


# -- the dealer event ------------------------------------------------------------------------

def test_a_dealer_event_says_who_deals_or_signs_out():
    e = Event.from_json('{"t": 4.0, "ev": "dealer", "dealer": "1042"}')
    assert (e.ev, e.dealer) == ("dealer", "1042")
    out = Event.from_json('{"t": 5.0, "ev": "dealer", "dealer": null}')
    assert out.dealer is None and out.to_dict() == {"t": 5.0, "ev": "dealer", "dealer": None}
    assert Event.from_json(out.to_json()) == out


@pytest.mark.parametrize("data, says", [
    ({"t": 1, "ev": "dealer"}, "needs 'dealer'"),
    ({"t": 1, "ev": "dealer", "dealer": ""}, "'dealer'"),
    ({"t": 1, "ev": "dealer", "dealer": "Jana Novakova"}, "'dealer'"),
    ({"t": 1, "ev": "dealer", "dealer": "12345678901"}, "'dealer'"),
    ({"t": 1, "ev": "dealer", "dealer": 1042}, "'dealer'"),
    ({"t": 1, "ev": "dealer", "dealer": ["1042"]}, "'dealer'"),
    ({"t": 1, "ev": "tick", "dealer": "1042"}, "belongs to dealer events"),
    ({"t": 1, "ev": "new_hand", "players": 6, "dealer": "1042"}, "belongs to dealer events"),
])
def test_a_bad_dealer_event_is_named(data, says):
    with pytest.raises(EventError, match=re.escape(says)):
        Event.from_dict(data)


def test_a_bad_dealer_line_names_its_line():
    lines = ['{"t": 0, "ev": "dealer", "dealer": "1042"}', '{"t": 1, "ev": "dealer", "dealer": "a b"}']
    with pytest.raises(EventError, match="line 2"):
        list(read_events(lines))


# -- the engine: who deals, and nothing else -------------------------------------------------

def feed(engine: HandEngine, events) -> list:
    """Every decision of *events* (dicts), in order."""
    out = []
    for d in events:
        out += engine.feed(Event.from_dict(d))
    return out


def dealers_seen(events, profile="tda-2019") -> list:
    """engine.dealer after each event."""
    engine, seen = HandEngine(profile), []
    for d in events:
        engine.feed(Event.from_dict(d))
        seen.append(engine.dealer)
    return seen


def test_between_hands_a_dealer_event_takes_effect_at_once_and_decides_nothing():
    engine = HandEngine()
    assert engine.feed(Event(0.5, "dealer", dealer="1042")) == [] and engine.dealer == "1042"
    s = HandScript(seed=1, t0=1.0)
    s.full_hand(6)
    feed(engine, s.events)
    assert engine.phase == "over" and engine.dealer == "1042"
    assert engine.feed(Event(99.0, "dealer", dealer=None)) == [] and engine.dealer is None
    assert engine.dealer_after_hand is None


def test_during_a_hand_the_dealer_changes_when_the_hand_is_over():
    s = HandScript(seed=2)
    s.dealer("1042").new_hand(6).deal(3).dealer("2077").deal(9).round_done()
    s.flop().round_done().turn().dealer(None).dealer("3115").round_done().river().round_done()
    before_over = len(s.events)
    s.hand_over()
    seen = dealers_seen(s.events)
    assert set(seen[1:before_over]) == {"1042"}, "a hand keeps the dealer who began it"
    assert seen[before_over] == "3115", "the last dealer event of the hand counts, once it is over"
    engine = HandEngine()
    feed(engine, s.events[:before_over])
    assert (engine.dealer, engine.dealer_after_hand) == ("1042", "3115")


def test_a_misdeal_ends_the_hand_for_who_deals_and_a_new_hand_ends_it_too():
    s = HandScript(seed=3)
    s.dealer("1042").new_hand(6).deal(5).button("misdeal").dealer("2077")
    assert dealers_seen(s.events)[-1] == "2077"          # halted: the hand is dead, the sign-in counts
    s = HandScript(seed=3)
    s.dealer("1042").new_hand(6).deal(5).dealer("2077")
    n = len(s.events)
    s.new_hand(4)                                        # no HAND OVER: the new hand ends the last one
    seen = dealers_seen(s.events)
    assert seen[n - 1] == "1042" and seen[n] == "2077"


# Hands with dealer events at odd moments. Each is built as the dealer played it; the same
# hand without its dealer events is the reference (the other events keep their times).

def _mid_deal(s):
    s.dealer("1042").new_hand(6).deal(3).dealer("2077").deal(9).round_done()
    s.flop().round_done().turn().round_done().river().round_done().hand_over()


def _during_a_correction(s):
    # An exposed hole card becomes the burn (EXPOSED_DEAL): badges while the steps are followed.
    s.dealer("1042").new_hand(6).deal(4).button("exposed").dealer("2077").deal(8).dealer("3115").draw()
    s.dealer("2077").button("ack").round_done().flop(burn=False, spread=True).dealer("2077")
    s.round_done().turn().round_done().river().round_done().hand_over()


def _during_an_extra_card_grace(s):
    # A card too many after the deal, then a second: the box waits for the board within its grace.
    s.new_hand(4).deal()
    s.draw()
    s.dealer("1042")
    c1 = s.draw()
    s.dealer("2077").on(c1).dealer(None).off(c1).put_back(c1, top=False).button("ack").reshuffle_stub()
    s.round_done().flop(burn=False).round_done().turn().round_done().river().round_done().hand_over()


def _twice(s):
    s.dealer("1042").dealer("1042").new_hand(5).deal().dealer("2077").dealer("2077").round_done()
    s.flop(spread=True).round_done().turn().round_done().river().round_done().hand_over()
    s.dealer("2077").dealer("2077").full_hand(3)


def _sign_out_with_nobody_signed_in(s):
    s.dealer(None).full_hand(6).dealer(None).dealer(None).full_hand(2, spread=True)


def _right_after_hand_over(s):
    s.dealer("1042").full_hand(6)
    s.emit("dealer", dt=0.01, dealer="2077")
    s.emit("dealer", dt=0.01, dealer=None)
    s.full_hand(4)


def _during_a_misdeal_wait(s):
    s.dealer("1042").new_hand(6).deal(5).button("misdeal").dealer("2077").tick(1.0).dealer(None)
    s.dealer("3115").full_hand(6)


def _between_a_flop_card_and_the_board(s):
    s.dealer("1042").new_hand(3).deal().round_done()
    s.draw()
    for _ in range(3):
        c = s.draw()
        s.dealer("2077").on(c)
    s.round_done().turn().round_done().river().round_done().hand_over()


ODD_MOMENTS = {f.__name__[1:]: f for f in (_mid_deal, _during_a_correction, _during_an_extra_card_grace, _twice,
                                           _sign_out_with_nobody_signed_in, _right_after_hand_over,
                                           _during_a_misdeal_wait, _between_a_flop_card_and_the_board)}


def _with_mouth(events: list[dict], mouth: bool) -> list[dict]:
    return [dict(e, mouth_sensor=True) if mouth and e["ev"] == "new_hand" else e for e in events]


def _raised(decisions) -> list[str]:
    out = []
    for d in decisions:
        if d.irregularity and d.irregularity not in out:
            out.append(d.irregularity)
    return out


@pytest.mark.parametrize("mouth", [False, True], ids=["no_mouth_sensor", "mouth_sensor"])
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("story", ODD_MOMENTS)
def test_badges_at_odd_moments_raise_nothing_and_change_no_decision(story, profile, mouth):
    s = HandScript(seed=7)
    ODD_MOMENTS[story](s)
    events = _with_mouth(s.events, mouth)
    without = [e for e in events if e["ev"] != "dealer"]
    assert len(without) < len(events)
    got = feed(HandEngine(profile), events)
    want = feed(HandEngine(profile), without)
    assert got == want, "a dealer event changed a decision"
    if story != "during_a_correction" and story != "during_an_extra_card_grace":
        assert _raised(got) == [], f"{story}: a clean hand raised {_raised(got)}"
    else:
        assert _raised(got) == _raised(want) and _raised(got), "the correction is there, and nothing else"


def test_the_odd_moment_hands_end_with_the_right_dealer():
    ends = {}
    for story, build in ODD_MOMENTS.items():
        s = HandScript(seed=7)
        build(s)
        ends[story] = dealers_seen(s.events)[-1]
    assert ends == {"mid_deal": "2077", "during_a_correction": "2077", "during_an_extra_card_grace": None,
                    "twice": "2077", "sign_out_with_nobody_signed_in": None, "right_after_hand_over": None,
                    "during_a_misdeal_wait": "3115", "between_a_flop_card_and_the_board": "2077"}


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_a_dealer_event_between_every_two_events_of_a_scenario_changes_nothing(path, tmp_path):
    """Every scenario (each profile and table it was written for), with a dealer event
    before every event: the same decisions, and its expectations still hold."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    profile = header.get("profile", "tda-2019")
    body = [json.loads(line) for line in lines[1:] if line.strip()]
    events = [e for e in body if "expect" not in e]
    ids = ["1042", "2077", None, "3115"]
    mixed, t = [], 0.0
    for i, obj in enumerate(body):
        if "expect" not in obj:
            mixed.append({"t": t, "ev": "dealer", "dealer": ids[i % len(ids)]})
            t = obj["t"]
        mixed.append(obj)
    assert feed(HandEngine(profile), [e for e in mixed if "expect" not in e]) == feed(HandEngine(profile), events)
    badged = tmp_path / path.name
    badged.write_text("\n".join([lines[0]] + [json.dumps(o) for o in mixed]) + "\n", encoding="utf-8")
    result = run_scenario(badged)
    assert result.ok, "\n".join(result.failures)


# -- the badge registry and the config -------------------------------------------------------

def test_the_registry_round_trips_and_refuses_what_is_no_badge(tmp_path):
    reg = BadgeRegistry()
    assert reg.add("08:a1:b2:c3", "1042") == "08A1B2C3"
    reg.add("04A3C6CAE26180", "1042")
    reg.add("08A1B2C4", "E-77")
    with pytest.raises(RegistryError, match="dealer 1042 already"):
        reg.add("08A1B2C3", "E-77")
    with pytest.raises(RegistryError, match="dealer id"):
        reg.add("08A1B2C5", "Jana Novakova")
    with pytest.raises(RegistryError, match="4, 7 or 10"):
        reg.add("08A1B2", "1042")
    path = tmp_path / "badges.toml"
    reg.save(path)
    back = BadgeRegistry.load(path)
    assert back.by_uid() == reg.by_uid() and back.dealers == ["1042", "E-77"]
    assert back.dealer_of("04a3c6cae26180") == "1042" and back.dealer_of("not a uid") is None
    assert back.badges_of("1042") == ["04A3C6CAE26180", "08A1B2C3"]
    assert back.remove("1042") == ["04A3C6CAE26180", "08A1B2C3"] and back.dealers == ["E-77"]
    assert check_dealer_id("4208") == "4208"


@pytest.mark.parametrize("text, key", [
    ('[badges]\n08A1B2C3 = "Jana Novakova"\n', "badges.08A1B2C3"),
    ('[badges]\n08A1 = "1042"\n', "badges.08A1"),
    ('[badges]\n08A1B2C3 = 1042\n', "badges.08A1B2C3"),
    ('badges = "1042"\n', "badges"),
    ('[dealers]\n08A1B2C3 = "1042"\n', "dealers"),
    ('[badges\n', "(syntax)"),
])
def test_a_broken_badge_file_names_the_file_and_the_key(tmp_path, text, key):
    path = tmp_path / "badges.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        BadgeRegistry.load(path)
    assert err.value.key == key and "badges.toml" in str(err.value)


def test_the_simulated_badges_are_four_byte_staff_cards():
    reg = simulation_badges()
    assert reg.dealers == sorted(SIMULATED_DEALERS)
    for dealer in SIMULATED_DEALERS:
        (uid,) = reg.badges_of(dealer)
        assert uid == simulated_badge_uid(dealer) and len(uid) == 8 and not uid.startswith("88")
    decks = simulation_registry()
    assert not any(decks.lookup(u) for u in reg.by_uid())


def _config_with(tmp_path: Path, badges: str | None) -> Path:
    text = DEFAULT_CONFIG.read_text()
    text = re.sub(r'state_dir = "[^"]*"', f'state_dir = "{tmp_path / "state"}"', text)
    text = text[:text.index("[badges]")]
    if badges is not None:
        text += f"[badges]\n{badges}\n"
    path = tmp_path / "table.toml"
    path.write_text(text)
    return path


def test_the_config_says_where_the_badges_are(tmp_path):
    sim = load_config(DEFAULT_CONFIG)
    assert sim.badge_source == "builtin:sim" and sim.badge_registry.dealers == sorted(SIMULATED_DEALERS)
    # Left out: badges.toml beside the config, no badge known until the first is registered.
    none_yet = load_config(_config_with(tmp_path, None))
    assert none_yet.badge_source == str((tmp_path / "badges.toml").resolve()) and len(none_yet.badge_registry) == 0
    reg = BadgeRegistry()
    reg.add("08A1B2C3", "1042")
    reg.save(tmp_path / "staff.toml")
    cfg = load_config(_config_with(tmp_path, 'registry = "staff.toml"'))
    assert cfg.badge_registry.dealer_of("08A1B2C3") == "1042"


def test_a_tag_that_is_a_card_is_refused_as_a_badge(tmp_path):
    reg = BadgeRegistry()
    reg.add(simulated_uid("A", "Ah"), "1042")
    reg.save(tmp_path / "staff.toml")
    errors = check_config(_config_with(tmp_path, 'registry = "staff.toml"'))
    assert [e.key for e in errors] == ["badges.registry"]
    assert "Ah of deck A" in str(errors[0]) and "dealer 1042" in str(errors[0])
    errors = check_config(_config_with(tmp_path, 'registry = "builtin:staff"'))
    assert [e.key for e in errors] == ["badges.registry"]
    (tmp_path / "broken.toml").write_text('[badges]\n08A1B2C3 = "a b"\n')
    errors = check_config(_config_with(tmp_path, 'registry = "broken.toml"'))
    assert [e.key for e in errors] == ["badges.08A1B2C3"] and "broken.toml" in str(errors[0])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_greeting_fits_one_line_of_the_glass(lang):
    from dealerbox.domain.decisions import Step

    m = load_messages(lang)
    for key in ("dealer.signed_in", "dealer.signed_out"):
        step = Step(key, (("dealer", "E123456789"),))
        assert len(m.lcd(step, 20)) <= 20 and len(m.lcd(step, 16)) <= 16, (lang, key)
        assert "E123456789" in m.lcd(step, 16) and "E123456789" in m.text(step)


# -- badges out of the polls, and the sign-in ---------------------------------------------------

def test_a_badge_is_taken_out_of_every_zone_and_held_to_the_shoe_it_signs_in():
    card = simulated_uid("A", "Ah")
    reads = BadgeReads({BADGE_1042: "1042"}, rearm=1.2)
    poll = {"shoe": [card, BADGE_1042.lower()], "board": {BADGE_1042: 0.1, "04AA": 0.2}, "burn": frozenset()}
    rest, held = reads.split(1.0, poll)
    assert rest == {"shoe": [card], "board": {"04AA": 0.2}, "burn": frozenset()}
    assert held == [(BADGE_1042, "1042")]
    # On the board only: dropped, never a sign-in.
    rest, held = reads.split(10.0, {"board": [BADGE_1042]})
    assert rest == {"board": []} and held == []
    # No badge in the poll: the poll itself, untouched.
    poll = {"shoe": [card]}
    assert reads.split(11.0, poll) == (poll, [])
    assert BadgeReads({}).split(0.0, {"shoe": [BADGE_1042]}) == ({"shoe": [BADGE_1042]}, [])


def test_a_badge_lingering_in_the_shoe_field_is_one_read_and_held_again_it_is_another():
    reads = BadgeReads({BADGE_1042: "1042"}, rearm=1.2)
    held = []
    for t in (0.0, 0.4, 1.5, 2.6, 3.7):        # re-read while it lingers: gaps within the window
        held += reads.split(t, {"shoe": {BADGE_1042}})[1]
    assert len(held) == 1
    held += reads.split(5.0, {"shoe": {BADGE_1042}})[1]   # taken away, held again 1.3 s later
    assert len(held) == 2


def _sign_in(engine, sign_in, t, dealer):
    out = sign_in.read(BadgeRead(t, dealer))
    for e in out:
        engine.feed(e)
    return [e.dealer for e in out]


def test_badges_between_hands_sign_in_switch_and_sign_out():
    engine = HandEngine()
    sign_in = DealerSignIn(engine)
    assert _sign_in(engine, sign_in, 1.0, "1042") == ["1042"]
    assert _sign_in(engine, sign_in, 5.0, "2077") == ["2077"]      # a new dealer takes over
    assert _sign_in(engine, sign_in, 9.0, "2077") == [None]        # held again: signed out
    assert engine.dealer is None


def test_a_badge_during_a_hand_waits_for_its_end_and_twice_is_the_same():
    engine = HandEngine()
    sign_in = DealerSignIn(engine)
    _sign_in(engine, sign_in, 0.0, "1042")
    s = HandScript(seed=4, t0=1.0)
    s.new_hand(3).deal()
    feed(engine, s.events)
    assert _sign_in(engine, sign_in, 9.0, "2077") == [] and _sign_in(engine, sign_in, 11.0, "2077") == []
    assert sign_in.due(12.0) == [] and engine.dealer == "1042"
    n = len(s.events)
    s.round_done().flop().round_done().turn().round_done().river().round_done().hand_over()
    feed(engine, s.events[n:])
    (due,) = sign_in.due(s.t)
    assert (due.ev, due.dealer, due.t) == ("dealer", "2077", s.t)
    engine.feed(due)
    assert sign_in.due(s.t) == [] and engine.dealer == "2077"
    # The dealer's own badge during a hand signs them out at its end, however often it is held.
    s.new_hand(3).deal()
    feed(engine, s.events[-7:])
    assert _sign_in(engine, sign_in, s.t, "2077") == [] and _sign_in(engine, sign_in, s.t, "2077") == []
    engine.feed(Event(s.t + 1, "button", name="misdeal"))
    assert [e.dealer for e in sign_in.due(s.t + 1)] == [None]


def test_a_new_hand_without_hand_over_ends_the_hand_for_a_badge_held_during_it():
    engine = HandEngine()
    sign_in = DealerSignIn(engine)
    _sign_in(engine, sign_in, 0.0, "1042")
    s = HandScript(seed=4, t0=1.0)
    s.new_hand(3).deal(2)
    feed(engine, s.events)
    assert _sign_in(engine, sign_in, 5.0, "2077") == [] and sign_in.due(6.0) == []
    (before,) = sign_in.due(7.0, new_hand=True)        # the loop journals it before the new_hand
    engine.feed(before)
    assert engine.dealer == "1042"
    engine.feed(Event(7.0, "new_hand", players=4))
    assert engine.dealer == "2077" and sign_in.due(7.5, new_hand=True) == []


# -- badge register, list, remove ------------------------------------------------------------

@pytest.fixture
def chip(pins):
    return RC522Emulator(0, 0)


@pytest.fixture
def shoe(chip):
    with RC522Reader("shoe", zone="shoe", spi=chip) as r:
        yield r


def enrol(reader, tech, badges, dealer, path, screen, **kw):
    return register_badge(reader, badges, dealer, path, decks=simulation_registry(), prompt=screen,
                          clock=tech.clock, sleep=tech.sleep, poll_s=0.02, timeout_s=30.0, **kw)


def test_registering_a_badge_guides_refuses_cards_and_other_badges_and_writes_it(shoe, chip, tmp_path):
    path = tmp_path / "badges.toml"
    before = BadgeRegistry()
    before.add("08A1B2C4", "2077")
    card = simulated_uid("A", "Qs")
    tech = Technician(chip, [card, "08A1B2C4", ("both", "08A1B2C5", "08A1B2C6"), "08A1B2C3"])
    screen = Screen()
    new = enrol(shoe, tech, before, "1042", path, screen)
    text = "\n".join(screen.lines)
    assert screen.lines[0] == "[--------------------] 0/1 next: the badge of dealer 1042: hold it still on the antenna"
    assert "is Qs of deck A (blue back); a card cannot be a badge" in text
    assert "is dealer 2077's; take it from them first (dealerbox badge remove 2077)" in text
    assert "2 tags at once" in text
    assert screen.lines[-1].startswith("[####################] 1/1 badge 08A1B2C3 registered to dealer 1042")
    assert BadgeRegistry.load(path).by_uid() == new.by_uid() == {"08A1B2C4": "2077", "08A1B2C3": "1042"}
    assert before.dealers == ["2077"], "the registry handed in is not changed"


def test_the_rooms_registry_refuses_another_dealers_badge_and_a_revoked_one(shoe, chip, tmp_path):
    """At a table with a floor, a badge the room's registry gives another dealer, or revoked,
    is refused with what it is, though the table's own file has never heard of it."""
    path = tmp_path / "badges.toml"
    room = {"08A1B2C4": "2077", "08A1B2C5": REVOKED_BADGE, "08A1B2C3": "1042"}
    tech = Technician(chip, ["08A1B2C4", "08A1B2C5", "08A1B2C3"])
    screen = Screen()
    new = enrol(shoe, tech, BadgeRegistry(), "1042", path, screen, room=room)
    text = "\n".join(screen.lines)
    assert "this badge (08A1B2C4) is dealer 2077's in the room's registry" in text
    assert "this badge (08A1B2C5) was revoked on the floor and signs in nowhere" in text
    assert "badge 08A1B2C3 registered to dealer 1042" in screen.lines[-1]
    assert BadgeRegistry.load(path).by_uid() == new.by_uid() == {"08A1B2C3": "1042"}


def test_a_reader_fault_is_retried_and_the_badge_still_registers(shoe, chip, tmp_path):
    tech = Technician(chip, ["unplug", ("pause", 40), "plug", "08A1B2C3"])
    screen = Screen()
    enrol(shoe, tech, BadgeRegistry(), "1042", tmp_path / "b.toml", screen)
    text = "\n".join(screen.lines)
    assert "failed" in text and "answers again" in text and "reader faults retried" in screen.lines[-1]
    assert BadgeRegistry.load(tmp_path / "b.toml").dealers == ["1042"]


def test_a_timeout_or_a_cancel_writes_nothing(shoe, chip, tmp_path):
    path = tmp_path / "b.toml"
    with pytest.raises(BadgeTimeout, match="nothing was written"):
        enrol(shoe, Technician(chip, []), BadgeRegistry(), "1042", path, Screen())
    screen = Screen()
    with pytest.raises(KeyboardInterrupt):
        enrol(shoe, Technician(chip, ["cancel"]), BadgeRegistry(), "1042", path, screen)
    assert screen.lines[-1] == "cancelled: nothing was written" and not path.exists()


def test_a_dealer_with_a_badge_gets_another_only_instead_of_the_old(shoe, chip, tmp_path):
    path = tmp_path / "b.toml"
    had = BadgeRegistry()
    had.add("08A1B2C4", "1042")
    with pytest.raises(RegistryError, match="--replace"):
        enrol(shoe, Technician(chip, ["08A1B2C3"]), had, "1042", path, Screen())
    screen = Screen()
    new = enrol(shoe, Technician(chip, ["08A1B2C3"]), had, "1042", path, screen, replace=True)
    assert new.badges_of("1042") == ["08A1B2C3"] and "old badge 08A1B2C4 no longer signs in" in screen.lines[-1]
    # Their own badge again: nothing to write.
    path.unlink()
    screen = Screen()
    enrol(shoe, Technician(chip, ["08A1B2C3"]), new, "1042", path, screen, replace=True)
    assert "already: nothing to write" in screen.lines[-1] and not path.exists()
    with pytest.raises(RegistryError, match="dealer id"):
        enrol(shoe, Technician(chip, []), new, "Jana Novakova", path, Screen())


def test_remove_and_list(tmp_path, capsys):
    path = tmp_path / "b.toml"
    reg = BadgeRegistry()
    reg.add("08A1B2C3", "1042")
    reg.add("08A1B2C4", "2077")
    reg.save(path)
    assert cli.main(["badge", "list", "--registry", str(path)]) == 0
    out = capsys.readouterr().out
    assert "2 dealer(s)" in out and re.search(r"1042\s+08A1B2C3", out)
    assert cli.main(["badge", "list", "--registry", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"1042": ["08A1B2C3"], "2077": ["08A1B2C4"]}
    assert cli.main(["badge", "remove", "2077", "--registry", str(path)]) == 0
    assert "08A1B2C4 removed" in capsys.readouterr().out
    assert BadgeRegistry.load(path).dealers == ["1042"]
    assert cli.main(["badge", "remove", "2077", "--registry", str(path)]) == 2
    assert "dealer 2077 has no badge" in capsys.readouterr().err
    with pytest.raises(RegistryError):
        remove_badges(BadgeRegistry.load(path), "9999", path)
    assert "1042" in format_badges(BadgeRegistry.load(path), str(path))
    # The simulated table's badges are built in: nothing to write to.
    assert cli.main(["badge", "remove", "1042"]) == 2
    assert "built-in badges; name a --registry file" in capsys.readouterr().err


def test_badge_register_on_the_simulated_shoe_times_out_when_nobody_holds_a_badge(tmp_path, capsys):
    path = tmp_path / "b.toml"
    assert cli.main(["badge", "register", "3999", "--registry", str(path), "--timeout", "0.5"]) == 1
    captured = capsys.readouterr()
    assert "0/1 next: the badge of dealer 3999" in captured.out
    assert "no badge shown for 0.5 s" in captured.err and not path.exists()
    assert cli.main(["badge", "register", "Jana Novakova", "--registry", str(path)]) == 2
    assert "dealer id" in capsys.readouterr().err


def test_replay_takes_dealer_events(tmp_path, capsys):
    s = HandScript(seed=9)
    _during_a_correction(s)
    with_badges, without = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    with_badges.write_text(s.jsonl())
    without.write_text("\n".join(json.dumps(e) for e in s.events if e["ev"] != "dealer") + "\n")
    outs = []
    for path in (with_badges, without):
        assert cli.main(["replay", str(path)]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and "EXPOSED_DEAL" in outs[0]


# -- the box on the simulated table --------------------------------------------------------------

def led_changes(box) -> dict[str, int]:
    """How often each LED pin has changed state so far."""
    factory = box.table.pin_factory
    return {c: len(factory.pin(p).states) for c, p in box.config.panel.pins.leds.items()}


def dealer_events(box) -> list:
    return [e.dealer for e in box.journal_events() if e.ev == "dealer"]


def raised(box) -> list:
    return [d["irregularity"] for d in box.decisions if d["irregularity"]]


class _events:
    """A HandScript's later events, as Box.play takes them."""

    def __init__(self, events):
        self.events = events


@pytest.fixture
def box(tmp_path):
    b = Box(table_config(tmp_path))
    yield b
    b.close()


def test_a_badge_between_hands_signs_in_greets_on_the_glass_and_leaves_the_leds(box):
    wait_for(lambda: box.table.leds() == {"green": True, "amber": False, "red": False}, what="the green LED")
    wait_for(lambda: box.table.glass() and "OK" in box.table.glass()[0], what="the first frame")
    leds = led_changes(box)
    box.table.hold_badge("1042")
    wait_for(lambda: box.table.glass()[-1].rstrip() == "Welcome 1042", what="the greeting on the glass")
    box.settle()
    assert box.daemon.engine.dealer == "1042" and dealer_events(box) == ["1042"]
    assert led_changes(box) == leds, "the LED pins did not move"
    assert box.table.leds() == {"green": True, "amber": False, "red": False}
    assert box.decisions == [] and box.daemon.stats.per_reader["shoe"]["badges"] == 1
    # The dealer's own badge again (the reader has forgotten it): signed out.
    time.sleep(box.config.presence.shoe_rearm_s + 0.2)
    box.table.hold_badge("1042")
    wait_for(lambda: box.table.glass()[-1].rstrip() == "Goodbye 1042", what="the goodbye")
    box.settle()
    assert dealer_events(box) == ["1042", None] and led_changes(box) == leds
    # A new hand: the greeting has been read, the glass shows the hand.
    s = HandScript(seed=5)
    s.new_hand(4).deal(2)
    box.play(s)
    wait_for(lambda: "deal" in box.table.glass()[0] and "Goodbye" not in box.table.glass()[-1], what="the hand")
    assert raised(box) == []


def test_a_badge_during_a_hand_is_deferred_and_a_badge_is_never_a_card(box):
    box.table.hold_badge("1042")
    wait_for(lambda: box.daemon.engine.dealer == "1042", what="the sign-in")
    s = HandScript(seed=6)
    s.new_hand(4).deal(3)
    box.play(s)
    box.settle()
    box.table.hold_badge("2077")                                     # mid-deal, at the shoe
    badge = box.table.badge_uid("2077")
    box.table.place(uid=badge, zone="board")                         # laid on the board antenna
    time.sleep(box.config.presence.settle_s + 0.4)
    box.table.lift(uid=badge, zone="board")
    box.settle()
    assert box.daemon.engine.dealer == "1042" and dealer_events(box) == ["1042"]
    assert "2077" not in "".join(box.table.glass())
    n = len(s.events)
    s.deal(5).round_done().flop().round_done().turn().round_done().river().round_done().hand_over()
    box.play(_events(s.events[n:]))
    wait_for(lambda: box.daemon.engine.dealer == "2077", what="the sign-in once the hand is over")
    wait_for(lambda: box.table.glass()[-1].rstrip() == "Welcome 2077", what="the greeting")
    box.settle()
    events = box.journal_events()
    kinds = [(e.ev, e.name or e.dealer) for e in events if e.ev in ("button", "dealer")]
    assert kinds[-2:] == [("button", "hand_over"), ("dealer", "2077")], "journaled when the hand was over"
    assert not any(e.uid == badge for e in events), "no event names the badge"
    assert raised(box) == [] and box.daemon.engine.phase == "over"
    assert box.table.leds() == {"green": True, "amber": False, "red": False}


def test_a_badge_lying_in_the_shoe_field_is_one_sign_in(box):
    badge = box.table.badge_uid("3115")
    box.table.place(uid=badge, zone="shoe")
    time.sleep(3 * box.config.presence.shoe_rearm_s)                 # read again and again while it lies there
    box.table.lift(uid=badge, zone="shoe")
    box.settle()
    assert dealer_events(box) == ["3115"] and box.daemon.engine.dealer == "3115"
    assert box.daemon.stats.per_reader["shoe"]["badges"] == 1 and box.decisions == []


def test_a_restart_still_knows_who_deals(tmp_path):
    path = table_config(tmp_path)
    first = Box(path)
    try:
        first.table.hold_badge("2077")
        s = HandScript(seed=10)
        s.full_hand(3)
        s.new_hand(4).deal(3)
        first.play(s)
        first.settle()
        assert first.daemon.engine.dealer == "2077" and first.daemon.engine.phase == "deal"
    finally:
        first.close()
    entries = list(read_entries(tmp_path / "state" / "journal"))
    open_hand = len(entries) - max(i for i, e in enumerate(entries) if e.event.ev == "new_hand")
    assert entries[0].event.ev == "dealer" and open_hand < len(entries) - 1
    second = Box(path)
    try:
        assert second.daemon.engine.dealer == "2077", "the sign-in hands before the open one is restored"
        wait_for(lambda: second.table.glass()[-1].startswith("RECOVERED"), what="the recovery note")
        assert second.daemon.stats.recovered_events == open_hand, "the open hand only is replayed"
    finally:
        second.close()


def test_with_a_mouth_sensor_a_badge_at_the_shoe_counts_no_card(tmp_path):
    b = Box(table_config(tmp_path, extra=MOUTH_SECTION))
    try:
        b.table.hold_badge("1042")
        wait_for(lambda: b.daemon.engine.dealer == "1042", what="the sign-in")
        s = HandScript(seed=11)
        s.new_hand(3).deal(4)
        b.play(s)
        b.table.hold_badge("4208")
        n = len(s.events)
        s.deal(2).round_done().flop().round_done().turn().round_done().river().round_done().hand_over()
        b.play(_events(s.events[n:]))
        wait_for(lambda: b.daemon.engine.dealer == "4208", what="the sign-in after the hand")
        b.settle()
        assert raised(b) == []
        shoe = [e for e in b.journal_events() if e.ev == "shoe"]
        assert len(shoe) == len([e for e in s.events if e["ev"] == "shoe"]) and not any(e.unread for e in shoe)
    finally:
        b.close()


def test_a_badge_registered_while_the_box_runs_signs_in_after_a_reload(tmp_path):
    path = table_config(tmp_path)
    path.write_text(re.sub(r'\[badges\]\nregistry = "[^"]*"', '[badges]\nregistry = "staff.toml"', path.read_text()))
    b = Box(path)
    try:
        assert len(b.daemon.config.badge_registry) == 0          # no badges.toml yet: nobody can sign in
        staff = BadgeRegistry()
        staff.add(BADGE_1042, "1042")
        staff.save(tmp_path / "staff.toml")                       # what `dealerbox badge register 1042` writes
        assert (tmp_path / "staff.toml").stat().st_mode & 0o777 == 0o640
        assert b.daemon.reload()                                  # SIGHUP
        b.table.hold_badge("1042")
        wait_for(lambda: b.daemon.engine.dealer == "1042", what="the sign-in after the reload")
        b.settle()
        assert dealer_events(b) == ["1042"] and b.decisions == []
    finally:
        b.close()
    (tmp_path / "staff.toml").chmod(0o600)
    staff.save(tmp_path / "staff.toml")
    assert (tmp_path / "staff.toml").stat().st_mode & 0o777 == 0o600, "a rewrite keeps the file's mode"


# -- recovery, the demo and the console --------------------------------------------------------

def test_the_last_dealer_event_is_believed_only_where_the_chain_vouches(tmp_path):
    directory = tmp_path / "journal"
    with Journal(directory, sync="none") as journal:
        for e in (Event(0.0, "dealer", dealer="1042"), Event(1.0, "new_hand", players=2),
                  Event(2.0, "dealer", dealer="2077"), Event(3.0, "new_hand", players=3),
                  Event(4.0, "button", name="hand_over"), Event(5.0, "new_hand", players=4)):
            journal.append(e)
    assert last_dealer_event(directory).dealer == "2077"
    assert last_dealer_event(directory, before=4).dealer == "2077"
    assert last_dealer_event(directory, before=3).dealer == "1042"
    assert last_dealer_event(directory, before=1) is None
    # A line changed on disk (the lines after it say so) is not believed.
    (path,) = directory.glob("journal-*.jsonl")
    path.write_bytes(path.read_bytes().replace(b'"dealer":"2077"', b'"dealer":"9999"'))
    assert last_dealer_event(directory).dealer == "1042"


def test_the_demo_rotates_two_dealers_at_the_table_between_hands(tmp_path):
    events = list(read_events(SESSION_FILE.read_text().splitlines()))
    assert [e.dealer for e in events if e.ev == "dealer"] == ["1042", "2077", "1042"]
    text = re.sub(r'state_dir = "[^"]*"', f'state_dir = "{tmp_path / "state"}"', DEFAULT_CONFIG.read_text())
    (tmp_path / "table.toml").write_text(text)
    config = load_config(tmp_path / "table.toml")
    clock = VirtualClock()
    with SimulatedTable(config) as table:
        daemon = Daemon(config, table=table, input_events=[], clock=clock)
        daemon.start()
        try:
            play_demo(table, daemon, clock)
        finally:
            daemon.close()
    journaled = [e.event for e in read_entries(config.state_dir / "journal")]
    assert [e.dealer for e in journaled if e.ev == "dealer"] == ["1042", "2077", "1042"]
    engine = HandEngine()
    for e in journaled:
        if e.ev == "dealer":
            assert engine.phase in NOT_PLAYING, "a dealer event is journaled between hands"
        engine.feed(e)
    assert engine.dealer == "1042"


def test_the_console_signs_a_dealer_in_with_a_key_and_the_record_replays(tmp_path, capsys):
    from dealerbox.tools.console.app import SimConsole
    from tests.tools.test_console import press_and_wait, wait_until
    from tests.tools.test_console import table_config as console_config

    record = tmp_path / "session.jsonl"
    app = SimConsole(console_config(tmp_path), record=record)
    seen = {}

    async def drive():
        async with app.run_test(size=(130, 50)) as pilot:
            s = app.session
            await pilot.press("b")
            await press_and_wait(pilot, app, "2", "0", "7", "7", "enter")
            await wait_until(pilot, lambda: s.daemon.engine.dealer == "2077", "dealer 2077 to sign in")
            await wait_until(pilot, lambda: s.table.glass()[-1].rstrip() == "Welcome 2077", "the greeting")
            await wait_until(pilot, lambda: app.glass and app.glass[-1].rstrip() == "Welcome 2077", "the screen")
            await pilot.press("b")
            await press_and_wait(pilot, app, "9", "9", "enter")        # nobody's badge: a note, nothing held
            seen["notes"] = list(s.notes)
            seen["leds"] = s.table.leds()

    asyncio.run(drive())
    assert any("dealer '99' has no badge" in n for n in seen["notes"])
    assert seen["leds"] == {"green": True, "amber": False, "red": False}
    recorded = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    assert [e["dealer"] for e in recorded if e["ev"] == "dealer"] == ["2077"]
    capsys.readouterr()
    assert cli.main(["replay", str(record)]) == 0


# -- a badge the room's registry revoked (issue 40) ---------------------------------------------

@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_revoked_badge_line_fits_one_line_of_the_glass(lang):
    from dealerbox.domain.decisions import Step

    m = load_messages(lang)
    step = Step("dealer.badge_revoked")
    assert 0 < len(m.lcd(step, 16)) <= 16 and 0 < len(m.lcd(step, 20)) <= 20 and m.text(step)


def test_a_revoked_badge_signs_nobody_in_during_or_between_hands_and_raises_nothing(box):
    """The readers judge badges with the map the room's registry gives them (a revoked badge
    maps to no dealer); the box takes the badge out of the polls, signs nobody in or out, and
    says so on the glass's last line, the LEDs as they were (tests/floor/test_room_registry.py
    shows the same with the floor)."""
    from dealerbox.service.room_registry import REVOKED_BADGE

    box.daemon.polling.badge_map = {**simulation_badges().by_uid(), BADGE_1042: REVOKED_BADGE}
    box.table.hold_badge("2077")
    wait_for(lambda: box.daemon.engine.dealer == "2077", what="the sign-in of 2077")
    box.settle()
    leds = led_changes(box)
    box.table.hold_badge(uid=BADGE_1042)
    wait_for(lambda: box.table.glass()[-1].rstrip() == "Badge revoked", what="the line on the glass")
    box.settle()
    assert box.daemon.engine.dealer == "2077" and dealer_events(box) == ["2077"]
    assert led_changes(box) == leds and box.decisions == []
    # During a hand: no card, no unknown tag, no dealer waiting for the hand's end.
    s = HandScript(seed=8)
    s.new_hand(3).deal(3)
    box.play(s)
    box.settle()
    time.sleep(box.config.presence.shoe_rearm_s + 0.2)
    box.table.hold_badge(uid=BADGE_1042)
    wait_for(lambda: box.table.glass()[-1].rstrip() == "Badge revoked", what="the line during the hand")
    s.events.clear()
    s.deal(3).button("hand_over")
    box.play(s)
    box.settle()
    assert raised(box) == [] and box.daemon.engine.dealer == "2077" and dealer_events(box) == ["2077"]
