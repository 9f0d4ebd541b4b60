"""docs/floor/install.md's recipe "A simulated table reporting to your floor server", its lines taken
from the page and run as written against a broker with the shipped configuration and a
collector. What the test changes: ``dealerbox-floor-ca`` is make-ca.sh on the test's CA,
the ``scp`` from the floor server copies from that CA's folder, the venv is this
checkout's (no ``pip install``), and ``floor.casino.example:8883`` is the test broker."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from dealerbox.floor.operating.broker import MAKE_CA, Broker, make_pki
from tests.floor.conftest import need
from tests.floor.support import wait_for, write_collector_config

ROOT = Path(__file__).resolve().parents[2]
TITLE = "### A simulated table reporting to your floor server"


def recipe() -> tuple[list[str], list[str]]:
    """The floor server's lines and the other machine's, as install.md has them."""
    text = (ROOT / "docs" / "floor" / "install.md").read_text(encoding="utf-8")
    part = text[text.index(TITLE):]
    part = part[:part.index("\n## ", 1) if "\n## " in part else len(part)]
    part = part[:part.index("\n### ", 1)] if "\n### " in part[1:] else part
    server, laptop = re.findall(r"^```sh\n(.*?)^```", part, re.S | re.M)[:2]
    return ([line for line in server.splitlines() if line.strip()],
            [line for line in laptop.splitlines() if line.strip()])


def test_a_simulated_table_reports_to_the_floor_as_the_recipe_says(tmp_path):
    need("mosquitto", "mosquitto")
    need("openssl", "openssl")
    server, laptop = recipe()
    pki = make_pki(tmp_path / "pki", ["floor-collector"])
    home = tmp_path / "home"
    (home / "sim" / "bin").mkdir(parents=True)
    # The venv of the recipe's first line: this checkout's, run through ~/sim/bin.
    for name in ("dealerbox", "python"):
        (home / "sim" / "bin" / name).write_text(f'#!/bin/sh\nexec "{Path(sys.executable).parent / name}" "$@"\n')
        (home / "sim" / "bin" / name).chmod(0o755)
    env = {**os.environ, "HOME": str(home), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    env.pop("DEALERBOX_CONFIG", None)
    with Broker(tmp_path / "broker", pki) as broker:
        def shell(line: str):
            line = line.replace("dealerbox-floor-ca", f"sh {MAKE_CA} {pki}")
            line = line.replace("scp root@floor.casino.example:/etc/mosquitto/dealerbox/", f"cp {pki}/")
            line = line.replace("floor.casino.example", "localhost").replace("port = 8883", f"port = {broker.port}")
            result = subprocess.run(["bash", "-euo", "pipefail", "-c", line], capture_output=True, text=True,
                                    env=env, cwd=home, timeout=120)
            assert result.returncode == 0, f"{line}\n{result.stdout}\n{result.stderr}"
            return result

        assert server == ["dealerbox-floor-ca client SIM01"]
        assert "SIM01.crt" in shell(server[0]).stderr
        assert laptop[0].startswith("python3 -m venv ~/sim && ~/sim/bin/pip install 'dealerbox[pi,mqtt]'")
        *setup, run = laptop[1:]
        for line in setup:
            shell(line)
        assert "SIM01" in (home / "sim" / "table.toml").read_text()

        store = tmp_path / "floor.sqlite"
        config = write_collector_config(tmp_path / "floor.toml", pki, broker, store)
        dealerbox = str(Path(sys.executable).parent / "dealerbox")
        with open(tmp_path / "collector.out", "wb") as out:
            collector = subprocess.Popen([dealerbox, "floor", "collect", "--config", str(config)], stdout=out,
                                         stderr=out)
        line = run.replace("floor.casino.example", "localhost")
        assert line == "~/sim/bin/dealerbox run --demo --forever --config ~/sim/table.toml"
        with open(tmp_path / "table.out", "wb") as out:
            table = subprocess.Popen(["bash", "-c", f"exec {line}"], env=env, cwd=home, stdout=out, stderr=out)
        try:
            def stored():
                assert collector.poll() is None, (tmp_path / "collector.out").read_text()
                assert table.poll() is None, (tmp_path / "table.out").read_text()
                if not store.exists():
                    return False
                verify = subprocess.run([dealerbox, "floor", "verify", "--store", str(store)], capture_output=True,
                                        text=True, timeout=60)
                return re.fullmatch(r"SIM01: ([1-9]\d*) lines, chain ok\n", verify.stdout) is not None

            wait_for(stored, "SIM01's lines in the floor's store", timeout=120)
        finally:
            for proc in (table, collector):
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
