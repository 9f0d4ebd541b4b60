"""The floor's figures: an incremental aggregate of the stored journal lines, and its queries.

Every figure the floor shows (hands per hour, irregularity rates, corrections
done right, sensing faults per reader, how fast alerts are cleared) is a count
over hands, and every hand is told by the journal lines the collector stored.
Recounting those lines per request does not scale to a year of a room, so the
:class:`Ledger` reads each table's lines once, in ``seq`` order, through
:class:`~dealerbox.floor.telling.hands.HandFollower`, and keeps one row per closed hand
(``fig_hands``), one per irregularity episode (``fig_irregularities``) and one per
hand and reader that faulted (``fig_reader_faults``), with the indexes the queries
need. ``fig_progress`` says how far it read each table. The queries below read
only these tables (and the store's ``alerts``).

Everything is SQLAlchemy Core 2.x, so the same tables and queries run on SQLite
(the store file) and PostgreSQL (psycopg 3), on an engine from
:func:`~dealerbox.floor.store.store_engine`.

Definitions (docs/floor/pages.md, "Figures", is the reference for API users):

- A hand belongs to a time range by its start (the wall time of its ``new_hand``
  line); only closed hands count (the hand in play counts once it is over).
- *Dealing time* of a hand: its own seconds (its ``new_hand`` line's wall time to its
  own last line's; the next ``new_hand`` belongs to the next hand) plus the pause before it, when the
  previous hand at the same table ended at most :data:`BREAK_S` before it started
  (the shuffle and the button move belong to dealing; a longer pause is a break).
  *Hands per hour* = hands / (dealing time in hours).
- *Irregularities* are the episodes of hands.py other than the sensing notices
  (``UNREAD_CARD``, ``READER_DEGRADED``), which count as sensing faults instead.
- A hand is a *misdeal* (a *void* hand) when one of its episodes had that verdict.
"""

from __future__ import annotations

import datetime as _dt
import logging
import math
import statistics
import threading

from sqlalchemy import (BigInteger, Column, Double, Index, Integer, MetaData, String, Table, and_,
                        func, insert, select, update)
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from dealerbox.floor.marks import N_
from dealerbox.floor.telling.hands import SENSING, HandFollower, HandSummary
from dealerbox.floor.store.schema import alerts_table, lines_table, tables_table

__all__ = ["Ledger", "FIGURES", "empty_figures", "parse_moment", "table_figures", "dealer_figures",
           "room_figures", "hourly", "alert_clearing", "sensing_faults", "hand_numbers", "BREAK_S"]

log = logging.getLogger(__name__)

#: A pause between two hands at a table longer than this is a break, not dealing.
BREAK_S = 300.0
#: Lines looked up per statement by :func:`hand_numbers`: a page's alerts name a few hundred, a
#: long range's seats and a day's card control log some thousands; SQLite takes 32,766
#: parameters in a statement, two a line.
NUMBERS_CHUNK = 5_000
#: Lines read and filed per transaction.
CHUNK = 5000
#: PostgreSQL advisory lock key held by the one caller filing the figures ("dbfg" in ASCII).
_FIGURES_LOCK_KEY = 0x64626667

# The store's tables this module reads (dealerbox/floor/store/ owns and writes them).
store_tables, store_lines, store_alerts = tables_table, lines_table, alerts_table

# -- the aggregate (this module owns it; migrations/versions/0005_figures.py creates it)

