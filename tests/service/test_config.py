"""The table config: the shipped tables load, and every broken copy is refused by name.

Each validation test writes a broken copy of a shipped table into tmp_path and
checks that the error names the file, the dotted key, the value found and what
was expected.
"""

from __future__ import annotations

import copy
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest
import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from dealerbox.service import config as config_module
from dealerbox.service.config import (DEFAULT_CONFIG, TABLES_DIR, ZONES, ConfigError, JournalSection,
                                     PresenceSection, TableConfig, check_config, load_config)
from dealerbox.errors import DealerboxError
from dealerbox.domain.decks import simulated_uid, simulation_registry

SIM = TABLES_DIR / "sim.toml"
PI4 = TABLES_DIR / "pi4-rc522.toml"
PI5 = TABLES_DIR / "pi5-pepper.toml"


def table_data(path: Path = SIM) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def write(tmp_path: Path, data: dict, name: str = "table.toml") -> Path:
    path = tmp_path / name
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    return path


def broken(tmp_path: Path, change, base: Path = SIM) -> Path:
    """A copy of *base* with *change(data)* applied, written to tmp_path."""
    data = copy.deepcopy(table_data(base))
    change(data)
    return write(tmp_path, data)


def refused(path: Path, key: str, value, expected: str, *, check_devices: bool = False) -> ConfigError:
    """Assert load_config refuses *path* at *key*, and the message says everything a technician needs."""
    with pytest.raises(ConfigError) as info:
        load_config(path, check_devices=check_devices)
    err = info.value
    message = str(err)
    assert str(path) in message
    assert err.key == key, message
    assert f"{key} = {value!r}" in message or (value is None and f"{key} is missing" in message), message
    assert expected in message, message
    return err


@pytest.fixture
def dev(tmp_path, monkeypatch):
    """A stand-in /dev: the device nodes a Pi 4 table needs, as plain files."""
    folder = tmp_path / "dev"
    folder.mkdir()
    for node in ("spidev0.0", "spidev1.0", "i2c-1", "gpiochip0", "ttyAMA0"):
        (folder / node).touch()
    monkeypatch.setattr(config_module, "_DEV", folder)
    return folder


def pi_copy(tmp_path: Path, base: Path) -> Path:
    """A Pi table whose state and registry live in tmp_path (the registry file exists)."""
    registry = tmp_path / "decks.toml"
    simulation_registry().save(registry)

    def change(d):
        d["table"]["registry"] = str(registry)
        d["table"]["state_dir"] = str(tmp_path / "state")
    return broken(tmp_path, change, base)


# -- the shipped tables -------------------------------------------------------------

def test_default_config_is_the_all_simulated_table():
    assert DEFAULT_CONFIG == SIM
    cfg = load_config(DEFAULT_CONFIG)
    assert isinstance(cfg, TableConfig)
    assert cfg.path == SIM.resolve()
    assert set(cfg.readers) == {"shoe", "board"}
    assert {r.kind for r in cfg.readers.values()} == {"rc522"}
    assert cfg.simulated_devices == ("readers.shoe", "readers.board", "panel", "lcd")
    assert cfg.device_nodes == ()
    assert cfg.gpio_factory == "mock"
    assert cfg.zone_readers() == {"shoe": "shoe", "board": "board"}
    assert cfg.profile.name == "tda-2019" and cfg.language == "en"
    assert len(cfg.registry) == len(simulation_registry())
    assert cfg.registry_source == "builtin:sim"
    # make run keeps its state in the checkout's state/ (ignored by git)
    assert cfg.state_dir == (TABLES_DIR.parent.parent / "state").resolve()
    assert cfg.tick_s == 0.25
    assert cfg.journal == JournalSection(sync="event", group_window_s=0.05, group_events=64, keep_days=90)
    assert cfg.presence == PresenceSection(shoe_rearm_s=1.2, board_dropout_s=0.5, zone_dropout_s=0.5, settle_s=0.3)
    assert (cfg.lcd.cols, cfg.lcd.rows, cfg.lcd.port, cfg.lcd.address, cfg.lcd.charmap) == (20, 4, 1, 0x27, "A00")


