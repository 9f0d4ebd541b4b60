"""One room, one registry, end to end (issue 40): Debian's mosquitto with the shipped config
and ACL, the collector on its store, and three simulated tables, each a daemon with the real
drivers on its chip emulators, reporting to the floor (T03 through a relay that can cut its
network).

A deck registered at T01 (its technician's ``deck register`` writes a ``deck_registered``
line) is a foreign deck at T02, whose own file names another; issued to T02 on the floor, it
deals clean hands there within 10 s, with no restart and T02's file unchanged. Retired on the floor, its cards are foreign at
T01 and T02 within 10 s; T02 is in a hand when the retirement comes, and that hand ends as
it began (its cards clean), the next one is void. T03, offline during the retirement, deals
on with what it had and refuses the cards on its first hand once back. A badge registered
once signs a dealer in at both tables; revoked, at neither, and the LCD says so. A deck
issued to T01 and then to T02 moves: clean at T02, foreign at T01 from its next hand. A table
that publishes a registry, to another table's topic or to its own, is refused by the broker
and nothing changes anywhere.
"""

from __future__ import annotations

import re
import time

import pytest

from dealerbox.domain.badges import simulated_badge_uid
from dealerbox.domain.cards import DECK_52, JOKER
from dealerbox.domain.decks import DeckRegistry, simulated_uid
from dealerbox.floor.collecting.collector import Collector
from dealerbox.floor.store import Store
from dealerbox.link import protocol as P
from dealerbox.service.config import load_config
from dealerbox.service.registry_outbox import post_registry_event
from hardware_sim.script import HandScript
from tests.floor.support import Client, TcpProxy, broker, identity, pki, wait_for  # noqa: F401
from tests.service.test_daemon import PACE, Box, table_config

DECK = "R7"
MOVED = "B2"


def deck_of(name: str) -> dict[str, str]:
    tags = {simulated_uid(name, card): card for card in DECK_52}
    tags.update({simulated_uid(name, JOKER, copy): JOKER for copy in range(2)})
    return tags


TAGS = deck_of(DECK)
BADGE = simulated_badge_uid("5001")
WITHIN_S = 10.0
NOT_AUTHORIZED = 135


def write_table(root, pki, port: int, table: str, *, registered: bool, own: str = DECK):
    """A simulated table whose active deck is *own*: T01's file holds R7's tags (T01 registered
    it), T03's names R7 with an empty table (the way without the floor's issue, TOOLS.md),
    and T02's names a deck of its own, H2, with no word of R7."""
    root.mkdir()
    decks = root / "decks.toml"
    if registered:
        reg = DeckRegistry(active=DECK)
        for uid, card in TAGS.items():
            reg.add(uid, DECK, card)
        reg.backs[DECK] = "green"
        reg.save(decks)
    else:
        decks.write_text(f'active = "{own}"\n[decks.{own}]\nback = "green"\n')
    path = table_config(root, extra=(
        f'\n[floor]\nenabled = true\ntable = "{table}"\nhost = "localhost"\nport = {port}\n'
        f'ca = "{pki / "ca.crt"}"\ncert = "{pki / f"{table}.crt"}"\nkey = "{pki / f"{table}.key"}"\n'
        f"keepalive_s = 5\nack_timeout_s = 3\nhealth_interval_s = 30\n"))
    text = path.read_text()
    path.write_text(re.sub(r'^registry = "builtin:sim"', f'registry = "{decks}"', text, count=1, flags=re.M))
    return path


class Room:
    """The floor and three tables."""

    def __init__(self, tmp_path, pki, broker):
        self.store = Store(tmp_path / "floor.sqlite").__enter__()
        self.collector = Collector(identity(pki, broker, "floor-collector"), self.store).__enter__()
        self.proxy = TcpProxy(broker.port)
        self.configs = {
            "T01": write_table(tmp_path / "T01", pki, broker.port, "T01", registered=True),
            "T02": write_table(tmp_path / "T02", pki, broker.port, "T02", registered=False, own="H2"),
            "T03": write_table(tmp_path / "T03", pki, self.proxy.port, "T03", registered=False),
        }
        self.boxes = {table: Box(path) for table, path in self.configs.items()}
        for table, box in self.boxes.items():
            wait_for(lambda: box.daemon.floor.connected, f"{table} connected")
        wait_for(lambda: set(self.store.known_tables()) >= set(self.boxes), "the floor to know the three tables")

    def version(self, table: str) -> int | None:
        summary = self.boxes[table].daemon.room.summary()
        return None if summary is None else summary["version"]

    def caught_up(self, *tables: str) -> bool:
        newest = self.store.registry_version()
        return all(self.version(t) == newest for t in tables)

    def close(self) -> None:
        for box in self.boxes.values():
            box.close()
        self.proxy.close()
        self.collector.__exit__(None, None, None)
        self.store.__exit__(None, None, None)