FIGURES = MetaData()
fig_hands = Table(
    "fig_hands", FIGURES,
    Column("table_id", String, primary_key=True),
    Column("start_seq", BigInteger, primary_key=True),
    Column("end_seq", BigInteger, nullable=False),
    Column("dealer", String),
    Column("started", Double),
    Column("hour", BigInteger),           # floor(started / 3600): the hourly charts' bucket
    Column("ended", Double),
    Column("seconds", Double),
    Column("pause_before", Double, nullable=False),
    Column("players", Integer),
    Column("hole_cards", Integer, nullable=False),
    Column("ended_by", String, nullable=False),
    Column("irregularities", Integer, nullable=False),
    Column("corrections", Integer, nullable=False),
    Column("wrong_corrections", Integer, nullable=False),
    Column("misdeal", Integer, nullable=False),
    Column("void", Integer, nullable=False),
    Column("unread_cards", Integer, nullable=False),
    Column("reader_degraded", Integer, nullable=False),
    Column("reader_faults", Integer, nullable=False),
    #: The hand's place among its table's hands the ledger filed: 1 for the first (migration 0013).
    #: Kept with the hand, so that a hand's page names it without counting the hands before it.
    Column("number", BigInteger),
)
Index("fig_hands_started", fig_hands.c.started)
Index("fig_hands_table_started", fig_hands.c.table_id, fig_hands.c.started)
Index("fig_hands_dealer_started", fig_hands.c.dealer, fig_hands.c.started)

fig_irregularities = Table(
    "fig_irregularities", FIGURES,
    Column("table_id", String, primary_key=True),
    Column("seq", BigInteger, primary_key=True),   # the decision's line
    Column("start_seq", BigInteger, nullable=False),
    Column("dealer", String),
    Column("started", Double),
    Column("irregularity", String, nullable=False),
    Column("verdict", String, nullable=False),
)
Index("fig_irregularities_started", fig_irregularities.c.started)
Index("fig_irregularities_table_started", fig_irregularities.c.table_id, fig_irregularities.c.started)
Index("fig_irregularities_dealer_started", fig_irregularities.c.dealer, fig_irregularities.c.started)

fig_reader_faults = Table(
    "fig_reader_faults", FIGURES,
    Column("table_id", String, primary_key=True),
    Column("start_seq", BigInteger, primary_key=True),
    Column("reader", String, primary_key=True),
    Column("dealer", String),
    Column("started", Double),
    Column("faults", Integer, nullable=False),
)
Index("fig_reader_faults_started", fig_reader_faults.c.started)

fig_progress = Table(
    "fig_progress", FIGURES,
    Column("table_id", String, primary_key=True),
    Column("seq", BigInteger, nullable=False),       # the last line read
    Column("resume_seq", BigInteger),                # the open hand's first line, re-read next time
    Column("dealer", String),                        # who deals at the resume point
    Column("last_ended", Double),                    # when the last closed hand ended
    Column("hands", BigInteger),                     # closed hands filed so far (migration 0013)
)

_INDEXED = (fig_hands, fig_irregularities, fig_reader_faults)


# ------------------------------------------------------------------ the ledger

