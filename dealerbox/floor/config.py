"""Reading the floor's TOML files: a table's ``[floor]`` section and the
collector's ``floor.toml`` (see firmware_config/floor/ and docs/FLOOR.md).

Every bad value gets one :class:`ConfigError` naming the file, the key and
what was expected.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..service.schema import RaisingReporter, options_of, read_fields, unknown_keys
from ..tomlfile import read_toml
from . import protocol as P
from .client import Identity
from .publisher import FloorSettings

__all__ = ["CollectorSettings", "load_collector", "load_table_floor", "floor_settings"]


@dataclass(frozen=True)
class CollectorSettings:
    identity: Identity
    store: Path
    web_host: str = "127.0.0.1"
    web_port: int = 8080


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


def floor_settings(path: Path, data) -> FloorSettings:
    """A table's ``[floor]`` section, checked as the table config checks it
    (off when missing); raises the first :class:`ConfigError`."""
    ctx = RaisingReporter(str(path))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(path, "floor", "a table", data)
    unknown_keys(ctx, "floor", data, [k for k, _o, _d in options_of(FloorSettings)])
    values = read_fields(ctx, "floor", data, FloorSettings)
    if values["enabled"] and "table" not in data:
        ctx.fail("floor.table", "the table id, as the CN of its certificate", found=False)
    FloorSettings.validate(values, lambda key, expected, value=None: ctx.fail(f"floor.{key}", expected, value))
    return FloorSettings(**values)


def load_table_floor(path) -> FloorSettings:
    """The ``[floor]`` section of a table config file."""
    path = Path(path)
    return floor_settings(path, read_toml(path, "a table config").get("floor"))


def load_collector(path) -> CollectorSettings:
    """The collector's ``floor.toml``."""
    path = Path(path)
    data = read_toml(path, "a floor collector config")
    extra = sorted(set(data) - {"broker", "store", "web"})
    if extra:
        raise ConfigError(path, f"[{extra[0]}]", "one of [broker], [store], [web]")
    b = _Section(path, "broker", data.get("broker"))
    b.unknown(("host", "port", "ca", "cert", "key"))
    identity = Identity(b.get("host", str, "127.0.0.1", check=bool, expected="a host name"),
                        b.get("port", int, 8883, check=_port, expected="a port 1..65535"),
                        b.path_of("ca"), b.path_of("cert"), b.path_of("key"))
    st = _Section(path, "store", data.get("store"))
    st.unknown(("path",))
    w = _Section(path, "web", data.get("web"))
    w.unknown(("host", "port"))
    return CollectorSettings(identity, st.path_of("path"),
                             w.get("host", str, "127.0.0.1", check=bool, expected="an address"),
                             w.get("port", int, 8080, check=lambda v: 0 <= v <= 65535,
                                   expected="a port 0..65535 (0: any free port)"))
