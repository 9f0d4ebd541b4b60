"""docs/INSTALL.md's rehearsal, run as written: the shipped table's name for --config, the
reader of the real procedure, a deck registered and checked on the emulated chip."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from dealerbox.cli import main
from dealerbox.service.commands import config_path
from dealerbox.service.config import TABLES_DIR

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "docs" / "INSTALL.md"


def _rehearsal_lines() -> list[str]:
    text = INSTALL.read_text(encoding="utf-8")
    part = text[text.index("## Rehearsing a deck registration without hardware"):]
    (block,) = re.findall(r"^```sh\n(.*?)^```", part, re.S | re.M)[:1]
    return [line for line in block.splitlines() if line.strip()]


def _real_reader(table: str) -> str:
    """The reader INSTALL.md's real procedure registers decks on, for *table*."""
    text = INSTALL.read_text(encoding="utf-8")
    m = re.search(rf"`(\w+)` in `{re.escape(table)}`", text)
    assert m, f"INSTALL.md does not name the reader of {table}"
    return m.group(1)


def test_the_rehearsal_runs_as_written_on_the_real_procedures_reader(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)                       # no file named pi4-rc522.toml here
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("DEALERBOX_CONFIG", raising=False)
    lines = _rehearsal_lines()
    assert [line.split()[:3] for line in lines] == [["dealerbox", "deck", "register"], ["dealerbox", "deck", "check"]]
    for line in lines:
        argv = shlex.split(line)[1:]
        table = argv[argv.index("--config") + 1]
        assert argv[argv.index("--reader") + 1] == _real_reader(table)
        # --pace 0 and a short quiet time: the same commands, only quicker.
        code = main([*argv, "--pace", "0", *(["--quiet", "1"] if "check" in argv else [])])
        out, err = capsys.readouterr()
        assert (code, err) == (0, ""), out + err
        assert out.startswith(f"rehearsal: reader '{_real_reader(table)}'")
    assert out.splitlines()[-1] == "FIT FOR PLAY"


def test_config_takes_a_shipped_table_by_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert config_path("pi4-rc522.toml") == TABLES_DIR / "pi4-rc522.toml"
    assert config_path("pi5-pepper") == TABLES_DIR / "pi5-pepper.toml"
    # A file of that name here, or a path, is what it says.
    (tmp_path / "pi4-rc522.toml").write_text("")
    assert config_path("pi4-rc522.toml") == Path("pi4-rc522.toml")
    assert config_path("tables/none.toml") == Path("tables/none.toml")
    assert config_path("no-such-table") == Path("no-such-table")
