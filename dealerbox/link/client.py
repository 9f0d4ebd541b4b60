"""What every floor client shares: its TLS identity and an MQTT v5 client."""

from __future__ import annotations

import logging
import ssl
import time
from dataclasses import dataclass
from pathlib import Path

from dealerbox.errors import FloorError

try:
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties
    from paho.mqtt.subscribeoptions import SubscribeOptions
except ImportError:  # the mqtt extra is not installed: floor reporting says so when used
    mqtt = CallbackAPIVersion = PacketTypes = Properties = SubscribeOptions = None

__all__ = ["Identity", "make_client", "require_paho", "mqtt", "Properties", "PacketTypes", "SubscribeOptions",
           "Complaints"]

log = logging.getLogger(__name__)


def require_paho() -> None:
    if mqtt is None:
        raise FloorError("floor reporting needs paho-mqtt: install dealerbox's mqtt extra "
                         "(pip install 'paho-mqtt>=2.0')")


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


class Complaints:
    """One warning per distinct problem, said again at most every *repeat_s* while it
    lasts: a client that retries every few seconds must not fill the journal."""

    def __init__(self, repeat_s: float = 300.0, clock=time.monotonic, logger: logging.Logger = log):
        self.repeat_s, self._clock, self._log = repeat_s, clock, logger
        self._last: tuple[str, float] | None = None

    def say(self, text: str) -> None:
        now = self._clock()
        if self._last is None or self._last[0] != text or now - self._last[1] >= self.repeat_s:
            self._log.warning("%s", text)
            self._last = (text, now)

    def clear(self) -> None:
        self._last = None


def connect_problem(exc: BaseException, host: str, port: int) -> str:
    """What a failed connection to the broker means, in an operator's words."""
    where = f"the broker at {host}:{port}"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return (f"floor: {where} failed our check of its certificate ({exc.verify_message}): it must be "
                "signed by the casino CA (the ca file) and name the host we connect to")
    if isinstance(exc, ssl.SSLError):
        return (f"floor: {where} ended the TLS handshake ({exc.reason or exc}): it refused our certificate "
                "(revoked, expired, not from the casino CA), or its own CRL expired (docs/floor/metrics.md, "
                "Troubleshooting)")
    return f"floor: cannot reach {where}: {exc}"


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
        lets the TCP connect through and swallows the handshake), and saying
        why a connection failed (paho retries in silence)."""

        complaints: Complaints | None = None

        def _create_socket(self):
            try:
                sock = super()._create_socket()
            except (OSError, ValueError) as exc:  # SSL errors are OSErrors, a name mismatch a ValueError
                if self.complaints is None:
                    self.complaints = Complaints()
                self.complaints.say(connect_problem(exc, self._host, self._port))
                raise
            if self.complaints is not None:
                self.complaints.clear()
            return sock

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
