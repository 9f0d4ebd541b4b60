"""``dealerbox sim`` through Textual's pilot, on the all-simulated table.

Keys go through the app; cards cross the emulated RF fields and buttons the
mock pins; the daemon reads them with the real drivers. Every wait on the
daemon's threads is a bounded polling loop. pytest-asyncio is not a
dependency: each test runs its pilot with ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import json
import queue
import re
import threading
import time
import types
from pathlib import Path

import pytest

from dealerbox import cli
from dealerbox.service.config import DEFAULT_CONFIG, load_config
from dealerbox.tools.console.app import ConsoleSession, SimConsole, with_real_devices
from dealerbox.tools.console.hands import parse_tag
from dealerbox.domain.cards import glass_symbols
from dealerbox.errors import ConfigError, EventError

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
SIZE = (130, 50)


def table_config(tmp_path: Path) -> Path:
    """The shipped all-simulated table, its state under *tmp_path* (profile and registry kept)."""
    text = DEFAULT_CONFIG.read_text()
    text = re.sub(r'state_dir = "[^"]*"', f'state_dir = "{tmp_path / "state"}"', text)
    path = tmp_path / "sim.toml"
    path.write_text(text)
    return path


async def wait_until(pilot, predicate, what: str, timeout: float = 5.0):
    """Let the app run until *predicate* holds; fail after *timeout* seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def press_and_wait(pilot, app, *keys: str, timeout: float = 10.0) -> None:
    """Press keys; wait until the dealer's thread has done every action queued so far."""
    await pilot.press(*keys)
    s = app.session
    await wait_until(pilot, lambda: s.actions_done >= s.submitted, f"the dealer's actions of {keys}", timeout)


@pytest.fixture(autouse=True)
def short_idle_waits(monkeypatch):
    """Cap Textual's wait for an idle process after each pilot key press at 0.1 s.

    The pilot waits (up to 1 s, twice per key) until the process uses almost no
    CPU; the daemon's reader threads poll the emulated chips every 10 ms, so it
    never is, and every key would cost about two seconds. The tests wait for
    what they need with their own bounded loops instead.
    """
    import textual._wait
    import textual.app
    import textual.pilot

    real = textual._wait.wait_for_idle

    async def capped(min_sleep: float = textual._wait.SLEEP_GRANULARITY, max_sleep: float = 1) -> None:
        await real(min_sleep, min(max_sleep, 0.1))

    monkeypatch.setattr(textual.app, "wait_for_idle", capped)
    monkeypatch.setattr(textual.pilot, "wait_for_idle", capped)


def dealt(session) -> int:
    return sum(1 for place in session.where().values() if place.startswith("seat"))


