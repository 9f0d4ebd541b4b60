"""No table can speak for another: the shipped broker config, ACL and PKI,
tested against a real mosquitto with TLS on a loopback port."""

from __future__ import annotations

import subprocess
import threading

import pytest

from test_floor_support import Client, broker, identity, need, pki, wait_for  # noqa: F401
from dealerbox.floor import protocol as P
from dealerbox.floor.broker import MAKE_CA, make_pki
from dealerbox.floor.client import Identity


def test_make_ca_script_passes_shellcheck():
    shellcheck = need("shellcheck", "shellcheck")
    proc = subprocess.run([shellcheck, str(MAKE_CA)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_each_table_certificate_names_its_table(pki):
    out = subprocess.run(["openssl", "x509", "-in", str(pki / "T01.crt"), "-noout", "-subject"],
                         capture_output=True, text=True, check=True).stdout
    assert "CN = T01" in out or "CN=T01" in out


def test_a_table_publishes_on_its_own_topics_and_the_collector_receives(broker, pki):
    collector = Client(identity(pki, broker, "floor-collector"), "floor-collector")
    table = Client(identity(pki, broker, "T01"), "T01")
    try:
        assert collector.connect(broker.port) and table.connect(broker.port)
        collector.subscribe(P.TABLES_WILDCARD)
        rc = table.publish(P.journal_topic("T01"), P.encode({"lines": []}))
        assert not rc.is_failure
        wait_for(lambda: collector.messages, "the collector to receive T01's message")
        assert collector.messages[0][0] == P.journal_topic("T01")
    finally:
        collector.close()
        table.close()


def test_a_publish_on_another_tables_topic_is_refused_and_nobody_receives_it(broker, pki):
    collector = Client(identity(pki, broker, "floor-collector"), "floor-collector")
    impostor = Client(identity(pki, broker, "T02"), "T02")
    try:
        assert collector.connect(broker.port) and impostor.connect(broker.port)
        collector.subscribe(P.TABLES_WILDCARD)
        forged = impostor.publish(P.journal_topic("T01"), P.encode({"lines": ["forged"]}))
        assert forged.value == 135  # MQTT v5: not authorized
        # A publish of its own after the forged one arrives; the forged one never does.
        impostor.publish(P.status_topic("T02"), P.encode({"online": True}))
        wait_for(lambda: collector.messages, "T02's own status")
        assert [t for t, _p in collector.messages] == [P.status_topic("T02")]
    finally:
        collector.close()
        impostor.close()


def test_a_table_cannot_acknowledge_or_read_for_another(broker, pki):
    t1 = Client(identity(pki, broker, "T01"), "T01")
    t2 = Client(identity(pki, broker, "T02"), "T02")
    try:
        assert t1.connect(broker.port) and t2.connect(broker.port)
        t1.subscribe(P.ack_topic("T01"))
        assert t2.publish(P.ack_topic("T01"), P.encode({"acked": 10**6})).value == 135
        t2.subscribe(P.journal_topic("T01"))  # granted or not, nothing may arrive
        t1.publish(P.journal_topic("T01"), P.encode({"lines": []}))
        t2.publish(P.status_topic("T02"), P.encode({"online": True}))
        assert t1.messages == [] and t2.messages == []
    finally:
        t1.close()
        t2.close()


def test_another_tables_client_id_cannot_take_its_session(broker, pki):
    real = Client(identity(pki, broker, "T01"), "T01")
    impostor = Client(identity(pki, broker, "T02"), "T01")  # asks for T01's client id
    try:
        assert real.connect(broker.port)
        assert impostor.connect(broker.port)  # use_username_as_clientid: it becomes T02
        real.subscribe(P.ack_topic("T01"))
        # T01 is still connected: its session was not taken over.
        assert real.disconnects == []
        assert not real.publish(P.status_topic("T01"), P.encode({"online": True})).is_failure
    finally:
        real.close()
        impostor.close()


def test_the_floor_view_may_read_only(broker, pki):
    view = Client(identity(pki, broker, "floor-view"), "floor-view")
    try:
        assert view.connect(broker.port)
        assert view.publish(P.ack_topic("T01"), P.encode({"acked": 1})).value == 135
        assert view.publish(P.COLLECTOR_TOPIC, P.encode({"online": True})).value == 135
        assert view.publish(P.ALERTS_TOPIC, P.encode({"open": []})).value == 135
    finally:
        view.close()


def _refused(ident: Identity, port: int) -> bool:
    c = Client(ident, "T01")
    try:
        return not c.connect(port, timeout=10)
    finally:
        c.client.loop_stop()


def test_no_certificate_cannot_connect(broker, pki):
    import ssl

    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="T01", protocol=mqtt.MQTTv5)
    client.tls_set_context(ssl.create_default_context(cafile=str(pki / "ca.crt")))
    accepted, ended = [], threading.Event()
    client.on_connect = lambda _c, _u, _f, rc, _p: (accepted.append(not rc.is_failure), ended.set())
    client.on_disconnect = lambda *_: ended.set()
    try:
        client.connect("127.0.0.1", broker.port, keepalive=10)
    except (OSError, ssl.SSLError):
        ended.set()  # the handshake itself was refused
    client.loop_start()
    assert ended.wait(20), "neither accepted nor refused"
    client.loop_stop()
    assert True not in accepted


def test_a_foreign_ca_cannot_connect(broker, pki, tmp_path):
    foreign = make_pki(tmp_path / "foreign", ["T01"])
    # Trusts our broker, but presents a T01 certificate from another CA.
    ident = Identity("127.0.0.1", broker.port, pki / "ca.crt", foreign / "T01.crt", foreign / "T01.key")
    assert _refused(ident, broker.port)


def test_a_revoked_certificate_cannot_connect(broker, pki):
    ident = identity(pki, broker, "floor-revoked")
    before = Client(ident, "floor-revoked")
    assert before.connect(broker.port)
    before.close()
    subprocess.run(["sh", str(MAKE_CA), str(pki), "revoke", "floor-revoked"], check=True,
                   capture_output=True)
    broker.stop()
    broker.start()  # mosquitto reads the CRL when it starts a listener
    assert _refused(ident, broker.port)
    assert Client(identity(pki, broker, "T01"), "T01").connect(broker.port)


def test_a_floor_role_publishing_as_a_table_is_ignored_by_the_collector(broker, pki, tmp_path):
    from dealerbox.floor.collector import Collector
    from dealerbox.floor.store import Store
    view = Client(identity(pki, broker, "floor-view"), "floor-view")
    with Store(tmp_path / "floor.sqlite") as store, \
            Collector(identity(pki, broker, "floor-collector"), store) as collector:
        assert collector.connected.wait(30)
        seen = []
        collector.listen(seen.append)
        try:
            assert view.connect(broker.port)
            line = ('{"seq":1,"prev":"' + P.GENESIS + '","wall":"2026-11-23T00:00:00Z",'
                    '"event":{"t":0.0,"ev":"tick"}}')
            # The ACL pattern lets every user write under its own name...
            assert not view.publish(P.journal_topic("floor-view"), P.encode({"lines": [line]})).is_failure
            # ...but a floor- name is never a table: a real table's line after it is all there is.
            t1 = Client(identity(pki, broker, "T01"), "T01")
            assert t1.connect(broker.port)
            t1.publish(P.journal_topic("T01"), P.encode({"lines": [line]}))
            t1.close()
            wait_for(lambda: store.tables(), "T01 stored")
            assert [t["table_id"] for t in store.tables()] == ["T01"]
        finally:
            view.close()
