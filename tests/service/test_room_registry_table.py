"""The room's registry at one table, against Debian's mosquitto with the shipped ACL: a test
client with the floor's certificate plays the floor's part (tests/floor/test_room_registry.py
runs the real collector). The table applies a registry between hands only, journals which
one it judges with, keeps it across a restart, refuses one that does not check with one log
line, and judges badges with it: a revoked badge signs nobody in and the LCD says so."""

from __future__ import annotations

import json
import logging

import pytest

from dealerbox.domain.badges import simulated_badge_uid
from dealerbox.domain.decks import simulated_uid
from dealerbox.link import protocol as P
from dealerbox.service.room_registry import APPLIED_NAME
from hardware_sim.script import HandScript
from tests.floor.support import Client, broker, identity, pki, wait_for  # noqa: F401
from tests.service.test_daemon import PACE, Box, table_config

AH = simulated_uid("A", "Ah")
NEW_BADGE = simulated_badge_uid("5001")
NOT_AUTHORIZED = 135


def floor_section(pki, broker, table: str) -> str:
    return (f'\n[floor]\nenabled = true\ntable = "{table}"\nhost = "localhost"\nport = {broker.port}\n'
            f'ca = "{pki / "ca.crt"}"\ncert = "{pki / f"{table}.crt"}"\nkey = "{pki / f"{table}.key"}"\n'
            f"keepalive_s = 5\nack_timeout_s = 3\nhealth_interval_s = 30\n")


@pytest.fixture
def floor(pki, broker):
    """A client with the collector's certificate: the floor's role, which alone may publish registries."""
    client = Client(identity(pki, broker, "floor-collector"), "floor-collector")
    assert client.connect(broker.port)
    client.subscribe(P.health_topic("T01"))
    yield client
    client.close()


def publish(floor, version: int, *, retired=(), badges=None, revoked=(), table: str = "T01"):
    payload = P.build_registry(version, {}, list(retired), badges or {}, list(revoked))
    rc = floor.publish(P.registry_topic(table), payload, retain=True)
    assert not rc.is_failure
    return P.parse_registry(payload)


def events(box) -> list:
    return box.journal_events()


def irregularities(box) -> list[str]:
    return [d["irregularity"] for d in box.decisions if d["irregularity"]]


def foreign(box) -> list[str]:
    """The cards the box voided the hand for as of another deck (it halts at the first)."""
    raised = {d["irregularity"] for d in box.decisions if d["irregularity"]}
    assert raised <= {"FOREIGN_CARD"}, raised
    first = next((d for d in box.decisions if d["irregularity"] == "FOREIGN_CARD"), None)
    if first is None:
        return []
    assert first["verdict"] == "void"
    return first["cards"]


def last_health(floor) -> dict:
    for topic, payload in reversed(floor.messages):
        if topic == P.health_topic("T01") and payload:
            return json.loads(payload)
    return {}


def hand_with(card: str, seed: int) -> HandScript:
    """Two players; *card* is the first hole card."""
    s = HandScript(seed=seed)
    s.new_hand(2).take(card).deal(3)
    return s


@pytest.fixture
def box(tmp_path, pki, broker):
    b = Box(table_config(tmp_path, extra=floor_section(pki, broker, "T01")))
    wait_for(lambda: b.daemon.floor.connected, "T01 connected")
    yield b
    b.close()


def test_a_registry_received_during_a_hand_waits_for_its_end(box, floor):
    # A hand in play: four hole cards dealt, Ah not among them.
    s = HandScript(seed=3)
    s.new_hand(2)
    s.stub.remove("Ah")
    s.deal()
    box.play(s)
    box.settle()
    assert box.daemon.engine.phase in ("deal", "preflop")
    reg = publish(floor, 1, retired=[AH])
    wait_for(lambda: box.daemon.loop.registry_waiting is not None, "the registry to wait for the hand's end")
    # Ah, retired on the floor, comes out of the shoe in this hand: still this hand's registry.
    dealt = len(s.events)
    s.round_done().street(3, cards=["Ah", s.stub[1], s.stub[2]])
    s.round_done().hand_over()
    box.table.play(s.events[dealt:], pace_s=PACE)
    box.settle()
    assert irregularities(box) == []
    kinds = [e.ev for e in events(box)]
    applied = kinds.index("registry_applied")
    assert applied > kinds.index("button") and "registry_applied" not in kinds[:kinds.index("new_hand")]
    assert applied > max(i for i, e in enumerate(events(box)) if e.ev == "button" and e.name == "hand_over")
    assert events(box)[applied].version == 1 and events(box)[applied].fingerprint == reg.fingerprint
    # The next hand is judged with it: Ah is a card of another deck now.
    box.play(hand_with("Ah", seed=4))
    box.settle()
    assert foreign(box) == ["Ah"]
    wait_for(lambda: (last_health(floor).get("registry") or {}).get("version") == 1, "health to say version 1")


