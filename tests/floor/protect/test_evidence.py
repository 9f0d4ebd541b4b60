"""Evidence with every alert (dealerbox/floor/protect/evidence.py): the kept pairs of a hand,
their places in its draw and in the earlier hand, and where they lay; worked by hand. Then the
pass files it with each alert, and its one telling (ProtectWords.why, in English here) links
every hand's story, naming each hand by its number at its table (fig_hands.number, looked up
for all of them at once) or, where the figures have not filed it, by its journal line."""

from __future__ import annotations

import json
import random

from sqlalchemy import select

from dealerbox.floor.protect.config import ProtectConfig
from dealerbox.floor.protect.evidence import hand_record, shuffle_evidence
from dealerbox.floor.telling.figures import hand_numbers
from dealerbox.floor.protect.floor_pass import alert_evidence
from dealerbox.floor.protect.hand import DealtHand, together_pairs
from dealerbox.floor.protect.shuffles import Shuffle
from dealerbox.floor.protect.simulate import Stack, TableSim, no_shuffle
from dealerbox.floor.protect.tables import protect_evidence
from dealerbox.floor.store import store_engine
from dealerbox.floor.telling.language import Language
from dealerbox.floor.telling.protect_words import ProtectWords
from tests.floor.protect.test_floor_pass import ON_TOP, journal, run, target  # noqa: F401

#: Two players, every hand to the river: seat 1 draws places 1 and 3, seat 2 places 2 and 4; then
#: burn (5), flop (6-8), burn (9), turn (10), burn (11), river (12).
EARLIER = DealtHand("A", ("Ah", "Kd", "As", "Kc", "2c", "3d", "4h", "5s", "6c", "7d", "8h", "9s"), 2, hand_id=10)
#: The next hand of the deck: As Ah together (seat 1's), 4h 3d (the flop, reversed), 2c 6c (two burns).
NEXT = DealtHand("A", ("Qs", "As", "Ah", "Jd", "4h", "3d", "Tc", "2c", "6c", "Js", "Qd", "Td"), 2, hand_id=20)
#: The evidence told in English, the one way the product tells it.
WORDS = ProtectWords(Language("en"))
why = WORDS.why


def test_a_shuffle_alert_names_each_kept_pair_its_places_and_where_it_lay():
    record = hand_record(EARLIER)
    assert record["seq"] == 10 and record["where"]["Ah"] == "seat 1" and record["where"]["Kc"] == "seat 2"
    assert record["where"]["4h"] == "the board" and record["where"]["8h"] == "the burns"
    e = shuffle_evidence(NEXT, [together_pairs(EARLIER)], [record])
    assert e["hand"] == 20 and e["earlier"] == 10 and e["statistic"] == 3
    assert e["pairs"] == [
        {"cards": ["As", "Ah"], "here": [2, 3], "there": [3, 1], "was": "seat 1"},
        {"cards": ["4h", "3d"], "here": [5, 6], "there": [7, 6], "was": "the board"},
        {"cards": ["2c", "6c"], "here": [8, 9], "there": [5, 9], "was": "the burns"},
    ]
    # Neither hand filed by the figures yet: named by their journal lines.
    words = why("shuffle", "T1", e)
    assert words["summary"] == ("3 pairs of cards lay side by side in this hand's draw as the deck's earlier hand "
                                "(journal line 10) left them.")
    assert words["pairs"][0] == {"cards": "As Ah", "here": "2 and 3", "there": "3 and 1", "was": "seat 1"}
    assert [p["was"] for p in words["pairs"]] == ["seat 1", "the board", "the burns"]
    assert words["links"] == [
        {"text": "this hand's story (table T1, the hand at journal line 20)", "href": "/hands/T1/20"},
        {"text": "the earlier hand's story (table T1, the hand at journal line 10)", "href": "/hands/T1/10"}]
    # By their numbers at the table, as a supervisor knows them; the links still go by the line.
    assert WORDS.named_hands("shuffle", "T1", e) == {("T1", 10), ("T1", 20)}
    words = why("shuffle", "T1", e, {("T1", 10): 311, ("T1", 20): 312})
    assert words["summary"] == ("3 pairs of cards lay side by side in this hand's draw as the deck's earlier hand "
                                "(hand 311) left them.")
    assert words["links"] == [{"text": "this hand's story (table T1, hand 312)", "href": "/hands/T1/20"},
                              {"text": "the earlier hand's story (table T1, hand 311)", "href": "/hands/T1/10"}]


