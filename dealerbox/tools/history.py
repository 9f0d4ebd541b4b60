"""Hand history from the journal: what happened at the table, hand by hand.

:func:`load_history` checks the journal's hash chain first
(:func:`dealerbox.service.journal.verify`) and refuses a damaged journal: it raises
:class:`~dealerbox.errors.JournalError` whose message names every changed,
removed or inserted line by file and line number (the problems are also in the
exception's ``problems`` attribute). A record built from a journal someone
edited would settle a dispute on forged evidence, so there is no "show it
anyway" mode; ``dealerbox verify`` (or :func:`dealerbox.service.journal.verify`) shows
the damage, and the CLI exits non-zero.

The events are then replayed through one :class:`~dealerbox.rules.engine.HandEngine`
for the whole journal, as the daemon fed them, so the decisions are the ones the
box made. A hand runs from its ``new_hand`` event to the next one; hands are
numbered 1, 2, 3 ... from the oldest line the journal still holds (retention
deletes old days, so numbers are per journal, not for ever; ``start.seq`` is the
permanent reference).

:func:`format_table` prints a compact text block per hand for the floor;
:func:`to_json` gives the stable JSON below.

JSON schema, ``history_version`` 1
----------------------------------
Keys are only ever added, never renamed or removed; a change of meaning bumps
``history_version``. Times are a *when* object::

    when = {"seq": 17, "t": 9.6, "wall": "2026-11-22T14:03:10.123456Z"}

``seq`` is the journal line's sequence number, ``t`` the event's time (seconds,
as in CONTRACT.md), ``wall`` the UTC time the line was written.

Top level::

    {"history_version": 1,
     "hands": [hand, ...]}          # oldest first, after the --hand/--since filters

hand::

    {"hand": 12,                    # 1-based number within the journal
     "start": when,                 # the new_hand event
     "end": when,                   # hand_over if pressed, else the hand's last event
     "ended_by": "hand_over" | "new_hand" | "journal_end",
     "players": 6, "hole_cards": 2,
     "seats": [{"seat": 1,          # deal position: 1 = left of the button
                "table_seat": 4,    # the table's seat number (new_hand "seats"), or null
                "cards": ["Ah", "Kd"]}, ...],   # hole cards as dealt (replacements included)
     "burns": ["7c", ...],          # burned cards, in the order they were burned
     "board": ["Qs", "Jh", ...],    # cards on the board at the end, in the order they came
     "streets": {"flop": [...], "turn": [...], "river": [...]},
     "aside": [...],                # cards set aside (C40 procedures) at the end
     "irregularities": [irregularity, ...],   # in the order they were raised
     "sources": ["000 par.1", ...], # every rule source cited in this hand, once
     "final": {"phase": "over", "verdict": "ok", "irregularity": null},
     "events": 41}                  # journal lines in this hand

irregularity::

    {"id": "EXPOSED_DEAL",          # RULES.md id; null for a manual misdeal or floor call
     "title": "...",                # in the chosen language
     "verdict": "correct",          # ok | correct | misdeal | void | floor
     "cards": ["Kd"],
     "rule": "000 par.1; 003 ...",  # the sources as the decision cites them
     "raised": when,
     "status": "done" | "unfinished" | "superseded" | "open",
     "steps": [{"key": "exposed.finish_deal", "text": "...", "done": when | null}, ...]}

``status``: ``done`` every step was seen done; ``unfinished`` the hand ended
with steps not seen done (normal for ``misdeal`` and ``void``: the hand stops
there); ``superseded`` the box dropped it during the hand, before its steps
were done, for a later judgment (e.g. a misdeal); ``open`` the journal ends
while it is still pending. A step's ``done`` is the event at which the box saw
it done (for a step the box cannot observe: the ``ack`` or the later step that
completed it); ``null`` if it never was.
"""

from __future__ import annotations

import datetime as _dt
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from dealerbox.rules.engine import STREETS, Correction, HandEngine
from dealerbox.errors import DealerboxError, JournalError
from dealerbox.service.journal import read_entries, verify
from dealerbox.domain.messages import load_messages
from dealerbox.rules.profiles import Profile, load_profile
from dealerbox.domain.decks import DeckRegistry

