"""The floor's config files: one clear error per bad value, never a traceback."""

from __future__ import annotations

import pytest

from dealerbox.errors import ConfigError
from dealerbox.floor.operating.settings import load_collector, load_web
from dealerbox.service.uplink import load_table_floor
from dealerbox.floor.operating.broker import FLOOR_CONFIG_DIR


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


def _as_another_user(call):
    """*call*() in a child process that runs as the user nobody (as root) or as this user; its
    exit code and stderr. Forked: the interpreter need not be one that nobody may run."""
    import os
    import pwd
    import sys
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        code = 70
        try:
            os.close(r)
            os.dup2(w, 2)
            sys.stderr = os.fdopen(2, "w", closefd=False)
            if os.geteuid() == 0:
                nobody = pwd.getpwnam("nobody")
                os.setgroups([])
                os.setgid(nobody.pw_gid)
                os.setuid(nobody.pw_uid)
            code = call()
            sys.stderr.flush()
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r) as fh:
        err = fh.read()
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), err


def test_a_web_key_the_view_cannot_read_is_one_line_naming_it_and_the_fix():
    """The view's key made where the CA lives (root's 0600, in a folder closed to the view's
    user) stops `floor web` with one line, not a PermissionError traceback."""
    import os
    import shutil
    import tempfile
    from pathlib import Path

    from dealerbox.cli import main
    from dealerbox.floor import web  # noqa: F401  (loaded before the fork: nobody may not read the venv)

    top = Path(tempfile.mkdtemp(prefix="dealerbox-web-key-", dir="/tmp"))
    try:
        top.chmod(0o755)
        closed = top / "ca"
        closed.mkdir(mode=0o700)
        cert, key = top / "floor-web.crt", closed / "floor-web.key"
        cert.write_text("not read this far\n")
        cert.chmod(0o644)
        key.write_text("secret\n")
        key.chmod(0o600 if os.geteuid() == 0 else 0o000)
        config = top / "floor.toml"
        config.write_text(f'[store]\npath = "{top}/floor.sqlite"\n[broker]\nhost = "127.0.0.1"\n'
                          f'[web]\nport = 0\ncert = "{cert}"\nkey = "{key}"\n')
        config.chmod(0o644)
        code, err = _as_another_user(lambda: main(["floor", "web", "--config", str(config)]))
        assert code == 2, err
        (line,) = err.splitlines()
        assert line.startswith(f"dealerbox: {config}: web.key = '{key}': ") and "cannot read it" in line, line
        assert "chmod 0640" in line and "install-floor.sh --web-name" in line
        assert ("nobody cannot read it" in line) == (os.geteuid() == 0)
        assert not (top / "floor.sqlite").exists()          # refused before the store is opened
    finally:
        key.chmod(0o600)
        shutil.rmtree(top, ignore_errors=True)


_MIGRATE_WITH_LOGS = """
import sys
from dealerbox.floor.commands import setup_logging
from dealerbox.floor.store import Store
setup_logging(verbose=sys.argv[2] == "verbose")
import logging
logging.getLogger("dealerbox.floor.commands").info("the floor's own line")
with Store(sys.argv[1]):
    pass
"""


def test_the_floor_log_leaves_out_alembics_info_lines_unless_verbose(tmp_path):
    """A store migrated under the floor's logging: alembic's INFO lines (seven at every start of
    the web view) are not in the log; the floor's own INFO lines are, and verbose shows both."""
    import subprocess
    import sys
    runs = {}
    for mode in ("quiet", "verbose"):
        runs[mode] = subprocess.run([sys.executable, "-c", _MIGRATE_WITH_LOGS, str(tmp_path / f"{mode}.sqlite"), mode],
                                    capture_output=True, text=True, timeout=120)
        assert runs[mode].returncode == 0, runs[mode].stderr
    assert "INFO alembic" in runs["verbose"].stderr          # the lines are there to be quieted
    assert "alembic" not in runs["quiet"].stderr
    assert "INFO dealerbox.floor.commands: the floor's own line" in runs["quiet"].stderr


@pytest.mark.parametrize("line, key", [
    ('time_zone = "Mars/Olympus"', "web.time_zone"),
    ('language = "fr"', "web.language"),
    ('shift_starts = ["06:00", "6pm"]', "web.shift_starts"),
    ('shift_starts = []', "web.shift_starts"),
])
def test_a_bad_zone_language_or_shift_names_the_key(tmp_path, line, key):
    path = tmp_path / "floor.toml"
    path.write_text(f'[store]\npath = "floor.sqlite"\n[web]\n{line}\n')
    with pytest.raises(ConfigError) as caught:
        load_web(path)
    assert key in str(caught.value) and str(path) in str(caught.value)


def test_zone_language_and_shifts_are_read(tmp_path):
    path = tmp_path / "floor.toml"
    path.write_text('[store]\npath = "floor.sqlite"\n[web]\ntime_zone = "Europe/Prague"\n'
                    'language = "cs"\nshift_starts = ["07:00", "19:00"]\n')
    web = load_web(path)
    assert (web.time_zone, web.language, web.shift_starts) == ("Europe/Prague", "cs", ("07:00", "19:00"))


def test_several_postgresql_hosts_with_ports_in_the_url_get_the_form_that_works(tmp_path):
    path = tmp_path / "floor.toml"
    path.write_text('[store]\nurl = "postgresql+psycopg://floor:secret@db1:5432,db2:5432/floor"\n')
    with pytest.raises(ConfigError) as caught:
        load_web(path)
    text = str(caught.value)
    assert "store.url" in text and "?host=db1:5432&host=db2:5432" in text and "secret" not in text
