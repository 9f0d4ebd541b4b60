"""Why the shipped bridge.conf keeps its session and a 10 s keepalive: the same outages
met by the bridge settings shipped before (``cleansession true``, mosquitto's default
keepalive of 60 s) and by today's, on Debian's mosquitto (docs/floor/group.md, Bridge outages).

- The link dropped, and back a second later, while a table publishes on the property's
  broker: with the session kept, every message published while the bridge was down
  reaches the group broker once it is back; with the clean session of before, the bridge
  drops them all (the tables' journals had to send them again).
- A blackhole (the link takes packets and never answers) for 25 s: with a 10 s keepalive
  the group broker ends the silent bridge after 15 s, and its will tells the floor the
  property is blind; with 60 s it would take 90 s, and a 25 s blackhole goes unseen.

Raw MQTT clients on both brokers, so that what is counted is the bridge alone: no
journal sends anything again. The property's health check runs beside it as its timer
does. Measured (Nov 2026, 6 runs of each): before, 0 of 10 kept and the blackhole unseen;
shipped, 10 of 10 and seen, every time.

A longer outage is not what this compares: a reconnect that fails can wedge 2.0.11 (its
bridge retries a TLS connect that failed, at full CPU, and answers nobody, SIGTERM
included), and the SIGKILL that heals it loses what the broker held in memory, with
either setting (docs/floor/group.md, Bridge outages).
"""

from __future__ import annotations

import re
import time

import pytest

from tests.floor.support import Client, identity, wait_for
from tests.floor.test_bridge_faults import (BLIND_RESTART_S, Healer, bridged_through_a_link,  # noqa: F401
                                           group_pki, stranger_pki)
from dealerbox.floor.collecting.message import bridge_topic
from dealerbox.link import protocol as P

#: Shorter than the bridge's first retry (restart_timeout 2 30).
OUTAGE_S = 1.0
BLACKHOLE_S = 25.0
#: The link healed, the bridge is back within this (its back-off, restart_timeout 2 30).
HEAL_S = 45.0
OUTAGE_MESSAGES = 10


def settings_before(shipped: str) -> str:
    """The shipped bridge snippet with the settings it had before: a clean session and
    mosquitto's default keepalive."""
    before, kept = re.subn(r"^cleansession false$", "cleansession true", shipped, flags=re.M)
    before, fast = re.subn(r"^keepalive_interval 10\n", "", before, flags=re.M)
    assert kept == 1 and fast == 1, "bridge.conf's session or keepalive lines changed: see this test"
    return before


@pytest.fixture(params=["before", "shipped"])
def bridge(request, tmp_path, group_pki, stranger_pki):  # noqa: F811
    conf = settings_before if request.param == "before" else (lambda text: text)
    with bridged_through_a_link(tmp_path, group_pki, stranger_pki, ["T01"], conf) as brokers:
        yield {"settings": request.param, **brokers}


def test_the_shipped_bridge_keeps_what_an_outage_holds_back_and_shows_a_blackhole(bridge, tmp_path):
    pki, group, prop, link = bridge["pki"], bridge["group"], bridge["property"], bridge["link"]
    topic, state = P.journal_topic("T01"), bridge_topic("north")
    floor = Client(identity(pki, group, "floor-collector"), "floor-collector")
    table = Client(identity(pki, prop, "T01"), "T01")

    def published(payload: bytes) -> bool:
        """*payload* taken by the property's broker (False while it restarts, or answers nothing)."""
        try:
            return not table.publish(topic, payload).is_failure
        except AssertionError:  # no PUBACK in time
            return False

    def through(payload: bytes, what: str, timeout: float) -> None:
        """*payload* published on the property's broker until the group's has it."""
        wait_for(lambda: published(payload) and (topic, payload) in floor.messages, what, timeout)

    try:
        assert floor.connect(group.port) and table.connect(prop.port)
        floor.subscribe(topic)
        floor.subscribe(state)
        through(b"before the outage", "the bridge carrying a message", 30)
        # The property's health check beside it, as its timer runs: 2.0.11 can stop answering
        # after a failed reconnect of its bridge, whatever the settings, and only a restart helps.
        with Healer(pki, prop, tmp_path / "broker-check.json") as healer:
            # The link drops, and is back before the bridge's first retry: the table publishes
            # while the bridge is down. (A retry that fails can wedge 2.0.11, and the restart
            # that heals it loses what its memory held: a dropped link is what is compared here.)
            link.fault("close")
            outage = [f"in the outage {n}".encode() for n in range(OUTAGE_MESSAGES)]
            assert all(published(payload) for payload in outage)
            time.sleep(OUTAGE_S)
            link.heal()
            through(b"after the outage", "the bridge back after the outage", HEAL_S + BLIND_RESTART_S)
            time.sleep(2.0)  # what the bridge sends on its return, given time to arrive
            kept = sum((topic, payload) in floor.messages for payload in outage)

            # A blackhole: what the group floor hears of the bridge while it lasts.
            heard = len(floor.messages)
            link.fault("blackhole")
            time.sleep(BLACKHOLE_S)
            blind = (state, b"0") in floor.messages[heard:]
            link.heal()
    finally:
        floor.close()
        table.close()
    print(f"\n{bridge['settings']}: {kept} of {OUTAGE_MESSAGES} messages of a {OUTAGE_S:.0f} s outage reached "
          f"the group; a {BLACKHOLE_S:.0f} s blackhole {'was' if blind else 'was not'} seen by the group; "
          f"{len(healer.restarts)} restart(s) by the health check")
    if bridge["settings"] == "shipped":
        assert kept == OUTAGE_MESSAGES
        assert blind
    else:
        assert kept < OUTAGE_MESSAGES
        assert not blind
