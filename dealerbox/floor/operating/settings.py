"""Reading the floor server's TOML file, ``floor.toml`` (see firmware_config/floor/ and docs/floor/install.md).

Every bad value gets one :class:`ConfigError` naming the file, the key and
what was expected.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from dealerbox.domain.messages import LANGUAGES
from dealerbox.errors import ConfigError
from dealerbox.floor.telling.clock import DEFAULT_SHIFT_STARTS, parse_shift_start, zone_named
from dealerbox.floor.telling.commission_limit import MAX_AGE_DAYS_MOST, CommissionLimit
from dealerbox.floor.collecting.limits import CollectorLimits
from dealerbox.floor.operating.broker_check import SHIPPED_RESULT
from dealerbox.floor.protect.config import ProtectConfig
from dealerbox.floor.protect.shuffles import BOARDS, PLACES, Gathering, Shuffle, STEPS
from dealerbox.floor.store import describe_target
from dealerbox.floor.store.registry import DeckLimits
from dealerbox.link import protocol as P
from dealerbox.link.client import Identity
from dealerbox.tomlfile import read_toml

__all__ = ["CollectorSettings", "WebSettings", "load_collector", "load_web", "load_protect", "load_registry",
           "load_commission"]


@dataclass(frozen=True)
class WebSettings:
    """``[web]`` of ``floor.toml``: the floor view (``dealerbox floor web``)."""
    #: The store: an SQLite file's path, or a PostgreSQL URL (``[store] url``).
    store: Path | str
    host: str = "127.0.0.1"
    port: int = 8080
    #: TLS: the web view's certificate and key from the casino CA (both or neither).
    cert: Path | None = None
    key: Path | None = None
    #: A deck registry file (``deck register``'s) the hand's story names the tables' cards
    #: with; the built-in simulated decks are known without it.
    deck_registry: Path | None = None
    #: Addresses (or networks) of reverse proxies whose user header is believed.
    trusted_proxies: tuple = ()
    proxy_user_header: str = "X-Remote-User"
    #: Other origins a browser may post from (a proxy serving the view under another name).
    origins: tuple = ()
    session_idle_s: float = 1800.0
    session_max_s: float = 43200.0
    signin_limit_user: int = 5
    signin_limit_address: int = 20
    signin_window_s: float = 300.0
    #: A request's head (and body) must arrive within this; an idle connection is closed after it.
    request_timeout_s: float = 10.0
    #: The floor's time zone (IANA, ``Europe/Prague``); empty: the machine's own.
    time_zone: str = ""
    #: The language the floor names irregularities in: en, cs, de or sk.
    language: str = "en"
    #: When each shift starts, local time: the figures' "this shift" and "last shift".
    shift_starts: tuple = DEFAULT_SHIFT_STARTS
    #: A file holding the bearer token a scraper shows for ``/metrics`` (docs/floor/metrics.md);
    #: without it the floor serves no metrics.
    metrics_token_file: Path | None = None
    #: The broker health check's result file (``floor broker-check --result``), read at each
    #: scrape of ``/metrics``; none there: the check never ran.
    broker_check_result: Path = SHIPPED_RESULT
    #: ``[commission]``: how old a table's last commissioning may be before the tables page marks it.
    commission: CommissionLimit = CommissionLimit()
    config: Path | None = field(default=None, compare=False)

    @property
    def tls(self) -> bool:
        return self.cert is not None


@dataclass(frozen=True)
class CollectorSettings:
    identity: Identity
    store: Path | str
    web: WebSettings | None = None
    limits: CollectorLimits = CollectorLimits()
    #: ``[protect]``: the declared shuffle and the game protection's thresholds.
    protect: ProtectConfig = ProtectConfig()
    #: ``[bridges] blind_alert_s``: a property's bridge down this long raises an alert.
    bridge_blind_s: float = 300.0
    #: ``[registry]``: the house's limit of a deck's use (hours in play, hands); none by default.
    registry: DeckLimits = DeckLimits()
    #: ``[registry] publish``: whether this floor sends its tables the room's registry (a
    #: group's floor, whose floor/ topics its properties' bridges bring in, does not).
    registry_publish: bool = True

    @property
    def web_host(self) -> str:
        return self.web.host if self.web else "127.0.0.1"

    @property
    def web_port(self) -> int:
        return self.web.port if self.web else 8080


class _Section:
    def __init__(self, path: Path, name: str, data):
        self.path, self.name = path, name
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ConfigError(path, f"[{name}]", "a table")
        self.data = data

    def get(self, key, kind, default, *, check=None, expected=""):
        if key not in self.data:
            if default is ...:
                raise ConfigError(self.path, f"{self.name}.{key}", expected or kind.__name__,
                                  found=False)
            return default
        value = self.data[key]
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok or (check is not None and not check(value)):
            raise ConfigError(self.path, f"{self.name}.{key}", expected or kind.__name__, value)
        return value

    def path_of(self, key, default=...):
        value = self.get(key, str, default if default is ... else str(default),
                         check=bool, expected="a file path")
        p = Path(value)
        return p if p.is_absolute() else (self.path.parent / p)

    def unknown(self, known) -> None:
        extra = sorted(set(self.data) - set(known))
        if extra:
            raise ConfigError(self.path, f"{self.name}.{extra[0]}",
                              f"one of {', '.join(sorted(known))}", self.data[extra[0]])


def _port(v):
    return 1 <= v <= 65535


def _floor_toml(path: Path, what: str) -> dict:
    data = read_toml(path, what)
    extra = sorted(set(data) - {"broker", "store", "web", "collector", "protect", "bridges", "registry",
                                "commission"})
    if extra:
        raise ConfigError(path, f"[{extra[0]}]", "one of [broker], [store], [web], [collector], [protect], "
                                                 "[bridges], [registry], [commission]")
    return data


def load_collector(path) -> CollectorSettings:
    """The collector's ``floor.toml`` (its ``[web]`` is checked too: one file, two services)."""
    path = Path(path)
    data = _floor_toml(path, "a floor collector config")
    b = _Section(path, "broker", data.get("broker"))
    b.unknown(("host", "port", "ca", "cert", "key"))
    identity = Identity(b.get("host", str, "127.0.0.1", check=bool, expected="a host name"),
                        b.get("port", int, 8883, check=_port, expected="a port 1..65535"),
                        b.path_of("ca"), b.path_of("cert"), b.path_of("key"))
    return CollectorSettings(identity, _store_path(path, data), _web(path, data),
                             _limits(_Section(path, "collector", data.get("collector"))),
                             _protect(_Section(path, "protect", data.get("protect"))),
                             _bridge_blind_s(_Section(path, "bridges", data.get("bridges"))),
                             _registry(_Section(path, "registry", data.get("registry"))),
                             _registry_publish(_Section(path, "registry", data.get("registry")),
                                               bridged="bridges" in data))


