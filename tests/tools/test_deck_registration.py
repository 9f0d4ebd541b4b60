"""Deck registration and the deck check, end to end on the RC522 chip emulator.

The technician is simulated at the chip: tags are placed in and taken out of the
emulator's RF field between polls, driven by the fake ``sleep`` the loops call,
so no test waits for real time and every loop is bounded by its own timeouts.
"""

from __future__ import annotations

import re

import pytest

from dealerbox.domain.cards import DECK_52, JOKER
from dealerbox.tools.deck_registration import (REGISTRATION_ORDER, DeckTimeout, RehearsalHand, check_deck_with_reader,
                                   exit_status, format_report, progress_bar, register_deck)
from dealerbox.errors import RegistryError
from dealerbox.hw.rc522 import RC522Reader
from dealerbox.domain.decks import DeckRegistry, simulated_uid, simulation_registry
from hardware_sim.rc522 import RC522Emulator

DECK_C = [simulated_uid("C", c) for c in DECK_52] + [simulated_uid("C", JOKER, i) for i in range(2)]


# -- the chip emulator, handed to the driver as its SPI bus -------------------------------------
@pytest.fixture
def chip(pins):
    return RC522Emulator(0, 0)


@pytest.fixture
def reader(chip):
    with RC522Reader("pad", zone="board", spi=chip) as r:
        yield r


class Technician:
    """A fake clock whose ``sleep`` also moves cards over the antenna, following a plan.

    The plan is a list of UIDs to show one after the other (each held for *hold*
    polls, then lifted for *gap* polls) and of actions: ``"unplug"``/``"plug"``
    (the reader's cable), ``("pause", n)`` (n polls with nothing shown),
    ``("both", uid1, uid2)`` (two cards at once), ``"cancel"`` (Ctrl-C).
    """

    def __init__(self, chip, plan, hold=8, gap=30):
        self.chip = chip
        self.plan = list(plan)
        self.hold, self.gap = hold, gap
        self.now = 1000.0
        self.sleeps = 0
        self._busy = 0           # polls until the current action ends
        self._shown: list[str] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.sleeps += 1
        assert self.sleeps < 100_000, "the loop under test does not end"
        if self._busy > 0:
            self._busy -= 1
            if self._busy == self.gap and self._shown:
                for uid in self._shown:
                    self.chip.remove(uid)
                self._shown = []
            return
        if not self.plan:
            return
        step = self.plan.pop(0)
        if step == "cancel":
            raise KeyboardInterrupt
        if step == "unplug":
            self.chip.unplug()
        elif step == "plug":
            self.chip.plug()
        elif isinstance(step, tuple) and step[0] == "pause":
            self._busy = step[1]
        else:
            uids = list(step[1:]) if isinstance(step, tuple) else [step]
            for uid in uids:
                self.chip.place(uid)
            self._shown = uids
            self._busy = self.hold + self.gap


class Screen:
    def __init__(self):
        self.lines: list[str] = []

    def __call__(self, text: str) -> None:
        assert isinstance(text, str)
        self.lines.append(text)

    def asked(self) -> list[str]:
        """The cards asked for, in order (repeats included)."""
        return [m.group(1) for line in self.lines if (m := re.search(r"next: (\S+)", line))]


def run_register(reader, tech, registry, deck, path, screen, **kw):
    return register_deck(reader, registry, deck, path, prompt=screen, clock=tech.clock, sleep=tech.sleep,
                         poll_s=0.02, timeout_s=30.0, **kw)


# -- registration ---------------------------------------------------------------------------------
def test_registering_a_full_deck_writes_a_registry_that_loads_back(reader, chip, tmp_path):
    path = tmp_path / "decks.toml"
    tech = Technician(chip, DECK_C)
    screen = Screen()
    before = simulation_registry()
    result = run_register(reader, tech, before, "C", path, screen, back="green")
    loaded = DeckRegistry.load(path)
    assert sorted(loaded.decks) == ["A", "B", "C"] and loaded.active == "A"
    for uid, card in zip(DECK_C, REGISTRATION_ORDER):
        tag = loaded.lookup(uid)
        assert (tag.deck, tag.card) == ("C", card)
    assert len(loaded.uids_of("C", JOKER)) == 2
    assert loaded.backs["C"] == "green"
    assert len(loaded) == len(before) + 54 == len(result)
    assert not before.has_deck("C")            # the registry passed in is not modified
    assert screen.asked() == [c if c != JOKER else "joker" for c in REGISTRATION_ORDER]
    assert any("23/54" in line and "next:" in line for line in screen.lines)
    assert "54/54" in screen.lines[-1] and "[####################]" in screen.lines[-1]
    assert not list(tmp_path.glob("*.tmp")) and [p.name for p in tmp_path.iterdir()] == ["decks.toml"]