def test_sim_table_mirrors_the_pi4_wiring():
    sim, pi4 = load_config(SIM), load_config(PI4, check_devices=False)
    assert sim.panel.pins == pi4.panel.pins
    assert {n: r.options for n, r in sim.readers.items()} == {n: r.options for n, r in pi4.readers.items()}


def test_pi4_table_loads_without_devices():
    cfg = load_config(PI4, check_devices=False)
    shoe, board = cfg.readers["shoe"], cfg.readers["board"]
    # one RC522 per SPI bus: some boards never release MISO
    assert (shoe.options.bus, shoe.options.device) == (0, 0)
    assert (board.options.bus, board.options.device) == (1, 0)
    assert shoe.zones == ("shoe",) and board.zones == ("board",)
    assert cfg.device_nodes == ("/dev/spidev0.0", "/dev/spidev1.0", "/dev/i2c-1")
    assert cfg.simulated_devices == ()
    assert cfg.gpio_factory == "rpigpio"
    assert cfg.state_dir == Path("/var/lib/dealerbox")
    assert cfg.registry is None  # the box's registry file is not on this machine
    assert cfg.registry_source == "/var/lib/dealerbox/decks.toml"
    assert cfg.panel.pins.buzzer == 12 and len(cfg.panel.pins.buttons) == 10


def test_pi5_table_loads_without_devices():
    cfg = load_config(PI5, check_devices=False)
    (c1,) = cfg.readers.values()
    assert c1.kind == "pepper_c1" and c1.backend == "real"
    assert c1.zones == ("shoe", "board", "burn")
    assert c1.options.antennas == {1: "shoe", 2: "board", 3: "burn"}
    assert c1.options.url == "/dev/ttyAMA0"
    assert cfg.device_nodes == ("/dev/ttyAMA0", "/dev/i2c-1")
    assert cfg.gpio_factory == "lgpio"
    assert "players_down" in cfg.panel.pins.buttons


@pytest.mark.parametrize("base, node, key, value", [
    (PI4, "/dev/spidev0.0", "readers.shoe.bus", 0),
    (PI5, "/dev/ttyAMA0", "readers.c1.url", "/dev/ttyAMA0"),
])
def test_a_missing_device_node_is_named(base, node, key, value):
    err = refused(base, key, value, node, check_devices=True)
    assert "existing device node" in err.expected


def test_pi_tables_load_on_a_box_with_their_devices(tmp_path, dev):
    for base in (PI4, PI5):
        cfg = load_config(pi_copy(tmp_path, base))
        assert cfg.registry is not None and len(cfg.registry) == len(simulation_registry())


@pytest.mark.parametrize("node, key, value", [
    ("spidev1.0", "readers.board.bus", 1),
    ("i2c-1", "lcd.port", 1),
])
def test_each_missing_node_is_named(tmp_path, dev, node, key, value):
    (dev / node).unlink()
    refused(pi_copy(tmp_path, PI4), key, value, f"/dev/{node}", check_devices=True)


def test_a_machine_without_gpio_is_refused_for_real_gpio(tmp_path, dev):
    (dev / "gpiochip0").unlink()
    refused(pi_copy(tmp_path, PI4), "gpio.factory", "rpigpio", "/dev/gpiochip", check_devices=True)


def test_a_pyserial_url_needs_no_device_node(tmp_path, dev):
    (dev / "ttyAMA0").unlink()
    path = pi_copy(tmp_path, PI5)
    data = tomllib.loads(path.read_text())
    data["readers"]["c1"]["url"] = "socket://192.0.2.10:7000"
    cfg = load_config(write(tmp_path, data))
    assert cfg.readers["c1"].device_node is None
    assert cfg.device_nodes == ("/dev/i2c-1",)


def test_the_registry_file_must_exist_on_the_box(tmp_path, dev):
    path = pi_copy(tmp_path, PI4)
    (tmp_path / "decks.toml").unlink()
    refused(path, "table.registry", str(tmp_path / "decks.toml"), "an existing deck registry file",
            check_devices=True)
    assert load_config(path, check_devices=False).registry is None


# -- the typed sections are what the drivers take -------------------------------------------

