"""The broker health check's result for Prometheus (docs/FLOOR.md, "Metrics"): written after
each check as a file in Prometheus's text format, for node_exporter's textfile collector, the
usual way a timer's job reports to Prometheus (the check runs as root on the broker's machine,
once a minute, and keeps no process to scrape).

The file is replaced atomically (``prometheus_client.write_to_textfile``), so a scrape never
reads half of it.
"""

from __future__ import annotations

from pathlib import Path

from prometheus_client import CollectorRegistry, Gauge, write_to_textfile

__all__ = ["write_check_result"]


def write_check_result(path: Path, ok: bool, now: float) -> None:
    """Write one check's result to *path*: ``dealerbox_broker_check_ok`` (1: the broker answered
    and no bridge of its own is stuck; 0: mosquitto is restarted) and when it ran."""
    registry = CollectorRegistry()
    Gauge("dealerbox_broker_check_ok", "1 when the last broker health check passed, 0 when it failed "
          "(and mosquitto was restarted)", registry=registry).set(1 if ok else 0)
    Gauge("dealerbox_broker_check_last_run_timestamp_seconds", "When the broker health check last ran (Unix time)",
          registry=registry).set(now)
    write_to_textfile(str(path), registry)
