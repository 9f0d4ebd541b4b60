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
except ImportError:  # the mqtt extra is not installed: floor reporting says so when used
    mqtt = CallbackAPIVersion = PacketTypes = Properties = None

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


class _Context(ssl.SSLContext):
    """Remembers the socket it wrapped last (see _Client)."""

    wrapped = None

    def wrap_socket(self, *args, **kwargs):
        self.wrapped = super().wrap_socket(*args, **kwargs)
        return self.wrapped


if mqtt is not None:
    class _Client(mqtt.Client):
        """paho's client, closing the TLS socket of a handshake that failed
        (paho 2.2 leaves it to the garbage collector, e.g. when a partition
        lets the TCP connect through and swallows the handshake)."""

        def _ssl_wrap_socket(self, tcp_sock):
            try:
                return super()._ssl_wrap_socket(tcp_sock)
            except BaseException:
                wrapped = getattr(self._ssl_context, "wrapped", None)
                if wrapped is not None:
                    wrapped.close()
                tcp_sock.close()
                raise


def make_client(identity: Identity, client_id: str) -> "mqtt.Client":
    """An MQTT v5 client with TLS and our client certificate (not connected).

    The broker checks its own certificate against the casino CA and its name
    (the host we connect to), so a rogue broker cannot collect the journal.
    """
    require_paho()
    identity.check()
    client = _Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
    context = _Context(ssl.PROTOCOL_TLS_CLIENT)  # verifies the broker's certificate and name
    context.load_verify_locations(cafile=str(identity.ca))
    context.load_cert_chain(str(identity.cert), str(identity.key))
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    client.tls_set_context(context)
    return client