class Ledger:
    """Files each table's new journal lines into the figures' tables.

    :meth:`catch_up` is idempotent and safe to call from several threads and
    processes at once (the collector after each commit, the web view before it
    answers): each chunk is filed in one transaction that first moves the table's
    progress from the value it read, so two callers never file the same lines.
    """

    def __init__(self, *, chunk: int = CHUNK, protection=None):
        self.chunk = chunk
        #: A pass run on the same connection after each catch-up, under the same lock (the
        #: game protection's :class:`~dealerbox.floor.protect.floor_pass.Protection`), or None.
        self.protection = protection
        self._lock = threading.Lock()
        #: Lines that could not be read (malformed), skipped; per table, this process.
        self.skipped: dict[str, int] = {}
        # The follower of each table as this ledger left it, with the progress it had
        # then: while nobody else moved that table's progress, it goes on from there
        # instead of reading the open hand again (the collector calls after each commit).
        self._followers: dict[tuple[str, str], tuple[int, HandFollower]] = {}

    def catch_up(self, engine, *, wait: bool = True) -> int:
        """Read every line stored since the last call; returns how many were read.

        On PostgreSQL one caller at a time files (an advisory lock): several collectors
        filing one store would otherwise each read every table's new lines and all but
        one find their work done by another. With *wait* false a caller that finds
        another filing leaves the lines to it and returns 0 (the collectors); with
        *wait* it waits for the other and then files what is left (the web view, which
        answers from what is filed)."""
        with self._lock, engine.connect() as conn:
            if engine.dialect.name == "postgresql":
                lock = func.pg_advisory_lock if wait else func.pg_try_advisory_lock
                with conn.begin():
                    if conn.execute(select(lock(_FIGURES_LOCK_KEY))).scalar() is False:
                        return 0
                try:
                    return self._after(conn, self._catch_up(conn))
                finally:
                    try:
                        with conn.begin():
                            conn.execute(select(func.pg_advisory_unlock(_FIGURES_LOCK_KEY)))
                    except DBAPIError:
                        conn.invalidate()  # the session ends, and its lock with it
            return self._after(conn, self._catch_up(conn))

    def _after(self, conn, read: int) -> int:
        if self.protection is not None:
            self.protection.catch_up(conn)
        return read

    def _catch_up(self, conn) -> int:
        with conn.begin():
            behind = conn.execute(
                select(store_tables.c.table_id, store_tables.c.last_seq,
                       fig_progress.c.seq, fig_progress.c.resume_seq, fig_progress.c.dealer,
                       fig_progress.c.last_ended, fig_progress.c.hands)
                .select_from(store_tables.outerjoin(
                    fig_progress, fig_progress.c.table_id == store_tables.c.table_id))
                .where(store_tables.c.last_seq > func.coalesce(fig_progress.c.seq, 0))
                .order_by(store_tables.c.table_id)).all()
        read = 0
        for table_id, _last, seq, resume_seq, dealer, last_ended, hands in behind:
            read += self._table(conn, table_id, seq, resume_seq, dealer, last_ended, hands or 0)
        return read

    def _table(self, conn, table_id, seq, resume_seq, dealer, last_ended, hands: int) -> int:
        if seq is None:
            try:
                with conn.begin():
                    conn.execute(insert(fig_progress).values(table_id=table_id, seq=0, hands=0))
            except IntegrityError:
                return 0  # another caller started this table: it files these lines
            seq = 0
        key = (str(conn.engine.url), table_id)
        kept = self._followers.pop(key, None)
        if kept is not None and kept[0] == seq:
            follower, cursor = kept[1], seq
        else:
            follower = HandFollower(table_id, dealer=dealer)
            # The open hand is read again from its first line: no state to store but where it began.
            cursor = resume_seq - 1 if resume_seq is not None else seq
        progress = seq
        read = 0
        while True:
            with conn.begin():
                rows = conn.execute(
                    select(store_lines.c.seq, store_lines.c.line)
                    .where(store_lines.c.table_id == table_id, store_lines.c.seq > cursor)
                    .order_by(store_lines.c.seq).limit(self.chunk)).all()
            if not rows:
                self._followers[key] = (progress, follower)
                return read
            closed: list[HandSummary] = []
            for line_seq, line in rows:
                try:
                    closed.extend(follower.feed(line))
                except Exception as exc:  # garbage in the store must not stop the figures
                    if line_seq > progress:
                        self.skipped[table_id] = self.skipped.get(table_id, 0) + 1
                        log.warning("figures: %s seq %s is not a journal line, skipped: %s",
                                    table_id, line_seq, exc)
            cursor = rows[-1][0]
            hand_rows, irr_rows, fault_rows = [], [], []
            for hand in closed:
                last_ended = self._rows(hand, last_ended, hand_rows, irr_rows, fault_rows)
                hand_rows[-1]["number"] = hands + len(hand_rows)
            open_hand = follower.open_hand
            new_progress = max(cursor, progress)
            try:
                with conn.begin() as transaction:
                    moved = conn.execute(
                        update(fig_progress)
                        .where(fig_progress.c.table_id == table_id, fig_progress.c.seq == progress)
                        .values(seq=new_progress,
                                resume_seq=open_hand.start_seq if open_hand is not None else None,
                                dealer=follower.dealer, last_ended=last_ended,
                                hands=hands + len(hand_rows))).rowcount
                    if moved != 1:
                        transaction.rollback()
                        return read  # another caller filed these lines first
                    for table, rows_ in ((fig_hands, hand_rows), (fig_irregularities, irr_rows),
                                         (fig_reader_faults, fault_rows)):
                        if rows_:
                            conn.execute(insert(table), rows_)
            except OperationalError as exc:  # the store is busy for long: the next call goes on
                log.warning("figures: %s not filed now: %s", table_id, exc)
                return read
            read += new_progress - progress
            progress = new_progress
            hands += len(hand_rows)

    @staticmethod
    def _rows(hand: HandSummary, last_ended, hand_rows, irr_rows, fault_rows):
        started = hand.started
        pause = 0.0
        if started is not None and last_ended is not None and 0 <= started - last_ended <= BREAK_S:
            pause = started - last_ended
        irregular = [(i, v, s) for i, v, s in hand.irregularities if i not in SENSING]
        verdicts = {v for _, v, _ in irregular}
        hand_rows.append({
            "table_id": hand.table, "start_seq": hand.start_seq, "end_seq": hand.end_seq,
            "dealer": hand.dealer, "started": started,
            "hour": math.floor(started / 3600) if started is not None else None,
            "ended": hand.ended, "seconds": hand.seconds, "pause_before": pause,
            "players": hand.players, "hole_cards": hand.hole_cards, "ended_by": hand.ended_by,
            "irregularities": len(irregular), "corrections": hand.corrections,
            "wrong_corrections": hand.wrong_corrections,
            "misdeal": int("misdeal" in verdicts), "void": int("void" in verdicts),
            "unread_cards": sum(1 for i, _, _ in hand.irregularities if i == "UNREAD_CARD"),
            "reader_degraded": sum(1 for i, _, _ in hand.irregularities if i == "READER_DEGRADED"),
            "reader_faults": sum(hand.reader_faults.values()),
        })
        for irregularity, verdict, seq in irregular:
            irr_rows.append({"table_id": hand.table, "seq": seq, "start_seq": hand.start_seq,
                             "dealer": hand.dealer, "started": started,
                             "irregularity": irregularity, "verdict": verdict})
        for reader, faults in hand.reader_faults.items():
            fault_rows.append({"table_id": hand.table, "start_seq": hand.start_seq, "reader": reader,
                               "dealer": hand.dealer, "started": started, "faults": faults})
        return hand.ended if hand.ended is not None else last_ended


