"""The collector's protection pass names cards a table journaled by their tag, from the room's
registry in the store, the deck registry floor.toml names (``[web] deck_registry``) and the
built-in simulated decks."""

from __future__ import annotations

import json
import random

import pytest
from sqlalchemy import select

from dealerbox.domain.cards import DECK_52
from dealerbox.domain.decks import DeckRegistry, Tag, simulated_uid
from dealerbox.errors import DealerboxError
from dealerbox.floor.telling.figures import Ledger
from dealerbox.floor.telling.deck_names import RoomDecks, registry_decks
from dealerbox.floor.protect.autofit import BackgroundFit
from dealerbox.floor.protect.decks import collector_protection, collector_registries
from dealerbox.floor.protect.floor_pass import Protection, save_reference
from dealerbox.floor.protect.shuffle_check import Reference
from dealerbox.floor.protect.shuffles import Gathering
from bench.sim_journal import JournalWriter
from dealerbox.floor.protect.simulate import TableSim, no_shuffle
from dealerbox.floor.protect.tables import protect_hands
from dealerbox.floor.operating.settings import load_collector
from dealerbox.floor.store import Store, store_engine
from dealerbox.link.chain import GENESIS, line_hash
from tests.floor.test_figures import file_lines
from tests.floor.registry_support import deck_tags

T0 = 1_790_006_400.0
#: The house's own tags: UIDs no simulated deck has (04 then the card's index, then 55s).
HOUSE_UIDS = {card: f"04{i:02X}5555555555" for i, card in enumerate(DECK_52)}


def house_registry(path) -> DeckRegistry:
    registry = DeckRegistry(active="A")
    for card, uid in HOUSE_UIDS.items():
        registry.add(uid, "A", card)
    registry.save(path)
    return registry


def floor_toml(tmp_path, *, registry: str | None, auto_fit: bool = False) -> object:
    # No background fit unless asked: the tests store the references they judge by.
    lines = ["[broker]", 'ca = "ca.crt"', 'cert = "c.crt"', 'key = "c.key"', "[store]", 'path = "floor.sqlite"',
             "[protect]", 'shuffle = "machine"', "threshold = 0.01", 'room_rate = "fitted"',
             f"auto_fit = {'true' if auto_fit else 'false'}"]
    if registry is not None:
        lines += ["[web]", f'deck_registry = "{registry}"']
    path = tmp_path / "floor.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def by_tag(lines: list[str], uid_of) -> list[str]:
    """The journal as a table with no names for its tags writes it: every card by its ``uid``
    only, the chain written again over the changed lines."""
    out, prev = [], GENESIS
    for line in lines:
        record = json.loads(line)
        event = record.get("event")
        if event is not None and "card" in event:
            event["uid"] = uid_of(event.pop("card"))
            event.pop("deck", None)
        record["prev"] = prev
        text = json.dumps(record, separators=(",", ":"), ensure_ascii=True)
        out.append(text)
        prev = line_hash(text)
    return out


def unshuffled(hands: int = 3) -> JournalWriter:
    sim = TableSim(no_shuffle, random.Random(5), players=6, gathering=Gathering(place="top"))
    writer = JournalWriter(T0)
    for _ in range(hands):
        writer.hand(sim.deal())
    return writer


def passed(store_path, lines: list[str], protection: Protection) -> tuple[list, list]:
    """The lines filed and read by the pass: its shuffle alerts and its hands' statistics."""
    with Store(store_path) as store:
        engine = store_engine(store.target)
        with engine.begin() as conn:
            save_reference(conn, 6, 2, Reference((900, 90, 10), "hand-made"), "test",
                           fingerprint=protection.config.fingerprint(6, 2))
        file_lines(store, "T1", lines)
        Ledger(protection=protection).catch_up(engine)
        with engine.connect() as conn:
            stats = [r[0] for r in conn.execute(select(protect_hands.c.statistic)
                                                .order_by(protect_hands.c.start_seq))]
        engine.dispose()
        return [a for a in store.alerts(open_only=False) if a["kind"] == "shuffle"], stats


