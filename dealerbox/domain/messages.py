"""What the dealer reads: step texts in four languages, and their LCD forms; and the
floor's plain words for the irregularities and the phases of a hand (``[names]``).

The engine speaks in message keys (:class:`dealerbox.rules.engine.Step`); this module
turns them into the display language. English is the reference: every other
language file must have exactly its keys, which :func:`load_messages` checks.
"""

from __future__ import annotations

import functools
from pathlib import Path

from dealerbox.domain.cards import lcd_card
from dealerbox.errors import ConfigError
from dealerbox.resources import data_dir
from dealerbox.tomlfile import read_toml

MESSAGES_DIR = data_dir("messages")
LANGUAGES = ("en", "cs", "de", "sk")
_SECTIONS = ("language", "verdicts", "phases", "streets", "ok", "titles", "steps", "names")
_FORMS = ("text", "lcd", "lcd16")
_SUIT_TEXT = {"c": "\u2663", "d": "\u2666", "h": "\u2665", "s": "\u2660"}


def text_card(code: str) -> str:
    """A card for people reading text: ``A♥``; jokers and unknown tags as they are."""
    if len(code) == 2 and code[1] in _SUIT_TEXT:
        return code[0] + _SUIT_TEXT[code[1]]
    return code


class Messages:
    """One language's catalog. Use :func:`load_messages` to get one."""

    def __init__(self, lang: str, data: dict):
        self.lang = lang
        self.name = data["language"]
        self.verdicts = data["verdicts"]
        self.phases = data["phases"]
        self.streets = data["streets"]
        self.ok = data["ok"]
        self.titles = data["titles"]
        self.steps = data["steps"]
        #: The floor's words for people (no LCD limits): ``irregularities`` (every id of
        #: :attr:`titles`) and ``phases`` (every key of :attr:`phases`).
        self.names = data["names"]

    def irregularity_name(self, irregularity: str | None, verdict: str | None = None) -> str:
        """*irregularity* in plain words (``"four-card flop"``); a decision without one is a
        floor call or a misdeal the dealer made; an id this catalog lacks stays as it is."""
        names = self.names["irregularities"]
        if not irregularity:
            return names["MANUAL_MISDEAL"] if verdict == "misdeal" else names["FLOOR_CALLED"]
        return names.get(irregularity, irregularity)

    def phase_name(self, phase: str | None) -> str:
        """The phase of a hand in plain words (``"on the flop"``); empty for none, an unknown one as it is."""
        return self.names["phases"].get(phase, phase) if phase else ""

    def _fill(self, template: str, step, card) -> str:
        values = {}
        for name, value in step.params:
            if name in ("card", "got"):
                values[name] = card(value)
            elif name == "cards":
                values[name] = " ".join(card(c) for c in value)
            elif name == "street":
                values[name] = self.streets.get(value, value)
            elif name == "streets":
                values[name] = " + ".join(self.streets.get(v, v) for v in value)
            else:
                values[name] = value
        return template.format_map(_Missing(values))

    def text(self, step) -> str:
        """The full instruction for *step*."""
        return self._fill(self.steps[step.key]["text"], step, text_card)

    def lcd(self, step, cols: int = 20) -> str:
        """The LCD form: suits as CGRAM glyph characters, fit for *cols* columns."""
        form = "lcd" if cols >= 20 else "lcd16"
        return self._fill(self.steps[step.key][form], step, lcd_card)

    def title(self, irregularity: str | None, verdict: str) -> str:
        """The LCD's first line for a decision: the irregularity's short name."""
        if irregularity is None:
            return self.titles["MANUAL_MISDEAL"] if verdict == "misdeal" else (
                self.titles["FLOOR_CALLED"] if verdict == "floor" else self.verdicts["ok"])
        return self.titles[irregularity]


class _Missing(dict):
    def __missing__(self, key):
        return "{" + key + "}"


def _read(path: Path) -> dict:
    return read_toml(path, "message file")


def _keys(data: dict, prefix="") -> set[str]:
    out = set()
    for k, v in data.items():
        if isinstance(v, dict):
            out |= _keys(v, f"{prefix}{k}.")
        else:
            out.add(prefix + k)
    return out


@functools.cache
def load_messages(lang: str = "en") -> Messages:
    """Load and check one language. Every key of the English file must be there, and no other."""
    if lang not in LANGUAGES:
        raise ConfigError(MESSAGES_DIR, "language", f"one of {list(LANGUAGES)}", lang)
    path = MESSAGES_DIR / f"{lang}.toml"
    data = _read(path)
    for section in _SECTIONS:
        if section not in data:
            raise ConfigError(path, section, "the section as in en.toml", None, found=False)
    if lang != "en":
        ref = _keys(_read(MESSAGES_DIR / "en.toml"))
        have = _keys(data)
        if ref - have:
            raise ConfigError(path, sorted(ref - have)[0], "a message (en.toml has it)", None, found=False)
        if have - ref:
            key = sorted(have - ref)[0]
            raise ConfigError(path, key, "only the keys of en.toml", "(unknown key)")
    for part, same_as in (("irregularities", "titles"), ("phases", "phases")):
        names = data["names"].get(part)
        if not isinstance(names, dict) or set(names) != set(data[same_as]) \
                or not all(isinstance(v, str) and v for v in names.values()):
            raise ConfigError(path, f"names.{part}", f"a word for each key of [{same_as}]", names,
                              found=names is not None)
    for key, forms in data["steps"].items():
        for form in _FORMS:
            if not isinstance(forms.get(form), str):
                raise ConfigError(path, f"steps.{key}.{form}", "a string", forms.get(form), found=form in forms)
    return Messages(lang, data)