def test_progress_bar_text():
    assert progress_bar(23, 54) == "[########------------] 23/54"
    assert progress_bar(0, 54).startswith("[--------------------] 0/54")


def test_a_card_lying_on_the_pad_counts_once(reader, chip, tmp_path):
    # Held for 200 polls (4 s): still one appearance, so the next card is not taken for it.
    tech = Technician(chip, DECK_C[:3], hold=200)
    screen = Screen()
    with pytest.raises(DeckTimeout):
        register_deck(reader, DeckRegistry(), "C", tmp_path / "r.toml", prompt=screen, clock=tech.clock,
                      sleep=tech.sleep, timeout_s=20.0)
    assert [ln for ln in screen.lines if "registered as tag" in ln] == [
        f"2c registered as tag {DECK_C[0]}", f"3c registered as tag {DECK_C[1]}",
        f"4c registered as tag {DECK_C[2]}"]
    assert not (tmp_path / "r.toml").exists()


def test_a_tag_shown_twice_is_refused_and_the_same_card_asked_again(reader, chip, tmp_path):
    plan = DECK_C[:5] + [DECK_C[2]] + DECK_C[5:]
    tech = Technician(chip, plan)
    screen = Screen()
    reg = run_register(reader, tech, DeckRegistry(), "C", tmp_path / "r.toml", screen)
    refusals = [ln for ln in screen.lines if ln.startswith("refused")]
    assert refusals == [f"refused: this tag ({DECK_C[2]}) was registered a moment ago as 4c; "
                        f"put it aside and show 7c"]
    asked = screen.asked()
    assert asked[5:7] == ["7c", "7c"]           # asked, refused, asked again
    assert reg.lookup(DECK_C[5]).card == "7c" and reg.lookup(DECK_C[2]).card == "4c"
    assert reg.active == "C"                    # the first deck of an empty registry is active


def test_a_tag_of_another_deck_is_refused(reader, chip, tmp_path):
    foreign = simulated_uid("B", "Qs")
    plan = DECK_C[:10] + [foreign] + DECK_C[10:]
    tech = Technician(chip, plan)
    screen = Screen()
    reg = run_register(reader, tech, simulation_registry(), "C", tmp_path / "r.toml", screen)
    (refusal,) = [ln for ln in screen.lines if ln.startswith("refused")]
    assert f"({foreign}) is registered as Qs of deck B (red back)" in refusal
    assert refusal.endswith("show Qc")
    assert reg.lookup(foreign).deck == "B" and reg.lookup(DECK_C[10]).card == "Qc"


def test_two_tags_at_once_are_refused(reader, chip, tmp_path):
    plan = [DECK_C[0], ("both", DECK_C[1], DECK_C[2]), *DECK_C[1:]]
    tech = Technician(chip, plan)
    screen = Screen()
    reg = run_register(reader, tech, DeckRegistry(), "C", tmp_path / "r.toml", screen)
    assert any("2 tags at once" in ln for ln in screen.lines)
    assert reg.lookup(DECK_C[1]).card == "3c" and reg.lookup(DECK_C[2]).card == "4c"


def test_cancel_writes_nothing(reader, chip, tmp_path):
    path = tmp_path / "decks.toml"
    simulation_registry().save(path)
    before = path.read_bytes()
    tech = Technician(chip, DECK_C[:30] + ["cancel"])
    screen = Screen()
    with pytest.raises(KeyboardInterrupt):
        run_register(reader, tech, DeckRegistry.load(path), "C", path, screen)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["decks.toml"]
    assert screen.lines[-1] == "cancelled at 30/54: nothing was written"


def test_reader_fault_keeps_progress(reader, chip, tmp_path):
    plan = DECK_C[:20] + ["unplug", ("pause", 40), "plug"] + DECK_C[20:]
    tech = Technician(chip, plan)
    screen = Screen()
    reg = run_register(reader, tech, DeckRegistry(), "C", tmp_path / "r.toml", screen)
    faults = [ln for ln in screen.lines if "failed" in ln]
    assert len(faults) == 1 and "retrying" in faults[0] and "'pad'" in faults[0]
    assert any("answers again" in ln for ln in screen.lines)
    assert len(DeckRegistry.load(tmp_path / "r.toml")) == 54 == len(reg)
    assert "reader faults retried" in screen.lines[-1]


