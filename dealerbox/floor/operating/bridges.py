"""The properties' bridges to the group broker, both sides (docs/floor/group.md, Bridges):
``dealerbox floor bridge add|remove|list``.

- On the property's floor server, the bridge is a ``conf.d`` file of mosquitto's,
  ``/etc/mosquitto/conf.d/dealerbox-bridge-<property>.conf``, the shipped bridge.conf
  filled in. install-floor.sh ships ``conf.d/dealerbox.conf`` only: it never touches it.
- On the group's server, the bridge's identity (``bridge-<property>``, its certificate's
  CN) and its topic rights are a client and a role of mosquitto's dynamic security plugin,
  made over the broker's control topic with ``mosquitto_ctrl`` as ``floor-admin`` (the
  identity make-ca.sh's ``kick`` uses). The plugin keeps them in its own file
  (/var/lib/mosquitto/dealerbox-dynsec.json), which install-floor.sh makes once and never
  rewrites: an upgrade keeps them, where lines in the shipped ``acl`` it replaces were lost.
  They take effect at once, with no reload.

The rights: write the property's tables' topics and its bridge's notifications; read the
acks of its tables and the floor's own topics; nothing of another property's tables.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dealerbox.atomic import save_atomic
from dealerbox.errors import FloorError
from dealerbox.floor.operating.broker import render_bridge
from dealerbox.floor.collecting.message import bridge_topic
from dealerbox.link import protocol as P

__all__ = ["GroupBroker", "bridge_name", "conf_path", "write_property_side", "remove_property_side",
           "property_bridges", "group_acls", "grant", "revoke", "granted"]

#: A property's name: it goes into a CN, a file name and a topic.
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
_TABLE_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
CONF_DIR = Path("/etc/mosquitto/conf.d")
PKI_DIR = Path("/etc/mosquitto/dealerbox")
#: On a property's server, the group's CA certificate, beside the property's own ca.crt.
GROUP_CA = "group-ca.crt"
_CONF_PREFIX = "dealerbox-bridge-"
#: A table's right in ``mosquitto_ctrl dynsec getRole``'s answer (2.0 prints text, not JSON).
_TABLE_ACL_RE = re.compile(r"publishClientSend\s*:\s*allow\s*:\s*" + re.escape(P.ROOT) + r"/tables/([^/\s]+)/#")


def bridge_name(property_name: str) -> str:
    """The bridge's identity (its certificate's CN, user and client id) for *property_name*."""
    if not _NAME_RE.match(property_name):
        raise FloorError(f"property name {property_name!r}: expected 1 to 40 lowercase letters, digits or -, "
                         "starting with a letter or digit")
    return f"bridge-{property_name}"


def conf_path(property_name: str, conf_dir: Path = CONF_DIR) -> Path:
    """The property side's conf.d file of *property_name*'s bridge."""
    bridge_name(property_name)
    return Path(conf_dir) / f"{_CONF_PREFIX}{property_name}.conf"


def write_property_side(property_name: str, group_host: str, group_port: int = 8883, *,
                        conf_dir: Path = CONF_DIR, pki: Path = PKI_DIR) -> Path:
    """Write the property's bridge to the group broker at *group_host*:*group_port* (the
    shipped bridge.conf filled in); returns the file. mosquitto reads it when restarted."""
    name = bridge_name(property_name)
    pki = Path(pki)
    for file in (f"{name}.crt", f"{name}.key"):
        if not (pki / file).exists():
            raise FloorError(f"no {pki / file}: issue the bridge's certificate on the group's CA "
                             f"(dealerbox-floor-ca client {name}) and copy it here first")
    if not (pki / GROUP_CA).exists():
        raise FloorError(f"no {pki / GROUP_CA}: copy the group CA's ca.crt here under that name "
                         "(the bridge checks the group broker's certificate with it)")
    if not group_host or any(c.isspace() for c in group_host):
        raise FloorError(f"group host {group_host!r}: expected a host name or address")
    if not 1 <= group_port <= 65535:
        raise FloorError(f"group port {group_port}: expected 1..65535")
    path = conf_path(property_name, conf_dir)
    save_atomic(path, render_bridge(property_name=property_name, group_host=group_host,
                                    group_port=group_port, pki=pki), new_mode=0o644)
    return path


def remove_property_side(property_name: str, *, conf_dir: Path = CONF_DIR) -> bool:
    """Remove the property's bridge file; False if there was none."""
    path = conf_path(property_name, conf_dir)
    if not path.exists():
        return False
    path.unlink()
    return True


