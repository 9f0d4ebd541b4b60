"""Run a mosquitto with the shipped floor configuration, for tests, the bench
and a technician's bench setup.

The shipped ``firmware_config/floor/mosquitto.conf`` (a ``conf.d`` snippet)
and ``acl`` are what a casino installs. :func:`render_config` puts first what
Debian's stock ``mosquitto.conf`` says before it includes ``conf.d``
(persistence on, and where), then keeps every line of the snippet and changes
only what must differ on this machine: the listener port (bound to
127.0.0.1), the PKI, ACL and dynamic security paths, the plugin's path and the
persistence directory. So whatever the tests prove about refusals is proved of
the shipped settings. (tests/systemd/test_install_floor.py runs the stock file itself,
with mosquitto dropping to its own user, as Debian starts it.)
"""

from __future__ import annotations

import getpass
import glob
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from dealerbox.resources import data_dir
from dealerbox.errors import FloorError
from dealerbox.floor.collecting.message import bridge_topic
from dealerbox.link.client import Identity, make_client

__all__ = ["FLOOR_CONFIG_DIR", "MAKE_CA", "Broker", "render_config", "render_bridge", "bridge_acl", "free_port",
           "make_pki", "dynsec_plugin", "connack_seconds"]

FLOOR_CONFIG_DIR = data_dir("floor")
MAKE_CA = FLOOR_CONFIG_DIR / "make-ca.sh"
SHIPPED_CONF = FLOOR_CONFIG_DIR / "mosquitto.conf"
SHIPPED_ACL = FLOOR_CONFIG_DIR / "acl"
SHIPPED_DYNSEC = FLOOR_CONFIG_DIR / "dynamic-security.json"
SHIPPED_BRIDGE = FLOOR_CONFIG_DIR / "bridge.conf"
DYNSEC_NAME = "dealerbox-dynsec.json"


def dynsec_plugin() -> str:
    """The path of mosquitto's dynamic security plugin on this machine (Debian
    puts it under ``/usr/lib/<multiarch>/``), as install-floor.sh finds it."""
    found = sorted(glob.glob("/usr/lib/*/mosquitto_dynamic_security.so"))
    if not found:
        raise FloorError("mosquitto's dynamic security plugin is not installed "
                         "(/usr/lib/*/mosquitto_dynamic_security.so; Debian package: mosquitto)")
    return found[0]


