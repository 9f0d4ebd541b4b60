"""Nothing the README once said is lost: every command, option, config key and bench
figure that the README named before it became a front page (682 lines, at commit
fdf75e9) is still documented in README.md, docs/*.md or docs/floor/*.md.

The lists are data: they were taken from ``git show HEAD:README.md`` of that commit
(backticked spans and code blocks: ``dealerbox`` subcommands, ``make`` targets,
``python -m`` modules; ``--options``; snake_case names, ``[sections]``, environment
variables and irregularity ids), since that README is gone. A name dropped from the
code is dropped here too, on purpose, with the docs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: ``dealerbox ...`` subcommands, ``make`` targets and ``python -m`` modules.
COMMANDS = [
    "dealerbox badge list", "dealerbox badge register", "dealerbox badge remove",
    "dealerbox check-config", "dealerbox deck check", "dealerbox deck register",
    "dealerbox demo", "dealerbox floor collect", "dealerbox floor migrate",
    "dealerbox floor view", "dealerbox floor web", "dealerbox history",
    "dealerbox journal verify", "dealerbox replay", "dealerbox run", "dealerbox sim",
    "make bench", "make dist", "make floor", "make run", "make test", "make wheelhouse",
    "python -m bench.bench_rc522",
]

#: Command-line options.
OPTIONS = [
    "--back", "--config", "--decisions", "--deck", "--demo", "--dry-run", "--for",
    "--forever", "--from", "--hand", "--head", "--input", "--json", "--lang", "--no-devices",
    "--profile", "--reader", "--real", "--record", "--registry", "--replace", "--scenario",
    "--simulated", "--since", "--state-dir", "--table", "--timeout", "--uninstall",
    "--upgrade", "--version", "--wheelhouse",
]

#: Sections of the table config and floor.toml, written ``[name]``.
SECTIONS = ["badges", "floor", "lcd", "mouth_sensor", "panel", "presence", "store"]

#: Config keys, profile keys, event and procedure names, bench figures,
#: environment variables and irregularity ids.
NAMES = [
    "BOARD_NOT_FROM_SHOE", "BOXED_CARD", "BOXED_TWICE", "DEALERBOX_CONFIG", "DOUBLE_BURN",
    "DUPLICATE_CARD", "EXPOSED_DEAL", "EXPOSED_EARLY", "EXPOSED_TWICE", "EXTRA_CARD",
    "EXTRA_CARDS", "FOREIGN_CARD", "FOUR_CARD_FLOP", "MISSED_BURN", "MISSING_CARD",
    "PREMATURE_FLOP", "PREMATURE_RIVER", "PREMATURE_TURN", "RABBIT_HUNT", "READER_DEGRADED",
    "SEAT_ERROR", "SHORT_DEAL", "STUB_CONTAMINATION", "UNKNOWN_TAG", "UNREAD_CARD",
    "WRONG_CORRECTION", "backend", "board_dropout_s", "board_grace_s", "board_off",
    "board_on", "call_floor", "count_hole_cards", "e2e_cpu_ms_p99_pi4",
    "e2e_cpu_to_pi4_factor", "e2e_latency_ms_p99_pi4_sd", "engine_events_per_s",
    "floor_group_lines_per_s", "floor_group_lost", "floor_group_ms_p99",
    "floor_lines_duplicated", "floor_lines_lost", "floor_ms_p99", "floor_ms_p99_to_view",
    "floor_report_s", "floor_single_sqlite_lines_per_s", "floor_single_sqlite_ms_p99",
    "floor_stats_ms_p99", "floor_tables", "fuzz_tracebacks", "gpio.factory",
    "journal_damage", "journal_damage_start_pct", "lcd_i2c_bytes_new_correction",
    "lcd_ms_new_correction_100khz", "light_mqtt_cpu_ms_per_line", "new_hand",
    "noise_cascades", "noise_daemon_cascades", "noise_daemon_detection_pct",
    "noise_daemon_false_alarms_per_1000_hands_mouth", "noise_detection_pct",
    "noise_false_alarms_per_1000_hands_mouth", "paho_cpu_ms_per_line", "poll_s",
    "queue_lines", "rc522_board_5_found_pct", "rc522_pi4_ms_board_poll_5_tags",
    "rc522_pi4_ms_shoe_next_card", "rc522_spi_per_board_poll_5_tags",
    "rc522_spi_per_empty_poll", "rc522_spi_per_uid4_read", "rc522_spi_per_uid7_read",
    "reader_fault", "reader_max_unread_share", "reader_ok", "reader_recent_draws",
    "registry", "retry_s", "settle_s", "shoe_rearm_s", "storage_events_lost_after_recovery",
    "storage_full_decisions_kept_pct", "url", "zone_dropout_s", "zone_off",
    "zone_on",
]


def documented_text() -> str:
    """README.md, every docs/*.md and the floor's pages (docs/floor/*.md), with each run of
    white space one space (so a command broken over two lines still reads as one)."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "floor").glob("*.md"))]
    return re.sub(r"\s+", " ", " ".join(p.read_text(encoding="utf-8") for p in files))


@pytest.fixture(scope="module")
def text() -> str:
    return documented_text()


def test_the_lists_hold_nothing_twice():
    for names in (COMMANDS, OPTIONS, SECTIONS, NAMES):
        assert len(names) == len(set(names))


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_is_still_documented(command, text):
    assert command in text


@pytest.mark.parametrize("option", OPTIONS)
def test_every_option_is_still_documented(option, text):
    assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text), option


@pytest.mark.parametrize("section", SECTIONS)
def test_every_section_is_still_documented(section, text):
    assert f"[{section}]" in text, section


@pytest.mark.parametrize("name", NAMES)
def test_every_key_and_figure_is_still_documented(name, text):
    assert re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text), name


def test_the_readme_is_a_front_page():
    """The README says what the box is and how to run it; the reference is in docs/."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    for command in ("make run", "make test", "make floor", "make bench"):
        assert f"`{command}`" in readme or command in readme, command
    linked = set(re.findall(r"\]\(docs/([\w/]+\.md)", readme))
    documents = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").glob("*.md")}
    floor = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs" / "floor").glob("*.md")}
    assert "floor/install.md" in floor   # the floor's manual is a folder: its pages are named too
    assert documents | floor <= linked, sorted((documents | floor) - linked)