# ------------------------------------------------------------------ the queries

#: How the figures are rounded (docs/floor/pages.md, "Figures"): rates and means of counts to
#: this many decimals, seconds to :data:`SECONDS_DECIMALS`.
RATE_DECIMALS = 4
SECONDS_DECIMALS = 3


def _per(count, base, per=100.0):
    """*count* per *per* of *base*, rounded as a rate; ``None`` over nothing."""
    return round(count * per / base, RATE_DECIMALS) if base else None


def _seconds(value: float) -> float:
    return round(value, SECONDS_DECIMALS)


def _in_range(table, start: float, end: float):
    return and_(table.c.started >= start, table.c.started < end)


_HAND_SUMS = (
    func.count().label("hands"),
    func.sum(func.coalesce(fig_hands.c.seconds, 0.0) + fig_hands.c.pause_before).label("dealing"),
    func.sum(fig_hands.c.players).label("players"),
    func.count(fig_hands.c.players).label("with_players"),
    func.sum(fig_hands.c.seconds).label("seconds"),
    func.count(fig_hands.c.seconds).label("with_seconds"),
    func.sum(fig_hands.c.irregularities).label("irregularities"),
    func.sum(fig_hands.c.corrections).label("corrections"),
    func.sum(fig_hands.c.wrong_corrections).label("wrong_corrections"),
    func.sum(fig_hands.c.misdeal).label("misdeals"),
    func.sum(fig_hands.c.void).label("voids"),
    func.sum(fig_hands.c.unread_cards).label("unread_cards"),
    func.sum(fig_hands.c.reader_degraded).label("reader_degraded"),
    func.sum(fig_hands.c.reader_faults).label("reader_faults"),
)


def empty_figures() -> dict:
    """The figures of a group with no hands: every field the API answers, in its order."""
    return _figures(None, [])


