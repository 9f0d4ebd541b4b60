"""A hand's story from the stored journal lines: the cards as they left the shoe,
the board, every decision with its rule and steps, which steps were seen done;
and the page surveillance opens from an alert."""

from __future__ import annotations

import json

from sqlalchemy import select

from tests.floor.test_figures import SCENARIOS, journal_lines, scenario, session, T0
from tests.floor.web.test_app import WebProcess, add_users, call, sign_in
from tests.floor.protect.test_decks import by_tag
from tests.floor.registry_support import deck_tags
from dealerbox.floor.telling import figures as F
from dealerbox.link import protocol as P
from dealerbox.floor.telling import story as S
from dealerbox.floor.collecting.filing import Filing
from dealerbox.floor.collecting.message import Message
from dealerbox.floor.telling.hands import hands_of_lines, wall_seconds
from dealerbox.floor.store import Store, store_engine
from dealerbox.floor.telling.deck_names import floor_registries
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.language import Language


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


# ------------------------------------------------------------------ the story a pit boss reads (issue 32)

def _swept(events: list[dict]) -> list[dict]:
    """*events* as a real table journals them: the dealer gathers the board once HAND OVER
    is pressed, so every card on it goes ``board_off`` (hardware_sim's sweep)."""
    out, board = [], []
    for e in events:
        out.append(e)
        if e.get("ev") == "board_on" and e.get("card") not in board:
            board.append(e.get("card"))
        elif e.get("ev") == "board_off" and e.get("card") in board:
            board.remove(e.get("card"))
        elif e.get("ev") == "button" and e.get("name") == "hand_over":
            out += [{"t": e["t"] + 0.2 * (k + 1), "ev": "board_off", "card": c} for k, c in enumerate(board)]
    return out


def _lines_of(tmp_path, name: str, *, swept: bool = False) -> list[str]:
    events = scenario(name)
    return _hand(journal_lines("T01", session(_swept(events) if swept else events), T0, tmp_path / name))


def _records(lines):
    return [json.loads(line) for line in lines]


def test_one_four_card_flop_is_one_entry_with_each_step_and_when_it_was_seen_done(tmp_path):
    lines = _lines_of(tmp_path, "four_card_flop_spread")
    story = S.tell("T01", lines)
    decisions = [r for r in _records(lines) if r.get("decision", {}).get("irregularity") == "FOUR_CARD_FLOP"]
    assert len(decisions) == 4  # the box told it once per step it waited for
    [entry] = story["irregularities"]
    assert entry["irregularity"] == "FOUR_CARD_FLOP" and entry["lines"] == [r["seq"] for r in decisions]
    assert [s["text"] for s in entry["steps"]] == decisions[-1]["decision"]["steps"]
    # Steps 1-3 were seen done as the box moved to the next one; the last when it went back to ok.
    ok = next(r for r in _records(lines) if r.get("decision", {}).get("verdict") == "ok")
    assert [s["seq"] for s in entry["steps"]] == [r["seq"] for r in decisions[1:]] + [ok["seq"]]
    assert [s["wall"] for s in entry["steps"]] == [wall_seconds(r["wall"]) for r in decisions[1:] + [ok]]
    assert entry["cards"] == ["T♦", "3♠", "2♠", "A♣"]


def test_steps_never_answered_are_told_not_seen_done(tmp_path):
    story = S.tell("T01", _lines_of(tmp_path, "exposed_deal_then_flop_burned_anyway"))
    exposed = next(e for e in story["irregularities"] if e["irregularity"] == "EXPOSED_DEAL")
    assert [s["done"] for s in exposed["steps"]] == [True, True, False, False]
    assert exposed["steps"][2]["wall"] is None and exposed["steps"][0]["wall"] is not None


def test_the_board_as_laid_street_by_street_with_its_burns_in_the_decisions_notation(tmp_path):
    story = S.tell("T01", _lines_of(tmp_path, "seats_clean_hand"))
    streets = {s["street"]: s for s in story["streets"]}
    assert [c["text"] for c in streets["flop"]["burns"]] == ["8♦"]
    assert [c["text"] for c in streets["flop"]["cards"]] == ["K♣", "J♥", "7♣"]
    assert [c["text"] for c in streets["turn"]["cards"]] == ["A♠"] and streets["turn"]["burns"][0]["text"] == "5♥"
    assert [c["text"] for c in streets["river"]["cards"]] == ["4♦"] and streets["river"]["burns"][0]["text"] == "6♠"
    # Each seat the table named, with the two cards it went on to get.
    assert [(s["seat"], [c["text"] for c in s["cards"]]) for s in story["seats"]] == \
        [("seat 1", ["Q♠", "J♦"]), ("seat 4", ["J♣", "4♣"]), ("seat 8", ["K♥", "A♥"])]
    assert all(c["text"] == S.shown_card(c["code"]) for c in story["shoe"])
    assert "Td" not in json.dumps(story["timeline"], ensure_ascii=False)


