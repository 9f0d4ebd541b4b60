"""Serial readers end to end: the real drivers on a pseudo-terminal against the emulators.

Every wait is bounded by a deadline; nothing asserts how long anything took. Backoff,
stall detection and log rate limiting run on a hand-moved clock. Faults follow the one
contract of dealerbox.hw.reader: the driver raises, a ReaderSupervisor reopens.
"""

from __future__ import annotations

import logging
import re
import threading
import time

import pytest

from dealerbox.errors import ReaderError
from dealerbox.hw.reader import ReaderSupervisor
from dealerbox.domain.events import Event
from dealerbox.hw.serial.base import ReaderSetupError
from dealerbox.hw.serial.pepper import PepperC1Reader, PepperFrameParser, crc16_ccitt, encode_pepper_frame
from dealerbox.hw.serial import shoe_line
from dealerbox.hw.serial.shoe_line import LineParser, ShoeLineReader, crc8, encode_line
from dealerbox.domain.decks import simulated_uid
from hardware_sim.serial_sim import PepperC1Emulator, ShoeLineEmulator

AH = simulated_uid("A", "Ah")          # 7-byte NTAG-like UIDs
KS = simulated_uid("A", "Ks")
TD = simulated_uid("A", "Td")
TWO_C = simulated_uid("A", "2c")
CLASSIC = "DEADBEEF"                    # 4 bytes
TRIPLE = "0411223344556677889A"         # 10 bytes
LOGGER = "dealerbox.hw.serial"


class HandClock:
    """A monotonic clock that moves only when the test says so."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def wait_until(predicate, timeout: float = 10.0, what: str = "condition"):
    """Call *predicate* until it returns something truthy; fail after *timeout* seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.002)


def poll_while_waiting(reader, predicate, what: str, timeout: float = 10.0):
    """Keep polling *reader* until *predicate()* holds (e.g. a counter reached a value)."""
    def step():
        reader.poll()
        return predicate()

    wait_until(step, timeout, what)


def poll_until(reader, expected: dict, timeout: float = 10.0):
    """Poll until the reader reports exactly *expected* (as sets); return the last poll."""
    want = {zone: frozenset(uids) for zone, uids in expected.items()}
    last = {}

    def check():
        nonlocal last
        last = reader.poll()
        return last == want

    try:
        wait_until(check, timeout, f"poll() == {want}")
    except AssertionError:
        raise AssertionError(f"reader reported {last}, wanted {want}") from None
    return last


def drain(reader):
    """Poll (on a still clock) until no more lines arrive, so nothing in flight counts later."""
    seen = [-1]

    def quiet():
        reader.poll()
        before, seen[0] = seen[0], reader.counters.frames
        return before == seen[0]

    wait_until(quiet, what="the line to go quiet")


class Watched:
    """A reader's supervisor polled the way the daemon polls it; its reports kept as CONTRACT.md events."""

    def __init__(self, supervisor: ReaderSupervisor):
        self.supervisor = supervisor
        self._reports: list[str] = []

    def poll(self) -> dict:
        zones, reports = self.supervisor.poll()
        self._reports += reports
        return zones if zones is not None else {}

    def take_events(self, t: float) -> list[Event]:
        kinds, self._reports = self._reports, []
        return [Event(t=float(t), ev=kind, reader=self.supervisor.name) for kind in kinds]

    @property
    def status(self) -> str:
        return self.supervisor.status

    @property
    def fault_reason(self):
        return self.supervisor.fault_reason

    @property
    def reader(self):
        return self.supervisor.reader

    @property
    def counters(self):
        return self.supervisor.reader.counters

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.supervisor.close()


@pytest.fixture
def pepper():
    with PepperC1Emulator(seed=3) as emu:
        yield emu


@pytest.fixture
def shoe():
    with ShoeLineEmulator(seed=5, antennas=3, scan_interval=0.005, heartbeat_interval=0.05) as emu:
        yield emu


@pytest.fixture
def clock():
    return HandClock()


# -- checksums and framing, no port ----------------------------------------------------


def test_checksums_match_their_published_check_values():
    assert crc16_ccitt(b"123456789") == 0x29B1   # CRC-16/CCITT-FALSE
    assert crc8(b"123456789") == 0xF4            # CRC-8 polynomial 0x07


