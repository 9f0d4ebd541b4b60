"""Debian's mosquitto 2.0.11 wedged by its bridge's failed TLS connects: how often, and whether a plain bridge is.

A property's broker (the shipped snippet, TLS for its tables) bridges to a group broker
through a fault relay (bench.fault_link); no client connects to it in the meantime, as
on a quiet night. The link accepts and closes, or refuses, for 10 s and heals; 5 s
later the property's broker is wedged if it gives a fresh TLS client no CONNACK within
5 s (the health check's own probe, ``check_broker``). Then SIGTERM: a wedged 2.0.11
ignores it, which is why install-floor.sh's drop-in has systemd kill it 10 s later.

The same windows with the bridge over plain MQTT to a plain group listener (what a local
TLS tunnel in front of the bridge would give mosquitto) show where the fault lies: in the
bridge's TLS connect (docs/floor/group.md, Bridge outages). Keys, per kind of bridge:

- ``bridge_tls_wedged`` / ``bridge_plain_wedged``: windows that wedged the broker, of
  ``bridge_windows``.
- ``bridge_tls_wedged_cpu_share``: the wedged broker's CPU seconds a second, the most seen.
- ``bridge_tls_wedged_ignored_sigterm``: wedged brokers still running 15 s after SIGTERM.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from bench import mosquitto_missing, show_goals
from bench.fault_link import FaultyLink, free_port
from dealerbox.floor.operating.broker import SHIPPED_ACL, Broker, bridge_acl, make_pki, render_bridge
from dealerbox.floor.operating.broker_check import check_broker
from dealerbox.link.client import Identity

MODES = ("close", "refuse")
WINDOWS_PER_MODE = 3
OUTAGE_S = 10.0
SETTLE_S = 5.0
CONNACK_S = 5.0
SIGTERM_S = 15.0

GOALS = {
    "bridge_tls_wedged": ("", None, "plain {bridge_plain_wedged} of {bridge_windows}"),
}


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _plain_group(directory: Path) -> tuple[subprocess.Popen, int]:
    """A group broker with a plain listener, no TLS, anyone in."""
    directory.mkdir()
    port = free_port()
    conf = directory / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\n")
    proc = subprocess.Popen(["mosquitto", "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    return proc, port


def _plain_bridge(port: int) -> str:
    return ("connection dealerbox-group\n"
            f"address 127.0.0.1:{port}\n"
            "bridge_protocol_version mqttv50\nremote_clientid bridge-north\ncleansession false\n"
            "try_private false\nkeepalive_interval 10\nrestart_timeout 2 30\n"
            "topic dealerbox/v1/tables/# out 1\ntopic dealerbox/v1/ack/# in 1\n")


def window(top: Path, pki: Path, kind: str, mode: str) -> dict:
    """One outage of *mode* met by a *kind* ("tls" or "plain") bridge; what became of its broker."""
    acl = top / "acl"
    acl.write_text(SHIPPED_ACL.read_text() + "\n" + bridge_acl("north", ["T01"]))
    plain = None
    if kind == "tls":
        group = Broker(top / "group", pki, acl=acl)
        group.directory.mkdir()
        group.start()
        group_port = group.port
    else:
        group = None
        plain, group_port = _plain_group(top / "group")
    link = FaultyLink(group_port, group_port)
    bridge = (render_bridge(property_name="north", group_host="127.0.0.1", group_port=link.port, pki=pki,
                            group_ca=pki / "ca.crt") if kind == "tls" else _plain_bridge(link.port))
    prop = Broker(top / "north", pki, extra=bridge)
    prop.directory.mkdir()
    prop.start()
    try:
        time.sleep(3.0)  # the bridge up
        link.fault(mode)
        time.sleep(OUTAGE_S)
        link.heal()
        cpu_before = _cpu_s(prop.proc.pid)
        time.sleep(SETTLE_S)
        cpu_share = (_cpu_s(prop.proc.pid) - cpu_before) / SETTLE_S
        probe = Identity("127.0.0.1", prop.port, pki / "ca.crt", pki / "floor-admin.crt", pki / "floor-admin.key")
        wedged = not check_broker(probe, timeout=CONNACK_S, now=time.time()).ok
        ignored = False
        if wedged:
            prop.proc.send_signal(signal.SIGTERM)
            try:
                prop.proc.wait(timeout=SIGTERM_S)
            except subprocess.TimeoutExpired:
                ignored = True
        return {"wedged": wedged, "cpu_share": cpu_share, "ignored_sigterm": ignored}
    finally:
        prop.stop()   # SIGKILL after 10 s, as the drop-in has systemd do
        link.close()
        if group is not None:
            group.stop()
        if plain is not None:
            plain.terminate()
            plain.wait(timeout=30)


def run() -> dict:
    missing = mosquitto_missing()
    if missing:
        return {"bridge_wedge_skipped": missing}
    figures: dict = {"bridge_windows": WINDOWS_PER_MODE * len(MODES)}
    with tempfile.TemporaryDirectory(prefix="dealerbox-bridge-wedge-") as tmp:
        top = Path(tmp)
        pki = make_pki(top / "pki", ["T01", "floor-collector", "bridge-north", "floor-admin"])
        n = 0
        for kind in ("tls", "plain"):
            seen = []
            for mode in MODES:
                for _ in range(WINDOWS_PER_MODE):
                    n += 1
                    here = top / f"w{n}"
                    here.mkdir()
                    seen.append(window(here, pki, kind, mode))
            wedged = [w for w in seen if w["wedged"]]
            figures[f"bridge_{kind}_wedged"] = len(wedged)
            if kind == "tls":
                figures["bridge_tls_wedged_cpu_share"] = round(max((w["cpu_share"] for w in wedged), default=0.0), 2)
                figures["bridge_tls_wedged_ignored_sigterm"] = sum(w["ignored_sigterm"] for w in wedged)
    show_goals(GOALS, figures)
    return figures


if __name__ == "__main__":
    print(run())
