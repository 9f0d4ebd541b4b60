"""Conformance of the MFRC522 emulator and its tags, each behaviour against the section it follows.

MFRC522 = NXP MFRC522 datasheet (rev. 3.9); ISO = ISO/IEC 14443-3; NTAG203 = NXP NTAG203
datasheet (rev. 3.0); NTAG21xF = NXP NTAG213F/216F datasheet (rev. 3.1). The tests talk
to the chip in raw SPI bytes, as a driver would, and never through dealerbox code.
"""

from __future__ import annotations

import pytest

from hardware_sim import rc522 as sim
from hardware_sim.rc522 import PI4, PI5, RC522Emulator

UID4 = "A1B2C3D4"
UID7 = "04A3C6CAE26180"
UID7_OTHER = "04A3C6115566AA"        # same cascade level 1 as UID7


# -- raw SPI helpers ------------------------------------------------------------------------------
def chip_with(*uids, **kwargs) -> RC522Emulator:
    kwargs.setdefault("power_up_us", 0)
    chip = RC522Emulator(**kwargs)
    chip.open(0, 0)
    chip.max_speed_hz = 4_000_000
    for uid in uids:
        chip.place(uid)
    return chip


def w(chip, reg, *values):
    chip.xfer2([(reg << 1) & 0x7E, *values])


def r(chip, *regs):
    return chip.xfer2([((x << 1) & 0x7E) | 0x80 for x in regs] + [0])[1:]


def setup_timer(chip, us=150):
    cycles = round(us * sim.FC_MHZ)
    w(chip, sim.T_MODE, 0x80)               # TAuto, prescaler 0
    w(chip, sim.T_RELOAD_H, cycles >> 8)
    w(chip, sim.T_RELOAD_L, cycles & 0xFF)
    w(chip, sim.TX_CONTROL, 0x83)
    w(chip, sim.COLL, 0x00)


def send(chip, data, last_bits=0, *, restart=True):
    """One Transceive frame; returns (ComIrq, ErrorReg, FIFO bytes, CollReg)."""
    if restart:
        w(chip, sim.COMMAND, sim.CMD_IDLE, sim.CMD_TRANSCEIVE)
        w(chip, sim.FIFO_LEVEL, 0x80)
    w(chip, sim.COM_IRQ, 0x7F)
    w(chip, sim.FIFO_DATA, *data)
    w(chip, sim.BIT_FRAMING, 0x80 | last_bits)
    for _ in range(200):
        irq = r(chip, sim.COM_IRQ)[0]
        if irq & (sim.IRQ_RX | sim.IRQ_TIMER):
            break
    else:
        raise AssertionError("no RxIRq or TimerIRq")
    error, level, coll = r(chip, sim.ERROR, sim.FIFO_LEVEL, sim.COLL)
    return irq, error, r(chip, *[sim.FIFO_DATA] * level) if level else [], coll


def select_frame(tag, level=1):
    frame = bytes([sim.SEL[level - 1], 0x70]) + tag.block(level)
    return frame + sim.crc_a(frame)


HLTA = bytes([sim.HLTA, 0]) + sim.crc_a([sim.HLTA, 0])


# -- MFRC522: SPI, registers, FIFO ------------------------------------------------------------------
def test_spi_read_returns_each_addressed_register_in_one_transfer():
    """MFRC522 8.1.2.1: each MOSI byte after the first addresses the register read on the next byte."""
    chip = chip_with()
    w(chip, sim.T_RELOAD_H, 0x12)
    w(chip, sim.T_RELOAD_L, 0x34)
    assert r(chip, sim.VERSION, sim.T_RELOAD_H, sim.T_RELOAD_L) == [0x92, 0x12, 0x34]
    assert chip.transfers == 3


def test_spi_write_puts_every_byte_into_the_one_register_addressed():
    """MFRC522 8.1.2.2: a write transfer is the address then data bytes, all for that register."""
    chip = chip_with()
    w(chip, sim.FIFO_DATA, 1, 2, 3, 4)
    assert r(chip, sim.FIFO_LEVEL) == [4]
    w(chip, sim.COMMAND, sim.CMD_IDLE, sim.CMD_TRANSCEIVE)     # Idle, then Transceive
    assert r(chip, sim.COMMAND)[0] & 0x0F == sim.CMD_TRANSCEIVE


