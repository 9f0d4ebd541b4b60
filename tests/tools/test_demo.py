"""``make run`` (``dealerbox run --demo``) as a newcomer reads it: before each box the
line saying what the scripted dealer did, the irregularity's README id beside the LED,
no box for a clean hand's streets; and with ``--forever`` the dealers stay signed in."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from dealerbox.service.config import DEFAULT_CONFIG
from dealerbox.tools.narrator import DealerNarrator, card_text


def table_config(tmp_path: Path) -> Path:
    """The shipped simulated table, its state under *tmp_path*."""
    text = re.sub(r'state_dir = "[^"]*"', f'state_dir = "{tmp_path / "state"}"', DEFAULT_CONFIG.read_text())
    path = tmp_path / "table.toml"
    path.write_text(text, encoding="utf-8")
    return path


def demo(tmp_path, *args):
    return subprocess.Popen([sys.executable, "-m", "dealerbox.cli", "run", "--demo", "--pace", "0",
                             "--config", str(table_config(tmp_path)), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd=tmp_path,
                            env={**os.environ, "PYTHONIOENCODING": "utf-8"}, text=True, encoding="utf-8")


def boxes(out: str) -> list[tuple[str | None, str, list[str]]]:
    """(the line before, the LED line, the glass) of each box printed."""
    lines = out.splitlines()
    found = []
    for i, line in enumerate(lines):
        if line.startswith("+--------------------+  LED: "):
            found.append((lines[i - 1] if i else None, line, [row[1:-1] for row in lines[i + 1:i + 5]]))
    return found


def test_make_run_tells_what_the_dealer_did_before_each_box_it_caused_with_the_readmes_ids(tmp_path):
    proc = demo(tmp_path)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    assert re.search(r"demo over: \d+ events journaled, \d+ decisions", out)
    shown = boxes(out)
    # Far fewer boxes than frames: only those that change what the dealer must do.
    assert 10 <= len(shown) <= 40, len(shown)
    # Every box after the first (the start) follows the line of what the dealer did.
    for before, led, glass in shown[1:]:
        assert before.startswith("dealer: "), (before, glass)
    # A clean hand prints its header only.
    first_hand = out.split("=== demo hand 1: 6 players ===")[1].split("=== demo hand 2")[0]
    assert first_hand.strip() == ""
    by_id = {}
    for before, led, glass in shown:
        m = re.search(r"LED: [A-Z (),a-z]+?  ([A-Z_]+)$", led)
        if m:
            by_id.setdefault(m.group(1), (before, glass))
    # The README's ids beside the glass's short labels; the cause right before the first step.
    assert set(by_id) == {"EXPOSED_DEAL", "EXTRA_CARD", "PREMATURE_FLOP", "FOUR_CARD_FLOP", "MISSED_BURN",
                          "FOREIGN_CARD"}
    before, glass = by_id["FOUR_CARD_FLOP"]
    assert glass[0].startswith("EXTRA BOARD CRD") and glass[0].endswith("1/4")
    assert re.fullmatch(r"dealer: puts .. on the board \(4 cards\): one more than the flop has", before), before
    before, glass = by_id["EXPOSED_DEAL"]
    assert glass[0].startswith("EXPOSED CARD") and glass[0].endswith("1/4")
    assert re.fullmatch(r"dealer: turns seat 4's first card \(..\) face up and presses EXPOSED", before), before
    assert re.fullmatch(r"dealer: puts .. on the board \(4 cards\): the turn without a burn",
                        by_id["MISSED_BURN"][0])
    assert re.search(r"^dealer: deals .. to seat 4 in place of the exposed ..$", out, re.M)
    assert "a card of deck B" in by_id["FOREIGN_CARD"][0]
    assert "every hole card dealt and the round not done" in by_id["EXTRA_CARD"][0]
    assert "before the betting round is done" in by_id["PREMATURE_FLOP"][0]
    # Back to play on after a correction is a box too, with its cause.
    assert any(glass[1].startswith("Play on") and before.startswith("dealer: ") for before, _, glass in shown[1:])
    # Who takes over is said, in a line of its own.
    assert "dealer: holds badge 2077 to the shoe: dealer 2077 deals now" in out


def test_forever_keeps_the_dealer_signed_in_pass_after_pass(tmp_path):
    proc = demo(tmp_path, "--forever")
    seen = ""
    deadline = time.monotonic() + 240
    try:
        # The second pass's hand 4 (the demo's 11th) is dealt by 2077, who signs in again before it.
        while "=== demo hand 11:" not in seen and time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, seen[-2000:]
            seen += line
    finally:
        proc.send_signal(signal.SIGTERM)
        rest, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "=== demo hand 11:" in seen and seen.count("dealer 2077 deals now") == 2
    dealers = []
    for path in sorted((tmp_path / "state" / "journal").glob("journal-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            event = json.loads(line).get("event") or {}
            if event.get("ev") == "dealer":
                dealers.append(event["dealer"])
    # The second pass starts with 1042, who dealt the end of the first: no badge held
    # again, so nobody is signed out.
    assert None not in dealers and dealers[:4] == ["1042", "2077", "1042", "2077"], dealers
    assert all(a != b for a, b in zip(dealers, dealers[1:]))


def test_the_narrator_follows_the_deal_the_board_and_the_rounds():
    n = DealerNarrator()
    assert n.tell({"ev": "new_hand", "players": 3}) == "presses NEW HAND for 3 players"
    said = [n.tell({"ev": "shoe", "card": c}) for c in ("Ah", "Kd", "Qs", "Jc")]
    assert said == ["deals seat 1's first card, A♥", "deals seat 2's first card, K♦",
                    "deals seat 3's first card, Q♠", "deals seat 1's second card, J♣"]
    assert n.tell({"ev": "button", "name": "exposed"}) == \
        "turns seat 1's second card (J♣) face up and presses EXPOSED"
    for c in ("2c", "3c"):
        n.tell({"ev": "shoe", "card": c})
    assert n.tell({"ev": "shoe", "card": "4c"}) == "deals 4♣ to seat 1 in place of the exposed J♣"
    assert n.tell({"ev": "button", "name": "round_done"}) == "presses ROUND DONE"
    n.tell({"ev": "shoe", "card": "5c"})
    assert n.tell({"ev": "board_on", "card": "5c"}) == "puts 5♣ on the board (1 card): the flop without a burn"
    assert n.tell({"ev": "board_off", "card": "5c"}) == "takes 5♣ back off the board"
    assert n.tell({"ev": "dealer", "dealer": None}) == "holds their badge to the shoe again: signs out"
    assert card_text("Td") == "T♦" and card_text(None) == "a card"
