"""The broker health check's last result for Prometheus (docs/floor/metrics.md): a
``prometheus_client`` collector the floor view's ``/metrics`` registers, reading the result file
the check keeps (``floor broker-check --result``, :meth:`BrokerHealth.save`) at every scrape.

The check runs once every 30 s as a oneshot job and keeps no process to scrape; the floor view
runs beside it on the broker's machine (install-floor.sh installs both), so the view exports
what the check last found and IT needs no exporter of its own for it.

No file is a check that never ran, said as such; a file that cannot be read or is not a result
is said as ``unreadable`` and logged once (again only once it has been readable in between), never
an error of the scrape.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from prometheus_client.core import GaugeMetricFamily

from dealerbox.errors import FloorError
from dealerbox.floor.operating.broker_check import REASONS, BrokerHealth

__all__ = ["BrokerCheckCollector", "STATES"]

log = logging.getLogger(__name__)

#: What the floor knows of the check: its last result passed or failed, it never ran (no file),
#: or its file is unreadable.
STATES = ("ok", "failed", "never_ran", "unreadable")
NS = "dealerbox_floor_broker_check"


class BrokerCheckCollector:
    """The series of the broker check's result in *path*, read at each scrape."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._logged_unreadable = False

    def describe(self):
        # Nothing up front: registering must not read the file.
        return []

    def read(self) -> tuple[str, BrokerHealth | None]:
        """The check's state (one of :data:`STATES`) and its last result (None unless read)."""
        try:
            health = BrokerHealth.read(self.path)
        except FileNotFoundError:
            return "never_ran", None
        except FloorError as exc:
            with self._lock:
                first, self._logged_unreadable = not self._logged_unreadable, True
            if first:
                log.warning("floor metrics: %s; exported as unreadable", exc)
            return "unreadable", None
        with self._lock:
            self._logged_unreadable = False
        return ("ok" if health.ok else "failed"), health

    def collect(self):
        state, health = self.read()
        m = GaugeMetricFamily(NS, "1 for what the broker health check's result file says: its last check "
                              "passed (ok) or failed and mosquitto was restarted (failed), there is no file "
                              "(never_ran), or it cannot be read (unreadable); 0 for the others", labels=["state"])
        for s in STATES:
            m.add_metric([s], 1 if s == state else 0)
        yield m
        if health is None:
            return
        m = GaugeMetricFamily(f"{NS}_reason", "1 for the last broker health check's reason: ok, no_connack, "
                              "bridges_unread or bridge_stuck; 0 for the others", labels=["reason"])
        for reason in REASONS:
            m.add_metric([reason], 1 if reason == health.reason else 0)
        yield m
        yield GaugeMetricFamily(f"{NS}_last_run_timestamp_seconds", "When the broker health check last ran "
                                "(Unix time)", value=health.ran_at)
        if health.connack_s is not None:
            yield GaugeMetricFamily(f"{NS}_connack_seconds", "How long the last broker health check waited for "
                                    "mosquitto's CONNACK", value=health.connack_s)
        connected = GaugeMetricFamily(f"{NS}_bridge_connected", "1 when a bridge of the broker's own was "
                                      "connected at the last check, 0 when down", labels=["property"])
        down = GaugeMetricFamily(f"{NS}_bridge_down_seconds", "How long a bridge of the broker's own had been "
                                 "down at the last check (0: up)", labels=["property"])
        for name, seen in sorted(health.bridges.items()):
            connected.add_metric([name], 1 if seen.connected else 0)
            down.add_metric([name], seen.down_s)
        yield from (connected, down)
