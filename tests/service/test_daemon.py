"""The daemon on the simulated table: real drivers, chip emulators, the full path.

Every test runs the box as ``dealerbox run`` does, in this process, on a fresh
state directory; cards move through the emulated RF fields and buttons through
gpiozero's mock pins. Waits are bounded; nothing here asserts on durations.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from pathlib import Path

import pytest

from dealerbox.service.config import DEFAULT_CONFIG, load_config
from dealerbox.service.daemon import Daemon
from dealerbox.domain.events import Event
from dealerbox.service.journal import read_entries, verify
from dealerbox.domain.messages import load_messages
from dealerbox.service.panel import render
from dealerbox.service.sdnotify import Notifier
from hardware_sim.script import HandScript
from hardware_sim.table import SimulatedTable

PACE = 0.03


def table_config(tmp_path: Path, *, readers: str | None = None, extra: str = "") -> Path:
    """The shipped all-simulated table with its state under *tmp_path*."""
    text = DEFAULT_CONFIG.read_text()
    text = re.sub(r'state_dir = "[^"]*"', f'state_dir = "{tmp_path / "state"}"', text)
    if readers is not None:
        start = text.index("[readers.shoe]")
        end = text.index("[presence]")
        text = text[:start] + readers + "\n" + text[end:]
    path = tmp_path / "table.toml"
    path.write_text(text + extra)
    return path


PEPPER_READERS = """
[readers.pepper]
kind = "pepper_c1"
backend = "sim"
antennas = { "1" = "shoe", "2" = "board" }
poll_s = 0.01
"""


def wait_for(predicate, timeout: float = 10.0, what: str = "condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


class Box:
    """A started daemon on its simulated table, closed at the end of the test."""

    def __init__(self, config_path: Path, **kw):
        self.config = load_config(config_path)
        # 150 ms in the shoe's field: a slow slide, and room for a loaded CI machine.
        self.table = SimulatedTable(self.config, dwell_s=0.15).__enter__()
        self.decisions: list[dict] = []
        self.daemon = Daemon(self.config, table=self.table, on_decision=self.decisions.append, **kw)
        self.daemon.start()

    def play(self, script: HandScript, pace: float = PACE) -> None:
        self.table.play(script.events, pace_s=pace)

    def settle(self) -> None:
        """Wait until the engine has taken every event the devices produced so far."""
        time.sleep(0.3)   # presence tracking needs a few polls to see the last change
        wait_for(lambda: self.daemon.queue.empty(), what="the queue to drain")
        time.sleep(0.05)

    def journal_events(self):
        return [e.event for e in read_entries(self.config.state_dir / "journal")]

    def close(self) -> None:
        self.daemon.close()
        self.table.close()


@pytest.fixture
def box(tmp_path):
    b = Box(table_config(tmp_path))
    yield b
    b.close()


def glass_matches_panel(box: Box) -> bool:
    return box.daemon.view is not None and box.table.glass() == list(box.daemon.view.lines)


def test_an_exposed_card_reaches_the_glass_and_the_leds(box):
    s = HandScript(seed=5)
    s.new_hand(4).deal(5).button("exposed")
    box.play(s)
    d = wait_for(lambda: box.daemon.engine.decision.irregularity == "EXPOSED_DEAL" and box.daemon.engine.decision,
                 what="EXPOSED_DEAL")
    assert d.verdict == "correct"
    wait_for(lambda: glass_matches_panel(box), what="the glass to show the panel model")
    expected = render(d, load_messages("en"), phase=box.daemon.engine.phase).lines
    assert box.table.glass()[0] == expected[0]
    assert box.table.glass()[0].startswith("EXPOSED CARD")
    assert box.table.leds() == {"green": False, "amber": True, "red": False}
    assert box.decisions[-1]["irregularity"] == "EXPOSED_DEAL"


def test_clean_hands_on_noisy_antennas_raise_nothing(box):
    # Cards lying on the board drop out of a third of the polls. (The shoe's noise, a
    # card read several times as it slides out, is tested in tests/hw/test_presence.py; a draw
    # the shoe antenna never reads at all is a missed card, and the box says so.)
    box.table.chips["board"].dropout = 0.3
    s = HandScript(seed=8)
    s.full_hand(3)
    s.full_hand(2, spread=True)
    box.play(s)
    box.settle()
    assert [d for d in box.decisions if d["irregularity"]] == []
    assert box.daemon.engine.phase == "over"
    shoe = [e for e in box.journal_events() if e.ev == "shoe"]
    assert len(shoe) == len([e for e in s.events if e.get("ev") == "shoe"])


def test_every_event_the_engine_judged_is_journaled_in_order(box):
    s = HandScript(seed=2)
    s.new_hand(2).deal()
    box.play(s)
    box.settle()
    events = box.journal_events()
    assert events[0].ev == "new_hand" and events[0].players == 2
    assert [e.uid for e in events if e.ev == "shoe"] == [box.table.uid_of(e["card"]) for e in s.events
                                                         if e.get("ev") == "shoe"]
    assert box.daemon.stats.events == len(events)
    assert verify(box.config.state_dir / "journal").ok


@pytest.mark.parametrize("reader", ["shoe", "board"])
def test_a_reader_unplugged_mid_hand_comes_back_and_the_hand_goes_on(box, reader):
    s = HandScript(seed=4)
    s.new_hand(3).deal().round_done()
    box.play(s)
    box.settle()
    box.table.unplug(reader)
    wait_for(lambda: reader in box.daemon.engine.faulted_readers, what="reader_fault")
    wait_for(lambda: box.table.glass()[-1].startswith(f"READER DOWN: {reader}"), what="the fault on the glass")
    box.table.replug(reader)
    wait_for(lambda: not box.daemon.engine.faulted_readers, what="reader_ok")
    rest = HandScript(seed=4)
    rest.stub = list(s.stub)
    rest.t = s.t
    rest.flop().round_done().turn().round_done().river().round_done().hand_over()
    box.play(rest)
    box.settle()
    kinds = [e.ev for e in box.journal_events()]
    assert kinds.index("reader_fault") < kinds.index("reader_ok")
    assert box.daemon.engine.phase == "over"
    assert [d for d in box.decisions if d["irregularity"]] == []
    assert box.daemon.stats.per_reader[reader]["faults"] == 1
    assert not box.table.glass()[-1].startswith("READER DOWN")


def test_a_bounce_storm_is_one_press(tmp_path):
    # A longer quiet time than the shipped 30 ms: this test's thread can be
    # descheduled mid-storm on a loaded machine, which a real contact never is.
    # tests/hw/test_gpio_panel.py drives storms on a fake clock at the shipped value.
    path = table_config(tmp_path)
    path.write_text(path.read_text().replace("debounce_s = 0.03", "debounce_s = 0.1"))
    box = Box(path)
    try:
        _bounce_storm(box)
    finally:
        box.close()


def _bounce_storm(box):
    s = HandScript(seed=6)
    s.new_hand(2).deal()
    box.play(s)
    box.settle()
    pin = box.table.pin_factory.pin(box.config.panel.pins.buttons["round_done"])
    for _ in range(200):
        pin.drive_low()
        pin.drive_high()
    pin.drive_low()
    time.sleep(0.3)
    pin.drive_high()
    box.settle()
    presses = [e for e in box.journal_events() if e.ev == "button" and e.name == "round_done"]
    assert len(presses) == 1
    assert box.daemon.engine.phase == "flop"
    assert box.daemon.panel.bounces_rejected >= 100


def test_a_long_floor_press_is_a_misdeal(box):
    s = HandScript(seed=6)
    s.new_hand(5).deal(3)
    box.play(s)
    box.settle()
    box.table.press("floor", hold_s=box.config.panel.floor_hold_s + 0.3)
    wait_for(lambda: box.daemon.engine.decision.verdict == "misdeal", what="the misdeal")
    assert box.table.leds()["red"]


def test_a_slow_lcd_never_delays_detection(box):
    # The LCD hangs for good: the engine, the journal and the LEDs must not care.
    gate = threading.Event()
    original = box.daemon.lcd.show
    box.daemon.lcd.show = lambda view: (gate.wait(30), original(view))[1]
    try:
        s = HandScript(seed=3)
        s.new_hand(4).deal()
        s.draw()   # one card too many
        box.play(s)
        wait_for(lambda: box.daemon.engine.decision.irregularity == "EXTRA_CARD", what="EXTRA_CARD")
        wait_for(lambda: box.table.leds()["amber"], what="the amber LED")
        assert not box.table.glass()[0].startswith("EXTRA CARD")
    finally:
        gate.set()
    wait_for(lambda: box.table.glass()[0].startswith("EXTRA CARD"), what="the LCD to catch up")


def test_a_reader_thread_that_crashes_is_restarted(box):
    from dealerbox.hw.rc522 import RC522Reader

    original = RC522Reader.poll
    calls = {"n": 0}

    def flaky(self):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("a bug in a driver")
        return original(self)

    RC522Reader.poll = flaky
    try:
        wait_for(lambda: box.daemon.stats.reader_restarts == 1, what="the restart")
        polls = box.daemon.stats.per_reader["shoe"]["polls"]
        wait_for(lambda: box.daemon.stats.per_reader["shoe"]["polls"] > polls + 3, what="polling again")
        s = HandScript(seed=9)
        s.new_hand(2).deal(2)
        box.play(s)
        box.settle()
        assert len([e for e in box.journal_events() if e.ev == "shoe"]) == 2
    finally:
        RC522Reader.poll = original


def test_a_restart_recovers_the_open_hand_lcd_and_leds(tmp_path):
    path = table_config(tmp_path)
    first = Box(path)
    try:
        s = HandScript(seed=12)
        s.new_hand(6).deal(4).button("exposed")
        first.play(s)
        wait_for(lambda: first.daemon.engine.decision.irregularity == "EXPOSED_DEAL", what="EXPOSED_DEAL")
        first.settle()
        before = first.daemon.engine.decision
        where = dict(first.daemon.engine.where)
    finally:
        first.close()
    second = Box(path)
    try:
        after = second.daemon.engine.decision
        assert (after.verdict, after.irregularity, after.step, after.cards) == \
               (before.verdict, before.irregularity, before.step, before.cards)
        assert second.daemon.engine.where == where
        wait_for(lambda: second.table.glass()[-1].startswith("RECOVERED"), what="the recovery note")
        assert second.table.glass()[0].startswith("EXPOSED CARD")
        assert second.table.leds()["amber"]
        assert second.daemon.stats.recovered_events == len(read_entries_list(path, tmp_path))
    finally:
        second.close()


def read_entries_list(path, tmp_path):
    return list(read_entries(tmp_path / "state" / "journal"))


def test_garbage_from_a_serial_reader_is_counted_and_play_goes_on(tmp_path):
    box = Box(table_config(tmp_path, readers=PEPPER_READERS))
    try:
        emu = box.table.serial["pepper"]
        wait_for(lambda: box.daemon.readers.get("pepper") is not None
                 and box.daemon.readers["pepper"].status == "ok", what="the Pepper reader")
        emu.inject_bad_crc(10_000)
        wait_for(lambda: box.daemon.readers["pepper"].counters.crc_errors >= 10_000, timeout=60,
                 what="10,000 bad frames counted")
        s = HandScript(seed=21)
        s.new_hand(2).deal().round_done().flop()
        box.play(s, pace=0.05)
        box.settle()
        assert box.daemon.engine.phase == "flop"
        assert box.daemon.engine.streets["flop"].complete
        assert [d for d in box.decisions if d["irregularity"]] == []
        assert box.daemon.stats.reader_restarts == 0
    finally:
        box.close()


def test_watchdog_only_while_the_engine_loop_lives(tmp_path, monkeypatch):
    sock_path = str(tmp_path / "notify.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(sock_path)
    server.settimeout(5)
    notifier = Notifier({"NOTIFY_SOCKET": sock_path, "WATCHDOG_USEC": "200000", "WATCHDOG_PID": str(os.getpid())})
    box = Box(table_config(tmp_path), notifier=notifier)
    try:
        seen = []
        while not any("WATCHDOG=1" in m for m in seen):
            seen.append(server.recv(4096).decode())
        assert any("READY=1" in m for m in seen)
        hang = threading.Event()
        monkeypatch.setattr(box.daemon.engine, "feed", lambda event: hang.wait(30) or [])
        box.daemon.queue.put(Event(box.daemon.now(), "button", name="ack"))
        # Drain what was already in flight, then the hung loop must send nothing more.
        server.settimeout(0.5)
        with pytest.raises(TimeoutError):
            for _ in range(100):
                server.recv(4096)
        server.settimeout(1.0)
        late = []
        try:
            for _ in range(3):
                late.append(server.recv(4096).decode())
        except TimeoutError:
            pass
        assert not any("WATCHDOG=1" in m for m in late)
        hang.set()
    finally:
        box.close()
        server.close()


def test_watchdog_pings_go_on_once_an_input_has_run_dry(tmp_path):
    # With --input no ticks are sent (the input carries its own time); once it is
    # fed, nothing comes through the queue, and the healthy loop must still pet.
    sock_path = str(tmp_path / "notify.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(sock_path)
    server.settimeout(5)
    notifier = Notifier({"NOTIFY_SOCKET": sock_path, "WATCHDOG_USEC": "200000", "WATCHDOG_PID": str(os.getpid())})
    s = HandScript(seed=5)
    s.new_hand(4).deal(5).button("exposed")
    events = [Event.from_dict(e) for e in s.events]
    decisions: list[dict] = []
    config = load_config(table_config(tmp_path))
    with SimulatedTable(config) as table:
        daemon = Daemon(config, table=table, input_events=events, notifier=notifier, on_decision=decisions.append)
        daemon.start()
        try:
            wait_for(lambda: decisions and daemon.queue.empty(), what="the input fed")
            # Every ping from here on is one the loop sent with nothing to do: they must go on.
            pings = 0
            while pings < 5:
                try:
                    message = server.recv(4096).decode()
                except TimeoutError:
                    raise AssertionError(f"the watchdog went quiet after {pings} ping(s) once the input was fed")
                pings += "WATCHDOG=1" in message
            assert daemon.stats.events == len(events)
        finally:
            daemon.close()
            server.close()


def test_reload_applies_a_good_config_and_refuses_a_bad_one(tmp_path):
    path = table_config(tmp_path)
    box = Box(path)
    try:
        path.write_text(path.read_text().replace('language = "en"', 'language = "de"'))
        assert box.daemon.reload() is True
        assert box.daemon.messages.lang == "de"
        path.write_text(path.read_text().replace("[lcd]", "[lcd]\ncolumns = 20"))
        assert box.daemon.reload() is False
        assert box.daemon.stats.reloads_refused == 1
        s = HandScript(seed=1)
        s.new_hand(2).deal(4)
        box.play(s)
        box.settle()
        assert box.daemon.engine.phase == "preflop"
    finally:
        box.close()


def test_decisions_cut_off_by_a_stop_are_journaled_on_restart(tmp_path):
    from dealerbox.service.journal import Journal, read_decisions

    path = table_config(tmp_path)
    config = load_config(path)
    s = HandScript(seed=7)
    s.new_hand(4).deal(5).button("exposed")
    # As if the box was killed right after journaling the last event, before its decision.
    with Journal(config.state_dir / "journal", sync="none") as journal:
        for e in s.events:
            journal.append(Event.from_dict(e))
    box = Box(path)
    try:
        recorded = [d for _seq, _wall, d in read_decisions(config.state_dir / "journal")]
        assert [d["irregularity"] for d in recorded] == ["EXPOSED_DEAL"]
        assert recorded[0]["seq"] == len(s.events)
    finally:
        box.close()
    box = Box(path)      # a second start finds it there and writes nothing again
    try:
        assert len(list(read_decisions(config.state_dir / "journal"))) == 1
    finally:
        box.close()


def test_a_failing_decision_callback_keeps_the_decision_on_record(tmp_path, caplog):
    # The box prints a decision before it journals it (so one on record was given
    # out): a print that fails, stdout closed, must not keep it from the journal.
    from dealerbox.service.journal import read_decisions

    config = load_config(table_config(tmp_path))
    s = HandScript(seed=5)
    s.new_hand(4).deal(5).button("exposed")
    events = [Event.from_dict(e) for e in s.events]

    def closed_stdout(_decision):
        raise BrokenPipeError(32, "Broken pipe")

    with SimulatedTable(config) as table:
        daemon = Daemon(config, table=table, input_events=events, on_decision=closed_stdout)
        daemon.start()
        try:
            wait_for(lambda: daemon.engine.decision.irregularity == "EXPOSED_DEAL", what="EXPOSED_DEAL")
        finally:
            daemon.close()
    recorded = [d for _seq, _wall, d in read_decisions(config.state_dir / "journal")]
    assert [d["irregularity"] for d in recorded] == ["EXPOSED_DEAL"]
    assert any("could not give out decision" in r.getMessage() and "Broken pipe" in r.getMessage()
               for r in caplog.records)


def test_a_faulted_readers_backoff_runs_on_the_daemons_clock(tmp_path):
    # Event times and the reopening backoff share one clock: on a simulated table's
    # virtual clock, a reader plugged back in comes back when event time has passed the
    # backoff, not when the wall clock has (the noise bench moves event time in jumps).
    from hardware_sim.script import TableDealer, VirtualClock

    config = load_config(table_config(tmp_path))
    clock = VirtualClock()
    with SimulatedTable(config) as table:
        daemon = Daemon(config, table=table, input_events=[], clock=clock)
        dealer = TableDealer(table, daemon, clock)
        daemon.start()
        try:
            dealer.wait_ready()
            table.unplug("shoe")
            wait_for(lambda: "shoe" in daemon.engine.faulted_readers, what="reader_fault")
            table.replug("shoe")
            polls = daemon.stats.per_reader["board"]["polls"]
            wait_for(lambda: daemon.stats.per_reader["board"]["polls"] > polls + 50, what="board polls")
            assert "shoe" in daemon.engine.faulted_readers       # event time has not moved
            dealer.advance(0.5)
            wait_for(lambda: not daemon.engine.faulted_readers, what="reader_ok")
        finally:
            daemon.close()


# The daemon's parts on their own


def test_an_input_resumes_after_the_last_event_its_journal_holds(tmp_path):
    from dealerbox.service.journal import Journal
    from dealerbox.service.sources import InputFeed

    events = [Event(float(i), "button", name="ack", id=i + 1) for i in range(5)]
    with Journal(tmp_path / "journal", sync="none") as journal:
        for e in events[:3]:
            journal.append(e)
        fed = []
        InputFeed(iter(events), 0.0, journal).run(fed.append, threading.Event())
        assert fed == events[3:]
        # A second file numbers its lines from 1 again: the same ids, other events, all owed.
        other = [Event(10.0 + i, "tick", id=i + 1) for i in range(2)]
        fed = []
        InputFeed(other, 0.0, journal).run(fed.append, threading.Event())
        assert fed == other
        stop = threading.Event()
        stop.set()
        fed = []
        InputFeed(other, 0.0, journal).run(fed.append, stop)
        assert fed == []


def test_devices_marked_sim_are_refused_without_a_simulated_table(tmp_path):
    from dealerbox.errors import ConfigError
    from dealerbox.service.devices import TableDevices

    config = load_config(table_config(tmp_path))
    devices = TableDevices(table=None)
    with pytest.raises(ConfigError, match="simulated table"):
        devices.open(config, sink=lambda event: None, clock=time.monotonic)
    assert (devices.panel, devices.lcd, devices.mouth) == (None, None, None)
    devices.close()
    devices.close()


def test_the_floor_health_names_each_reader_before_and_after_its_first_poll(tmp_path):
    from dealerbox.rules.engine import HandEngine
    from dealerbox.service.health import BoxHealth
    from dealerbox.service.journal import Journal

    config = load_config(table_config(tmp_path))
    with Journal(tmp_path / "journal", sync="none") as journal:
        health = BoxHealth(HandEngine(config.profile, config.registry), journal, Notifier({}))
        # Before any try a reader has no error rate (tables page, issue 41): none, not 0 %.
        unpolled = {"last_seen_s": None, "faulted": False, "polls": 0, "faults": 0, "restarts": 0,
                    "error_rate": None}
        assert health.readers(["shoe", "board"]) == {"shoe": unpolled, "board": unpolled}
        health.stats.per_reader["shoe"] = {"last_ok": time.monotonic()}
        assert health.readers(["shoe"])["shoe"]["last_seen_s"] >= 0
        assert health.box() == {"storage_fault": None, "storage_faults": 0, "journal_queued": 0,
                                "journal_lost_events": 0}
        assert health.status().endswith("; 0 events")


def test_the_engine_loop_journals_what_it_judges_with_live_time_never_going_back(tmp_path):
    from dealerbox.rules.engine import HandEngine
    from dealerbox.service.devices import TableDevices
    from dealerbox.service.engine_loop import EngineLoop
    from dealerbox.service.health import BoxHealth
    from dealerbox.service.journal import Journal
    from dealerbox.service.output import DecisionOutput

    config = load_config(table_config(tmp_path))
    decisions = []
    journal = Journal(tmp_path / "journal", sync="none")
    try:
        journal.start_writer()
        engine = HandEngine(config.profile, config.registry)
        health = BoxHealth(engine, journal, Notifier({}))
        output = DecisionOutput(engine, journal, TableDevices(), health.stats, threading.Event(),
                                on_decision=decisions.append)
        output.configure(config, load_messages(config.language))
        loop = EngineLoop(engine, journal, output, health, live=True)
        loop.queue.put(Event(5.0, "new_hand", players=4))
        loop.queue.put(Event(3.0, "shoe", card="joker"))       # older than the last: moved up to it
        loop.queue.put(Event(6.0, "tick"))                      # no grace period running: not journaled
        loop.stop()
        loop.run()
    finally:
        journal.close()
    assert [(e.event.t, e.event.ev) for e in read_entries(tmp_path / "journal")] == [(5.0, "new_hand"),
                                                                                    (5.0, "shoe")]
    assert health.stats.events == 2 and health.stats.decisions == len(decisions) == 1
    assert (decisions[0]["irregularity"], decisions[0]["seq"]) == ("JOKER", 2) and output.view is not None and loop.last_t == 5.0
