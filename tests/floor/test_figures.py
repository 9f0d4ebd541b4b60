"""The floor's figures (dealerbox/floor/telling/figures.py and its JSON API) against a recount.

The journals are the real engine's: event sessions (the demo the dealers rotate
in, and scenario files with misdeals, voids, wrong corrections, unread cards and
reader faults, with dealers signing in between and during hands) fed to
HandEngine, written by the real Journal on a virtual clock and filed into the
store by the collector's own Filing. Every figure the API answers is compared
with a count made here, in plain Python, from the same lines through hands.py.
"""

from __future__ import annotations

import json
import math
import statistics
import threading
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.floor.web.test_app import WebProcess, add_users, call, sign_in
from dealerbox.floor.telling import figures as F
from dealerbox.link import protocol as P
from dealerbox.floor.collecting.filing import Filing
from dealerbox.floor.collecting.message import Message
from dealerbox.floor.telling.hands import SENSING, hands_of_lines, wall_seconds
from dealerbox.floor.operating.move import move_store
from dealerbox.service.uplink import JournalReader
from dealerbox.floor.store import Store, store_engine
from dealerbox.rules.engine import HandEngine
from dealerbox.domain.events import Event
from dealerbox.domain.messages import load_messages
from dealerbox.rules.profiles import load_profile
from dealerbox.service.journal import Journal
from dealerbox.service.output import decision_record
from hardware_sim.demo import demo_script
from hardware_sim.script import HandScript

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "scenarios"
#: The sessions start ten hours ago: the API's default range (the last 12 hours) holds them.
T0 = math.floor(time.time() / 3600) * 3600 - 10 * 3600

# ------------------------------------------------------------------ the sessions


def scenario(name: str) -> list[dict]:
    out = []
    for raw in (SCENARIOS / f"{name}.jsonl").read_text().splitlines():
        d = json.loads(raw)
        if "ev" in d:
            out.append(d)
    return out


def session(*parts, gap_s: float = 40.0) -> list[dict]:
    """Event lists (or ("dealer", id), ("break", seconds)) one after another in time."""
    events, t = [], 0.0
    for part in parts:
        if isinstance(part, tuple) and part[0] == "dealer":
            t += 2.0
            events.append({"t": t, "ev": "dealer", "dealer": part[1]})
            continue
        if isinstance(part, tuple) and part[0] == "break":
            t += part[1]
            continue
        base = t + gap_s - part[0]["t"]
        for e in part:
            events.append({**e, "t": round(base + e["t"], 3)})
        t = events[-1]["t"]
    return events


def with_dealer_inside(events: list[dict], dealer, after: int = 5) -> list[dict]:
    """A badge read *after* events into the hand: it takes effect when the hand is over."""
    out = list(events)
    out.insert(after, {"t": out[after - 1]["t"], "ev": "dealer", "dealer": dealer})
    return out


def slow_hands(seed: int, hands: int, players: int, step_s: float) -> list[dict]:
    s = HandScript(seed=seed, step_s=step_s)
    for _ in range(hands):
        s.full_hand(players)
        s.tick(30.0)
    return s.events


SESSIONS = {
    "T01": lambda: session(
        demo_script(40).events,                      # dealers 1042 and 2077 rotate; exposed, void...
        ("dealer", "3001"),
        scenario("extra_card_then_wrong_burn"),
        scenario("exposed_second_card_no_mouth_sensor_dealer_says_misdeal"),
        with_dealer_inside(scenario("reader_faults_again_and_again"), "1042"),
        ("break", 1800.0),
        scenario("boxed_twice"),
        ("dealer", None),
        slow_hands(3, 3, 9, 6.0),
    ),
    "T02": lambda: session(
        ("dealer", "2077"),
        slow_hands(7, 4, 6, 4.0),
        scenario("exposed_deal_then_flop_burned_anyway"),
        with_dealer_inside(scenario("premature_flop_burn_shuffled_in_during_correction"), "3001", 9),
        scenario("burn_put_back_after_an_unread_first_burn"),
        scenario("c40_premature_flop_dealt_on_with_an_unread_card"),
        ("break", 3600.0),
        demo_script(41).events,
        scenario("returned_extra_card_redrawn_unread"),
    ),
    "T03": lambda: session(
        scenario("exposed_early_first_card"),        # nobody signed in yet
        ("dealer", "1042"),
        scenario("c40_short_deal_unanswered_the_dealer_goes_on_with_the_flop"),
        scenario("premature_river_board_card_gathered"),
        slow_hands(11, 5, 10, 5.0),
        ("dealer", "3001"),
        scenario("exposed_third_card_after_an_unread_one"),
        scenario("reader_faults_again_and_again"),
    ),
}