__all__ = [
    "HISTORY_VERSION", "When", "StepRecord", "IrregularityRecord", "SeatRecord", "HandRecord",
    "HistoryError", "load_history", "format_table", "to_json", "parse_since", "run_history",
]

HISTORY_VERSION = 1


_NO_CARD_MOVES = frozenset({"tick", "reader_fault", "reader_ok"})


class HistoryError(DealerboxError, ValueError):
    """A history query is not valid (a bad ``--hand`` or ``--since``)."""


@dataclass(frozen=True, slots=True)
class When:
    """When something happened: the journal line, the event time and the wall time (UTC)."""

    seq: int
    t: float
    wall: str

    @property
    def clock(self) -> str:
        """``HH:MM:SS`` of the wall time, or ``?`` when the line had none."""
        return self.wall[11:19] if len(self.wall) >= 19 else "?"

    @property
    def day(self) -> str:
        return self.wall[:10] if len(self.wall) >= 10 else "?"

    def to_dict(self) -> dict:
        return {"seq": self.seq, "t": self.t, "wall": self.wall}


@dataclass(slots=True)
class StepRecord:
    key: str
    text: str
    done: When | None = None

    def to_dict(self) -> dict:
        return {"key": self.key, "text": self.text, "done": self.done.to_dict() if self.done else None}


@dataclass(slots=True)
class IrregularityRecord:
    id: str | None
    title: str
    verdict: str
    cards: list[str]
    rule: str
    raised: When
    steps: list[StepRecord] = field(default_factory=list)
    status: str = "open"

    def to_dict(self) -> dict:
        return {"id": self.id, "title": self.title, "verdict": self.verdict, "cards": list(self.cards),
                "rule": self.rule, "raised": self.raised.to_dict(), "status": self.status,
                "steps": [s.to_dict() for s in self.steps]}


@dataclass(slots=True)
class SeatRecord:
    seat: int
    table_seat: int | None
    cards: list[str]

    def to_dict(self) -> dict:
        return {"seat": self.seat, "table_seat": self.table_seat, "cards": list(self.cards)}


@dataclass(slots=True)
class HandRecord:
    """One hand as the journal tells it. See the module docstring for the fields."""

    number: int
    start: When
    end: When
    players: int
    hole_cards: int
    ended_by: str = "journal_end"
    seats: list[SeatRecord] = field(default_factory=list)
    burns: list[str] = field(default_factory=list)
    board: list[str] = field(default_factory=list)
    streets: dict[str, list[str]] = field(default_factory=dict)
    aside: list[str] = field(default_factory=list)
    irregularities: list[IrregularityRecord] = field(default_factory=list)
    final: dict = field(default_factory=dict)
    events: int = 0

    @property
    def sources(self) -> list[str]:
        out: list[str] = []
        for irr in self.irregularities:
            for part in irr.rule.split(";"):
                part = part.strip()
                if part and part not in out:
                    out.append(part)
        return out

    @property
    def start_time(self) -> _dt.datetime | None:
        return _parse_wall(self.start.wall)

    def to_dict(self) -> dict:
        return {
            "hand": self.number, "start": self.start.to_dict(), "end": self.end.to_dict(),
            "ended_by": self.ended_by, "players": self.players, "hole_cards": self.hole_cards,
            "seats": [s.to_dict() for s in self.seats], "burns": list(self.burns),
            "board": list(self.board), "streets": {k: list(v) for k, v in self.streets.items()},
            "aside": list(self.aside), "irregularities": [i.to_dict() for i in self.irregularities],
            "sources": self.sources, "final": dict(self.final), "events": self.events,
        }


# --------------------------------------------------------------------------
# Times


def _parse_wall(wall: str) -> _dt.datetime | None:
    try:
        return _dt.datetime.strptime(wall, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=_dt.timezone.utc)
    except (TypeError, ValueError):
        return None