def test_reader_options_open_the_rc522_driver_on_the_chip_emulator():
    from dealerbox.service.kinds import open_reader
    from hardware_sim.rc522 import make_tag
    from hardware_sim.table import SimulatedTable

    cfg = load_config(SIM)
    uid = simulated_uid("A", "Ah")
    with SimulatedTable(cfg) as table:
        board_chip = table.chips["board"]
        board_chip.field[bytes.fromhex(uid)] = make_tag(uid)
        with open_reader(cfg.readers["board"], table.buses) as board, \
                open_reader(cfg.readers["shoe"], table.buses) as shoe:
            assert board.poll() == {"board": frozenset({uid})}
            assert shoe.poll() == {"shoe": frozenset()}


class _LoopBuses:
    """Real serial ports replaced by pyserial's loop:// (the config's own URL stays in the options)."""

    def serial_url(self, reader, url):
        return "loop://"


def test_serial_options_fit_the_serial_drivers(tmp_path, monkeypatch):
    from dealerbox.hw.serial.pepper import PepperC1Reader
    from dealerbox.hw.serial.shoe_line import ShoeLineReader
    from dealerbox.service.kinds import open_reader, supervise

    # Build the drivers without connecting, as the test of the params did.
    for cls in (PepperC1Reader, ShoeLineReader):
        monkeypatch.setattr(cls, "__init__", _no_connect(cls.__init__))
    cfg = load_config(PI5, check_devices=False)
    with open_reader(cfg.readers["c1"], _LoopBuses()) as c1:
        assert c1.zones == ("shoe", "board", "burn") and c1.name == "c1"
    # backoff_max_s goes to the one owner of reopening, the reader's supervisor.
    with supervise(cfg.readers["c1"], _LoopBuses()) as supervisor:
        assert supervisor.backoff_max == 30.0 and supervisor.name == "c1"

    def shoe_line(d):
        d["readers"]["board"] = {"kind": "shoe_line", "backend": "real", "url": "loop://",
                                 "antennas": {"1": "board", "2": "burn", "3": "burn"},
                                 "stall_timeout_s": 3.0}
    cfg = load_config(broken(tmp_path, shoe_line))
    board = cfg.readers["board"]
    assert board.zones == ("board", "burn")
    with open_reader(board, _LoopBuses()) as reader:
        assert reader.zones == ("board", "burn") and reader.stall_timeout == 3.0


def _no_connect(init):
    def wrapped(self, *args, **kwargs):
        init(self, *args, connect=False, **kwargs)
    return wrapped


def test_other_sections_feed_their_drivers(tmp_path):
    from hardware_sim.i2c_lcd import SimulatedI2cBus

    cfg = load_config(SIM)
    assert cfg.presence.tracker().board_dropout == 0.5
    with cfg.journal.open(tmp_path / "journal") as journal:
        assert journal.keep_days == 90 and journal.sync == "event"
    events = []
    with cfg.panel.open(pin_factory="mock", sink=events.append, poll_interval_s=None) as panel:
        assert panel.players == 6 and set(panel.leds) == {"green", "amber", "red"}
    bus = SimulatedI2cBus.with_lcd(cfg.lcd.cols, cfg.lcd.rows, address=cfg.lcd.address)
    with cfg.lcd.open(bus) as lcd:
        assert (lcd.cols, lcd.rows) == (20, 4)


def test_a_simulated_serial_reader_may_leave_the_url_to_the_daemon(tmp_path):
    def change(d):
        d["readers"]["board"] = {"kind": "pepper_c1", "backend": "sim", "antennas": {"2": "board"}}
    cfg = load_config(broken(tmp_path, change))
    assert cfg.readers["board"].options.url is None
    assert cfg.readers["board"].device_node is None


# -- errors -------------------------------------------------------------------------

def test_config_error_is_a_value_error():
    assert issubclass(ConfigError, ValueError) and issubclass(ConfigError, DealerboxError)


