"""The floor's gettext catalogs: English is the source, Czech, Slovak and German are
translated (``dealerbox/floor/locale/<lang>/LC_MESSAGES/floor.po``; ``make messages``
extracts and updates them, docs/floor/pages.md says how).

A wheel carries each catalog compiled (``floor.mo``, built by setup.py's build step; never
committed). An editable checkout has only the ``.po`` files: where no ``.mo`` is, the
``.po`` is compiled in memory once per process. Measured on this project's catalogs: reading
and compiling one ``.po`` takes a few milliseconds (tests/floor/test_catalogs.py prints it),
once per language and process, so the checkout needs no build step of its own and can never
run a stale ``.mo``.

The irregularities' and phases' names are not here: their one source is the table's message
catalogs (``[names]`` of firmware_config/messages/<lang>.toml, :mod:`dealerbox.domain.messages`),
which the LCD reads too.
"""

from __future__ import annotations

import functools
import io
from importlib import resources

from babel.core import Locale, UnknownLocaleError, negotiate_locale
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations

from dealerbox.domain.messages import LANGUAGES
from dealerbox.floor.marks import N_

__all__ = ["LANGUAGES", "DOMAIN", "SOURCE_LANGUAGE", "N_", "translations", "catalog_file", "accepted_language",
           "language_name"]

#: The catalogs' gettext domain: ``floor.po`` / ``floor.mo``.
DOMAIN = "floor"
#: The language the messages are written in: it has no catalog of its own.
SOURCE_LANGUAGE = "en"


def catalog_file(code: str, ext: str):
    """The packaged catalog of *code* (``"po"`` or ``"mo"``) as an importlib resource."""
    return resources.files("dealerbox.floor").joinpath("locale", code, "LC_MESSAGES", f"{DOMAIN}.{ext}")


@functools.cache
def translations(code: str) -> NullTranslations:
    """The compiled catalog of *code*, read once per process; English: the messages as written.

    Raises :class:`ValueError` for a language the floor does not speak."""
    if code not in LANGUAGES:
        raise ValueError(f"language {code!r}: expected one of {', '.join(LANGUAGES)}")
    if code == SOURCE_LANGUAGE:
        return NullTranslations()
    compiled = catalog_file(code, "mo")
    if compiled.is_file():
        return Translations(io.BytesIO(compiled.read_bytes()), domain=DOMAIN)
    with catalog_file(code, "po").open("rb") as source:
        catalog = read_po(source, locale=code, domain=DOMAIN)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)  # fuzzy entries are left out, as msgfmt leaves them out
    buffer.seek(0)
    return Translations(buffer, domain=DOMAIN)


def accepted_language(header: str | None, default: str) -> str:
    """The first of the floor's languages that a browser's ``Accept-Language`` asks for
    (``cs-CZ,cs;q=0.9,en;q=0.8`` → ``cs``), by its weights; *default* when it asks for none."""
    wanted = []
    for part in (header or "")[:500].split(","):
        tag, _, params = part.strip().partition(";")
        weight = 1.0
        if params.strip().startswith("q="):
            try:
                weight = float(params.strip()[2:])
            except ValueError:
                continue
        if tag and weight > 0:
            wanted.append((weight, tag.strip().replace("-", "_")))
    preferred = [tag for _w, tag in sorted(wanted, key=lambda w: -w[0])]
    return negotiate_locale(preferred, list(LANGUAGES)) or default


@functools.cache
def language_name(code: str) -> str:
    """The language in its own words, as its readers look for it in a list: ``čeština``."""
    try:
        return Locale.parse(code).language_name
    except (UnknownLocaleError, ValueError):
        return code
