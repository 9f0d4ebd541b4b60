"""``floor deck ...`` in the room's language (``[web] language``), or the one ``--language``
names: what a supervisor reads on the terminal, the refusals, and the card control log's
files; the CSV's columns and its UTC times stay the machines' (issue 45)."""

from __future__ import annotations

import csv
import getpass
import io
import re
import subprocess
import sys

from dealerbox.domain.decks import DeckRegistry
from dealerbox.floor.telling.card_log import CSV_HEADER

from tests.floor.registry_support import deck_tags


def test_the_deck_commands_speak_the_rooms_language_or_the_one_asked_for(tmp_path):
    config = tmp_path / "floor.toml"
    config.write_text(f'[store]\npath = "{tmp_path / "floor.sqlite"}"\n'
                      '[web]\nlanguage = "cs"\ntime_zone = "Europe/Prague"\n')
    local = DeckRegistry()
    for uid, card in deck_tags("R").items():
        local.add(uid, "R", card)
    local.save(tmp_path / "decks.toml")

    def floor(*args):
        return subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", "deck", *args, "--config", str(config)],
                              capture_output=True, text=True, timeout=120)

    received = floor("receive", "Červený 7", "--back", "červený", "--count", "54")
    assert received.returncode == 0, received.stderr
    assert "balíček Červený 7 převzat zapečetěný (54)" in received.stderr
    added = floor("add", "Červený 7", "--from", str(tmp_path / "decks.toml"), "--deck", "R")
    assert "balíček Červený 7: 54 štítků zaregistrováno" in added.stderr, added.stderr
    limit = floor("limit", "Červený 7", "--hours", "2.5")
    assert "balíček Červený 7: vlastní limit, 2,5 h ve hře" in limit.stderr, limit.stderr
    listed = floor("list").stdout
    assert "Červený 7\tregistrovaný\trub červený\t54 štítků\t0 her\t0,0 h ve hře\tnikdy nerozdáván" in listed, listed
    # A refusal in Czech, the command's name as typed.
    own = floor("issue", "Červený 7", "--table", "T02", "--witness", getpass.getuser())
    assert own.returncode != 0
    assert f"dealerbox floor deck issue: {getpass.getuser()} nemůže být svědkem vlastního vydání balíčku" in own.stderr
    missing = floor("log", "Modrý 1")
    assert missing.returncode != 0 and "balíček 'Modrý 1' v registru není" in missing.stderr
    bad_day = floor("log", "--day", "včera")
    assert bad_day.returncode != 0 and "--day 'včera': očekáván den od 2000-01-01 do 2999-12-31" in bad_day.stderr
    # --language: the German log; the CSV's columns and UTC times stay the machines'.
    rows = list(csv.reader(io.StringIO(floor("log", "Červený 7", "--language", "de").stdout)))
    assert tuple(rows[0]) == CSV_HEADER
    assert [r[4] for r in rows[1:]] == ["Versiegelt angenommen: 54 im Siegel, Rückseite červený",
                                        "Registriert: 54 Tags", "Eigenes Limit: 2,5 Std. im Spiel"]
    assert all(re.fullmatch(r"\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2} MES?Z", r[1]) for r in rows[1:]), rows
    assert all(re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z", r[2]) for r in rows[1:]), rows
    html = tmp_path / "log.html"
    assert floor("log", "Červený 7", "--html", str(html)).returncode == 0
    page = html.read_text(encoding="utf-8")
    assert '<html lang="cs">' in page and "Protokol kontroly karet: balíček Červený 7" in page
    assert "Všechny kroky" in page and "Every step" not in page


def test_the_badge_commands_speak_the_rooms_language_or_the_one_asked_for(tmp_path):
    config = tmp_path / "floor.toml"
    config.write_text(f'[store]\npath = "{tmp_path / "floor.sqlite"}"\n'
                      '[web]\nlanguage = "cs"\ntime_zone = "Europe/Prague"\n')

    def floor(*args):
        return subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", "badge", *args, "--config", str(config)],
                              capture_output=True, text=True, timeout=120)

    added = floor("add", "08a1b2c3", "1042")
    assert added.returncode == 0, added.stderr
    assert "průkaz 08A1B2C3 přihlásí krupiéra 1042 u každého stolu během několika sekund" in added.stderr, added.stderr
    twice = floor("add", "08a1b2c3", "2077")
    assert twice.returncode != 0 and "dealerbox floor badge add: průkaz 08A1B2C3 je už registrován krupiérovi 1042" in twice.stderr, twice.stderr
    revoked = floor("revoke", "08A1B2C3", "--why", "odešel z kasina")
    assert "průkaz 08A1B2C3 zneplatněn: od příštího registru se nikde nepřihlásí" in revoked.stderr, revoked.stderr
    assert f"08A1B2C3\tkrupiér 1042\tzneplatnil(a) {getpass.getuser()}: odešel z kasina" in floor("list").stdout
    german = floor("list", "--language", "de").stdout
    assert f"08A1B2C3\tDealer 1042\tgesperrt von {getpass.getuser()}: odešel z kasina" in german, german