def test_a_registry_names_a_tag_as_its_card_and_deck():
    registry = DeckRegistry()
    registry.add("04A3C6CAE26180", "C", "Td")
    card_of = registry_decks(registry)
    assert card_of("04A3C6CAE26180") == ("Td", "C") and card_of("04a3c6cae26180") == ("Td", "C")
    assert card_of("04AABBCCDDEEFF") is None and card_of("not a uid") is None


def test_the_registry_floor_toml_names_comes_before_the_simulated_decks(tmp_path):
    house_registry(tmp_path / "decks.toml")
    settings = load_collector(floor_toml(tmp_path, registry="decks.toml"))
    card_of = registry_decks(*collector_registries(settings))
    assert card_of(HOUSE_UIDS["Qs"]) == ("Qs", "A")
    assert card_of(simulated_uid("B", "7h")) == ("7h", "B")       # the built-in decks still known
    bare = load_collector(floor_toml(tmp_path, registry=None))
    assert len(collector_registries(bare)) == 1


def test_the_collector_pass_checks_a_deck_journaled_by_its_tags(tmp_path):
    # Dealt unshuffled, each later hand keeps far more than two pairs: p = (1 + 0) / (1 + 1000)
    # under the hand-made reference, below the threshold 0.01, so two shuffle alerts fold into one.
    house_registry(tmp_path / "decks.toml")
    settings = load_collector(floor_toml(tmp_path, registry="decks.toml"))
    lines = by_tag(unshuffled().lines, HOUSE_UIDS.__getitem__)
    alerts, stats = passed(tmp_path / "named.sqlite", lines, collector_protection(settings))
    assert stats[0] is None and all(k >= 3 for k in stats[1:])
    (alert,) = alerts
    assert alert["count"] == 2 and "p = 0.001 " in alert["text"]
    # Without the registry (the pass as the collector built it before), every card is unnamed:
    # nothing pairs, the same deck raises no alert.
    alerts, stats = passed(tmp_path / "unnamed.sqlite", lines, Protection(settings.protect))
    assert alerts == [] and all(k in (None, 0) for k in stats)


def test_the_collector_pass_fits_missing_references_in_the_background_unless_told_not_to(tmp_path):
    fitting = collector_protection(load_collector(floor_toml(tmp_path, registry=None, auto_fit=True)))
    assert isinstance(fitting.fitter, BackgroundFit) and not fitting.fitter.busy   # asked at the first pass
    assert collector_protection(load_collector(floor_toml(tmp_path, registry=None))).fitter is None


def test_a_bad_registry_file_stops_the_collector_naming_it(tmp_path):
    (tmp_path / "decks.toml").write_text("active = 3\n")
    settings = load_collector(floor_toml(tmp_path, registry="decks.toml"))
    with pytest.raises(DealerboxError) as raised:
        collector_protection(settings)
    assert "decks.toml" in str(raised.value)


def test_the_rooms_registry_in_the_store_names_tags_first_and_learns_a_deck_registered_later(tmp_path):
    """Issue 40: the collector's pass names a card from the room's registry, with no file
    naming its deck; a tag it did not know is asked for again once registered."""
    settings = load_collector(floor_toml(tmp_path, registry=None))
    room_uids = {card: uid for uid, card in deck_tags("Red 7").items() if card != "joker"}
    with Store(tmp_path / "room.sqlite") as store:
        room = RoomDecks(store.engine, unknown_again_s=0.0)
        assert room.lookup(room_uids["Qs"]) is None
        store.register_deck("Red 7", "red", deck_tags("Red 7"), "ada")
        assert room.lookup(room_uids["Qs"]) == Tag("Red 7", "Qs")
        with pytest.raises(ValueError):
            room.lookup("not a uid")
        card_of = registry_decks(*collector_registries(settings, store))
        assert card_of(room_uids["Qs"]) == ("Qs", "Red 7") and card_of(simulated_uid("B", "7h")) == ("7h", "B")
        assert card_of("04AABBCCDDEEFF") is None
        # Dealt unshuffled and journaled by the room's tags: the pass pairs them, as with a file.
        lines = by_tag(unshuffled().lines, room_uids.__getitem__)
        alerts, stats = passed(tmp_path / "room.sqlite", lines, collector_protection(settings, store))
    assert all(k >= 3 for k in stats[1:]) and len(alerts) == 1