def test_a_card_taken_off_the_board_is_told_apart_from_the_board(tmp_path):
    story = S.tell("T01", _lines_of(tmp_path, "four_card_flop_spread"))
    flop = story["streets"][0]
    assert [c["text"] for c in flop["cards"]] == ["T♦", "3♠", "A♣"]
    assert [c["text"] for c in flop["taken_off"]] == ["2♠"] and [c["text"] for c in flop["burns"]] == ["T♠"]
    assert story["board_text"] == ["T♦", "3♠", "A♣", "K♠", "9♦"]


def test_a_card_never_read_keeps_its_place_and_shows_no_face(tmp_path):
    lines = _lines_of(tmp_path, "unread_hole_card_mouth_sensor")
    story = S.tell("T01", lines)
    unread = [c for c in story["shoe"] if c["unread"]]
    assert unread and all(c["text"] == S.UNREAD and c["code"] == S.UNREAD for c in unread)
    shoe = [r["event"] for r in _records(lines) if r.get("event", {}).get("ev") == "shoe"]
    assert [c["unread"] for c in story["shoe"]] == [bool(e.get("unread")) for e in shoe]
    held = [c for s in story["seats"] for c in s["cards"] if c["unread"]]
    assert held, story["seats"]  # the unread card is a hole card: its seat shows the place
    # Play on: the box asked for no correction, so nothing is "not seen done" (no false alarm);
    # HAND OVER's record of it (a deck check after the hand) is kept with it.
    [told] = story["irregularities"]
    assert told["irregularity"] == "UNREAD_CARD" and [s["done"] for s in told["steps"]] == [None]
    assert told["record"] and "deck check" in told["record"]["text"] and not story["after_hand"]


def _scenarios_with_a_board() -> list[str]:
    names = []
    for path in sorted(SCENARIOS.glob("*.jsonl")):
        text = path.read_text()
        if '"board_on"' in text and '"hand_over"' in text and text.count('"new_hand"') == 1:
            names.append(path.stem)
    return names


def test_the_board_never_reads_empty_when_the_journal_laid_cards_even_once_the_dealer_gathered_it(tmp_path):
    """Every scripted hand with a board, as a real table journals it (the board gathered
    after HAND OVER), recounted from its journal lines: the story's board is the cards
    laid and never taken off while the hand went on, and the irregularities are the ones
    the floor's figures count."""
    names = _scenarios_with_a_board()
    assert len(names) > 40
    for name in names:
        lines = _lines_of(tmp_path, name, swept=True)
        story = S.tell("T01", lines)
        laid = [r["event"] for r in _records(lines) if r.get("event", {}).get("ev") == "board_on"]
        assert story["board"], name
        assert set(story["board"]) <= {S._card_of(e) for e in laid}, name
        street_cards = [c["code"] for s in story["streets"] for c in s["cards"]]
        assert street_cards == story["board"], name
        # Each card out of the shoe is told in one place at most: a seat, beyond the deal, a burn.
        placed = [c["seq"] for s in story["seats"] for c in s["cards"]] + \
            [c["seq"] for c in story["extra_deal"]] + [c["seq"] for s in story["streets"] for c in s["burns"]]
        assert len(placed) == len(set(placed)) and set(placed) <= {c["seq"] for c in story["shoe"]}, name
        assert not {c["code"] for s in story["streets"] for c in s["taken_off"]} & set(story["board"]), name
        [summary] = hands_of_lines("T01", lines)
        assert [e["lines"][0] for e in story["irregularities"]] == [s for _i, _v, s in summary.irregularities], name


def test_a_hand_gathered_before_hand_over_keeps_its_board(tmp_path):
    events = scenario("seats_clean_hand")
    over = next(i for i, e in enumerate(events) if e.get("name") == "hand_over")
    board = [e["card"] for e in events if e.get("ev") == "board_on"]
    t = events[over]["t"]
    gathered = [{"t": t + 0.1 * (k + 1), "ev": "board_off", "card": c} for k, c in enumerate(board)]
    events = events[:over] + gathered + [{**events[over], "t": t + 1}]
    lines = _hand(journal_lines("T01", session(events), T0, tmp_path / "gathered"))
    assert S.tell("T01", lines)["board"] == board


def test_hand_place_numbers_the_tables_hands_and_links_the_ones_around_it(tmp_path):
    path = tmp_path / "floor.sqlite"
    lines = journal_lines("T01", session(("dealer", "2077"), scenario("seats_clean_hand"),
                                         scenario("four_card_flop_spread"), scenario("clean_2p_spread")),
                          T0, tmp_path / "three")
    _filed(path, "T01", lines)
    starts = [json.loads(line)["seq"] for line in lines if '"new_hand"' in line]
    engine = store_engine(path)
    F.Ledger().catch_up(engine)
    with engine.connect() as conn:
        places = [S.hand_place(conn, "T01", s) for s in starts]
        assert S.hand_place(conn, "T01", 1)["number"] is None  # the sign-in opens no hand
    engine.dispose()
    assert [p["number"] for p in places] == [1, 2, 3]
    assert [p["prev"] for p in places] == [None, starts[0], starts[1]]
    assert [p["next"] for p in places] == [starts[1], starts[2], None]