def test_pepper_frame_layout_follows_the_vendor_description():
    frame = encode_pepper_frame(b"\x02")         # GET_TAG_COUNT
    assert frame[:5] == bytes((0xF5, 0x03, 0x00, 0xFC, 0xFF))
    assert frame[5] == 0x02
    assert int.from_bytes(frame[6:], "little") == crc16_ccitt(b"\x02")


def test_pepper_parser_reassembles_frames_fed_byte_by_byte():
    parser = PepperFrameParser()
    frames = [encode_pepper_frame(bytes((0x00, 0x03, 0x01, 0x00)) + bytes.fromhex(AH)),
              encode_pepper_frame(b"\x00\x02\x05")]
    got = []
    for byte in b"".join(frames):
        got += parser.feed(bytes((byte,)))
    assert got == [f[5:-2] for f in frames]
    assert parser.counters.frames == 2 and parser.counters.garbage_bytes == 0


def test_pepper_parser_counts_garbage_bad_crc_and_cut_frames():
    parser = PepperFrameParser()
    good = encode_pepper_frame(b"\x00\x02\x01")
    bad = bytearray(good)
    bad[-1] ^= 0xFF
    stream = b"\x13\x37\x00" + bytes(bad) + good[:7] + good + b"\xf5\x01"
    assert parser.feed(stream) == [b"\x00\x02\x01"]
    c = parser.counters
    assert (c.crc_errors, c.partial_frames) == (1, 1)
    assert c.garbage_bytes >= 3
    assert parser.pending
    assert parser.abandon_partial() == []


def test_pepper_parser_survives_a_false_header_with_a_huge_length():
    parser = PepperFrameParser(max_payload=64)
    false_header = bytes((0xF5, 0x00, 0x01, 0xFF, 0xFE))  # claims 256 bytes
    good = encode_pepper_frame(b"\x00\x01")
    assert parser.feed(false_header + good) == [b"\x00\x01"]
    assert parser.counters.overlong == 1


def test_line_parser_accepts_valid_lines_and_counts_each_kind_of_junk():
    parser = LineParser(max_line=40)
    good = encode_line(f"T 1 {AH}")
    assert good == f"$T 1 {AH} *{crc8(f'T 1 {AH}'.encode()):02X}\n".encode()
    bad_crc = good[:-3] + b"%02X\n" % (crc8(f"T 1 {AH}".encode()) ^ 0xFF)
    stream = (b"noise\n" + good[:8] + good + bad_crc + b"$B 12\n" + b"x" * 100 + b"\n"
              + good.replace(b"\n", b"\r\n"))
    assert parser.feed(stream) == [f"T 1 {AH}", f"T 1 {AH}"]
    c = parser.counters
    assert (c.partial_frames, c.crc_errors, c.garbage_lines, c.overlong, c.frames) == (1, 1, 2, 1, 2)


def test_the_example_lines_in_the_protocol_description_are_valid():
    examples = re.findall(r"\$[^$`\n]*\*[0-9A-F]{2}", shoe_line.__doc__)
    assert len(examples) >= 7
    parser = LineParser()
    bodies = parser.feed(b"".join(e.encode() + b"\n" for e in examples))
    assert len(bodies) == len(examples) and parser.counters.crc_errors == 0


# -- Pepper C1 end to end -----------------------------------------------------------------


def test_pepper_reports_tags_per_zone_on_several_antennas(pepper):
    pepper.place_tag(1, AH)
    pepper.place_tag(2, CLASSIC)
    pepper.place_tag(2, TRIPLE)
    pepper.place_tag(4, KS)          # antennas 3 and 4 both watch the burn box
    zones = {1: "shoe", 2: "board", 3: "burn", 4: "burn"}
    with PepperC1Reader(pepper.port, zones, name="c1") as reader:
        assert reader.zones == ("shoe", "board", "burn")
        assert reader.status == "ok"
        assert reader.firmware_version == pepper.firmware
        assert poll_until(reader, {"shoe": {AH}, "board": {CLASSIC, TRIPLE}, "burn": {KS}})
        pepper.remove_tag(2, CLASSIC)
        pepper.place_tag(1, TD)
        poll_until(reader, {"shoe": {AH, TD}, "board": {TRIPLE}, "burn": {KS}})
        assert reader.status == "ok" and reader.counters.faults == 0
    selected = {args[0] for cmd, args in pepper.received if cmd == 0x0F}
    assert selected == {1, 2, 3, 4}
    assert pepper.polling is False  # the driver turned the reader's own polling off


