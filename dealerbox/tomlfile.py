"""Reading the box's TOML files with errors a technician can act on."""

from __future__ import annotations

import tomllib
from pathlib import Path

from dealerbox.errors import ConfigError


def read_toml(path, what: str) -> dict:
    """Decode the TOML file *path*; *what* names it in errors ("a rule profile").

    Raises :class:`ConfigError` naming the file for a missing or unreadable file,
    text that is not UTF-8, or invalid TOML.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(path, "(file)", f"a readable {what}", exc.strerror or str(exc)) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(path, "(file)", f"{what} as UTF-8 text",
                          f"not UTF-8: {exc.reason} at byte {exc.start}") from exc
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(path, "(syntax)", "valid TOML", str(exc)) from exc
