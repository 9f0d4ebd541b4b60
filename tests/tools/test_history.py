"""Hand history: a journal written by dealerbox.service.journal, replayed into per-hand records."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from dealerbox.domain.cards import DECK_52
from dealerbox.errors import JournalError
from dealerbox.domain.events import Event
from dealerbox.tools.history import (HISTORY_VERSION, HistoryError, format_table, load_history, parse_since,
                               run_history, to_json)
from dealerbox.service.journal import Journal, journal_files
from hardware_sim.script import HandScript

# 2026-11-22 14:00:00 UTC
T0 = 1795356000.0


class Clock:
    """The journal's wall clock, moved by hand."""

    def __init__(self, now=T0):
        self.now = now

    def __call__(self):
        return self.now


def session():
    """Hand 1: clean, 6 players. Hand 2: the 4th deal card exposed (EXPOSED_DEAL), corrected.
    Hand 3: an exposed first card, a misdeal."""
    s = HandScript(seed=1)
    s.full_hand(6)
    s.new_hand(6).deal(4).button("exposed").deal(8).draw()
    s.button("ack").round_done().flop(burn=False).round_done().turn().round_done().river().round_done()
    s.hand_over()
    s.new_hand(3).deal(1).button("exposed")
    return s


def write_journal(directory, script, *, day_gap_after_hand=None):
    """Journal the script's events; the wall clock follows the events' t (one day later from
    the hand number *day_gap_after_hand* on)."""
    clock = Clock()
    hands = 0
    with Journal(directory, clock=clock, sync="none") as j:
        for d in script.events:
            if d["ev"] == "new_hand":
                hands += 1
            shift = 86400.0 if day_gap_after_hand and hands > day_gap_after_hand else 0.0
            clock.now = T0 + d["t"] + shift
            j.append(Event.from_dict(d))
    return script


@pytest.fixture
def journal(tmp_path):
    script = write_journal(tmp_path / "journal", session())
    return tmp_path / "journal", script


def test_clean_hand_record(journal):
    directory, script = journal
    hands = load_history(directory, profile="tda-2019")
    assert [h.number for h in hands] == [1, 2, 3]
    h = hands[0]
    ev = script.events
    end = next(i for i, e in enumerate(ev) if e.get("name") == "hand_over")
    shoe = [e["card"] for e in ev[:end] if e["ev"] == "shoe"]
    assert h.players == 6 and h.hole_cards == 2 and h.ended_by == "hand_over"
    # Hold'em deal: one card at a time from the left of the button, two rounds.
    assert [s.cards for s in h.seats] == [[shoe[i], shoe[i + 6]] for i in range(6)]
    assert [s.seat for s in h.seats] == [1, 2, 3, 4, 5, 6] and h.seats[0].table_seat is None
    on_board = [e["card"] for e in ev[:end] if e["ev"] == "board_on"]
    assert h.board == on_board and h.streets == {"flop": on_board[:3], "turn": [on_board[3]],
                                                 "river": [on_board[4]]}
    assert h.burns == [shoe[12], shoe[16], shoe[18]]
    assert h.irregularities == [] and h.final == {"phase": "over", "verdict": "ok", "irregularity": None}
    assert h.start.seq == 1 and h.start.wall == "2026-11-22T14:00:00.500000Z"
    assert h.end.seq == end + 1 and h.events == end + 1