def journal_lines(table: str, events: list[dict], t0: float, directory: Path) -> list[str]:
    """The journal lines the box writes for *events* (the engine's decisions included)."""
    engine = HandEngine(load_profile("tda-2019"))
    messages = load_messages("en")
    now = {"t": t0}
    with Journal(directory, clock=lambda: now["t"], sync="none") as journal:
        for d in events:
            event = Event.from_dict(d)
            now["t"] = t0 + event.t
            seq = journal.append(event)
            for decision in engine.feed(event):
                journal.append_decision(decision_record(decision, messages, seq, event))
    return [raw.decode("ascii") for _s, raw in JournalReader(directory).read(1, 10 ** 6)]


@pytest.fixture(scope="module")
def room(tmp_path_factory) -> dict[str, list[str]]:
    base = tmp_path_factory.mktemp("journals")
    out = {}
    for i, (table, make) in enumerate(SESSIONS.items()):
        out[table] = journal_lines(table, make(), T0 + 97.0 * i, base / table)
    return out


def file_lines(store: Store, table: str, lines: list[str], *, per_batch: int = 37) -> None:
    """File *lines* as the collector does, in batches, committed at the last line's wall time."""
    filing = Filing(store)
    for i in range(0, len(lines), per_batch):
        batch = lines[i:i + per_batch]
        payload = P.encode({"table": table, "boot": 1, "oldest": 1, "lines": batch})
        wall = json.loads(batch[-1])["wall"]
        filing.store_batch([Message.on_table_topic(P.journal_topic(table), payload, 0.0)], wall_seconds(wall))


def clear_some_alerts(store: Store) -> None:
    """Supervisors clear most alerts; a few stay open (the last one at least: alerts of one
    table and kind fold into one, so there may be only a few)."""
    alerts = store.alerts()
    for i, alert in enumerate(alerts):
        if i % 4 != 3 and i != len(alerts) - 1:
            store.clear_alert(alert["id"], ("sam", "ada")[i % 2], "seen to")


def filled_store(path: Path, room) -> Path:
    with Store(path) as store:
        for table, lines in room.items():
            file_lines(store, table, lines)
        clear_some_alerts(store)
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def room_store(request, tmp_path, room):
    """The room's store on each backend: the SQLite file, or the same moved into a fresh
    PostgreSQL database as ``dealerbox floor migrate --from`` moves it."""
    lite = filled_store(tmp_path / "floor.sqlite", room)
    if request.param == "sqlite":
        return lite
    url = request.getfixturevalue("postgres_cluster").database(f"room_{uuid.uuid4().hex[:12]}")
    with Store(lite) as source, Store(url) as target:
        move_store(source, target)
    return url


# ------------------------------------------------------------------ the recount (plain Python)


def recount_hands(room) -> list[dict]:
    """Every closed hand with what the figures need, from the lines alone."""
    out = []
    for table, lines in room.items():
        last_ended = None
        for h in hands_of_lines(table, lines):
            pause = 0.0
            if h.started is not None and last_ended is not None and 0 <= h.started - last_ended <= F.BREAK_S:
                pause = h.started - last_ended
            if h.ended is not None:
                last_ended = h.ended
            episodes = [(i, v) for i, v, _s in h.irregularities if i not in SENSING]
            out.append({"table": table, "dealer": h.dealer, "started": h.started, "seconds": h.seconds,
                        "dealing": (h.seconds or 0.0) + pause, "players": h.players, "episodes": episodes,
                        "corrections": h.corrections, "wrong": h.wrong_corrections,
                        "misdeal": any(v == "misdeal" for _i, v in episodes),
                        "void": any(v == "void" for _i, v in episodes),
                        "unread": sum(1 for i, _v, _s in h.irregularities if i == "UNREAD_CARD"),
                        "degraded": sum(1 for i, _v, _s in h.irregularities if i == "READER_DEGRADED"),
                        "faults": dict(h.reader_faults)})
    return out


