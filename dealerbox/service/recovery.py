"""Coming back after a stop: the open hand replayed from the journal, damage put on record."""

from __future__ import annotations

import dataclasses
import json
import logging

from dealerbox.errors import JournalError
from dealerbox.rules.engine import decision_to_dict
from dealerbox.domain.events import Event
from dealerbox.service.journal.lines import journal_files, parse_line, raw_lines, read_anchor
from dealerbox.service.journal.read import check_recent, read_decisions
from dealerbox.service.output import decision_record, give_out

log = logging.getLogger("dealerbox")


class StartupRecovery:
    """Owns bringing the box back to the state the journal says it was in.

    :meth:`replay` feeds the engine the open hand (only the lines the hash
    chain vouches for, so a duplicated or forged line never puts the engine in
    a state the table was not in) and gives out the decisions a stop cut off:
    to ``on_decision`` (what ``run --decisions`` prints), then to the journal;
    :meth:`record_damage` puts the damage the journal found on opening on
    record, for the floor. :attr:`note` is what the first frame tells the
    technician about it.
    """

    def __init__(self, engine, journal, stats, *, on_decision=None):
        self.engine = engine
        self.journal = journal
        self.stats = stats
        self._on_decision = on_decision
        self._recovered_note: str | None = None
        self._damage_note: str | None = None

    @property
    def note(self) -> str | None:
        """The technician's line for the first frame: damage first, else a recovered hand, else None."""
        return self._damage_note or self._recovered_note

    def replay(self, messages) -> float:
        """Replay the open hand into the engine; return the time of the journal's last event (0.0: none)."""
        replayed = 0
        last = None
        last_decisions: list = []
        open_hand = list(self.journal.open_hand())
        dealer = last_dealer_event(self.journal.directory, before=open_hand[0].seq if open_hand else None)
        if dealer is not None:
            self.engine.feed(dealer)          # who deals is older than the open hand; it changes no decision
        for entry in open_hand:
            last_decisions = self.engine.feed(entry.event)
            replayed += 1
            last = entry
        if last is None:
            for entry in self.journal.entries(skip_damaged=True):
                last = entry
        self.stats.recovered_events = replayed
        # (Reading the record back costs a pass over the day's file: only when something may be owed.)
        if last_decisions or replayed == 1:
            try:
                self._journal_lost_decisions(last, last_decisions, messages, alone=replayed == 1)
            except OSError as exc:
                self.stats.journal_errors += 1
                log.error("could not journal the decisions a stop had cut off: %s", exc.strerror or exc)
        if replayed:
            self._recovered_note = f"RECOVERED {replayed} ev"
            log.info("recovered the open hand from the journal: %d events replayed, phase %s, verdict %s; "
                     "showing %s", replayed, self.engine.phase, self.engine.decision.verdict,
                     json.dumps(decision_to_dict(self.engine.decision, messages), ensure_ascii=False))
        return last.event.t if last else 0.0

    def _journal_lost_decisions(self, entry, decisions, messages, *, alone: bool) -> None:
        """A stop between an event's line and its decisions' lines left them (or the
        last of them) out: give them out now, as :class:`~.output.DecisionOutput` does.

        The box gives a decision out before it journals it, so one that is not
        on record may not have been printed either: it is printed now (perhaps a
        second time, with the same ``seq``), and never missed. *alone*: *entry*
        is the open hand's ``new_hand`` and nothing came after it.
        """
        done = sum(d.get("seq") == entry.seq for _seq, _wall, d in read_decisions(self.journal.directory, entry.seq))
        if alone and not done and not decisions:
            # A fresh engine cannot tell whether starting this hand changed the panel
            # (it does after a misdeal): the decision on record before it can.
            shown = _decision_before(self.journal.directory, entry.seq)
            now = decision_to_dict(self.engine.decision, messages)
            if shown is not None and any(shown.get(k) != now[k] for k in _PANEL_KEYS):
                # The engine kept its decision from before the hand (it looked the same):
                # what it gives out carries the new_hand's time and phase.
                decisions = [dataclasses.replace(self.engine.decision, t=entry.event.t, phase=self.engine.phase)]
        lost = decisions[done:]
        for d in lost:
            out = decision_record(d, messages, entry.seq, entry.event)
            give_out(self._on_decision, out)
            self.journal.append_decision(out)
        if lost:
            log.info("journaled %d decision(s) of event %d that a stop had cut off", len(lost), entry.seq)

    def record_damage(self) -> None:
        """Damage the journal found on opening goes on record, and to the floor."""
        record = self.journal.damage_record()
        if record is None:
            return
        self.stats.journal_damage = record["count"]
        self.journal.submit_record("journal_damage", record)
        first = record["lines"][0]
        self._damage_note = "JOURNAL DAMAGED"
        log.error("floor notice: the journal was damaged: %d line(s), the first at %s:%d (%s); "
                  "quarantined, the table runs on (run dealerbox journal verify)",
                  record["count"], first["file"], first["line"], first["kind"])


#: What a decision shows on the panel (its time and phase aside), as :meth:`Decision.same_as` compares.
_PANEL_KEYS = ("verdict", "irregularity", "cards", "steps", "step")


def _decision_before(directory, seq: int) -> dict | None:
    """The decision the panel showed just before journal line *seq*, a ``new_hand``: the
    last decision on record since the ``new_hand`` before it; None when there is none
    (the panel showed what a fresh hand shows, as after a fresh start).

    Only decision and ``new_hand`` lines are parsed, from the newest day file back.
    """
    files = journal_files(directory)
    for i in range(len(files) - 1, -1, -1):
        path = files[i][1]
        shown, hand_before = None, False
        for n, raw in raw_lines(path, newest=i == len(files) - 1):
            if b'"decision":' not in raw and b"new_hand" not in raw:
                continue
            rec = parse_line(path.name, n, raw)
            if rec.error is not None or rec.seq is None:
                continue
            if rec.seq >= seq:
                break
            if rec.decision is not None:
                shown = rec.decision
            elif rec.event is not None and rec.event.get("ev") == "new_hand":
                shown, hand_before = None, True
        if shown is not None or hand_before:
            return shown
    return None


#: Day files searched for the last sign-in at a start (see :func:`last_dealer_event`).
SIGN_IN_FILES = 2


def last_dealer_event(directory, *, before: int | None = None) -> Event | None:
    """The last ``dealer`` event the hash chain vouches for with ``seq`` below *before*
    (anywhere when None): who deals at the table, which may be hands older than the open one.

    The newest day file holding such a line is found by its bytes; the chain is then
    followed from there to the end, so a forged or changed line is never believed.
    Only the newest :data:`SIGN_IN_FILES` day files are searched: a shift is shorter
    than that, and a start must not read months of journal on a table that never
    saw a badge.
    """
    files = journal_files(directory)
    start = None
    for i in range(len(files) - 1, max(-1, len(files) - 1 - SIGN_IN_FILES), -1):
        for n, raw in raw_lines(files[i][1], newest=i == len(files) - 1):
            if b'"ev":"dealer"' in raw:
                rec = parse_line(files[i][1].name, n, raw)
                if rec.error is None and rec.event is not None and (before is None or rec.seq < before):
                    start = i
                    break
        if start is not None:
            break
    if start is None:
        return None
    try:
        anchor = read_anchor(directory)
    except JournalError:
        anchor = None
    kept, _problems, _start = check_recent(directory, files, start, anchor)
    found = None
    for rec in kept:
        if before is not None and rec.seq >= before:
            break
        if rec.event is not None and rec.event.get("ev") == "dealer":
            found = rec.event
    return None if found is None else Event.from_dict(found)