def test_pepper_skips_10000_bad_crc_frames_and_logs_them_sparingly(pepper, clock, caplog):
    pepper.place_tag(1, AH)
    pepper.place_tag(2, TD)
    zones = {1: "shoe", 2: "board"}
    with PepperC1Reader(pepper.port, zones, name="c1", clock=clock, response_timeout=5.0) as reader:
        poll_until(reader, {"shoe": {AH}, "board": {TD}})
        caplog.set_level(logging.WARNING, logger=LOGGER)
        pepper.inject_bad_crc(10_000)
        poll_while_waiting(reader, lambda: reader.counters.crc_errors >= 10_000, "10,000 bad frames to be read")
        assert reader.counters.crc_errors == 10_000
        assert reader.status == "ok"
        poll_until(reader, {"shoe": {AH}, "board": {TD}})
        crc_logs = [r for r in caplog.records if "bad CRC" in r.getMessage()]
        assert len(crc_logs) == 1          # the clock did not move: one message, the rest held back
        clock.advance(60)
        pepper.inject_bad_crc(3)
        poll_while_waiting(reader, lambda: reader.counters.crc_errors >= 10_003, "3 more bad frames")
        later = [r for r in caplog.records if "bad CRC" in r.getMessage()]
        assert len(later) == 2 and "held back" in later[-1].getMessage()
        assert reader.counters.faults == 0


def test_pepper_ignores_random_garbage_and_split_writes(pepper):
    pepper.place_tag(1, AH)
    pepper.place_tag(3, TWO_C)
    pepper.garbage_rate = 1.0
    pepper.split_writes = True
    with PepperC1Reader(pepper.port, {1: "shoe", 3: "burn"}, name="c1", response_timeout=2.0, retries=3) as reader:
        for _ in range(20):
            result = reader.poll()
            assert result == {"shoe": {AH}, "burn": {TWO_C}}
        pepper.inject_garbage(20_000)
        poll_until(reader, {"shoe": {AH}, "burn": {TWO_C}})
        assert reader.counters.garbage_bytes > 20_000
        assert reader.status == "ok"


def test_pepper_drops_a_partial_frame_and_keeps_going(pepper):
    pepper.place_tag(1, AH)
    with PepperC1Reader(pepper.port, {1: "shoe"}, name="c1", response_timeout=2.0) as reader:
        poll_until(reader, {"shoe": {AH}})
        pepper.inject_partial()
        assert reader.poll() == {"shoe": {AH}}
        assert reader.counters.partial_frames == 1
        assert reader.status == "ok"


def test_pepper_resends_a_command_whose_answer_was_damaged(pepper):
    pepper.place_tag(1, AH)
    with PepperC1Reader(pepper.port, {1: "shoe"}, name="c1", response_timeout=0.2, retries=1) as reader:
        poll_until(reader, {"shoe": {AH}})
        pepper.corrupt_next(1)
        assert reader.poll() == {"shoe": {AH}}
        assert (reader.counters.crc_errors, reader.counters.timeouts) == (1, 1)
        assert reader.status == "ok" and reader.counters.faults == 0


def test_pepper_never_takes_a_late_answer_for_the_next_one(pepper):
    pepper.place_tag(1, AH)
    pepper.place_tag(1, KS)
    with PepperC1Reader(pepper.port, {1: "shoe"}, name="c1", response_timeout=0.2, retries=3) as reader:
        poll_until(reader, {"shoe": {AH, KS}})
        pepper.delay_answer(0.3, nth=3)               # select, count, then GET_UID 0 comes late
        assert reader.poll() == {"shoe": {AH, KS}}    # not {AH}: the late answer is not taken for GET_UID 1
        assert reader.counters.timeouts >= 1
        assert reader.counters.unexpected_frames >= 1
        assert reader.status == "ok"


def test_pepper_passes_an_odd_uid_on_and_counts_it(pepper, clock):
    pepper.place_tag(1, "0102")                      # not an ISO 14443 length
    pepper.place_tag(1, AH)
    with PepperC1Reader(pepper.port, {1: "shoe"}, name="c1", clock=clock) as reader:
        assert reader.poll() == {"shoe": {"0102", AH}}
        assert reader.counters.odd_uids == 1