def per(count, base):
    return round(count * 100.0 / base, 4) if base else None


def recount(hands: list[dict]) -> dict:
    n = len(hands)
    dealing = sum(h["dealing"] for h in hands)
    players = [h["players"] for h in hands if h["players"] is not None]
    seconds = [h["seconds"] for h in hands if h["seconds"] is not None]
    by_id, by_verdict = {}, {}
    for h in hands:
        for i, v in h["episodes"]:
            by_id[i] = by_id.get(i, 0) + 1
            by_verdict[v] = by_verdict.get(v, 0) + 1
    irregular = sum(len(h["episodes"]) for h in hands)
    corrections = sum(h["corrections"] for h in hands)
    wrong = sum(h["wrong"] for h in hands)
    misdeals = sum(h["misdeal"] for h in hands)
    voids = sum(h["void"] for h in hands)
    return {
        "hands": n, "dealing_seconds": round(dealing, 3),
        "hands_per_hour": round(n * 3600 / dealing, 4) if dealing else None,
        "players_per_hand": round(sum(players) / len(players), 4) if players else None,
        "mean_seconds_per_hand": round(sum(seconds) / len(seconds), 3) if seconds else None,
        "irregularities": irregular, "irregularities_per_100_hands": per(irregular, n),
        "irregularities_by_id": {k: {"count": c, "per_100_hands": per(c, n)} for k, c in sorted(by_id.items())},
        "irregularities_by_verdict": {k: {"count": c, "per_100_hands": per(c, n)}
                                      for k, c in sorted(by_verdict.items())},
        "misdeals": misdeals, "misdeals_per_100_hands": per(misdeals, n),
        "voids": voids, "voids_per_100_hands": per(voids, n),
        "corrections": corrections, "wrong_corrections": wrong,
        "wrong_corrections_per_100_corrections": per(wrong, corrections),
        "unread_cards": sum(h["unread"] for h in hands),
        "reader_degraded": sum(h["degraded"] for h in hands),
        "reader_faults": sum(sum(h["faults"].values()) for h in hands),
    }


def in_range(hands, start, end):
    return [h for h in hands if h["started"] is not None and start <= h["started"] < end]


def recount_room(room, start, end) -> dict:
    hands = in_range(recount_hands(room), start, end)
    tables = sorted({h["table"] for h in hands})
    dealers = sorted({h["dealer"] for h in hands}, key=lambda d: (d is None, d or ""))
    return {"from": start, "to": end,
            "tables": [{"table": t, **recount([h for h in hands if h["table"] == t])} for t in tables],
            "dealers": [{"dealer": d, **recount([h for h in hands if h["dealer"] == d])} for d in dealers],
            "room": recount(hands)}


def recount_hourly(room, start, end, table=None, dealer=None) -> list[dict]:
    hands = [h for h in in_range(recount_hands(room), start, end)
             if (table is None or h["table"] == table) and (dealer is None or h["dealer"] == dealer)]
    out = []
    for hour in range(math.floor(start / 3600), math.ceil(end / 3600)):
        these = [h for h in hands if math.floor(h["started"] / 3600) == hour]
        dealing = sum(h["dealing"] for h in these)
        irregular = sum(len(h["episodes"]) for h in these)
        out.append({"hour": hour * 3600, "hands": len(these), "dealing_seconds": round(dealing, 3),
                    "hands_per_hour": round(len(these) * 3600 / dealing, 4) if dealing else None,
                    "irregularities": irregular, "irregularities_per_100_hands": per(irregular, len(these))})
    return out


def recount_sensing(room, start, end) -> list[dict]:
    hands = in_range(recount_hands(room), start, end)
    out = []
    for table in sorted({h["table"] for h in hands}):
        these = [h for h in hands if h["table"] == table]
        n = len(these)
        readers = {}
        for h in these:
            for r, c in h["faults"].items():
                readers[r] = readers.get(r, 0) + c
        unread = sum(h["unread"] for h in these)
        degraded = sum(h["degraded"] for h in these)
        faults = sum(readers.values())
        out.append({"table": table, "hands": n, "unread_cards": unread, "unread_cards_per_100_hands": per(unread, n),
                    "reader_degraded": degraded, "reader_degraded_per_100_hands": per(degraded, n),
                    "reader_faults": faults, "reader_faults_per_100_hands": per(faults, n),
                    "readers": {r: {"faults": c, "per_100_hands": per(c, n)} for r, c in sorted(readers.items())}})
    out.sort(key=lambda r: (-(r["unread_cards"] + r["reader_degraded"] + r["reader_faults"]) / r["hands"],
                            r["table"]))
    return out


