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
- seat luck as it happens: each physical seat (recorded in ``new_hand``, or recovered
  from the deal's rotation: :class:`~dealerbox.floor.protect.seats.SeatTracker`) has a
  CUSUM on its strong starting hands (:class:`~dealerbox.floor.protect.seat_luck.SeatCharts`,
  :func:`seat_designs`): a ``seat_luck`` alert in the hand it crosses h, mid-shift, with the
  strong hands since the chart last stood at 0; the seats dealt and which held a strong
  hand are kept per hand for the page.

The per-deck histories, the charts and the open procedure blocks live in the store
(:mod:`~dealerbox.floor.protect.tables`), so a restarted floor goes on where it stood.

Every alert is filed with its evidence (:func:`file_alert`, :mod:`~dealerbox.floor.protect.evidence`):
the kept pairs and both hands, the strong hands, the error hands.

**References.** A hand is scored only against a reference fitted from the declared model
(its fingerprint, :mod:`~dealerbox.floor.protect.fitted`). A hand of a game whose reference
is missing or stale is kept with its statistic, no p-value and why (``unscored``). With
``[protect] auto_fit`` the pass has the missing and stale games fitted in the background
(:class:`~dealerbox.floor.protect.autofit.BackgroundFit`) and stores each as it is done; a
reference being fitted is a status of the Surveillance page, not an alert. A
``protect_reference`` alert, for surveillance alone (the floor map leaves the kind out:
:data:`~dealerbox.floor.store.alerts.SURVEILLANCE_KINDS`), says once per game and model that
its hands go unchecked when nobody will fit it (``auto_fit`` off), when its fit failed, or
when it is still not stored ``reference_wait_minutes`` after the first hand left unchecked.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import re
import socket
import time
from collections import deque

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from dealerbox.floor import alert_texts as T
from dealerbox.floor.telling.hands import SENSING
from dealerbox.floor.protect.autofit import BackgroundFit
from dealerbox.floor.protect.budget import alarm_budget
from dealerbox.floor.protect.config import ProtectConfig, game_words
from dealerbox.floor.protect.control_chart import Cusum, OwnBaselineCharts, RoomPrior
from dealerbox.floor.protect.evidence import hand_record, shuffle_evidence
from dealerbox.floor.protect.fitted import (CURRENT, MISSING, STALE, get_fitted, load_references, put_fitted,
                                            reference_status, room_rate, save_reference)
from dealerbox.floor.protect.journal_hands import CardFollower, CardHand
from dealerbox.floor.protect.seat_luck import Room, SeatCharts, is_strong, seat_chart, strong_probability
from dealerbox.floor.protect.seats import SeatKey, SeatTracker
from dealerbox.floor.protect.shuffle_check import ProcedureCheck, ShuffleCheck, ShuffleFinding
from dealerbox.floor.protect.tables import (protect_dealers, protect_decks, protect_evidence, protect_fitted,
                                            protect_hands, protect_progress)
from dealerbox.floor.store.alerts import REFERENCE_KIND, clear_alerts_in, raise_alert_in
from dealerbox.floor.store.schema import lines_table, tables_table
from dealerbox.domain.cards import DECK_52

__all__ = ["Protection", "ALERT_KINDS", "REFERENCE_KIND", "PAGE_KINDS", "load_references", "save_reference",
           "room_rate", "put_fitted", "alert_odds", "dealer_chart_design", "file_alert", "alert_evidence",
           "FITTING_KEY", "FAILED_KEY", "room_budget", "seat_designs", "dealer_charts"]

log = logging.getLogger(__name__)

#: The alert kinds the pass files on what it saw in the hands (each counted apart).
ALERT_KINDS = ("shuffle", "procedure", "seat_luck", "dealer_chart")
#: Who the audit trail names for the ``protect_reference`` alerts the pass clears itself.
PASS_NAME = "protection pass"

#: Every kind the Surveillance page lists: the kinds above, and REFERENCE_KIND (a game's hands
#: not checked for a shuffle: about the floor's own setup, not the hands, so counted apart).
PAGE_KINDS = ALERT_KINDS + (REFERENCE_KIND,)
#: ``protect_fitted`` key: the games being fitted in the background, by whom and since when.
FITTING_KEY = "fitting"
#: ``protect_fitted`` key: the games whose background fit failed ("players/hole cards" -> why).
FAILED_KEY = "fit_failed"
#: Seconds a collector's claim on the background fit holds others off (fitting every game
#: takes well under a minute).
FIT_CLAIM_S = 600.0
#: Lines read and filed per transaction.
CHUNK = 5000
#: The hands a dealer chart alert's evidence looks back over at most.
CHART_LOOKBACK = 20_000
_NAMED = frozenset(DECK_52)


def file_alert(conn, table_id: str, kind: str, text: str, seq: int | None, now: float, evidence: dict) -> int:
    """Raise a protection alert (:func:`~dealerbox.floor.store.alerts.raise_alert_in`, folded into
    the table's open alert of the kind) and keep *evidence* (JSON) for this raise; the alert's id."""
    alert_id = raise_alert_in(conn, table_id, kind, text, seq, now)
    conn.execute(insert(protect_evidence).values(alert_id=alert_id, table_id=table_id, kind=kind, seq=seq,
                                                 raised=now, evidence=json.dumps(evidence)))
    return alert_id


def alert_evidence(conn, alert_ids, *, most: int = 20) -> dict:
    """The evidence of each alert of *alert_ids*: id -> its raises' evidence, newest first (at most
    *most* each): ``seq``, ``raised`` and ``evidence`` (the dict the pass filed)."""
    out: dict[int, list] = {}
    ids = list(alert_ids)
    for start in range(0, len(ids), 500):
        e = protect_evidence.c
        for alert_id, seq, raised, evidence in conn.execute(
                select(e.alert_id, e.seq, e.raised, e.evidence).where(e.alert_id.in_(ids[start:start + 500]))
                .order_by(e.alert_id, e.id.desc())):
            rows = out.setdefault(alert_id, [])
            if len(rows) < most:
                try:
                    rows.append({"seq": seq, "raised": raised, "evidence": json.loads(evidence)})
                except ValueError:
                    continue
    return out


def dealer_chart_design(config: ProtectConfig, rate: float | None) -> Cusum | None:
    """The dealers' CUSUM for the room's *rate* under *config* (``chart_shift``, ``chart_arl``),
    or None when the rate is unknown or too high for the shift to mean anything."""
    if rate is None or not 0 < rate * config.chart_shift < 1:
        return None
    return _designed(rate, config.chart_shift, config.chart_arl)


def dealer_charts(conn, config: ProtectConfig, rate: float | None) -> OwnBaselineCharts | None:
    """The dealers' charts, each in control at a baseline of the dealer's own shrunk toward the
    room's *rate* (:class:`~dealerbox.floor.protect.control_chart.OwnBaselineCharts`), as the
    store keeps them; the room's spread of rates fitted from the dealers with enough hands, else
    ``room_spread`` around *rate*. None when the rate is unknown or too high for the shift."""
    if dealer_chart_design(config, rate) is None:
        return None
    rows = {}
    for dealer, own in conn.execute(select(protect_dealers.c.dealer, protect_dealers.c.own)
                                    .where(protect_dealers.c.own.is_not(None))):
        try:
            rows[dealer] = [int(x) for x in json.loads(own)][:6]
        except (ValueError, TypeError):
            continue
    spread = min(config.room_spread, math.sqrt(rate * (1 - rate)) / 2)
    prior = RoomPrior.fit([(r[1], r[2]) for r in rows.values() if len(r) == 6], default=RoomPrior.of(rate, spread))
    return OwnBaselineCharts(prior, shift=config.chart_shift, target_arl=config.chart_arl,
                             dealers={d: r for d, r in rows.items() if len(r) == 6})


def room_budget(conn, config: ProtectConfig) -> dict:
    """The alarm budget of the configured room (:func:`~dealerbox.floor.protect.budget.alarm_budget`),
    the dealers' chart at its designed in-control run length where the room's rate is known, the
    seats' at theirs (the shorter of the two games')."""
    cusum = dealer_chart_design(config, config.room_rate if config.room_rate is not None else room_rate(conn))
    return alarm_budget(config, _in_control_arl(cusum) if cusum is not None else None,
                        seat_arl=min(_in_control_arl(chart) for chart in seat_designs(config).values()))


def seat_designs(config: ProtectConfig) -> dict:
    """The seats' CUSUM per game (hole cards -> :class:`Cusum`,
    :func:`~dealerbox.floor.protect.seat_luck.seat_chart`): in control at a strong hand's exact
    chance, tuned for a seat fed one once in ``seat_feed_every`` hands, h set so that the
    configured room's seats together raise ``seat_alarms_per_year`` false alarms a year."""
    return {hole_cards: _seat_design(float(strong_probability(hole_cards, config.holdem_strong, config.omaha_pairs)),
                                     config.seat_feed_every, config.seat_alarms_per_year, config.tables, config.seats,
                                     config.hands_per_hour, config.hours_per_week)
            for hole_cards in (2, 4)}


@functools.lru_cache(maxsize=16)
def _seat_design(p0: float, feed_every: float, alarms: float, tables: int, seats: int, hands_per_hour: float,
                 hours_per_week: float) -> Cusum:
    # h is found by bisection on the exact run length: once per room and game.
    return seat_chart(p0, feed_every=feed_every, alarms_per_year=alarms,
                      room=Room(tables, seats, hands_per_hour, hours_per_week * 365 / 7))


@functools.lru_cache(maxsize=16)
def _in_control_arl(cusum: Cusum) -> float:
    # The exact ARL is a Markov chain solved once per design.
    return cusum.arl(cusum.p0)


@functools.lru_cache(maxsize=16)
def _designed(rate: float, shift: float, arl: float) -> Cusum:
    # Designing walks h up until the in-control ARL is reached: done once per room rate.
    return Cusum.design(rate, shift=shift, target_arl=arl)

class Protection:
    """The protection pass of one floor, configured by ``[protect]`` (:class:`ProtectConfig`).

    *fitter*: who fits missing or stale references in the background (the collector's
    :class:`~dealerbox.floor.protect.autofit.BackgroundFit` when ``auto_fit`` is on; None: nobody,
    the games without a current reference wait for ``floor protect fit``)."""

    def __init__(self, config: ProtectConfig = ProtectConfig(), *, chunk: int = CHUNK, card_of_uid=None,
                 clock=time.time, fitter: BackgroundFit | None = None):
        self.config = config
        self.chunk = chunk
        self.card_of_uid = card_of_uid
        self.clock = clock
        self.fitter = fitter
        #: Who this pass is, in a claim on the background fit (several collectors share a store).
        self.name = f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self._status: dict = {}
        self._told: dict = {}
        self._failed: dict = {}

    def close(self) -> None:
        """Stop the background fit, if any, and wait for the game under way (the collector's close)."""
        if self.fitter is not None:
            self.fitter.close()

    # -- the references

    def _references(self, conn) -> dict:
        """Store the fits finished in the background, ask for the games still missing or stale,
        and return the references that judge hands now (in the caller's transaction)."""
        if self.fitter is not None:
            for (players, hole_cards), fingerprint, reference in self.fitter.take():
                if fingerprint == self.config.fingerprint(players, hole_cards):
                    save_reference(conn, players, hole_cards, reference, _model(self.config),
                                   fingerprint=fingerprint)
                    log.info("protect: the reference for %s is fitted and stored",
                             game_words(players, hole_cards))
        references, self._status = reference_status(conn, self.config)
        if self.fitter is not None:
            wanted = [g for g in self.config.games() if self._status[g][0] != "current"]
            shown = get_fitted(conn, FITTING_KEY) or {}
            # Several collectors share a store: one fits, the others leave it to the one whose
            # claim is fresh (a claim older than FIT_CLAIM_S is of a collector that stopped).
            claimed = shown.get("by") not in (None, self.name) and self.clock() - shown.get("since", 0) < FIT_CLAIM_S
            if wanted and not claimed:
                self.fitter.ask(wanted)
            fitting = self.fitter.fitting
            if fitting:
                value = {"games": [list(g) for g in fitting], "by": self.name,
                         "since": shown.get("since") if shown.get("by") == self.name else self.clock()}
                if value != shown:
                    put_fitted(conn, FITTING_KEY, value)
            elif shown.get("by") == self.name:
                put_fitted(conn, FITTING_KEY, None)
        self._keep_failed(conn)
        self._told = {}
        for key, value in conn.execute(select(protect_fitted.c.key, protect_fitted.c.value)
                                       .where(protect_fitted.c.key.like("unscored/%"))):
            _, players, hole_cards = key.split("/")
            self._told[(int(players), int(hole_cards))] = _unchecked_record(json.loads(value))
        now = self.clock()
        for game, record in sorted(self._told.items()):
            # A bound passes, or a fit fails, with no new hand of the game: alerted now all the same.
            if (self._status.get(game, (MISSING, None))[0] != CURRENT
                    and record["fingerprint"] == self.config.fingerprint(*game)):
                self._reference_alert(conn, game, record, now)
        self._clear_stored(conn, now)
        return references

    def _clear_stored(self, conn, now: float) -> None:
        """Clear the ``protect_reference`` alert of each game whose reference is now stored, as
        :data:`PASS_NAME`, the note saying which reference: its cause is gone, and nobody has to
        clear it by hand. An alert another game of the same table still keeps open waits for it
        (a table's alerts of one kind are one alert)."""
        waiting = {r.get("table") for g, r in self._told.items()
                   if r.get("alerted") is not None and self._status.get(g, (MISSING, None))[0] != CURRENT}
        for game, record in sorted(self._told.items()):
            if (record.get("alerted") is None or record.get("cleared") is not None
                    or self._status.get(game, (MISSING, None))[0] != CURRENT):
                continue
            table = record.get("table")
            if table in waiting:
                continue
            note = (f"the reference for {game_words(*game)} fitted from the declared model is stored; "
                    "its hands are checked from now on")
            cleared = clear_alerts_in(conn, table, REFERENCE_KIND, PASS_NAME, note, now)
            record["cleared"] = now
            put_fitted(conn, f"unscored/{game[0]}/{game[1]}", record)
            if cleared:
                log.info("protect: cleared alert %s of table %s: %s", ", ".join(map(str, cleared)), table, note)

    def _keep_failed(self, conn) -> None:
        """The games whose background fit failed (this collector's, and those the store keeps of
        others sharing it) while they have no current reference: kept where the Surveillance
        page reads them, and in ``_failed`` for :meth:`_reference_alert`."""
        kept = get_fitted(conn, FAILED_KEY) or {}
        own = self.fitter.failed if self.fitter is not None else {}
        failed = {key: why for key, why in {**kept, **{f"{p}/{h}": why for (p, h), why in own.items()}}.items()
                  if self._status.get(tuple(int(x) for x in key.split("/")), (MISSING, None))[0] != CURRENT}
        if failed != kept:
            put_fitted(conn, FAILED_KEY, failed or None)
        self._failed = failed

    def _unscored(self, conn, table_id: str, game: tuple, seq, now: float) -> str:
        """Why *game* is not scored (``missing`` or ``stale``). The first time under this model, a
        record of it (kept in the store: once per game and model, not per hand): since when, the
        first hand left unchecked; the Surveillance page's status, and an alert for surveillance
        when :meth:`_reference_alert` finds one due."""
        reason, found = self._status.get(game, (MISSING, None))
        reason = STALE if reason == STALE else MISSING
        expected = self.config.fingerprint(*game)
        record = self._told.get(game)
        if record is None or record["fingerprint"] != expected:
            record = {"fingerprint": expected, "since": now, "table": table_id, "seq": seq, "reason": reason,
                      "found": found, "alerted": None}
            self._told[game] = record
            put_fitted(conn, f"unscored/{game[0]}/{game[1]}", record)
            log.info("protect: hands of %s are not checked for a shuffle until its reference is stored (%s)",
                     game_words(*game), "no reference" if reason == MISSING else "a stale reference")
            self._reference_alert(conn, game, record, now)
        return reason

    def _reference_alert(self, conn, game: tuple, record: dict, now: float) -> None:
        """The ``protect_reference`` alert of *game*'s unchecked hands, once, when one is due: nobody
        fits the reference (``auto_fit`` off), its fit failed, or it is still not stored
        ``reference_wait_minutes`` after the first hand left unchecked. Until then the reference
        being fitted is a status of the Surveillance page, not an alert."""
        if record.get("alerted") is not None:
            return
        waited = now - float(record.get("since") or now)
        failed = self._failed.get(f"{game[0]}/{game[1]}")
        bound = self.config.reference_wait_minutes
        # Said in plain words: the alert is surveillance's, who act through the floor's IT; the
        # setting and the command IT uses are in docs/floor/surveillance.md, "References".
        if self.fitter is None:
            due, next_step = "nobody", "this floor does not fit references by itself: ask the floor's IT to fit it"
        elif failed is not None:
            due, next_step = "failed", f"fitting it in the background failed ({failed}): ask the floor's IT to fit it"
        elif waited >= 60.0 * bound:
            due, next_step = "waited", (f"still not stored {waited / 60:.1f} minutes after the first hand left "
                                        f"unchecked (the floor waits {bound:g} minutes): ask the floor's IT why")
        else:
            return
        reason = record.get("reason", MISSING)
        words = game_words(*game)
        text = T.REFERENCE.write(game=words, why="no reference for the declared model" if reason == MISSING
                                 else "the reference was fitted from another model", next=next_step)
        stored = get_fitted(conn, f"reference/{game[0]}/{game[1]}") if reason == STALE else None
        file_alert(conn, record.get("table"), REFERENCE_KIND, text, record.get("seq"), now,
                   {"game": list(game), "reason": reason, "expected": record["fingerprint"],
                    "found": record.get("found"), "hand": record.get("seq"), "since": record.get("since"),
                    "fitting": self.fitter is not None and game in self.fitter.fitting, "failed": failed,
                    "next": next_step, "due": due, "waited_minutes": round(waited / 60, 1), "wait_minutes": bound,
                    "declared_model": _model(self.config),
                    "found_model": (stored or {}).get("model")})
        record["alerted"] = now
        put_fitted(conn, f"unscored/{game[0]}/{game[1]}", record)
        log.warning("protect: %s", text)

    # -- the pass

    def catch_up(self, conn) -> int:
        """Read every table's lines stored since the last call (on a Core connection with no
        transaction open); returns how many lines were read."""
        with conn.begin():
            references = self._references(conn)
            rate = self.config.room_rate if self.config.room_rate is not None else room_rate(conn)
            behind = conn.execute(
                select(tables_table.c.table_id, protect_progress.c.seq, protect_progress.c.resume_seq,
                       protect_progress.c.dealer)
                .select_from(tables_table.outerjoin(
                    protect_progress, protect_progress.c.table_id == tables_table.c.table_id))
                .where(tables_table.c.last_seq > func.coalesce(protect_progress.c.seq, 0))
                .order_by(tables_table.c.table_id)).all()
            charts = dealer_charts(conn, self.config, rate)
        read = 0
        for table_id, seq, resume_seq, dealer in behind:
            read += self._table(conn, references, charts, table_id, seq, resume_seq, dealer)
        return read

    def _table(self, conn, references, charts, table_id, seq, resume_seq, dealer) -> int:
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
                self._file(conn, references, charts, table_id, closed)
            read += new_progress - progress
            progress = new_progress

    def _decks(self, conn, check: ShuffleCheck, table_id: str) -> dict:
        """The table's decks' last hands as the store keeps them, into *check*; returns the
        decks' hand records (:func:`~dealerbox.floor.protect.evidence.hand_record`) by deck."""
        records = {}
        for deck, pairs, hands in conn.execute(select(protect_decks.c.deck, protect_decks.c.pairs,
                                                      protect_decks.c.hands)
                                               .where(protect_decks.c.table_id == table_id)):
            key = (table_id, deck)
            check._history[key] = deque((frozenset(tuple(p) for p in h) for h in json.loads(pairs)),
                                        maxlen=check.memory)
            kept = json.loads(hands) if hands else []
            records[deck] = deque(kept, maxlen=check.memory)
            if kept and kept[-1].get("ending") is not None:
                check._endings[key] = kept[-1]["ending"]
        return records

    def _file(self, conn, references, charts: OwnBaselineCharts | None, table_id, closed: list[CardHand]) -> None:
        c = self.config
        check = ShuffleCheck(c.shuffle, c.gathering, threshold=c.threshold, memory=c.memory,
                             references=references)
        records = self._decks(conn, check, table_id)
        tracker, seat_charts = self._seat_state(conn, table_id)
        touched = set()
        procedure = ProcedureCheck(check, block=c.procedure_block, threshold=c.procedure_threshold)
        dealers: dict[str, tuple[int, list]] = {}
        now = self.clock()
        for hand in closed:
            s = hand.summary
            worst, unscored = None, None
            for dealt in hand.dealt_hands():
                key = (table_id, dealt.deck)
                history = list(check._history.get(key, ()))
                earlier = list(records.get(dealt.deck, ()))
                k, ending, ending_before = check.scored(dealt)
                records.setdefault(dealt.deck, deque(maxlen=c.memory)).append(
                    {**hand_record(dealt), "ending": ending})
                touched.add(dealt.deck)
                if k is None:
                    continue
                game = (dealt.players, dealt.hole_cards)
                reference = references.get(game)
                if reference is None:
                    unscored = unscored or self._unscored(conn, table_id, game, dealt.hand_id, now)
                    worst = worst or (k, None)
                    continue
                finding = ShuffleFinding("shuffle", table_id, dealt.deck, dealt.dealer, (dealt.hand_id,), k,
                                         reference.p_value(k), reference.resolution, c.threshold, check.model,
                                         reference.source)
                if worst is None or worst[1] is None or finding.p_value < worst[1]:
                    worst = (k, finding.p_value)
                if finding.alert:
                    file_alert(conn, table_id, "shuffle", _shuffle_text(finding), dealt.hand_id, now,
                               {**shuffle_evidence(dealt, history, earlier), "statistic": k,
                                "p_value": finding.p_value})
                self._procedure(conn, procedure, dealers, finding, dealt.players, dealt.hole_cards,
                                ending, ending_before, now)
            error = any(i not in SENSING for i, _, _ in s.irregularities)
            chart_value = 0.0
            if charts is not None and s.dealer is not None:
                self._dealer(conn, dealers, s.dealer)
                found = charts.feed(s.dealer, error, s.start_seq)
                # At an alarm the chart starts again at 0: the hand keeps the value that crossed h.
                chart_value = found.value if found is not None else \
                    charts.dealers[s.dealer][0] / charts.design(s.dealer).c
                dealers[s.dealer] = (charts.dealers[s.dealer][0], dealers[s.dealer][1])
                if found is not None:
                    file_alert(conn, table_id, "dealer_chart", _chart_text(found), s.start_seq, now,
                               {"dealer": s.dealer, "hand": s.start_seq, "value": found.value, "h": found.h,
                                "error_hands": self._error_hands(conn, s.dealer, found.h, table_id, s.start_seq,
                                                                 error)})
            seats, strong = self._seats(hand)
            self._seat_luck(conn, tracker, seat_charts, table_id, hand, now)
            conn.execute(insert(protect_hands).values(
                table_id=table_id, start_seq=s.start_seq, dealer=s.dealer, started=s.started, players=s.players,
                hole_cards=s.hole_cards, deck=hand.dealt_hands()[0].deck if hand.dealt_hands() else None,
                statistic=worst[0] if worst else None, p_value=worst[1] if worst else None,
                error=int(error), chart=chart_value, seats=json.dumps(seats), strong=json.dumps(strong),
                unscored=unscored))
        for deck in touched:
            history = check._history.get((table_id, deck))
            if history is None:
                continue
            conn.execute(delete(protect_decks).where(protect_decks.c.table_id == table_id,
                                                     protect_decks.c.deck == deck))
            conn.execute(insert(protect_decks).values(
                table_id=table_id, deck=deck, pairs=json.dumps([sorted(map(list, h)) for h in history]),
                hands=json.dumps(list(records.get(deck, ())))))
        for dealer, (chart, block) in dealers.items():
            own = charts.dealers.get(dealer) if charts is not None else None
            conn.execute(delete(protect_dealers).where(protect_dealers.c.dealer == dealer))
            conn.execute(insert(protect_dealers).values(dealer=dealer, chart=chart, block=json.dumps(block),
                                                        own=json.dumps(own) if own is not None else None))
        conn.execute(update(protect_progress).where(protect_progress.c.table_id == table_id).values(
            seats=json.dumps({"run": tracker.runs.get(table_id),
                              "charts": [[hole_cards, key.run, key.seat, *row]
                                         for (_t, hole_cards, key), row in sorted(seat_charts.state.items())]})))

    def _seat_state(self, conn, table_id: str) -> tuple[SeatTracker, SeatCharts]:
        """The table's seats as the store keeps them: the run of recovered seats, each seat's chart."""
        value = conn.execute(select(protect_progress.c.seats).where(protect_progress.c.table_id == table_id)).scalar()
        kept = json.loads(value) if value else {}
        tracker = SeatTracker({table_id: kept["run"]} if kept.get("run") is not None else {})
        charts = SeatCharts(seat_designs(self.config), {
            (table_id, hole_cards, SeatKey(run, seat)): [steps, hands, list(ids)]
            for hole_cards, run, seat, steps, hands, ids in kept.get("charts", ())})
        return tracker, charts

    def _seat_luck(self, conn, tracker: SeatTracker, charts: SeatCharts, table_id: str, hand: CardHand,
                   now: float) -> None:
        """One hand through its seats' charts (the redeal after a misdeal: what the players kept);
        a ``seat_luck`` alert for each seat whose chart crossed h."""
        dealt = hand.dealt_hands()
        if not dealt:
            return
        d = dealt[-1]
        keys = tracker.keys(d, hand.summary.started)
        strong = [is_strong(cards, self.config.holdem_strong, self.config.omaha_pairs)
                  if len(cards) == d.hole_cards and all(x in _NAMED for x in cards) else None
                  for cards in d.holes()]
        for alarm in charts.hand(table_id, d.hole_cards, hand.summary.start_seq, keys, strong):
            file_alert(conn, table_id, "seat_luck", _seat_text(alarm, self.config.seat_feed_every), alarm.hand_id, now,
                       {"seat": str(alarm.seat), "seat_number": alarm.seat.seat, "recorded": alarm.seat.recorded,
                        "game": list((d.players, d.hole_cards)), "hand": alarm.hand_id, "hands": alarm.hands,
                        "expected": alarm.expected, "value": alarm.value, "h": alarm.h,
                        "strong_hands": list(alarm.strong_hand_ids)})

    @staticmethod
    def _error_hands(conn, dealer: str, h_limit: float, table_id: str, seq: int, error: bool) -> list:
        """The dealer's hands with an error since the chart last stood at 0 or last alarmed, oldest
        first, this one (*table_id*, *seq*, not yet stored) last: what a chart alert lists."""
        h = protect_hands.c
        earlier = []
        for t, start_seq, had_error, value in conn.execute(
                select(h.table_id, h.start_seq, h.error, h.chart).where(h.dealer == dealer)
                .order_by(h.started.desc(), h.start_seq.desc()).limit(CHART_LOOKBACK)):
            if value <= 0 or value >= h_limit:
                break   # the chart stood at 0 after this hand, or alarmed and started again
            if had_error:
                earlier.append([t, start_seq])
        return earlier[::-1] + ([[table_id, seq]] if error else [])

    @staticmethod
    def _dealer(conn, dealers: dict, dealer: str) -> tuple[int, list]:
        if dealer not in dealers:
            row = conn.execute(select(protect_dealers.c.chart, protect_dealers.c.block)
                               .where(protect_dealers.c.dealer == dealer)).first()
            dealers[dealer] = (int(row[0]), json.loads(row[1])) if row else (0, [])
        return dealers[dealer]

    def _procedure(self, conn, procedure: ProcedureCheck, dealers, finding: ShuffleFinding, players, hole_cards,
                   ending, ending_before, now) -> None:
        key = finding.dealer if finding.dealer is not None else ""
        chart, block = self._dealer(conn, dealers, key)
        # [kept pairs, players, hole cards, seq, deck, table, ending, ending before]; blocks kept
        # before the endings were recorded hold the first five.
        block.append([finding.statistic, players, hole_cards, finding.hand_ids[0], finding.deck, finding.table,
                      ending, ending_before])
        if len(block) < procedure.block:
            return
        dealers[key] = (chart, [])
        if any((row[1], row[2]) not in procedure.check.references for row in block):
            return
        findings = [ShuffleFinding("shuffle", finding.table, row[4], finding.dealer, (row[3],), row[0], 1.0, 0.0,
                                   procedure.threshold, finding.model, "") for row in block]
        configs = [(row[1], row[2], row[6], row[7]) if len(row) > 7 else (row[1], row[2]) for row in block]
        result = procedure.score(findings, configs)
        if result.alert:
            file_alert(conn, finding.table, "procedure", _procedure_text(result), result.hand_ids[-1], now,
                       {"dealer": finding.dealer, "statistic": result.statistic, "p_value": result.p_value,
                        "hands": [[row[5] if len(row) > 5 else finding.table, row[3]] for row in block]})

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


def _unchecked_record(value) -> dict:
    """A game's record of unchecked hands as the store keeps it (:meth:`Protection._unscored`);
    one kept as the bare fingerprint (before the records had a time) was alerted then."""
    if isinstance(value, dict) and isinstance(value.get("fingerprint"), str):
        return value
    return {"fingerprint": value if isinstance(value, str) else "", "since": None, "alerted": 0.0}


def _model(config: ProtectConfig) -> str:
    """The declared model in words, as a reference's ``model`` names it."""
    return ShuffleCheck(config.shuffle, config.gathering).model


#: What the alerts' texts below say of their odds: "p = 3e-06", "resolution 1e-05".
_P_OF_TEXT = re.compile(r"\bp = ([0-9.]+(?:e[+-]?[0-9]+)?)")
_RESOLUTION_OF_TEXT = re.compile(r"\bresolution ([0-9.]+(?:e[+-]?[0-9]+)?)")


def alert_odds(text: str) -> tuple[float | None, float | None]:
    """The p-value a protection alert's *text* states, and its reference's resolution (the
    smallest p-value it can give) where the text states one; None for what it does not say.
    The texts are written by the functions below: this reads what they write."""
    p, resolution = _P_OF_TEXT.search(text or ""), _RESOLUTION_OF_TEXT.search(text or "")
    return (float(p.group(1)) if p else None, float(resolution.group(1)) if resolution else None)


def _shuffle_text(f: ShuffleFinding) -> str:
    return T.SHUFFLE.write(deck=f.deck, seq=f.hand_ids[0], dealer=f.dealer or "none", pairs=f.statistic,
                           p=f"{f.p_value:.2g}", model=f.model, resolution=f"{f.resolution:.1g}",
                           threshold=f"{f.threshold:g}")


def _procedure_text(f: ShuffleFinding) -> str:
    return T.PROCEDURE.write(dealer=f.dealer or "none", hands=len(f.hand_ids), seq=f.hand_ids[-1], pairs=f.statistic,
                             p=f"{f.p_value:.2g}", model=f.model, threshold=f"{f.threshold:g}")


def _seat_text(a, feed_every: float) -> str:
    return T.SEAT_LUCK.write(seat=a.seat, strong=len(a.strong_hand_ids), hands=a.hands, expected=f"{a.expected:.1f}",
                             value=f"{a.value:.2f}", h=f"{a.h:.2f}", feed=f"{feed_every:g}",
                             arl=f"{a.in_control_arl:.0f}", seqs=", ".join(str(i) for i in a.strong_hand_ids))


def _chart_text(f) -> str:
    return T.DEALER_CHART.write(dealer=f.dealer, seq=f.hand_id, value=f"{f.value:.2f}", h=f"{f.h:.2f}", k=f"{f.k:.3f}",
                                p0=f"{f.p0:.3g}", shift=f"{f.shift:g}", arl=f"{f.in_control_arl:.0f}")
