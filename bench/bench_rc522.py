"""RC522 reader costs, counted in SPI transfers on the MFRC522 chip emulator.

Transfers, not milliseconds: the count is deterministic, and on a Pi each transfer
costs roughly 50-100 us of Python and spidev overhead, so it is also the time.

Figures returned by :func:`run`:

- ``rc522_spi_per_empty_poll``: our driver polling an empty field (WUPA, then the
  chip timer's TimerIRq). Goal: at most 25.
- ``rc522_spi_per_empty_poll_stock``: the stock ``mfrc522`` 0.0.7 path
  (``MFRC522_Request(PICC_REQIDL)``, what ``SimpleMFRC522.read_id_no_block`` does
  first) on the same empty field. Baseline: about 2,000, because its wait loop
  never sees the timer.
- ``rc522_spi_per_uid7_read``: our poll reading one 7-byte NTAG UID completely (two
  cascade levels, CRC and BCC checked, tag halted at the end). The stock path cannot
  do this at all (it stops at level 1).
- ``rc522_spi_per_inventory_3_tags``: our poll taking the inventory of three 7-byte
  tags whose UIDs collide at level 1.

Prints nothing.
"""

from __future__ import annotations

import logging

from dealerbox.rules.registry import simulated_uid
from hardware_sim.rc522 import RC522Emulator, simulated_spi


def _mean_transfers(chip, action, repeat: int) -> float:
    total = 0
    for _ in range(repeat):
        chip.reset_counters()
        action()
        total += chip.transfers
    return round(total / repeat, 1)


def run() -> dict:
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory

    from dealerbox.hw.rc522 import RC522Reader

    saved_factory = Device.pin_factory
    Device.pin_factory = MockFactory()
    stock_logger = logging.getLogger("mfrc522Logger")
    saved_handlers = list(stock_logger.handlers)
    chip = RC522Emulator(0, 0)
    try:
        with simulated_spi(chip):
            with RC522Reader("bench", zone="board", bus=0, device=0) as reader:
                empty = _mean_transfers(chip, reader.poll, 20)

                chip.place(simulated_uid("A", "Ah"))
                uid7 = _mean_transfers(chip, reader.poll, 5)

                for card in ("Kd", "7c"):
                    chip.place(simulated_uid("A", card))
                inventory3 = _mean_transfers(chip, reader.poll, 5)
                assert len(reader.poll()["board"]) == 3, "inventory incomplete"
                chip.clear_field()

            import mfrc522

            stock = mfrc522.MFRC522(bus=0, device=0)
            stock_empty = _mean_transfers(chip, lambda: stock.MFRC522_Request(stock.PICC_REQIDL), 3)
            stock.spi.close()   # not Close_MFRC522(): that would GPIO.cleanup() every pin
    finally:
        stock_logger.handlers[:] = saved_handlers
        Device.pin_factory.reset()
        Device.pin_factory = saved_factory
    return {
        "rc522_spi_per_empty_poll": empty,
        "rc522_spi_per_empty_poll_stock": stock_empty,
        "rc522_spi_per_uid7_read": uid7,
        "rc522_spi_per_inventory_3_tags": inventory3,
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run()))