def recount_alerts(alerts, start, end) -> list[dict]:
    by, still_open = {}, 0
    for a in alerts:
        if not start <= a["raised"] < end:
            continue
        if a["cleared_at"] is None:
            still_open += 1
        else:
            by.setdefault(a["cleared_by"], []).append(max(0.0, a["cleared_at"] - a["raised"]))
    out = [{"cleared_by": w, "count": len(s), "mean_s": round(sum(s) / len(s), 3),
            "p50_s": round(statistics.median(s), 3), "max_s": round(max(s), 3)} for w, s in sorted(by.items())]
    if still_open:
        out.append({"cleared_by": None, "count": 0, "open": still_open, "mean_s": None, "p50_s": None,
                    "max_s": None})
    return out


def all_queries(conn, room, start, end) -> dict:
    """Every query's answer over [start, end), for comparing stores."""
    return {"room": F.room_figures(conn, start, end),
            "tables": {t: F.table_figures(conn, t, start, end) for t in room},
            "dealers": {d: F.dealer_figures(conn, d, start, end) for d in ("1042", "2077", "3001", None)},
            "hourly": F.hourly(conn, start, end), "hourly_t": F.hourly(conn, start, end, table_id="T02"),
            "hourly_d": F.hourly(conn, start, end, dealer_id="1042"),
            "alerts": F.alert_clearing(conn, start, end), "sensing": F.sensing_faults(conn, start, end)}


# ------------------------------------------------------------------ the tests


def test_the_sessions_hold_what_the_figures_must_count(room):
    """The journals are not trivial: every kind of thing counted happens in them."""
    hands = recount_hands(room)
    total = recount(hands)
    assert total["hands"] >= 40
    assert {"1042", "2077", "3001", None} <= {h["dealer"] for h in hands}
    assert total["misdeals"] and total["voids"] and total["wrong_corrections"] and total["corrections"]
    assert total["reader_faults"] and total["unread_cards"]
    assert "floor" in total["irregularities_by_verdict"]
    # A badge read inside a hand changed the dealer of the next hand only.
    t01 = [h for h in hands if h["table"] == "T01"]
    assert any(a["dealer"] == "3001" and b["dealer"] == "1042" for a, b in zip(t01, t01[1:]))


def test_the_api_answers_what_a_recount_of_the_journals_says(tmp_path, room, room_store):
    store_path = room_store
    add_users(store_path, ("vera",))
    with Store(store_path) as store:
        alerts = store.alerts(open_only=False)
    assert any(a["cleared_at"] for a in alerts) and any(a["cleared_at"] is None for a in alerts)
    start, end = T0 - 600.0, T0 + 11 * 3600.0
    with WebProcess(tmp_path, store_path) as web:
        cookie, _csrf = sign_in(web, "vera")
        q = f"from={start}&to={end}"

        def get(path):
            status, _h, body = call(web, "GET", path, cookie=cookie)
            assert status == 200, body
            return body
        expected_room = recount_room(room, start, end)
        assert get(f"/api/figures/room?{q}") == expected_room
        for row in expected_room["tables"]:
            assert get(f"/api/figures/tables/{row['table']}?{q}") == {**row, "from": start, "to": end}
        hands = in_range(recount_hands(room), start, end)
        for row in expected_room["dealers"]:
            if row["dealer"] is None:
                continue
            tables = sorted({h["table"] for h in hands if h["dealer"] == row["dealer"]})
            assert get(f"/api/figures/dealers/{row['dealer']}?{q}") == {**row, "from": start, "to": end,
                                                                        "tables": tables}
        assert get(f"/api/figures/hourly?{q}")["hours"] == recount_hourly(room, start, end)
        assert get(f"/api/figures/hourly?{q}&table=T02")["hours"] == recount_hourly(room, start, end, table="T02")
        assert get(f"/api/figures/hourly?{q}&dealer=1042")["hours"] == recount_hourly(room, start, end, dealer="1042")
        assert get(f"/api/figures/sensing?{q}")["tables"] == recount_sensing(room, start, end)
        assert get(f"/api/figures/alerts?{q}")["supervisors"] == recount_alerts(alerts, start, end)
        # A narrower range: a hand belongs to it by its start.
        mid = T0 + 3 * 3600.0
        assert get(f"/api/figures/room?from={start}&to={mid}") == recount_room(room, start, mid)
        # The default range is the last 12 hours; ISO 8601 is taken too.
        default = get("/api/figures/room")
        assert default["to"] - default["from"] == 12 * 3600 and default["room"]["hands"] == expected_room["room"]["hands"]
        iso = lambda ts: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))  # noqa: E731
        assert get(f"/api/figures/room?from={iso(T0)}&to={iso(mid)}") == recount_room(room, T0, mid)


