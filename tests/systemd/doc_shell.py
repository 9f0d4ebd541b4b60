"""A root shell that runs the docs' commands as written in a fake root, and what those
tests share (tests/systemd/test_floor_docs.py, tests/systemd/test_group_bridge_docs.py).

What the shell changes, and only that:
- ``--root`` and ``--wheelhouse`` are added to each ``install-floor.sh`` line (a fake
  root; no package index), and the paths of the installed system (``/etc/dealerbox``,
  ``/etc/mosquitto``, ``/opt/dealerbox``, ``/var/lib/...``, the checkout's
  ``/usr/local/src/dealerbox``) are moved under the fake root, in the commands and in
  the installed ``dealerbox-floor`` and ``dealerbox-floor-ca`` tools;
- ``apt-get``, ``git``, ``systemctl`` and ``journalctl`` are recorders;
- the first ``python3`` on PATH is not Debian's: it fails loudly, so an installer that
  made its venv with it, or a tool that ran it, fails the test.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
from pathlib import Path

from tests.floor.support import wait_for
from tests.systemd.test_install_floor import _stock_conf, _unit_lines

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SERVICE_USER = "dealerbox-floor"
SYSTEM_PYTHON = "/usr/bin/python3"
CHECKOUT = "/usr/local/src/dealerbox"
#: The installed system's folders, moved under the fake root.
MOVED = ("/etc/dealerbox", "/etc/mosquitto", "/opt/dealerbox", "/var/lib/dealerbox-floor", "/var/lib/mosquitto",
         "/var/log/mosquitto", "/run/mosquitto", "/etc/systemd/system")
TIMEOUT = 600


def section(doc: str, title: str) -> str:
    """The text under the heading *title* (any level) up to the next heading of its level or higher."""
    lines = (DOCS / doc).read_text(encoding="utf-8").split("\n")
    start = next(n for n, line in enumerate(lines) if re.fullmatch(rf"#+ {re.escape(title)}", line))
    level = len(lines[start].split(" ")[0])
    fenced = False
    for end in range(start + 1, len(lines)):
        if lines[end].lstrip().startswith("```"):
            fenced = not fenced
        heading = re.match(r"(#+) ", lines[end])
        if not fenced and heading and len(heading.group(1)) <= level:
            break
    else:
        end = len(lines)
    return "\n".join(lines[start:end]) + "\n"


def sh_blocks(doc: str, title: str) -> list[list[str]]:
    """The ```sh blocks of a section, each as its command lines (continuations joined)."""
    out = []
    for block in re.findall(r"^ *```sh\n(.*?)^ *```", section(doc, title), re.S | re.M):
        text = re.sub(r"\\\n\s*", "", "\n".join(line.strip() for line in block.splitlines()))
        out.append([line for line in text.splitlines() if line and not line.startswith("#")])
    return out


def moved(root: Path, text: str) -> str:
    """*text* with the installed system's paths under *root*."""
    text = text.replace(CHECKOUT, str(ROOT))
    for prefix in MOVED:
        text = re.sub(rf"(?<![\w/.-]){re.escape(prefix)}(?=/|\s|$|\"|')", f"{root}{prefix}", text)
    return text


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Shell:
    """A root shell that runs the docs' lines in the fake root, and what it ran."""

    def __init__(self, top: Path, wheels: Path, name: str = "root"):
        self.top, self.wheels = top, wheels
        self.root = top / name
        self.root.mkdir()
        self.calls = top / f"{name}-calls.log"
        self.bin = top / f"{name}-bin"
        self.tools = top / f"{name}-tools"     # the installed tools, their paths moved under the root
        for folder in (self.bin, self.tools):
            folder.mkdir()
        for name in ("apt-get", "systemctl", "git", "journalctl"):
            (self.bin / name).write_text(f'#!/bin/sh\necho "{name} $*" >> "{self.calls}"\n')
        # Not Debian's python3, first on PATH: a venv made with it would not do; used at all, it says so.
        (self.bin / "python3").write_text("#!/bin/sh\necho 'the python3 first on PATH was used' >&2\nexit 97\n")
        for path in self.bin.iterdir():
            path.chmod(0o755)
        self.env = {"PATH": f"{self.bin}:{self.tools}:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(top),
                    "LANG": "C.UTF-8", "PIP_CONFIG_FILE": os.devnull, "PIP_NO_CACHE_DIR": "1"}

    def run(self, line: str, stdin: str = "") -> subprocess.CompletedProcess:
        line = moved(self.root, line.replace("<this repository>", str(ROOT)))
        line = re.sub(r"(^|\s)(systemd/install-floor\.sh)(?=\s|$)",
                      rf"\1\2 --root {self.root} --wheelhouse {self.wheels}", line)
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", f"cd {ROOT}; {line}"], capture_output=True,
                                text=True, env=self.env, input=stdin, timeout=TIMEOUT)
        assert result.returncode == 0, f"{line}\n{result.stdout}\n{result.stderr}"
        assert "python3 first on PATH" not in result.stderr
        self.take_tools()
        return result

    def take_tools(self) -> None:
        for installed in (self.root / "usr/local/bin/dealerbox-floor", self.root / "usr/local/sbin/dealerbox-floor-ca"):
            if installed.exists():
                (self.tools / installed.name).write_text(moved(self.root, installed.read_text()))
                (self.tools / installed.name).chmod(0o755)

    def ran(self) -> list[str]:
        lines = self.calls.read_text().splitlines() if self.calls.exists() else []
        self.calls.write_text("")
        return lines


def instance_command(root: Path, unit: Path, instance: str | None) -> tuple[str, list[str]]:
    """The unit's User= and ExecStart (with its instance), its paths under *root*."""
    text = unit.read_text()
    if instance is not None:
        text = text.replace("%i", instance)
    (user,) = [line.split("=", 1)[1] for line in text.splitlines() if line.startswith("User=")]
    (start,) = [line.split("=", 1)[1] for line in text.splitlines() if line.startswith("ExecStart=")]
    return user, shlex.split(moved(root, start))


def start_debian_broker(root: Path, port: int, log: Path) -> subprocess.Popen:
    """Debian's mosquitto as its unit starts it, on the fake root's installed configuration
    (the stock mosquitto.conf and dealerbox.conf, listening on *port*); returns once it listens."""
    (root / "etc/mosquitto/mosquitto.conf").write_text(moved(root, _stock_conf()))
    snippet = root / "etc/mosquitto/conf.d/dealerbox.conf"
    snippet.write_text(moved(root, snippet.read_text()).replace("listener 8883", f"listener {port}"))
    for line in _unit_lines("ExecStartPre"):
        subprocess.run(shlex.split(moved(root, line)), check=True)
    (start,) = _unit_lines("ExecStart")
    with open(log, "ab") as out:
        broker = subprocess.Popen(shlex.split(moved(root, start)), stdout=out, stderr=out, start_new_session=True)

    def listening():
        assert broker.poll() is None, log.read_text()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False

    wait_for(listening, f"mosquitto listening on {port}")
    return broker
