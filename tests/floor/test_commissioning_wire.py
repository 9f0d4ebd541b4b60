"""A table's commissioning from its journal to the tables page, end to end: the table's own
journal and uplink (dealerbox/service) send its ``commissioned`` line through Debian's
mosquitto (the shipped config and ACL, TLS), the real collector files it and its registry pass
makes it a commissioning record, and the web view (``dealerbox floor web``) shows it on the
tables page and on the table's commissioning page. Meanwhile a hostile table's garbage record,
sent as a chained journal line on its own topic, is refused with the reason and an alert of its
own, and touches nothing of the other table's."""

from __future__ import annotations

import time

from dealerbox.domain.events import Event
from dealerbox.floor.collecting.collector import Collector
from dealerbox.floor.store import Store
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.link import protocol as P
from dealerbox.service.uplink import Publisher
from tests.floor.commission_support import CONFIG, record
from tests.floor.registry_support import TableJournal
from tests.floor.support import Client, identity, open_journal, settings, wait_for
from tests.floor.web.test_app import WebProcess, add_users, call, sign_in


def test_a_tables_commissioned_line_reaches_the_store_and_shows_on_the_tables_page(broker, pki, tmp_path):
    path = tmp_path / "floor.sqlite"
    add_users(path)
    ended = time.time() - 600
    run = record(ended, technician="jana", shoe_fails=True)
    jdir = tmp_path / "T01"
    with open_journal(jdir) as journal:
        journal.append(Event.from_dict({"t": 1.0, "ev": "tick"}))
        # As `dealerbox commission` ends a run: the vocabulary's own event, journalled.
        last = journal.append(Event.from_dict({"t": 2.0, "ev": "commissioned", **run}))
    with Store(path) as store, Collector(identity(pki, broker, "floor-collector"), store) as collector, \
            WebProcess(tmp_path, path) as web:
        assert collector.connected.wait(30)
        with Publisher(settings(pki, broker, "T01"), jdir) as pub:
            wait_for(lambda: pub.acked == last, "T01's lines acknowledged")
        (filed,) = wait_for(lambda: store.commissionings("T01"), "T01's commissioning filed", 30)
        assert (filed["seq"], filed["technician"], filed["ok"], filed["config"]) == (last, "jana", False, CONFIG)
        assert filed["at_text"] == run["at"] and filed["devices"] == run["devices"]
        # A hostile T02 sends a record that is not the contract's: refused, alerted, never filed.
        hostile = Client(identity(pki, broker, "T02"), "T02")
        assert hostile.connect(broker.port)
        try:
            lines = TableJournal("T02")
            lines.add(time.time(), "commissioned", **{**record(time.time()), "ok": "surely"})
            hostile.publish(P.journal_topic("T02"), P.encode({"table": "T02", "boot": 1, "lines": lines.lines}))
            wait_for(lambda: [a for a in store.alerts() if a["table"] == "T02"], "T02's record refused", 30)
        finally:
            hostile.close()
        (alert,) = [a for a in store.alerts() if a["table"] == "T02"]
        assert alert["kind"] == "protocol" and "commissioning record refused (seq 1): 'ok' must be true or false" \
            in alert["text"]
        assert store.commissionings("T02") == [] and len(store.commissionings("T01")) == 1
        assert not [a for a in store.alerts() if a["table"] == "T01"]
        # The tables page, served by the web view from the same store.
        cookie = sign_in(web, "vera")[0]
        status, _h, body = call(web, "GET", "/tables", cookie=cookie)
        assert status == 200, body
        t01 = body[body.index('id="tables-T01"'):body.index('id="tables-T02"')]
        assert "its last commissioning failed: Shoe reader" in t01
        assert 'class="commission failed"' in t01 and "<strong>failed</strong>" in t01 and "by jana" in t01
        assert web_local(ended) in t01 and 'href="/tables/T01/commissioning"' in t01
        t02 = body[body.index('id="tables-T02"'):]
        assert "never commissioned" in t02
        status, _h, page = call(web, "GET", "/tables/T01/commissioning", cookie=cookie)
        assert status == 200 and "Failed: Shoe reader" in page and "replace those two cards" in page
        assert call(web, "GET", "/tables/T01/commissioning")[0] in (302, 303, 401)   # signed in only


def web_local(at: float) -> str:
    """*at* as the web view (the machine's zone: the test's config names none) writes it in full."""
    return FloorClock().full(at)
