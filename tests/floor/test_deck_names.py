"""The room's registry as the floor names cards by it (dealerbox/floor/telling/deck_names.py)."""

from __future__ import annotations

from dealerbox.domain.decks import Tag
from dealerbox.floor.store import Store
from dealerbox.floor.telling.deck_names import UNKNOWN_KEPT, RoomDecks
from tests.floor.registry_support import deck_tags


def test_unknown_tags_remembered_are_capped_and_the_newest_are_kept(tmp_path):
    assert UNKNOWN_KEPT >= 1000   # a room's worth of strays, not the table's every misread
    with Store(tmp_path / "room.sqlite") as store:
        room = RoomDecks(store.engine, unknown_again_s=3600.0, unknown_kept=3)
        strays = [f"04AABBCCDD{i:04X}" for i in range(10)]
        for uid in strays:
            assert room.lookup(uid) is None
        assert room.unknown_remembered() == strays[-3:]      # never more than the cap: the newest
        # A stray asked again is the newest once more, and stays past the next newcomer.
        assert room.lookup(strays[7]) is None
        assert room.lookup("04AABBCCDDFFFF") is None
        assert room.unknown_remembered() == [strays[9], strays[7], "04AABBCCDDFFFF"]
        # A tag registered since is found once its wait is over, and leaves the unknown.
        tags = deck_tags("Red 7")
        uid, card = next((u, c) for u, c in tags.items() if c != "joker")
        quick = RoomDecks(store.engine, unknown_again_s=0.0, unknown_kept=3)
        assert quick.lookup(uid) is None and quick.unknown_remembered() == [uid]
        store.register_deck("Red 7", "red", tags, "ada")
        assert quick.lookup(uid) == Tag("Red 7", card) and quick.unknown_remembered() == []
