"""The badge registry: which badge (an RFID tag UID) belongs to which dealer.

A dealer signs in at a table by holding a badge to the shoe reader between hands
(CONTRACT.md, the ``dealer`` event). The table keeps ids only, employee numbers
as the casino gives them; names belong to the floor server.

The registry file is TOML a technician can read; ``dealerbox badge register``
writes it::

    [badges]
    08A1B2C3 = "1042"
    04A3C6CAE26180 = "2077"

A dealer may have more than one badge (a spare); a badge belongs to one dealer.
A tag is a badge or a card, never both: the table config refuses a badge
registry that shares a tag with the deck registry.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import tomli_w

from dealerbox.atomic import save_atomic
from dealerbox.errors import ConfigError, RegistryError
from dealerbox.tomlfile import read_toml
from dealerbox.domain.events import DEALER_ID
from dealerbox.domain.decks import normalize_uid

__all__ = ["BadgeRegistry", "check_dealer_id", "simulated_badge_uid", "simulation_badges", "SIMULATED_DEALERS"]

#: The dealers of the built-in simulated badges (``[badges] registry = "builtin:sim"``).
SIMULATED_DEALERS = ("1042", "2077", "3115", "4208")


def check_dealer_id(dealer) -> str:
    """*dealer* if it is a dealer id (1-10 letters, digits, '-' or '_'), else :class:`RegistryError`."""
    if not isinstance(dealer, str) or not DEALER_ID.fullmatch(dealer):
        raise RegistryError(f"a dealer id is 1 to 10 letters, digits, '-' or '_' (an employee number), "
                            f"not {dealer!r}")
    return dealer


class BadgeRegistry:
    """Maps badge UIDs to dealer ids. Pure data; load and save are explicit."""

    def __init__(self):
        self._by_uid: dict[str, str] = {}

    def add(self, uid, dealer: str) -> str:
        """Register badge *uid* to *dealer*; return the normalised UID.

        Raises :class:`RegistryError` for a malformed UID or id, or a badge that is
        someone's already.
        """
        key = normalize_uid(uid)
        check_dealer_id(dealer)
        owner = self._by_uid.get(key)
        if owner is not None:
            raise RegistryError(f"badge {key} is registered to dealer {owner} already")
        self._by_uid[key] = dealer
        return key

    def remove(self, dealer: str) -> list[str]:
        """Take every badge of *dealer* out; return their UIDs (empty: the dealer had none)."""
        gone = self.badges_of(dealer)
        for uid in gone:
            del self._by_uid[uid]
        return gone

    def dealer_of(self, uid) -> str | None:
        """The dealer whose badge *uid* is, or None (not a badge, or not a UID at all)."""
        try:
            return self._by_uid.get(normalize_uid(uid))
        except RegistryError:
            return None

    def badges_of(self, dealer: str) -> list[str]:
        """The UIDs of *dealer*'s badges, sorted."""
        return sorted(u for u, d in self._by_uid.items() if d == dealer)

    @property
    def dealers(self) -> list[str]:
        """Every dealer with a badge, sorted."""
        return sorted(set(self._by_uid.values()))

    def by_uid(self) -> dict[str, str]:
        """A copy of UID -> dealer id (UIDs normalised), for the readers' threads."""
        return dict(self._by_uid)

    def __len__(self) -> int:
        return len(self._by_uid)

    def __contains__(self, uid) -> bool:
        return self.dealer_of(uid) is not None

    # -- files --------------------------------------------------------------
    @classmethod
    def load(cls, path) -> "BadgeRegistry":
        """Read a badge registry file; errors name the file and the key."""
        path = Path(path)
        data = read_toml(path, "badge registry")
        unknown = set(data) - {"badges"}
        if unknown:
            key = sorted(unknown)[0]
            raise ConfigError(path, key, "only the [badges] table", data[key])
        badges = data.get("badges", {})
        if not isinstance(badges, dict):
            raise ConfigError(path, "badges", "a table of UID = dealer id", badges)
        reg = cls()
        for uid, dealer in badges.items():
            try:
                reg.add(uid, dealer)
            except RegistryError as exc:
                raise ConfigError(path, f"badges.{uid}", f"a 4/7/10-byte hex UID mapped to a dealer id ({exc})",
                                  dealer) from exc
        return reg

    def to_toml(self) -> str:
        head = ("# dealerbox badge registry: badge UID = dealer id (an employee number, never a name).\n"
                "# Written by `dealerbox badge register`.\n\n")
        badges = dict(sorted(self._by_uid.items(), key=lambda kv: (kv[1], kv[0])))
        return head + tomli_w.dumps({"badges": badges})

    def save(self, path) -> None:
        """Write the registry atomically: a crash leaves the old file or the new one.

        The new file keeps the old one's mode and owner; a first file gets its folder's
        owner and mode 0640 (see :func:`dealerbox.atomic.save_atomic`): a technician
        registers badges as root while the box runs as its own user.
        """
        save_atomic(path, self.to_toml())


def simulated_badge_uid(dealer: str) -> str:
    """A deterministic 4-byte UID for *dealer*'s simulated badge, as staff cards
    (MIFARE Classic) carry; never the cascade tag 0x88 as its first byte."""
    raw = bytearray(hashlib.sha256(f"dealerbox-sim-badge:{dealer}".encode()).digest()[:4])
    if raw[0] == 0x88:
        raw[0] = 0x08
    return raw.hex().upper()


def simulation_badges() -> BadgeRegistry:
    """The built-in badges of the simulated table: one for each of :data:`SIMULATED_DEALERS`."""
    reg = BadgeRegistry()
    for dealer in SIMULATED_DEALERS:
        reg.add(simulated_badge_uid(dealer), dealer)
    return reg
