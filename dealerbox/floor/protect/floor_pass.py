"""The protection pass: every stored hand through the checks, alerts filed, results kept.

It runs where the figures are filed (:class:`~dealerbox.floor.telling.figures.Ledger` calls
:meth:`Protection.catch_up` after its own pass, under the same PostgreSQL advisory
lock), and reads each table's new lines once, in ``seq`` order, through
:class:`~dealerbox.floor.protect.journal_hands.CardFollower` (whose hands are the
figures' hands). For each closed hand, in one transaction with the move of its
progress (so that two callers never file a hand twice):

- each scored draw (the hand's deal, a misdeal's redeal) against its deck's last
  hands at this table (:class:`~dealerbox.floor.protect.shuffle_check.ShuffleCheck`):
  a ``shuffle`` alert when its p-value under the declared shuffle is below the
  threshold; every draw also feeds its dealer's ``procedure`` block;
- the hand's dealer's control chart (an irregularity of any kind but the sensing
  notices is an error): a ``dealer_chart`` alert when it crosses h;
- the seats dealt and which held a strong starting hand, kept; when a table's first
  hand of a new window (a shift by default) comes, the window before is scored
  (``seat_luck`` alerts, Bonferroni over seats x tables x windows).

The per-deck histories, the charts and the open procedure blocks live in the store
(:mod:`~dealerbox.floor.protect.tables`), so a restarted floor goes on where it stood.
A hand of a game with no reference yet is kept with its statistic and no p-value
(logged once per game): ``dealerbox floor protect fit`` computes the references.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import re
import time
from collections import deque

from sqlalchemy import and_, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from dealerbox.floor.telling.hands import SENSING
from dealerbox.floor.protect.config import ProtectConfig
from dealerbox.floor.protect.control_chart import Cusum, DealerCharts
from dealerbox.floor.protect.hand import together_pairs
from dealerbox.floor.protect.journal_hands import CardFollower, CardHand
from dealerbox.floor.protect.seat_luck import SeatLuck, is_strong, strong_probability
from dealerbox.floor.protect.shuffle_check import ProcedureCheck, Reference, ShuffleCheck, ShuffleFinding
from dealerbox.floor.protect.tables import (protect_dealers, protect_decks, protect_fitted, protect_hands,
                                            protect_progress)
from dealerbox.floor.store.alerts import raise_alert_in
from dealerbox.floor.store.schema import lines_table, tables_table
from dealerbox.domain.cards import DECK_52

__all__ = ["Protection", "ALERT_KINDS", "load_references", "save_reference", "room_rate", "put_fitted",
           "alert_odds", "dealer_chart_design"]

log = logging.getLogger(__name__)

#: The alert kinds the pass files (each counted apart).
ALERT_KINDS = ("shuffle", "procedure", "seat_luck", "dealer_chart")
#: Lines read and filed per transaction.
CHUNK = 5000
_NAMED = frozenset(DECK_52)


def load_references(conn) -> dict:
    """The fitted references in the store: (players, hole cards) -> :class:`Reference`."""
    out = {}
    for key, value in conn.execute(select(protect_fitted.c.key, protect_fitted.c.value)
                                   .where(protect_fitted.c.key.like("reference/%"))):
        _, players, hole_cards = key.split("/")
        d = json.loads(value)
        out[(int(players), int(hole_cards))] = Reference(tuple(d["counts"]), d["source"])
    return out


def save_reference(conn, players: int, hole_cards: int, reference: Reference, model: str) -> None:
    """Keep *reference* for (players, hole cards) in the store, replacing the one there."""
    put_fitted(conn, f"reference/{players}/{hole_cards}",
         {"counts": list(reference.counts), "source": reference.source, "model": model})


def room_rate(conn) -> float | None:
    """The room's fitted rate of hands with an error, if ``floor protect fit`` stored one."""
    value = conn.execute(select(protect_fitted.c.value).where(protect_fitted.c.key == "room_rate")).scalar()
    return json.loads(value) if value is not None else None


def put_fitted(conn, key: str, value) -> None:
    """Keep *value* (JSON) under *key* in ``protect_fitted``, replacing what was there."""
    conn.execute(delete(protect_fitted).where(protect_fitted.c.key == key))
    conn.execute(insert(protect_fitted).values(key=key, value=json.dumps(value)))


def dealer_chart_design(config: ProtectConfig, rate: float | None) -> Cusum | None:
    """The dealers' CUSUM for the room's *rate* under *config* (``chart_shift``, ``chart_arl``),
    or None when the rate is unknown or too high for the shift to mean anything."""
    if rate is None or not 0 < rate * config.chart_shift < 1:
        return None
    return _designed(rate, config.chart_shift, config.chart_arl)