def _figures(sums, irregular: list[tuple[str, str, int]]) -> dict:
    """The figures of one group from its hand sums and its (id, verdict, count) rows."""
    hands = sums.hands if sums is not None else 0
    get = (lambda key: (getattr(sums, key) or 0)) if sums is not None else (lambda key: 0)
    dealing = float(get("dealing"))
    by_id: dict[str, int] = {}
    by_verdict: dict[str, int] = {}
    for irregularity, verdict, count in irregular:
        by_id[irregularity] = by_id.get(irregularity, 0) + count
        by_verdict[verdict] = by_verdict.get(verdict, 0) + count
    corrections = int(get("corrections"))
    return {
        "hands": hands,
        "dealing_seconds": _seconds(dealing),
        "hands_per_hour": _per(hands, dealing, 3600.0) if dealing > 0 else None,
        "players_per_hand": _per(get("players"), sums.with_players, 1.0) if hands and sums.with_players else None,
        "mean_seconds_per_hand": _seconds(get("seconds") / sums.with_seconds) if hands and sums.with_seconds else None,
        "irregularities": int(get("irregularities")),
        "irregularities_per_100_hands": _per(int(get("irregularities")), hands),
        "irregularities_by_id": {k: {"count": v, "per_100_hands": _per(v, hands)}
                                 for k, v in sorted(by_id.items())},
        "irregularities_by_verdict": {k: {"count": v, "per_100_hands": _per(v, hands)}
                                      for k, v in sorted(by_verdict.items())},
        "misdeals": int(get("misdeals")), "misdeals_per_100_hands": _per(int(get("misdeals")), hands),
        "voids": int(get("voids")), "voids_per_100_hands": _per(int(get("voids")), hands),
        "corrections": corrections,
        "wrong_corrections": int(get("wrong_corrections")),
        "wrong_corrections_per_100_corrections": _per(int(get("wrong_corrections")), corrections),
        "unread_cards": int(get("unread_cards")),
        "reader_degraded": int(get("reader_degraded")),
        "reader_faults": int(get("reader_faults")),
    }


def table_figures(conn, table_id: str, start: float, end: float) -> dict:
    """The figures of one table for the hands it started in ``[start, end)``."""
    sums = conn.execute(select(*_HAND_SUMS).where(_in_range(fig_hands, start, end),
                                                  fig_hands.c.table_id == table_id)).one()
    irr = fig_irregularities
    irregular = conn.execute(
        select(irr.c.irregularity, irr.c.verdict, func.count())
        .where(_in_range(irr, start, end), irr.c.table_id == table_id)
        .group_by(irr.c.irregularity, irr.c.verdict)).all()
    return {"table": table_id, "from": start, "to": end, **_figures(sums, [tuple(r) for r in irregular])}


def _dealer_is(column, dealer_id):
    return column.is_(None) if dealer_id is None else column == dealer_id


def dealer_figures(conn, dealer_id: str | None, start: float, end: float) -> dict:
    """The figures of one dealer (None: hands nobody was signed in for) in ``[start, end)``."""
    sums = conn.execute(select(*_HAND_SUMS).where(_in_range(fig_hands, start, end),
                                                  _dealer_is(fig_hands.c.dealer, dealer_id))).one()
    irr = fig_irregularities
    irregular = conn.execute(
        select(irr.c.irregularity, irr.c.verdict, func.count())
        .where(_in_range(irr, start, end), _dealer_is(irr.c.dealer, dealer_id))
        .group_by(irr.c.irregularity, irr.c.verdict)).all()
    tables = conn.execute(select(fig_hands.c.table_id).distinct()
                          .where(_in_range(fig_hands, start, end),
                                 _dealer_is(fig_hands.c.dealer, dealer_id))
                          .order_by(fig_hands.c.table_id)).scalars().all()
    return {"dealer": dealer_id, "from": start, "to": end, "tables": tables,
            **_figures(sums, [tuple(r) for r in irregular])}