def test_the_earlier_hand_that_left_the_most_pairs_is_the_one_named():
    fresh = DealtHand("A", ("Qs", "Js", "Ts", "9s"), 2, hand_id=15)
    e = shuffle_evidence(NEXT, [together_pairs(EARLIER), together_pairs(fresh)],
                         [hand_record(EARLIER), hand_record(fresh)])
    assert e["earlier"] == 10 and e["statistic"] == 3
    # A floor that kept only the pairs (before migration 0012) still names the pairs, not their places.
    e = shuffle_evidence(NEXT, [together_pairs(EARLIER)], [])
    assert e["earlier"] is None and e["pairs"][0] == {"cards": ["As", "Ah"], "here": [2, 3], "there": None,
                                                      "was": None}
    words = why("shuffle", "T1", e)
    assert words["pairs"][0]["there"] == "not known" and words["pairs"][0]["was"] == "apart"
    assert words["summary"] == ("3 pairs of cards lay side by side in this hand's draw as the deck's earlier hand "
                                "left them.")
    assert len(words["links"]) == 1


def test_odd_evidence_says_what_it_can():
    assert why("shuffle", "T1", None) == {"summary": "", "links": [], "pairs": []}
    assert WORDS.named_hands("shuffle", "T1", None) == set()
    assert why("seat_luck", "T2", {"seat": 3})["summary"] == (
        "Seat 3 was dealt 0 strong starting hands in 0 hands since its chart last stood at 0, where chance gives "
        "about 0.")
    followed = {"seat": "the seat dealt 2nd at hand 5, followed round as the button moved", "hands": 4,
                "strong_hands": [5, 6], "expected": 0.04}
    assert why("seat_luck", "T2", followed)["summary"] == (
        "The seat dealt 2nd in the hand at journal line 5 (followed round as the button moved) was dealt 2 strong "
        "starting hands in 4 hands since its chart last stood at 0, where chance gives about 0.040.")
    assert WORDS.named_hands("seat_luck", "T2", followed) == {("T2", 5), ("T2", 6)}
    assert why("seat_luck", "T2", followed, {("T2", 5): 40, ("T2", 6): 41})["summary"].startswith(
        "The seat dealt 2nd in hand 40 (followed round as the button moved) was dealt 2 strong starting hands")
    one = why("seat_luck", "T2", {"seat": "seat 4", "hands": 1, "strong_hands": [7], "expected": 0.02})
    assert one["summary"].startswith("Seat 4 was dealt 1 strong starting hand in 1 hand since")
    assert one["links"] == [{"text": "a hand at table T2 (journal line 7)", "href": "/hands/T2/7"}]
    chart = {"dealer": "E7", "value": 5.2, "h": 5.0, "error_hands": [["T3", 4], ["T4", 9]]}
    lines = why("dealer_chart", "T3", chart, {("T3", 4): 2})
    assert lines["links"] == [{"text": "table T3, hand 2", "href": "/hands/T3/4"},
                              {"text": "a hand at table T4 (journal line 9)", "href": "/hands/T4/9"}]
    assert "reached 5.2 (limit 5.0) after 2 hands with an error" in lines["summary"]
    assert WORDS.named_hands("dealer_chart", "T3", chart) == {("T3", 4), ("T4", 9)}
    block = {"dealer": None, "statistic": 1, "hands": [["T5", 3], ["T5", 8]]}
    assert why("procedure", "T5", block)["summary"] == (
        "A block of 2 hands dealt with no dealer signed in kept 1 pair in all; each hand below opens its story.")
    assert WORDS.named_hands("procedure", "T5", block) == {("T5", 3), ("T5", 8)}