def parse_since(value) -> _dt.datetime:
    """``--since``: an ISO date (midnight UTC) or datetime; without a zone it is UTC.

    Accepts text, :class:`datetime.date` or :class:`datetime.datetime`; raises
    :class:`HistoryError` for anything else.
    """
    if isinstance(value, _dt.datetime):
        stamp = value
    elif isinstance(value, _dt.date):
        stamp = _dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            stamp = (_dt.datetime.fromisoformat(text) if ("T" in text or " " in text or ":" in text)
                     else _dt.datetime.combine(_dt.date.fromisoformat(text), _dt.time()))
        except ValueError as exc:
            raise HistoryError(f"--since {value!r}: expected an ISO date (2026-11-22) or "
                               f"date and time (2026-11-22T14:00:00), UTC") from exc
    else:
        raise HistoryError(f"--since {value!r}: expected a date or a date and time")
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=_dt.timezone.utc)
    return stamp.astimezone(_dt.timezone.utc)


# --------------------------------------------------------------------------
# Replay


class _Builder:
    """Follows the engine through one hand and fills a HandRecord."""

    def __init__(self, number: int, start: When, event, messages):
        self.messages = messages
        self.record = HandRecord(number, start, start, event.players, event.hole_cards or 2)
        self.table_seats = event.seats
        self.tracked: list[tuple[Correction, IrregularityRecord]] = []
        self.burn_order: list[str] = []
        self.board_order: list[str] = []
        self.where: dict[str, str] = {}
        self.over_at: When | None = None

    def after(self, engine: HandEngine, event, when: When) -> None:
        rec = self.record
        rec.events += 1
        rec.end = when
        if event.ev == "button" and event.name == "hand_over" and self.over_at is None:
            self.over_at = when
        self._follow_corrections(engine, when)
        # Time passing and reader faults move no card, and ticks are most of a
        # journal: skip the snapshot for them.
        if engine.phase not in ("over", "idle") and event.ev not in _NO_CARD_MOVES:
            self._snapshot(engine)
        rec.final = {"phase": engine.phase, "verdict": engine.decision.verdict,
                     "irregularity": engine.decision.irregularity}

    def _follow_corrections(self, engine: HandEngine, when: When) -> None:
        live = engine.corrections
        known = {id(c) for c, _ in self.tracked}
        for corr in live:
            if id(corr) not in known:
                irr = IrregularityRecord(
                    corr.irregularity, self.messages.title(corr.irregularity, corr.verdict), corr.verdict,
                    [], corr.rule, when)
                self.record.irregularities.append(irr)
                self.tracked.append((corr, irr))
        still = []
        for corr, irr in self.tracked:
            irr.cards = list(corr.cards)
            irr.verdict = corr.verdict
            while len(irr.steps) < len(corr.todos):
                step = corr.todos[len(irr.steps)].step
                irr.steps.append(StepRecord(step.key, self.messages.text(step)))
            for todo, step in zip(corr.todos, irr.steps):
                if todo.done and step.done is None:
                    step.done = when
            if any(c is corr for c in live):
                still.append((corr, irr))
            else:
                irr.status = "done" if all(s.done for s in irr.steps) else (
                    "unfinished" if engine.phase == "over" else "superseded")
        self.tracked = still

    def _snapshot(self, engine: HandEngine) -> None:
        where = engine.where
        for key, place in where.items():
            if self.where.get(key) == place:
                continue
            if place == "burn":
                if key in self.burn_order:
                    self.burn_order.remove(key)
                self.burn_order.append(key)
            elif place == "board":
                if key in self.board_order:
                    self.board_order.remove(key)
                self.board_order.append(key)
        self.where = dict(where)
        shown = engine.shown
        rec = self.record
        seats: dict[int, list[str]] = {}
        for key in engine.deal_cards:
            place = where.get(key, "")
            if place.startswith("seat"):
                seats.setdefault(int(place[4:]), []).append(shown(key))
        rec.seats = [SeatRecord(pos, self.table_seats[pos - 1] if self.table_seats else None, seats.get(pos, []))
                     for pos in range(1, (rec.players or 0) + 1)]
        rec.burns = [shown(k) for k in self.burn_order if where.get(k) == "burn"]
        rec.board = [shown(k) for k in self.board_order if where.get(k) == "board"]
        rec.streets = {name: [shown(k) for k in engine.streets[name].board if where.get(k) == "board"]
                       for name in STREETS}
        rec.aside = [shown(k) for k, p in where.items() if p == "aside"]

    def finish(self, ended_by: str) -> HandRecord:
        rec = self.record
        if self.over_at is not None:
            rec.ended_by, rec.end = "hand_over", self.over_at
        else:
            rec.ended_by = ended_by
        for _corr, irr in self.tracked:
            irr.status = "open" if rec.ended_by == "journal_end" else "unfinished"
        self.tracked = []
        return rec


