"""The floor view in a terminal (Textual), fed by the collector's web view.

A grid of tables: red (blinking) when an open irregularity needs the floor,
amber while the dealer corrects one, green when clean, grey when offline;
each with its open irregularity, its age and its backlog. Below, the alerts
that stay until someone clears them (select one, press ``c``).
"""

from __future__ import annotations

import datetime as _dt
import getpass
import json
import threading
import time
import urllib.request
from urllib.parse import urljoin

from textual.app import App, ComposeResult
from textual.containers import Grid
from textual.widgets import DataTable, Footer, Header, Static

__all__ = ["FloorView", "run_view", "sse_events"]


def sse_events(url: str, stop: threading.Event, timeout: float = 30.0):
    """Yield ``(event, data)`` from a server-sent events stream until ``stop``."""
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        name, data = "message", []
        for raw in resp:
            if stop.is_set():
                return
            line = raw.decode("utf-8").rstrip("\r\n")
            if not line:
                if data:
                    yield name, json.loads("\n".join(data))
                name, data = "message", []
            elif line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())


def age(since: str | None, now: float | None = None) -> str:
    if not since:
        return ""
    try:
        t = _dt.datetime.fromisoformat(since.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return ""
    s = max(0.0, (time.time() if now is None else now) - t)
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min"


class TableTile(Static):
    """One table of the grid."""

    DEFAULT_CSS = """
    TableTile { height: 5; padding: 0 1; color: black; }
    TableTile.green { background: green; }
    TableTile.amber { background: orange; }
    TableTile.grey { background: grey; }
    TableTile.red { background: red; color: white; }
    TableTile.red.dark { background: darkred; }
    """

    def show(self, t: dict) -> None:
        for c in ("green", "amber", "grey", "red"):
            self.set_class(t["colour"] == c, c)
        if not t["online"]:
            what = "offline"
        elif t.get("open"):
            what = f"{t['open'].get('irregularity')} {age(t['open'].get('since'))}"
        else:
            what = t.get("phase") or ""
        backlog = f"backlog {t['backlog']}" if t.get("backlog") else ""
        clock = " clock!" if t.get("clock_ok") is False else ""
        self.update(f"[b]{t['table']}[/b]\n{what}\nseq {t['last_seq']} {backlog}{clock}")


class FloorView(App):
    """The floor supervisor's screen."""

    TITLE = "dealerbox floor"
    CSS = """
    #grid { grid-size: 6; grid-gutter: 1; height: auto; max-height: 70%; }
    #alerts { height: 1fr; }
    """
    BINDINGS = [("c", "clear_alert", "Clear the selected alert"), ("q", "quit", "Quit")]

    def __init__(self, url: str, who: str | None = None):
        super().__init__()
        self.url = url if url.endswith("/") else url + "/"
        self.who = who or getpass.getuser()
        self.tables: dict[str, dict] = {}
        self.alerts: dict[int, dict] = {}
        self._stop = threading.Event()
        self.live = threading.Event()

    def compose(self) -> ComposeResult:
        yield Header()
        yield Grid(id="grid")
        table = DataTable(id="alerts", cursor_type="row")
        table.add_columns("id", "table", "kind", "what", "raised")
        yield table
        yield Footer()

    def on_mount(self) -> None:
        self.set_interval(0.5, self._blink)
        threading.Thread(target=self._feed, daemon=True).start()

    def on_unmount(self) -> None:
        self._stop.set()

    def _feed(self) -> None:
        while not self._stop.is_set():
            try:
                for name, data in sse_events(urljoin(self.url, "events"), self._stop):
                    self.call_from_thread(self._apply, name, data)
            except (OSError, ValueError):
                self.live.clear()
                self._stop.wait(2.0)

    def _apply(self, name: str, data: dict) -> None:
        if name == "snapshot":
            self.tables = {t["table"]: t for t in data["tables"]}
            self.alerts = {a["id"]: a for a in data["alerts"]}
            self.live.set()
        elif name == "tables":
            for t in data["tables"]:
                self.tables[t["table"]] = t
        elif name == "alert":
            self.alerts[data["alert"]["id"]] = data["alert"]
        elif name == "cleared":
            self.alerts.pop(data["alert"]["id"], None)
        self._draw()

    def _draw(self) -> None:
        grid = self.query_one("#grid", Grid)
        tiles = {w.id: w for w in grid.query(TableTile)}
        for tid in sorted(self.tables):
            wid = "t-" + "".join(ch if ch.isalnum() else "_" for ch in tid)
            tile = tiles.get(wid)
            if tile is None:
                tile = TableTile(id=wid)
                grid.mount(tile)
            tile.show(self.tables[tid])
        table = self.query_one("#alerts", DataTable)
        table.clear()
        for a in sorted(self.alerts.values(), key=lambda a: a["id"]):
            raised = _dt.datetime.fromtimestamp(a["raised"]).strftime("%H:%M:%S")
            table.add_row(str(a["id"]), a["table"], a["kind"], a["text"], raised, key=str(a["id"]))

    def _blink(self) -> None:
        for tile in self.query(TableTile):
            tile.toggle_class("dark") if tile.has_class("red") else tile.remove_class("dark")

    def action_clear_alert(self) -> None:
        table = self.query_one("#alerts", DataTable)
        if not table.row_count:
            return
        alert_id = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        req = urllib.request.Request(urljoin(self.url, f"api/alerts/{alert_id}/clear"),
                                     data=json.dumps({"who": self.who}).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(req, timeout=10).close()
        except OSError as exc:
            self.notify(f"could not clear alert {alert_id}: {exc}", severity="error")


def run_view(url: str, who: str | None = None) -> int:
    FloorView(url, who).run()
    return 0
