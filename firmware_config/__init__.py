"""The data a technician edits: rule profiles, message catalogs and table configs.

Installed as the package ``dealerbox.firmware_config`` (see ``pyproject.toml``);
read through :mod:`dealerbox.resources`, never by a path relative to a module.
"""