@functools.lru_cache(maxsize=16)
def _designed(rate: float, shift: float, arl: float) -> Cusum:
    # Designing walks h up until the in-control ARL is reached: done once per room rate.
    return Cusum.design(rate, shift=shift, target_arl=arl)

class Protection:
    """The protection pass of one floor, configured by ``[protect]`` (:class:`ProtectConfig`)."""

    def __init__(self, config: ProtectConfig = ProtectConfig(), *, chunk: int = CHUNK, card_of_uid=None,
                 clock=time.time):
        self.config = config
        self.chunk = chunk
        self.card_of_uid = card_of_uid
        self.clock = clock
        self._unreferenced: set = set()

    # -- the pass

    def catch_up(self, conn) -> int:
        """Read every table's lines stored since the last call (on a Core connection with no
        transaction open); returns how many lines were read."""
        with conn.begin():
            references = load_references(conn)
            rate = self.config.room_rate if self.config.room_rate is not None else room_rate(conn)
            behind = conn.execute(
                select(tables_table.c.table_id, protect_progress.c.seq, protect_progress.c.resume_seq,
                       protect_progress.c.dealer, protect_progress.c.window)
                .select_from(tables_table.outerjoin(
                    protect_progress, protect_progress.c.table_id == tables_table.c.table_id))
                .where(tables_table.c.last_seq > func.coalesce(protect_progress.c.seq, 0))
                .order_by(tables_table.c.table_id)).all()
        cusum = dealer_chart_design(self.config, rate)
        read = 0
        for table_id, seq, resume_seq, dealer, window in behind:
            read += self._table(conn, references, cusum, table_id, seq, resume_seq, dealer, window)
        return read

    def _table(self, conn, references, cusum, table_id, seq, resume_seq, dealer, window) -> int:
        if seq is None:
            try:
                with conn.begin():
                    conn.execute(insert(protect_progress).values(table_id=table_id, seq=0))
            except IntegrityError:
                return 0  # another caller started this table
            seq = 0
        follower = CardFollower(table_id, dealer=dealer, card_of_uid=self.card_of_uid)
        cursor = resume_seq - 1 if resume_seq is not None else seq
        progress, read = seq, 0
        while True:
            with conn.begin():
                rows = conn.execute(select(lines_table.c.seq, lines_table.c.line)
                                    .where(lines_table.c.table_id == table_id, lines_table.c.seq > cursor)
                                    .order_by(lines_table.c.seq).limit(self.chunk)).all()
            if not rows:
                return read
            closed: list[CardHand] = []
            for _line_seq, line in rows:
                try:
                    closed.extend(follower.feed(line))
                except Exception:  # noqa: BLE001: garbage in the store must not stop the checks
                    continue           # (the figures' ledger counts and logs it)
            cursor = rows[-1][0]
            new_progress = max(cursor, progress)
            open_hand = follower.hands.open_hand
            with conn.begin() as transaction:
                moved = conn.execute(
                    update(protect_progress)
                    .where(protect_progress.c.table_id == table_id, protect_progress.c.seq == progress)
                    .values(seq=new_progress, resume_seq=open_hand.start_seq if open_hand is not None else None,
                            dealer=follower.dealer)).rowcount
                if moved != 1:
                    transaction.rollback()
                    return read  # another caller filed these lines first
                window = self._file(conn, references, cusum, table_id, closed, window)
                conn.execute(update(protect_progress).where(protect_progress.c.table_id == table_id)
                             .values(window=window))
            read += new_progress - progress
            progress = new_progress

    def _file(self, conn, references, cusum, table_id, closed: list[CardHand], window):
        c = self.config
        check = ShuffleCheck(c.shuffle, c.gathering, threshold=c.threshold, memory=c.memory,
                             references=references)
        decks = {}
        for deck, pairs in conn.execute(select(protect_decks.c.deck, protect_decks.c.pairs)
                                        .where(protect_decks.c.table_id == table_id)):
            history = deque((frozenset(tuple(p) for p in h) for h in json.loads(pairs)), maxlen=c.memory)
            check._history[(table_id, deck)] = history
            decks[deck] = True
        procedure = ProcedureCheck(check, block=c.procedure_block, threshold=c.procedure_threshold)
        charts = DealerCharts(cusum) if cusum is not None else None
        dealers: dict[str, tuple[int, list]] = {}
        now = self.clock()
        for hand in closed:
            s = hand.summary
            if s.started is not None:
                w = math.floor(s.started / c.window_s)
                if window is None:
                    window = w
                elif w > window:
                    self._seat_window(conn, table_id, window, now)
                    window = w
            worst = None
            for dealt in hand.dealt_hands():
                k = check.statistic(dealt)
                decks[dealt.deck] = True
                if k is None:
                    continue
                reference = references.get((dealt.players, dealt.hole_cards))
                if reference is None:
                    if (dealt.players, dealt.hole_cards) not in self._unreferenced:
                        self._unreferenced.add((dealt.players, dealt.hole_cards))
                        log.warning("protect: no reference for %s players, %s hole cards: run "
                                    "`dealerbox floor protect fit`", dealt.players, dealt.hole_cards)
                    worst = worst or (k, None)
                    continue
                finding = ShuffleFinding("shuffle", table_id, dealt.deck, dealt.dealer, (dealt.hand_id,), k,
                                         reference.p_value(k), reference.resolution, c.threshold, check.model,
                                         reference.source)
                if worst is None or worst[1] is None or finding.p_value < worst[1]:
                    worst = (k, finding.p_value)
                if finding.alert:
                    raise_alert_in(conn, table_id, "shuffle", _shuffle_text(finding), dealt.hand_id, now)
                self._procedure(conn, procedure, dealers, finding, dealt.players, dealt.hole_cards, now)
            error = any(i not in SENSING for i, _, _ in s.irregularities)
            chart_value = 0.0
            if charts is not None and s.dealer is not None:
                steps, _ = self._dealer(conn, dealers, s.dealer)
                charts.values[s.dealer] = steps
                found = charts.feed(s.dealer, error, s.start_seq)
                chart_value = charts.paths[s.dealer][-1]
                dealers[s.dealer] = (charts.values[s.dealer], dealers[s.dealer][1])
                if found is not None:
                    raise_alert_in(conn, table_id, "dealer_chart", _chart_text(found), s.start_seq, now)
            seats, strong = self._seats(hand)
            conn.execute(insert(protect_hands).values(
                table_id=table_id, start_seq=s.start_seq, dealer=s.dealer, started=s.started, players=s.players,
                hole_cards=s.hole_cards, deck=hand.dealt_hands()[0].deck if hand.dealt_hands() else None,
                statistic=worst[0] if worst else None, p_value=worst[1] if worst else None,
                error=int(error), chart=chart_value, seats=json.dumps(seats), strong=json.dumps(strong)))
        for deck in decks:
            history = check._history.get((table_id, deck))
            if history is None:
                continue
            conn.execute(delete(protect_decks).where(protect_decks.c.table_id == table_id,
                                                     protect_decks.c.deck == deck))
            conn.execute(insert(protect_decks).values(
                table_id=table_id, deck=deck, pairs=json.dumps([sorted(map(list, h)) for h in history])))
        for dealer, (chart, block) in dealers.items():
            conn.execute(delete(protect_dealers).where(protect_dealers.c.dealer == dealer))
            conn.execute(insert(protect_dealers).values(dealer=dealer, chart=chart, block=json.dumps(block)))
        return window

    @staticmethod
    def _dealer(conn, dealers: dict, dealer: str) -> tuple[int, list]:
        if dealer not in dealers:
            row = conn.execute(select(protect_dealers.c.chart, protect_dealers.c.block)
                               .where(protect_dealers.c.dealer == dealer)).first()
            dealers[dealer] = (int(row[0]), json.loads(row[1])) if row else (0, [])
        return dealers[dealer]

    def _procedure(self, conn, procedure: ProcedureCheck, dealers, finding: ShuffleFinding, players, hole_cards,
                   now) -> None:
        key = finding.dealer if finding.dealer is not None else ""
        chart, block = self._dealer(conn, dealers, key)
        block.append([finding.statistic, players, hole_cards, finding.hand_ids[0], finding.deck])
        if len(block) < procedure.block:
            return
        dealers[key] = (chart, [])
        if any((p, h) not in procedure.check.references for _, p, h, _, _ in block):
            return
        findings = [ShuffleFinding("shuffle", finding.table, deck, finding.dealer, (i,), k, 1.0, 0.0,
                                   procedure.threshold, finding.model, "") for k, _, _, i, deck in block]
        result = procedure.score(findings, [(p, h) for _, p, h, _, _ in block])
        if result.alert:
            raise_alert_in(conn, finding.table, "procedure", _procedure_text(result), result.hand_ids[-1], now)

    def _seats(self, hand: CardHand) -> tuple[list, list]:
        """The seats dealt a full, named starting hand, and those of them dealt a strong one
        (in the hand's first scored draw: the cards the players kept)."""
        dealt = hand.dealt_hands()
        if not dealt:
            return [], []
        d = dealt[-1]   # after a misdeal, the redeal is what the players played
        seats, strong = [], []
        for seat, cards in zip(d.seat_numbers(), d.holes()):
            if len(cards) == d.hole_cards and all(x in _NAMED for x in cards):
                seats.append(seat)
                if is_strong(cards, self.config.holdem_strong, self.config.omaha_pairs):
                    strong.append(seat)
        return seats, strong

    def _seat_window(self, conn, table_id: str, window: int, now: float) -> None:
        c = self.config
        luck = SeatLuck(alpha=c.seat_alpha, seats=c.seats, tables=c.tables, windows=c.windows,
                        classes=c.holdem_strong, pair_ranks=c.omaha_pairs)
        start, end = window * c.window_s, (window + 1) * c.window_s
        h = protect_hands.c
        counts: dict[tuple[int, int], tuple[int, list]] = {}
        for start_seq, hole_cards, seats, strong in conn.execute(
                select(h.start_seq, h.hole_cards, h.seats, h.strong)
                .where(h.table_id == table_id, and_(h.started >= start, h.started < end))
                .order_by(h.start_seq)):
            strong = set(json.loads(strong))
            for seat in json.loads(seats):
                n, ids = counts.get((hole_cards, seat), (0, []))
                if seat in strong:
                    ids.append(start_seq)
                counts[(hole_cards, seat)] = (n + 1, ids)
        label = f"window {_utc(start)} to {_utc(end)}"
        for (hole_cards, seat), (n, ids) in sorted(counts.items()):
            finding = luck.score(table_id, seat, label, n, tuple(ids), strong_probability(hole_cards, c.holdem_strong, c.omaha_pairs))
            if finding.alert:
                raise_alert_in(conn, table_id, "seat_luck", _seat_text(finding), ids[0], now)


