"""One table as the floor's views show it: its tile.

The collector's events and the web view's streams both send tables in this
shape, made here from a table's row in the store.
"""

from __future__ import annotations

import json

__all__ = ["view_table"]


def view_table(row: dict) -> dict:
    """One table as the view shows it, from its row in the store (``state`` and
    ``health`` as the store keeps them, JSON text, or already read)."""
    state, health = (json.loads(v) if isinstance(v, str) else (v or {})
                     for v in (row.get("state"), row.get("health")))
    open_ = state.get("open") if isinstance(state, dict) else None
    online = bool(row.get("online"))
    if not online:
        colour = "grey"
    elif open_ and open_.get("verdict") == "floor":
        colour = "red"
    elif open_:
        colour = "amber"
    else:
        colour = "green"
    return {"table": row["table_id"], "online": online, "colour": colour,
            "last_seq": row["last_seq"], "open": open_, "phase": state.get("phase"),
            "backlog": health.get("backlog"), "clock_ok": health.get("clock_ok"),
            "readers": health.get("readers"), "boot": row.get("boot"), "seen": row.get("seen")}
