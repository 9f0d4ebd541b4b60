"""Properties bridged: a property's broker forwards its tables to the group's broker
with mosquitto's own bridge over TLS (firmware_config/floor/bridge.conf); the group's
collector files them and its acks flow back. The bridge is cut and the group broker
restarted mid-stream: nothing lost, nothing stored twice. A bridge speaks for its own
property's tables only."""

from __future__ import annotations

import json

import pytest

from tests.floor.support import Client, TcpProxy, identity, need, open_journal, settings, wait_for
from tests.floor.test_faults import CuttingProxy, Dealer, seqs
from dealerbox.link import protocol as P
from dealerbox.floor.broker import SHIPPED_ACL, Broker, bridge_acl, make_pki, render_bridge
from dealerbox.floor.collector import Collector
from dealerbox.service.uplink import Publisher
from dealerbox.floor.store import Store

TABLES = ("T01", "T02")
LINES = 300

assert TcpProxy  # CuttingProxy's base, from the support module


@pytest.fixture
def group_pki(tmp_path_factory):
    need("openssl", "openssl")
    return make_pki(tmp_path_factory.mktemp("group-pki"), [*TABLES, "T03", "floor-collector", "bridge-north"])


@pytest.fixture
def bridged(tmp_path, group_pki):
    """The group broker, a proxy in front of it, and the property "north"'s broker bridged through it."""
    need("mosquitto", "mosquitto")
    acl = tmp_path / "group-acl"
    acl.write_text(SHIPPED_ACL.read_text() + "\n" + bridge_acl("north", TABLES))
    group = Broker(tmp_path / "group", group_pki, acl=acl)
    group.directory.mkdir()
    group.start()
    proxy = CuttingProxy(group.port)
    prop = Broker(tmp_path / "north", group_pki,
                  extra=render_bridge(property_name="north", group_host="127.0.0.1", group_port=proxy.port,
                                      pki=group_pki))
    prop.directory.mkdir()
    prop.start()
    try:
        yield {"group": group, "property": prop, "proxy": proxy, "pki": group_pki}
    finally:
        prop.stop()
        proxy.close()
        group.stop()


def test_a_propertys_tables_reach_the_group_collector_through_the_bridge_cut_and_all(bridged, tmp_path):
    pki, group, prop = bridged["pki"], bridged["group"], bridged["property"]
    journals = {t: open_journal(tmp_path / t) for t in TABLES}
    with Store(tmp_path / "group.sqlite") as store, \
            Collector(identity(pki, group, "floor-collector"), store) as collector:
        assert collector.connected.wait(30)
        # The tables know only their property's broker.
        pubs = {t: Publisher(settings(pki, prop, t, batch=8, window=32), tmp_path / t).start() for t in TABLES}
        try:
            with Dealer(journals["T01"], LINES, 0.01), Dealer(journals["T02"], LINES, 0.01):
                wait_for(lambda: all(p.acked >= 50 for p in pubs.values()), "acks back over the bridge")
                bridged["proxy"].cut()  # the link between the buildings drops
                at_cut = {t: p.acked for t, p in pubs.items()}
                wait_for(lambda: all(p.acked >= at_cut[t] + 50 for t, p in pubs.items()),
                         "the bridge back and the lines flowing again", 90)
                group.kill()  # and the group's broker dies (a power cut), then comes back
                group.start()
            wait_for(lambda: all(p.acked == LINES for p in pubs.values()), "every line acknowledged", 120)
            wait_for(lambda: all(t["online"] for t in store.tables()), "both tables online on the group floor")
        finally:
            for p in pubs.values():
                p.close()
            for j in journals.values():
                j.close()
        for t in TABLES:
            assert seqs(store, t) == list(range(1, LINES + 1)), t
            assert store.verify(t) == []
        assert {t["table_id"] for t in store.tables()} == set(TABLES)


def test_a_bridge_cannot_publish_for_another_propertys_table(bridged):
    pki, group = bridged["pki"], bridged["group"]
    # Speaking straight to the group broker with the bridge's certificate.
    bridge = Client(identity(pki, group, "bridge-north"), "bridge-north")
    assert bridge.connect(group.port)
    try:
        line = json.dumps({"seq": 1, "prev": P.GENESIS, "wall": None, "event": {"t": 0, "ev": "tick"}})
        payload = P.encode({"table": "T03", "boot": 1, "lines": [line]})
        refused = bridge.publish(P.journal_topic("T03"), payload)
        assert refused.value == 135  # not authorized: T03 is no table of this property
        allowed = bridge.publish(P.journal_topic("T01"), P.encode({"table": "T01", "boot": 1, "lines": []}))
        assert not allowed.is_failure
    finally:
        bridge.close()