def _evidence(path, hands) -> tuple[dict, dict]:
    engine = store_engine(path)
    with engine.connect() as conn:
        ids = [r[0] for r in conn.execute(select(protect_evidence.c.alert_id).distinct())]
        out = alert_evidence(conn, ids), hand_numbers(conn, hands)
    engine.dispose()
    return out


def test_the_pass_files_the_evidence_of_every_alert(target):  # noqa: F811
    # T1 deals unshuffled (shuffle alerts); T2 feeds seat 1 aces while the button moves (seat luck,
    # its chart crosses h in the 9th hand); T3's dealer errs every hand (the chart).
    t1 = journal(TableSim(no_shuffle, random.Random(5), players=6, gathering=ON_TOP, table="T1"), 3)
    t2 = journal(TableSim(Shuffle(("machine",)), random.Random(3), players=6, table="T2", button=True,
                          table_seats=6, record_seats=True, stack=Stack(1, ("Ah", "As"), 1, physical=True)), 12)
    t3 = journal(TableSim(Shuffle(("machine",)), random.Random(11), players=6, table="T3", dealer="E7"), 40,
                 errors=range(40))
    config = ProtectConfig(shuffle=Shuffle(("machine",)), threshold=0.01, room_rate=0.02)
    alerts, _rows = run(target, {"T1": t1.lines, "T2": t2.lines, "T3": t3.lines}, config)
    evidence, numbers = _evidence(target, [("T2", s) for s in t2.hand_seqs] + [("T2", 10**9), ("T9", 1)])
    # The figures numbered T2's hands 1, 2, 3... as they filed them; a line that opens no hand
    # they filed, and a table they never saw, are not numbered.
    assert numbers == {("T2", seq): i + 1 for i, seq in enumerate(t2.hand_seqs)}
    by_kind = {a["kind"]: a for a in alerts}
    assert {"shuffle", "seat_luck", "dealer_chart"} <= set(by_kind)
    # The shuffle alert was raised twice (hands 2 and 3): both raises kept, the last first.
    shuffle = evidence[by_kind["shuffle"]["id"]]
    assert [r["seq"] for r in shuffle] == [t1.hand_seqs[2], t1.hand_seqs[1]]
    last = shuffle[0]["evidence"]
    assert last["hand"] == t1.hand_seqs[2] and last["earlier"] == t1.hand_seqs[1]
    assert last["statistic"] == len(last["pairs"]) >= 3
    # Each kept pair sits side by side in this draw, and each of its cards has a place in the earlier one.
    for p in last["pairs"]:
        assert p["here"][1] == p["here"][0] + 1 and None not in p["there"] and p["was"]
    seat = evidence[by_kind["seat_luck"]["id"]][0]["evidence"]
    assert seat["seat"] == "seat 1" and seat["recorded"] and seat["strong_hands"] == t2.hand_seqs[:9]
    assert seat["hand"] == t2.hand_seqs[8] and seat["hands"] == 9
    told = why("seat_luck", "T2", seat, numbers)
    assert told["summary"].startswith(
        "Seat 1 was dealt 9 strong starting hands in 9 hands since its chart last stood at 0")
    assert [link["text"] for link in told["links"]] == [f"table T2, hand {n}" for n in range(1, 10)]
    assert [link["href"] for link in told["links"]] == [f"/hands/T2/{s}" for s in t2.hand_seqs[:9]]
    # Every hand erred, so the chart alarmed every few hands; each alarm lists the hands since the
    # alarm before (the chart starts again at 0 after one), the first every hand from the first.
    raises = [r["evidence"] for r in reversed(evidence[by_kind["dealer_chart"]["id"]])]
    assert len(raises) == by_kind["dealer_chart"]["count"] >= 2
    after = 0
    for chart in raises:
        at = t3.hand_seqs.index(chart["hand"])
        assert chart["error_hands"] == [["T3", s] for s in t3.hand_seqs[after:at + 1]]
        after = at + 1
    assert json.dumps(raises)   # JSON as stored