def test_no_card_times_out_and_writes_nothing(reader, chip, tmp_path):
    tech = Technician(chip, DECK_C[:2])
    screen = Screen()
    with pytest.raises(DeckTimeout, match="nothing was written") as info:
        run_register(reader, tech, DeckRegistry(), "C", tmp_path / "r.toml", screen)
    assert isinstance(info.value, TimeoutError) and "4c (2/54" in str(info.value)
    assert not (tmp_path / "r.toml").exists()
    assert tech.now - 1000.0 < 40.0


def test_an_existing_deck_is_not_overwritten_by_accident(reader, chip, tmp_path):
    with pytest.raises(RegistryError, match="already registered"):
        register_deck(reader, simulation_registry(), "B", tmp_path / "r.toml", prompt=Screen())


def test_replacing_a_deck_keeps_the_others_and_the_active_deck(reader, chip, tmp_path):
    new_b = [simulated_uid("B2", c) for c in DECK_52] + [simulated_uid("B2", JOKER, i) for i in range(2)]
    tech = Technician(chip, [simulated_uid("B", "2c")] + new_b)   # an old B tag may be registered again
    screen = Screen()
    reg = run_register(reader, tech, simulation_registry(), "B", tmp_path / "r.toml", screen, replace=True)
    assert not [ln for ln in screen.lines if ln.startswith("refused")]
    assert reg.active == "A" and len(reg.cards_of("B")) == 54 and len(reg.cards_of("A")) == 54
    assert reg.lookup(simulated_uid("B", "2c")).card == "2c"
    assert reg.lookup(new_b[0]).card == "3c" and reg.lookup(simulated_uid("B", "3c")) is None


# -- deck check -----------------------------------------------------------------------------------
def run_check(reader, chip, plan, registry=None, **kw):
    tech = Technician(chip, plan, hold=3, gap=30)
    screen = Screen()
    report = check_deck_with_reader(reader, registry or simulation_registry(), prompt=screen,
                                    clock=tech.clock, sleep=tech.sleep, quiet_s=2.0, **kw)
    return report, screen, tech


DECK_A = [simulated_uid("A", c) for c in DECK_52]


def test_a_complete_deck_is_fit_for_play(reader, chip):
    report, screen, _ = run_check(reader, chip, DECK_A)
    assert report.fit_for_play and exit_status(report) == 0
    assert report.seen == 52 and set(report.passes.values()) == {1}
    text = format_report(report)
    assert text.splitlines()[-1] == "FIT FOR PLAY" and "52 of 52 cards seen" in text


def test_check_finds_missing_duplicate_foreign_joker_and_unknown(reader, chip):
    missing = DECK_52[7]                              # 9c never passes
    clone = DECK_A[20]
    foreign = simulated_uid("B", "Kd")
    joker = simulated_uid("A", JOKER, 0)
    unknown = "A1B2C3D4"
    plan = DECK_A[:7] + DECK_A[8:25] + [clone, foreign, joker, unknown] + DECK_A[25:]
    report, screen, _ = run_check(reader, chip, plan)
    assert report.missing == [missing]
    assert report.duplicates == [DECK_52[20]] and report.passes[clone] == 2
    assert report.foreign == [("B", "Kd")]
    assert report.jokers == [joker]
    assert report.unknown == [unknown]
    assert not report.fit_for_play and exit_status(report) == 1
    text = format_report(report)
    lines = text.splitlines()
    assert f"  MISSING (1): {missing}" in lines
    assert any(ln.startswith(f"  DUPLICATE {DECK_52[20]}: one tag read in two passes (tag {clone})")
               and "cloned tag or the same card passed twice" in ln for ln in lines)
    assert "  FOREIGN Kd of deck B (red back): another back; take it out" in lines
    assert any(ln.startswith("  JOKERS (1)") for ln in lines)
    assert f"  UNKNOWN tag {unknown}: in no registered deck; take it out" in lines
    assert any(ln.startswith("  rule MISSING_CARD: ") and "001 r9" in ln for ln in lines)
    assert lines[-1] == "NOT FIT FOR PLAY"
    d = report.to_dict()
    assert d["fit_for_play"] is False and d["passes"][clone] == 2 and d["reader_faults"] == 0


def test_two_tags_for_one_card_are_reported_as_an_extra_card(reader, chip):
    reg = simulation_registry()
    reg.add("0A0B0C0D", "A", "Ah")
    report, _, _ = run_check(reader, chip, DECK_A + ["0A0B0C0D"], registry=reg)
    assert report.duplicates == ["Ah"]
    assert "2 different tags are registered as Ah" in format_report(report)


