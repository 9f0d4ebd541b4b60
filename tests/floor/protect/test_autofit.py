"""The background fit stops when asked, after the game under way, and a closing collector
stops it and waits: no fit thread outlives the collector."""

from __future__ import annotations

import threading
import time

from dealerbox.floor.collecting.collector import Collector
from dealerbox.floor.protect.autofit import BackgroundFit
from dealerbox.floor.protect.config import ProtectConfig
from dealerbox.floor.protect.fit import fit_game
from dealerbox.floor.protect.floor_pass import Protection
from dealerbox.floor.protect.shuffles import Shuffle
from dealerbox.floor.store import Store
from tests.floor.support import identity

CONFIG = ProtectConfig(shuffle=Shuffle(("machine",)), players=(6, 7, 8), hole_cards=(2,))


class GatedFit:
    """The real fit (3,000 hands a game), each game held until the test lets it go, so that
    the test knows a fit is under way when it stops or closes."""

    def __init__(self):
        self.started = threading.Event()
        self.release = threading.Event()
        self.games: list = []

    def __call__(self, config, players, hole_cards, rng):
        self.games.append((players, hole_cards))
        self.started.set()
        assert self.release.wait(30)
        return fit_game(config, players, hole_cards, rng, hands=3000)


def test_a_stopped_fit_finishes_the_game_under_way_and_fits_nothing_more():
    gate = GatedFit()
    fitter = BackgroundFit(CONFIG, fit=gate, seed=1)
    assert fitter.ask(CONFIG.games()) == [(6, 2), (7, 2), (8, 2)]
    assert gate.started.wait(30)
    fitter.stop()
    gate.release.set()
    fitter.join(30)
    assert not fitter.busy and gate.games == [(6, 2)]
    (done,) = fitter.take()
    assert done[0] == (6, 2) and done[2].n == 3000
    assert fitter.ask([(9, 2)]) == [] and not fitter.busy   # stopped: nothing more is started


def test_a_closed_collector_leaves_no_fit_thread(broker, pki, tmp_path):
    # The floor's first start: nothing fitted, so the collector's first pass asks for every game.
    gate = GatedFit()
    fitter = BackgroundFit(CONFIG, fit=gate, seed=1)
    with Store(tmp_path / "floor.sqlite") as store:
        collector = Collector(identity(pki, broker, "floor-collector"), store,
                              protection=Protection(CONFIG, fitter=fitter))
        with collector:
            assert collector.connected.wait(30)
            assert gate.started.wait(30) and fitter.busy   # the fit thread is alive
            # The fit is held when close() begins; it goes on a moment later, as a fit that
            # takes its time would: close() waits for it.
            threading.Timer(0.5, gate.release.set).start()
            began = time.monotonic()
        assert not fitter.busy   # its thread has ended
        assert time.monotonic() - began < 10
        assert gate.games == [(6, 2)]   # stopped after the game under way