def test_the_kept_registry_judges_after_a_restart_and_garbage_changes_nothing(tmp_path, pki, broker, floor, caplog):
    config = table_config(tmp_path, extra=floor_section(pki, broker, "T01"))
    box = Box(config)
    try:
        wait_for(lambda: box.daemon.floor.connected, "T01 connected")
        reg = publish(floor, 7, retired=[AH])
        wait_for(lambda: box.daemon.room.summary() == reg.summary(), "registry 7 applied (no hand in play)")
        with caplog.at_level(logging.ERROR, logger="dealerbox"):
            for garbage in (b"not json", json.dumps({"v": 1, "kind": "registry"}).encode(),
                            P.build_registry(8, {}, [], {}, [])[:-1] + b',"decks":[]}'):
                assert not floor.publish(P.registry_topic("T01"), garbage, retain=True).is_failure
            wait_for(lambda: len([r for r in caplog.records if "refused a room registry" in r.message]) == 3,
                     "three refusals")
        refusals = [r.message for r in caplog.records if "refused a room registry" in r.message]
        assert "not JSON" in refusals[0] and "missing" in refusals[1] and "decks" in refusals[2]
        assert all("room registry 7" in m for m in refusals)
        assert box.daemon.room.summary() == reg.summary()
        box.play(hand_with("Ah", seed=5))
        box.settle()
        assert foreign(box) == ["Ah"]
    finally:
        box.close()
    assert json.loads((tmp_path / "state" / APPLIED_NAME).read_bytes())["version"] == 7
    # The broker forgets the retained registry (the floor's store is being restored): the table
    # still judges with the one it kept.
    assert not floor.publish(P.registry_topic("T01"), b"", retain=True).is_failure
    box = Box(config)
    try:
        assert box.daemon.room.summary() == reg.summary()
        wait_for(lambda: any(e.ev == "registry_applied" and e.version == 7 for e in events(box)[-3:]),
                 "registry 7 on record at the start")
        box.play(hand_with("Ah", seed=6))
        box.settle()
        assert foreign(box) == ["Ah"]
    finally:
        box.close()


def test_a_revoked_badge_signs_nobody_in_and_the_lcd_says_so(box, floor):
    publish(floor, 2, badges={NEW_BADGE: "5001"}, revoked=[simulated_badge_uid("1042")])
    wait_for(lambda: box.daemon.room.summary() is not None, "registry 2 applied")
    leds = box.table.leds()
    box.table.hold_badge(uid=simulated_badge_uid("1042"))
    wait_for(lambda: any("Badge revoked" in line for line in box.table.glass()), "the LCD to say so")
    box.settle()
    assert box.daemon.engine.dealer is None
    assert [e for e in events(box) if e.ev == "dealer"] == []
    assert box.table.leds() == leds and irregularities(box) == []
    # A badge the table's file never knew, registered on the floor, signs its dealer in.
    box.table.hold_badge(uid=NEW_BADGE)
    wait_for(lambda: box.daemon.engine.dealer == "5001", "dealer 5001 signed in")
    # Another dealer's badge, not revoked, still signs in.
    box.table.hold_badge(uid=simulated_badge_uid("2077"))
    wait_for(lambda: box.daemon.engine.dealer == "2077", "dealer 2077 signed in")
    assert [e.dealer for e in events(box) if e.ev == "dealer"] == ["5001", "2077"]


def test_a_table_cannot_publish_a_registry_to_itself_or_another(box, floor, pki, broker):
    reg = publish(floor, 3)
    wait_for(lambda: box.daemon.room.summary() == reg.summary(), "registry 3 applied")
    hostile = Client(identity(pki, broker, "T02"), "T02")
    assert hostile.connect(broker.port)
    try:
        forged = P.build_registry(99, {}, [AH], {}, [])
        for table in ("T01", "T02"):
            rc = hostile.publish(P.registry_topic(table), forged, retain=True)
            assert rc.value == NOT_AUTHORIZED, (table, rc)
    finally:
        hostile.close()
    box.play(hand_with("Ah", seed=7))
    box.settle()
    assert irregularities(box) == [] and box.daemon.room.summary() == reg.summary()


def test_a_config_reload_keeps_judging_with_the_rooms_registry(box, floor):
    reg = publish(floor, 4, retired=[AH], badges={NEW_BADGE: "5001"})
    wait_for(lambda: box.daemon.room.summary() == reg.summary(), "registry 4 applied")
    assert box.daemon.reload()
    box.table.hold_badge(uid=NEW_BADGE)
    wait_for(lambda: box.daemon.engine.dealer == "5001", "dealer 5001 signed in after the reload")
    box.play(hand_with("Ah", seed=11))
    box.settle()
    assert foreign(box) == ["Ah"]