def load_registry(path) -> DeckLimits:
    """``[registry]`` of ``floor.toml``: the house's limit of a deck's use."""
    path = Path(path)
    return _registry(_Section(path, "registry", _floor_toml(path, "a floor config").get("registry")))


def _registry(s: _Section) -> DeckLimits:
    """``[registry]``: ``deck_hours`` (hours a deck may be in play) and ``deck_hands`` (hands it
    may deal); a deck past either raises one alert (docs/floor/registry.md)."""
    s.unknown(("deck_hours", "deck_hands", "publish"))
    return DeckLimits(s.get("deck_hours", float, None, check=lambda v: 0 < v <= 100_000,
                            expected="hours in play, a number above 0 (at most 100000)"),
                      s.get("deck_hands", int, None, check=lambda v: 0 < v <= 10**9,
                            expected="hands, a whole number above 0"))


def _registry_publish(s: _Section, *, bridged: bool = False) -> bool:
    """``[registry] publish``: false on a group's floor, so that its collectors never send a
    property's tables a registry (docs/floor/registry.md). Unsaid, it is false
    where floor.toml has a ``[bridges]`` section (*bridged*: the floor of a group, whose
    floor/ topics the properties' bridges carry to their tables), true elsewhere."""
    return s.get("publish", bool, not bridged, expected="true or false")


