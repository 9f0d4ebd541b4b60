"""The terminal view (Textual) in the language its user reads (issue 45): the floor map's room
(the room's language English), sam's own language Czech. The web view says which in
``/api/session``; its JSON stream tells the tiles and alerts in it, and the screen's own words
(the alerts' columns, the keys, the clear prompt) come from the floor's catalogs."""

from __future__ import annotations

import asyncio
import re

import pytest

from dealerbox.floor.store import Store
from dealerbox.floor.terminal.view import FloorClient, FloorView, NoteScreen, TableTile

from tests.floor.web.test_app import PASSWORDS
from tests.floor.web.test_floor_map import room  # noqa: F401 (the room the floor map's tests deal)

pytest.importorskip("textual")


@pytest.fixture(scope="module")
def czech_room(room):  # noqa: F811
    with Store(room.store_path) as store:
        store.set_user_language("sam", "cs", 1.0)
    return room


def test_a_czech_pit_boss_reads_the_terminal_view_in_czech(czech_room):

    client = FloorClient(czech_room.url)
    me = client.sign_in("sam", PASSWORDS["sam"])
    assert me["language"] == "cs" and client.language == "cs"
    english = FloorClient(czech_room.url)
    assert english.sign_in("vera", PASSWORDS["vera"])["language"] == "en"   # the room's, for one of no choice

    async def run():
        app = FloorView(client)
        async with app.run_test(size=(160, 50)) as pilot:
            for _ in range(200):
                if len(app.query(TableTile)) >= 6 and app.alerts:
                    break
                await pilot.pause(0.05)
            assert app.title == "dealerbox – herní sál" and app.sub_title == "sam (inspektor)"
            tiles = {t.id: str(t.content) for t in app.query(TableTile)}
            assert "Volání floormana: flop o čtyřech kartách" in tiles["t-T02"], tiles["t-T02"]
            assert "Mimo spojení, naposledy ozván " in tiles["t-T05"], tiles["t-T05"]
            assert "Žádný krupiér přihlášen" in tiles["t-T06"] or "žádný krupiér přihlášen" in tiles["t-T06"], tiles
            assert re.search(r"krupiér \w+", tiles["t-T02"]), tiles["t-T02"]
            alerts = app.query_one("#alerts")
            assert [str(c.label) for c in alerts.columns.values()] == ["vzniklo", "co", "čeká", "id"]
            rows = [[str(c) for c in alerts.get_row_at(i)] for i in range(alerts.row_count)]
            whats = [row[1] for row in rows]
            assert whats == ["Volání floormana u T02: flop o čtyřech kartách",
                             "Mimo spojení u T05: stůl ztratil spojení se sálem",
                             "Špatné hodiny u T01: hodiny stolu jdou špatně"], whats
            assert all(re.search(r"\d{1,2}\. \d{1,2}\. \d{4} \d{1,2}:\d\d:\d\d SEL?Č", row[0]) for row in rows), rows
            keys = {b.key: b.description for bs in app._bindings.key_to_bindings.values() for b in bs}
            assert keys["c"] == "Vyřídit vybrané upozornění" and keys["q"] == "Konec", keys
            # The clear prompt, in Czech; Escape leaves the alert open.
            await pilot.press("c")
            await pilot.pause(0.2)
            screen = app.screen
            assert isinstance(screen, NoteScreen)
            prompt = str(screen.query_one("Label").content)
            assert prompt.startswith("Vyřídit upozornění Volání floormana u T02") and prompt.endswith("proč?"), prompt
            assert screen.query_one("Input").placeholder == "poznámka (Enter vyřídí, Escape ne)"
            await pilot.press("escape")
            await pilot.pause(0.1)
            assert len(app.alerts) == 3
    asyncio.run(run())
    client.sign_out()
    english.sign_out()
