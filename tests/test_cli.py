"""The ``dealerbox`` command: ``replay`` as CONTRACT.md specifies it, and ``demo``."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dealerbox.cli import main
from dealerbox.domain.messages import MESSAGES_DIR
from dealerbox.domain.decks import DeckRegistry, simulated_uid, simulation_registry
from dealerbox.resources import demo_session
from hardware_sim.script import HandScript

DECISION_KEYS = {"t", "verdict", "irregularity", "cards", "rule", "steps", "step", "phase"}
VERDICTS = {"ok", "correct", "misdeal", "void", "floor"}
UNKNOWN_UID = "04DEADBEEF0001"
DEMO_SESSION = demo_session()


def write_events(path, events):
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def replay(capsys, *args):
    """Run ``dealerbox replay`` in-process; return (exit code, decisions, stderr)."""
    code = main(["replay", *map(str, args)])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def assert_contract(decision):
    assert set(decision) == DECISION_KEYS
    assert isinstance(decision["t"], (int, float)) and not isinstance(decision["t"], bool)
    assert decision["verdict"] in VERDICTS
    assert decision["irregularity"] is None or isinstance(decision["irregularity"], str)
    assert isinstance(decision["cards"], list) and all(isinstance(c, str) for c in decision["cards"])
    assert isinstance(decision["rule"], str)
    assert isinstance(decision["steps"], list) and all(isinstance(s, str) and s for s in decision["steps"])
    assert isinstance(decision["step"], int) and not isinstance(decision["step"], bool)
    assert 0 <= decision["step"] <= len(decision["steps"])
    assert isinstance(decision["phase"], str) and decision["phase"]


def exposed_fifth_card_hand():
    """Four players; the dealer exposes deal card 5 and finishes the deal."""
    s = HandScript(seed=3)
    s.new_hand(4).deal(5).button("exposed").deal(3)
    return s


def session_file(tmp_path):
    """The bundled demo session, or a session of our own while the lead is still writing it."""
    if DEMO_SESSION.exists():
        return DEMO_SESSION
    s = HandScript(seed=5)
    s.full_hand(6)
    s.new_hand(4).deal(5).button("exposed").deal(3)
    return write_events(tmp_path / "session.jsonl", s.events)


@pytest.fixture
def exposed_file(tmp_path):
    return write_events(tmp_path / "exposed.jsonl", exposed_fifth_card_hand().events)


def test_replay_prints_contract_decisions(capsys, exposed_file):
    code, decisions, err = replay(capsys, exposed_file)
    assert code == 0
    assert err == ""
    assert decisions, "an exposed card must give a decision"
    for d in decisions:
        assert_contract(d)
    first = decisions[0]
    fifth = exposed_fifth_card_hand().events[5]["card"]
    assert first["verdict"] == "correct"
    assert first["irregularity"] == "EXPOSED_DEAL"
    assert first["cards"] == [fifth]
    assert first["t"] == 3.5  # the exposed button's time
    assert first["phase"] == "deal"
    assert first["step"] == 0 and len(first["steps"]) >= 2
    assert "000 par.1" in first["rule"]
    # The box moves on as the dealer finishes the deal.
    assert [d["step"] for d in decisions] == sorted(d["step"] for d in decisions)
    assert decisions[-1]["step"] >= 1


def test_replay_stdout_holds_only_json_lines(capsys, exposed_file):
    main(["replay", str(exposed_file)])
    out = capsys.readouterr().out
    assert out.endswith("\n")
    for line in out.splitlines():
        assert line.startswith("{") and line.endswith("}")
        json.loads(line)


def test_replay_as_a_subprocess_matches_main(capsys, tmp_path, exposed_file):
    code, decisions, _ = replay(capsys, exposed_file)
    assert code == 0
    proc = subprocess.run([sys.executable, "-m", "dealerbox.cli", "replay", str(exposed_file)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    got = [json.loads(line) for line in proc.stdout.splitlines()]
    assert got == decisions
    for d in got:
        assert_contract(d)


def test_a_clean_hand_prints_nothing(capsys, tmp_path):
    s = HandScript(seed=11)
    s.full_hand(6)
    code, decisions, err = replay(capsys, write_events(tmp_path / "clean.jsonl", s.events))
    # A decision is written only when something changes: a clean hand prints nothing.
    assert (code, decisions, err) == (0, [], "")


# -- profiles ------------------------------------------------------------------

def premature_flop():
    """The flop is dealt before the first betting round is done (the first card is its burn)."""
    s = HandScript(seed=3)
    s.new_hand(4).deal()
    s.flop(spread=True)
    return s


def first_with(decisions, irregularity):
    return next(d for d in decisions if d["irregularity"] == irregularity)


def test_profiles_answer_a_premature_flop_differently(capsys, tmp_path):
    path = write_events(tmp_path / "premature.jsonl", premature_flop().events)
    code, tda, _ = replay(capsys, path, "--profile", "tda-2019")
    assert code == 0
    code, c40, _ = replay(capsys, path, "--profile", "cz-c40")
    assert code == 0
    assert tda != c40
    a, b = first_with(tda, "PREMATURE_FLOP"), first_with(c40, "PREMATURE_FLOP")
    assert a["verdict"] == b["verdict"] == "correct"
    assert a["steps"] != b["steps"]
    assert a["rule"].startswith("002 OP5-A")
    assert b["rule"].startswith("004")
    assert any("NO burn" in step for step in a["steps"])
    assert any("skipped player" in step for step in b["steps"])
    # The default profile is tda-2019.
    code, default, _ = replay(capsys, path)
    assert default == tda


def test_a_profile_file_by_path(capsys, tmp_path):
    from dealerbox.rules.profiles import RULES_DIR

    path = write_events(tmp_path / "premature.jsonl", premature_flop().events)
    _, by_name, _ = replay(capsys, path, "--profile", "cz-c40")
    code, by_path, _ = replay(capsys, path, "--profile", RULES_DIR / "cz-c40.toml")
    assert code == 0 and by_path == by_name


def test_an_unknown_profile_exits_2(capsys, exposed_file):
    code, decisions, err = replay(capsys, exposed_file, "--profile", "house-rules")
    assert code == 2
    assert decisions == []
    assert "house-rules" in err and "tda-2019" in err


def test_c40_premature_flop_one_card_at_a_time_raises_no_missed_burn(capsys, tmp_path):
    # Regression: the second card of this flop used to raise a false MISSED_BURN under cz-c40.
    s = HandScript(seed=3)
    s.new_hand(4).deal()
    s.flop()  # burn, then card, board, card, board, card, board
    path = write_events(tmp_path / "premature_one_by_one.jsonl", s.events)
    code, decisions, _ = replay(capsys, path, "--profile", "cz-c40")
    assert code == 0
    raised = {d["irregularity"] for d in decisions} - {None}
    assert raised == {"EXTRA_CARD", "PREMATURE_FLOP"}


def test_decision_cards_name_each_card_once(capsys, tmp_path):
    # Regression: a spread premature flop used to list a board card twice.
    path = write_events(tmp_path / "premature.jsonl", premature_flop().events)
    code, decisions, _ = replay(capsys, path)
    assert code == 0
    for d in decisions:
        assert len(d["cards"]) == len(set(d["cards"])), d


# -- languages -----------------------------------------------------------------

@pytest.mark.parametrize("lang", ["cs", "de", "sk"])
def test_lang_changes_only_the_steps(capsys, exposed_file, lang):
    if not (MESSAGES_DIR / f"{lang}.toml").exists():
        pytest.skip(f"{lang}.toml is not written yet")
    _, en, _ = replay(capsys, exposed_file, "--lang", "en")
    code, other, err = replay(capsys, exposed_file, "--lang", lang)
    assert code == 0, err
    assert len(other) == len(en)
    for a, b in zip(en, other):
        assert_contract(b)
        assert a["steps"] != b["steps"]
        assert {k: v for k, v in a.items() if k != "steps"} == {k: v for k, v in b.items() if k != "steps"}


def test_lang_de_speaks_german(capsys, exposed_file):
    if not (MESSAGES_DIR / "de.toml").exists():
        pytest.skip("de.toml is not written yet")
    from dealerbox.domain.messages import load_messages

    de = load_messages("de")
    code, decisions, _ = replay(capsys, exposed_file, "--lang", "de")
    assert code == 0
    assert decisions[0]["steps"][0] == de.steps["exposed.finish_deal"]["text"]


def test_unknown_language_is_refused(capsys, exposed_file):
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(exposed_file), "--lang", "fr"])
    assert exc.value.code == 2
    assert "fr" in capsys.readouterr().err


# -- bad input ---------------------------------------------------------------

def test_invalid_line_3_exits_2_after_the_decisions_before_it(capsys, tmp_path):
    good = [
        {"t": 0.0, "ev": "new_hand", "players": 2},
        {"t": 0.5, "ev": "board_on", "card": "Ah"},  # not from the shoe: a decision
    ]
    after = {"t": 2.0, "ev": "board_on", "card": "Kd"}  # would give another decision
    path = tmp_path / "broken.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in good)
                    + '{"t": 1.0, "ev": "shoe", "card": "1x"}\n' + json.dumps(after) + "\n", encoding="utf-8")
    _, expected, _ = replay(capsys, write_events(tmp_path / "good.jsonl", good))
    assert expected, "the lines before the bad one must give a decision"

    code, decisions, err = replay(capsys, path)
    assert code == 2
    assert "line 3" in err
    assert str(path) in err
    assert decisions == expected


@pytest.mark.parametrize("line3, problem", [
    ("{not json", "not JSON"),
    ('{"t": 0.1, "ev": "tick"}', "'t'"),  # time goes back
    ('{"t": 1.0, "ev": "new_hand", "players": 11}', "'players'"),
    ('{"t": 1.0, "ev": "shoe", "uid": "04A3C"}', "even number of hex digits"),
    ('{"t": 1.0, "ev": "tick", "note": "x"}', "unknown key"),
])
def test_each_kind_of_bad_line_names_line_3(capsys, tmp_path, line3, problem):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"t": 0.0, "ev": "new_hand", "players": 2}\n{"t": 0.5, "ev": "tick"}\n' + line3 + "\n",
                    encoding="utf-8")
    code, decisions, err = replay(capsys, path)
    assert code == 2
    assert "line 3" in err and problem in err
    assert decisions == []


def test_bad_line_as_a_subprocess(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"t": 0.0, "ev": "new_hand", "players": 2}\n{"t": 0.5, "ev": "board_on", "card": "Ah"}\n'
                    '{"t": 1, "ev": "boom"}\n{"t": 2, "ev": "board_on", "card": "Kd"}\n', encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "dealerbox.cli", "replay", str(path)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2
    assert "line 3" in proc.stderr and "'ev'" in proc.stderr
    assert "Traceback" not in proc.stderr
    # Standard output holds the decision of line 2 and nothing else.
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [(d["t"], d["irregularity"], d["cards"]) for d in out] == [(0.5, "BOARD_NOT_FROM_SHOE", ["Ah"])]


def test_a_missing_file_exits_2(capsys, tmp_path):
    path = tmp_path / "no-such-session.jsonl"
    code, decisions, err = replay(capsys, path)
    assert code == 2
    assert decisions == []
    assert "no-such-session.jsonl" in err


def test_a_directory_exits_2(capsys, tmp_path):
    code, decisions, err = replay(capsys, tmp_path)
    assert code == 2 and decisions == []
    assert "Traceback" not in err and err.startswith("dealerbox replay:")


def test_a_bad_profile_file_exits_2_naming_file_and_key(capsys, tmp_path, exposed_file):
    from dealerbox.rules.profiles import RULES_DIR

    bad = tmp_path / "house.toml"
    bad.write_text((RULES_DIR / "tda-2019.toml").read_text(encoding="utf-8")
                   .replace('procedure = "scramble_pick_burn"', 'procedure = "deal_it_again"'), encoding="utf-8")
    code, decisions, err = replay(capsys, exposed_file, "--profile", bad)
    assert code == 2 and decisions == []
    assert "house.toml" in err and "rules.FOUR_CARD_FLOP.procedure" in err and "scramble_pick_burn" in err


def test_a_line_that_is_not_utf8_exits_2(capsys, tmp_path):
    # Regression: this used to escape as UnicodeDecodeError (a traceback, exit 1).
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"t": 0.0, "ev": "new_hand", "players": 2}\n{"t": 0.5, "ev": "board_on", "card": "Ah"}\n'
                     b'{"t": 1, "ev": "tick", "x\xff": 1}\n')
    code, decisions, err = replay(capsys, path)
    assert code == 2
    assert "line 3" in err and "UTF-8" in err
    assert "Traceback" not in err
    assert [d["irregularity"] for d in decisions] == ["BOARD_NOT_FROM_SHOE"], "line 2 is answered first"


def test_an_empty_file_is_read_to_the_end(capsys, tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    assert replay(capsys, path) == (0, [], "")


def test_an_unknown_tag_is_answered_not_a_crash(capsys, tmp_path):
    events = [{"t": 0.0, "ev": "new_hand", "players": 3},
              {"t": 0.5, "ev": "shoe", "uid": UNKNOWN_UID.lower()},
              {"t": 1.0, "ev": "tick"}]
    code, decisions, err = replay(capsys, write_events(tmp_path / "unknown.jsonl", events))
    assert code == 0, err
    d = first_with(decisions, "UNKNOWN_TAG")
    assert_contract(d)
    assert d["verdict"] == "floor"
    assert d["cards"] == [f"uid:{UNKNOWN_UID}"]
    assert d["t"] == 0.5
    assert "001 r3" in d["rule"]


def test_a_known_uid_resolves_through_the_simulation_registry(capsys, tmp_path):
    uid = simulation_registry().uids_of("A", "Ah")[0]
    events = [{"t": 0.0, "ev": "new_hand", "players": 2}, {"t": 0.5, "ev": "board_on", "uid": uid}]
    code, decisions, _ = replay(capsys, write_events(tmp_path / "uid.jsonl", events))
    assert code == 0
    assert decisions[0]["irregularity"] == "BOARD_NOT_FROM_SHOE"
    assert decisions[0]["cards"] == ["Ah"]


def test_a_registry_file_resolves_uids(capsys, tmp_path):
    reg = DeckRegistry(active="A")
    for card, uid in (("Ah", UNKNOWN_UID), ("Kd", "04000000000002")):
        reg.add(uid, "A", card)
    reg_path = tmp_path / "decks.toml"
    reg.save(reg_path)
    events = [{"t": 0.0, "ev": "new_hand", "players": 2}, {"t": 0.5, "ev": "board_on", "uid": UNKNOWN_UID}]
    path = write_events(tmp_path / "uid.jsonl", events)
    _, builtin, _ = replay(capsys, path)
    assert builtin[0]["irregularity"] == "UNKNOWN_TAG"
    code, with_file, err = replay(capsys, path, "--registry", reg_path)
    assert code == 0, err
    assert with_file[0]["irregularity"] == "BOARD_NOT_FROM_SHOE"
    assert with_file[0]["cards"] == ["Ah"]


def test_a_bad_registry_file_exits_2_naming_it(capsys, tmp_path, exposed_file):
    reg_path = tmp_path / "decks.toml"
    reg_path.write_text('active = "A"\n[decks.A.tags]\n04A3C = "Ah"\n', encoding="utf-8")
    code, decisions, err = replay(capsys, exposed_file, "--registry", reg_path)
    assert code == 2
    assert decisions == []
    assert "decks.toml" in err and "04A3C" in err


# -- demo --------------------------------------------------------------------------

def lcd_boxes(out, cols=20):
    """The LCD frames in the demo's output, as lists of the glass lines."""
    lines = out.splitlines()
    boxes = []
    for i, line in enumerate(lines):
        if line.startswith("+" + "-" * cols + "+  LED: "):
            body = lines[i + 1:i + 5]
            assert lines[i + 5] == "+" + "-" * cols + "+"
            boxes.append([row[1:-1] for row in body])
            assert all(row.startswith("|") and row.endswith("|") and len(row) == cols + 2 for row in body)
    return boxes


