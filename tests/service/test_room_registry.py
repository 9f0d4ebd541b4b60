"""The table's copy of the room's registry (dealerbox/service/room_registry.py): what the
engine judges with once the room's decks and badges join the table's own files."""

from __future__ import annotations

import logging

import pytest

from dealerbox.domain.badges import BadgeRegistry, simulated_badge_uid
from dealerbox.domain.decks import DeckRegistry, simulated_uid, simulation_registry
from dealerbox.domain.events import Event
from dealerbox.link import protocol as P
from dealerbox.rules.engine import HandEngine
from dealerbox.service.room_registry import (APPLIED_NAME, RETIRED_DECK, REVOKED_BADGE, WAITING_NAME, RoomRegistry,
                                             merged_badges, merged_decks)

R7 = {simulated_uid("R7", c): c for c in ("Ah", "Kd", "Qs", "Jc", "Th", "9s")}
R7_DECK = {"R7": {"back": "green", "tags": R7}}
AH_A = simulated_uid("A", "Ah")


def payload(version, decks=None, retired=(), badges=None, revoked=()):
    return P.build_registry(version, decks or {}, list(retired), badges or {}, list(revoked))


def judged(registry: DeckRegistry, uid: str) -> list[str]:
    """What a hand makes of *uid* as its first card: the irregularities raised."""
    engine = HandEngine(registry=registry)
    engine.feed(Event(0.0, "new_hand", players=2))
    return [d.irregularity for d in engine.feed(Event(0.5, "shoe", uid=uid)) if d.irregularity]


def test_the_rooms_decks_fill_a_deck_the_table_names_and_retired_tags_are_foreign():
    local = DeckRegistry(active="R7")
    local.backs["R7"] = ""                     # `active = "R7"` and an empty [decks.R7]
    reg = P.parse_registry(payload(1, R7_DECK))
    merged = merged_decks(local, reg)
    assert merged.active == "R7" and merged.backs["R7"] == "green" and len(merged) == len(R7)
    assert judged(merged, simulated_uid("R7", "Ah")) == []
    # Retired: a card of another deck even where the table's own file knows it.
    merged = merged_decks(simulation_registry(), P.parse_registry(payload(2, R7_DECK, retired=[AH_A])))
    assert merged.active == "A" and merged.lookup(AH_A).deck == RETIRED_DECK
    assert judged(merged, AH_A) == ["FOREIGN_CARD"]
    assert judged(merged, simulated_uid("A", "Kd")) == []
    # Without a floor registry the files are the registry.
    local = simulation_registry()
    assert merged_decks(local, None) is local


def test_badges_join_and_a_revoked_one_signs_nobody_in():
    local = BadgeRegistry()
    local.add(simulated_badge_uid("1042"), "1042")
    reg = P.parse_registry(payload(1, badges={simulated_badge_uid("5001"): "5001"},
                                   revoked=[simulated_badge_uid("1042")]))
    assert merged_badges(local, reg) == {simulated_badge_uid("5001"): "5001", simulated_badge_uid("1042"): REVOKED_BADGE}
    assert merged_badges(local, None) == local.by_uid()


def test_a_table_that_never_had_the_deck_names_a_retired_card_across_restarts(tmp_path):
    # The table's own file knows deck A only; the floor retires R7, which it never had in a file.
    room = RoomRegistry(tmp_path, simulation_registry(), BadgeRegistry())
    room.apply(room.receive(payload(2, R7_DECK, retired=list(R7))))
    assert judged(room.decks(), simulated_uid("R7", "Ah")) == ["FOREIGN_CARD"]
    assert judged(room.decks(), simulated_uid("A", "Ah")) == []
    again = RoomRegistry(tmp_path, simulation_registry(), BadgeRegistry())
    assert again.summary()["version"] == 2
    assert judged(again.decks(), simulated_uid("R7", "Kd")) == ["FOREIGN_CARD"]
    # The card comes from the registry alone: a retired tag no deck names is only an unknown tag.
    room.apply(room.receive(payload(3, retired=list(R7))))
    assert judged(room.decks(), simulated_uid("R7", "Ah")) == ["UNKNOWN_TAG"]


def test_the_deck_the_floor_issued_is_the_one_the_table_deals():
    local = simulation_registry()                              # its own file: deck A active
    unsaid = P.parse_registry(payload(1, R7_DECK))
    assert not unsaid.issues_active and merged_decks(local, unsaid).active == "A"
    issued = P.parse_registry(P.build_registry(2, R7_DECK, [], {}, [], active="R7"))
    assert issued.issues_active and issued.active == "R7"
    merged = merged_decks(local, issued)
    assert merged.active == "R7"
    assert judged(merged, simulated_uid("R7", "Ah")) == []
    assert judged(merged, simulated_uid("A", "Ah")) == ["FOREIGN_CARD"]
    # Its deck moved to another table (or retired) and none issued since: no card is this table's.
    taken = P.parse_registry(P.build_registry(3, R7_DECK, [], {}, [], active=None))
    assert taken.issues_active and taken.active is None
    merged = merged_decks(local, taken)
    assert merged.active is None
    assert judged(merged, simulated_uid("R7", "Ah")) == ["FOREIGN_CARD"]
    assert judged(merged, simulated_uid("A", "Ah")) == ["FOREIGN_CARD"]


