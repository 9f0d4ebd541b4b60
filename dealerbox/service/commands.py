"""The table's commands that run beside its packages; ``dealerbox.cli`` parses and calls them."""

from __future__ import annotations

import sys
from pathlib import Path

from dealerbox.service.uplink import Publisher, load_table_floor
from dealerbox.signals import wait_for_stop_signal


def publish(config: Path, journal: Path) -> int:
    """Run a table's publisher on its own, outside the daemon, until SIGTERM/SIGINT."""
    settings = load_table_floor(config)
    if not settings.enabled:
        print(f"dealerbox floor publish: {config}: [floor] enabled is not true; nothing to do",
              file=sys.stderr)
        return 2
    settings.identity.check()
    with Publisher(settings, journal):
        print(f"floor publisher: table {settings.table}, journal {journal}", file=sys.stderr, flush=True)
        wait_for_stop_signal()
    return 0