def load_commission(path) -> CommissionLimit:
    """``[commission]`` of ``floor.toml``: how old a table's last commissioning may be."""
    path = Path(path)
    return _commission(_Section(path, "commission", _floor_toml(path, "a floor config").get("commission")))


def _commission(s: _Section) -> CommissionLimit:
    """``[commission]``: ``max_age_days``, the days a table's last commissioning holds for; the
    tables page marks a table whose last run is older (docs/floor/tables.md, "Commissioning")."""
    s.unknown(("max_age_days",))
    return CommissionLimit(s.get("max_age_days", int, CommissionLimit.max_age_days,
                                 check=lambda v: 1 <= v <= MAX_AGE_DAYS_MOST,
                                 expected=f"days, a whole number from 1 to {MAX_AGE_DAYS_MOST}"))


def _bridge_blind_s(s: _Section) -> float:
    """``[bridges]``: how long a property's bridge may be down before the floor raises an
    alert (docs/floor/group.md, Bridge outages). A bridge that heals comes back within about
    15 s of the link (keepalive 10 s): the default leaves room for a few of those."""
    s.unknown(("blind_alert_s",))
    return s.get("blind_alert_s", float, CollectorSettings.bridge_blind_s,
                 check=lambda v: 1 <= v <= 86400, expected="seconds, 1..86400")


def load_web(path) -> WebSettings:
    """The web view's settings from ``floor.toml``: ``[store]`` and ``[web]``."""
    path = Path(path)
    return _web(path, _floor_toml(path, "a floor config"))


def load_protect(path) -> ProtectConfig:
    """``[protect]`` of ``floor.toml``: the declared shuffle and the game protection's thresholds."""
    path = Path(path)
    return _protect(_Section(path, "protect", _floor_toml(path, "a floor config").get("protect")))


def _store_path(path: Path, data: dict) -> Path | str:
    """``[store]``: ``path`` (an SQLite file, the default backend) or ``url`` (PostgreSQL)."""
    st = _Section(path, "store", data.get("store"))
    st.unknown(("path", "url"))
    if "url" in st.data:
        url = st.data["url"]
        shown = describe_target(url) if isinstance(url, str) else url  # never a password in a message
        if "path" in st.data:
            raise ConfigError(path, "store.url", "either store.path (SQLite) or store.url (PostgreSQL), "
                                                 "not both", shown)
        if isinstance(url, str) and _hosts_with_ports(url):
            raise ConfigError(path, "store.url", "several servers with their ports as query parameters: "
                                                 "postgresql://USER@/DATABASE?host=db1:5432&host=db2:5432"
                                                 "&target_session_attrs=read-write (docs/floor/postgresql.md)", shown)
        if not isinstance(url, str) or not _postgres_url(url):
            raise ConfigError(path, "store.url", "a PostgreSQL URL: postgresql://USER@HOST:PORT/DATABASE "
                                                 "(the password from the service user's ~/.pgpass, or "
                                                 "in the URL)", shown)
        return url
    return st.path_of("path")


def _hosts_with_ports(value: str) -> bool:
    """``postgresql://u@db1:5432,db2:5432/db``: libpq reads it, SQLAlchemy cannot."""
    netloc = value.partition("://")[2].partition("/")[0].rpartition("@")[2]
    return "," in netloc and ":" in netloc


def _postgres_url(value: str) -> bool:
    try:
        url = make_url(value)
    except (ArgumentError, ValueError):
        return False
    return url.get_backend_name() == "postgresql" and url.get_driver_name() in ("psycopg", "psycopg2") \
        and bool(url.database)


