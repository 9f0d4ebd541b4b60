"""Properties bridged: a property's broker forwards its tables to the group's broker
with mosquitto's own bridge over TLS (firmware_config/floor/bridge.conf); the group's
collector files them and its acks flow back. The bridge is cut and the group broker
restarted mid-stream: nothing lost, nothing stored twice. A bridge speaks for its own
property's tables only."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from tests.floor.support import (Client, TcpProxy, append_lines, identity, need, open_journal, settings,
                                 wait_for)
from tests.floor.test_faults import CuttingProxy, Dealer, seqs
from dealerbox.link import protocol as P
from dealerbox.errors import FloorError
from dealerbox.floor.operating import bridges
from dealerbox.floor.operating.broker import SHIPPED_ACL, Broker, bridge_acl, make_pki, render_bridge
from dealerbox.floor.store.bridges import BLIND_KIND, bridge_alert_table
from dealerbox.floor.collecting.collector import Collector
from dealerbox.service.uplink import Publisher
from dealerbox.floor.store import Store

TABLES = ("T01", "T02")
LINES = 300

assert TcpProxy  # CuttingProxy's base, from the support module


@pytest.fixture
def group_pki(tmp_path_factory):
    need("openssl", "openssl")
    return make_pki(tmp_path_factory.mktemp("group-pki"),
                    [*TABLES, "T03", "floor-collector", "bridge-north", "floor-admin"])


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
                                      pki=group_pki, group_ca=group_pki / "ca.crt"))
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


def test_a_bridge_with_its_rights_in_dynamic_security_publishes_and_the_floor_sees_it_come_and_go(
        group_pki, tmp_path):
    """The group side of ``floor bridge add``: the bridge's identity and rights in the dynamic
    security plugin (no line of it in the ACL file, which upgrades replace). Its notifications
    tell the floor the property is connected, then blind when its broker dies, with an alert
    once it has been blind longer than [bridges] blind_alert_s."""
    need("mosquitto", "mosquitto")
    pki = group_pki
    group = Broker(tmp_path / "group", pki)  # the shipped ACL file only
    group.directory.mkdir()
    group.start()
    admin = bridges.GroupBroker(port=group.port, pki=pki)
    bridges.grant(admin, "north", ["T01"])
    assert bridges.granted(admin) == {"north": ["T01"]}
    conf_d = tmp_path / "conf.d"
    conf_d.mkdir()
    shutil.copy(pki / "ca.crt", pki / bridges.GROUP_CA)  # one CA here for the group and the property
    conf = bridges.write_property_side("north", "127.0.0.1", group.port, conf_dir=conf_d, pki=pki)
    assert bridges.property_bridges(conf_d) == {"north": f"127.0.0.1:{group.port}"}
    prop = Broker(tmp_path / "north", pki, extra=conf.read_text())
    prop.directory.mkdir()
    journal = open_journal(tmp_path / "T01")
    try:
        with Store(tmp_path / "group.sqlite") as store, \
                Collector(identity(pki, group, "floor-collector"), store, bridge_blind_s=1) as collector:
            assert collector.connected.wait(30)
            prop.start()
            wait_for(lambda: (store.bridge("north") or {}).get("connected"), "the floor seeing north connected")
            with Publisher(settings(pki, prop, "T01", batch=8, window=32), tmp_path / "T01") as pub:
                append_lines(journal, 20)
                wait_for(lambda: pub.acked == 20, "T01's lines acknowledged over the bridge")
            assert seqs(store, "T01") == list(range(1, 21))
            assert store.alerts() == []
            killed_at = time.time()
            prop.kill()  # the property's broker dies: its bridge's will says so
            blind = wait_for(lambda: (b := store.bridge("north")) and not b["connected"] and b,
                             "the floor seeing north blind")
            assert blind["since"] >= killed_at - 1
            (alert,) = wait_for(lambda: [a for a in store.alerts() if a["kind"] == BLIND_KIND],
                                "the alert of a property blind too long")
            assert alert["table"] == bridge_alert_table("north") and "north" in alert["text"]
            prop.start()
            wait_for(lambda: (store.bridge("north") or {}).get("connected"), "north connected again")
        # A bridge whose rights were taken away is refused.
        assert bridges.revoke(admin, "north") and bridges.granted(admin) == {}
        bridge = Client(identity(pki, group, "bridge-north"), "bridge-north")
        assert bridge.connect(group.port)
        try:
            line = json.dumps({"seq": 1, "prev": P.GENESIS, "wall": None, "event": {"t": 0, "ev": "tick"}})
            refused = bridge.publish(P.journal_topic("T01"), P.encode({"table": "T01", "boot": 1, "lines": [line]}))
            assert refused.value == 135
        finally:
            bridge.close()
        assert bridges.remove_property_side("north", conf_dir=conf_d) and bridges.property_bridges(conf_d) == {}
    finally:
        journal.close()
        prop.stop()
        group.stop()


def test_a_bridge_is_refused_names_and_paths_it_cannot_use(tmp_path, group_pki):
    with pytest.raises(FloorError, match="property name 'North/1'"):
        bridges.write_property_side("North/1", "group.example", conf_dir=tmp_path, pki=group_pki)
    with pytest.raises(FloorError, match="bridge-south.crt"):
        bridges.write_property_side("south", "group.example", conf_dir=tmp_path, pki=group_pki)
    # The property's own CA is not the group's: the group's comes beside it, under its own name.
    with pytest.raises(FloorError, match=r"group-ca\.crt: copy the group CA's ca\.crt here"):
        bridges.write_property_side("north", "group.example", conf_dir=tmp_path, pki=group_pki)
    with pytest.raises(FloorError, match="at least one table"):
        bridges.group_acls("north", [])
    with pytest.raises(FloorError, match="table 'T/1'"):
        bridges.group_acls("north", ["T/1"])


@pytest.fixture(params=["sqlite", "postgresql"])
def store_target(request, tmp_path):
    if request.param == "sqlite":
        return tmp_path / "floor.sqlite"
    return request.getfixturevalue("postgres_cluster").database("floor_bridges")


def test_a_bridge_state_keeps_its_since_until_it_changes_and_a_blind_spell_alerts_once(store_target):
    with Store(store_target) as store:
        assert store.note_bridge("north", True, 100.0)["since"] == 100.0
        assert store.note_bridge("north", True, 150.0)["since"] == 100.0  # the retained 1 again
        assert store.note_bridge("north", False, 200.0)["since"] == 200.0
        assert store.alert_blind_bridges(60, now=259.0) == []
        (alert,) = store.alert_blind_bridges(60, now=261.0)
        assert (alert["table"], alert["kind"]) == (bridge_alert_table("north"), BLIND_KIND)
        assert store.alert_blind_bridges(60, now=900.0) == []  # one alert per spell
        store.note_bridge("north", True, 1000.0)
        store.note_bridge("north", False, 1100.0)
        assert len(store.alert_blind_bridges(60, now=1200.0)) == 1  # a new spell
        assert [(a["kind"], a["count"]) for a in store.alerts()] == [(BLIND_KIND, 2)]  # folded
        assert store.bridges() == [{"name": "north", "connected": False, "since": 1100.0, "heard": 1100.0,
                                    "alerted": True}]