def test_fifo_holds_64_bytes_and_overflow_sets_bufferovfl_until_flushed():
    """MFRC522 8.3.1 / 9.3.1.11 (FlushBuffer) / 9.3.1.7 (BufferOvfl, ErrIRq)."""
    chip = chip_with()
    w(chip, sim.FIFO_DATA, *range(70))
    level, error, irq = r(chip, sim.FIFO_LEVEL, sim.ERROR, sim.COM_IRQ)
    assert level == 64 and error & sim.ERR_BUFFER_OVFL and irq & sim.IRQ_ERR
    w(chip, sim.FIFO_LEVEL, 0x80)
    assert r(chip, sim.FIFO_LEVEL, sim.ERROR) == [0, 0]


def test_comirq_set1_sets_or_clears_the_bits_written():
    """MFRC522 9.3.1.5: bit 7 (Set1) chooses whether the 1 bits written are set or cleared."""
    chip = chip_with()
    w(chip, sim.COM_IRQ, 0x7F)
    w(chip, sim.COM_IRQ, 0x80 | sim.IRQ_RX | sim.IRQ_TIMER)
    assert r(chip, sim.COM_IRQ) == [sim.IRQ_RX | sim.IRQ_TIMER]
    w(chip, sim.COM_IRQ, sim.IRQ_TIMER)
    assert r(chip, sim.COM_IRQ) == [sim.IRQ_RX]


# -- MFRC522: timer and Transceive ------------------------------------------------------------------
def test_tauto_timer_starts_after_the_frame_and_fires_when_nobody_answers():
    """MFRC522 8.5 / 9.3.3.10: with TAuto the timer starts at the end of transmission."""
    chip = chip_with()
    setup_timer(chip, 150)
    start = chip.now_us
    irq, error, data, _ = send(chip, [sim.REQA], 7)
    assert irq & sim.IRQ_TIMER and not irq & sim.IRQ_RX and data == []
    elapsed = chip.now_us - start
    assert sim.air_time_us(7) + 150 <= elapsed <= sim.air_time_us(7) + 150 + 400


def test_tauto_timer_stops_when_an_answer_starts():
    """MFRC522 8.5: the timer stops when the receiver starts receiving (ATQA after the FDT, ISO 6.2.1.1)."""
    chip = chip_with(UID4)
    setup_timer(chip, 150)
    irq, error, data, _ = send(chip, [sim.REQA], 7)
    for _ in range(20):
        irq |= r(chip, sim.COM_IRQ)[0]
    assert irq & sim.IRQ_RX and not irq & sim.IRQ_TIMER
    assert data == [0x04, 0x00] and error == 0


def test_transceive_stays_active_and_a_startsend_while_waiting_is_ignored():
    """MFRC522 10.3.1.8: Transceive repeats transmit then receive until another command;
    after a received frame the next StartSend transmits again; while the receiver still
    waits for an answer, StartSend does not start a frame."""
    chip = chip_with(UID4)
    setup_timer(chip, 150)
    send(chip, [sim.REQA], 7)                        # answered: READY1
    tag = chip.tag(UID4)
    irq, _, data, _ = send(chip, select_frame(tag), restart=False)
    assert irq & sim.IRQ_RX and data[0] == 0x08 and tag.state == sim.ACTIVE
    frames = chip.frames
    irq, *_ = send(chip, HLTA, restart=False)        # no answer: the receiver keeps waiting
    assert irq & sim.IRQ_TIMER and tag.state == sim.HALT
    w(chip, sim.FIFO_DATA, sim.WUPA)
    w(chip, sim.BIT_FRAMING, 0x87)
    assert chip.frames == frames + 1 and chip.ignored_start_sends == 1
    irq, _, data, _ = send(chip, [sim.WUPA], 7)      # Idle + Transceive restart it
    assert irq & sim.IRQ_RX and data == [0x04, 0x00]