def _web(path: Path, data: dict) -> WebSettings:
    w = _Section(path, "web", data.get("web"))
    w.unknown(tuple(f.name for f in WebSettings.__dataclass_fields__.values()
                    if f.name not in ("store", "config", "commission")))
    d = WebSettings
    cert = w.path_of("cert", None) if "cert" in w.data else None
    key = w.path_of("key", None) if "key" in w.data else None
    if (cert is None) != (key is None):
        missing = "key" if key is None else "cert"
        raise ConfigError(path, f"web.{missing}", "the certificate and its key together (TLS), or neither",
                          found=False)

    def addresses(key, parse, expected):
        value = w.get(key, list, [], expected=expected)
        out = []
        for item in value:
            try:
                out.append(parse(item))
            except (TypeError, ValueError):
                raise ConfigError(path, f"web.{key}", expected, item) from None
        return tuple(out)

    def origin(value):
        if not isinstance(value, str) or not value.startswith(("http://", "https://")) \
                or value.count("/") != 2:
            raise ValueError(value)
        return value.lower()

    positive = {"check": lambda v: v > 0, "expected": "a number of seconds > 0"}
    count = {"check": lambda v: 1 <= v <= 1000, "expected": "a count 1..1000"}
    idle = w.get("session_idle_s", float, d.session_idle_s, **positive)
    longest = w.get("session_max_s", float, d.session_max_s, **positive)
    if longest < idle:
        raise ConfigError(path, "web.session_max_s", f"at least session_idle_s ({idle:g})", longest)
    header = w.get("proxy_user_header", str, d.proxy_user_header,
                   check=lambda v: v.replace("-", "").isalnum(), expected="an HTTP header name")
    return WebSettings(
        store=_store_path(path, data),
        host=w.get("host", str, d.host, check=bool, expected="an address"),
        port=w.get("port", int, d.port, check=lambda v: 0 <= v <= 65535,
                   expected="a port 0..65535 (0: any free port)"),
        cert=cert, key=key,
        deck_registry=w.path_of("deck_registry", None) if "deck_registry" in w.data else None,
        metrics_token_file=w.path_of("metrics_token_file", None) if "metrics_token_file" in w.data else None,
        broker_check_result=w.path_of("broker_check_result", d.broker_check_result),
        trusted_proxies=addresses("trusted_proxies", lambda v: ipaddress.ip_network(v, strict=False),
                                  "a list of proxy addresses or networks (\"10.0.0.5\", \"10.1.0.0/24\")"),
        proxy_user_header=header,
        origins=addresses("origins", origin, "a list of origins (\"https://floor.example\")"),
        session_idle_s=idle, session_max_s=longest,
        signin_limit_user=w.get("signin_limit_user", int, d.signin_limit_user, **count),
        signin_limit_address=w.get("signin_limit_address", int, d.signin_limit_address, **count),
        signin_window_s=w.get("signin_window_s", float, d.signin_window_s, **positive),
        request_timeout_s=w.get("request_timeout_s", float, d.request_timeout_s,
                                check=lambda v: 0 < v <= 300, expected="seconds, more than 0 and at most 300"),
        time_zone=w.get("time_zone", str, d.time_zone, check=_known_zone,
                        expected="an IANA time zone (\"Europe/Prague\"), or \"\" for the machine's"),
        language=w.get("language", str, d.language, check=lambda v: v in LANGUAGES,
                       expected="one of " + ", ".join(LANGUAGES)),
        shift_starts=tuple(w.get("shift_starts", list, list(d.shift_starts), check=_shift_starts,
                                 expected="a list of different local times (\"06:00\", \"14:00\", \"22:00\")")),
        commission=_commission(_Section(path, "commission", data.get("commission"))),
        config=path)


def _known_zone(name: str) -> bool:
    try:
        zone_named(name)
    except ValueError:
        return False
    return True