def replay_decisions(capsys, path: Path) -> list[dict]:
    capsys.readouterr()
    assert cli.main(["replay", str(path)]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_an_exposed_third_card_shows_on_the_glass_and_the_record_replays(tmp_path, capsys):
    record = tmp_path / "session.jsonl"
    app = SimConsole(table_config(tmp_path), record=record)
    seen: dict = {}

    async def drive():
        async with app.run_test(size=SIZE) as pilot:
            s = app.session
            await press_and_wait(pilot, app, "1")          # NEW HAND, six players
            await wait_until(pilot, lambda: s.daemon.engine.phase == "deal", "the hand to start")
            for n in (1, 2, 3):
                await press_and_wait(pilot, app, "d")
                await wait_until(pilot, lambda: dealt(s) == n, f"hole card {n} to be dealt")
            third = s.last_drawn.card
            await press_and_wait(pilot, app, "3")          # EXPOSED
            await wait_until(pilot, lambda: "EXPOSED CARD" in s.table.glass()[0], "the glass to say EXPOSED CARD")
            await wait_until(pilot, lambda: "EXPOSED CARD" in app.glass[0], "the screen to show the glass")
            seen["glass"] = list(app.glass)
            seen["leds"] = s.table.leds()
            seen["third"] = (third, s.where()[third])
            # The deal goes on: nine more hole cards and the exposed card's replacement.
            for _ in range(10):
                await press_and_wait(pilot, app, "d")
            await wait_until(pilot, lambda: app.glass and app.glass[0].endswith(" 3/4"), "step 3 on the screen")
            seen["step3"] = list(app.glass)
            seen["table"] = str(app.query_one("#table").content)
            await press_and_wait(pilot, app, "5")          # ACK: the exposed card is the burn
            await wait_until(pilot, lambda: " 4/4" in s.table.glass()[0], "step 4 of the correction")
            seen["final"] = s.daemon.engine.decision

    asyncio.run(drive())
    assert seen["glass"][0].startswith("EXPOSED CARD") and seen["glass"][0].endswith("1/4")
    assert seen["leds"] == {"green": False, "amber": True, "red": False}
    assert seen["third"][1] == "burn"                      # the exposed card becomes the burn
    assert seen["step3"][0].endswith("3/4")
    assert "seat 1 " in seen["table"] and "burns  " + seen["third"][0] in seen["table"]
    final = seen["final"]
    assert (final.irregularity, final.step) == ("EXPOSED_DEAL", 3)

    assert record.exists()
    decisions = replay_decisions(capsys, record)
    assert [d["irregularity"] for d in decisions if d["irregularity"]][0] == "EXPOSED_DEAL"
    assert decisions[-1]["irregularity"] == "EXPOSED_DEAL" and decisions[-1]["step"] == final.step
    assert decisions[-1]["cards"] == [seen["third"][0]]


def test_a_chosen_card_typed_in_the_prompt_does_not_trigger_the_deal_key(tmp_path):
    app = SimConsole(table_config(tmp_path), record=tmp_path / "r.jsonl")
    seen: dict = {}

    async def drive():
        async with app.run_test(size=SIZE) as pilot:
            s = app.session
            await press_and_wait(pilot, app, "1")
            await wait_until(pilot, lambda: s.daemon.engine.phase == "deal", "the hand to start")
            await pilot.press("c")                          # the prompt opens; "d" is typed into it
            await press_and_wait(pilot, app, "k", "d", "enter")
            await wait_until(pilot, lambda: dealt(s) == 1, "the chosen card to be dealt")
            await pilot.pause(0.3)
            seen["where"] = s.where()["Kd"]
            seen["dealt"] = dealt(s)
            # A bad card code is refused with a note and draws nothing.
            await pilot.press("c", "z", "z", "enter")
            await pilot.pause(0.3)
            seen["dealt_after_bad"] = dealt(s)
            seen["notes"] = list(s.notes)
            await press_and_wait(pilot, app, "g")             # a card of deck B: the hand is void
            await wait_until(pilot, lambda: s.daemon.engine.decision.irregularity == "FOREIGN_CARD", "FOREIGN_CARD")
            await wait_until(pilot, lambda: s.table.leds().get("red"), "the red LED")
            seen["void"] = s.daemon.engine.decision.verdict

    asyncio.run(drive())
    assert seen["where"] == "seat1"
    assert seen["dealt"] == 1 and seen["dealt_after_bad"] == 1
    assert any("'zz' is not a card" in n for n in seen["notes"])
    assert seen["void"] == "void"


def test_board_cards_unplugging_and_a_joker(tmp_path, capsys):
    record = tmp_path / "board.jsonl"
    app = SimConsole(table_config(tmp_path), record=record)
    seen: dict = {}

    async def drive():
        async with app.run_test(size=SIZE) as pilot:
            s = app.session
            await press_and_wait(pilot, app, "l", "2", "enter")          # two players
            await press_and_wait(pilot, app, "1")
            await wait_until(pilot, lambda: s.daemon.engine.players == 2, "a two-player hand")
            for _ in range(4):
                await press_and_wait(pilot, app, "d")
            await wait_until(pilot, lambda: dealt(s) == 4, "the deal")
            await press_and_wait(pilot, app, "2", "x", "f", "f", "f")   # ROUND DONE, burn, three board cards
            await wait_until(pilot, lambda: list(s.where().values()).count("board") == 3, "the flop on the board")
            seen["phase_flop"] = s.daemon.engine.decision.verdict
            await press_and_wait(pilot, app, "u")                        # unplug the board reader
            await wait_until(pilot, lambda: s.daemon.stats.reader_faults >= 1, "the reader fault")
            await wait_until(pilot, lambda: "board UNPLUGGED" in str(app.query_one("#table").content),
                             "the screen to show the unplugged reader")
            await press_and_wait(pilot, app, "u")                        # and back
            await wait_until(pilot, lambda: "board" not in s.daemon.engine.faulted_readers
                             and "board" in s.daemon.readers, "the reader to come back")
            await press_and_wait(pilot, app, "U")                        # the shoe reader, out and back
            await press_and_wait(pilot, app, "U")
            seen["unplugged_notes"] = [n for n in s.notes if "the shoe reader" in n]
            await wait_until(pilot, lambda: "shoe" in s.daemon.readers, "the shoe reader to come back")
            await press_and_wait(pilot, app, "j")                        # a joker leaves the shoe
            await wait_until(pilot, lambda: s.daemon.engine.decision.irregularity == "JOKER", "the joker")
            seen["leds"] = s.table.leds()
            await pilot.press("i", "1", "escape")                         # a prompt given up draws nothing
            seen["prompt_shown"] = app.query_one("#prompt").display
            await pilot.press("w")                                        # the record, written while running
            seen["written"] = record.read_text().count("\n")

    asyncio.run(drive())
    assert seen["phase_flop"] == "ok"
    assert len(seen["unplugged_notes"]) == 2 and "unplugged" in seen["unplugged_notes"][0]
    assert seen["prompt_shown"] is False
    assert seen["written"] > 10
    assert seen["leds"]["amber"]
    events = [json.loads(line) for line in record.read_text().splitlines()]
    kinds = [e["ev"] for e in events]
    assert "reader_fault" in kinds and "reader_ok" in kinds
    assert [e["players"] for e in events if e["ev"] == "new_hand"] == [2]
    decisions = replay_decisions(capsys, record)
    assert decisions[-1]["irregularity"] == "JOKER"


def test_a_scenario_plays_step_by_step_and_its_expectation_is_met(tmp_path):
    scenario = SCENARIOS / "exposed_deal_full_hand_one_by_one.jsonl"
    app = SimConsole(table_config(tmp_path), record=tmp_path / "sc.jsonl", scenario=scenario)
    seen: dict = {}

    async def drive():
        async with app.run_test(size=SIZE) as pilot:
            s = app.session
            for _ in range(8):          # new_hand, five cards, EXPOSED, then the expectation line
                await press_and_wait(pilot, app, "s")
            await wait_until(pilot, lambda: s.scenario_results, "the expectation to be checked")
            seen["results"] = list(s.scenario_results)
            seen["glass"] = s.table.glass()

    asyncio.run(drive())
    assert seen["results"] == [(9, [])]
    assert seen["glass"][0].startswith("EXPOSED CARD")


@pytest.mark.parametrize("name", ["duplicate_card_in_deal", "unknown_tag_floor_confirms_foreign"])
def test_a_scenario_plays_out_at_the_table_to_its_first_expectation(tmp_path, name):
    """A duplicate needs the shoe reader to forget the first read; MISDEAL is a long FLOOR press here."""
    session = ConsoleSession(load_config(table_config(tmp_path)), record=tmp_path / "r.jsonl",
                             scenario=SCENARIOS / f"{name}.jsonl")
    session.start()
    dealer = threading.Thread(target=session.dealer_loop, daemon=True)
    dealer.start()
    try:
        end = time.monotonic() + 60
        while not session.scenario_results and time.monotonic() < end:
            session.submit("scenario_step")
            while session.actions_done < session.submitted and time.monotonic() < end:
                time.sleep(0.02)
        assert session.scenario_results, "no expectation reached in time"
    finally:
        session.close()
        dealer.join(timeout=5)
    assert [fails for _, fails in session.scenario_results] == [[]]
    assert not dealer.is_alive()


def test_a_scenario_brings_its_profile(tmp_path):
    config = load_config(table_config(tmp_path))
    session = ConsoleSession(config, scenario=SCENARIOS / "c40_premature_turn_player_acts.jsonl")
    assert session.config.profile.name == "cz-c40" and config.profile.name == "tda-2019"
    assert session.scenario.header["raises"] and session.scenario.items[0][0] == 2
    session.close()                                # never started: closing is still safe
    assert session.record_path.parent == config.state_dir / "sim"
    assert session.replay_command().endswith(" --profile cz-c40")


def test_parse_tag_reads_what_a_technician_types():
    assert parse_tag("ah").card == "Ah"
    assert parse_tag("10h").card == "Th"
    assert parse_tag("9c/B").kwargs() == {"card": "9c", "deck": "B", "uid": None}
    assert parse_tag("Joker").card == "joker"
    assert parse_tag("04ffffffffff01").uid == "04FFFFFFFFFF01"
    assert parse_tag("uid:04FFFFFFFFFF01").label == "uid:04FFFFFFFFFF01"
    assert parse_tag("Ah/").kwargs() == {"card": "Ah", "deck": None, "uid": None}
    for bad in ("", "1x", "zz", "Ah/B/C", "04ZZ"):
        with pytest.raises(EventError):
            parse_tag(bad)


def test_glass_symbols_show_the_suit_glyph_slots():
    assert glass_symbols("A\x02 K\x03 2\x00 9\x01") == "A\u2665 K\u2660 2\u2663 9\u2666"
    assert glass_symbols("x\x05y") == "x\u25afy"


def test_real_devices_flip_the_panel_and_lcd_but_never_the_shoe(tmp_path):
    config = load_config(table_config(tmp_path))
    real = with_real_devices(config, ["lcd", "panel", "board"])
    assert (real.lcd.backend, real.panel.backend, real.readers["board"].backend) == ("real", "real", "real")
    assert real.readers["shoe"].backend == "sim" and real.gpio_factory == "auto"
    assert config.lcd.backend == "sim"            # the loaded config is left alone
    with pytest.raises(ConfigError, match="shoe"):
        with_real_devices(config, ["shoe"])
    with pytest.raises(ConfigError, match="nosuch"):
        with_real_devices(config, ["nosuch"])


def test_the_dealer_waits_as_long_as_the_table_file_says(tmp_path, monkeypatch):
    """The console's waits follow [presence] of the table file (they once always used 0.5 s)."""
    path = table_config(tmp_path)
    path.write_text(re.sub(r"shoe_rearm_s = [0-9.]+", "shoe_rearm_s = 1.2",
                           re.sub(r"board_dropout_s = [0-9.]+", "board_dropout_s = 0.9", path.read_text())))
    config = load_config(path)
    assert (config.presence.shoe_rearm_s, config.presence.board_dropout_s) == (1.2, 0.9)
    session = ConsoleSession(config, record=tmp_path / "rec.jsonl")
    waits = []
    monkeypatch.setattr(time, "sleep", waits.append)   # no thread runs: the session is not started
    session._left_shoe["04AABBCCDDEEFF"] = time.monotonic()
    session._wait_for_rearm("04AABBCCDDEEFF")
    assert len(waits) == 1 and 1.2 < waits[0] <= 1.35
    session.daemon = types.SimpleNamespace(queue=queue.Queue())   # a daemon with nothing left to do
    waits.clear()
    assert session.settle(timeout=0.1)
    assert waits[0] == pytest.approx(1.2 + 0.15)


# -- its own state, SIGTERM, no terminal (issue 11) ------------------------------------

def test_the_console_has_its_own_state_unless_told(tmp_path):
    config = load_config(table_config(tmp_path))
    session = ConsoleSession(config)
    assert session.config.state_dir == config.state_dir / "sim"
    assert session.record_path.parent == config.state_dir / "sim"
    session.close()
    told = ConsoleSession(config, state_dir=tmp_path / "elsewhere")
    assert told.config.state_dir == tmp_path / "elsewhere"
    told.close()


def test_sim_without_a_terminal_refuses_in_one_line(tmp_path, capsys):
    """Under pytest stdin is not a terminal: the console must not start at all."""
    assert cli.main(["sim", "--config", str(table_config(tmp_path))]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "needs a terminal" in err
    assert not (tmp_path / "state").exists()


def test_sim_on_a_terminal_stops_on_sigterm_and_keeps_out_of_runs_state(tmp_path):
    """The console journals under state_dir/sim, never in the journal a
    `dealerbox run` on the same config keeps; SIGTERM ends it as q does."""
    import os
    import sys

    from tests.conftest import run_in_pty

    config = table_config(tmp_path)
    dealerbox = Path(sys.executable).with_name("dealerbox")
    result = run_in_pty([str(dealerbox), "sim", "--config", str(config)], until="LEDs", cwd=tmp_path,
                        env={**os.environ, "TERM": "xterm-256color"})
    assert result.seen, result.text[-2000:]
    assert result.code == 0, result.text[-2000:]
    state = tmp_path / "state"
    assert (state / "sim" / "journal").is_dir()
    assert list((state / "sim").glob("session-*.jsonl"))
    assert not (state / "journal").exists()
