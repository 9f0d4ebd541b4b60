"""``dealerbox floor protect fit``: references computed and stored, from the model or the house's hands."""

import random

from sqlalchemy import select

from dealerbox.cli import main
from dealerbox.floor.operating.settings import load_protect
from dealerbox.floor.protect.fitted import CURRENT, reference_status
from dealerbox.floor.protect.floor_pass import load_references, room_rate
from dealerbox.floor.protect.shuffles import Shuffle
from bench.sim_journal import JournalWriter
from dealerbox.floor.protect.simulate import TableSim
from dealerbox.floor.protect.tables import protect_fitted
from dealerbox.floor.store import Store, store_engine
from tests.floor.test_figures import file_lines


def floor_toml(tmp_path, protect: str = "") -> tuple:
    store = tmp_path / "floor.sqlite"
    path = tmp_path / "floor.toml"
    path.write_text(f'[store]\npath = "{store}"\n[protect]\nplayers = [6]\n{protect}')
    return path, store


def references(store):
    engine = store_engine(store)
    with engine.connect() as conn:
        out = load_references(conn), room_rate(conn), conn.execute(select(protect_fitted.c.value)).all()
    engine.dispose()
    return out


def test_fit_under_the_declared_model_stores_a_reference_per_game(tmp_path, capsys):
    path, store = floor_toml(tmp_path, 'shuffle = "riffle riffle riffle cut"\n')
    assert main(["floor", "protect", "fit", "--config", str(path), "--hands", "1500", "--seed", "4"]) == 0
    refs, rate, _ = references(store)
    # Hold'em and Omaha by default, each kept with the declared model's fingerprint: current.
    assert sorted(refs) == [(6, 2), (6, 4)] and all(r.n == 1500 for r in refs.values()) and rate is None
    assert "1500 hands simulated under riffle riffle riffle cut" in refs[(6, 2)].source
    config = load_protect(path)
    engine = store_engine(store)
    with engine.connect() as conn:
        current, status = reference_status(conn, config)
    engine.dispose()
    assert sorted(current) == [(6, 2), (6, 4)] and {s for s, _ in status.values()} == {CURRENT}
    out = capsys.readouterr().out
    assert out.startswith("6 players, 2 hole cards: 1500 hands") and "resolution 0.00067" in out
    # The alarm budget for the configured room follows: 20 tables x 30 hands x 168 hours = 100,800
    # hands a week; the shuffle check at most 2e-5 of them: 2.0 a week.
    assert "alarm budget for 20 tables at 30 hands an hour, 168 hours a week (100,800 hands)" in out
    assert "shuffle (a hand dealt as if not shuffled): 2.02 a week, 0.20 per 10,000 hands" in out


def test_fit_from_the_house_hands_takes_the_range_and_the_room_rate(tmp_path, capsys):
    path, store = floor_toml(tmp_path)
    sim = TableSim(Shuffle(("machine",)), random.Random(2), players=6)
    writer = JournalWriter(1_790_000_000.0, hand_s=60)
    for i in range(40):
        writer.hand(sim.deal(), irregularity="MISSED_BURN" if i % 8 == 0 else None)
    with Store(store) as s:
        file_lines(s, "T1", writer.lines)
    # The first 20 hands started in [t0, t0 + 1200): 19 scored (the first has no history), 3 with an error.
    assert main(["floor", "protect", "fit", "--config", str(path), "--house", "1790000000", "1790001200"]) == 0
    refs, rate, _ = references(store)
    assert refs[(6, 2)].n == 19 and "recorded house hands" in refs[(6, 2)].source
    assert rate == 3 / 20
    assert "room rate: 0.15 of 20 hands had an error" in capsys.readouterr().out


def test_a_bad_moment_is_one_clear_line(tmp_path, capsys):
    path, _ = floor_toml(tmp_path)
    assert main(["floor", "protect", "fit", "--config", str(path), "--house", "yesterday", "now"]) != 0
    assert "--house --from=yesterday: expected epoch seconds" in capsys.readouterr().err