def test_a_hands_number_is_kept_with_it_across_ledgers_and_a_migration(tmp_path):
    """Issue 47: the hand's number is the ledger's, filed with it (never a count of the table's
    hands before it, which a year of play makes long): a fresh ledger (a restarted floor) goes on
    counting, the hand in play is the next, and migration 0013 numbers the hands filed before it
    as the ledger does."""
    from dealerbox.floor import migrations as M

    path = tmp_path / "floor.sqlite"
    lines = journal_lines("T01", session(("dealer", "2077"), scenario("seats_clean_hand"),
                                         scenario("four_card_flop_spread"), scenario("clean_2p_spread"),
                                         scenario("seats_clean_hand")), T0, tmp_path / "four")
    starts = [json.loads(line)["seq"] for line in lines if '"new_hand"' in line]
    engine = store_engine(path)
    _filed(path, "T01", lines[:starts[2] + 3])   # two hands over, the third under way
    F.Ledger().catch_up(engine)
    with engine.connect() as conn:
        assert [S.hand_place(conn, "T01", s)["number"] for s in starts[:3]] == [1, 2, 3]
    _filed(path, "T01", lines)
    F.Ledger().catch_up(engine)                 # another process: it reads the open hand again
    with engine.connect() as conn:
        numbered = [S.hand_place(conn, "T01", s)["number"] for s in starts]
    assert numbered == [1, 2, 3, 4]
    M.downgrade(engine, "0012")
    M.upgrade(engine)
    with engine.connect() as conn:
        assert [S.hand_place(conn, "T01", s)["number"] for s in starts] == numbered
        assert conn.execute(select(F.fig_progress.c.hands)).scalar() == 4   # each hand over, filed
    engine.dispose()


def test_a_tag_journaled_by_its_uid_is_named_from_the_rooms_registry_in_the_store(tmp_path):
    """Issue 40: a deck registered on the floor (or at any table) names the cards a table
    journaled by their tag, in the story the page tells, with no file naming the deck."""
    uid_of = {card: uid for uid, card in sorted(deck_tags("Red 7").items(), reverse=True)}
    played = _played(tmp_path, "exposed_deal_then_flop_burned_anyway", "2077")
    lines = by_tag(played, uid_of.__getitem__)
    path = tmp_path / "floor.sqlite"
    _filed(path, "T01", lines)
    add_users(path, ("vera",))
    seq = next(json.loads(line)["seq"] for line in lines if '"new_hand"' in line)
    with Store(path) as store:
        store.register_deck("Red 7", "red", deck_tags("Red 7"), "ada")
        named = S.registry_cards(*floor_registries(None, store.engine))
        assert named(uid_of["Qs"]) == "Qs (deck Red 7)" and named("04AABBCCDDEEFF") is None
    told = S.tell("T01", _hand(played), dealer="2077")
    assert told["shoe"]
    with WebProcess(tmp_path, path) as web:
        cookie, _csrf = sign_in(web, "vera")
        status, _h, body = call(web, "GET", f"/api/hands/T01/{seq}", cookie=cookie)
        assert status == 200
        assert [c["card"] for c in body["shoe"]] == [f"{c['card']} (deck Red 7)" for c in told["shoe"]]
        assert not any(c["card"].startswith("uid:") for c in body["shoe"])


def test_a_reader_of_another_language_gets_the_same_story_with_its_timeline_in_their_words(tmp_path):
    lines = _lines_of(tmp_path, "four_card_flop_spread")
    english = S.tell("T01", lines)
    czech = S.tell("T01", lines, language=Language("cs", FloorClock("Europe/Prague")))
    # The same hand, card for card and step for step: only the words a person reads differ.
    for key in ("seats", "board", "shoe", "streets", "ended_by", "round_done"):
        assert czech[key] == english[key], key

    def unworded(story):  # a step's "by" is the timeline's words for what did it
        return [{**e, "steps": [{k: v for k, v in s.items() if k != "by"} for s in e["steps"]]}
                for e in story["irregularities"]]
    assert unworded(czech) == unworded(english)
    assert [s["by"] for s in czech["irregularities"][0]["steps"]][0] == "tlačítko ACK"
    assert [e["seq"] for e in czech["timeline"]] == [e["seq"] for e in english["timeline"]]
    said = {e["seq"]: e["what"] for e in english["timeline"]}
    told = {e["seq"]: e["what"] for e in czech["timeline"]}
    first = english["timeline"][0]["seq"]
    assert said[first] == "NEW HAND, 8 players" and told[first] == "NEW HAND, 8 hráčů"
    shoe = next(e["seq"] for e in english["timeline"] if e["what"].startswith("out of the shoe"))
    assert told[shoe] == said[shoe].replace("out of the shoe", "ze shoe")
    decision = next(s for s, w in said.items() if w.startswith("decision FLOOR"))
    assert said[decision] == "decision FLOOR FOUR_CARD_FLOP"
    assert told[decision] == "rozhodnutí VOLÁNÍ FLOORMANA FOUR_CARD_FLOP"
    assert any(w == "tlačítko ROUND DONE" for w in told.values())  # the panel's buttons keep their labels
    assert [s["seat"] for s in czech["seats"]] == [f"seat {s['number']}" for s in czech["seats"]]