def load_history(journal_dir, *, profile: Profile | str, registry: DeckRegistry | None = None,
                 lang: str = "en", hand: int | None = None, since=None,
                 expected_head: tuple[int, str] | None = None) -> list[HandRecord]:
    """Verify the journal in *journal_dir*, replay it, and return its hands, oldest first.

    :param profile: the rule profile the table plays (name or :class:`Profile`);
        it must be the one the daemon used, or the verdicts differ.
    :param registry: the deck registry the daemon used (default: the built-in
        simulation registry, as ``dealerbox replay``).
    :param lang: language of step texts and titles (``en``, ``cs``, ``de``, ``sk``).
    :param hand: only hand number *hand* (1-based within the journal).
    :param since: only hands that started at or after this UTC date or
        datetime (see :func:`parse_since`).
    :param expected_head: a ``(seq, hash)`` recorded elsewhere, passed on to
        :func:`~dealerbox.service.journal.verify` to make the journal's end tamper-evident.

    Raises :class:`JournalError` when the directory holds no journal, when the
    chain is broken (the message names each damaged line by file and line
    number) or when a line cannot be replayed; :class:`HistoryError` for a bad
    *hand* or *since*.
    """
    directory = Path(journal_dir)
    if hand is not None and (isinstance(hand, bool) or not isinstance(hand, int) or hand < 1):
        raise HistoryError(f"--hand {hand!r}: expected a hand number 1, 2, 3 ...")
    since_at = parse_since(since) if since is not None else None
    if not directory.is_dir():
        raise JournalError(f"{directory}: no journal directory there")
    report = verify(directory, expected_head=expected_head)
    if not report.ok:
        lines = [f"{directory / p.file if p.file else directory}:{p.line}: line {p.kind}: {p.detail}"
                 for p in report.problems]
        exc = JournalError(f"{directory}: the journal's hash chain is broken, so its history cannot be "
                           f"trusted ({len(lines)} problem{'s' if len(lines) != 1 else ''}):\n  "
                           + "\n  ".join(lines))
        exc.problems = list(report.problems)
        raise exc
    profile = load_profile(profile) if isinstance(profile, str) else profile
    messages = load_messages(lang)
    engine = HandEngine(profile, registry)
    hands: list[HandRecord] = []
    cur: _Builder | None = None
    for entry in read_entries(directory):
        event = entry.event
        when = When(entry.seq, event.t, entry.wall)
        if event.ev == "new_hand":
            if cur is not None:
                hands.append(cur.finish("new_hand"))
            cur = _Builder(len(hands) + 1, when, event, messages)
        engine.feed(event)
        if cur is not None:
            cur.after(engine, event, when)
    if cur is not None:
        hands.append(cur.finish("journal_end"))
    if hand is not None:
        hands = [h for h in hands if h.number == hand]
    if since_at is not None:
        hands = [h for h in hands if (h.start_time is not None and h.start_time >= since_at)]
    return hands


# --------------------------------------------------------------------------
# Output


def to_json(records) -> dict:
    """The records as the documented JSON object (``history_version`` 1)."""
    return {"history_version": HISTORY_VERSION, "hands": [r.to_dict() for r in records]}


_STATUS_TEXT = {"done": "done", "unfinished": "not finished when the hand ended",
                "superseded": "replaced by a later ruling", "open": "still open"}