def test_check_ends_on_stop_and_reports_reader_faults(reader, chip):
    plan = DECK_A[:10] + ["unplug", ("pause", 20), "plug"] + DECK_A[10:]
    tech = Technician(chip, plan, hold=3, gap=10)
    seen = []

    def stop():
        return len(seen) > 0 and tech.now > 1000.0 + 40

    screen = Screen()

    def prompt(text):
        screen(text)
        if "tags read" in text:
            seen.append(text)

    report = check_deck_with_reader(reader, simulation_registry(), prompt=prompt, clock=tech.clock,
                                    sleep=tech.sleep, quiet_s=1000.0, stop=stop)
    assert report.reader_faults > 0 and report.fit_for_play
    assert "READER:" in format_report(report) and tech.now < 1000.0 + 45


def test_check_with_nothing_shown_ends_and_is_not_fit(reader, chip):
    report, screen, tech = run_check(reader, chip, [], start_timeout_s=5.0)
    assert report.seen == 0 and len(report.missing) == 52 and exit_status(report) == 1
    assert any("no card seen" in ln for ln in screen.lines) and tech.now - 1000.0 < 6.0


def test_unknown_deck_is_refused(reader, chip):
    with pytest.raises(RegistryError, match="'Z' is not in the registry"):
        check_deck_with_reader(reader, simulation_registry(), "Z", prompt=Screen())


def test_reopen_makes_a_fresh_reader_after_a_fault(chip, tmp_path):
    opened = []

    def reopen():
        r = RC522Reader("pad", zone="board", spi=chip)      # fails while the cable is out
        opened.append(r)
        return r

    first = RC522Reader("pad", zone="board", spi=chip)
    plan = DECK_C[:5] + ["unplug", ("pause", 10), "plug"] + DECK_C[5:]
    tech = Technician(chip, plan)
    screen = Screen()
    reg = run_register(first, tech, DeckRegistry(), "C", tmp_path / "r.toml", screen, reopen=reopen)
    assert len(reg) == 54 and first.closed
    assert len(opened) == 1 and not opened[0].closed
    opened[0].close()


def test_a_reader_pulled_out_mid_registration_is_reopened_and_no_card_is_lost_or_doubled(chip, tmp_path):
    """The cable is pulled twice, through the emulator: once while a registered card still lies
    on the pad (it must not count again once the reader is back), once while the next card is
    put down (it must be registered once the reader is back). The supervisor reports each
    outage once, reopens the reader with its backoff, and registration carries on in order."""
    outages = {f"{REGISTRATION_ORDER[19]} registered as tag {DECK_C[19]}": 20,     # card 19 still on the pad
               f"{REGISTRATION_ORDER[30]} registered as tag {DECK_C[30]}": 70}     # card 31 put down meanwhile
    opened = []

    def reopen():
        r = RC522Reader("pad", zone="board", spi=chip)      # raises ReaderError while the cable is out
        opened.append(r)
        return r

    tech = Technician(chip, DECK_C, hold=40, gap=20)   # counted in the tool's sleeps, backoffs included
    plug_in = []                                            # sleeps left until the cable goes back in
    on_pad = []                                             # (cable change, cards on the pad then)

    def sleep(seconds):
        tech.sleep(seconds)
        if plug_in:
            plug_in[0] -= 1
            if plug_in[0] == 0:
                plug_in.clear()
                on_pad.append(("plug", list(tech._shown)))
                chip.plug()

    screen = Screen()

    def prompt(text):
        screen(text)
        if text in outages:
            on_pad.append(("unplug", list(tech._shown)))
            chip.unplug()
            plug_in.append(outages.pop(text))

    first = RC522Reader("pad", zone="board", spi=chip)
    path = tmp_path / "r.toml"
    reg = register_deck(first, DeckRegistry(), "C", path, prompt=prompt, clock=tech.clock, sleep=sleep,
                        poll_s=0.02, timeout_s=120.0, reopen=reopen)    # an outage counts as waiting
    try:
        assert not outages and not plug_in                  # both outages happened and ended
        assert on_pad == [("unplug", [DECK_C[19]]), ("plug", [DECK_C[19]]),
                          ("unplug", [DECK_C[30]]), ("plug", [DECK_C[31]])]
        assert first.closed and len(opened) == 2            # each outage reopened the reader once
        assert sum("failed" in ln and "retrying" in ln for ln in screen.lines) == 2
        assert sum("answers again" in ln for ln in screen.lines) == 2
        assert not [ln for ln in screen.lines if ln.startswith("refused")]
        # Every card asked for exactly once, in order: none lost (asked again), none doubled.
        assert screen.asked() == [c if c != JOKER else "joker" for c in REGISTRATION_ORDER]
        registered = [ln for ln in screen.lines if " registered as tag " in ln]
        assert registered == [f"{card} registered as tag {uid}" for card, uid in zip(REGISTRATION_ORDER, DECK_C)]
        loaded = DeckRegistry.load(path)
        assert len(loaded) == 54 == len(reg)
        assert [loaded.lookup(uid).card for uid in DECK_C] == list(REGISTRATION_ORDER)
        assert "(2 reader faults retried)" in screen.lines[-1]
    finally:
        for r in opened:
            r.close()


