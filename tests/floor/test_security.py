"""No table can speak for another: the shipped broker config, ACL and PKI,
tested against a real mosquitto with TLS on a loopback port."""

from __future__ import annotations

import os
import subprocess
import threading

import pytest

from tests.floor.support import Client, broker, identity, need, pki, wait_for  # noqa: F401
from dealerbox.link import protocol as P
from dealerbox.floor.operating.broker import MAKE_CA, Broker, free_port, make_pki
from dealerbox.link.client import Identity


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


def _accepted(ident: Identity, port: int) -> bool:
    c = Client(ident, "T01")
    try:
        return c.connect(port, timeout=10)
    finally:
        c.close()


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


def test_a_revoked_certificate_cannot_connect_after_a_reload(broker, pki):
    ident = identity(pki, broker, "floor-revoked")
    before = Client(ident, "floor-revoked")
    assert before.connect(broker.port)
    before.close()
    subprocess.run(["sh", str(MAKE_CA), str(pki), "revoke", "floor-revoked"], check=True,
                   capture_output=True)
    broker.reload()  # SIGHUP: mosquitto reads the CRL again for new connections
    wait_for(lambda: _refused(ident, broker.port), "the revoked certificate refused after the reload", 60)
    assert broker.proc.poll() is None
    assert _accepted(identity(pki, broker, "T01"), broker.port)


def test_a_floor_role_publishing_as_a_table_is_ignored_by_the_collector(broker, pki, tmp_path):
    from dealerbox.floor.collecting.collector import Collector
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


# -- revocation that holds: one valid certificate per CN, all of them revoked, the open session ended
#
# Each of these tests has a CA of its own: what they revoke must not touch the session's.


def _make_ca(pki, *args, port: int | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **({"FLOOR_BROKER_PORT": str(port)} if port else {})}
    return subprocess.run(["sh", str(MAKE_CA), str(pki), *args], capture_output=True, text=True, env=env,
                          timeout=120)


def _valid(pki, cn: str) -> list[str]:
    return [line.split("\t")[3] for line in (pki / "index.txt").read_text().splitlines()
            if line.startswith("V\t") and line.endswith(f"/CN={cn}")]


@pytest.fixture
def own_pki(tmp_path):
    need("openssl", "openssl")
    return make_pki(tmp_path / "pki", ["T01", "T05", "floor-admin"])


@pytest.fixture
def own_broker(tmp_path, own_pki):
    need("mosquitto", "mosquitto")
    b = Broker(tmp_path / "broker", own_pki)
    b.directory.mkdir()
    with b:
        yield b


def _ident(pki, port: int, cert, key) -> Identity:
    return Identity("127.0.0.1", port, pki / "ca.crt", cert, key)


def test_a_second_certificate_for_a_cn_is_refused(own_pki):
    first = (own_pki / "T05.crt").read_bytes()
    again = _make_ca(own_pki, "client", "T05")
    assert again.returncode == 1
    assert "T05 has a valid certificate already" in again.stderr and "client --replace T05" in again.stderr
    assert (own_pki / "T05.crt").read_bytes() == first and len(_valid(own_pki, "T05")) == 1
    # All or nothing: a new CN named beside a taken one is not issued either.
    assert _make_ca(own_pki, "client", "T06", "T05").returncode == 1
    assert not (own_pki / "T06.crt").exists()


def test_replacing_a_certificate_revokes_the_old_one(own_pki, own_broker, tmp_path):
    old_cert, old_key = tmp_path / "old.crt", tmp_path / "old.key"
    old_cert.write_bytes((own_pki / "T05.crt").read_bytes())
    old_key.write_bytes((own_pki / "T05.key").read_bytes())
    old = _ident(own_pki, own_broker.port, old_cert, old_key)
    assert _accepted(old, own_broker.port)
    replaced = _make_ca(own_pki, "client", "--replace", "T05")
    assert replaced.returncode == 0, replaced.stderr
    assert "reload mosquitto" in replaced.stderr
    assert len(_valid(own_pki, "T05")) == 1
    own_broker.reload()
    wait_for(lambda: _refused(old, own_broker.port), "the replaced certificate refused", 60)
    assert _accepted(_ident(own_pki, own_broker.port, own_pki / "T05.crt", own_pki / "T05.key"), own_broker.port)


def test_revoke_revokes_every_certificate_of_the_cn(own_pki, own_broker, tmp_path):
    # A second valid T05, as make-ca.sh issued it before it refused to (openssl ca, the CA's own config).
    key, csr, cert = tmp_path / "second.key", tmp_path / "second.csr", tmp_path / "second.crt"
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-out", str(key)], check=True, capture_output=True)
    subprocess.run(["openssl", "req", "-new", "-key", str(key), "-subj", "/CN=T05", "-out", str(csr)],
                   check=True, capture_output=True)
    subprocess.run(["openssl", "ca", "-batch", "-notext", "-config", str(own_pki / "openssl.cnf"),
                    "-extensions", "client_ext", "-in", str(csr), "-out", str(cert)],
                   check=True, capture_output=True, env={**os.environ, "FLOOR_SAN": "DNS:unused"})
    devices = [_ident(own_pki, own_broker.port, own_pki / "T05.crt", own_pki / "T05.key"),
               _ident(own_pki, own_broker.port, cert, key)]
    assert len(_valid(own_pki, "T05")) == 2
    assert all(_accepted(d, own_broker.port) for d in devices)
    revoked = _make_ca(own_pki, "revoke", "T05")
    assert revoked.returncode == 0, revoked.stderr
    assert "revoked 2 certificate(s) of T05" in revoked.stderr
    assert _valid(own_pki, "T05") == []
    own_broker.reload()
    for device in devices:
        wait_for(lambda: _refused(device, own_broker.port), "every certificate of T05 refused", 60)
    assert _accepted(_ident(own_pki, own_broker.port, own_pki / "T01.crt", own_pki / "T01.key"),
                     own_broker.port)
    # Nothing left to revoke is said, not done silently.
    again = _make_ca(own_pki, "revoke", "T05")
    assert again.returncode == 1 and "no valid certificate" in again.stderr