def format_table(records) -> str:
    """A compact text block per hand, for a floor person (times are UTC)::

        == 2026-11-22 (UTC) ==
        Hand 12  14:03:10-14:05:55  6 players  [over]
          seats  1: Ah Kd  2: 7c 7d  3: ...
          board  Qs Jh 9c | Td | 2s   burns 4h 8c 9d
          ! EXPOSED_DEAL  correct  Kd  at 14:03:21  done
              1. Finish the deal ...                 done 14:03:25
              2. Give seat 4 the top card ...        done 14:03:26
              sources: 000 par.1; 003 TH irregularities 1
    """
    out: list[str] = []
    day = None
    for rec in records:
        if rec.start.day != day:
            day = rec.start.day
            out.append(f"== {day} (UTC) ==")
        final = rec.final or {}
        state = final.get("phase", "?")
        if final.get("verdict") not in (None, "ok"):
            state += f", {final['verdict']}"
        if rec.ended_by == "journal_end":
            state += ", journal ends"
        out.append(f"Hand {rec.number}  {rec.start.clock}-{rec.end.clock}  {rec.players} players"
                   + ("  Omaha" if rec.hole_cards == 4 else "") + f"  [{state}]")
        seats = []
        for s in rec.seats:
            label = f"{s.seat}" + (f"(#{s.table_seat})" if s.table_seat is not None else "")
            seats.append(f"{label}: {' '.join(s.cards) or '-'}")
        out.append("  seats  " + "  ".join(seats))
        streets = [" ".join(rec.streets.get(n, [])) for n in STREETS]
        while streets and not streets[-1]:
            streets.pop()
        in_streets = {c for n in STREETS for c in rec.streets.get(n, [])}
        others = [c for c in rec.board if c not in in_streets]
        board = " | ".join(s or "-" for s in streets) or "-"
        if others:
            board += "  + " + " ".join(others)
        line = f"  board  {board}   burns {' '.join(rec.burns) or '-'}"
        if rec.aside:
            line += f"   aside {' '.join(rec.aside)}"
        out.append(line)
        for irr in rec.irregularities:
            name = irr.id or irr.title
            cards = " ".join(irr.cards) or "-"
            status = _STATUS_TEXT.get(irr.status, irr.status)
            if irr.verdict in ("misdeal", "void") and irr.status in ("unfinished", "open"):
                status = "the hand stopped here"
            out.append(f"  ! {name}  {irr.verdict}  {cards}  at {irr.raised.clock}  {status}")
            width = max((len(s.text) for s in irr.steps), default=0)
            for i, step in enumerate(irr.steps, 1):
                done = f"done {step.done.clock}" if step.done else "not seen done"
                out.append(f"      {i}. {step.text.ljust(width)}  {done}")
            if irr.rule:
                out.append(f"      sources: {irr.rule}")
    return "\n".join(out)


# --------------------------------------------------------------------------
# The command


def run_history(journal_dir, *, profile: Profile | str, registry: DeckRegistry | None = None,
                lang: str = "en", hand: int | None = None, since=None, as_json: bool = False,
                out=None, err=None) -> int:
    """``dealerbox history``: print the table (or the JSON) and return the exit code.

    Exit codes: 0 the history was printed (possibly no hand since the date: a note
    goes to *err*); 1 the journal's hash chain is broken or a line cannot be replayed
    (every damaged line is named on *err*, nothing goes to *out*); 2 a bad
    ``--hand``/``--since`` (a ``--hand`` the journal does not have) or no journal directory.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        records = load_history(journal_dir, profile=profile, registry=registry, lang=lang,
                               hand=hand, since=since)
    except HistoryError as exc:
        print(f"dealerbox history: {exc}", file=err)
        return 2
    except JournalError as exc:
        print(f"dealerbox history: {exc}", file=err)
        return 2 if not Path(journal_dir).is_dir() else 1
    if as_json:
        out.write(json.dumps(to_json(records), ensure_ascii=False, indent=2) + "\n")
    else:
        text = format_table(records)
        if text:
            out.write(text + "\n")
    if not records:
        what = f"hand {hand}" if hand is not None else (f"hands since {since}" if since is not None else "hands")
        print(f"dealerbox history: no {what} in {journal_dir}", file=err)
        if hand is not None:
            return 2  # a hand number the journal does not have is a bad argument
    return 0