def test_active_is_additive_on_the_wire():
    body = (R7_DECK, [], {}, [])
    assert P.registry_fingerprint(*body) == P.registry_fingerprint(*body, P.UNSAID)
    assert len({P.registry_fingerprint(*body), P.registry_fingerprint(*body, "R7"),
                P.registry_fingerprint(*body, None)}) == 3
    assert "active" not in P.decode(payload(1, R7_DECK))
    # A deck the registry does not hold, or not a name, is refused with the key and what was expected.
    for wrong in ("B9", 7):
        with pytest.raises(P.RegistryPayloadError, match="active = .*expected null or the name of one of the"):
            P.build_registry(1, *body, active=wrong)
    sent = P.decode(P.build_registry(1, *body, active="R7"))
    sent["active"] = "B9"
    with pytest.raises(P.RegistryPayloadError, match='active = "B9": expected null'):
        P.parse_registry(P.encode({k: v for k, v in sent.items() if k != "v"}))


def test_what_comes_is_checked_kept_and_waits_on_disk(tmp_path, caplog):
    room = RoomRegistry(tmp_path, None, None)
    assert room.summary() is None and room.decks().active is None
    with caplog.at_level(logging.ERROR, logger="dealerbox"):
        assert room.receive(b"{") is None
        assert room.receive(b"{") is None          # the same reason again: said once
        assert room.receive(b'{"v": 1}') is None
    refused = [r.message for r in caplog.records if "refused a room registry" in r.message]
    assert len(refused) == 2 and "the table's own files only" in refused[0]
    got = room.receive(payload(3, R7_DECK))
    assert got is not None and room.receive(payload(3, R7_DECK)) is None     # the broker sends it again
    assert (tmp_path / WAITING_NAME).exists() and not (tmp_path / APPLIED_NAME).exists()
    # A stop before the hand ended: the next start has it waiting, and judges with the old one.
    later = RoomRegistry(tmp_path, None, None)
    assert later.summary() is None and later.waiting.registry.version == 3
    later.apply(later.waiting)
    assert later.summary() == got.registry.summary() and not (tmp_path / WAITING_NAME).exists()
    assert RoomRegistry(tmp_path, None, None).decks().active == "R7"
    # A kept file that is no registry: one log line, and the table's files judge.
    (tmp_path / APPLIED_NAME).write_text("garbage")
    with caplog.at_level(logging.ERROR, logger="dealerbox"):
        assert RoomRegistry(tmp_path, None, None).summary() is None
    assert any("is not one" in r.message for r in caplog.records)


def test_a_table_without_a_deck_of_its_own_never_takes_a_retired_deck_as_its_active_one():
    a1 = {simulated_uid("A1", c): c for c in ("Ah", "Kd")}
    b2 = {simulated_uid("B2", c): c for c in ("Ah", "Kd")}
    reg = P.parse_registry(payload(4, {"A1": {"back": "red", "tags": a1}, "B2": {"back": "blue", "tags": b2}},
                                   retired=list(a1)))
    merged = merged_decks(None, reg)
    assert merged.active == "B2"
    assert judged(merged, simulated_uid("B2", "Ah")) == []
    assert judged(merged, simulated_uid("A1", "Ah")) == ["FOREIGN_CARD"]
    # Every deck of the room retired: no deck is this table's.
    assert merged_decks(None, P.parse_registry(payload(5, {"A1": {"back": "red", "tags": a1}},
                                                       retired=list(a1)))).active is None


def test_a_registry_received_while_the_loop_applies_the_one_before_is_kept(tmp_path):
    """The uplink's thread receives version 2 while the engine loop is applying version 1,
    at the moment apply clears the waiting one: version 2 must stay waiting, in memory and
    on disk (a restart applies it), never be unlinked or forgotten by apply."""
    import threading
    from pathlib import Path

    room = RoomRegistry(tmp_path, simulation_registry(), None)
    first = room.receive(payload(1, R7_DECK))
    second = payload(2, R7_DECK, retired=[AH_A])
    receiver: list[threading.Thread] = []

    class ApplyClearsTheWaitingOne(type(Path())):
        """The state folder, which lets the uplink's thread run when apply removes the waiting file."""

        def unlink(self, missing_ok=False):
            if self.name == WAITING_NAME and not receiver:
                receiver.append(threading.Thread(target=room.receive, args=(second,)))
                receiver[0].start()
                receiver[0].join(1.0)        # it runs to its end here, unless apply holds it off
            super().unlink(missing_ok=missing_ok)

    room.directory = ApplyClearsTheWaitingOne(tmp_path)
    room.apply(first)
    receiver[0].join(30.0)
    assert room.floor.version == 1
    assert room.waiting is not None and room.waiting.registry.version == 2
    again = RoomRegistry(tmp_path, simulation_registry(), None)
    assert again.floor.version == 1 and again.waiting is not None and again.waiting.registry.version == 2