#: What the alerts' texts below say of their odds: "p = 3e-06", "resolution 1e-05".
_P_OF_TEXT = re.compile(r"\bp = ([0-9.]+(?:e[+-]?[0-9]+)?)")
_RESOLUTION_OF_TEXT = re.compile(r"\bresolution ([0-9.]+(?:e[+-]?[0-9]+)?)")


def alert_odds(text: str) -> tuple[float | None, float | None]:
    """The p-value a protection alert's *text* states, and its reference's resolution (the
    smallest p-value it can give) where the text states one; None for what it does not say.
    The texts are written by the functions below: this reads what they write."""
    p, resolution = _P_OF_TEXT.search(text or ""), _RESOLUTION_OF_TEXT.search(text or "")
    return (float(p.group(1)) if p else None, float(resolution.group(1)) if resolution else None)


def _utc(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime(seconds))


def _shuffle_text(f: ShuffleFinding) -> str:
    return (f"shuffle: deck {f.deck}, hand at seq {f.hand_ids[0]} (dealer {f.dealer or 'none'}): "
            f"{f.statistic} pairs kept from the deck's last hands; p = {f.p_value:.2g} under the declared "
            f"shuffle ({f.model}), resolution {f.resolution:.1g}, threshold {f.threshold:g}")


def _procedure_text(f: ShuffleFinding) -> str:
    return (f"procedure: dealer {f.dealer or 'none'}, {len(f.hand_ids)} hands to seq {f.hand_ids[-1]}: "
            f"{f.statistic} pairs kept in all; p = {f.p_value:.2g} under the declared shuffle ({f.model}): "
            f"shuffling weaker than declared; threshold {f.threshold:g}")


def _seat_text(f) -> str:
    return (f"seat luck: seat {f.seat}, {f.window}: {f.strong} strong starting hands of {f.hands} "
            f"(expected {f.expected:.1f}); p = {f.p_value:.2g}, {f.correction} over {f.family} tests "
            f"(seats x tables x windows): {f.corrected:.2g} < {f.alpha:g}; strong hands at seq "
            + ", ".join(str(i) for i in f.strong_hand_ids))


def _chart_text(f) -> str:
    return (f"dealer chart: dealer {f.dealer} out of control at the hand of seq {f.hand_id}: CUSUM {f.value:.2f} "
            f">= h {f.h:.2f} (k {f.k:.3f}; room rate {f.p0:g}, tuned for {f.shift:g}x; in-control ARL "
            f"{f.in_control_arl:.0f} hands)")