@pytest.mark.parametrize("query, says", [
    ("from=yesterday", "from"),
    ("to=nan", "to"),
    ("from=2026-11-24T10:00:00", "offset"),
    ("from=100&to=50", "before"),
    ("from=0&to=100000000", "at most"),
    ("table=no%20such%20id!", "table"),
])
def test_a_bad_range_or_id_is_a_clear_400(tmp_path, query, says):
    store_path = tmp_path / "floor.sqlite"
    add_users(store_path, ("vera",))
    with WebProcess(tmp_path, store_path) as web:
        cookie, _csrf = sign_in(web, "vera")
        status, _h, body = call(web, "GET", f"/api/figures/hourly?{query}", cookie=cookie)
        assert status == 400 and says in body["error"], body
        status, _h, body = call(web, "GET", "/api/figures/dealers/not%20a%20badge", cookie=cookie)
        assert status == 400 and "dealer" in body["error"]
        # No session, no figures.
        for path in ("/api/figures/room", "/api/figures/tables/T01", "/api/figures/alerts"):
            assert call(web, "GET", path)[0] == 401


def test_catching_up_in_slices_gives_what_catching_up_once_gives(tmp_path, room):
    start, end = T0 - 600.0, T0 + 11 * 3600.0
    once = filled_store(tmp_path / "once.sqlite", room)
    engine = store_engine(once)
    assert F.Ledger().catch_up(engine) == sum(len(v) for v in room.values())
    assert F.Ledger().catch_up(engine) == 0  # nothing new: nothing read again
    with engine.connect() as conn:
        whole = all_queries(conn, room, start, end)
    engine.dispose()

    sliced_path = tmp_path / "sliced.sqlite"
    engine = store_engine(sliced_path)
    # Two ledgers take turns (as the collector and the web view do): each goes on from
    # where it left a table only while the other did not move it.
    ledgers = [F.Ledger(chunk=13), F.Ledger(chunk=7)]
    with Store(sliced_path) as store:
        filings = {t: Filing(store) for t in room}
        longest = max(len(v) for v in room.values())
        for cut in range(0, longest, 29):  # slices that end inside hands
            for table, lines in room.items():
                part = lines[cut:cut + 29]
                if part:
                    payload = P.encode({"table": table, "boot": 1, "oldest": 1, "lines": part})
                    filings[table].store_batch([Message.on_table_topic(P.journal_topic(table), payload, 0.0)],
                                               wall_seconds(json.loads(part[-1])["wall"]))
            ledgers[cut // 29 % 3 // 2].catch_up(engine)
    with engine.connect() as conn:
        sliced = all_queries(conn, room, start, end)
    engine.dispose()
    # (The alerts differ: each is raised at the time its slice was filed.)
    for key in ("room", "tables", "dealers", "hourly", "hourly_t", "hourly_d", "sensing"):
        assert sliced[key] == whole[key], key
    assert whole["room"] == recount_room(room, start, end)


def test_a_malformed_stored_line_does_not_stop_the_ledger(tmp_path, room):
    path = tmp_path / "floor.sqlite"
    lines = room["T02"]
    cut = len(lines) // 2
    with Store(path) as store:
        file_lines(store, "T02", lines[:cut])
        # Garbage stored as a line (a table that sent it, a disk that flipped it).
        with store.lock:
            store.begin()
            store.add_line("T02", cut + 1, "{this is no journal line", "0" * 64, False, time.time())
            store.update_table("T02", last_seq=cut + 1)
            store.commit()
        rest = [json.dumps({**json.loads(raw), "seq": json.loads(raw)["seq"] + 1}) for raw in lines[cut:]]
        with store.lock:
            store.begin()
            for raw in rest:
                d = json.loads(raw)
                store.add_line("T02", d["seq"], raw, "0" * 64, False, time.time())
            store.update_table("T02", last_seq=json.loads(rest[-1])["seq"])
            store.commit()
    engine = store_engine(path)
    ledger = F.Ledger()
    assert ledger.catch_up(engine) == len(lines) + 1
    assert ledger.skipped == {"T02": 1}
    start, end = T0 - 600.0, T0 + 11 * 3600.0
    with engine.connect() as conn:
        got = F.table_figures(conn, "T02", start, end)
    engine.dispose()
    expected = recount_room({"T02": lines[:cut] + rest}, start, end)["tables"][0]
    assert got == {**expected, "from": start, "to": end}


def test_two_ledgers_catching_up_at_once_file_every_hand_once(tmp_path, room):
    path = filled_store(tmp_path / "floor.sqlite", room)
    engines = [store_engine(path) for _ in range(3)]
    ledgers = [F.Ledger(chunk=50) for _ in engines]
    threads = [threading.Thread(target=lg.catch_up, args=(en,)) for lg, en in zip(ledgers, engines)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    F.Ledger().catch_up(engines[0])
    start, end = T0 - 600.0, T0 + 11 * 3600.0
    with engines[0].connect() as conn:
        got = F.room_figures(conn, start, end)
    for engine in engines:
        engine.dispose()
    assert got == recount_room(room, start, end)


def test_the_collector_brings_the_figures_up_to_date_by_itself(tmp_path, room):
    """No web view open: the collector's figures thread files what it stored into the figures."""
    from dealerbox.link.client import Identity
    from dealerbox.floor.collecting.collector import Collector

    start, end = T0 - 600.0, T0 + 11 * 3600.0
    path = filled_store(tmp_path / "floor.sqlite", room)
    with Store(path) as store:
        collector = Collector(Identity("127.0.0.1", 1, Path("ca"), Path("c"), Path("k")), store)
        collector._catch_up_figures()  # what its figures thread runs every few seconds
    engine = store_engine(path)
    with engine.connect() as conn:
        assert F.room_figures(conn, start, end) == recount_room(room, start, end)
    # Filed once: a ledger coming after it has nothing left to read.
    assert F.Ledger().catch_up(engine) == 0
    engine.dispose()


def test_an_alerts_line_names_the_number_of_the_hand_holding_it(room_store):
    engine = store_engine(room_store)
    try:
        F.Ledger().catch_up(engine)
        with engine.connect() as conn:
            h = F.fig_hands.c
            hands = conn.execute(select(h.table_id, h.start_seq, h.end_seq, h.number)
                                 .order_by(h.table_id, h.start_seq)).all()
            table = hands[0].table_id
            mine = [x for x in hands if x.table_id == table]
            first, second, last = mine[0], mine[1], mine[-1]
            lines = [(table, first.start_seq), (table, (first.start_seq + first.end_seq) // 2),
                     (table, first.end_seq), (table, second.start_seq), (table, last.end_seq + 1),
                     (table, 0), ("T99", first.start_seq), (table, "7"), (table, True)]
            numbers = F.hand_numbers(conn, lines)
            # Every hand of every table at once, by its last line (a line given twice is asked once).
            many = F.hand_numbers(conn, [(x.table_id, x.end_seq) for x in hands] * 2)
            by_start = F.hand_numbers(conn, [(table, first.start_seq), (table, second.start_seq)])
    finally:
        engine.dispose()
    assert [first.number, second.number] == [1, 2] and last.number == len(mine)
    # Any line of a hand names that hand; a line past its table's last hand, before its first,
    # at a table the floor does not know, or not a line at all, names none.
    assert numbers == {(table, first.start_seq): 1, (table, (first.start_seq + first.end_seq) // 2): 1,
                       (table, first.end_seq): 1, (table, second.start_seq): 2}
    assert by_start == {(table, first.start_seq): 1, (table, second.start_seq): 2}
    assert many == {(x.table_id, x.end_seq): x.number for x in hands}
