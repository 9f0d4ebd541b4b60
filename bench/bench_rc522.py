"""RC522 reader costs on the MFRC522 chip emulator with strict (NTAG-like) tags and a Pi's bus costs.

Every time here is the emulator's clock: each SPI transfer costs the host's overhead
(Pi 4: 50 us, Pi 5: 25 us per ``xfer2``) plus its bytes at the driver's SPI clock,
and each RF frame its air time at 106 kbit/s and the tag's answer time. Transfers
are counted too: on a Pi each one is a system call.

Figures returned by :func:`run` (goal; baseline = the driver before issue 13, which
re-inventoried every card on every poll, on the kinder emulator of the time):

- ``rc522_spi_per_empty_poll``: polling an empty field. Goal <= 10; baseline 15.
- ``rc522_spi_per_uid7_read``: one 7-byte NTAG placed, mean over 5 polls (the first
  reads its UID through both cascade levels, the others check it). Goal <= 70;
  baseline 124. ``rc522_spi_first_read_uid7``: the first of those polls alone.
- ``rc522_spi_per_inventory_3_tags``: two more such tags laid down together (their
  UIDs collide at level 1), mean over 5 polls. Baseline 462.
- ``rc522_spi_per_board_poll_5_tags``: five board cards, known, one poll. Goal
  <= 250; baseline 800. ``rc522_pi4_ms_board_poll_5_tags`` / ``..._pi5_...``: its
  time with Pi 4 / Pi 5 bus costs. Goal <= 22 ms on a Pi 4; baseline about 55.
  ``rc522_air_ms_board_poll_5_tags``: the part of it the RF field is busy.
- ``rc522_board_5_found_pct``: the share of polls that report all five cards,
  strict tags, no loss. Goal >= 99.9.
- ``rc522_board_5_found_3polls_pct``: with 5 % coupling loss per frame for every
  tag, the share of polls after which each of the five cards was reported in at
  least one of the last three polls (what presence tracking needs). Goal >= 99;
  ``rc522_board_5_found_pct_loss5``: the same loss, all five in one poll
  (baseline: 53 % with 5 % loss per wake).
- ``rc522_pi4_ms_shoe_next_card``: a shoe reader (``field = "pass_through"``) on a
  Pi 4 bus, the card before still known but gone, the next card arrived: the time
  from the start of a poll until a poll reports it (mean over 20 cards). Baseline:
  the same reader with ``field = "resting"`` (what the shoe ran before), measured
  alongside as ``rc522_pi4_ms_shoe_next_card_resting``.
"""

from __future__ import annotations

from collections import deque

from dealerbox.hw.rc522 import RC522Reader
from dealerbox.rules.registry import simulated_uid
from hardware_sim.rc522 import PI4, PI5, RC522Emulator

BOARD = ("Ah", "Kd", "2c", "Ts", "7h")
POLLS = 3000
GOALS = {
    "rc522_spi_per_empty_poll": ("<=", 10, "15"),
    "rc522_spi_per_uid7_read": ("<=", 70, "124"),
    "rc522_spi_first_read_uid7": ("", None, ""),
    "rc522_spi_per_inventory_3_tags": ("", None, "462"),
    "rc522_spi_per_board_poll_5_tags": ("<=", 250, "800"),
    "rc522_pi4_ms_board_poll_5_tags": ("<=", 22, "about 55"),
    "rc522_pi5_ms_board_poll_5_tags": ("", None, ""),
    "rc522_air_ms_board_poll_5_tags": ("", None, "about 13 (RF alone)"),
    "rc522_board_5_found_pct": (">=", 99.9, "fewer with strict tags: 1 of 5 cards"),
    "rc522_board_5_found_3polls_pct": (">=", 99, ""),
    "rc522_board_5_found_pct_loss5": ("", None, "53 (5% loss per wake)"),
    "rc522_pi4_ms_shoe_next_card": ("", None, "rc522_pi4_ms_shoe_next_card_resting"),
    "rc522_pi4_ms_shoe_next_card_resting": ("", None, ""),
}


def _mean_transfers(chip, action, repeat: int) -> float:
    total = 0
    for _ in range(repeat):
        chip.reset_counters()
        action()
        total += chip.transfers
    return round(total / repeat, 1)


def _reader(chip) -> RC522Reader:
    return RC522Reader("bench", zone="board", reset_pin=None, spi=chip)


def _board(chip, **kwargs) -> set[str]:
    ordered = [simulated_uid("A", card) for card in BOARD]   # a fixed order: reproducible faults
    for uid in ordered:
        chip.place(uid, **kwargs)
    return set(ordered)


def _settle(reader, cards) -> None:
    for _ in range(50):
        if reader.poll()["board"] == cards:
            return
    raise AssertionError("the board reader never found the five cards")