def room_figures(conn, start: float, end: float) -> dict:
    """Every table's and every dealer's figures, and the room's, in ``[start, end)``.

    A handful of grouped queries, whatever the number of tables and dealers."""
    irr = fig_irregularities
    result = {"from": start, "to": end}
    groups = {}
    for name, hand_col, irr_col in (("tables", fig_hands.c.table_id, irr.c.table_id),
                                    ("dealers", fig_hands.c.dealer, irr.c.dealer)):
        sums = {r[0]: r for r in conn.execute(
            select(hand_col, *_HAND_SUMS).where(_in_range(fig_hands, start, end)).group_by(hand_col))}
        irregular: dict = {}
        for key, irregularity, verdict, count in conn.execute(
                select(irr_col, irr.c.irregularity, irr.c.verdict, func.count())
                .where(_in_range(irr, start, end)).group_by(irr_col, irr.c.irregularity, irr.c.verdict)):
            irregular.setdefault(key, []).append((irregularity, verdict, count))
        key_name = "table" if name == "tables" else "dealer"
        groups[name] = [{key_name: key, **_figures(sums[key], irregular.get(key, []))}
                        for key in sorted(sums, key=lambda k: (k is None, k or ""))]
    result.update(groups)
    total = conn.execute(select(*_HAND_SUMS).where(_in_range(fig_hands, start, end))).one()
    room_irr = conn.execute(select(irr.c.irregularity, irr.c.verdict, func.count())
                            .where(_in_range(irr, start, end))
                            .group_by(irr.c.irregularity, irr.c.verdict)).all()
    result["room"] = _figures(total, [tuple(r) for r in room_irr])
    return result


def hourly(conn, start: float, end: float, *, table_id: str | None = None,
           dealer_id: str | None = None) -> list[dict]:
    """Per hour (UTC hours, every hour from the one holding *start* to the one before *end*):
    hands started, hands per hour, irregularities per 100 hands; of the room, or of one
    table or one dealer."""
    where = [_in_range(fig_hands, start, end)]
    if table_id is not None:
        where.append(fig_hands.c.table_id == table_id)
    if dealer_id is not None:
        where.append(fig_hands.c.dealer == dealer_id)
    rows = {r.hour: r for r in conn.execute(
        select(fig_hands.c.hour, func.count().label("hands"),
               func.sum(func.coalesce(fig_hands.c.seconds, 0.0) + fig_hands.c.pause_before).label("dealing"),
               func.sum(fig_hands.c.irregularities).label("irregularities"))
        .where(*where).group_by(fig_hands.c.hour))}
    out = []
    first, last = math.floor(start / 3600), math.ceil(end / 3600)
    for hour in range(first, last):
        r = rows.get(hour)
        hands = r.hands if r is not None else 0
        dealing = float(r.dealing or 0) if r is not None else 0.0
        irregular = int(r.irregularities or 0) if r is not None else 0
        out.append({"hour": hour * 3600, "hands": hands, "dealing_seconds": _seconds(dealing),
                    "hands_per_hour": _per(hands, dealing, 3600.0) if dealing > 0 else None,
                    "irregularities": irregular,
                    "irregularities_per_100_hands": _per(irregular, hands)})
    return out


def alert_clearing(conn, start: float, end: float) -> list[dict]:
    """Per supervisor who cleared alerts raised in ``[start, end)``: how many, and the
    seconds from raising to clearing (mean, median, max). Open alerts: a row with
    ``cleared_by`` None (its ``open`` count; no seconds)."""
    a = store_alerts
    rows = conn.execute(select(a.c.cleared_by, a.c.raised, a.c.cleared_at)
                        .where(a.c.raised >= start, a.c.raised < end)).all()
    by: dict[str | None, list[float]] = {}
    still_open = 0
    for who, raised, cleared_at in rows:
        if cleared_at is None:
            still_open += 1
            continue
        by.setdefault(who, []).append(max(0.0, cleared_at - raised))
    out = [{"cleared_by": who, "count": len(s), "mean_s": _seconds(statistics.fmean(s)),
            "p50_s": _seconds(statistics.median(s)), "max_s": _seconds(max(s))}
           for who, s in sorted(by.items(), key=lambda kv: kv[0] or "")]
    if still_open:
        out.append({"cleared_by": None, "count": 0, "open": still_open,
                    "mean_s": None, "p50_s": None, "max_s": None})
    return out