def _shift_starts(starts: list) -> bool:
    try:
        times = [parse_shift_start(s) for s in starts]
    except (TypeError, ValueError):
        return False
    return bool(times) and len(set(times)) == len(times)


def _limits(c: _Section):
    """``[collector]``: what bounds the collector (docs/floor/install.md)."""
    c.unknown(("max_message_bytes", "alerts_shown", "broker_lost_s", "share_group"))
    d = CollectorLimits()
    return CollectorLimits(
        share_group=c.get("share_group", str, d.share_group, check=lambda v: bool(P.SHARE_GROUP_RE.match(v)),
                          expected="1 to 64 letters, digits, - or _ (an MQTT shared subscription group)"),
        max_message_bytes=c.get("max_message_bytes", int, d.max_message_bytes,
                                check=lambda v: 4096 <= v <= 1_000_000,
                                expected="bytes, 4096..1000000 (below the broker's 1 MiB packets)"),
        alerts_shown=c.get("alerts_shown", int, d.alerts_shown, check=lambda v: 0 <= v <= 10_000,
                           expected="a number of alerts, 0..10000"),
        broker_lost_s=c.get("broker_lost_s", float, d.broker_lost_s, check=lambda v: 1 <= v <= 86400,
                            expected="seconds, 1..86400"))


#: A hold'em starting-hand class: a pair (``AA``), or two ranks high first, suited or offsuit.
_HOLDEM_CLASS = re.compile(r"([2-9TJQKA])\1|(A[2-9TJQK]|K[2-9TJQ]|Q[2-9TJ]|J[2-9T]|T[2-9]|9[2-8]|8[2-7]|7[2-6]|6[2-5]|5[2-4]|4[23]|32)[so]")