# -- MFRC522: error bits ------------------------------------------------------------------------------
def test_collision_sets_collerr_and_collreg_position():
    """MFRC522 9.3.1.7 (CollErr) and 9.3.1.15 (CollPos, 1-based; ValuesAfterColl = 0 clears later bits)."""
    chip = chip_with("11223344", "11223345")
    setup_timer(chip)
    send(chip, [sim.WUPA], 7)
    irq, error, data, coll = send(chip, [0x93, 0x20])
    assert error & sim.ERR_COLL and irq & sim.IRQ_ERR
    assert coll & 0x1F == 25 and not coll & 0x20
    assert data == [0x11, 0x22, 0x33, 0x01, 0x00]


def test_a_garbled_answer_sets_parityerr_or_protocolerr():
    """MFRC522 9.3.1.7: ParityErr when the parity check fails, ProtocolErr when the SOF is wrong."""
    seen = 0
    for seed in range(40):
        chip = chip_with(seed=seed)
        chip.place(UID4, garble=1.0)
        setup_timer(chip)
        irq, error, _, _ = send(chip, [sim.REQA], 7)
        assert irq & sim.IRQ_RX and irq & sim.IRQ_ERR
        assert error & (sim.ERR_PARITY | sim.ERR_PROTOCOL)
        seen |= error
    assert seen & sim.ERR_PARITY and seen & sim.ERR_PROTOCOL


def test_errors_are_cleared_when_the_receiver_starts_again():
    """MFRC522 9.3.1.7: CollErr, CRCErr, ParityErr, ProtocolErr clear at receiver start-up."""
    chip = chip_with()
    chip.place(UID4, garble=1.0)
    setup_timer(chip)
    _, error, _, _ = send(chip, [sim.REQA], 7)
    assert error
    chip.tag(UID4).garble = 0.0
    send(chip, [sim.REQA], 7)   # READY1 -> IDLE on the unexpected REQA, no answer
    assert r(chip, sim.ERROR) == [0]


def test_rxcrcen_flags_an_answer_whose_crc_fails():
    """MFRC522 9.3.1.7 (CRCErr) with 9.3.2.4 (RxCRCEn): an ATQA carries no CRC_A, a SAK does."""
    chip = chip_with(UID4)
    setup_timer(chip)
    w(chip, sim.RX_MODE, sim.CRC_EN)
    _, error, _, _ = send(chip, [sim.REQA], 7)
    assert error & sim.ERR_CRC
    _, error, data, _ = send(chip, select_frame(chip.tag(UID4)))
    assert not error & sim.ERR_CRC and data[0] == 0x08
    chip.clear_field()
    chip.place(UID4, corrupt_crc=True)
    send(chip, [sim.REQA], 7)
    _, error, _, _ = send(chip, select_frame(chip.tag(UID4)))
    assert error & sim.ERR_CRC


def test_txcrcen_appends_the_crc():
    """MFRC522 9.3.2.3 (TxCRCEn): the chip adds CRC_A to the frame, so a SELECT without one is valid."""
    chip = chip_with(UID4)
    setup_timer(chip)
    send(chip, [sim.REQA], 7)
    w(chip, sim.TX_MODE, sim.CRC_EN)
    frame = bytes([0x93, 0x70]) + chip.tag(UID4).block(1)
    _, _, data, _ = send(chip, frame)
    assert data[0] == 0x08 and chip.tag(UID4).state == sim.ACTIVE


def test_writing_the_fifo_while_an_answer_is_on_air_sets_wrerr():
    """MFRC522 9.3.1.7 (WrErr): FIFO written between the last bit sent and the last bit received."""
    chip = chip_with(UID4)
    setup_timer(chip, 1000)
    w(chip, sim.COMMAND, sim.CMD_IDLE, sim.CMD_TRANSCEIVE)
    w(chip, sim.FIFO_DATA, sim.REQA)
    w(chip, sim.BIT_FRAMING, 0x87)
    chip.advance(sim.air_time_us(7) + 10)         # transmission over, the ATQA not yet in
    w(chip, sim.FIFO_DATA, 0x00)
    assert r(chip, sim.ERROR)[0] & sim.ERR_WR