def test_bad_toml_names_the_file(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text("[table\nname = 1\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(path) in str(info.value) and info.value.key == "(syntax)" and "valid TOML" in str(info.value)


def test_a_missing_file_names_the_file(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "nope.toml")
    assert info.value.key == "(file)" and "nope.toml" in str(info.value)


# types and bounds
@pytest.mark.parametrize("change, key, value, expected", [
    (lambda d: d["table"].update(tick_s="fast"), "table.tick_s", "fast", "a number of seconds from 0.05 to 2"),
    (lambda d: d["table"].update(tick_s=5), "table.tick_s", 5, "a number of seconds from 0.05 to 2"),
    (lambda d: d["table"].update(name=""), "table.name", "", "a string of 1 to 40 characters"),
    (lambda d: d["journal"].update(keep_days=0), "journal.keep_days", 0, "an integer from 1 to 3650"),
    (lambda d: d["journal"].update(keep_days=30.5), "journal.keep_days", 30.5, "an integer from 1 to 3650"),
    (lambda d: d["readers"]["board"].update(bus=True), "readers.board.bus", True, "an SPI bus number from 0 to 6"),
    (lambda d: d["readers"]["board"].update(device=5), "readers.board.device", 5, "a chip select number"),
    (lambda d: d["readers"]["board"].update(reset_pin=28), "readers.board.reset_pin", 28, "a BCM GPIO number"),
    (lambda d: d["readers"]["board"].update(spi_hz=20_000_000), "readers.board.spi_hz", 20_000_000,
     "from 10000 to 10000000"),
    (lambda d: d["readers"]["board"].update(max_tags=0), "readers.board.max_tags", 0, "an integer from 1 to 64"),
    (lambda d: d["readers"]["board"].update(poll_s=-1), "readers.board.poll_s", -1, "from 0.001 to 1"),
    (lambda d: d["presence"].update(settle_s=float("nan")), "presence.settle_s", float("nan"), "from 0 to 5"),
    (lambda d: d["panel"].update(players=11), "panel.players", 11, "an integer from 2 to 10"),
    (lambda d: d["panel"].update(hole_cards=3), "panel.hole_cards", 3, "2 or 4"),
    (lambda d: d["panel"]["leds"].update(red="GPIO13"), "panel.leds.red", "GPIO13", "a BCM GPIO number"),
    (lambda d: d["lcd"].update(address=0x78), "lcd.address", 0x78, "from 0x03 to 0x77"),
    (lambda d: d["lcd"].update(rows=2), "lcd.rows", 2, "a 20x4 or a 16x2 display"),
    (lambda d: d["lcd"].update(charmap="A01"), "lcd.charmap", "A01", "one of 'A00', 'A02'"),
    (lambda d: d["gpio"].update(factory="pigpio"), "gpio.factory", "pigpio", "one of 'auto', 'rpigpio'"),
])
def test_types_and_bounds(tmp_path, change, key, value, expected):
    path = broken(tmp_path, change)
    if value != value:  # NaN: its repr is what the message shows
        with pytest.raises(ConfigError) as info:
            load_config(path)
        assert info.value.key == key and "nan" in str(info.value) and expected in str(info.value)
    else:
        refused(path, key, value, expected)


# unknown keys are typos
@pytest.mark.parametrize("change, key, value, suggestion", [
    (lambda d: d["readers"]["board"].update(buss=1), "readers.board.buss", 1, "did you mean 'bus'?"),
    (lambda d: d["table"].update(langauge="cs"), "table.langauge", "cs", "did you mean 'language'?"),
    (lambda d: d["panel"]["buttons"].update(round_dne=9), "panel.buttons.round_dne", 9,
     "did you mean 'round_done'?"),
    (lambda d: d["panel"]["leds"].update(amberr=9), "panel.leds.amberr", 9, "did you mean 'amber'?"),
    (lambda d: d.update(pannel={"x": 1}), "pannel", {"x": 1}, "did you mean 'panel'?"),
    (lambda d: d["journal"].update(sync="evnt"), "journal.sync", "evnt", "did you mean 'event'?"),
    (lambda d: d["readers"]["board"].update(zone="bord"), "readers.board.zone", "bord", "did you mean 'board'?"),
    (lambda d: d["table"].update(profile="tda-2020"), "table.profile", "tda-2020", "did you mean 'tda-2019'?"),
])
def test_unknown_keys_are_typos_with_a_suggestion(tmp_path, change, key, value, suggestion):
    refused(broken(tmp_path, change), key, value, suggestion)


def test_a_key_of_another_reader_kind_is_refused(tmp_path):
    err = refused(broken(tmp_path, lambda d: d["readers"]["shoe"].update(baudrate=9600)),
                  "readers.shoe.baudrate", 9600, "a key of [readers.shoe]")
    assert "zone" in err.expected  # lists the keys an rc522 reader has


# the simulated backend is never picked silently
@pytest.mark.parametrize("section", [("readers", "shoe"), ("panel",), ("lcd",)])
def test_backend_is_required_on_every_device(tmp_path, section):
    def change(d):
        body = d
        for part in section:
            body = body[part]
        del body["backend"]
    refused(broken(tmp_path, change), ".".join(section) + ".backend", None, "one of 'sim', 'real'")


def test_the_reset_pin_is_written_explicitly(tmp_path):
    refused(broken(tmp_path, lambda d: d["readers"]["board"].pop("reset_pin")),
            "readers.board.reset_pin", None, '"none" when RST is tied high')
    cfg = load_config(broken(tmp_path, lambda d: d["readers"]["board"].update(reset_pin="none")))
    assert cfg.readers["board"].options.reset_pin is None


def test_mock_gpio_is_refused_when_a_gpio_device_is_real(tmp_path):
    err = refused(broken(tmp_path, lambda d: d["panel"].update(backend="real")),
                  "gpio.factory", "mock", "\"mock\" only when every GPIO device is sim")
    assert "panel" in err.expected
    err = refused(broken(tmp_path, lambda d: d["readers"]["board"].update(backend="real")),
                  "gpio.factory", "mock", "readers.board")


def test_a_real_reader_without_a_reset_pin_may_run_with_mock_gpio(tmp_path):
    def change(d):
        d["readers"]["board"].update(backend="real", reset_pin="none")
    cfg = load_config(broken(tmp_path, change), check_devices=False)
    assert cfg.gpio_factory == "mock" and cfg.simulated_devices == ("readers.shoe", "panel", "lcd")


def test_missing_sections_are_named(tmp_path):
    refused(broken(tmp_path, lambda d: d.pop("lcd")), "[lcd]", None, "a section")
    refused(broken(tmp_path, lambda d: d.pop("readers")), "[readers.NAME]", None, "at least one reader")


# a pin used twice, both users named
@pytest.mark.parametrize("change, key, value, first", [
    (lambda d: d["panel"]["buttons"].update(ack=5), "panel.buttons.ack", 5, "panel.leds.green"),
    (lambda d: d["panel"].update(buzzer=13), "panel.buzzer", 13, "panel.leds.red"),
    (lambda d: d["panel"]["buttons"].update(new_hand=24), "panel.buttons.new_hand", 24,
     "readers.board.reset_pin"),
    (lambda d: d["readers"]["board"].update(reset_pin=25), "readers.board.reset_pin", 25,
     "readers.shoe.reset_pin"),
    (lambda d: d["readers"]["board"].update(reset_pin=9), "readers.board.reset_pin", 9, "SPI0 MISO"),
    (lambda d: d["panel"]["buttons"].update(ack=18), "panel.buttons.ack", 18, "SPI1 CE0"),
    (lambda d: d["panel"]["leds"].update(amber=2), "panel.leds.amber", 2, "lcd.port (I2C1 SDA)"),
])
def test_a_pin_used_twice_names_both_users(tmp_path, change, key, value, first):
    err = refused(broken(tmp_path, change), key, value, "a BCM pin not already used by")
    assert first in str(err)


def test_a_serial_reader_on_the_uart_takes_its_pins(tmp_path):
    def change(d):
        d["readers"]["c1"] = {"kind": "pepper_c1", "backend": "real", "url": "/dev/ttyAMA0",
                              "antennas": {"1": "burn"}}
    err = refused(broken(tmp_path, change), "panel.buttons.hand_over", 14, "readers.c1.url (UART TXD)")
    assert err.value == 14


def test_two_readers_on_one_spi_bus_share_its_data_lines(tmp_path):
    def change(d):
        d["readers"]["board"].update(bus=0, device=1)
        d["panel"]["buttons"]["floor"] = 20  # BCM 7 is SPI0 CE1 now
    cfg = load_config(broken(tmp_path, change))
    assert cfg.readers["board"].device_node == "/dev/spidev0.1"
    refused(broken(tmp_path, lambda d: d["readers"]["board"].update(bus=0, device=1)),
            "panel.buttons.floor", 7, "readers.board.device (SPI0 CE1)")


# zones
def test_a_zone_that_does_not_exist(tmp_path):
    err = refused(broken(tmp_path, lambda d: d["readers"]["board"].update(zone="table")),
                  "readers.board.zone", "table", "a zone: one of shoe, board")
    assert all(z in err.expected for z in ZONES)


def test_a_serial_antenna_with_an_unknown_zone_or_number(tmp_path):
    def zone(d):
        d["readers"]["c1"] = {"kind": "shoe_line", "backend": "sim", "antennas": {"1": "seat11"}}
    refused(broken(tmp_path, zone), "readers.c1.antennas.1", "seat11", "a zone: one of")

    def number(d):
        d["readers"]["c1"] = {"kind": "shoe_line", "backend": "sim", "antennas": {"9": "seat1"}}
    refused(broken(tmp_path, number), "readers.c1.antennas.9", "9", "an antenna number from 1 to 8")


def test_a_zone_served_twice(tmp_path):
    err = refused(broken(tmp_path, lambda d: d["readers"]["board"].update(zone="shoe")),
                  "readers.board.zone", "shoe", "a zone no other reader serves")
    assert "readers.shoe.zone" in err.expected

    def serial_too(d):
        d["readers"]["c1"] = {"kind": "pepper_c1", "backend": "sim", "antennas": {"1": "burn", "2": "board"}}
    err = refused(broken(tmp_path, serial_too), "readers.c1.antennas.2", "board", "a zone no other reader serves")
    assert "readers.board.zone" in err.expected


def test_one_serial_reader_may_serve_a_zone_with_several_antennas(tmp_path):
    def change(d):
        d["readers"]["c1"] = {"kind": "pepper_c1", "backend": "sim", "antennas": {"1": "burn", "2": "burn"}}
    assert load_config(broken(tmp_path, change)).readers["c1"].zones == ("burn",)


@pytest.mark.parametrize("zone", ["shoe", "board"])
def test_shoe_and_board_must_be_served(tmp_path, zone):
    err = refused(broken(tmp_path, lambda d: d["readers"][zone].update(zone="muck")),
                  "readers", sorted({"muck", "shoe", "board"} - {zone}),
                  f"a reader serving the {zone!r} zone")
    assert "the readers serve only" in err.expected


# profile, language, registry
def test_a_profile_that_does_not_exist(tmp_path):
    refused(broken(tmp_path, lambda d: d["table"].update(profile="house")), "table.profile", "house",
            "one of cz-c40, tda-2019, or a path to a profile .toml")
    refused(broken(tmp_path, lambda d: d["table"].update(profile="rules/mine.toml")), "table.profile",
            "rules/mine.toml", "an existing profile file")


def test_a_profile_file_is_relative_to_the_config(tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "house.toml").write_text(
        (TABLES_DIR.parent / "rules" / "cz-c40.toml").read_text(encoding="utf-8"), encoding="utf-8")
    cfg = load_config(broken(tmp_path, lambda d: d["table"].update(profile="rules/house.toml")))
    assert cfg.profile.name == "cz-c40"


def test_a_broken_profile_file_names_its_own_file(tmp_path):
    (tmp_path / "bad.toml").write_text('name = "x"\nboard_grace_s = 99\n')
    with pytest.raises(ConfigError) as info:
        load_config(broken(tmp_path, lambda d: d["table"].update(profile="bad.toml")))
    assert info.value.file == str(tmp_path / "bad.toml") and info.value.key == "board_grace_s"


def test_a_language_that_does_not_exist(tmp_path):
    refused(broken(tmp_path, lambda d: d["table"].update(language="fr")), "table.language", "fr",
            "one of 'en', 'cs', 'de', 'sk'")
    assert load_config(broken(tmp_path, lambda d: d["table"].update(language="cs"))).language == "cs"


def test_registry_choices(tmp_path):
    refused(broken(tmp_path, lambda d: d["table"].update(registry="builtin:test")), "table.registry",
            "builtin:test", "the only built-in registry is 'builtin:sim'")
    refused(broken(tmp_path, lambda d: d["table"].update(registry="decks.toml")), "table.registry",
            "decks.toml", "an existing deck registry file", check_devices=True)
    simulation_registry().save(tmp_path / "decks.toml")
    cfg = load_config(broken(tmp_path, lambda d: d["table"].update(registry="decks.toml")))
    assert cfg.registry_source == str((tmp_path / "decks.toml").resolve()) and len(cfg.registry) > 0


def test_state_dir_is_relative_to_the_config_file(tmp_path):
    cfg = load_config(broken(tmp_path, lambda d: d["table"].update(state_dir="var/state")))
    assert cfg.state_dir == (tmp_path / "var" / "state").resolve()


def test_a_copy_of_the_sim_table_keeps_its_state_beside_it(tmp_path, monkeypatch):
    # Wherever the copy sits and whatever the working folder, its state is the
    # state/ folder beside it: never two folders up, as "../../state" put it.
    copy = tmp_path / "home" / "tables" / "mine.toml"
    copy.parent.mkdir(parents=True)
    copy.write_text(SIM.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert load_config(copy).state_dir == copy.parent.resolve() / "state"


def test_the_sim_table_as_shipped_keeps_its_state_in_the_checkouts_state_folder():
    # Nothing is written among the shipped files: in a checkout the shipped table's
    # state goes to the checkout's state/ (README; ignored by git).
    checkout = TABLES_DIR.resolve().parents[1]
    assert (checkout / "pyproject.toml").is_file(), "these tests run from a checkout"
    assert load_config(SIM).state_dir == checkout / "state"
    assert "/state/" in (checkout / ".gitignore").read_text().splitlines()


def test_the_reference_says_where_relative_paths_start():
    head = " ".join(config_module.reference_markdown().split("## `[table]`")[0].split())
    assert "relative path" in head and "folder of the config file" in head and "working folder" in head


def test_a_real_serial_reader_needs_a_url(tmp_path):
    def change(d):
        d["readers"]["c1"] = {"kind": "shoe_line", "backend": "real", "antennas": {"1": "burn"}}
    refused(broken(tmp_path, change), "readers.c1.url", None, "a serial device path or a pyserial URL")


def test_a_pepper_without_multiplexer_serves_one_antenna(tmp_path):
    def change(d):
        d["readers"]["c1"] = {"kind": "pepper_c1", "backend": "sim", "antenna_select": False,
                              "antennas": {"1": "burn", "2": "muck"}}
    refused(broken(tmp_path, change), "readers.c1.antenna_select", False, "true when more than one antenna")


# check_config collects
def test_check_config_collects_every_error_section_by_section(tmp_path):
    def change(d):
        d["table"]["tick_s"] = 9
        d["readers"]["board"]["buss"] = 1
        d["panel"]["buttons"]["ack"] = 5
        d["lcd"]["address"] = 1
    path = broken(tmp_path, change)
    errors = check_config(path)
    assert [e.key for e in errors] == ["table.tick_s", "readers.board.buss", "lcd.address", "panel.buttons.ack"]
    assert all(isinstance(e, ConfigError) and e.file == str(path) for e in errors)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == str(errors[0])


def test_check_config_of_a_good_file_is_empty():
    assert check_config(SIM) == []
    assert check_config(PI4, check_devices=False) == []
    assert check_config(PI5, check_devices=False) == []


def test_check_config_lists_every_missing_node():
    keys = [e.key for e in check_config(PI4)]
    assert keys[:3] == ["readers.shoe.bus", "readers.board.bus", "lcd.port"]


MUTATIONS = [
    lambda d: d["table"].update(tick_s=0),
    lambda d: d["table"].update(language="xx"),
    lambda d: d["journal"].update(keep_dayz=3),
    lambda d: d["gpio"].update(factory="real"),
    lambda d: d["readers"]["shoe"].update(zone="board"),
    lambda d: d["readers"]["board"].update(spi_hz="fast"),
    lambda d: d["readers"]["board"].pop("backend"),
    lambda d: d["presence"].update(settle_s=-1),
    lambda d: d["lcd"].update(port=99),
    lambda d: d["panel"]["buttons"].update(ack=13),
    lambda d: d["panel"].update(players=1),
    lambda d: d.update(extra={}),
]


@settings(max_examples=40, deadline=None)
@given(st.sets(st.integers(0, len(MUTATIONS) - 1), min_size=1))
def test_load_config_raises_the_first_error_check_config_lists(chosen):
    with tempfile.TemporaryDirectory() as folder:
        data = copy.deepcopy(table_data(SIM))
        for i in sorted(chosen):
            MUTATIONS[i](data)
        path = write(Path(folder), data)
        errors = check_config(path)
        assert errors and all(e.file == str(path) for e in errors)
        assert len({e.key for e in errors}) == len(errors)  # each broken key once
        with pytest.raises(ConfigError) as info:
            load_config(path)
        assert str(info.value) == str(errors[0])


def test_one_reader_per_chip_select_or_serial_port(tmp_path):
    def same_spi(d):
        d["readers"]["board"].update(bus=0, device=0)
    err = refused(broken(tmp_path, same_spi), "readers.board.device", 0, "a port no other reader uses")
    assert "/dev/spidev0.0 is already readers.shoe.device" in err.expected

    def same_url(d):
        d["readers"]["c1"] = {"kind": "pepper_c1", "backend": "sim", "url": "loop://", "antennas": {"1": "burn"}}
        d["readers"]["c2"] = {"kind": "shoe_line", "backend": "sim", "url": "loop://", "antennas": {"1": "muck"}}
    refused(broken(tmp_path, same_url), "readers.c2.url", "loop://", "(loop:// is already readers.c1.url)")


def test_a_url_pyserial_does_not_know_is_refused(tmp_path):
    def change(d):
        d["readers"]["c1"] = {"kind": "shoe_line", "backend": "real", "url": "bogus://x", "antennas": {"1": "burn"}}
    refused(broken(tmp_path, change), "readers.c1.url", "bogus://x", "a URL pyserial knows")


# -- the declarations are the reference -----------------------------------------------

def test_docs_config_md_is_generated_from_the_declarations():
    committed = (Path(__file__).resolve().parents[2] / "docs" / "CONFIG.md").read_text(encoding="utf-8")
    assert committed == config_module.reference_markdown(), (
        "docs/CONFIG.md is stale: python -m dealerbox.service.config > docs/CONFIG.md")


def test_every_declared_key_is_in_the_reference():
    from dealerbox.service.kinds import READER_KINDS
    from dealerbox.options import options_of

    text = config_module.reference_markdown()
    classes = [r.cls for r in config_module.SECTIONS.values()] + [config_module.ReaderSection]
    classes += [k.options for k in READER_KINDS.values()]
    for cls in classes:
        for key, opt, _default in options_of(cls):
            assert f"| `{key}` |" in text and opt.doc in text, (cls.__name__, key)


def test_a_section_is_added_with_one_dataclass_and_one_line(tmp_path, monkeypatch):
    from dataclasses import dataclass

    from dealerbox.service.config import Flag, Number, Pin, option, register_section

    @dataclass(frozen=True, kw_only=True)
    class LampSection:
        """A lamp that calls the floor."""

        enabled: bool = option(Flag(doc="light the lamp"), False)
        pin: int | None = option(Pin(doc="its BCM pin", none_word="none"), None)
        hold_s: float = option(Number(doc="how long it stays lit", lo=0.1, hi=60.0), 5.0)

    monkeypatch.setattr(config_module, "SECTIONS", dict(config_module.SECTIONS))
    register_section("lamp", LampSection)

    assert load_config(SIM).lamp == LampSection()              # left out: its defaults
    cfg = load_config(broken(tmp_path, lambda d: d.update(lamp={"enabled": True, "pin": 1})))
    assert cfg.lamp == LampSection(enabled=True, pin=1) and cfg.sections["lamp"] is cfg.lamp
    refused(broken(tmp_path, lambda d: d.update(lamp={"holds_s": 2})), "lamp.holds_s", 2, "did you mean 'hold_s'?")
    refused(broken(tmp_path, lambda d: d.update(lamp={"hold_s": 0})), "lamp.hold_s", 0, "from 0.1 to 60")
    err = refused(broken(tmp_path, lambda d: d.update(lamp={"pin": 5})), "lamp.pin", 5, "a BCM pin not already used")
    assert "panel.leds.green" in str(err)
    assert "## `[lamp]` (optional" in config_module.reference_markdown()
    assert "| `hold_s` | float | 5 | 0.1 .. 60 | how long it stays lit |" in config_module.reference_markdown()


def test_a_long_value_is_cut_in_the_message(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_config(broken(tmp_path, lambda d: d["table"].update(name="x" * 500)))
    message = str(info.value)
    assert info.value.value == "x" * 500                     # the error keeps the whole value
    assert "table.name = 'xxxx" in message and len(message) < 300 and "..." in message
    assert "expected a string of 1 to 40 characters" in message
