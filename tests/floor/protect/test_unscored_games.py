"""Every game checked, never silently unchecked: a hand whose reference is missing or was fitted
from another model is not scored, one alert per game and model says so, and the collector's
pass fits the missing games in the background and scores the hands after it (issue 38, item 3).
On SQLite and PostgreSQL, with journals filed by the collector's Filing."""

from __future__ import annotations

import random

from sqlalchemy import select

from bench.sim_journal import JournalWriter
from dealerbox.floor.protect.autofit import BackgroundFit
from dealerbox.floor.protect.config import ProtectConfig
from dealerbox.floor.protect.fit import fit_game
from dealerbox.floor.protect.fitted import CURRENT, STALE, get_fitted, put_fitted, reference_status
from dealerbox.floor.protect.floor_pass import (FITTING_KEY, PASS_NAME, REFERENCE_KIND, Protection, alert_evidence,
                                                save_reference)
from dealerbox.floor.protect.shuffle_check import Reference
from dealerbox.floor.protect.shuffles import Shuffle
from dealerbox.floor.protect.simulate import TableSim, no_shuffle
from dealerbox.floor.protect.tables import protect_hands
from dealerbox.floor.store import Store, store_engine
from dealerbox.floor.telling.figures import Ledger
from dealerbox.floor.telling.language import Language
from dealerbox.floor.telling.protect_words import ProtectWords
from tests.floor.protect.test_floor_pass import ON_TOP, REFERENCE, T0, target  # noqa: F401
from tests.floor.test_figures import file_lines

MACHINE = Shuffle(("machine",))
HAND = Shuffle(("riffle", "riffle", "strip", "riffle", "cut"))
#: The alerts' evidence told in English, the one way the product tells it.
WORDS = ProtectWords(Language("en"))
#: What a surveillance officer can do about a game left unchecked: no setting, no command.
ASK_IT = "This floor does not fit references by itself: ask the floor's IT to fit it."


def unshuffled(players: int, hands: int, writer: JournalWriter | None = None, seed: int = 5) -> JournalWriter:
    """A deck dealt again as it was gathered (onto the stub): every hand after the first keeps
    far more pairs than any fair shuffle."""
    writer = writer or JournalWriter(T0)
    sim = TableSim(no_shuffle, random.Random(seed), players=players, gathering=ON_TOP)
    for _ in range(hands):
        writer.hand(sim.deal())
    return writer


def hands_and_alerts(store, engine):
    with engine.connect() as conn:
        rows = conn.execute(select(protect_hands.c.table_id, protect_hands.c.start_seq, protect_hands.c.p_value,
                                   protect_hands.c.unscored)
                            .order_by(protect_hands.c.table_id, protect_hands.c.start_seq)).all()
        alerts = [a for a in store.alerts(open_only=False) if a["kind"] in ("shuffle", REFERENCE_KIND)]
        evidence = alert_evidence(conn, [a["id"] for a in alerts])
    return rows, alerts, evidence