# -- the rehearsal hand (deck register/check --simulated) -----------------------------------------
class ChipTable:
    """The part of a SimulatedTable a RehearsalHand uses (place and lift by zone), on one chip."""

    def __init__(self, chip, zone="board"):
        self.chip, self.zone = chip, zone
        self.moves: list[tuple[str, str]] = []

    def place(self, *, zone, uid):
        assert zone == self.zone
        self.chip.place(uid)
        self.moves.append(("place", uid))

    def lift(self, *, zone, uid):
        assert zone == self.zone
        self.chip.remove(uid)
        self.moves.append(("lift", uid))


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_rehearsal_hand_shows_each_card_asked_for_and_the_deck_registers(reader, chip, tmp_path):
    table, time_ = ChipTable(chip), FakeClock()
    hand = RehearsalHand(table, "board", pace_s=0.3, sleep=time_.sleep)
    screen = Screen()
    path = tmp_path / "decks.toml"
    register_deck(reader, DeckRegistry(), "R", path, prompt=screen, clock=time_.clock, sleep=time_.sleep,
                  poll_s=0.02, timeout_s=30.0, on_ask=hand.registering("R"))
    hand.close()
    deck_r = [simulated_uid("R", c) for c in DECK_52] + [simulated_uid("R", JOKER, i) for i in range(2)]
    assert hand.shown == deck_r                     # each card once, the two jokers as two tags
    assert screen.asked() == [c if c != JOKER else "joker" for c in REGISTRATION_ORDER]
    assert not [ln for ln in screen.lines if ln.startswith("refused")]
    loaded = DeckRegistry.load(path)
    assert [loaded.lookup(uid).card for uid in deck_r] == list(REGISTRATION_ORDER)
    assert table.moves[-1] == ("lift", deck_r[-1]) and not chip.field     # nothing left on the pad


def test_a_card_refused_is_put_aside_and_another_one_shown(reader, chip, tmp_path):
    # The registry already has the hand's first 2c under deck S: refused, asked again, another 2c shown.
    table, time_ = ChipTable(chip), FakeClock()
    hand = RehearsalHand(table, "board", pace_s=0.0, sleep=time_.sleep)
    registry = DeckRegistry()
    registry.add(simulated_uid("R", "2c"), "S", "2c")
    asked = []
    on_ask = hand.registering("R")

    def ask_until_the_second_card(index):
        asked.append(index)
        if index > 0:
            raise KeyboardInterrupt
        on_ask(index)

    screen = Screen()
    with pytest.raises(KeyboardInterrupt):
        register_deck(reader, registry, "R", tmp_path / "r.toml", prompt=screen, clock=time_.clock,
                      sleep=time_.sleep, poll_s=0.02, timeout_s=5.0, on_ask=ask_until_the_second_card)
    other_2c = simulated_uid("R", "2c", 1)
    assert asked == [0, 0, 1] and hand.shown == [simulated_uid("R", "2c"), other_2c]
    assert any(ln.startswith("refused: this tag") and "deck S" in ln for ln in screen.lines)
    assert f"2c registered as tag {other_2c}" in screen.lines


def test_a_rehearsal_hand_passes_a_deck_between_polls_and_it_is_fit_for_play(reader, chip):
    table, time_ = ChipTable(chip), FakeClock()
    hand = RehearsalHand(table, "board", pace_s=0.1, sleep=time_.sleep)
    shuffled = DECK_A[13:] + DECK_A[:13]
    report = check_deck_with_reader(reader, simulation_registry(), "A", prompt=Screen(), clock=time_.clock,
                                    sleep=hand.passing(shuffled, hold_polls=3), quiet_s=2.0)
    assert report.fit_for_play and report.seen == 52 and set(report.passes.values()) == {1}
    assert hand.shown == shuffled and hand.lying is None


def test_a_rehearsal_hand_refuses_a_nonsense_pace(chip):
    with pytest.raises(ValueError, match="pace_s"):
        RehearsalHand(ChipTable(chip), "board", pace_s=-1)
    with pytest.raises(ValueError, match="hold_polls"):
        RehearsalHand(ChipTable(chip), "board").passing([], hold_polls=0)


