"""The floor's commands name who runs them by the process's effective user, never by the
environment: ``USER`` and ``LOGNAME`` are whatever the caller set (dealerbox/floor/commands.py)."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys

from dealerbox.floor.commands import command_line_user
from dealerbox.floor.store import Store


def test_the_audit_names_the_effective_user_not_the_one_the_environment_claims(tmp_path):
    real = pwd.getpwuid(os.geteuid()).pw_name
    assert command_line_user() == real
    claimed = "alice" if real != "alice" else "mallory"
    config = tmp_path / "floor.toml"
    config.write_text(f'[store]\npath = "{tmp_path / "floor.sqlite"}"\n')
    env = {**os.environ, "USER": claimed, "LOGNAME": claimed, "LNAME": claimed, "USERNAME": claimed}

    def floor(*args):
        return subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", *args, "--config", str(config)],
                              capture_output=True, text=True, timeout=120, env=env)
    assert floor("deck", "receive", "Red 7", "--back", "red", "--count", "54").returncode == 0
    assert floor("deck", "retire", "Red 7", "--why", "a bent corner").returncode == 0
    # The one who runs it cannot be its witness, whatever $USER says; the claimed name can.
    own = floor("deck", "destroy", "Red 7", "--witness", real)
    assert own.returncode != 0 and "cannot witness their own" in own.stderr
    assert floor("deck", "destroy", "Red 7", "--witness", claimed).returncode == 0
    assert floor("badge", "add", "08a1b2c3", "1042").returncode == 0
    with Store(tmp_path / "floor.sqlite") as store:
        assert {a["who"] for a in store.audit()} == {real}


def test_deck_log_refuses_a_day_outside_the_logs_years_in_one_line(tmp_path):
    config = tmp_path / "floor.toml"
    config.write_text(f'[store]\npath = "{tmp_path / "floor.sqlite"}"\n')
    for day in ("9999-12-31", "0001-01-01"):
        out = subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", "deck", "log", "--day", day,
                              "--config", str(config)], capture_output=True, text=True, timeout=120)
        assert out.returncode != 0 and "Traceback" not in out.stderr
        assert f"--day '{day}': expected a day from 2000-01-01 to 2999-12-31" in out.stderr
