"""The build's one step of its own (everything else is pyproject.toml): the floor's gettext
catalogs (dealerbox/floor/locale/<lang>/LC_MESSAGES/floor.po) compiled into the wheel as
``floor.mo``, so an installed floor reads them as gettext does. The compiled files are never
committed (.gitignore); an editable checkout reads the ``.po`` files themselves
(dealerbox/floor/telling/catalogs.py says why that is enough there).
"""

from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from setuptools import setup
from setuptools.command.build_py import build_py

LOCALE = Path("dealerbox", "floor", "locale")


class BuildWithCatalogs(build_py):
    """build_py, then each language's catalog compiled beside the package it belongs to."""

    def run(self):
        super().run()
        for source in sorted(LOCALE.glob("*/LC_MESSAGES/floor.po")):
            target = Path(self.build_lib) / source.with_suffix(".mo")
            target.parent.mkdir(parents=True, exist_ok=True)
            with source.open("rb") as po:
                catalog = read_po(po, locale=source.parts[-3], domain="floor")
            with target.open("wb") as mo:
                write_mo(mo, catalog)  # as msgfmt: fuzzy entries left out
            self.announce(f"compiled {source} -> {target}", level=2)

    def get_outputs(self, include_bytecode=True):
        # The wheel's RECORD and an editable install's mapping list what the step made.
        made = [str(Path(self.build_lib) / p.with_suffix(".mo")) for p in LOCALE.glob("*/LC_MESSAGES/floor.po")]
        return super().get_outputs(include_bytecode) + made


setup(cmdclass={"build_py": BuildWithCatalogs})