def test_exposed_card_hand_has_its_steps_and_done_times(journal):
    directory, script = journal
    h = load_history(directory, profile="tda-2019")[1]
    ev = script.events
    start, stop = [i for i, e in enumerate(ev) if e["ev"] == "new_hand"][1:3]
    shoe = [e["card"] for e in ev[start:stop] if e["ev"] == "shoe"]
    exposed = shoe[3]                 # the 4th deal card, at deal position 4
    replacement = shoe[12]
    assert h.seats[3].cards == [shoe[9], replacement]
    assert exposed not in [c for s in h.seats for c in s.cards]
    assert h.burns[0] == exposed and len(h.burns) == 3 and len(h.board) == 5
    assert h.streets["flop"] == shoe[13:16]           # flop dealt with no burn from the stub
    (irr,) = h.irregularities
    assert (irr.id, irr.verdict, irr.cards, irr.status) == ("EXPOSED_DEAL", "correct", [exposed], "done")
    assert "000 par.1" in irr.rule and "001 r11" in irr.rule
    assert [s.key for s in irr.steps] == ["exposed.finish_deal", "exposed.replace", "exposed.is_burn",
                                          "exposed.flop_no_burn"]
    assert "seat 4" in irr.steps[1].text
    # Seq numbers are journal lines: start + 1 is the new_hand line.
    seq_of = {name: start + 1 + i for i, name in enumerate(_labels(ev[start:stop]))}
    assert irr.raised.seq == seq_of["exposed"]
    assert irr.steps[0].done.seq == seq_of["deal#12"]      # the 12th deal card finished the deal
    assert irr.steps[1].done.seq == seq_of["deal#13"]      # the replacement came
    assert irr.steps[2].done.seq == seq_of["ack"]
    assert irr.steps[3].done.seq == seq_of["board#3"]      # the flop is complete
    assert irr.steps[3].done.wall.startswith("2026-11-22T14:00:")
    assert irr.steps[3].done.t == ev[seq_of["board#3"] - 1]["t"]
    assert h.sources[:2] == ["000 par.1", "003 TH irregularities 1"]


def _labels(events):
    """A name per event: deal#n for the n-th shoe card, board#n for the n-th board_on, else the button."""
    out, shoe, board = [], 0, 0
    for e in events:
        if e["ev"] == "shoe":
            shoe += 1
            out.append(f"deal#{shoe}")
        elif e["ev"] == "board_on":
            board += 1
            out.append(f"board#{board}")
        else:
            out.append(e.get("name") or e["ev"] + f"@{e['t']}")
    return out


def test_misdeal_hand_is_left_unfinished_at_the_journal_end(journal):
    directory, _ = journal
    h = load_history(directory, profile="tda-2019")[2]
    assert h.players == 3 and h.ended_by == "journal_end"
    (irr,) = h.irregularities
    assert irr.id == "EXPOSED_EARLY" and irr.verdict == "misdeal" and irr.status == "open"
    assert irr.steps[0].done is None
    assert h.final == {"phase": "halted", "verdict": "misdeal", "irregularity": "EXPOSED_EARLY"}
    assert [len(s.cards) for s in h.seats] == [1, 0, 0]


def test_text_table(journal):
    directory, _ = journal
    text = format_table(load_history(directory, profile="tda-2019"))
    lines = text.splitlines()
    assert lines[0] == "== 2026-11-22 (UTC) =="
    assert lines[1].startswith("Hand 1  14:00:00-14:00:") and lines[1].endswith("6 players  [over]")
    assert lines[2].startswith("  seats  1: ") and lines[3].startswith("  board  ") and " | " in lines[3]
    i = next(n for n, ln in enumerate(lines) if ln.startswith("  ! EXPOSED_DEAL  correct"))
    assert lines[i].endswith("  done")
    assert lines[i + 1].lstrip().startswith("1. ") and " done 14:00:" in lines[i + 1]
    assert lines[i + 5].startswith("      sources: 000 par.1")
    assert "Hand 3" in text and "[halted, misdeal, journal ends]" in text
    assert "not seen done" in text
    assert any(ln.startswith("  ! EXPOSED_EARLY  misdeal") and ln.endswith("the hand stopped here")
               for ln in lines)


def test_text_in_another_language(journal):
    directory, _ = journal
    en = load_history(directory, profile="tda-2019", hand=2)[0].irregularities[0]
    de = load_history(directory, profile="tda-2019", hand=2, lang="de")[0].irregularities[0]
    assert [s.key for s in de.steps] == [s.key for s in en.steps]
    assert [s.text for s in de.steps] != [s.text for s in en.steps]