def free_port() -> int:
    """A TCP port nobody listens on at the moment, on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_pki(directory, clients=(), *, broker_name: str = "localhost") -> Path:
    """A fresh CA in ``directory`` with a broker certificate for 127.0.0.1
    and one client certificate per name in ``clients``; returns the directory."""
    directory = Path(directory)
    if not (directory / "ca.key").exists():
        _ca(directory, "init")
        _ca(directory, "broker", broker_name, "127.0.0.1")
    # make-ca.sh refuses a second certificate for a CN: issue only the missing ones.
    clients = [c for c in clients if not (directory / f"{c}.crt").exists()]
    for i in range(0, len(clients), 50):
        _ca(directory, "client", *clients[i:i + 50])
    return directory


def _ca(directory: Path, *args: str) -> None:
    proc = subprocess.run(["sh", str(MAKE_CA), str(directory), *args],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise FloorError(f"make-ca.sh {' '.join(args)} failed: {proc.stderr.strip()}")


_PATH_KEYS = {
    "cafile": "ca.crt", "certfile": "broker.crt", "keyfile": "broker.key", "crlfile": "ca.crl",
}


def render_config(*, port: int, pki: Path, acl: Path, persistence: Path,
                  shipped: Path = SHIPPED_CONF,
                  autosave_interval: int | None = None) -> str:
    """Debian's stock settings and the shipped snippet, with this machine's port and paths."""
    # What Debian's /etc/mosquitto/mosquitto.conf sets before including conf.d/.
    out = ["persistence true", f"persistence_location {persistence}/"]
    for raw in shipped.read_text().splitlines():
        key = raw.split(None, 1)[0] if raw.strip() and not raw.lstrip().startswith("#") else ""
        if key == "listener":
            out.append(f"listener {port} 127.0.0.1")
        elif key in _PATH_KEYS:
            out.append(f"{key} {pki / _PATH_KEYS[key]}")
        elif key == "acl_file":
            out.append(f"acl_file {acl}")
        elif key == "plugin":
            out.append(f"plugin {dynsec_plugin()}")
        elif key == "plugin_opt_config_file":
            out.append(f"plugin_opt_config_file {persistence / DYNSEC_NAME}")
        elif key == "autosave_interval" and autosave_interval is not None:
            out.append(f"autosave_interval {autosave_interval}")
        else:
            out.append(raw)
    # Run as whoever runs the tests: started as root, mosquitto would drop
    # to the user "mosquitto", who cannot read a test's private directory.
    out.append(f"user {getpass.getuser()}")
    out.append("log_dest stderr")
    out.append("log_type error")
    out.append("log_type warning")
    out.append("log_type notice")
    return "\n".join(out) + "\n"


class Broker:
    """A mosquitto process on a free loopback port, with the shipped config.

    A context manager; :meth:`kill` sends SIGKILL (losing what the broker
    held, as a power cut would) and :meth:`start` starts it again on the same
    port with the same persistence directory.
    """

    def __init__(self, directory, pki, *, port: int | None = None, acl: Path = SHIPPED_ACL,
                 executable: str | None = None, extra: str = ""):
        #: More configuration after the shipped snippet's (another conf.d file: a bridge).
        self.extra = extra
        self.directory = Path(directory)
        self.pki = Path(pki)
        self.port = port or free_port()
        self.acl = Path(acl)
        self.executable = executable or shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        self.proc: subprocess.Popen | None = None
        self.conf = self.directory / "mosquitto.conf"
        self.log = self.directory / "mosquitto.log"

    def start(self, timeout: float = 30.0) -> "Broker":
        if not os.path.exists(self.executable):
            raise FloorError("mosquitto is not installed (Debian package: mosquitto)")
        persistence = self.directory / "persist"
        persistence.mkdir(parents=True, exist_ok=True)
        if not (persistence / DYNSEC_NAME).exists():  # the plugin rewrites it: kept across restarts
            shutil.copyfile(SHIPPED_DYNSEC, persistence / DYNSEC_NAME)
        self.conf.write_text(render_config(port=self.port, pki=self.pki, acl=self.acl,
                                           persistence=persistence) + self.extra)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([self.executable, "-c", str(self.conf)],
                                         stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise FloorError(f"mosquitto exited with {self.proc.returncode}: "
                                 f"{self.log.read_text(errors='replace')[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if time.monotonic() > deadline:
                    raise FloorError(f"mosquitto did not listen on port {self.port}") from None
                time.sleep(0.05)

    def reload(self) -> None:
        """SIGHUP: mosquitto reads its config, ACL and CRL again."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGHUP)

    def kill(self) -> None:
        """SIGKILL, and wait for the process to be gone."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
        self.proc = None

    close = stop

    def __enter__(self) -> "Broker":
        return self.start() if self.proc is None else self

    def __exit__(self, *exc) -> None:
        self.stop()


def stop_process(proc: subprocess.Popen, timeout: float = 10) -> None:
    """SIGTERM *proc* and wait; SIGKILL it if it has not gone after *timeout* seconds."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def render_bridge(*, property_name: str, group_host: str, group_port: int, pki: Path,
                  group_ca: Path | None = None, shipped: Path = SHIPPED_BRIDGE) -> str:
    """The shipped bridge snippet for *property_name*, to the group broker at
    *group_host*:*group_port*, with the bridge's certificate in *pki* and the group's CA
    certificate *group_ca* (default: ``group-ca.crt`` in *pki*; a test whose two brokers
    share one CA names its ``ca.crt``)."""
    text = shipped.read_text()
    text = (text.replace("@PROPERTY@", property_name).replace("@GROUP_HOST@", group_host)
            .replace("@GROUP_PORT@", str(group_port)))
    text = text.replace("/etc/mosquitto/dealerbox/", f"{pki}/")
    if group_ca is not None:
        text = text.replace(f"bridge_cafile {pki}/group-ca.crt", f"bridge_cafile {group_ca}")
    return text


def bridge_acl(property_name: str, tables) -> str:
    """The group broker's ACL lines for a property's bridge: its tables' topics, and
    the floor's own topics to read; nothing of another property's tables."""
    lines = [f"user bridge-{property_name}"]
    for table in tables:
        lines += [f"topic write dealerbox/v1/tables/{table}/#", f"topic read dealerbox/v1/ack/{table}"]
    # Its notifications (bridge.conf): whether the property's bridge is up.
    lines.append(f"topic write {bridge_topic(property_name)}")
    lines.append("topic read dealerbox/v1/floor/#")
    return "\n".join(lines) + "\n"


def connack_seconds(identity: Identity, timeout: float = 5.0) -> float:
    """How long a fresh TLS MQTT v5 client of *identity* waited for a successful CONNACK
    from its broker; :class:`FloorError` when none came within *timeout* seconds.

    The health check of a property's broker (``floor broker-check``): a broker spinning
    or stopped still accepts TCP in the kernel, so only a CONNACK says it works. The
    client runs in a thread of its own, waited for at most *timeout*: a TLS handshake
    that never ends (a stopped broker) blocks paho's connect itself."""
    done = threading.Event()
    result: dict = {}

    def on_connect(_c, _u, _f, reason_code, _p):
        result["rc"] = reason_code
        done.set()

    def attempt():
        try:
            client.connect(identity.host, identity.port, keepalive=10)
            client.loop_start()
        except OSError as e:
            result["error"] = e
            done.set()

    client = make_client(identity, f"broker-check-{os.getpid()}")
    client.on_connect = on_connect
    start = time.monotonic()
    threading.Thread(target=attempt, daemon=True).start()
    answered = done.wait(timeout)
    waited = time.monotonic() - start
    if answered and "rc" in result:
        client.disconnect()
        client.loop_stop()
    where = f"{identity.host}:{identity.port}"
    if not answered:
        raise FloorError(f"no CONNACK from the broker at {where} within {timeout:g} s")
    if "error" in result:
        raise FloorError(f"cannot connect to the broker at {where}: {result['error']}")
    if result["rc"].is_failure:
        raise FloorError(f"the broker at {where} refused {Path(identity.cert).name}: {result['rc']}")
    return waited