def run_demo(tmp_path, *args):
    """Run ``dealerbox demo`` as a process: the panel frames go to the real stdout."""
    import os

    proc = subprocess.run([sys.executable, "-m", "dealerbox.cli", "demo", *map(str, args)],
                          capture_output=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


def test_demo_prints_lcd_boxes_for_its_own_file(tmp_path, exposed_file):
    code, out, err = run_demo(tmp_path, exposed_file)
    assert code == 0, err
    boxes = lcd_boxes(out)
    assert boxes
    assert boxes[0][0].startswith("EXPOSED CARD")
    assert boxes[0][0].endswith("1/4")
    assert "LED: AMBER *beep*" in out
    # The suit glyph slots are shown as suit symbols on a terminal.
    assert not any(ch in out for ch in "\x00\x01\x02\x03")
    assert any(sym in out for sym in "\u2663\u2666\u2665\u2660")
    assert "rule: 000 par.1" in out
    # Not a terminal: no colour codes.
    assert "\033[" not in out
    # Each frame comes right after the line saying what caused it.
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("+--"))
    assert lines[first - 1].startswith("t=   3.50  button exposed")


def test_demo_of_the_bundled_session(tmp_path):
    args = [] if DEMO_SESSION.exists() else [session_file(tmp_path)]
    code, out, err = run_demo(tmp_path, *args)
    assert code == 0, err
    boxes = lcd_boxes(out)
    assert len(boxes) >= 2
    leds = {line.split("LED: ")[1].split(" *")[0] for line in out.splitlines() if "LED: " in line}
    assert leds <= {"GREEN", "AMBER", "RED", "RED (blinking)"}
    assert "AMBER" in leds
    assert "=== hand 1:" in out


