"""A hand's story from the stored journal lines: the cards as they left the shoe,
the board, every decision with its rule and steps, which steps were seen done;
and the page surveillance opens from an alert."""

from __future__ import annotations

import json

from tests.floor.test_figures import journal_lines, scenario, session, T0
from tests.floor.web.test_app import WebProcess, add_users, call, sign_in
from dealerbox.floor import figures as F
from dealerbox.link import protocol as P
from dealerbox.floor import story as S
from dealerbox.floor.filing import Filing
from dealerbox.floor.message import Message
from dealerbox.floor.hands import wall_seconds
from dealerbox.floor.store import Store, store_engine


def _played(tmp_path, name: str, dealer: str | None = None) -> list[str]:
    parts = ([("dealer", dealer)] if dealer else []) + [scenario(name)]
    return journal_lines("T01", session(*parts), T0, tmp_path / name)


def _filed(path, table: str, lines: list[str]) -> None:
    with Store(path) as store:
        payload = P.encode({"table": table, "boot": 1, "oldest": 1, "lines": lines})
        Filing(store).store_batch([Message.on_table_topic(P.journal_topic(table), payload, 0.0)],
                                  wall_seconds(json.loads(lines[-1])["wall"]))


def _hand(lines: list[str]) -> list[str]:
    """The lines from the (first) new_hand on: what hand_lines gives for any line of it."""
    first = next(i for i, line in enumerate(lines) if '"new_hand"' in line)
    return lines[first:]


def test_the_story_lists_the_shoe_in_order_the_board_and_each_decision_as_the_journal_has_them(tmp_path):
    lines = _played(tmp_path, "extra_card_then_wrong_burn")
    story = S.tell("T01", _hand(lines), dealer="1042")
    records = [json.loads(line) for line in _hand(lines)]
    shoe = [r["event"].get("card") for r in records if r.get("event", {}).get("ev") == "shoe"]
    assert [c["card"] for c in story["shoe"]] == shoe and len(shoe) > 8
    decisions = [r["decision"] for r in records if "decision" in r]
    assert [(d["verdict"], d["irregularity"], d["step"]) for d in story["decisions"]] == \
        [(d["verdict"], d["irregularity"], d["step"]) for d in decisions]
    assert {"EXTRA_CARD", "WRONG_CORRECTION"} <= {d["irregularity"] for d in story["decisions"]}
    assert all(d["rule"] for d in story["decisions"] if d["irregularity"])
    assert story["dealer"] == "1042" and story["players"] and story["start_seq"] < story["end_seq"]


def test_steps_the_dealer_did_are_seen_done_and_a_wrong_correction_leaves_its_step_undone(tmp_path):
    story = S.tell("T01", _hand(_played(tmp_path, "extra_card_then_wrong_burn")))
    extra = [d for d in story["decisions"] if d["irregularity"] == "EXTRA_CARD"]
    # The box waited for the extra card as the burn; another card came: the step was not done.
    assert extra and not extra[-1]["done"][extra[-1]["step"]]
    wrong = next(d for d in story["decisions"] if d["irregularity"] == "WRONG_CORRECTION")
    assert wrong["steps"] and wrong["rule"] and wrong["seq"] > extra[-1]["seq"]


def test_a_correction_done_right_shows_every_step_seen_done(tmp_path):
    story = S.tell("T01", _hand(_played(tmp_path, "exposed_deal_full_hand_one_by_one")))
    corrected = [d for d in story["decisions"] if d["verdict"] == "correct"]
    assert corrected, story["decisions"]
    assert all(corrected[-1]["done"]), corrected[-1]
    # Each step was seen done as the box moved on to the next one.
    assert [d["done"].count(True) >= d["step"] for d in corrected] == [True] * len(corrected)
    assert story["ended_by"] == "hand_over"


def test_a_correction_gone_wrong_leaves_the_steps_after_it_not_seen_done(tmp_path):
    story = S.tell("T01", _hand(_played(tmp_path, "exposed_deal_then_flop_burned_anyway")))
    exposed = [d for d in story["decisions"] if d["irregularity"] == "EXPOSED_DEAL"]
    assert exposed[-1]["done"] == [True, True, False, False]


