"""The pit boss's pages: a table's and a dealer's figures with their charts (SVG drawn
on the server, no script), the floor map's dealer and hands per hour."""

from __future__ import annotations

import re

from tests.floor.test_figures import T0, filled_store, recount_room, room, room_store  # noqa: F401
from tests.floor.web.test_app import WebProcess, add_users, call, sign_in
from dealerbox.floor.web import live

START, END = T0 - 600.0, T0 + 11 * 3600.0


def _text(body) -> str:
    return body if isinstance(body, str) else body.decode()


def test_a_tables_and_a_dealers_page_show_their_figures_and_two_charts(tmp_path, room, room_store):
    path = room_store
    add_users(path, ("vera",))
    expected = recount_room(room, START, END)
    with WebProcess(tmp_path, path) as web:
        assert call(web, "GET", "/tables/T01")[0] == 401
        cookie, _csrf = sign_in(web, "vera")
        q = f"from={START}&to={END}"
        t01 = next(r for r in expected["tables"] if r["table"] == "T01")
        status, headers, body = call(web, "GET", f"/tables/T01?{q}", cookie=cookie)
        page = _text(body)
        assert status == 200 and page.count("<svg") == 2 and "<script" not in page.split("</main>")[0]
        assert f"<td>hands</td><td>{t01['hands']}</td>" in page
        assert "Hands per hour, table T01" in page and "Irregularities per 100 hands" in page
        # The charts' styles carry the page's nonce: the CSP lets them in, nothing else.
        nonce = re.search(r"'nonce-([^']+)'", headers["content-security-policy"]).group(1)
        assert all(f'nonce="{nonce}"' in tag for tag in re.findall(r"<style[^>]*>", page))
        d1042 = next(r for r in expected["dealers"] if r["dealer"] == "1042")
        status, _h, body = call(web, "GET", f"/dealers/1042?{q}", cookie=cookie)
        page = _text(body)
        assert status == 200 and page.count("<svg") == 2 and f"<td>hands</td><td>{d1042['hands']}</td>" in page
        assert 'href="/tables/T01"' in page
        assert call(web, "GET", "/dealers/not%20an%20id!", cookie=cookie)[0] == 400


def test_the_floor_map_shows_who_deals_and_the_hands_per_hour(tmp_path, room, monkeypatch):
    path = filled_store(tmp_path / "floor.sqlite", room)
    from dealerbox.floor.web.figures_api import FiguresApi
    floor = live.Floor(path, FiguresApi(path))
    import anyio
    monkeypatch.setattr(live, "PIT_SPAN_S", 24 * 3600.0)

    async def read():
        await floor.start()
        try:
            return floor.snapshot()["tables"]
        finally:
            await floor.stop()
    tiles = {t["table"]: t for t in anyio.run(read)}
    expected = {r["table"]: r for r in recount_room(room, 0, 1e12)["tables"]}
    assert set(tiles) == set(expected)
    assert all(tiles[t]["hands_per_hour"] is not None for t in tiles)
    # T02's last hands were dealt by 2077's rotation partner at the end of the demo; whoever it
    # is, the tile says the dealer the figures follow, never a name.
    assert all(tiles[t]["dealer"] is None or tiles[t]["dealer"].isdigit() for t in tiles)


def test_dealer_names_live_on_the_floor_and_only_supervisors_and_admins_see_them(tmp_path, room):
    import subprocess
    import sys

    path = filled_store(tmp_path / "floor.sqlite", room)
    config = tmp_path / "floor.toml"
    config.write_text(f'[broker]\nca = "ca.crt"\ncert = "c.crt"\nkey = "c.key"\n[store]\npath = "{path}"\n')

    def floor_dealer(*args):
        return subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", "dealer", *args,
                               "--config", str(config)], capture_output=True, text=True)
    assert floor_dealer("add", "1042", "Jana Novakova").returncode == 0
    assert floor_dealer("add", "2077", "Petr Svoboda").returncode == 0
    assert floor_dealer("list").stdout.splitlines() == ["1042\tJana Novakova", "2077\tPetr Svoboda"]
    bad = floor_dealer("add", "not an id", "X")
    assert bad.returncode == 2 and "dealer id" in bad.stderr
    assert floor_dealer("add", "3001", "two\nlines").returncode == 2
    assert floor_dealer("remove", "2077").returncode == 0 and floor_dealer("remove", "2077").returncode == 2
    add_users(path, ("vera", "sam"))  # a viewer and a supervisor
    q = f"from={START}&to={END}"
    with WebProcess(tmp_path, path) as web:
        viewer, _ = sign_in(web, "vera")
        page = _text(call(web, "GET", f"/dealers/1042?{q}", cookie=viewer)[2])
        assert "dealer 1042" in page and "Jana" not in page
        assert "Jana" not in _text(call(web, "GET", f"/report?{q}", cookie=viewer)[2])
        supervisor, _ = sign_in(web, "sam")
        page = _text(call(web, "GET", f"/dealers/1042?{q}", cookie=supervisor)[2])
        assert "dealer 1042 (Jana Novakova)" in page
        assert "1042 Jana Novakova" in _text(call(web, "GET", f"/report?{q}", cookie=supervisor)[2])
