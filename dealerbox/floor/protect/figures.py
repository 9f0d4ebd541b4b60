"""The protection figures a page shows, read from the pass's per-hand rows (``protect_hands``).

SQLAlchemy Core, so they read either backend, on a connection as the floor's other
figures (:mod:`dealerbox.floor.telling.figures`) do; a hand belongs to a range by its start.

- :func:`shuffle_quality`: per table and per dealer, how many hands were scored, the
  mean of the statistic (pairs kept from the deck's last hands) against the mean the
  declared shuffle gives (the reference's), and the share of hands whose p-value was
  below 0.05 (5% under the declared shuffle: much more says the shuffling is weaker);
- :func:`dealer_chart`: one dealer's control chart, hand by hand, with its limit h;
- :func:`seat_luck`: one table's seats over one range: hands, strong hands, the
  expected number, the p-value, and the strong hands' seqs (each a story);
  :func:`room_seat_luck` the same for every table at once;
- :func:`unscored`: the hands whose shuffle was not scored for want of a current reference.

The numbers of the hands a page names are the figures' own
(:func:`dealerbox.floor.telling.figures.hand_numbers`).
"""

from __future__ import annotations

import json

from sqlalchemy import Integer, and_, func, select

from dealerbox.floor.protect.config import ProtectConfig
from dealerbox.floor.protect.floor_pass import load_references
from dealerbox.floor.protect.seat_luck import binomial_tail, strong_probability
from dealerbox.floor.protect.tables import protect_hands

__all__ = ["shuffle_quality", "dealer_chart", "seat_luck", "room_seat_luck", "room_dealer_points", "unscored",
           "LOW_P"]

#: A hand "looks unshuffled" on the figures below this p-value (5% of fair hands do).
LOW_P = 0.05


def _in_range(start: float, end: float):
    return and_(protect_hands.c.started >= start, protect_hands.c.started < end)


def shuffle_quality(conn, start: float, end: float) -> dict:
    """``{"tables": [...], "dealers": [...]}``: each row ``hands``, ``scored``, ``mean_kept``,
    ``expected_kept`` (the declared shuffle's mean for the same games), ``low_p_share``
    (of scored hands, p below :data:`LOW_P`), ``expected_low_p_share`` (the share a fair
    shuffle as declared gives for the same games: at most 0.05, less where the statistic's
    few values cannot make exactly 5%) and ``min_p``."""
    references = load_references(conn)
    means = {cfg: sum(k * c for k, c in enumerate(r.counts)) / r.n for cfg, r in references.items()}
    low_shares = {cfg: sum(c for k, c in enumerate(r.counts) if r.p_value(k) < LOW_P) / r.n
                  for cfg, r in references.items()}
    h = protect_hands.c
    out = {}
    for name, column in (("tables", h.table_id), ("dealers", h.dealer)):
        rows: dict = {}
        for key, players, hole_cards, hands, scored, total, low, min_p in conn.execute(
                select(column, h.players, h.hole_cards, func.count(), func.count(h.p_value),
                       func.sum(h.statistic), func.sum((h.p_value < LOW_P).cast(Integer)),
                       func.min(h.p_value))
                .where(_in_range(start, end)).group_by(column, h.players, h.hole_cards)):
            r = rows.setdefault(key, {"hands": 0, "scored": 0, "kept": 0, "expected": 0.0, "low": 0,
                                      "expected_low": 0.0, "min_p": None})
            r["hands"] += hands
            r["scored"] += scored
            r["kept"] += int(total or 0)
            r["expected"] += scored * means.get((players, hole_cards), 0.0)
            r["low"] += int(low or 0)
            r["expected_low"] += scored * low_shares.get((players, hole_cards), 0.0)
            if min_p is not None:
                r["min_p"] = min_p if r["min_p"] is None else min(r["min_p"], min_p)
        key_name = "table" if name == "tables" else "dealer"
        out[name] = [{key_name: key, "hands": r["hands"], "scored": r["scored"],
                      "mean_kept": round(r["kept"] / r["scored"], 4) if r["scored"] else None,
                      "expected_kept": round(r["expected"] / r["scored"], 4) if r["scored"] else None,
                      "low_p_share": round(r["low"] / r["scored"], 4) if r["scored"] else None,
                      "expected_low_p_share": round(r["expected_low"] / r["scored"], 4) if r["scored"] else None,
                      "min_p": r["min_p"]}
                     for key, r in sorted(rows.items(), key=lambda kv: (kv[0] is None, kv[0] or ""))]
    return out