def _protect(p: _Section) -> ProtectConfig:
    """``[protect]``: the declared shuffle, the gathering model, the checks' thresholds (docs/floor/surveillance.md)."""
    p.unknown(("shuffle", "gathering", "threshold", "memory", "procedure_block", "procedure_threshold",
               "window_hours", "seat_alpha", "seats", "tables", "windows", "strong", "omaha_pairs", "room_rate", "chart_shift",
               "chart_arl", "players", "hole_cards", "reference_hands", "auto_fit", "reference_wait_minutes",
               "hands_per_hour", "hours_per_week", "seat_feed_every", "seat_alarms_per_year", "room_spread"))
    d = ProtectConfig()
    procedure = p.get("shuffle", str, str(d.shuffle), check=lambda v: bool(v.split()) and all(
        s in STEPS for s in v.split()), expected=f"steps of {', '.join(sorted(STEPS))} separated by spaces")
    g = _Section(p.path, "protect.gathering", p.data.get("gathering"))
    g.unknown(("hands_together", "board", "place"))
    gathering = Gathering(
        hands_together=g.get("hands_together", bool, d.gathering.hands_together),
        board=g.get("board", str, d.gathering.board, check=lambda v: v in BOARDS,
                    expected=f"one of {', '.join(BOARDS)}"),
        place=g.get("place", str, d.gathering.place, check=lambda v: v in PLACES,
                    expected=f"one of {', '.join(PLACES)}"))
    probability = dict(check=lambda v: 0 < v < 1, expected="a probability, more than 0 and less than 1")
    room_rate = p.data.get("room_rate", d.room_rate)
    if room_rate == "fitted":
        room_rate = None
    else:
        room_rate = p.get("room_rate", float, d.room_rate, check=lambda v: 0 < v < 0.3,
                          expected='a rate of hands with an error, more than 0 and less than 0.3, or "fitted"')

    def games(key, default, allowed, what):
        value = p.get(key, list, list(default), check=lambda v: bool(v) and all(
            isinstance(x, int) and not isinstance(x, bool) and x in allowed for x in v), expected=what)
        return tuple(value)
    return ProtectConfig(
        shuffle=Shuffle(tuple(procedure.split())), gathering=gathering,
        threshold=p.get("threshold", float, d.threshold, **probability),
        memory=p.get("memory", int, d.memory, check=lambda v: 1 <= v <= 10, expected="hands, 1..10"),
        procedure_block=p.get("procedure_block", int, d.procedure_block, check=lambda v: 5 <= v <= 10_000,
                              expected="hands, 5..10000"),
        procedure_threshold=p.get("procedure_threshold", float, d.procedure_threshold, **probability),
        window_s=3600.0 * p.get("window_hours", float, d.window_s / 3600, check=lambda v: 0.25 <= v <= 168,
                                expected="hours, 0.25..168"),
        seat_alpha=p.get("seat_alpha", float, d.seat_alpha, **probability),
        seats=p.get("seats", int, d.seats, check=lambda v: 2 <= v <= 10, expected="seats, 2..10"),
        holdem_strong=frozenset(p.get("strong", list, sorted(d.holdem_strong), check=lambda v: bool(v) and all(
            isinstance(x, str) and _HOLDEM_CLASS.fullmatch(x) for x in v),
            expected='a list of hold\'em classes such as "AA", "AKs", "AKo"')),
        omaha_pairs=p.get("omaha_pairs", str, d.omaha_pairs, check=lambda v: bool(v) and all(
            r in "23456789TJQKA" for r in v) and len(set(v)) == len(v), expected='ranks such as "AK"'),
        tables=p.get("tables", int, d.tables, check=lambda v: 1 <= v <= 10_000, expected="tables, 1..10000"),
        windows=p.get("windows", int, d.windows, check=lambda v: 1 <= v <= 1_000_000,
                      expected="windows tested in a year or so, 1..1000000"),
        room_rate=room_rate,
        chart_shift=p.get("chart_shift", float, d.chart_shift, check=lambda v: 1 < v <= 20,
                          expected="a factor, more than 1 and at most 20"),
        chart_arl=p.get("chart_arl", float, d.chart_arl, check=lambda v: 100 <= v <= 1e7,
                        expected="hands, 100..10000000"),
        players=games("players", d.players, range(2, 11), "a list of player counts, 2..10"),
        hole_cards=games("hole_cards", d.hole_cards, (2, 4), "a list of 2 (hold'em) and 4 (Omaha)"),
        reference_hands=p.get("reference_hands", int, d.reference_hands, check=lambda v: 1000 <= v <= 10_000_000,
                              expected="hands, 1000..10000000"),
        auto_fit=p.get("auto_fit", bool, d.auto_fit, expected="true or false"),
        reference_wait_minutes=p.get("reference_wait_minutes", float, d.reference_wait_minutes,
                                     check=lambda v: 0 <= v <= 1440,
                                     expected="minutes, 0..1440 (hands unchecked while a reference is fitted, "
                                              "before surveillance is alerted)"),
        hands_per_hour=p.get("hands_per_hour", float, d.hands_per_hour, check=lambda v: 0 < v <= 200,
                             expected="hands an hour at one table, more than 0 and at most 200"),
        hours_per_week=p.get("hours_per_week", float, d.hours_per_week, check=lambda v: 0 < v <= 168,
                             expected="hours a week the tables deal, more than 0 and at most 168"),
        seat_feed_every=p.get("seat_feed_every", float, d.seat_feed_every, check=lambda v: 2 <= v <= 100,
                              expected="hands, 2..100 (a seat fed a strong hand once in so many)"),
        seat_alarms_per_year=p.get("seat_alarms_per_year", float, d.seat_alarms_per_year,
                                   check=lambda v: 0.01 <= v <= 1000,
                                   expected="false alarms a year of the room's seats, 0.01..1000"),
        room_spread=p.get("room_spread", float, d.room_spread, check=lambda v: 0 < v < 0.2,
                          expected="the spread of the dealers' own error rates, more than 0 and less than 0.2"))
