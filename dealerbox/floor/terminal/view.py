"""The floor view in a terminal (Textual), signed in to the floor's web view.

A grid of tables: red (blinking) when an open irregularity needs the floor,
amber while the dealer corrects one, green when clean, grey when offline;
each with its open irregularity, its age and its backlog. Below, the alerts
that stay until someone clears them (select one, press ``c``, write the note).

It signs in as a user of the web view (``dealerbox floor user``): the user
from ``--user`` or ``$DEALERBOX_FLOOR_USER`` (else the login name), the
password from ``$DEALERBOX_FLOOR_PASSWORD`` or a prompt. :class:`FloorClient`
is the session it then uses (cookie and CSRF token), for anything that talks
to the web view.

The screen is in the language the web view says the user reads (their own, else the room's:
``language`` of ``/api/session``): the tiles' and alerts' words come told from the web view's
stream, the screen's own (its columns, keys and prompts) from the floor's catalogs.
"""

from __future__ import annotations

import getpass
import http.cookiejar
import json
import os
import ssl
import threading
import time
import urllib.error
import urllib.request
from urllib.parse import urljoin

from rich import markup
from textual.app import App, ComposeResult
from textual.containers import Grid
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Header, Input, Label, Static

from dealerbox.errors import DealerboxError
from dealerbox.floor.telling.figure_text import duration
from dealerbox.floor.telling.catalogs import LANGUAGES, N_
from dealerbox.floor.telling.floor_words import COLOURS, alert_order
from dealerbox.floor.telling.language import Language

__all__ = ["FloorClient", "SigninError", "FloorView", "run_view", "sse_events",
           "USER_ENV", "PASSWORD_ENV"]

USER_ENV = "DEALERBOX_FLOOR_USER"
PASSWORD_ENV = "DEALERBOX_FLOOR_PASSWORD"


class SigninError(DealerboxError, PermissionError):
    """The web view refused to sign in, a session ended, or the role may not do that."""


