"""The floor map's words (dealerbox/floor/telling/floor_words.py): each tile and alert read in
plain words in the floor's language and zone, the alerts in the order someone must go,
the room as its pits, and a table going quiet with nothing written (the live floor)."""

from __future__ import annotations

import asyncio
import json
import re
import time

import anyio
import pytest

from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.store import Store
from dealerbox.floor.telling.table_view import view_table
from dealerbox.floor.web import live
from dealerbox.floor.web.figures_api import FiguresApi
from dealerbox.floor.telling.floor_words import FloorWords, alert_order, room

from tests.floor.test_collector import journal_lines

# Thu 26 Nov 2026, 19:55:03 CET
NOW = 1795719303.0
PRAGUE = FloorClock("Europe/Prague")


def tile(words, *, online=True, open_=None, phase="flop", last_line=NOW - 10, rate=28.47, place=None,
         dealer="1042", seen=NOW - 5):
    row = {"table_id": "T01", "last_seq": 319, "online": int(online), "seen": seen,
           "state": json.dumps({"open": open_, "phase": phase}), "health": json.dumps({"backlog": 1, "clock_ok": True})}
    view = view_table(row)
    view.update(dealer=dealer, hands_per_hour=rate)
    return words.tile(view, place, last_line, NOW)


FOUR = {"irregularity": "FOUR_CARD_FLOP", "verdict": "floor", "seq": 300, "since": "2026-11-26T18:54:57Z", "step": 0}


def test_a_playing_table_reads_its_street_and_its_rate_with_one_decimal():
    t = tile(FloorWords("en", PRAGUE))
    assert (t["state"], t["colour"], t["what"], t["street"], t["rate"]) == \
        ("playing", "green", "On the flop", "on the flop", "28.5 hands/h")
    # The raw fields stay for machines.
    assert (t["table"], t["last_seq"], t["backlog"], t["phase"], t["hands_per_hour"]) == ("T01", 319, 1, "flop", 28.47)
    assert t["heard_local"] == "2026-11-26 19:54 CET"
    assert tile(FloorWords("en", PRAGUE), rate=None)["rate"] is None


@pytest.mark.parametrize("lang, call, name, street", [
    ("en", "Floor call", "four-card flop", "on the flop"),
    ("cs", "Volání floormana", "flop o čtyřech kartách", "flop"),
    ("de", "Floor-Ruf", "Flop mit vier Karten", "am Flop"),
    ("sk", "Privolanie floormanagera", "flop so štyrmi kartami", "flop"),
])
def test_an_open_irregularity_reads_in_the_floors_language_with_its_age(lang, call, name, street):
    t = tile(FloorWords(lang, PRAGUE), open_=FOUR)
    assert (t["state"], t["colour"]) == ("open", "red")
    # The verdict from the floor's catalogs, the irregularity from the table's (its one name).
    assert t["what"] == f"{call}: {name}" and t["open_name"] == name and t["street"] == street
    assert t["open_since_ts"] == NOW - 6
    assert "FOUR_CARD_FLOP" not in t["what"]


def test_the_verdict_says_how_urgent_a_halt_is_red_a_correction_amber():
    words = FloorWords("en", PRAGUE)
    misdeal = tile(words, open_={"irregularity": "EXPOSED_TWICE", "verdict": "misdeal", "since": None})
    assert (misdeal["colour"], misdeal["what"]) == ("red", "Misdeal: two cards exposed during the deal")
    fix = tile(words, open_={"irregularity": "EXPOSED_DEAL", "verdict": "correct", "since": "junk"})
    assert (fix["colour"], fix["what"], fix["open_since_ts"]) == ("amber", "Correcting: card exposed during the deal", None)
    called = tile(words, open_={"irregularity": None, "verdict": "floor", "since": None})
    assert called["what"] == "Floor call: the dealer called the floor"
    odd = tile(words, open_={"irregularity": "NEW_ID_FROM_A_NEWER_TABLE", "verdict": "correct"})
    assert odd["what"] == "Correcting: NEW_ID_FROM_A_NEWER_TABLE"  # never a crash


def test_a_table_with_no_line_for_five_minutes_is_quiet_and_says_since_when():
    words = FloorWords("en", PRAGUE)
    assert tile(words, last_line=NOW - 299)["state"] == "playing"
    quiet = tile(words, last_line=NOW - 301, open_=FOUR)
    assert (quiet["state"], quiet["colour"], quiet["what"]) == ("quiet", "quiet", "Quiet since 2026-11-26 19:50 CET")
    assert quiet["rate"] is None and quiet["heard"] == NOW - 301
    never = tile(words, last_line=None)
    assert (never["state"], never["what"]) == ("quiet", "Quiet: no hand filed yet")
    off = tile(words, online=False, seen=NOW - 3600)
    assert (off["state"], off["colour"], off["what"], off["rate"]) == \
        ("offline", "grey", "Offline, last heard 2026-11-26 18:55 CET", None)


def alert(i, kind, text, raised, table="T01", seq=None):
    return {"id": i, "table": table, "kind": kind, "text": text, "seq": seq, "raised": raised, "count": 1,
            "last_text": text, "last_raised": raised, "last_seq": seq}


