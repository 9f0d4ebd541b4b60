"""Serial reader benchmark: how fast the drivers digest their wire formats.

Every figure is the median of several runs on this machine.

``serial_frames_per_s``
    Pepper C1 answer frames (``GET_UID`` answers carrying 7-byte UIDs) cut out of a
    byte stream by :class:`dealerbox.hw.serial.pepper.PepperFrameParser`, fed in
    64-byte chunks as a UART driver hands them over. Goal: far above the wire,
    which at 115200 baud carries about 640 such 18-byte frames a second; a figure
    below that would make the parser, not the UART, the bottleneck. Baseline on
    the development VM: about 345,000 per second.
``serial_lines_per_s``
    ``DBX1`` tag lines checked by :class:`dealerbox.hw.serial.shoe_line.LineParser`
    the same way (the wire carries about 420 such 27-byte lines a second). Same
    goal. Baseline on the development VM: about 385,000 per second.
``serial_garbage_bytes_per_s``
    Random bytes skipped by the Pepper parser (a garbage storm): how long the
    driver is busy when a cable picks up noise. Goal: well above 11,520 bytes/s
    (115200 baud). Baseline on the development VM: about 70 million per second.
``pepper_polls_per_s``
    Whole ``PepperC1Reader.poll()`` cycles over a pseudo-terminal against
    :class:`hardware_sim.serial_sim.PepperC1Emulator` (3 antennas, 5 tags in all:
    11 commands a cycle). This measures the host and its scheduler, not a real
    UART: on the wire at 115200 baud the 11 exchanges move about 220 bytes, some
    20 ms plus the reader's own RF time (under 50 polls/s). Baseline on the
    development VM: about 470 polls per second.
"""

from __future__ import annotations

import random
import statistics
import time

from dealerbox.hw.serial.pepper import PepperC1Reader, PepperFrameParser, encode_pepper_frame
from dealerbox.hw.serial.shoe_line import LineParser, encode_line
from dealerbox.domain.decks import simulated_uid
from hardware_sim.serial_sim import PepperC1Emulator

RUNS = 5
FRAMES = 5000
GARBAGE = 200_000
POLLS = 100


def _chunks(data: bytes, size: int = 64):
    return [data[i:i + size] for i in range(0, len(data), size)]


def _frames_per_s() -> float:
    uid = bytes.fromhex(simulated_uid("A", "Ah"))
    return _parse_rate(PepperFrameParser(), encode_pepper_frame(b"\x00\x03\x01\x00" + uid))


def _lines_per_s() -> float:
    return _parse_rate(LineParser(), encode_line(f"T 1 17 {simulated_uid('A', 'Ah')}"))


def _parse_rate(parser, frame: bytes) -> float:
    """Frames per second *parser* decodes from a stream of FRAMES copies of *frame*."""
    stream = frame * FRAMES
    start = time.perf_counter()
    for chunk in _chunks(stream):
        parser.feed(chunk)
    elapsed = time.perf_counter() - start
    assert parser.counters.frames == FRAMES
    return FRAMES / elapsed


def _garbage_bytes_per_s() -> float:
    noise = random.Random(7).randbytes(GARBAGE)
    parser = PepperFrameParser()
    start = time.perf_counter()
    for chunk in _chunks(noise):
        parser.feed(chunk)
    return GARBAGE / (time.perf_counter() - start)


def _polls_per_s() -> float:
    with PepperC1Emulator(seed=11) as emu:
        for antenna, card in ((1, "Ah"), (2, "Kd"), (2, "7c"), (2, "Ts"), (3, "2h")):
            emu.place_tag(antenna, simulated_uid("A", card))
        with PepperC1Reader(emu.port, {1: "shoe", 2: "board", 3: "burn"}, name="bench") as reader:
            reader.poll()
            start = time.perf_counter()
            for _ in range(POLLS):
                reader.poll()
            elapsed = time.perf_counter() - start
            assert reader.counters.faults == 0
    return POLLS / elapsed


def run() -> dict:
    def median(fn) -> float:
        return statistics.median(fn() for _ in range(RUNS))

    return {
        "serial_frames_per_s": round(median(_frames_per_s)),
        "serial_lines_per_s": round(median(_lines_per_s)),
        "serial_garbage_bytes_per_s": round(median(_garbage_bytes_per_s)),
        "pepper_polls_per_s": round(median(_polls_per_s), 1),
    }


if __name__ == "__main__":
    print(run())