def test_rcvoff_lets_tags_hear_but_nothing_is_received():
    """MFRC522 9.3.1.2 (RcvOff): the analog receiver is off."""
    chip = chip_with(UID4)
    setup_timer(chip)
    w(chip, sim.COMMAND, 0x20 | sim.CMD_TRANSCEIVE)
    w(chip, sim.COM_IRQ, 0x7F)
    w(chip, sim.FIFO_DATA, sim.REQA)
    w(chip, sim.BIT_FRAMING, 0x87)
    for _ in range(50):
        if r(chip, sim.COM_IRQ)[0] & sim.IRQ_TIMER:
            break
    assert chip.tag(UID4).state == sim.READY and r(chip, sim.FIFO_LEVEL) == [0]


# -- tags: ISO 14443-3 / NTAG state machine --------------------------------------------------------
def test_a_tag_answers_only_after_its_power_up_time():
    """ISO 5 (a PICC accepts a request within 5 ms of an unmodulated field): ``power_up_us``."""
    chip = chip_with(power_up_us=5000)
    setup_timer(chip)
    chip.place(UID4)
    irq, *_ = send(chip, [sim.REQA], 7)
    assert irq & sim.IRQ_TIMER
    chip.advance(5000)
    irq, _, data, _ = send(chip, [sim.REQA], 7)
    assert irq & sim.IRQ_RX and data == [0x04, 0x00]
    w(chip, sim.TX_CONTROL, 0x80)      # field off: the tag loses power...
    w(chip, sim.TX_CONTROL, 0x83)      # ...and needs its power-up time again
    irq, *_ = send(chip, [sim.WUPA], 7)
    assert irq & sim.IRQ_TIMER and chip.tag(UID4).state == sim.IDLE


def test_idle_and_halt_tags_ignore_everything_but_their_wake_up():
    """NTAG203 8.2.1 (IDLE leaves only on REQA/WUPA) and NTAG21xF 8.4.6 (HALT only on WUPA)."""
    tag = sim.make_tag(UID4)
    assert tag.hear(select_frame(tag), 72) is None and tag.state == sim.IDLE
    assert tag.hear(HLTA, 32) is None and tag.state == sim.IDLE
    tag.hear(bytes([sim.REQA]), 7)
    tag.hear(select_frame(tag), 72)
    tag.hear(HLTA, 32)
    assert tag.state == sim.HALT
    assert tag.hear(bytes([sim.REQA]), 7) is None and tag.state == sim.HALT
    assert tag.hear(select_frame(tag), 72) is None and tag.state == sim.HALT
    assert tag.hear(bytes([sim.WUPA]), 7) == sim._to_bits(tag.atqa)
    assert tag.iso_state == "READY1*"


def test_ready1_falls_back_on_another_tags_select():
    """NTAG203 8.2.2: in READY1 any data but ANTICOLLISION/SELECT of its own UID is an error:
    back to IDLE, or to HALT when it was woken from HALT (READY1*)."""
    tag, other = sim.make_tag(UID4), sim.make_tag("0A0B0C0D")
    tag.hear(bytes([sim.REQA]), 7)
    assert tag.hear(select_frame(other), 72) is None and tag.state == sim.IDLE
    tag.hear(bytes([sim.WUPA]), 7)
    tag.hear(select_frame(tag), 72)
    tag.hear(HLTA, 32)
    tag.hear(bytes([sim.WUPA]), 7)
    assert tag.iso_state == "READY1*"
    assert tag.hear(select_frame(other), 72) is None and tag.state == sim.HALT


def test_ready1_stays_silent_and_ready_on_anticollision_bits_it_does_not_match():
    """ISO 6.4.3: PICCs whose UID does not match the bits sent stay silent (and READY)."""
    tag = sim.make_tag(UID4)
    tag.hear(bytes([sim.REQA]), 7)
    assert tag.hear(bytes([0x93, 0x21, 0x00]), 17) is None
    assert tag.iso_state == "READY1"
    assert tag.hear(bytes([0x93, 0x21, 0x01]), 17) is not None   # 0xA1: bit 0 is 1