def test_a_misdeal_ends_the_story_with_the_board_as_it_stood(tmp_path):
    story = S.tell("T01", _hand(_played(tmp_path, "exposed_second_card_no_mouth_sensor_dealer_says_misdeal")))
    assert story["ended_by"] in ("misdeal", "void")
    assert any(d["verdict"] == "misdeal" for d in story["decisions"])


def test_garbage_among_the_lines_is_passed_over():
    lines = ["not json", json.dumps({"seq": "x"}), json.dumps([1, 2]),
             json.dumps({"seq": 1, "wall": "2026-11-24T10:00:00Z", "event": {"t": 0, "ev": "new_hand", "players": 3}}),
             json.dumps({"seq": 2, "wall": None, "decision": {"verdict": "ok", "steps": "not a list"}})]
    story = S.tell("T09", lines)
    assert story["players"] == 3 and story["decisions"][0]["steps"] == [] and story["start_seq"] == 1


def test_hand_lines_finds_the_whole_hand_from_any_line_of_it(tmp_path):
    path = tmp_path / "floor.sqlite"
    lines = _played(tmp_path, "extra_card_then_wrong_burn", "2077")  # the sign-in, then the hand
    _filed(path, "T01", lines)
    engine = store_engine(path)
    F.Ledger().catch_up(engine)
    hand = _hand(lines)
    with engine.connect() as conn:
        for line in (hand[0], hand[len(hand) // 2], hand[-1]):
            seq = json.loads(line)["seq"]
            found, dealer = S.hand_lines(conn, "T01", seq)
            assert found == hand and dealer == "2077"
        assert S.hand_lines(conn, "T01", 10 ** 6) is None
        assert S.hand_lines(conn, "T99", 1) is None
    engine.dispose()


def test_the_page_tells_the_hand_of_an_alert_to_a_signed_in_user_only(tmp_path):
    path = tmp_path / "floor.sqlite"
    lines = _played(tmp_path, "exposed_deal_then_flop_burned_anyway", "2077")  # a floor call: an alert
    _filed(path, "T01", lines)
    add_users(path, ("vera",))
    with Store(path) as store:
        alert = next(a for a in store.alerts() if a["seq"])
    with WebProcess(tmp_path, path) as web:
        status, _h, _b = call(web, "GET", f"/api/hands/T01/{alert['seq']}")
        assert status == 401
        cookie, _csrf = sign_in(web, "vera")
        status, _h, body = call(web, "GET", f"/api/hands/T01/{alert['seq']}", cookie=cookie)
        assert status == 200 and body == S.tell("T01", _hand(lines), dealer="2077")
        status, _h, page = call(web, "GET", f"/hands/T01/{alert['seq']}", cookie=cookie)
        text = page if isinstance(page, str) else page.decode()
        assert status == 200 and "Cards in the order they left the shoe" in text and "WRONG_CORRECTION" in text
        status, _h, _b = call(web, "GET", "/hands/T01/999999", cookie=cookie)
        assert status == 404
        status, _h, floor = call(web, "GET", "/", cookie=cookie)
        text = floor if isinstance(floor, str) else floor.decode()
        assert f'href="/hands/T01/{alert["seq"]}"' in text


def test_cards_the_table_journaled_by_their_tag_are_named_from_the_deck_registries():
    from dealerbox.domain.decks import simulation_registry

    registry = simulation_registry()
    uid = registry.uids_of("A", "Qs")[0]
    lines = [json.dumps({"seq": 1, "wall": None, "event": {"t": 0, "ev": "new_hand", "players": 2}}),
             json.dumps({"seq": 2, "wall": None, "event": {"t": 1, "ev": "shoe", "uid": uid}}),
             json.dumps({"seq": 3, "wall": None, "event": {"t": 2, "ev": "shoe", "uid": "04AABBCCDDEEFF"}}),
             json.dumps({"seq": 4, "wall": None, "event": {"t": 3, "ev": "shoe", "uid": "not hex"}})]
    story = S.tell("T01", lines, card_of_uid=S.registry_cards(registry))
    assert [c["card"] for c in story["shoe"]] == ["Qs", "uid:04AABBCCDDEEFF", "uid:not hex"]
    assert [c["card"] for c in S.tell("T01", lines)["shoe"]][0] == f"uid:{uid}"
