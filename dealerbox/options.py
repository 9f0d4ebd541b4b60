"""Declared config options: each field of a section's frozen dataclass says its type, bounds, default and doc.

A section is a frozen, keyword-only dataclass whose fields are made with
:func:`option`::

    @dataclass(frozen=True, kw_only=True)
    class PresenceSection:
        settle_s: float = option(Number(0.0, 5.0, doc="a card must be seen this long before it is on"), 0.0)

The field's name is the TOML key; a field without a default is required. The
option object (:class:`Option` and its kinds below) checks a value found in the
file and describes itself for the reference table (:func:`markdown_table`).
:func:`read_fields` checks every field of a section against a TOML table, in
field order, reporting through a :class:`Reporter` (the config loader), so
one set of declarations drives both the checks and the docs.

Option kinds: :class:`Text`, :class:`Integer`, :class:`Number`,
:class:`Choice`, :class:`Flag`, :class:`Pin` (a BCM pin, taken in the loader's
pin book so a pin is used once), :class:`PinTable`, :class:`Zone`,
:class:`Antennas`. A new kind subclasses :class:`Option` and overrides
:meth:`Option.convert` and the three describing methods.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol, Sequence

from dealerbox.domain.events import ZONES as _EVENT_ZONES
from dealerbox.errors import ConfigError

__all__ = [
    "BAD", "Bad", "Reporter", "PinBook", "RaisingReporter", "Option", "Text", "Integer", "Number", "Choice", "Flag", "Pin", "PinTable",
    "Zone", "Antennas", "option", "options_of", "read_fields", "take_pins", "unknown_keys", "suggest", "is_bad",
    "markdown_table",
    "ZONES", "BCM_PINS", "PIN_EXPECTED",
]

ZONES = ("shoe", "board", "burn", "muck") + tuple(f"seat{i}" for i in range(1, 11))
assert set(ZONES) == {"shoe", "board"} | _EVENT_ZONES  # keep in step with CONTRACT.md
BCM_PINS = range(0, 28)
PIN_EXPECTED = "a BCM GPIO number from 0 to 27"


class Bad:
    """Stands for a value that failed its check (only seen when collecting every error)."""

    def __repr__(self) -> str:
        return "<bad>"


BAD = Bad()


class PinBook:
    """Who uses each BCM pin: the one place that says a pin is used once.

    :meth:`take` reports a second user through *fail* (``fail(key, expected, value)``),
    naming the first.
    """

    def __init__(self, fail):
        self._fail = fail
        self.users: dict[int, str] = {}

    def take(self, pin: int, key: str, who: str | None = None) -> bool:
        first = self.users.get(pin)
        if first is not None:
            self._fail(key, f"a BCM pin not already used by {first}", pin)
            return False
        self.users[pin] = who or key
        return True


class RaisingReporter:
    """A :class:`Reporter` that raises the first error as a ConfigError of *file* (a driver's own check)."""

    def __init__(self, file: str):
        self.file = file
        self.pins = PinBook(self.fail)

    def fail(self, key: str, expected: str, value=None, *, found: bool = True):
        raise ConfigError(self.file, key, expected, value, found=found)

    def take_pin(self, pin: int, key: str, who: str | None = None) -> bool:
        return self.pins.take(pin, key, who)


class Reporter(Protocol):
    """What options need of the loader: report an error, take a pin."""

    def fail(self, key: str, expected: str, value=None, *, found: bool = True) -> Bad: ...

    def take_pin(self, pin: int, key: str, who: str | None = None) -> bool: ...


def suggest(key, known) -> str:
    """`` (did you mean 'x'?)`` for the closest of *known*, or nothing."""
    if not isinstance(key, str):
        return ""
    close = difflib.get_close_matches(key, [str(k) for k in known], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _fmt(x) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


@dataclass(frozen=True)
class Option:
    """One key: how a value found in the file is checked, and how the docs describe it."""

    doc: str

    def convert(self, ctx: Reporter, key: str, value):
        """The value to keep, or ``ctx.fail(...)`` (which returns :data:`BAD` when collecting)."""
        return value

    def expected(self) -> str:
        """What a good value is, in the words of an error message."""
        return "a value"

    def type_name(self) -> str:
        return "any"

    def bounds(self) -> str:
        return ""

    def take_pins(self, ctx: Reporter, key: str, value) -> bool:
        """Take the pins *value* uses in the loader's pin book; False when one is taken already."""
        return True


@dataclass(frozen=True)
class Text(Option):
    max_len: int = 4096
    expect: str | None = None
    bounds_doc: str | None = None

    def expected(self) -> str:
        return self.expect or f"a string of 1 to {self.max_len} characters"

    def convert(self, ctx, key, value):
        if not isinstance(value, str) or not value.strip() or len(value) > self.max_len:
            return ctx.fail(key, self.expected(), value)
        return value

    def type_name(self) -> str:
        return "str"

    def bounds(self) -> str:
        return self.bounds_doc or (f"1 .. {self.max_len} characters" if self.max_len < 4096 else "")


@dataclass(frozen=True)
class Integer(Option):
    lo: int = 0
    hi: int = 0
    expect: str | None = None
    hex: bool = False
    bounds_doc: str | None = None
    only: tuple[int, ...] | None = None      # the values allowed within the bounds, when not all are

    def expected(self) -> str:
        return self.expect or f"an integer from {self.lo} to {self.hi}"

    def convert(self, ctx, key, value):
        if (isinstance(value, bool) or not isinstance(value, int) or not self.lo <= value <= self.hi
                or (self.only is not None and value not in self.only)):
            return ctx.fail(key, self.expected(), value)
        return value

    def type_name(self) -> str:
        return "int"

    def bounds(self) -> str:
        if self.bounds_doc:
            return self.bounds_doc
        return f"{self.lo:#04x} .. {self.hi:#04x}" if self.hex else f"{self.lo} .. {self.hi}"


@dataclass(frozen=True)
class Number(Option):
    lo: float = 0.0
    hi: float = 0.0
    unit: str = "seconds"

    def expected(self) -> str:
        return f"a number of {self.unit} from {_fmt(self.lo)} to {_fmt(self.hi)}"

    def convert(self, ctx, key, value):
        if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
                or not self.lo <= value <= self.hi):
            return ctx.fail(key, self.expected(), value)
        return float(value)

    def type_name(self) -> str:
        return "float"

    def bounds(self) -> str:
        return f"{_fmt(self.lo)} .. {_fmt(self.hi)}"


@dataclass(frozen=True)
class Choice(Option):
    """One of *choices* (a tuple, or a function giving it when the file is read)."""

    choices: Sequence | Callable[[], Sequence] = ()

    def values(self) -> tuple:
        return tuple(self.choices() if callable(self.choices) else self.choices)

    def expected(self) -> str:
        return "one of " + ", ".join(repr(c) for c in self.values())

    def convert(self, ctx, key, value):
        values = self.values()
        if not isinstance(value, str) or value not in values:
            return ctx.fail(key, self.expected() + suggest(value, values), value)
        return value

    def type_name(self) -> str:
        return "str"

    def bounds(self) -> str:
        return ", ".join(str(c) for c in self.values())


@dataclass(frozen=True)
class Flag(Option):
    def expected(self) -> str:
        return "true or false"

    def convert(self, ctx, key, value):
        if not isinstance(value, bool):
            return ctx.fail(key, self.expected(), value)
        return value

    def type_name(self) -> str:
        return "bool"

    def bounds(self) -> str:
        return "true, false"


@dataclass(frozen=True)
class Pin(Option):
    """A BCM pin; with *none_word*, that word (e.g. ``"none"``) stands for no pin (None)."""

    none_word: str | None = None
    none_means: str = ""

    def expected(self) -> str:
        if self.none_word:
            return f'{PIN_EXPECTED}, or "{self.none_word}" {self.none_means}'.rstrip()
        return PIN_EXPECTED

    def convert(self, ctx, key, value):
        if self.none_word is not None and value == self.none_word:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value not in BCM_PINS:
            return ctx.fail(key, self.expected(), value)
        return value

    def type_name(self) -> str:
        return "int | str" if self.none_word else "int"

    def bounds(self) -> str:
        return f'BCM 0 .. 27, or "{self.none_word}"' if self.none_word else "BCM 0 .. 27"

    def take_pins(self, ctx, key, value) -> bool:
        return value is None or ctx.take_pin(value, key)


@dataclass(frozen=True)
class PinTable(Option):
    """A table of name = BCM pin; *names* are the names allowed (all of them when *all_required*)."""

    names: Sequence[str] = ()
    all_required: bool = False
    expect: str = "a table"

    def expected(self) -> str:
        return self.expect

    def convert(self, ctx, key, value):
        if not isinstance(value, dict):
            return ctx.fail(key, self.expected(), value)
        ok = unknown_keys(ctx, key, value, self.names)
        out = {}
        for name in self.names:
            if name in value:
                pin = value[name]
                if isinstance(pin, bool) or not isinstance(pin, int) or pin not in BCM_PINS:
                    ctx.fail(f"{key}.{name}", PIN_EXPECTED, pin)
                    ok = False
                else:
                    out[name] = pin
            elif self.all_required:
                ctx.fail(f"{key}.{name}", PIN_EXPECTED, found=False)
                ok = False
        # Keep the file's order: it is the order pins are taken in, so the order conflicts are named in.
        return {n: out[n] for n in value if n in out} if ok else _PartialPins(out, value)

    def take_pins(self, ctx, key, value) -> bool:
        ok = True
        pins = value.pins if isinstance(value, _PartialPins) else value
        for name, pin in pins.items():
            ok = ctx.take_pin(pin, f"{key}.{name}") and ok
        return ok and not isinstance(value, _PartialPins)

    def type_name(self) -> str:
        return "table"

    def bounds(self) -> str:
        return ", ".join(self.names) if self.all_required else "name = BCM pin"


class _PartialPins:
    """The good pins of a pin table that had bad entries: still taken, so conflicts are all named."""

    def __init__(self, good: dict, raw: dict):
        self.pins = {n: good[n] for n in raw if n in good}


@dataclass(frozen=True)
class Zone(Option):
    def expected(self) -> str:
        return f"a zone: one of {', '.join(ZONES)}"

    def convert(self, ctx, key, value):
        if not isinstance(value, str) or value not in ZONES:
            return ctx.fail(key, self.expected() + suggest(value, ZONES), value)
        return value

    def type_name(self) -> str:
        return "str"

    def bounds(self) -> str:
        return "a zone (below)"


@dataclass(frozen=True)
class Antennas(Option):
    """A table of antenna number (``"1"`` .. ``"<most>"``) = zone; read as ``{int: zone}`` in antenna order."""

    most: int = 8

    def expected(self) -> str:
        return 'a table of antenna number = zone, e.g. {"1" = "shoe"}'

    def convert(self, ctx, key, value):
        if not isinstance(value, dict):
            return ctx.fail(key, self.expected(), value)
        if not value:
            return ctx.fail(key, "at least one antenna", value)
        out: dict[int, str] = {}
        ok = True
        for number, zone in value.items():
            entry = f"{key}.{number}"
            if not (number.isdigit() and 1 <= int(number) <= self.most):
                ctx.fail(entry, f"an antenna number from 1 to {self.most} as the key", number)
                ok = False
                continue
            zone = Zone(doc="").convert(ctx, entry, zone)
            if zone is BAD:
                ok = False
            else:
                out[int(number)] = zone
        return dict(sorted(out.items())) if ok else BAD

    def type_name(self) -> str:
        return "table"

    def bounds(self) -> str:
        return f'keys "1" .. "{self.most}"'


_REQUIRED = dataclasses.MISSING


def option(opt: Option, default=_REQUIRED):
    """A dataclass field for *opt*; no *default* makes the key required."""
    if default is _REQUIRED:
        return dataclasses.field(metadata={"option": opt})
    if isinstance(default, (dict, list, set)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata={"option": opt})
    return dataclasses.field(default=default, metadata={"option": opt})


def options_of(cls) -> list[tuple[str, Option, Any]]:
    """``(key, option, default)`` of each declared field of section class *cls*, in order.

    *default* is :data:`dataclasses.MISSING` for a required key.
    """
    out = []
    for f in dataclasses.fields(cls):
        opt = f.metadata.get("option")
        if opt is None:
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = _REQUIRED
        out.append((f.name, opt, default))
    return out


def unknown_keys(ctx: Reporter, prefix: str, data: Mapping, known) -> bool:
    """Report each key of *data* not in *known* as a typo; False when there was one."""
    known = tuple(known)
    ok = True
    for key, value in data.items():
        if key not in known:
            ctx.fail(f"{prefix}.{key}", f"a key of [{prefix}]{suggest(key, known)}; its keys are {', '.join(known)}",
                     value)
            ok = False
    return ok


def read_fields(ctx: Reporter, prefix: str, data: Mapping, cls, *, skip=()) -> dict[str, Any]:
    """Check every declared field of *cls* against *data* (a TOML table); ``{field: value or BAD}``.

    A missing required key is reported; a missing optional key takes its default.
    Fields named in *skip* are left to the caller.
    """
    out = {}
    for key, opt, default in options_of(cls):
        if key in skip:
            continue
        full = f"{prefix}.{key}"
        if key in data:
            out[key] = opt.convert(ctx, full, data[key])
        elif default is _REQUIRED:
            out[key] = ctx.fail(full, opt.expected(), found=False)
        else:
            out[key] = default
    return out


def take_pins(ctx: Reporter, prefix: str, cls, values: Mapping) -> bool:
    """Take the pins of every pin field of *cls* (in field order); False when one was taken already."""
    ok = True
    for key, opt, _default in options_of(cls):
        value = values.get(key, BAD)
        if value is BAD:
            continue
        ok = opt.take_pins(ctx, f"{prefix}.{key}", value) and ok
    return ok


def is_bad(value) -> bool:
    """True for a value that failed its check (a pin table with bad entries included)."""
    return value is BAD or isinstance(value, _PartialPins)


def _default_text(default) -> str:
    if default is _REQUIRED:
        return "req."
    if default is None:
        return "none"
    if isinstance(default, bool):
        return "true" if default else "false"
    if isinstance(default, str):
        return f'"{default}"'
    if isinstance(default, dict):
        return "{}"
    return _fmt(default)


def markdown_table(cls, *, skip=()) -> str:
    """The reference table of section class *cls*: key, type, default, bounds, meaning."""
    rows = ["| key | type | default | bounds | meaning |", "|---|---|---|---|---|"]
    for key, opt, default in options_of(cls):
        if key in skip:
            continue
        default_text = _default_text(default)
        if isinstance(opt, Integer) and opt.hex and isinstance(default, int) and not isinstance(default, bool):
            default_text = f"{default:#04x}"
        cells = [f"`{key}`", opt.type_name(), default_text, opt.bounds(), opt.doc]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows)