def board_poll_cost(host) -> tuple[float, float, float]:
    """(transfers, ms, air ms) of one poll of five known board cards, on *host*'s bus."""
    chip = RC522Emulator(0, 0, host=host, power_up_us=0)
    with _reader(chip) as reader:
        cards = _board(chip)
        _settle(reader, cards)
        reader.poll()
        chip.reset_counters()
        start = chip.now_us
        assert reader.poll()["board"] == cards
        return chip.transfers, (chip.now_us - start) / 1000, chip.air_us / 1000


def shoe_next_card_ms(field: str, cards: int = 20) -> float:
    """Mean Pi 4 bus time from a poll's start until a poll reports the card that just arrived."""
    chip = RC522Emulator(0, 0, host=PI4, power_up_us=0)
    deck = [simulated_uid("A", rank + suit) for suit in "shdc" for rank in "AKQJT98"][:cards + 1]
    total = 0.0
    with RC522Reader("bench", zone="shoe", field=field, reset_pin=None, spi=chip) as reader:
        chip.place(deck[0])
        reader.poll()
        reader.poll()
        for before, card in zip(deck, deck[1:]):
            chip.remove(before)      # still known: it left between two polls
            chip.place(card)
            start = chip.now_us
            for _ in range(10):
                if card in reader.poll()["shoe"]:
                    break
            else:
                raise AssertionError(f"the {field} shoe reader never found {card}")
            total += chip.now_us - start
            reader.poll()            # lying at the mouth a moment: known, checked
    return round(total / cards / 1000, 2)


def found_rates(loss: float, polls: int = POLLS, seed: int = 13) -> tuple[float, float]:
    """(% of polls reporting all 5 cards, % of polls after which each was seen in the last 3)."""
    chip = RC522Emulator(0, 0, seed=seed, power_up_us=0)
    with _reader(chip) as reader:
        cards = _board(chip, loss=loss)
        _settle(reader, cards)
        last3: deque = deque(maxlen=3)
        all_in_one = all_in_three = 0
        for _ in range(polls):
            seen = reader.poll()["board"]
            last3.append(seen)
            all_in_one += seen == cards
            all_in_three += set().union(*last3) >= cards
    return round(100 * all_in_one / polls, 2), round(100 * all_in_three / polls, 2)


def run() -> dict:
    figures: dict = {}
    chip = RC522Emulator(0, 0, power_up_us=0)
    with _reader(chip) as reader:
        reader.poll()
        figures["rc522_spi_per_empty_poll"] = _mean_transfers(chip, reader.poll, 20)
        chip.place(simulated_uid("A", "Ah"))
        chip.reset_counters()
        reader.poll()
        figures["rc522_spi_first_read_uid7"] = chip.transfers
        chip.remove(simulated_uid("A", "Ah"))
        for _ in range(5):
            reader.poll()           # forgets it
    chip = RC522Emulator(0, 0, power_up_us=0)
    with _reader(chip) as reader:
        reader.poll()
        chip.place(simulated_uid("A", "Ah"))
        figures["rc522_spi_per_uid7_read"] = _mean_transfers(chip, reader.poll, 5)
        for card in ("Kd", "7c"):
            chip.place(simulated_uid("A", card))
        figures["rc522_spi_per_inventory_3_tags"] = _mean_transfers(chip, reader.poll, 5)
        assert len(reader.poll()["board"]) == 3, "inventory incomplete"

    transfers, pi4_ms, air_ms = board_poll_cost(PI4)
    _, pi5_ms, _ = board_poll_cost(PI5)
    figures["rc522_spi_per_board_poll_5_tags"] = transfers
    figures["rc522_pi4_ms_board_poll_5_tags"] = round(pi4_ms, 2)
    figures["rc522_pi5_ms_board_poll_5_tags"] = round(pi5_ms, 2)
    figures["rc522_air_ms_board_poll_5_tags"] = round(air_ms, 2)
    figures["rc522_board_5_found_pct"], _ = found_rates(0.0)
    figures["rc522_pi4_ms_shoe_next_card"] = shoe_next_card_ms("pass_through")
    figures["rc522_pi4_ms_shoe_next_card_resting"] = shoe_next_card_ms("resting")
    figures["rc522_board_5_found_pct_loss5"], figures["rc522_board_5_found_3polls_pct"] = found_rates(0.05)

    for key, (op, goal, baseline) in GOALS.items():
        target = f"goal {op} {goal}" if op else ""
        verdict = ""
        if op:
            ok = figures[key] <= goal if op == "<=" else figures[key] >= goal
            verdict = "ok" if ok else "MISSED"
        print(f"   {key:34} {figures[key]:>9}  {target:12} {'baseline ' + baseline if baseline else '':38} {verdict}")
    return figures


if __name__ == "__main__":
    import json

    print(json.dumps(run()))