def test_a_revoked_tables_open_session_ends_with_the_kick(own_pki, own_broker):
    port = own_broker.port
    t05 = Client(_ident(own_pki, port, own_pki / "T05.crt", own_pki / "T05.key"), "T05")
    t01 = Client(_ident(own_pki, port, own_pki / "T01.crt", own_pki / "T01.key"), "T01")
    try:
        assert t05.connect(port) and t01.connect(port)
        assert _make_ca(own_pki, "revoke", "T05").returncode == 0
        own_broker.reload()
        # The reload alone leaves the open session as it is: mosquitto checks the CRL at the handshake.
        assert not t05.publish(P.status_topic("T05"), P.encode({"online": True})).is_failure
        kicked = _make_ca(own_pki, "kick", "T05", port=port)
        assert kicked.returncode == 0, kicked.stderr
        wait_for(lambda: t05.disconnects, "T05's session ended", 20)
        assert t05.disconnects[0].value == 152  # MQTT v5: administrative action
        # It cannot come back with its certificate; the other table never noticed.
        assert _refused(_ident(own_pki, port, own_pki / "T05.crt", own_pki / "T05.key"), port)
        assert t01.disconnects == []
        assert not t01.publish(P.status_topic("T01"), P.encode({"online": True})).is_failure
        assert own_broker.proc.poll() is None
    finally:
        t05.client.loop_stop()
        t01.close()


def test_a_kick_that_did_not_happen_says_so(own_pki, own_broker, tmp_path):
    unreachable = _make_ca(own_pki, "kick", "T05", port=free_port())
    assert unreachable.returncode == 1 and "mosquitto_ctrl" in unreachable.stderr
    # A certificate that is not floor-admin's: the broker's ACL refuses the command.
    impostor = tmp_path / "impostor"
    impostor.mkdir()
    (impostor / "ca.crt").write_bytes((own_pki / "ca.crt").read_bytes())
    (impostor / "floor-admin.crt").write_bytes((own_pki / "T01.crt").read_bytes())
    (impostor / "floor-admin.key").write_bytes((own_pki / "T01.key").read_bytes())
    refused = _make_ca(impostor, "kick", "T05", port=own_broker.port)
    assert refused.returncode == 1 and "refused to kick T05" in refused.stderr
    missing = _make_ca(tmp_path, "kick", "T05", port=own_broker.port)
    assert missing.returncode == 1 and "floor-admin" in missing.stderr


def test_a_table_says_why_the_floor_will_not_have_it(own_pki, own_broker, tmp_path, caplog):
    import logging

    from tests.floor.support import append_lines, open_journal
    from dealerbox.service.uplink import FloorSettings, Publisher

    caplog.set_level(logging.WARNING)

    def table(name: str, cert: str, port: int) -> FloorSettings:
        return FloorSettings(enabled=True, table=name, host="127.0.0.1", port=port, ca=str(own_pki / "ca.crt"),
                             cert=str(own_pki / f"{cert}.crt"), key=str(own_pki / f"{cert}.key"),
                             keepalive_s=5, ack_timeout_s=3.0, health_interval_s=1.0)

    def said(text: str) -> bool:
        return any(text in r.getMessage() for r in caplog.records)

    with open_journal(tmp_path / "j") as journal:
        append_lines(journal, 1)
        # Another table's certificate: the ACL refuses what it publishes as T01.
        with Publisher(table("T01", "T05", own_broker.port), tmp_path / "j"):
            wait_for(lambda: said("the broker refused a message of T01 (Not authorized)"), "the ACL refusal said")
        # Nothing listens there.
        nowhere = free_port()
        with Publisher(table("T01", "T01", nowhere), tmp_path / "j"):
            wait_for(lambda: said(f"cannot reach the broker at 127.0.0.1:{nowhere}"), "the unreachable broker said")
        # A revoked certificate.
        assert _make_ca(own_pki, "revoke", "T05").returncode == 0
        own_broker.reload()
        wait_for(lambda: _refused(_ident(own_pki, own_broker.port, own_pki / "T05.crt", own_pki / "T05.key"),
                                  own_broker.port), "T05 refused", 60)
        with Publisher(table("T05", "T05", own_broker.port), tmp_path / "j"):
            wait_for(lambda: said("closed the connection before accepting T05") or said("ended the TLS handshake"),
                     "the refused certificate said")


def test_a_complaint_is_said_once_while_it_lasts(caplog):
    import logging

    from dealerbox.link.client import Complaints

    now = [0.0]
    complaints = Complaints(repeat_s=300.0, clock=lambda: now[0])
    caplog.set_level(logging.WARNING)
    for _ in range(10):
        complaints.say("floor: cannot reach the broker")
        now[0] += 5.0
    complaints.say("floor: another problem")
    now[0] += 300.0
    complaints.say("floor: another problem")
    assert [r.getMessage() for r in caplog.records] == [
        "floor: cannot reach the broker", "floor: another problem", "floor: another problem"]