def test_hand_filter(journal):
    directory, _ = journal
    (h,) = load_history(directory, profile="tda-2019", hand=2)
    assert h.number == 2 and h.irregularities[0].id == "EXPOSED_DEAL"
    assert load_history(directory, profile="tda-2019", hand=9) == []
    for bad in (0, -1, "2", True):
        with pytest.raises(HistoryError):
            load_history(directory, profile="tda-2019", hand=bad)


def test_since_filter(tmp_path):
    directory = tmp_path / "j"
    write_journal(directory, session(), day_gap_after_hand=1)     # hands 2 and 3 a day later
    assert len(journal_files(directory)) == 2
    numbers = lambda since: [h.number for h in load_history(directory, profile="tda-2019", since=since)]
    assert numbers("2026-11-22") == [1, 2, 3]
    assert numbers("2026-11-23") == [2, 3]
    assert numbers(dt.date(2026, 11, 23)) == [2, 3]
    assert numbers("2026-11-23T14:00:10Z") == [2, 3]
    assert numbers("2026-11-23T14:00:20") == [3]
    assert numbers("2026-11-23T15:00:20+01:00") == [3]            # same instant, another zone
    assert numbers("2026-11-24") == []
    # state carries over from the first file: hand 2's record is the same as in one file
    table = format_table(load_history(directory, profile="tda-2019", since="2026-11-23"))
    assert table.splitlines()[0] == "== 2026-11-23 (UTC) ==" and "EXPOSED_DEAL" in table


def test_parse_since():
    utc = dt.timezone.utc
    assert parse_since("2026-11-22") == dt.datetime(2026, 11, 22, tzinfo=utc)
    assert parse_since("2026-11-22 14:03") == dt.datetime(2026, 11, 22, 14, 3, tzinfo=utc)
    for bad in ("yesterday", "2026-13-01", "", 5):
        with pytest.raises(HistoryError):
            parse_since(bad)


def test_json_schema(journal):
    directory, _ = journal
    data = to_json(load_history(directory, profile="tda-2019"))
    assert data["history_version"] == HISTORY_VERSION == 1
    assert json.loads(json.dumps(data)) == data
    hand = data["hands"][1]
    assert list(hand) == ["hand", "start", "end", "ended_by", "players", "hole_cards", "seats", "burns",
                          "board", "streets", "aside", "irregularities", "sources", "final", "events"]
    assert set(hand["start"]) == {"seq", "t", "wall"}
    assert set(hand["seats"][0]) == {"seat", "table_seat", "cards"}
    assert list(hand["streets"]) == ["flop", "turn", "river"]
    irr = hand["irregularities"][0]
    assert list(irr) == ["id", "title", "verdict", "cards", "rule", "raised", "status", "steps"]
    assert set(irr["steps"][0]) == {"key", "text", "done"} and set(irr["steps"][0]["done"]) == {"seq", "t", "wall"}
    assert data["hands"][2]["irregularities"][0]["steps"][0]["done"] is None
    assert set(hand["final"]) == {"phase", "verdict", "irregularity"}


def test_table_seats_from_new_hand(tmp_path):
    s = HandScript(seed=3)
    s.new_hand(3, seats=[2, 5, 9]).deal().round_done()
    write_journal(tmp_path, s)
    (h,) = load_history(tmp_path, profile="tda-2019")
    assert [(x.seat, x.table_seat, len(x.cards)) for x in h.seats] == [(1, 2, 2), (2, 5, 2), (3, 9, 2)]
    assert "1(#2): " in format_table([h]) and h.ended_by == "journal_end"