def test_alerts_read_as_announcements_with_the_full_date_and_zone_and_floor_calls_come_first():
    words = FloorWords("en", PRAGUE)
    alerts = [words.alert(a) for a in (
        alert(1, "clock", "the wall clock is before 2020", NOW - 900, "T03"),
        alert(2, "floor", "FOUR_CARD_FLOP: the floor is needed at the table", NOW - 60, seq=128),
        alert(3, "bridge_blind", "the floor has not heard from property north for 600 s", NOW - 300,
              "bridge-north"),
        alert(4, "floor", "the dealer called the floor: the floor is needed at the table", NOW - 120, "T02", 7),
        alert(5, "offline", "the table lost its connection to the floor", NOW - 30, "T04"),
    )]
    by_id = {a["id"]: a for a in alerts}
    assert by_id[2]["headline"] == "Floor call at T01: four-card flop"
    assert by_id[4]["headline"] == "Floor call at T02: the dealer called the floor"
    assert by_id[3]["headline"].startswith("Property blind at property north: ")
    assert by_id[5]["headline"] == "Offline at T04: the table lost its connection to the floor"
    assert by_id[2]["raised_local"] == "Thu 26 Nov 2026, 19:54:03 CET"
    assert by_id[2]["text"] == "FOUR_CARD_FLOP: the floor is needed at the table"  # raw, for machines
    # Floor calls first (the longest waiting first), then the urgent ones, then the rest.
    assert [a["id"] for a in alert_order(alerts)] == [4, 2, 3, 5, 1]
    assert [a["severity_words"] for a in alert_order(alerts)] == \
        ["floor call", "floor call", "urgent", "urgent", "notice"]
    cs = FloorWords("cs", PRAGUE).alert(alert(2, "floor", "FOUR_CARD_FLOP: the floor is needed at the table", NOW))
    assert cs["headline"] == "Volání floormana u T01: flop o čtyřech kartách"
    assert cs["raised_local"] == "čt 26. 11. 2026 19:55:03 SEČ" and cs["severity_words"] == "volání floormana"


def test_the_registrys_and_the_protections_own_alerts_read_in_words_not_as_their_kinds():
    words = FloorWords("en", PRAGUE)
    conflict = words.alert(alert(1, "registry_conflict", "T01 registered deck Blue 1 and the floor refused it: "
                                 "tag 04A1 is already registered as Ah of deck Red 7", NOW, seq=12))
    assert conflict["headline"] == ("Registration refused at T01: T01 registered deck Blue 1 and the floor refused "
                                    "it: tag 04A1 is already registered as Ah of deck Red 7")
    limit = words.alert(alert(2, "deck_limit", "Deck Red 7 is past the house limit: 500 hands. Retire it.", NOW))
    assert limit["headline"] == "Deck past its limit at T01: Deck Red 7 is past the house limit: 500 hands. Retire it."
    reference = words.alert(alert(3, "protect_reference", "reference: hands of hold'em at 6 players are not "
                                  "checked for a shuffle: no reference for the declared model", NOW))
    assert reference["headline"] == ("Shuffle not checked at T01: hands of hold'em at 6 players are not checked "
                                     "for a shuffle: no reference for the declared model")
    # Notices: none of them comes before a floor call or an attack.
    assert {a["severity_words"] for a in (conflict, limit, reference)} == {"notice"}
    for a in (conflict, limit, reference):
        assert a["kind"].replace("_", " ").capitalize() not in a["headline"]


def test_the_room_is_its_pits_by_name_with_their_tables_by_place_and_the_unplaced_by_id():
    words = FloorWords("en", PRAGUE)
    views = []
    for name, place in (("T09", None), ("T07", {"pit": "Pit 2", "row": 1, "col": 3}),
                        ("T02", {"pit": "Pit 1", "row": 2, "col": 1}), ("T01", {"pit": "Pit 1", "row": 1, "col": 2}),
                        ("T03", None)):
        t = tile(words, place=place)
        t["table"] = name
        views.append(t)
    pits, unplaced = room(views)
    assert [(p["name"], [t["table"] for t in p["tables"]]) for p in pits] == \
        [("Pit 1", ["T01", "T02"]), ("Pit 2", ["T07"])]
    assert [t["table"] for t in unplaced] == ["T03", "T09"]
    assert room([]) == ([], [])


def test_the_live_floor_words_its_tiles_and_tells_the_streams_when_a_table_goes_quiet(tmp_path, monkeypatch):
    path = tmp_path / "floor.sqlite"
    now = time.time()
    with Store(path) as store:
        store.ensure_table("T01")
        lines = journal_lines(2)
        store.add_lines([("T01", i + 1, line, f"h{i}", True, now) for i, line in enumerate(lines)])
        store.update_table("T01", last_seq=2, last_hash="h1", online=1, seen=now,
                           state=json.dumps({"open": None, "phase": "turn"}))
        store.place_table("T01", "Pit 1", 1, 1, "ada")
        store.raise_alert("T01", "floor", "JOKER: the floor is needed at the table", 2, now)
    monkeypatch.setattr(live, "RETILE_S", 0.2)
    floor = live.Floor(path, FiguresApi(path), FloorWords("de", FloorClock("Europe/Berlin"), quiet_s=1.5))

    async def run():
        await floor.start()
        try:
            sub, snap = floor.subscribe()
            first = snap["tables"][0]
            event = await asyncio.wait_for(sub.queue.get(), 10)
            return first, snap["alerts"], event
        finally:
            await floor.stop()
    first, alerts, event = anyio.run(run)
    assert (first["state"], first["what"], first["pit"], first["row"]) == ("playing", "Am Turn", "Pit 1", 1)
    assert alerts[0]["headline"] == "Floor-Ruf bei T01: Joker im Spiel"
    assert event["type"] == "tables"
    quiet = event["tables"][0]
    assert quiet["table"] == "T01" and quiet["state"] == "quiet" and quiet["what"].startswith("Still seit ")
    # German's own form of the moment: 02.12.2026, 14:05 MEZ (MESZ in summer).
    assert re.search(r"\d\d\.\d\d\.\d{4}, \d\d:\d\d MES?Z$", quiet["what"]), quiet["what"]
