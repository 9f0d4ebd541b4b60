"""The 40-pin header's map is the one source of pin names: docs/WIRING.md's pin tables
agree with it, and with the shipped configs' BCM numbers, row by row."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dealerbox.hw.header import GROUND_PINS, HEADER_PIN, pin_words
from dealerbox.service.config import TABLES_DIR, load_config

WIRING = Path(__file__).resolve().parents[2] / "docs" / "WIRING.md"
_ROW = re.compile(r"^\| (?P<device>[^|]*) \| (?P<signal>[^|]*) \| (?P<bcm>\d+) \| (?P<pin>\d+) \|$")


def wiring_rows(section: str) -> list[dict]:
    """The rows of the pin table under the heading that names *section*'s file."""
    text = WIRING.read_text(encoding="utf-8")
    start = text.index(f"## `{section}`")
    end = text.find("\n## ", start + 1)
    rows, device = [], ""
    for line in text[start:end if end > 0 else None].splitlines():
        m = _ROW.match(line.strip())
        if m:
            device = m["device"].strip() or device
            rows.append({"device": device, "signal": m["signal"].strip(), "bcm": int(m["bcm"]),
                         "pin": int(m["pin"])})
    return rows


@pytest.mark.parametrize("section", ["pi4-rc522.toml", "pi5-pepper.toml"])
def test_every_row_of_wiring_md_names_the_header_pin_of_its_bcm(section):
    rows = wiring_rows(section)
    assert len(rows) > 15
    for row in rows:
        assert HEADER_PIN[row["bcm"]] == row["pin"], row


@pytest.mark.parametrize("section", ["pi4-rc522.toml", "pi5-pepper.toml"])
def test_wiring_md_has_the_configs_leds_and_buttons_on_their_pins(section):
    config = load_config(TABLES_DIR / section, check_devices=False)
    rows = {row["device"]: row["bcm"] for row in wiring_rows(section)}
    pins = config.panel.pins
    for colour, bcm in pins.leds.items():
        assert rows[f"LED {colour}"] == bcm
    assert rows["buzzer (active)"] == pins.buzzer
    for name, bcm in pins.buttons.items():
        found = [b for device, b in rows.items() if device.startswith("button ")
                 and device.split(" (")[0][len("button "):].replace(" ", "_").lower() == name]
        assert found == [bcm], name


def test_pin_words_name_both_numbers():
    assert pin_words(23) == "BCM 23 (pin 16)"
    assert pin_words(40) == "BCM 40"
    assert len(set(HEADER_PIN.values())) == len(HEADER_PIN)
    assert not set(HEADER_PIN.values()) & set(GROUND_PINS)