def test_a_stale_reference_scores_nothing_and_says_so_once_per_game_and_model(target):  # noqa: F811
    # The house declares a hand shuffle; the store holds a 6-player reference fitted for the machine
    # it used before. An unshuffled deck would be a shuffle alert every hand against either: here
    # it scores nothing, and one alert (not one per hand) says why.
    declared = ProtectConfig(shuffle=HAND, threshold=0.01, room_rate=None, players=(6,), hole_cards=(2,))
    before = ProtectConfig(shuffle=MACHINE, players=(6,), hole_cards=(2,))
    w = unshuffled(6, 4)
    with Store(target) as store:
        engine = store_engine(store.target)
        with engine.begin() as conn:
            save_reference(conn, 6, 2, REFERENCE, "the machine", fingerprint=before.fingerprint(6, 2))
            current, status = reference_status(conn, declared)
        assert current == {} and status == {(6, 2): (STALE, before.fingerprint(6, 2))}
        file_lines(store, "T1", w.lines[:len(w.lines) // 2])
        Ledger(protection=Protection(declared, clock=lambda: T0)).catch_up(engine)
        # A restarted floor (a new pass) remembers that it said so: still one alert for the game.
        file_lines(store, "T1", w.lines[len(w.lines) // 2:])
        Ledger(protection=Protection(declared, clock=lambda: T0)).catch_up(engine)
        rows, alerts, evidence = hands_and_alerts(store, engine)
        assert [r.start_seq for r in rows] == w.hand_seqs
        assert all(r.p_value is None for r in rows)
        assert [r.unscored for r in rows] == [None, STALE, STALE, STALE]   # the first has no history
        (alert,) = alerts
        assert alert["kind"] == REFERENCE_KIND and alert["count"] == 1 and alert["seq"] == w.hand_seqs[1]
        assert "hands of hold'em at 6 players are not checked for a shuffle" in alert["text"]
        assert "fitted from another model" in alert["text"] and "ask the floor's IT to fit it" in alert["text"]
        assert "[protect]" not in alert["text"] and "dealerbox " not in alert["text"]
        (raised,) = evidence[alert["id"]]
        assert raised["evidence"] == {"game": [6, 2], "reason": STALE, "expected": declared.fingerprint(6, 2),
                                      "found": before.fingerprint(6, 2), "hand": w.hand_seqs[1], "fitting": False,
                                      "since": T0, "failed": None,
                                      "next": "this floor does not fit references by itself: ask the floor's IT "
                                              "to fit it", "due": "nobody", "waited_minutes": 0.0,
                                      "wait_minutes": 15.0,
                                      "declared_model": "riffle riffle strip riffle cut; gathering: hands kept "
                                                        "together, board either, gathered cards either of the stub",
                                      "found_model": "the machine"}
        # Told in words: the models too, the one found quoted as it was recorded (no form known).
        words = WORDS.why(REFERENCE_KIND, "T1", raised["evidence"])
        assert words["summary"] == (
            "Hands of hold'em at 6 players are not checked for a shuffle: its reference was fitted from another "
            "model (a model recorded as “the machine”). The declared model: riffle, riffle, strip, riffle, cut; "
            "gathering: each player's cards gathered together, the board picked up either way, the gathered cards "
            "put on top of or under the undealt cards. " + ASK_IT)
        assert words["links"] == [{"text": f"the first hand not checked (table T1, the hand at journal line "
                                           f"{w.hand_seqs[1]})", "href": f"/hands/T1/{w.hand_seqs[1]}"}]
        assert WORDS.why(REFERENCE_KIND, "T1", raised["evidence"], {("T1", w.hand_seqs[1]): 2})["links"][0][
            "text"] == "the first hand not checked (table T1, hand 2)"
        # The house goes back to the machine: the reference is current again, and scores.
        more = unshuffled(6, 3, seed=9)
        file_lines(store, "T2", more.lines)
        machine = ProtectConfig(shuffle=MACHINE, threshold=0.01, room_rate=None, players=(6,), hole_cards=(2,))
        Ledger(protection=Protection(machine, clock=lambda: T0)).catch_up(engine)
        rows, alerts, _ = hands_and_alerts(store, engine)
        scored = [r for r in rows if r.table_id == "T2" and r.start_seq in more.hand_seqs[1:]]
        assert len(scored) == 2
        assert all(r.p_value == 1 / 1001 and r.unscored is None for r in scored)
        assert sorted(a["kind"] for a in alerts) == [REFERENCE_KIND, "shuffle"]
        engine.dispose()


def test_a_missing_game_is_fitted_in_the_background_and_scored_after(target):  # noqa: F811
    # Nothing fitted at all: the floor's first start. 7-handed hold'em is unscored until the
    # background fit is stored; the pass never waits for it.
    config = ProtectConfig(shuffle=MACHINE, threshold=0.01, room_rate=None, players=(7,), hole_cards=(2,))
    fitter = BackgroundFit(config, fit=lambda c, p, h, rng: fit_game(c, p, h, rng, hands=3000), seed=1)
    w = unshuffled(7, 3)
    with Store(target) as store:
        engine = store_engine(store.target)
        file_lines(store, "T1", w.lines)
        ledger = Ledger(protection=Protection(config, clock=lambda: T0, fitter=fitter))
        ledger.catch_up(engine)
        with engine.connect() as conn:
            asked = get_fitted(conn, FITTING_KEY)
        rows, alerts, evidence = hands_and_alerts(store, engine)
        assert [r.unscored for r in rows] == [None, "missing", "missing"] and all(r.p_value is None for r in rows)
        # Being fitted is the Surveillance page's status, not an alert (issue 47, item 5).
        assert alerts == []
        with engine.connect() as conn:
            record = get_fitted(conn, "unscored/7/2")
        assert record == {"fingerprint": config.fingerprint(7, 2), "since": T0, "table": "T1", "seq": w.hand_seqs[1],
                          "reason": "missing", "found": None, "alerted": None}
        fitter.join(60)
        assert asked["games"] == [[7, 2]] and asked["since"] == T0 and asked["by"] == ledger.protection.name
        # The next catch-up stores the fit (with the model's fingerprint) and scores the new hands.
        unshuffled(7, 3, w)
        file_lines(store, "T1", w.lines)
        ledger.catch_up(engine)
        with engine.connect() as conn:
            current, status = reference_status(conn, config)
            assert get_fitted(conn, FITTING_KEY) is None
        assert status[(7, 2)] == (CURRENT, config.fingerprint(7, 2)) and current[(7, 2)].n == 3000
        rows, alerts, _ = hands_and_alerts(store, engine)
        assert [r.unscored for r in rows[3:]] == [None, None, None]
        assert all(r.p_value is not None and r.p_value < 0.01 for r in rows[4:])
        assert [a["kind"] for a in alerts] == ["shuffle"]
        assert not fitter.ask([(7, 2)])   # asked once per game and model
        engine.dispose()


def test_a_game_nobody_configured_is_unscored_with_no_fit_and_the_alert_says_whom_to_ask(target):  # noqa: F811
    config = ProtectConfig(shuffle=MACHINE, threshold=0.01, room_rate=None, players=(6,), hole_cards=(2,))
    w = unshuffled(3, 3)
    with Store(target) as store:
        engine = store_engine(store.target)
        with engine.begin() as conn:
            save_reference(conn, 6, 2, REFERENCE, "test", fingerprint=config.fingerprint(6, 2))
        file_lines(store, "T1", w.lines)
        Ledger(protection=Protection(config, clock=lambda: T0)).catch_up(engine)
        rows, alerts, _ = hands_and_alerts(store, engine)
        engine.dispose()
    assert [r.unscored for r in rows] == [None, "missing", "missing"]
    (alert,) = alerts
    assert "hold'em at 3 players" in alert["text"] and "no reference for the declared model" in alert["text"]
    assert alert["text"].endswith("; this floor does not fit references by itself: ask the floor's IT to fit it")
    assert isinstance(REFERENCE, Reference)


def test_a_second_collector_leaves_the_fit_to_the_one_that_claimed_it(target):  # noqa: F811
    config = ProtectConfig(shuffle=MACHINE, threshold=0.01, room_rate=None, players=(7,), hole_cards=(2,))
    calls = []

    def fit(c, p, h, rng):
        calls.append((p, h))
        return fit_game(c, p, h, rng, hands=2000)
    w = unshuffled(7, 2)
    with Store(target) as store:
        engine = store_engine(store.target)
        file_lines(store, "T1", w.lines)
        with engine.begin() as conn:   # another collector began fitting 7-handed hold'em a minute ago
            put_fitted(conn, FITTING_KEY, {"games": [[7, 2]], "by": "other:1:1", "since": T0 - 60})
        second = Protection(config, clock=lambda: T0, fitter=BackgroundFit(config, fit=fit))
        Ledger(protection=second).catch_up(engine)
        assert calls == [] and not second.fitter.busy
        # Ten minutes on, with the claim never cleared, that collector has stopped: this one fits.
        later = Protection(config, clock=lambda: T0 + 660, fitter=BackgroundFit(config, fit=fit))
        file_lines(store, "T1", unshuffled(7, 1, w).lines)
        Ledger(protection=later).catch_up(engine)
        later.fitter.join(60)
        assert calls == [(7, 2)]
        with engine.connect() as conn:
            assert get_fitted(conn, FITTING_KEY)["by"] == later.name
        engine.dispose()


class SlowFit:
    """A background fit that is still under way until :meth:`finish` (a busy floor at the lowest
    priority), or that fails with *error*."""

    def __init__(self, error: Exception | None = None):
        import threading

        self.go = threading.Event()
        self.error = error

    def __call__(self, c, p, h, rng):
        if self.error is not None:
            raise self.error
        assert self.go.wait(60)
        return fit_game(c, p, h, rng, hands=2000)

    def finish(self):
        self.go.set()


def test_a_reference_still_fitting_past_the_bound_is_an_alert_for_surveillance(target):  # noqa: F811
    config = ProtectConfig(shuffle=MACHINE, threshold=0.01, room_rate=None, players=(7,), hole_cards=(2,),
                           reference_wait_minutes=15)
    fit = SlowFit()
    now = [T0]
    fitter = BackgroundFit(config, fit=fit, seed=1)
    w = unshuffled(7, 3)
    with Store(target) as store:
        engine = store_engine(store.target)
        file_lines(store, "T1", w.lines)
        ledger = Ledger(protection=Protection(config, clock=lambda: now[0], fitter=fitter))
        try:
            ledger.catch_up(engine)
            now[0] = T0 + 14 * 60     # within the bound: still a status, however many catch-ups
            ledger.catch_up(engine)
            assert hands_and_alerts(store, engine)[1] == []
            now[0] = T0 + 15 * 60 + 1  # past it, with no new hand of the game: the alert is due all the same
            ledger.catch_up(engine)
            ledger.catch_up(engine)
            rows, alerts, evidence = hands_and_alerts(store, engine)
        finally:
            fit.finish()
            fitter.join(60)
        (alert,) = alerts
        assert alert["kind"] == REFERENCE_KIND and alert["count"] == 1
        assert alert["table"] == "T1" and alert["seq"] == w.hand_seqs[1] and alert["raised"] == T0 + 901
        assert alert["text"] == ("reference: hands of hold'em at 7 players are not checked for a shuffle: no reference "
                                 "for the declared model; still not stored 15.0 minutes after the first hand left "
                                 "unchecked (the floor waits 15 minutes): ask the floor's IT why")
        e = evidence[alert["id"]][0]["evidence"]
        assert e["fitting"] is True and e["failed"] is None and e["since"] == T0
        assert e["due"] == "waited" and e["waited_minutes"] == 15.0 and e["wait_minutes"] == 15
        assert WORDS.why(REFERENCE_KIND, "T1", e)["summary"].endswith(
            "Still not stored 15.0 minutes after the first hand was left unchecked, where the floor waits 15: ask "
            "the floor's IT why.")
        # Once stored, the hands are scored; the alert is not raised again, and the pass has
        # cleared it itself, saying why, on the alert and on the audit trail.
        now[0] = T0 + 1000
        file_lines(store, "T1", unshuffled(7, 2, w).lines)
        ledger.catch_up(engine)
        rows, alerts, _ = hands_and_alerts(store, engine)
        assert [a["kind"] for a in alerts].count(REFERENCE_KIND) == 1 and alerts[0]["count"] == 1
        assert rows[-1].p_value is not None
        cleared = alerts[0]
        assert cleared["cleared_by"] == PASS_NAME and cleared["cleared_at"] == T0 + 1000
        assert cleared["note"] == ("the reference for hold'em at 7 players fitted from the declared model is stored; "
                                   "its hands are checked from now on")
        audit, _ = store.audit_range(T0, T0 + 2000)
        assert [(r["who"], r["action"], r["alert"]) for r in audit if r["action"] == "clear"] == [
            (PASS_NAME, "clear", cleared["id"])]
        # Cleared once: later passes leave the trail alone.
        ledger.catch_up(engine)
        assert [r for r in store.audit_range(T0, T0 + 2000)[0] if r["action"] == "clear"] == [
            r for r in audit if r["action"] == "clear"]
        engine.dispose()


def test_a_fit_that_failed_is_an_alert_at_once_and_the_page_says_why(target):  # noqa: F811
    config = ProtectConfig(shuffle=MACHINE, threshold=0.01, room_rate=None, players=(7,), hole_cards=(2,))
    fitter = BackgroundFit(config, fit=SlowFit(MemoryError("out of memory")), seed=1)
    w = unshuffled(7, 3)
    with Store(target) as store:
        engine = store_engine(store.target)
        file_lines(store, "T1", w.lines[:len(w.lines) // 2])
        ledger = Ledger(protection=Protection(config, clock=lambda: T0 + 5, fitter=fitter))
        ledger.catch_up(engine)
        fitter.join(60)
        assert fitter.failed == {(7, 2): "out of memory"}
        file_lines(store, "T1", w.lines[len(w.lines) // 2:])
        ledger.catch_up(engine)
        rows, alerts, evidence = hands_and_alerts(store, engine)
        with engine.connect() as conn:
            kept = get_fitted(conn, "fit_failed")
        engine.dispose()
    (alert,) = alerts
    assert alert["text"].endswith("no reference for the declared model; fitting it in the background failed "
                                  "(out of memory): ask the floor's IT to fit it")
    e = evidence[alert["id"]][0]["evidence"]
    assert e["failed"] == "out of memory" and e["due"] == "failed"
    assert WORDS.why(REFERENCE_KIND, "T1", e)["summary"].endswith(
        "Fitting it in the background failed: ask the floor's IT to fit it (the error message for IT: out of memory).")
    assert kept == {"7/2": "out of memory"}


def test_an_older_alerts_next_step_is_told_in_the_same_plain_words():
    """Alerts filed before the pass spoke plainly named a setting and a command in ``next``, with
    no ``due``: they read as the new ones do (in English here), never as filed."""
    older = {"nothing fits it in the background ([protect] auto_fit is off): run dealerbox floor protect fit": ASK_IT,
             "fitting it in the background failed (out of memory (in numpy)): run dealerbox floor protect fit":
                 "Fitting it in the background failed: ask the floor's IT to fit it (the error message for IT: out of "
                 "memory (in numpy)).",
             "still not stored 20.5 minutes after the first hand left unchecked ([protect] reference_wait_minutes "
             "= 15); see the Surveillance page":
                 "Still not stored 20.5 minutes after the first hand was left unchecked, where the floor waits 15: "
                 "ask the floor's IT why."}
    for said, told in older.items():
        assert WORDS.next_step({"next": said}) == told
        assert WORDS.next_step(said) == told
        summary = WORDS.why(REFERENCE_KIND, "T1", {"game": [7, 2], "reason": "missing", "next": said})["summary"]
        assert summary.endswith(told) and "[protect]" not in summary and "dealerbox " not in summary
    # A model nobody recorded, an alert with no next step: still no command.
    assert WORDS.why(REFERENCE_KIND, "T1", {"game": [7, 2], "reason": "stale"})["summary"] == (
        "Hands of hold'em at 7 players are not checked for a shuffle: its reference was fitted from another model "
        "(a model nobody recorded). The declared model: not recorded. Ask the floor's IT to fit it.")
    assert WORDS.shuffle("house hands under machine") == "the house's own hands, shuffled as declared then: shuffling machine"