def test_pepper_counts_a_refused_antenna_without_a_fault(clock):
    with PepperC1Emulator(seed=1, antennas=2) as emu:   # a multiplexer with 2 ports only
        emu.place_tag(1, AH)
        with PepperC1Reader(emu.port, {1: "shoe", 5: "burn"}, name="c1", clock=clock) as reader:
            assert reader.poll() == {"shoe": {AH}}
            assert reader.counters.command_errors == 1
            assert reader.status == "ok"


def test_pepper_unplugged_mid_hand_faults_backs_off_and_recovers(pepper, clock):
    pepper.place_tag(2, AH)
    calls = []
    opens = []

    def open_reader():
        opens.append(clock())
        return PepperC1Reader(pepper.port, {2: "board"}, name="table-c1", clock=clock, response_timeout=0.3)

    supervisor = ReaderSupervisor("table-c1", open_reader, clock=clock, backoff_initial=0.125, backoff_factor=2.0,
                                  backoff_max=0.5, on_status=lambda *a: calls.append(a))
    with Watched(supervisor) as reader:
        poll_until(reader, {"board": {AH}})
        pepper.unplug()
        assert reader.poll() == {}
        assert reader.status == "fault" and reader.reader is None   # the driver raised; its port is closed
        events = reader.take_events(t=12.5)
        assert [e.to_dict() for e in events] == [{"t": 12.5, "ev": "reader_fault", "reader": "table-c1"}]
        assert Event.from_dict(events[0].to_dict()) == events[0]   # a valid CONTRACT.md event

        attempts = len(opens)
        # Retries wait 0.125, 0.25, 0.5, then 0.5 s (the cap)... on the supervisor's clock.
        # (Steps are powers of two so that the float sums are exact.)
        for step, tries in ((0.0625, 0), (0.0625, 1), (0.1875, 1), (0.0625, 2), (0.4375, 2), (0.0625, 3),
                            (0.4375, 3), (0.0625, 4), (0.4375, 4), (0.0625, 5)):
            clock.advance(step)
            assert reader.poll() == {}
            assert len(opens) - attempts == tries
        assert reader.take_events(t=13.0) == []          # still one fault, reported once

        pepper.plug()
        clock.advance(0.5)
        assert reader.poll() == {"board": {AH}}
        assert reader.status == "ok"
        assert [e.ev for e in reader.take_events(t=14.0)] == ["reader_ok"]
        assert (supervisor.faults, supervisor.recoveries) == (1, 1)
    assert [(name, ok) for name, ok, _ in calls] == [("table-c1", False), ("table-c1", True)]
    assert calls[0][2]  # a reason for the fault


def test_pepper_stall_is_a_fault_until_it_answers_again(pepper, clock):
    pepper.place_tag(1, AH)

    def open_reader():
        return PepperC1Reader(pepper.port, {1: "shoe"}, name="c1", clock=clock, response_timeout=0.1, retries=1)

    with Watched(ReaderSupervisor("c1", open_reader, clock=clock, backoff_initial=0.125, backoff_max=0.25)) as reader:
        poll_until(reader, {"shoe": {AH}})
        first = reader.reader
        # A loaded machine can let one real 0.1 s wait run out before the stall (the
        # emulator is a process on a pty): count what the stall causes, not since open.
        timeouts, faults = first.counters.timeouts, first.counters.faults
        pepper.stall()
        assert reader.poll() == {}
        assert reader.status == "fault" and "no answer" in reader.fault_reason
        assert first.counters.timeouts - timeouts == 2 and first.counters.faults - faults == 1
        assert first.closed   # closed by its supervisor
        clock.advance(0.125)
        assert reader.poll() == {}                       # reopened, but the handshake got no answer
        assert reader.status == "fault"
        pepper.resume()
        clock.advance(0.25)
        poll_until(reader, {"shoe": {AH}})
        assert [e.ev for e in reader.take_events(t=0.0)] == ["reader_fault", "reader_ok"]


def test_a_reader_missing_at_start_raises_and_is_reported_as_a_fault(tmp_path, clock):
    url = str(tmp_path / "ttyNOPE")
    with pytest.raises(ReaderError, match="cannot open"):
        PepperC1Reader(url, {1: "shoe"}, name="c1", clock=clock)
    with Watched(ReaderSupervisor("c1", lambda: PepperC1Reader(url, {1: "shoe"}, name="c1", clock=clock),
                                  clock=clock)) as reader:
        assert reader.poll() == {}
        assert reader.status == "fault"
        assert [e.ev for e in reader.take_events(t=0.0)] == ["reader_fault"]