def test_demo_frames_follow_a_redirected_stdout(tmp_path, exposed_file):
    # Regression: show_panel bound sys.stdout at import, so frames went to the old stream.
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["demo", str(exposed_file)]) == 0
    out = buf.getvalue()
    assert "t=   3.50  button exposed" in out
    assert lcd_boxes(out)


def test_demo_with_a_bad_line_exits_2(capsys, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"t": 0.0, "ev": "new_hand", "players": 2}\n{"t": 1, "ev": "boom"}\n', encoding="utf-8")
    assert main(["demo", str(path)]) == 2
    assert "line 2" in capsys.readouterr().err


def test_demo_with_a_missing_file_exits_2(capsys, tmp_path):
    # Regression: this used to let FileNotFoundError out.
    assert main(["demo", str(tmp_path / "no-such-session.jsonl")]) == 2
    assert "no-such-session.jsonl" in capsys.readouterr().err


# -- the contract on a whole session ------------------------------------------------

def test_replaying_the_demo_session_is_deterministic_and_follows_the_contract(capsys, tmp_path):
    path = session_file(tmp_path)
    code, first, err = replay(capsys, path)
    assert (code, err) == (0, "")
    code, second, _ = replay(capsys, path)
    assert second == first
    assert first
    times = {json.loads(line)["t"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
    for d in first:
        assert_contract(d)
        assert d["t"] in times, "a decision's t is the t of the event that caused it"
    assert [d["t"] for d in first] == sorted(d["t"] for d in first)
    assert any(d["irregularity"] for d in first)


def test_decision_to_dict_has_the_contract_keys_and_speaks_the_language():
    from dealerbox.rules.engine import Decision, Step, decision_to_dict
    from dealerbox.domain.messages import load_messages

    en = load_messages("en")
    steps = (Step("extra.stop", (("card", "Ah"),)), Step("extra.return_on_top", (("card", "Ah"),)))
    d = Decision(5.0, "correct", "EXTRA_CARD", ("Ah",), "000 par.6", steps, 1, "preflop")
    out = decision_to_dict(d, en)
    assert_contract(out)
    assert out == {"t": 5.0, "verdict": "correct", "irregularity": "EXTRA_CARD", "cards": ["Ah"],
                   "rule": "000 par.6", "steps": [en.text(s) for s in steps], "step": 1, "phase": "preflop"}
    assert "A\u2665" in out["steps"][0]  # people read suit symbols, not LCD glyph slots
    assert json.loads(json.dumps(out)) == out


def test_a_list_as_ev_exits_2_naming_the_line(capsys, tmp_path):
    path = tmp_path / "list.jsonl"
    path.write_text('{"t": 0.0, "ev": "new_hand", "players": 2}\n{"t": 1, "ev": []}\n', encoding="utf-8")
    code, decisions, err = replay(capsys, path)
    assert code == 2
    assert "line 2" in err


@pytest.mark.parametrize("lang", ["en", "cs", "de", "sk"])
def test_demo_in_every_language(capsys, tmp_path, lang):
    if not (MESSAGES_DIR / f"{lang}.toml").exists():
        pytest.skip(f"{lang}.toml is not written yet")
    assert main(["demo", str(session_file(tmp_path)), "--lang", lang]) == 0
    out = capsys.readouterr().out
    boxes = lcd_boxes(out)
    assert len(boxes) >= 2
    assert all(len(row) == 20 for box in boxes for row in box)


# -- --version, help texts, the default config, fresh installs, deck commands --

def test_version_names_the_data_it_reads(capsys):
    from dealerbox import __version__
    from dealerbox.rules.profiles import RULES_DIR

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"dealerbox {__version__}"
    assert f"profiles: {RULES_DIR}" in out and f"messages: {MESSAGES_DIR}" in out


def test_every_option_and_command_has_help_text():
    import argparse

    from dealerbox.cli import build_parser

    empty = []

    def walk(parser, where):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    if not choice.help:
                        empty.append(f"{where} {choice.dest}")
                for name, sub in action.choices.items():
                    walk(sub, f"{where} {name}")
            elif not action.help or action.help == argparse.SUPPRESS:
                empty.append(f"{where} {action.option_strings or action.dest}")

    walk(build_parser(), "dealerbox")
    assert empty == []


def sim_config(tmp_path, registry='"builtin:sim"'):
    from dealerbox.service.config import DEFAULT_CONFIG

    text = DEFAULT_CONFIG.read_text()
    text = re.sub(r'state_dir = "[^"]*"', f'state_dir = "{tmp_path / "state"}"', text)
    text = re.sub(r'registry = "[^"]*"', f"registry = {registry}", text)
    path = tmp_path / "table.toml"
    path.write_text(text)
    return path


def test_the_default_config_is_the_environment_then_etc_then_the_shipped_one(tmp_path, monkeypatch):
    from dealerbox import resources
    from dealerbox.service.commands import config_path
    from dealerbox.service.config import DEFAULT_CONFIG

    monkeypatch.delenv("DEALERBOX_CONFIG", raising=False)
    monkeypatch.setattr(resources, "INSTALLED_CONFIG", tmp_path / "etc" / "table.toml")
    assert config_path() == DEFAULT_CONFIG
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "table.toml").write_text("")
    assert config_path() == tmp_path / "etc" / "table.toml"
    monkeypatch.setenv("DEALERBOX_CONFIG", str(tmp_path / "mine.toml"))
    assert config_path() == tmp_path / "mine.toml"
    assert config_path("given.toml") == Path("given.toml")


def test_run_and_sim_without_a_config_keep_their_state_in_the_checkouts_state_folder(tmp_path, monkeypatch):
    # make run (run --demo) and dealerbox sim take the shipped sim.toml: its state is the
    # checkout's state/, as the README says, whatever the working folder.
    from dealerbox import resources
    from dealerbox.service.commands import load_table_config
    from dealerbox.service.config import TABLES_DIR

    monkeypatch.delenv("DEALERBOX_CONFIG", raising=False)
    monkeypatch.setattr(resources, "INSTALLED_CONFIG", tmp_path / "etc" / "table.toml")
    monkeypatch.chdir(tmp_path)
    checkout = Path(__file__).resolve().parent.parent
    assert TABLES_DIR.resolve() == checkout / "firmware_config" / "tables"
    assert load_table_config().state_dir == checkout / "state"


def test_commands_without_config_use_dealerbox_config(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text(sim_config(tmp_path).read_text().replace("tick_s = 0.25", "tick_s = 9"))
    monkeypatch.setenv("DEALERBOX_CONFIG", str(bad))
    assert main(["check-config", "--no-devices"]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "tick_s" in err
    monkeypatch.setenv("DEALERBOX_CONFIG", str(sim_config(tmp_path)))
    assert main(["check-config"]) == 0


def test_check_config_knows_a_fresh_install(capsys):
    from dealerbox.service.config import TABLES_DIR

    pi4 = TABLES_DIR / "pi4-rc522.toml"
    assert main(["check-config", "--fresh-install", str(pi4)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert "not there yet" in out and "decks.toml" in out and "/dev/spidev1.0" in out
    assert "to do: reboot" in out and "to do: register the first deck" in out


@pytest.mark.parametrize("table, reader", [("pi4-rc522.toml", "board"), ("pi5-pepper.toml", "c1"),
                                           ("sim.toml", "board")])
def test_the_deck_step_names_the_tables_own_reader(table, reader, capsys):
    # The reader under the board takes a deck card by card; the Pi 5's one C1 serves
    # shoe, board and burn, and is named c1.
    from dealerbox.service.config import TABLES_DIR

    assert main(["check-config", "--deck-reader", str(TABLES_DIR / table)]) == 0
    assert capsys.readouterr().out == f"{reader}\n"
    if table != "sim.toml":
        assert main(["check-config", "--fresh-install", str(TABLES_DIR / table)]) == 0
        out = capsys.readouterr().out
        assert f"to do: register the first deck: dealerbox deck register --reader {reader} --deck A" in out


def test_the_deck_reader_of_a_bad_file_is_its_errors(tmp_path, capsys):
    from dealerbox.service.config import TABLES_DIR

    bad = tmp_path / "pi5.toml"
    bad.write_text((TABLES_DIR / "pi5-pepper.toml").read_text().replace('profile = "tda-2019"', 'profile = "nope"'))
    assert main(["check-config", "--deck-reader", str(bad)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "profile" in err


def test_check_config_fresh_install_still_refuses_a_bad_file(tmp_path, capsys):
    from dealerbox.service.config import TABLES_DIR

    bad = tmp_path / "pi4.toml"
    bad.write_text((TABLES_DIR / "pi4-rc522.toml").read_text().replace('profile = "tda-2019"', 'profile = "nope"'))
    assert main(["check-config", "--fresh-install", str(bad)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "profile" in err


def test_deck_register_starts_with_no_registry_yet(tmp_path, capsys):
    """The config's registry file does not exist: register asks for the first card
    (and, shown none, gives up after --timeout writing nothing)."""
    registry = tmp_path / "decks.toml"
    config = sim_config(tmp_path, registry=f'"{registry}"')
    code = main(["deck", "register", "--config", str(config), "--reader", "board", "--deck", "C",
                 "--timeout", "0.3"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "next: 2c" in out and "registry" not in err
    assert not registry.exists()


def test_deck_check_gives_up_when_no_card_is_shown(tmp_path, capsys):
    config = sim_config(tmp_path)
    assert main(["deck", "check", "--config", str(config), "--reader", "board", "--timeout", "0.3"]) == 1
    out = capsys.readouterr().out
    assert "no card seen in 0.3 s" in out and "NOT FIT FOR PLAY" in out


def test_deck_check_without_a_registry_says_register_first(tmp_path, capsys):
    config = sim_config(tmp_path, registry=f'"{tmp_path / "decks.toml"}"')
    assert main(["deck", "check", "--config", str(config), "--reader", "board", "--timeout", "0.3"]) == 2
    assert "register a deck first" in capsys.readouterr().err


# -- deck register/check --simulated: a rehearsal on a laptop ---------------------------------------

def test_a_technician_rehearses_register_and_check_without_hardware(tmp_path, monkeypatch, capsys):
    """The Pi 4 table's shoe reader (backend "real") becomes its chip's emulator; a simulated
    hand shows each card asked for; the progress and the guidance are the real command's; the
    deck goes to the rehearsal registry, never to the table's. Then the Pi 5 table's Pepper C1,
    emulated the same way, checks that deck from the rehearsal registry."""
    from dealerbox.domain.cards import DECK_52, JOKER
    from dealerbox.service.config import TABLES_DIR

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    rehearsal = tmp_path / "state" / "dealerbox" / "rehearsal-decks.toml"
    code = main(["deck", "register", "--simulated", "--config", str(TABLES_DIR / "pi4-rc522.toml"),
                 "--reader", "shoe", "--deck", "R", "--back", "blue", "--pace", "0"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("rehearsal: reader 'shoe'") and str(rehearsal) in lines[0]
    assert lines[1] == "[--------------------] 0/54 next: 2c (two of clubs)"
    assert "[########------------] 22/54 next: Jd (jack of diamonds)" in lines
    assert lines[-1] == f"[####################] 54/54 deck R registered: 54 tags written to {rehearsal}"
    registry = DeckRegistry.load(rehearsal)
    assert registry.active == "R" and registry.backs["R"] == "blue"
    assert [registry.lookup(simulated_uid("R", card)).card for card in DECK_52] == list(DECK_52)
    assert len(registry.uids_of("R", JOKER)) == 2
    assert not Path("/var/lib/dealerbox/decks.toml").exists() or "R" not in DeckRegistry.load(
        "/var/lib/dealerbox/decks.toml").decks

    code = main(["deck", "check", "--simulated", "--config", str(TABLES_DIR / "pi5-pepper.toml"),
                 "--reader", "c1", "--pace", "0", "--quiet", "1"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert out.startswith("rehearsal: reader 'c1'") and "52 tags read" in out
    assert out.splitlines()[-2:] == ["Deck check of deck R: 52 tag reads, 52 of 52 cards seen", "FIT FOR PLAY"]


def test_deck_register_simulated_writes_the_registry_named(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    mine = tmp_path / "mine.toml"
    config = sim_config(tmp_path)
    code = main(["deck", "register", "--simulated", "--config", str(config), "--reader", "board",
                 "--deck", "Q", "--pace", "0", "--registry", str(mine)])
    assert code == 0 and str(mine) in capsys.readouterr().out
    assert len(DeckRegistry.load(mine).cards_of("Q")) == 54
    assert not (tmp_path / "xdg").exists()          # no rehearsal file when a registry is named


def test_deck_simulated_refuses_a_negative_pace(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    code = main(["deck", "check", "--simulated", "--config", str(sim_config(tmp_path)), "--reader", "board",
                 "--pace", "-1"])
    assert code == 2 and "--pace is seconds between two cards, 0 or more, not -1" in capsys.readouterr().err