def property_bridges(conf_dir: Path = CONF_DIR) -> dict[str, str]:
    """The bridges this property's broker has: property name -> ``host:port`` of its group."""
    found = {}
    for path in sorted(Path(conf_dir).glob(f"{_CONF_PREFIX}*.conf")):
        address = re.search(r"^address\s+(\S+)", path.read_text(), re.M)
        found[path.name[len(_CONF_PREFIX):-len(".conf")]] = address.group(1) if address else "?"
    return found


def group_acls(property_name: str, tables) -> list[tuple[str, str]]:
    """The dynamic security ACLs (type, topic) of *property_name*'s bridge on the group broker."""
    tables = list(tables)
    if not tables:
        raise FloorError("a bridge needs at least one table (--tables T01 T02 ...)")
    for table in tables:
        if not _TABLE_RE.match(table):
            raise FloorError(f"table {table!r}: expected 1 to 64 letters, digits, - or _")
    acls = [("publishClientSend", f"{P.ROOT}/tables/{t}/#") for t in tables]
    acls.append(("publishClientSend", bridge_topic(property_name)))
    # The bridge subscribes to ack/# and floor/# (bridge.conf); of the acks, its tables' only reach it.
    acls += [("subscribePattern", f"{P.ROOT}/ack/#"), ("subscribePattern", f"{P.ROOT}/floor/#")]
    acls += [("publishClientReceive", P.ack_topic(t)) for t in tables]
    acls.append(("publishClientReceive", f"{P.ROOT}/floor/#"))
    return acls


@dataclass(frozen=True)
class GroupBroker:
    """How to reach the group broker's control topic: as ``floor-admin``, from *pki*."""

    host: str = "127.0.0.1"
    port: int = 8883
    pki: Path = PKI_DIR

    def ctrl(self, *args: str) -> str:
        """One ``mosquitto_ctrl dynsec`` command; its output. mosquitto_ctrl exits 0 even when
        the broker refused: a refusal is what it prints on stderr (as make-ca.sh reads it)."""
        for file in ("ca.crt", "floor-admin.crt", "floor-admin.key"):
            if not (Path(self.pki) / file).exists():
                raise FloorError(f"no {Path(self.pki) / file} (install-floor.sh issues floor-admin's certificate)")
        try:
            proc = subprocess.run(
                ["mosquitto_ctrl", "-h", self.host, "-p", str(self.port),
                 "--cafile", str(Path(self.pki) / "ca.crt"), "--cert", str(Path(self.pki) / "floor-admin.crt"),
                 "--key", str(Path(self.pki) / "floor-admin.key"), "dynsec", *args],
                capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30)
        except FileNotFoundError:
            raise FloorError("mosquitto_ctrl is not installed (Debian package: mosquitto)") from None
        except subprocess.TimeoutExpired:
            raise FloorError(f"mosquitto_ctrl got no answer from {self.host}:{self.port} in 30 s") from None
        if proc.returncode != 0 or proc.stderr.strip():
            raise FloorError(f"mosquitto_ctrl dynsec {args[0]}: {(proc.stderr or proc.stdout).strip()}")
        return proc.stdout


def grant(group: GroupBroker, property_name: str, tables) -> list[tuple[str, str]]:
    """Give *property_name*'s bridge its identity and rights on the group broker (again, when it
    had them: the role is made anew with exactly these tables). Returns the ACLs."""
    name = bridge_name(property_name)
    acls = group_acls(property_name, tables)
    revoke(group, property_name)
    group.ctrl("createRole", name)
    for kind, topic in acls:
        group.ctrl("addRoleACL", name, kind, topic, "allow")
    # No password: the listener takes certificates only, and the CN is the user.
    group.ctrl("createClient", name)
    group.ctrl("addClientRole", name, name)
    return acls


def revoke(group: GroupBroker, property_name: str) -> bool:
    """Take *property_name*'s bridge identity and rights off the group broker (its session
    ends); False if it had none."""
    name = bridge_name(property_name)
    had = name in _list(group, "listClients") or name in _list(group, "listRoles")
    if name in _list(group, "listClients"):
        group.ctrl("deleteClient", name)
    if name in _list(group, "listRoles"):
        group.ctrl("deleteRole", name)
    return had


def granted(group: GroupBroker) -> dict[str, list[str]]:
    """The bridges the group broker knows: property name -> its tables (from its role's ACLs)."""
    found = {}
    for client in _list(group, "listClients"):
        if not client.startswith("bridge-"):
            continue
        tables = sorted({m.group(1) for m in _TABLE_ACL_RE.finditer(group.ctrl("getRole", client))})
        found[client[len("bridge-"):]] = tables
    return found


def _list(group: GroupBroker, what: str) -> list[str]:
    return [line.strip() for line in group.ctrl(what).splitlines() if line.strip()]