def test_close_is_idempotent_and_stops_the_emulator_thread(pepper):
    reader = PepperC1Reader(pepper.port, {1: "shoe"}, name="c1")
    reader.close()
    reader.close()
    assert reader.status == "closed" and not reader.connected
    with pytest.raises(ReaderError):
        reader.poll()
    threads = [t for t in threading.enumerate() if t.name.endswith("-emulator")]
    assert threads
    pepper.close()
    pepper.close()
    assert not any(t.is_alive() for t in threads)


@pytest.mark.parametrize("zones", [{}, {0: "shoe"}, {9: "shoe"}, {1: ""}, {"1": "shoe"}, [1, 2]])
def test_impossible_zone_maps_are_setup_errors(zones, tmp_path):
    with pytest.raises(ReaderSetupError):
        PepperC1Reader(str(tmp_path / "tty"), zones, connect=False)


def test_an_unknown_url_scheme_is_a_setup_error():
    with pytest.raises(ReaderSetupError):
        ShoeLineReader("nosuchscheme://x", {1: "shoe"}, connect=False)


# -- DBX1 shoe end to end -----------------------------------------------------------------


def test_shoe_reports_tags_per_zone(shoe, clock):
    shoe.place_tag(1, AH)
    shoe.place_tag(2, CLASSIC)
    shoe.place_tag(2, TRIPLE)
    with ShoeLineReader(shoe.port, {1: "shoe", 2: "burn", 3: "burn"}, name="shoe", clock=clock) as reader:
        poll_until(reader, {"shoe": {AH}, "burn": {CLASSIC, TRIPLE}})
        assert reader.status == "ok"
        assert reader.hello == ("DBX1", shoe.firmware, 3)
        shoe.remove_tag(1, AH)
        shoe.place_tag(3, KS)
        poll_until(reader, {"shoe": set(), "burn": {CLASSIC, TRIPLE, KS}})
    assert "?" in shoe.received


def test_shoe_skips_10000_bad_crc_lines(shoe, clock, caplog):
    shoe.place_tag(1, AH)
    with ShoeLineReader(shoe.port, {1: "shoe"}, name="shoe", clock=clock) as reader:
        poll_until(reader, {"shoe": {AH}})
        caplog.set_level(logging.WARNING, logger=LOGGER)
        shoe.inject_bad_crc(10_000)
        poll_while_waiting(reader, lambda: reader.counters.crc_errors >= 10_000, "10,000 bad lines to be read")
        assert reader.counters.crc_errors == 10_000
        poll_until(reader, {"shoe": {AH}})
        assert reader.status == "ok"
        assert len([r for r in caplog.records if "bad CRC" in r.getMessage()]) == 1


def test_shoe_survives_random_garbage(shoe, clock):
    shoe.place_tag(1, AH)
    shoe.place_tag(1, TD)
    shoe.garbage_rate = 0.2
    shoe.split_writes = True
    with ShoeLineReader(shoe.port, {1: "shoe"}, name="shoe", clock=clock) as reader:
        poll_until(reader, {"shoe": {AH, TD}})
        shoe.inject_garbage(50_000)
        seen = []
        wait_until(lambda: seen.append(reader.poll()) or len(seen) > 200, what="200 polls")
        assert all(r.get("shoe", {AH, TD}) == {AH, TD} for r in seen)   # never a wrong set
        c = reader.counters
        assert c.garbage_lines + c.crc_errors + c.partial_frames + c.overlong > 0
        assert reader.status == "ok"


def test_shoe_never_reports_a_scan_with_lost_lines(shoe, clock):
    shoe.place_tag(1, AH)
    shoe.place_tag(1, KS)
    with ShoeLineReader(shoe.port, {1: "shoe"}, name="shoe", clock=clock) as reader:
        # Scans sent before the tags were placed may still wait in the pty: start
        # judging once both tags are seen, then damage the lines.
        poll_until(reader, {"shoe": {AH, KS}})
        shoe.bad_crc_rate = 0.3
        results = []
        wait_until(lambda: results.append(reader.poll()) or reader.counters.incomplete_scans >= 20,
                   what="20 incomplete scans")
        assert {frozenset(r["shoe"]) for r in results if "shoe" in r} == {frozenset({AH, KS})}
        assert reader.counters.crc_errors > 0