@pytest.fixture
def room(tmp_path, pki, broker):
    r = Room(tmp_path, pki, broker)
    yield r
    r.close()


def play(box, script: HandScript, start: int = 0, deck: str = DECK) -> None:
    """Deal *script*'s events from *start* with *deck*'s cards (named so: the simulated table takes
    a registry file without tags for none at all)."""
    events = [{**e, "deck": deck} if "card" in e else e for e in script.events[start:]]
    box.table.play(events, pace_s=PACE)
    box.settle()


def full_hand(seed: int) -> HandScript:
    s = HandScript(seed=seed)
    s.full_hand(3)
    return s


def raised(box, since: int = 0) -> list[tuple[str, str, list]]:
    return [(d["irregularity"], d["verdict"], d["cards"]) for d in box.decisions[since:] if d["irregularity"]]


def voided_as_foreign(box, since: int) -> bool:
    first = next((d for d in box.decisions[since:] if d["irregularity"]), None)
    return first is not None and (first["irregularity"], first["verdict"]) == ("FOREIGN_CARD", "void")


def test_one_registry_for_the_room(room, pki, broker):
    t01, t02, t03 = (room.boxes[t] for t in ("T01", "T02", "T03"))
    # Before the floor knows R7, T02 knows none of its tags (its file only names the deck).
    before = len(t02.decisions)
    play(t02, full_hand(1))
    assert "UNKNOWN_TAG" in {r[0] for r in raised(t02, before)}
    assert "FOREIGN_CARD" not in {r[0] for r in raised(t02, before)}

    # T01's technician registers R7: the line goes up, the floor files it and sends it round.
    start = time.monotonic()
    said = post_registry_event(load_config(room.configs["T01"]), "deck_registered", deck=DECK, back="green",
                               tags=TAGS)
    assert "handed to the running box" in said
    wait_for(lambda: room.store.registry_version() >= 1 and room.caught_up("T01", "T02", "T03"),
             "R7 at every table", timeout=WITHIN_S)
    assert time.monotonic() - start < WITHIN_S
    assert room.store.deck(DECK) is not None
    for seed, box in ((3, t03), (4, t01)):
        before = len(box.decisions)
        play(box, full_hand(seed))
        assert raised(box, before) == [], box.config.floor.table
    # T02 knows R7's cards now, as another deck's: its own file's deck is H2.
    before = len(t02.decisions)
    s = HandScript(seed=2)
    s.new_hand(2).deal(2)
    play(t02, s)
    assert voided_as_foreign(t02, before), raised(t02, before)
    # Issued to T02 on the floor: T02 deals it from its next hand, its file unchanged, no restart.
    issued_at = time.monotonic()
    room.store.issue_deck(DECK, "T02", "ann")
    wait_for(lambda: room.caught_up("T01", "T02", "T03"), "R7 issued to T02", timeout=WITHIN_S)
    assert time.monotonic() - issued_at < WITHIN_S and t02.daemon.engine.active == DECK
    before = len(t02.decisions)
    play(t02, full_hand(12))
    assert raised(t02, before) == []
    assert "H2" in (room.configs["T02"].parent / "decks.toml").read_text()
    assert t01.daemon.engine.active == DECK      # never issued one: T01 keeps its own file's choice

    # A badge registered once, at T01, signs its dealer in at T01 and at T02.
    post_registry_event(load_config(room.configs["T01"]), "badge_registered", uid=BADGE, dealer="5001")
    wait_for(lambda: BADGE in (t02.daemon.room.floor.badges if t02.daemon.room.floor else {}) and
             room.caught_up("T01", "T02"), "the badge at T01 and T02", timeout=WITHIN_S)
    for box in (t01, t02):
        box.table.hold_badge(uid=BADGE)
        wait_for(lambda: box.daemon.engine.dealer == "5001", "dealer 5001 signed in")
        box.settle()
        box.table.hold_badge("2077")                # a dealer of the table's own file takes over
        wait_for(lambda: box.daemon.engine.dealer == "2077", "dealer 2077 signed in")
        box.settle()

    # T03 loses its network; T02 is in a hand (four hole cards out) when R7 is retired.
    room.proxy.partition()
    for link in room.proxy._links:
        for sock in link["socks"]:
            sock.close()
    wait_for(lambda: not t03.daemon.floor.connected, "T03 offline", timeout=30)
    t03_version = room.version("T03")
    hand = HandScript(seed=5)
    hand.new_hand(2).deal()
    during = len(t02.decisions)
    play(t02, hand)
    assert t02.daemon.engine.phase in ("deal", "preflop")
    retired_at = time.monotonic()
    room.store.retire_deck(DECK, "ann", "marked cards suspected")
    wait_for(lambda: room.caught_up("T01"), "the retirement at T01", timeout=WITHIN_S)
    assert time.monotonic() - retired_at < WITHIN_S
    wait_for(lambda: t02.daemon.loop.registry_waiting is not None, "T02 to hold it for the hand's end",
             timeout=WITHIN_S)
    assert not room.caught_up("T02")
    # T02's hand goes on with R7's cards as it began: nothing foreign in it.
    dealt = len(hand.events)
    hand.round_done().flop().round_done().hand_over()
    play(t02, hand, dealt)
    assert raised(t02, during) == []
    assert room.caught_up("T02")                 # taken as the hand ended
    kinds = [(e.ev, e.name) for e in t02.journal_events()]
    over = len(kinds) - 1 - kinds[::-1].index(("button", "hand_over"))
    began = max(i for i, (ev, _n) in enumerate(kinds[:over]) if ev == "new_hand")
    assert ("registry_applied", None) not in kinds[began:over] and ("registry_applied", None) in kinds[over:]
    # The next hands are void at both tables: R7's cards are a retired deck's.
    for seed, box in ((6, t02), (7, t01)):
        before = len(box.decisions)
        s = HandScript(seed=seed)
        s.new_hand(2).deal(2)
        play(box, s)
        assert voided_as_foreign(box, before), (box.config.floor.table, raised(box, before))
    # Offline, T03 judges on with the registry it has: no alarm it could not explain.
    assert room.version("T03") == t03_version
    before = len(t03.decisions)
    play(t03, full_hand(8))
    assert raised(t03, before) == []
    # Back on the network, it takes the retirement before its first hand.
    room.proxy.heal()
    wait_for(lambda: t03.daemon.floor.connected, "T03 back", timeout=40)
    wait_for(lambda: room.caught_up("T03"), "T03 to take the retirement once back", timeout=5)
    before = len(t03.decisions)
    s = HandScript(seed=9)
    s.new_hand(2).deal(2)
    play(t03, s)
    assert voided_as_foreign(t03, before)

    # The badge revoked: it signs in at neither table, and each LCD says so.
    revoked_at = time.monotonic()
    room.store.revoke_badge(BADGE, "ann", "left the casino")
    wait_for(lambda: room.caught_up("T01", "T02"), "the revocation at T01 and T02", timeout=WITHIN_S)
    assert time.monotonic() - revoked_at < WITHIN_S
    for box in (t01, t02):
        assert box.daemon.engine.phase == "halted"     # the void hand is over: between hands
        box.table.hold_badge(uid=BADGE)
        wait_for(lambda: any("Badge revoked" in line for line in box.table.glass()), "Badge revoked on the LCD")
        box.settle()
        assert box.daemon.engine.dealer == "2077"
        assert [e.dealer for e in box.journal_events() if e.ev == "dealer"][-2:] == ["5001", "2077"]

    # A deck issued to T01, then to T02: it moves, and T01's next hand with it is void.
    room.store.register_deck(MOVED, "blue", deck_of(MOVED), "ann")
    room.store.issue_deck(MOVED, "T01", "ann")
    wait_for(lambda: room.caught_up("T01", "T02"), "B2 issued to T01", timeout=WITHIN_S)
    before = len(t01.decisions)
    play(t01, full_hand(13), deck=MOVED)
    assert raised(t01, before) == []
    moved_at = time.monotonic()
    room.store.issue_deck(MOVED, "T02", "bob", "ann")
    wait_for(lambda: room.caught_up("T01", "T02"), "B2 moved to T02", timeout=WITHIN_S)
    assert time.monotonic() - moved_at < WITHIN_S
    assert (t01.daemon.engine.active, t02.daemon.engine.active) == (None, MOVED)
    before = len(t02.decisions)
    play(t02, full_hand(14), deck=MOVED)
    assert raised(t02, before) == []
    before = len(t01.decisions)
    s = HandScript(seed=15)
    s.new_hand(2).deal(2)
    play(t01, s, deck=MOVED)
    assert voided_as_foreign(t01, before), raised(t01, before)
    assert [s["table_id"] for s in room.store.registry_steps(deck=MOVED) if s["step"] == "issued"] == ["T01", "T02"]

    # A table publishing a registry, to another table or to itself, is refused by the broker.
    versions = {t: room.version(t) for t in room.boxes}
    hostile = Client(identity(pki, broker, "T02"), "T02")
    assert hostile.connect(broker.port)
    try:
        forged = P.build_registry(10**6, {DECK: {"back": "green", "tags": TAGS}}, [], {BADGE: "6666"}, [])
        for table in ("T01", "T02"):
            assert hostile.publish(P.registry_topic(table), forged, retain=True).value == NOT_AUTHORIZED
    finally:
        hostile.close()
    time.sleep(1.5)                          # a forged registry would have come by now
    wait_for(lambda: t02.daemon.floor.connected, "T02 back (the hostile client took its client id)", timeout=30)
    assert {t: room.version(t) for t in room.boxes} == versions
    before = len(t01.decisions)
    s = HandScript(seed=10)
    s.new_hand(2).deal(2)
    play(t01, s)
    assert voided_as_foreign(t01, before)
