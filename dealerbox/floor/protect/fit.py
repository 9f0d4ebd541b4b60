"""``dealerbox floor protect fit``: the references the shuffle check scores against, and the room's
error rate the dealers' charts start from, computed and kept in the store (``protect_fitted``).

- **From the declared model** (:func:`fit_model`): for each game configured
  (``[protect] players`` x ``hole_cards``: every count from 2 to 10 of hold'em and Omaha by
  default), ``reference_hands`` hands dealt through the declared shuffle and gathering model
  (:func:`fit_game`). The collector's pass fits a missing or stale game the same way in
  the background (:mod:`~dealerbox.floor.protect.autofit`), so nobody has to remember this
  command; it is there to fit at once, with a seed or another number of hands.
- **From the house's own fair hands** (:func:`fit_house`): every hand the store holds
  started in a range, read from the stored lines as the pass reads them, each scored
  against its deck's last hands; per game the empirical distribution is the reference
  (:meth:`ShuffleCheck.fit`). The room rate is the share of those hands with an error.
  The range must hold only hands the house trusts to be fair: a cheat inside it raises
  the thresholds it will be judged by.

Every reference is kept with the fingerprint of the declared model
(:meth:`~dealerbox.floor.protect.config.ProtectConfig.fingerprint`): after a change of
``shuffle`` or ``[protect.gathering]`` it is stale and judges no hand.
"""

from __future__ import annotations

import random

from sqlalchemy import select

from dealerbox.errors import UsageError
from dealerbox.floor.telling.hands import SENSING
from dealerbox.floor.protect.config import ProtectConfig
from dealerbox.floor.protect.fitted import put_fitted, save_reference
from dealerbox.floor.protect.journal_hands import CardFollower
from dealerbox.floor.protect.references import fit_reference
from dealerbox.floor.protect.shuffle_check import Reference, ShuffleCheck
from dealerbox.floor.store.schema import lines_table, tables_table

__all__ = ["fit_model", "fit_house", "fit_game"]


def fit_game(config: ProtectConfig, players: int, hole_cards: int, rng: random.Random,
             hands: int | None = None) -> Reference:
    """The reference of one game under the declared model
    (:func:`~dealerbox.floor.protect.references.fit_reference`: *hands*, by default
    ``reference_hands``, dealt many tables at once), with the model's fingerprint. Pure."""
    return fit_reference(config.shuffle, config.gathering, config.memory, hole_cards, players, rng,
                         hands=hands or config.reference_hands)


def fit_model(conn, config: ProtectConfig, rng: random.Random, *, hands: int | None = None, report=None) -> dict:
    """References under the declared model for every configured game, stored with the model's
    fingerprint; returns them."""
    model = ShuffleCheck(config.shuffle, config.gathering).model
    out = {}
    for players, hole_cards in config.games():
        reference = fit_game(config, players, hole_cards, rng, hands)
        save_reference(conn, players, hole_cards, reference, model,
                       fingerprint=config.fingerprint(players, hole_cards))
        out[(players, hole_cards)] = reference
        if report is not None:
            report(players, hole_cards, reference)
    return out


def fit_house(conn, config: ProtectConfig, start: float, end: float, *, report=None) -> dict:
    """References and the room rate from the store's hands started in ``[start, end)``, stored."""
    check = ShuffleCheck(config.shuffle, config.gathering, threshold=config.threshold, memory=config.memory)
    fair, hands, errors = [], 0, 0
    for (table_id,) in conn.execute(select(tables_table.c.table_id).order_by(tables_table.c.table_id)):
        follower = CardFollower(table_id)
        cursor = 0
        while True:
            rows = conn.execute(select(lines_table.c.seq, lines_table.c.line)
                                .where(lines_table.c.table_id == table_id, lines_table.c.seq > cursor)
                                .order_by(lines_table.c.seq).limit(5000)).all()
            if not rows:
                break
            cursor = rows[-1][0]
            for _seq, line in rows:
                try:
                    closed = follower.feed(line)
                except ValueError:
                    continue
                for hand in closed:
                    s = hand.summary
                    if s.started is None or not start <= s.started < end:
                        continue
                    hands += 1
                    errors += any(i not in SENSING for i, _, _ in s.irregularities)
                    fair.extend(hand.dealt_hands())
    if not fair:
        raise UsageError("no hands with cards in that range: nothing to fit")
    fitted = check.fit(fair)
    for (players, hole_cards), reference in sorted(fitted.references.items()):
        save_reference(conn, players, hole_cards, reference, f"house hands under {check.model}",
                       fingerprint=config.fingerprint(players, hole_cards))
        if report is not None:
            report(players, hole_cards, reference)
    rate = errors / hands
    if rate > 0:
        put_fitted(conn, "room_rate", rate)
    return {"references": fitted.references, "room_rate": rate, "hands": hands}

