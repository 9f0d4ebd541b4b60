"""The floor's config files: one clear error per bad value, never a traceback."""

from __future__ import annotations

import pytest

from dealerbox.errors import ConfigError
from dealerbox.floor.settings import load_collector
from dealerbox.service.uplink import load_table_floor
from dealerbox.floor.broker import FLOOR_CONFIG_DIR


def test_the_floor_section_is_off_by_default(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text("[other]\nx = 1\n")
    assert load_table_floor(path).enabled is False


def test_a_table_floor_section_is_read(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text('[floor]\nenabled = true\ntable = "T07"\nport = 8884\ncert = "/etc/pki/T07.crt"\n')
    s = load_table_floor(path)
    assert (s.table, s.port, str(s.identity.cert)) == ("T07", 8884, "/etc/pki/T07.crt")


def test_the_table_config_declares_the_floor_section(tmp_path):
    from dealerbox.service.config import DEFAULT_CONFIG, load_config
    assert load_config(DEFAULT_CONFIG).floor.enabled is False
    path = tmp_path / "table.toml"
    path.write_text(DEFAULT_CONFIG.read_text() + '\n[floor]\nenabled = true\ntable = "floor-view"\n')
    with pytest.raises(ConfigError, match="floor.table"):
        load_config(path, check_devices=False)


@pytest.mark.parametrize("body, key", [
    ('enabled = true\ntable = "floor-view"', "floor.table"),
    ('enabled = true', "floor.table"),
    ('enabled = true\ntable = "T1"\nport = 0', "floor.port"),
    ('enabled = true\ntable = "T1"\nwindow = "many"', "floor.window"),
    ('enabled = true\ntable = "T1"\nbogus = 1', "floor.bogus"),
])
def test_a_bad_floor_value_names_the_key(tmp_path, body, key):
    path = tmp_path / "table.toml"
    path.write_text("[floor]\n" + body + "\n")
    with pytest.raises(ConfigError) as err:
        load_table_floor(path)
    assert str(path) in str(err.value) and key in str(err.value)


def test_the_shipped_collector_config_loads():
    s = load_collector(FLOOR_CONFIG_DIR / "floor.toml")
    assert s.identity.port == 8883 and s.web_host == "127.0.0.1"


def test_a_collector_config_without_a_store_names_it(tmp_path):
    path = tmp_path / "floor.toml"
    path.write_text('[broker]\nca = "a"\ncert = "b"\nkey = "c"\n')
    with pytest.raises(ConfigError, match="store.path"):
        load_collector(path)


def test_will_delay_s_was_removed_and_says_so(tmp_path):
    from dealerbox.service.uplink import FloorSettings
    from dealerbox.service.config import DEFAULT_CONFIG, check_config
    path = tmp_path / "table.toml"
    path.write_text('[floor]\nenabled = true\ntable = "T1"\nwill_delay_s = 10\n')
    with pytest.raises(ConfigError) as err:
        load_table_floor(path)
    text = str(err.value)
    assert text.startswith(f"{path}: floor.will_delay_s = 10: expected no such key any more: removed")
    assert "Delete the line" in text
    # The table config's own check says the same, once, as its only error.
    path.write_text(DEFAULT_CONFIG.read_text() + '\n[floor]\nenabled = true\ntable = "T1"\nwill_delay_s = 10\n')
    (only,) = check_config(path, check_devices=False)
    assert only.key == "floor.will_delay_s" and "removed" in str(only)
    with pytest.raises(ValueError, match="will_delay_s was removed"):
        FloorSettings(enabled=True, table="T1", will_delay_s=10)