class FloorClient:
    """A signed-in session with the floor's web view.

    :param url: the web view (``https://floor:8443/``).
    :param cafile: the casino CA's certificate, when the system does not trust it.
    """

    def __init__(self, url: str, cafile=None):
        self.url = url if url.endswith("/") else url + "/"
        self.jar = http.cookiejar.CookieJar()
        handlers = [urllib.request.HTTPCookieProcessor(self.jar)]
        if self.url.startswith("https:"):
            context = ssl.create_default_context(cafile=str(cafile) if cafile else None)
            handlers.append(urllib.request.HTTPSHandler(context=context))
        self.opener = urllib.request.build_opener(*handlers)
        self.user: str | None = None
        self.role: str | None = None
        self.csrf: str | None = None
        #: The language the user reads, as the web view says (English until signed in).
        self.language = "en"

    def _request(self, method: str, path: str, body=None, timeout: float = 30.0):
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if method != "GET" and self.csrf:
            headers["X-CSRF-Token"] = self.csrf
        req = urllib.request.Request(urljoin(self.url, path), method=method, headers=headers,
                                     data=None if body is None else json.dumps(body).encode())
        try:
            with self.opener.open(req, timeout=timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as err:
            with err:
                try:
                    why = json.loads(err.read()).get("error", err.reason)
                except ValueError:
                    why = err.reason
            if err.code in (401, 403, 429):
                raise SigninError(f"{method} {path}: {err.code} {why}") from None
            raise OSError(f"{method} {path}: {err.code} {why}") from None
        return json.loads(raw) if raw else None

    def sign_in(self, user: str, password: str) -> dict:
        me = self._request("POST", "api/session", {"user": user, "password": password})
        self.user, self.role, self.csrf = me["user"], me["role"], me["csrf"]
        # A web view older than the languages says none: English, as it was.
        self.language = me.get("language") if me.get("language") in LANGUAGES else "en"
        return me

    def sign_out(self) -> None:
        self._request("DELETE", "api/session")
        self.csrf = None

    def get(self, path: str):
        return self._request("GET", path)

    def post(self, path: str, body: dict):
        return self._request("POST", path, body)

    def clear(self, alert_id, note: str) -> dict:
        return self.post(f"api/alerts/{alert_id}/clear", {"note": note})

    def events(self, stop: threading.Event, timeout: float = 30.0):
        """``(event, data)`` from the JSON event stream until *stop*."""
        return sse_events(urljoin(self.url, "events"), stop, timeout, opener=self.opener)


def sse_events(url: str, stop: threading.Event, timeout: float = 30.0, opener=None):
    """Yield ``(event, data)`` from a server-sent events stream until ``stop``."""
    req = urllib.request.Request(url, headers={"Accept": "text/event-stream"})
    with (opener or urllib.request.build_opener()).open(req, timeout=timeout) as resp:
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


def age(since_ts: float | None, now: float | None = None) -> str:
    """How long ago *since_ts* (epoch seconds) was, as the floor's pages say it (``3 min 20 s``);
    empty for nothing."""
    if since_ts is None:
        return ""
    return duration(max(0.0, (time.time() if now is None else now) - since_ts))


class TableTile(Static):
    """One table of the grid, in the words the floor map gives it (the web view's live floor,
    :mod:`dealerbox.floor.telling.floor_words`): the table and its pit, the dealer, what is going on
    and for how long, hands per hour. The journal's sequence and backlog are a technician's,
    on the web page behind a click: not on the tile."""

    DEFAULT_CSS = """
    TableTile { height: 5; padding: 0 1; color: black; }
    TableTile.green { background: green; }
    TableTile.amber { background: orange; }
    TableTile.grey { background: grey; }
    TableTile.quiet { background: lightgrey; }
    TableTile.red { background: red; color: white; }
    TableTile.red.dark { background: darkred; }
    """

    def __init__(self, *args, language: Language | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.language = language or Language("en")

    def show(self, t: dict, now: float | None = None) -> None:
        _ = self.language.gettext
        for c in COLOURS:
            self.set_class(t.get("colour") == c, c)
        where = f"{t['table']}, {t['pit']}" if t.get("pit") else t["table"]
        what = t.get("what") or (_("Offline") if not t.get("online") else "")
        if t.get("state") == "open" and t.get("open_since_ts"):
            what += f", {age(t['open_since_ts'], now)}"
        dealer = _("dealer %(dealer)s") % {"dealer": t["dealer"]} if t.get("dealer") else _("no dealer signed in")
        rate = f", {t['rate']}" if t.get("rate") else ""
        clock = "\n" + _("the table's clock is wrong") if t.get("clock_ok") is False else ""
        self.update(f"[b]{markup.escape(where)}[/b]\n{markup.escape(what)}\n{markup.escape(dealer + rate)}{clock}")


class NoteScreen(ModalScreen[str | None]):
    """Asks why an alert is cleared: Enter clears with the note, Escape does not."""

    DEFAULT_CSS = """
    NoteScreen { align: center middle; }
    NoteScreen > Label, NoteScreen > Input { width: 70; }
    """
    def __init__(self, alert: dict, language: Language | None = None):
        super().__init__()
        self.alert = alert
        self.language = language or Language("en")
        # A screen has no bind() of its own: its bindings map, as App.bind fills the app's.
        self._bindings.bind("escape", "cancel", description=self.language.gettext("Do not clear"))

    def compose(self) -> ComposeResult:
        a, _ = self.alert, self.language.gettext
        yield Label(markup.escape(_("Clear the alert %(what)s (raised %(when)s): why?") % {
            "what": a.get("headline") or a["kind"], "when": a.get("raised_local") or a["raised"]}))
        yield Input(placeholder=_("note (Enter clears, Escape does not)"), max_length=500, id="note")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


class FloorView(App):
    """The floor supervisor's screen, over a signed-in :class:`FloorClient`."""

    TITLE = "dealerbox floor"
    CSS = """
    #grid { grid-size: 6; grid-gutter: 1; height: auto; max-height: 70%; }
    #alerts { height: 1fr; }
    """
    #: The alerts' columns (``raised``, ``what``, ``waiting``, ``id``), in the screen's language.
    COLUMNS = (N_("raised"), N_("what"), N_("waiting"), N_("id"))

    def __init__(self, client: FloorClient):
        super().__init__()
        self.client = client
        self.language = Language(client.language)
        _ = self.language.gettext
        self.title = _("dealerbox floor")
        self.bind("c", "clear_alert", description=_("Clear the selected alert"))
        self.bind("q", "quit", description=_("Quit"))
        self.sub_title = f"{client.user} ({_(client.role) if client.role else ''})"
        self.tables: dict[str, dict] = {}
        self.alerts: dict[int, dict] = {}
        self._stop = threading.Event()
        self.live = threading.Event()
        self.signed_out = threading.Event()

    def compose(self) -> ComposeResult:
        yield Header()
        yield Grid(id="grid")
        table = DataTable(id="alerts", cursor_type="row")
        table.add_columns(*(self.language.gettext(c) for c in self.COLUMNS))
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
                for name, data in self.client.events(self._stop):
                    if name == "signedout":
                        raise SigninError("the session ended")
                    self.call_from_thread(self._apply, name, data)
            except (SigninError, urllib.error.HTTPError) as exc:
                if isinstance(exc, urllib.error.HTTPError):
                    exc.close()
                    if exc.code not in (401, 403):
                        self._stop.wait(2.0)
                        continue
                self.live.clear()
                self.signed_out.set()
                self.call_from_thread(self._signed_out)
                return
            except (OSError, ValueError):
                self.live.clear()
                self._stop.wait(2.0)

    def _signed_out(self) -> None:
        _ = self.language.gettext
        self.sub_title = _("%(user)s: signed out (start again to sign in)") % {"user": self.client.user}
        self.notify(_("The session ended: start the view again to sign in."), severity="error", timeout=30)

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
                tile = TableTile(id=wid, language=self.language)
                grid.mount(tile)
            tile.show(self.tables[tid])
        table = self.query_one("#alerts", DataTable)
        table.clear()
        now = time.time()
        # As the floor page lists them: floor calls first, then by how long they have waited.
        # A table's text is escaped: the table reads a string cell as Rich markup.
        for a in alert_order(list(self.alerts.values())):
            what = markup.escape(a.get("headline") or f"{a['kind']}: {a['text']}")
            table.add_row(a.get("raised_local") or str(a["raised"]), what, age(a["raised"], now), str(a["id"]),
                          key=str(a["id"]))

    def _blink(self) -> None:
        for tile in self.query(TableTile):
            tile.toggle_class("dark") if tile.has_class("red") else tile.remove_class("dark")

    def action_clear_alert(self) -> None:
        table = self.query_one("#alerts", DataTable)
        if not table.row_count:
            return
        alert_id = int(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        alert = self.alerts.get(alert_id)
        if alert is None:
            return

        def cleared(note: str | None) -> None:
            if note is None:
                return
            try:
                self.client.clear(alert_id, note)
            except OSError as exc:
                self.notify(self.language.gettext("could not clear alert %(id)s: %(why)s") % {
                    "id": alert_id, "why": exc}, severity="error")
        self.push_screen(NoteScreen(alert, self.language), cleared)


def sign_in(url: str, user: str | None = None, cafile=None, password: str | None = None) -> FloorClient:
    """A :class:`FloorClient` signed in as *user* (else ``$DEALERBOX_FLOOR_USER``, else
    the login name) with *password* (else ``$DEALERBOX_FLOOR_PASSWORD``, else a prompt)."""
    user = user or os.environ.get(USER_ENV) or getpass.getuser()
    if password is None:
        password = os.environ.get(PASSWORD_ENV)
    if password is None:
        password = getpass.getpass(f"password for {user} at {url}: ")
    client = FloorClient(url, cafile)
    client.sign_in(user, password)
    return client


def run_view(url: str, user: str | None = None, cafile=None) -> int:
    client = sign_in(url, user, cafile)
    try:
        FloorView(client).run()
    finally:
        try:
            client.sign_out()
        except OSError:
            pass  # the session had ended already
    return 0