# -- what the floor is told (CONTRACT.md, "The registries") ---------------------------------------
def test_a_registered_deck_is_told_whole_as_a_deck_registered_event(reader, chip, tmp_path):
    from dealerbox.domain.events import Event
    from dealerbox.tools.deck_registration import deck_registered_fields

    result = run_register(reader, Technician(chip, DECK_C), simulation_registry(), "C", tmp_path / "d.toml",
                          Screen(), back="green")
    fields = deck_registered_fields(result, "C")
    assert fields["deck"] == "C" and fields["back"] == "green"
    assert fields["tags"] == dict(zip(DECK_C, REGISTRATION_ORDER))
    assert Event.from_dict({"t": 0.0, "ev": "deck_registered", **fields}).to_dict()["tags"] == fields["tags"]


def test_a_deck_check_tells_the_missing_cards_and_the_damaged_tags(reader, chip):
    from dealerbox.domain.events import Event
    from dealerbox.tools.deck_registration import deck_checked_fields

    clone, unknown = DECK_A[20], "A1B2C3D4"
    report, _, _ = run_check(reader, chip, DECK_A[:7] + DECK_A[8:25] + [clone, unknown] + DECK_A[25:])
    fields = deck_checked_fields(report)
    assert fields == {"deck": "A", "missing": [DECK_52[7]], "damaged": [unknown, clone], "ok": False}
    Event.from_dict({"t": 0.0, "ev": "deck_checked", **fields})
    good, _, _ = run_check(reader, chip, DECK_A)
    assert deck_checked_fields(good) == {"deck": "A", "missing": [], "damaged": [], "ok": True}
    reg = simulation_registry()
    reg.add("0A0B0C0D", "A", "Ah")
    twice, _, _ = run_check(reader, chip, DECK_A + ["0A0B0C0D"], registry=reg)
    assert sorted(deck_checked_fields(twice)["damaged"]) == sorted([simulated_uid("A", "Ah"), "0A0B0C0D"])


# -- the room's registry: a tag or deck of another table or of the floor ----------------------------
R7_TAGS = {simulated_uid("R7", c): c for c in DECK_52[:6]}
B_RETIRED = simulated_uid("B", "Qs")


def room_payload():
    """The room's registry as the floor sent it: deck R7 (registered at another table) and
    deck B, retired, which stays in ``decks`` with its tags listed in ``retired``."""
    from dealerbox.link import protocol as P

    return P.build_registry(3, {"R7": {"back": "green", "tags": R7_TAGS},
                                "B": {"back": "red", "tags": {B_RETIRED: "Qs"}}}, [B_RETIRED], {}, [])


def floor_table(tmp_path, *, floor=True):
    """A simulated table's config with [floor] on (no broker needed: nothing connects) and the
    room's registry kept in its state folder as the box keeps it; its own file holds deck C."""
    from dealerbox.service.config import DEFAULT_CONFIG
    from dealerbox.service.room_registry import APPLIED_NAME

    state = tmp_path / "state"
    state.mkdir()
    (state / APPLIED_NAME).write_bytes(room_payload())
    own = DeckRegistry(active="C")
    for uid, card in zip(DECK_C, REGISTRATION_ORDER):
        own.add(uid, "C", card)
    own.backs["C"] = "blue"
    own.save(tmp_path / "decks.toml")
    text = DEFAULT_CONFIG.read_text()
    text = re.sub(r'state_dir = "[^"]*"', f'state_dir = "{state}"', text)
    text = re.sub(r'registry = "[^"]*"', f'registry = "{tmp_path / "decks.toml"}"', text, count=1)
    if floor:
        text += '\n[floor]\nenabled = true\ntable = "T02"\nhost = "localhost"\nport = 1\n'
    path = tmp_path / "table.toml"
    path.write_text(text)
    return path


def test_a_tag_of_the_rooms_registry_is_refused_with_what_it_is(reader, chip, tmp_path):
    from dealerbox.service.commands import load_table_config
    from dealerbox.tools.commands import judged_decks

    config = load_table_config(floor_table(tmp_path), check_devices=False)
    known = judged_decks(config, config.registry)
    plan = DECK_C[:3] + [simulated_uid("R7", "5c"), B_RETIRED] + DECK_C[3:]
    tech = Technician(chip, plan)
    screen = Screen()
    reg = run_register(reader, tech, config.registry, "C", tmp_path / "decks.toml", screen, replace=True,
                       known=known)
    refusals = [ln for ln in screen.lines if ln.startswith("refused")]
    assert len(refusals) == 2
    assert f"({simulated_uid('R7', '5c')}) is registered as 5c of deck R7 (green back)" in refusals[0]
    assert f"({B_RETIRED}) is registered as Qs of a deck the floor retired" in refusals[1]
    # Only the table's own file is written: the room's decks stay the floor's.
    assert reg.decks == ["C"] and DeckRegistry.load(tmp_path / "decks.toml").decks == ["C"]
    assert reg.lookup(DECK_C[3]).card == "5c"


