"""A group floor shows each property's bridge as connected or blind, with since when
(the state the collectors file from mosquitto's bridge notifications)."""

from __future__ import annotations

import time

from tests.floor.support import wait_for
from tests.floor.web.test_app import WebProcess, add_users, call, sign_in
from dealerbox.floor.store import Store


def test_the_floor_shows_a_property_blind_then_connected(tmp_path):
    path = tmp_path / "floor.sqlite"
    add_users(path)
    blind_since = time.time() - 90
    with Store(path) as store:
        store.note_bridge("north", False, blind_since)
    with WebProcess(tmp_path, path, request_timeout_s=2) as web:
        cookie, _csrf = sign_in(web, "vera")
        status, _h, floor = call(web, "GET", "/api/floor", cookie=cookie)
        assert status == 200
        (north,) = floor["bridges"]
        assert north["name"] == "north" and north["connected"] is False
        assert abs(north["since"] - blind_since) < 1
        status, _h, page = call(web, "GET", "/", cookie=cookie)
        assert status == 200
        assert 'id="bridge-north" class="bridge blind"' in page and "blind" in page

        with Store(path) as store:
            store.note_bridge("north", True)

        def connected():
            _s, _h, now = call(web, "GET", "/api/floor", cookie=cookie)
            return now["bridges"] and now["bridges"][0]["connected"] is True
        wait_for(connected, "the floor seeing north connected again")
        _s, _h, page = call(web, "GET", "/", cookie=cookie)
        assert 'class="bridge connected"' in page


def test_a_floor_without_bridges_shows_no_properties_section(tmp_path):
    path = tmp_path / "floor.sqlite"
    add_users(path)
    with WebProcess(tmp_path, path, request_timeout_s=2) as web:
        cookie, _csrf = sign_in(web, "vera")
        _s, _h, floor = call(web, "GET", "/api/floor", cookie=cookie)
        assert floor["bridges"] == []
        _s, _h, page = call(web, "GET", "/", cookie=cookie)
        assert "Properties" not in page