def dealer_chart(conn, dealer: str, start: float, end: float, *, h: float | None = None) -> dict:
    """One dealer's CUSUM hand by hand: ``points`` (table, start_seq, started, error, value)
    and the limit ``h`` when given (the pass's :class:`~dealerbox.floor.protect.control_chart.Cusum`)."""
    return {"dealer": dealer, "from": start, "to": end, "h": h,
            "points": room_dealer_points(conn, start, end, [dealer]).get(dealer, [])}


def room_dealer_points(conn, start: float, end: float, dealers: list[str]) -> dict[str, list[dict]]:
    """The ``points`` of :func:`dealer_chart` of each of *dealers*, dealer -> points, in one
    statement (the Surveillance page draws every dealer's chart of a shift: one read, not one
    round trip per dealer)."""
    c = protect_hands.c
    out: dict[str, list[dict]] = {d: [] for d in dealers}
    for dealer, t, s, at, e, v in conn.execute(
            select(c.dealer, c.table_id, c.start_seq, c.started, c.error, c.chart)
            .where(_in_range(start, end), c.dealer.in_(dealers)).order_by(c.dealer, c.started, c.start_seq)):
        out[dealer].append({"table": t, "start_seq": s, "started": at, "error": bool(e), "value": v})
    return out


def seat_luck(conn, table_id: str, start: float, end: float, config: ProtectConfig = ProtectConfig()) -> list[dict]:
    """Per seat (and game) of one table in ``[start, end)``: hands dealt, strong hands (as
    *config* defines them: the floor's ``[protect]``), the expected number, P(at least that
    many) by chance (uncorrected), and the strong hands' seqs."""
    return room_seat_luck(conn, start, end, config, table_id).get(table_id, [])


def room_seat_luck(conn, start: float, end: float, config: ProtectConfig = ProtectConfig(),
                   table_id: str | None = None) -> dict[str, list[dict]]:
    """:func:`seat_luck` of every table with hands in ``[start, end)`` (or of *table_id*
    alone), table -> its seats, in one statement: a page of the room's seats is one read
    through the index on ``started``, not one per table (a round trip each on PostgreSQL)."""
    c = protect_hands.c
    stmt = select(c.table_id, c.start_seq, c.hole_cards, c.seats, c.strong).where(_in_range(start, end))
    if table_id is not None:
        stmt = stmt.where(c.table_id == table_id)
    counts: dict = {}
    # A table's hands hold the same few seat lists again and again: each text is read once.
    parsed: dict[str, list] = {}
    for table, start_seq, hole_cards, seats, strong in conn.execute(stmt.order_by(c.table_id, c.start_seq)):
        strong = parsed[strong] if strong in parsed else parsed.setdefault(strong, json.loads(strong))
        mine = counts.setdefault(table, {})
        for seat in parsed[seats] if seats in parsed else parsed.setdefault(seats, json.loads(seats)):
            n, ids = mine.get((seat, hole_cards), (0, []))
            if seat in strong:
                ids.append(start_seq)
            mine[(seat, hole_cards)] = (n + 1, ids)
    chances: dict[int, float] = {}
    out = {}
    for table, mine in sorted(counts.items()):
        out[table] = []
        for (seat, hole_cards), (n, ids) in sorted(mine.items()):
            if hole_cards not in chances:
                chances[hole_cards] = float(strong_probability(hole_cards, config.holdem_strong, config.omaha_pairs))
            p = chances[hole_cards]
            out[table].append({"seat": seat, "hole_cards": hole_cards, "hands": n, "strong": len(ids),
                               "expected": round(n * p, 3), "p_value": binomial_tail(len(ids), n, p),
                               "strong_hands": ids})
    return out


def unscored(conn, start: float, end: float) -> list[dict]:
    """The hands in ``[start, end)`` whose shuffle was not scored for want of a reference fitted
    from the declared model: per game and why (``missing``, ``stale``), how many."""
    c = protect_hands.c
    return [{"players": players, "hole_cards": hole_cards, "reason": reason, "hands": hands}
            for players, hole_cards, reason, hands in conn.execute(
                select(c.players, c.hole_cards, c.unscored, func.count())
                .where(_in_range(start, end), c.unscored.is_not(None))
                .group_by(c.players, c.hole_cards, c.unscored).order_by(c.hole_cards, c.players, c.unscored))]