def test_without_a_floor_the_commands_judge_with_the_tables_file_alone(tmp_path):
    from dealerbox.service.commands import load_table_config
    from dealerbox.tools.commands import judged_decks

    config = load_table_config(floor_table(tmp_path, floor=False), check_devices=False)
    assert judged_decks(config, config.registry) is config.registry


def test_badge_register_refuses_a_card_of_the_rooms_registry(reader, chip, tmp_path):
    from dealerbox.domain.badges import BadgeRegistry
    from dealerbox.service.commands import load_table_config
    from dealerbox.tools.badge_registration import register_badge
    from dealerbox.tools.commands import judged_decks

    config = load_table_config(floor_table(tmp_path), check_devices=False)
    tech = Technician(chip, [simulated_uid("R7", "2c"), "08A1B2C3"])
    screen = Screen()
    register_badge(reader, BadgeRegistry(), "1042", tmp_path / "badges.toml",
                   decks=judged_decks(config, config.registry), prompt=screen, clock=tech.clock,
                   sleep=tech.sleep, poll_s=0.02, timeout_s=30.0)
    (refusal,) = [ln for ln in screen.lines if ln.startswith("refused")]
    assert f"({simulated_uid('R7', '2c')}) is 2c of deck R7 (green back); a card cannot be a badge" in refusal


def test_deck_register_refuses_the_name_of_a_deck_of_the_room(tmp_path, capsys):
    from dealerbox.cli import main

    config = floor_table(tmp_path)
    code = main(["deck", "register", "--config", str(config), "--reader", "board", "--deck", "R7",
                 "--timeout", "0.3"])
    assert code == 2
    assert "deck R7 is the room's already (registered on the floor, 6 tags)" in capsys.readouterr().err
    assert DeckRegistry.load(tmp_path / "decks.toml").decks == ["C"]


def test_deck_check_checks_a_deck_the_floor_issued(tmp_path, capsys):
    """Deck R7 is in no file of this table: the room's registry has it, and the check judges with it."""
    from dealerbox.cli import main

    config = floor_table(tmp_path)
    code = main(["deck", "check", "--config", str(config), "--reader", "board", "--deck", "R7",
                 "--timeout", "0.3"])
    out, err = capsys.readouterr()
    assert code == 1, err
    assert "pass the cards of deck R7" in out and "NOT FIT FOR PLAY" in out and "not in the registry" not in err


def test_badge_register_judges_with_the_rooms_badges_at_a_table_with_a_floor(tmp_path):
    from dealerbox.link import protocol as P
    from dealerbox.service.commands import load_table_config
    from dealerbox.service.room_registry import APPLIED_NAME, REVOKED_BADGE
    from dealerbox.tools.commands import judged_badges

    config = load_table_config(floor_table(tmp_path), check_devices=False)
    (tmp_path / "state" / APPLIED_NAME).write_bytes(
        P.build_registry(4, {}, [], {"08A1B2C4": "2077", "08A1B2C5": "3001"}, ["08A1B2C5"]))
    assert judged_badges(config) == {"08A1B2C4": "2077", "08A1B2C5": REVOKED_BADGE}
    alone = tmp_path / "alone"
    alone.mkdir()
    assert judged_badges(load_table_config(floor_table(alone, floor=False), check_devices=False)) is None


# -- one deck-name rule, checked before the first card ---------------------------------------------
RULE = "a deck name is 1 to 64 printable characters, no '/'"


def _state_files(tmp_path):
    """Every file under the table's state folder and its registry, with its bytes: what a
    refused command must leave as it found it."""
    return {p: p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}


def _cli(tmp_path, *argv):
    """``dealerbox`` as a technician runs it: a process of its own, its arguments as bytes (so a
    name the file system's encoding cannot spell reaches it as the shell would hand it over)."""
    import os
    import subprocess
    import sys

    return subprocess.run([os.fsencode(sys.executable), b"-m", b"dealerbox.cli",
                           *(a if isinstance(a, bytes) else os.fsencode(a) for a in argv)],
                          capture_output=True, text=True, errors="backslashreplace", stdin=subprocess.DEVNULL,
                          cwd=tmp_path, timeout=120, env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "xdg")})


