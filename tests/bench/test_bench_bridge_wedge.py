"""The bridge wedge bench's machinery: a window of the plain bridge runs, heals and is told apart."""

from __future__ import annotations

import pytest

from tests.floor.support import need
from bench import bench_bridge_wedge
from dealerbox.floor.operating.broker import make_pki


@pytest.mark.parametrize("mode", bench_bridge_wedge.MODES)
def test_a_plain_bridge_window_leaves_its_broker_answering(tmp_path, mode):
    need("mosquitto", "mosquitto")
    need("openssl", "openssl")
    pki = make_pki(tmp_path / "pki", ["T01", "floor-collector", "bridge-north", "floor-admin"])
    here = tmp_path / "window"
    here.mkdir()
    seen = bench_bridge_wedge.window(here, pki, "plain", mode)
    assert seen == {"wedged": False, "cpu_share": pytest.approx(0.0, abs=0.2), "ignored_sigterm": False}