def test_ready2_falls_back_on_an_unexpected_frame():
    """NTAG203 8.2.3: in READY2 the second UID part is resolved; anything else is an error."""
    tag, other = sim.make_tag(UID7), sim.make_tag(UID7_OTHER)
    tag.hear(bytes([sim.REQA]), 7)
    assert tag.hear(select_frame(tag, 1), 72) == sim._to_bits(bytes([0x04]) + sim.crc_a([0x04]))
    assert tag.iso_state == "READY2"
    assert tag.hear(select_frame(other, 2), 72) is None and tag.state == sim.IDLE


def test_active_halts_on_hlta_and_falls_back_on_anything_else():
    """NTAG21xF 8.4.4: ACTIVE leaves with HLTA to HALT; any other data is an error (IDLE or HALT)."""
    tag = sim.make_tag(UID4)
    tag.hear(bytes([sim.REQA]), 7)
    tag.hear(select_frame(tag), 72)
    assert tag.iso_state == "ACTIVE"
    assert tag.hear(bytes([sim.WUPA]), 7) is None and tag.state == sim.IDLE
    tag.hear(bytes([sim.WUPA]), 7)
    tag.hear(select_frame(tag), 72)
    tag.hear(HLTA, 32)
    tag.hear(bytes([sim.WUPA]), 7)
    tag.hear(select_frame(tag), 72)
    assert tag.iso_state == "ACTIVE*"
    assert tag.hear(bytes([sim.REQA]), 7) is None and tag.state == sim.HALT


def test_strict_tags_make_a_select_of_one_card_drop_the_others():
    """NTAG203 8.2.2 on the chip: after one SELECT only the selected tag is left; the
    others are back in IDLE (or HALT), which is why a driver cannot SELECT every block
    of one anticollision walk. ``strict=False`` keeps the kinder tags of old."""
    for strict, expected in ((True, sim.IDLE), (False, sim.READY)):
        chip = chip_with("0A0B0C0D", UID4, strict=strict)
        setup_timer(chip)
        send(chip, [sim.REQA], 7)
        send(chip, select_frame(chip.tag(UID4)))
        assert chip.tag(UID4).state == sim.ACTIVE
        assert chip.tag("0A0B0C0D").state == expected


def test_strict_is_the_default():
    assert RC522Emulator().strict is True


def test_the_default_power_up_delay_needs_a_clock():
    """Without a clock the host's idle time is invisible, so the default delay is 0 there."""
    assert RC522Emulator().default_power_up_us == 0.0
    assert RC522Emulator(clock=lambda: 0.0).default_power_up_us == sim.POWER_UP_US
    chip = RC522Emulator()
    sim.charge_bus_time([chip], clock=lambda: 0.0)
    tag = chip.place(UID4)
    assert tag.power_up_us is None and tag.ready_at_us == chip.now_us + sim.POWER_UP_US


# -- faults per tag ------------------------------------------------------------------------------------
def test_coupling_loss_is_per_tag_and_per_frame():
    chip = chip_with(seed=1)
    setup_timer(chip)
    chip.place(UID4, loss=0.5)
    chip.place("0A0B0C0D", loss=0.0)
    answers = {UID4: 0, "0A0B0C0D": 0}
    for _ in range(400):
        chip.history.clear()
        send(chip, [sim.WUPA], 7)
        for uid in chip.history[-1][2]:
            answers[uid] += 1
        for tag in chip.field.values():
            tag.power_off()
    assert answers["0A0B0C0D"] == 400
    assert 150 < answers[UID4] < 250


def test_loss_set_on_the_emulator_applies_to_tags_placed():
    chip = chip_with(loss=0.05)
    assert chip.place(UID4).loss == 0.05
    assert chip.place("0A0B0C0D", loss=0.2).loss == 0.2


def test_collide_puts_a_collision_into_a_lone_tags_answer():
    """MFRC522 9.3.1.7: interference during an answer is a bit collision like another tag's."""
    chip = chip_with()
    chip.place(UID4, collide=1.0)
    setup_timer(chip)
    send(chip, [sim.REQA], 7)
    _, error, _, coll = send(chip, [0x93, 0x20])
    assert error & sim.ERR_COLL and 1 <= (coll & 0x1F or 32) <= 32