@pytest.mark.parametrize("name, shown", [
    ("D" * 10_000, "'DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD... (10002 characters)"),
    ("D" * 65, "(67 characters)"),
    ("red/7", "'red/7'"),
    (b"deck\xff", r"'deck\udcff'"),          # a lone surrogate: argv's bytes that are no UTF-8
])
def test_deck_register_refuses_a_name_the_floor_would_before_asking_for_a_card(tmp_path, name, shown):
    config = floor_table(tmp_path)
    before = _state_files(tmp_path)
    proc = _cli(tmp_path, "deck", "register", "--config", str(config), "--reader", "board", "--deck", name,
                "--timeout", "30")
    assert proc.returncode == 2, proc.stderr
    assert "next:" not in proc.stdout and proc.stdout == ""     # no card was asked for
    (line,) = proc.stderr.splitlines()                         # one message
    assert line.startswith(f"dealerbox deck register: --deck: {RULE}, not ")
    assert line.count("printable") == 1 and shown in line and line.endswith("nothing was read or written")
    assert len(line) < 200
    assert _state_files(tmp_path) == before                    # nothing written: no file, no journal, no outbox


def test_deck_register_refuses_a_nul_in_the_name(tmp_path, capsys):
    """A NUL cannot travel in a process's arguments: the same command, called in the process."""
    from dealerbox.cli import main

    config = floor_table(tmp_path)
    before = _state_files(tmp_path)
    code = main(["deck", "register", "--config", str(config), "--reader", "board", "--deck", "C\x002",
                 "--timeout", "30"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f"dealerbox deck register: --deck: {RULE}, not 'C\\x002'; nothing was read or written\n"
    assert _state_files(tmp_path) == before


def test_deck_register_refuses_a_back_the_floor_would_before_asking_for_a_card(tmp_path):
    config = floor_table(tmp_path)
    before = _state_files(tmp_path)
    proc = _cli(tmp_path, "deck", "register", "--config", str(config), "--reader", "board", "--deck", "C2",
                "--back", "b" * 41, "--timeout", "30")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("dealerbox deck register: --back: a back's colour is at most 40 printable")
    assert _state_files(tmp_path) == before


def test_a_good_name_of_the_rule_is_asked_for_its_cards(tmp_path):
    """The other side of the rule: a name with a space, a dot and letters no ASCII has (as the
    floor takes them) is a deck name; the command asks for the first card (and times out here)."""
    config = floor_table(tmp_path)
    proc = _cli(tmp_path, "deck", "register", "--config", str(config), "--reader", "board", "--deck", "Bleu n.7 é",
                "--timeout", "0.3")
    assert proc.returncode == 1, proc.stderr
    assert "next: 2c (two of clubs)" in proc.stdout and "nothing was written" in proc.stderr
    assert DeckRegistry.load(tmp_path / "decks.toml").decks == ["C"]


def test_deck_check_refuses_a_name_that_is_none(tmp_path):
    config = floor_table(tmp_path)
    proc = _cli(tmp_path, "deck", "check", "--config", str(config), "--reader", "board", "--deck", "a/b",
                "--timeout", "30")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"dealerbox deck check: --deck: {RULE}, not 'a/b'; nothing was read or written\n"


def test_register_deck_refuses_the_name_itself(reader, chip, tmp_path):
    """The library's own check, for a caller that is not the CLI: before the first card."""
    asked = []
    with pytest.raises(RegistryError, match=re.escape(f"{RULE}, not 'x/y'")):
        register_deck(reader, DeckRegistry(), "x/y", tmp_path / "decks.toml", prompt=asked.append,
                      timeout_s=0.1)
    assert asked == [] and not (tmp_path / "decks.toml").exists()


@pytest.mark.parametrize("name", ["D" * 65, "a/b", "tab\there"])
def test_a_registry_file_with_a_name_that_is_none_names_the_file_and_the_rule(tmp_path, name):
    from dealerbox.errors import ConfigError
    import tomli_w

    path = tmp_path / "decks.toml"
    path.write_text(tomli_w.dumps({"active": name, "decks": {name: {"back": "", "tags": {}}}}))
    with pytest.raises(ConfigError) as caught:
        DeckRegistry.load(path)
    text = str(caught.value)
    assert text.startswith(f"{path}: decks = ") and text.endswith("expected each [decks.NAME] to name a deck "
                                                                  "(1 to 64 printable characters, no '/')")


def test_the_floor_refuses_a_name_with_the_same_words():
    from dealerbox.floor.store.registry import RegistryRefused, check_deck_name

    with pytest.raises(RegistryRefused) as caught:
        check_deck_name("Z" * 10_000)
    assert str(caught.value) == f"{RULE}, not '{'Z' * 39}... (10002 characters)"
    assert check_deck_name(" Bleu 7 ") == "Bleu 7"
