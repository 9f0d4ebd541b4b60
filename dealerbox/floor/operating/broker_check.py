"""The property's broker health check (``floor broker-check``, dealerbox-broker-check.timer).

Two ways a property's mosquitto fails its tables and the group without dying:

- it stops answering: a broker spinning or stopped still accepts TCP in the kernel, so only a
  CONNACK says it works (:func:`~dealerbox.floor.operating.broker.connack_seconds`);
- its bridge stops trying: on Debian's mosquitto 2.0.11 a reconnect that fails with
  "Error creating bridge: Protocol error." can leave the broker making no further bridge
  attempts (and spinning), while its own clients still get in. The group floor is blind
  until mosquitto restarts.

The second is seen through the bridge's own notifications (bridge.conf ``notifications true``):
the broker keeps its bridge's state retained on ``dealerbox/v1/floor/bridges/<property>``.
A bridge down longer than ``blind_restart_s`` fails the check, so mosquitto is restarted; a
link that is really down costs its tables one reconnect per ``blind_restart_s``, and their
journals keep every line meanwhile. When each bridge went down is kept in a small state file,
since the retained state carries no time.

Each check's result is kept too (``--result``, :meth:`BrokerHealth.save`): whether it passed,
its reason in one word, when it ran, how long the CONNACK took and the bridges it watched. The
floor view reads that file at every scrape of its ``/metrics`` (docs/floor/metrics.md), so
IT sees the check without an exporter of its own.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dealerbox.atomic import save_atomic
from dealerbox.errors import FloorError
from dealerbox.floor.operating.broker import connack_seconds
from dealerbox.floor.collecting.message import BRIDGES_WILDCARD, Message
from dealerbox.link.client import Identity, make_client

__all__ = ["BridgeSeen", "BrokerHealth", "REASONS", "SHIPPED_RESULT", "bridge_states", "check_broker"]

log = logging.getLogger(__name__)

#: How long to wait for the broker's retained bridge states after subscribing.
RETAINED_WAIT_S = 1.5

#: Where the shipped dealerbox-broker-check.service keeps its last result (``--result
#: %S/dealerbox-broker-check/result.json``, systemd's StateDirectory under /var/lib), and so
#: where the floor view reads it unless floor.toml's ``[web] broker_check_result`` says otherwise.
SHIPPED_RESULT = Path("/var/lib/dealerbox-broker-check/result.json")

#: A check's reason in one word: it passed; no successful CONNACK came (no answer in time, no
#: connection, or the client refused); the broker's retained bridge states could not be read;
#: a bridge of its own stayed down longer than allowed (mosquitto is restarted for the last three).
REASONS = ("ok", "no_connack", "bridges_unread", "bridge_stuck")


def bridge_states(identity: Identity, timeout: float = 5.0) -> dict[str, bool]:
    """Each bridge of the broker behind *identity* and whether it is connected, from its
    retained notifications (``{"north": True}``); empty when the broker has no bridge."""
    states: dict[str, bool] = {}
    subscribed = threading.Event()
    connected = threading.Event()

    def on_connect(client, _u, _f, reason_code, _p):
        if not reason_code.is_failure:
            client.subscribe(BRIDGES_WILDCARD, qos=1)
        connected.set()

    def on_subscribe(*_args):
        subscribed.set()

    def on_message(_c, _u, msg):
        note = Message.on_bridge_topic(msg.topic, msg.payload, 0.0)
        if note is not None and note.payload in (b"0", b"1"):
            states[note.table] = note.payload == b"1"

    client = make_client(identity, f"broker-check-bridges-{threading.get_native_id()}")
    client.on_connect, client.on_subscribe, client.on_message = on_connect, on_subscribe, on_message
    try:
        client.connect(identity.host, identity.port, keepalive=10)
    except OSError as e:
        raise FloorError(f"cannot connect to the broker at {identity.host}:{identity.port}: {e}") from None
    client.loop_start()
    try:
        if not subscribed.wait(timeout):
            raise FloorError(f"the broker at {identity.host}:{identity.port} did not take a subscription to "
                             f"{BRIDGES_WILDCARD} within {timeout:g} s (its ACL must let {Path(identity.cert).stem} read it)")
        # Retained messages follow the SUBACK at once; a short wait collects them all.
        threading.Event().wait(RETAINED_WAIT_S)
    finally:
        client.disconnect()
        client.loop_stop()
    return dict(states)


@dataclass(frozen=True)
class BridgeSeen:
    """One bridge of the broker's own as a check saw it: ``connected``, and how long it had
    been down then (``down_s``, 0 while it is up)."""

    connected: bool
    down_s: float = 0.0


@dataclass
class BrokerHealth:
    """What one check found: ``ok``, and one line saying what (or why not); its reason (one of
    :data:`REASONS`), when it ran (``ran_at``, Unix time), how long the CONNACK took (None when
    none came) and the broker's own bridges it watched, by property name."""

    ok: bool
    line: str
    reason: str = "ok"
    ran_at: float = 0.0
    connack_s: float | None = None
    bridges: dict[str, BridgeSeen] = field(default_factory=dict)

    def save(self, path: Path) -> None:
        """Keep this result in *path* (JSON, replaced atomically so that a reader never sees
        half of it; readable by all: the floor view reads it as its own user)."""
        save_atomic(path, json.dumps(asdict(self), sort_keys=True) + "\n", new_mode=0o644)

    @classmethod
    def read(cls, path: Path) -> "BrokerHealth":
        """The result :meth:`save` kept in *path*: :class:`FileNotFoundError` when there is none
        (the check never ran), :class:`FloorError` naming the file when it cannot be read or is
        not a result."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            bridges = {str(name): BridgeSeen(bool(b["connected"]), float(b["down_s"]))
                       for name, b in data["bridges"].items()}
            connack = data["connack_s"]
            health = cls(ok=data["ok"], line=str(data["line"]), reason=data["reason"], ran_at=float(data["ran_at"]),
                         connack_s=None if connack is None else float(connack), bridges=bridges)
        except FileNotFoundError:
            raise
        except (OSError, UnicodeDecodeError) as e:
            raise FloorError(f"{path}: cannot read the broker check's result: {e}") from None
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            raise FloorError(f"{path}: not a broker check's result ({type(e).__name__}: {e})") from None
        if not isinstance(health.ok, bool) or health.reason not in REASONS or health.ok != (health.reason == "ok") \
                or not math.isfinite(health.ran_at):
            raise FloorError(f"{path}: not a broker check's result (ok {health.ok!r}, reason {health.reason!r})")
        return health


def _read_state(path: Path | None) -> dict[str, float]:
    if path is None or not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
        return {str(k): float(v) for k, v in data.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        log.warning("broker-check: %s is unreadable; starting afresh", path)
        return {}


def check_broker(identity: Identity, *, timeout: float, blind_restart_s: float = 0.0,
                 state: Path | None = None, now: float, bridges=(), result: Path | None = None) -> BrokerHealth:
    """One health check of the property's broker at *now* (epoch seconds), its result kept in
    *result* when given (:meth:`BrokerHealth.save`).

    Fails when no CONNACK comes within *timeout*, or (with *blind_restart_s* > 0) when one of
    *bridges*, this broker's own bridges by property name, has been down at every check for
    longer than *blind_restart_s*. A failed bridge restarts its clock, so the next restart
    comes *blind_restart_s* later, not at the next check.

    Only the broker's own bridges count: every property's bridge state is retained on the
    group broker, and each bridge brings the group's ``floor/#`` in, so a property's broker
    holds its neighbours' states too; a neighbour's outage is not a reason to restart this
    broker. With no bridge of its own (the group's broker) the bridges are not watched."""
    health = _check(identity, timeout=timeout, blind_restart_s=blind_restart_s, state=state, now=now,
                    bridges=bridges)
    health.ran_at = now
    if result is not None:
        health.save(result)
    return health


def _check(identity: Identity, *, timeout: float, blind_restart_s: float, state: Path | None, now: float,
           bridges) -> BrokerHealth:
    try:
        waited = connack_seconds(identity, timeout)
    except FloorError as e:
        return BrokerHealth(False, str(e), "no_connack")
    where = f"{identity.host}:{identity.port}"
    own = set(bridges)
    if blind_restart_s <= 0 or not own:
        return BrokerHealth(True, f"CONNACK from {where} in {waited:.3f} s", connack_s=waited)
    try:
        heard = bridge_states(identity, timeout)
    except FloorError as e:
        return BrokerHealth(False, str(e), "bridges_unread", connack_s=waited)
    # A bridge of its own not heard of at all has never connected since the broker started.
    states = {name: heard.get(name, False) for name in own}
    down_since = {name: since for name, since in _read_state(state).items()
                  if states.get(name) is False}
    for name, up in states.items():
        if not up:
            down_since.setdefault(name, now)
    seen = {name: BridgeSeen(up, 0.0 if up else max(0.0, now - down_since[name]))
            for name, up in sorted(states.items())}
    stuck = sorted(name for name, since in down_since.items() if now - since > blind_restart_s)
    for name in stuck:
        down_since[name] = now
    if state is not None:
        save_atomic(state, json.dumps(down_since, sort_keys=True), new_mode=0o600)
    if stuck:
        return BrokerHealth(False, f"the bridge to the group ({', '.join(stuck)}) has been down for more than "
                                   f"{blind_restart_s:g} s: mosquitto is restarted to make it try again",
                            "bridge_stuck", connack_s=waited, bridges=seen)
    blind = ", ".join(f"{n} down for {now - s:.0f} s" for n, s in sorted(down_since.items()))
    return BrokerHealth(True, f"CONNACK from {where} in {waited:.3f} s; bridges: "
                              + (blind or ", ".join(f"{n} up" for n in sorted(states)) or "none"),
                        connack_s=waited, bridges=seen)