def test_shoe_counts_a_line_cut_short(shoe, clock):
    shoe.place_tag(1, AH)
    with ShoeLineReader(shoe.port, {1: "shoe"}, name="shoe", clock=clock) as reader:
        poll_until(reader, {"shoe": {AH}})
        shoe.inject_partial()
        poll_while_waiting(reader, lambda: reader.counters.partial_frames, "a partial line")
        assert reader.counters.partial_frames == 1
        poll_until(reader, {"shoe": {AH}})


def test_shoe_error_reports_odd_uids_and_long_lines_are_counted(shoe, clock):
    with ShoeLineReader(shoe.port, {1: "shoe"}, name="shoe", clock=clock) as reader:
        poll_until(reader, {"shoe": set()})
        shoe.inject_line("X 7 antenna 1 open")
        shoe.inject_line("T 1 9 0411")           # a 2-byte UID: not a tag
        shoe.inject_raw(b"$" + b"B" * 300 + b"\n")
        c = reader.counters
        poll_while_waiting(reader, lambda: c.device_errors and c.odd_uids and c.overlong, "the three bad lines")
        assert (c.device_errors, c.odd_uids, c.overlong) == (1, 1, 1)
        poll_until(reader, {"shoe": set()})
        assert reader.status == "ok"


def test_shoe_stall_is_detected_on_the_reader_clock(shoe, clock):
    shoe.place_tag(1, AH)

    def open_reader():
        return ShoeLineReader(shoe.port, {1: "shoe"}, name="shoe", clock=clock, stall_timeout=2.0)

    supervisor = ReaderSupervisor("shoe", open_reader, clock=clock, backoff_initial=0.5, backoff_max=4.0)
    with Watched(supervisor) as reader:
        poll_until(reader, {"shoe": {AH}})
        shoe.stall()
        drain(reader)
        clock.advance(1.9)
        assert reader.poll() == {} and reader.status == "ok"   # quiet, but not yet for long enough
        clock.advance(0.2)
        assert reader.poll() == {}
        assert reader.status == "fault" and "no valid line" in reader.fault_reason
        clock.advance(0.5)
        assert reader.poll() == {}                        # reopened; still silent
        assert reader.reader.connected and reader.status == "fault"
        clock.advance(2.1)
        assert reader.poll() == {}                        # silent too long again: closed, longer wait
        assert reader.reader is None
        shoe.resume()
        clock.advance(1.0)
        poll_until(reader, {"shoe": {AH}})
        assert [e.ev for e in reader.take_events(t=3.0)] == ["reader_fault", "reader_ok"]
        assert supervisor.faults == 1


def test_shoe_unplugged_mid_hand_faults_and_recovers(shoe, clock):
    shoe.place_tag(1, AH)
    opens = []

    def open_reader():
        opens.append(clock())
        return ShoeLineReader(shoe.port, {1: "shoe"}, name="shoe-mcu", clock=clock)

    with Watched(ReaderSupervisor("shoe-mcu", open_reader, clock=clock, backoff_initial=0.25,
                                  backoff_max=1.0)) as reader:
        poll_until(reader, {"shoe": {AH}})
        shoe.unplug()
        wait_until(lambda: reader.poll() == {} and reader.status == "fault", what="the fault")
        assert [e.to_dict() for e in reader.take_events(t=7.0)] == [
            {"t": 7.0, "ev": "reader_fault", "reader": "shoe-mcu"}]
        clock.advance(0.25)
        assert reader.poll() == {} and len(opens) == 2
        shoe.plug()
        shoe.place_tag(1, KS)                             # a card drawn while it was away
        clock.advance(0.5)
        poll_until(reader, {"shoe": {AH, KS}})
        assert [e.ev for e in reader.take_events(t=8.0)] == ["reader_ok"]


def test_shoe_speaking_another_protocol_is_a_fault(clock):
    with ShoeLineEmulator(seed=2, protocol="DBX9", scan_interval=0.005) as emu:
        def open_reader():
            return ShoeLineReader(emu.port, {1: "shoe"}, name="shoe", clock=clock)

        with Watched(ReaderSupervisor("shoe", open_reader, clock=clock)) as reader:
            wait_until(lambda: reader.poll() == {} and reader.status == "fault", what="the fault")
            assert "DBX9" in reader.fault_reason
