"""What was fitted, as the store keeps it (``protect_fitted``): the shuffle check's references,
each with the fingerprint of the model it was dealt from, and the room's error rate.

A reference judges a game's hands only when its fingerprint is the declared model's
(:meth:`~dealerbox.floor.protect.config.ProtectConfig.fingerprint`: shuffle, gathering, memory,
game): one fitted before the house changed ``shuffle`` or ``[protect.gathering]`` is *stale*,
and its game is not scored until a current one is fitted (:func:`reference_status`).
"""

from __future__ import annotations

import json

from sqlalchemy import delete, insert, select

from dealerbox.floor.protect.config import ProtectConfig
from dealerbox.floor.protect.shuffle_check import Reference
from dealerbox.floor.protect.tables import protect_fitted

__all__ = ["load_references", "load_fitted", "save_reference", "reference_status", "room_rate", "put_fitted",
           "get_fitted", "CURRENT", "STALE", "MISSING"]

#: A game's reference: fitted from the declared model, from another one, or none at all.
CURRENT, STALE, MISSING = "current", "stale", "missing"


def load_fitted(conn) -> dict:
    """Every reference in the store: (players, hole cards) -> (:class:`Reference`, its fingerprint
    or None when it was kept without one)."""
    out = {}
    for key, value in conn.execute(select(protect_fitted.c.key, protect_fitted.c.value)
                                   .where(protect_fitted.c.key.like("reference/%"))):
        _, players, hole_cards = key.split("/")
        d = json.loads(value)
        out[(int(players), int(hole_cards))] = (Reference.from_dict(d), d.get("fingerprint") or None)
    return out


def load_references(conn) -> dict:
    """The fitted references in the store, current or not: (players, hole cards) -> :class:`Reference`."""
    return {game: reference for game, (reference, _fp) in load_fitted(conn).items()}


def reference_status(conn, config: ProtectConfig) -> tuple[dict, dict]:
    """The references that judge hands under *config* (those whose fingerprint is the declared
    model's), and each game's status (:data:`CURRENT`, :data:`STALE`, :data:`MISSING`) with the
    fingerprint found: every configured game, and every other game the store holds."""
    fitted = load_fitted(conn)
    current, status = {}, {}
    for game in sorted(set(config.games()) | set(fitted)):
        reference, found = fitted.get(game, (None, None))
        if reference is None:
            status[game] = (MISSING, None)
        elif found == config.fingerprint(*game):
            current[game] = reference
            status[game] = (CURRENT, found)
        else:
            status[game] = (STALE, found)
    return current, status


def save_reference(conn, players: int, hole_cards: int, reference: Reference, model: str, *,
                   fingerprint: str | None = None) -> None:
    """Keep *reference* for (players, hole cards) in the store, replacing the one there; *model*
    says in words what it was dealt from, *fingerprint* is the model's
    (:meth:`ProtectConfig.fingerprint`; default the reference's own): without one the
    reference judges no hand."""
    fingerprint = fingerprint or reference.fingerprint or None
    put_fitted(conn, f"reference/{players}/{hole_cards}",
               {**reference.to_dict(), "model": model, "fingerprint": fingerprint})


def room_rate(conn) -> float | None:
    """The room's fitted rate of hands with an error, if ``floor protect fit`` stored one."""
    return get_fitted(conn, "room_rate")


def get_fitted(conn, key: str):
    """The JSON value kept under *key* in ``protect_fitted`` (None: nothing)."""
    value = conn.execute(select(protect_fitted.c.value).where(protect_fitted.c.key == key)).scalar()
    return json.loads(value) if value is not None else None


def put_fitted(conn, key: str, value) -> None:
    """Keep *value* (JSON) under *key* in ``protect_fitted``, replacing what was there; None removes it."""
    conn.execute(delete(protect_fitted).where(protect_fitted.c.key == key))
    if value is not None:
        conn.execute(insert(protect_fitted).values(key=key, value=json.dumps(value)))