def test_tampered_line_is_reported_by_file_and_line(journal):
    directory, script = journal
    path = journal_files(directory)[0][1]
    lines = path.read_bytes().split(b"\n")
    n = next(i for i, ln in enumerate(lines) if b'"ev":"shoe"' in ln and i > 20)   # 0-based
    old = json.loads(lines[n])["event"]["card"]
    new = next(c for c in DECK_52 if c != old)
    lines[n] = lines[n].replace(f'"card":"{old}"'.encode(), f'"card":"{new}"'.encode())
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(JournalError) as info:
        load_history(directory, profile="tda-2019")
    message = str(info.value)
    assert f"{path}:{n + 1}: line changed" in message
    assert "hash chain is broken" in message
    assert [(p.file, p.line, p.kind) for p in info.value.problems] == [(path.name, n + 1, "changed")]
    # the filters do not skip the check
    with pytest.raises(JournalError):
        load_history(directory, profile="tda-2019", hand=1)


def test_a_missing_directory_is_a_journal_error(tmp_path):
    with pytest.raises(JournalError, match="no journal"):
        load_history(tmp_path / "absent", profile="tda-2019")


def test_an_empty_journal_has_no_hands(tmp_path):
    assert load_history(tmp_path, profile="tda-2019") == []
    assert format_table([]) == "" and to_json([]) == {"history_version": 1, "hands": []}


def test_an_earlier_ruling_replaced_by_a_misdeal_is_superseded(tmp_path):
    s = HandScript(seed=4)
    s.new_hand(2).deal().take().take().tick(1.0).tick(1.0).tick(1.5)
    write_journal(tmp_path, s)
    (h,) = load_history(tmp_path, profile="tda-2019")
    extra, extras = h.irregularities
    assert (extra.id, extra.verdict, extra.status) == ("EXTRA_CARD", "correct", "superseded")
    assert (extras.id, extras.verdict, extras.status) == ("EXTRA_CARDS", "misdeal", "open")
    assert extras.raised.seq == len(s.events)           # ruled at the tick after the grace period
    assert h.final["phase"] == "halted"


def test_run_history_exit_codes_and_output(journal, tmp_path):
    import io

    directory, _ = journal
    out, err = io.StringIO(), io.StringIO()
    assert run_history(directory, profile="tda-2019", hand=2, out=out, err=err) == 0
    assert out.getvalue().splitlines()[1].startswith("Hand 2  ") and err.getvalue() == ""
    out = io.StringIO()
    assert run_history(directory, profile="tda-2019", as_json=True, out=out, err=err) == 0
    assert json.loads(out.getvalue())["history_version"] == 1
    err = io.StringIO()
    assert run_history(directory, profile="tda-2019", hand=7, out=io.StringIO(), err=err) == 2
    assert "no hand 7" in err.getvalue()
    assert run_history(directory, profile="tda-2019", since="soon", out=io.StringIO(), err=err) == 2
    assert run_history(tmp_path / "nowhere", profile="tda-2019", out=io.StringIO(), err=err) == 2
    path = journal_files(directory)[0][1]
    data = path.read_bytes().split(b"\n")
    data[4] = data[4].replace(b'"t":', b'"t":1', 1)
    path.write_bytes(b"\n".join(data))
    out, err = io.StringIO(), io.StringIO()
    assert run_history(directory, profile="tda-2019", out=out, err=err) == 1
    assert out.getvalue() == "" and f"{path}:5: line changed" in err.getvalue()


def test_an_unread_card_is_in_the_history_with_its_place_and_the_check_after_the_hand(tmp_path):
    s = HandScript(seed=5)
    s.new_hand(3, mouth_sensor=True).deal(2)
    s.emit("shoe", unread=True)
    s.stub.pop(0)
    s.deal(3).round_done().flop().round_done().turn().round_done().river().round_done().hand_over()
    write_journal(tmp_path, s)
    [hand] = load_history(tmp_path, profile="tda-2019")
    unread = [i for i in hand.irregularities if i.id == "UNREAD_CARD"]
    assert [i.verdict for i in unread] == ["ok", "ok"]
    assert unread[0].steps[0].key == "unread.hole_card" and "seat 3" in unread[0].steps[0].text
    assert unread[1].steps[0].key == "unread.check_deck"
    assert len(hand.seats[2].cards) == 2 and "?" in hand.seats[2].cards
