"""What every floor client shares: its TLS identity and an MQTT v5 client."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

from . import FloorError

try:
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties
except ImportError:  # pragma: no cover - the mqtt extra is not installed
    mqtt = None

__all__ = ["Identity", "make_client", "require_paho", "mqtt", "Properties", "PacketTypes"]


def require_paho() -> None:
    if mqtt is None:
        raise FloorError("floor reporting needs paho-mqtt: pip install 'dealerbox[mqtt]'")


@dataclass(frozen=True)
class Identity:
    """Where the broker is and who we are to it: the casino CA, and our
    certificate and key (its CN is our user name and client id)."""

    host: str
    port: int
    ca: Path
    cert: Path
    key: Path

    def check(self) -> None:
        for name in ("ca", "cert", "key"):
            path = Path(getattr(self, name))
            if not path.is_file():
                raise FloorError(f"floor: {name} file {path} does not exist")


def make_client(identity: Identity, client_id: str) -> "mqtt.Client":
    """An MQTT v5 client with TLS and our client certificate (not connected).

    The broker checks its own certificate against the casino CA and its name
    (the host we connect to), so a rogue broker cannot collect the journal.
    """
    require_paho()
    identity.check()
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                         protocol=mqtt.MQTTv5)
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(identity.ca))
    context.load_cert_chain(str(identity.cert), str(identity.key))
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    client.tls_set_context(context)
    return client