def test_fault_probabilities_are_checked():
    with pytest.raises(ValueError):
        sim.make_tag(UID4, loss=1.5)
    with pytest.raises(ValueError):
        RC522Emulator(loss=-0.1)


# -- the bus cost model ---------------------------------------------------------------------------------
@pytest.mark.parametrize("host, overhead", [(PI4, 50.0), (PI5, 25.0)])
def test_a_transfer_costs_its_host_overhead_plus_its_bytes_at_the_spi_clock(host, overhead):
    chip = RC522Emulator(host=host)
    chip.open(0, 0)
    chip.max_speed_hz = 1_000_000
    before = chip.now_us
    chip.xfer2([0x80 | (sim.VERSION << 1), 0])
    assert chip.now_us - before == pytest.approx(overhead + 16.0)
    assert chip.bus_us == pytest.approx(overhead + 16.0)


def test_air_time_is_charged_per_frame_and_counted():
    chip = chip_with(UID4)
    setup_timer(chip)
    chip.reset_counters()
    send(chip, [sim.REQA], 7)
    expected = sim.air_time_us(7) + sim.FDT_US + sim.air_time_us(16)
    assert chip.air_us == pytest.approx(expected)
    assert chip.now_us >= chip.air_us


def test_charge_bus_time_paces_transfers_to_a_clock(monkeypatch):
    now = [100.0]
    slept = []

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    monkeypatch.setattr(sim.time, "sleep", sleep)
    chip = chip_with()
    sim.charge_bus_time([chip], PI5, clock=lambda: now[0])
    assert chip.transfer_us == 25.0 and chip.pace
    start, bus_before = now[0], chip.bus_us
    for _ in range(40):
        r(chip, sim.VERSION)
    modelled_s = (chip.bus_us - bus_before) / 1e6
    # the fake clock moved only by the sleeps: the transfers took their modelled time
    assert modelled_s - 250e-6 <= now[0] - start <= modelled_s + 1e-9
    assert slept


def test_charge_bus_time_fits_the_simulated_tables_chips(tmp_path):
    """The daemon bench charges a Pi 4's bus time on a live table with this one call."""
    import time

    from dealerbox.domain.decks import simulated_uid
    from dealerbox.service.config import DEFAULT_CONFIG, load_config
    from hardware_sim.table import SimulatedTable

    config = load_config(DEFAULT_CONFIG)
    with SimulatedTable(config) as table:
        sim.charge_bus_time(table.chips.values(), PI4)
        board = table.chips["board"]
        assert board.pace and board.transfer_us == PI4.transfer_us
        tag = board.place(simulated_uid("A", "Ah"))
        assert tag.ready_at_us == pytest.approx(board.now_us + sim.POWER_UP_US)
        board.open(board.bus, board.device)
        start = time.monotonic()
        for _ in range(20):
            r(board, sim.VERSION)
        assert time.monotonic() - start >= 20 * PI4.transfer_us / 1e6 - 250e-6


def test_the_simulated_tables_chips_follow_the_clock():
    """A tag laid on a live table answers after its power-up delay in real time, not in bus time."""
    import time

    from dealerbox.domain.decks import simulated_uid
    from dealerbox.service.config import DEFAULT_CONFIG, load_config
    from hardware_sim.table import SimulatedTable

    with SimulatedTable(load_config(DEFAULT_CONFIG)) as table:
        board = table.chips["board"]
        assert board.clock is time.monotonic and not board.pace
        assert board.default_power_up_us == sim.POWER_UP_US
        board.open(board.bus, board.device)
        before = board.now_us
        tag = board.place(simulated_uid("A", "Ah"))
        assert tag.ready_at_us == pytest.approx(board.now_us + sim.POWER_UP_US)
        time.sleep(0.002)
        r(board, sim.VERSION)          # idle time passed on the chip's clock as well
        assert board.now_us - before >= 2000