def sensing_faults(conn, start: float, end: float) -> list[dict]:
    """Per table with hands in ``[start, end)``: unread cards, degraded-reader notices and
    reader faults (per reader), each also per 100 hands; tables with the most faults per
    100 hands first."""
    sums = conn.execute(
        select(fig_hands.c.table_id, func.count().label("hands"),
               func.sum(fig_hands.c.unread_cards).label("unread"),
               func.sum(fig_hands.c.reader_degraded).label("degraded"),
               func.sum(fig_hands.c.reader_faults).label("faults"))
        .where(_in_range(fig_hands, start, end)).group_by(fig_hands.c.table_id)).all()
    f = fig_reader_faults
    readers: dict[str, dict[str, int]] = {}
    for table_id, reader, faults in conn.execute(
            select(f.c.table_id, f.c.reader, func.sum(f.c.faults))
            .where(_in_range(f, start, end)).group_by(f.c.table_id, f.c.reader)):
        readers.setdefault(table_id, {})[reader] = int(faults)
    out = []
    for table_id, hands, unread, degraded, faults in sums:
        unread, degraded, faults = int(unread or 0), int(degraded or 0), int(faults or 0)
        out.append({
            "table": table_id, "hands": hands,
            "unread_cards": unread, "unread_cards_per_100_hands": _per(unread, hands),
            "reader_degraded": degraded, "reader_degraded_per_100_hands": _per(degraded, hands),
            "reader_faults": faults, "reader_faults_per_100_hands": _per(faults, hands),
            "readers": {r: {"faults": n, "per_100_hands": _per(n, hands)}
                        for r, n in sorted(readers.get(table_id, {}).items())},
        })
    out.sort(key=lambda r: (-(r["unread_cards"] + r["reader_degraded"] + r["reader_faults"]) / r["hands"],
                            r["table"]))
    return out


def parse_moment(text: str) -> float:
    """Epoch seconds from *text*: a number of seconds from 0, or ISO 8601 with a UTC
    offset. :class:`ValueError` says what is wrong, worded to follow ``name=value: ``: a
    catalog message, which the web view tells a person in their language."""
    try:
        value = float(text)
    except ValueError:
        try:
            moment = _dt.datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(N_("expected epoch seconds or an ISO 8601 time such as 2026-11-24T18:00:00Z")) from None
        if moment.tzinfo is None:
            raise ValueError(N_("no UTC offset: add Z or one such as +01:00")) from None
        return moment.timestamp()
    if not math.isfinite(value) or value < 0:
        raise ValueError(N_("expected epoch seconds, a finite number from 0"))
    return value


def hand_numbers(conn, lines) -> dict[tuple, int]:
    """The number among its table's hands (``fig_hands.number``, 1 for the first: the number its
    story page names it by) of the hand holding each line of *lines* (``(table, seq)``: a hand's
    first line, or any of its lines, as an alert's): ``(table, seq)`` -> number, leaving out a
    line no filed hand holds. One statement for them all (one per :data:`NUMBERS_CHUNK`): for
    each line the last hand starting at or before it, through the hands' primary key."""
    wanted = sorted({(table, seq) for table, seq in lines
                     if isinstance(table, str) and isinstance(seq, int) and not isinstance(seq, bool)})
    # The lines as a VALUES list the driver binds itself: SQLAlchemy's values() or text() over a
    # shift's 1,000 alerts took 30 to 90 ms of CPU to bind, the driver 7 (a per-line statement:
    # 280). SQLite and PostgreSQL both take a CTE's column names; only the mark differs.
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    out = {}
    for start in range(0, len(wanted), NUMBERS_CHUNK):
        chunk = wanted[start:start + NUMBERS_CHUNK]
        rows = conn.exec_driver_sql(
            f"WITH wanted(table_id, seq) AS (VALUES {', '.join(f'({mark}, {mark})' for _ in chunk)}) "
            "SELECT w.table_id, w.seq, h.number, h.end_seq FROM (SELECT table_id, seq, "
            "(SELECT max(f.start_seq) FROM fig_hands f WHERE f.table_id = wanted.table_id AND f.start_seq <= wanted.seq) "
            "AS start FROM wanted) w JOIN fig_hands h ON h.table_id = w.table_id AND h.start_seq = w.start",
            tuple(value for line in chunk for value in line))
        for table, seq, number, end in rows:
            if number is not None and seq <= end:
                out[(table, seq)] = number
    return out
