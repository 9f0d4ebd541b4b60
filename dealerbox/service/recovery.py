"""Coming back after a stop: the open hand replayed from the journal, damage put on record."""

from __future__ import annotations

import json
import logging

from ..rules.engine import decision_to_dict
from .output import decision_record

log = logging.getLogger("dealerbox")


class StartupRecovery:
    """Owns bringing the box back to the state the journal says it was in.

    :meth:`replay` feeds the engine the open hand (only the lines the hash
    chain vouches for, so a duplicated or forged line never puts the engine in
    a state the table was not in) and journals the decisions a stop cut off;
    :meth:`record_damage` puts the damage the journal found on opening on
    record, for the floor. :attr:`note` is what the first frame tells the
    technician about it.
    """

    def __init__(self, engine, journal, stats):
        self.engine = engine
        self.journal = journal
        self.stats = stats
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
        for entry in self.journal.open_hand():
            last_decisions = self.engine.feed(entry.event)
            replayed += 1
            last = entry
        if last is None:
            for entry in self.journal.entries(skip_damaged=True):
                last = entry
        self.stats.recovered_events = replayed
        if last_decisions:
            try:
                self._journal_lost_decisions(last, last_decisions, messages)
            except OSError as exc:
                self.stats.journal_errors += 1
                log.error("could not journal the decisions a stop had cut off: %s", exc.strerror or exc)
        if replayed:
            self._recovered_note = f"RECOVERED {replayed} ev"
            log.info("recovered the open hand from the journal: %d events replayed, phase %s, verdict %s; "
                     "showing %s", replayed, self.engine.phase, self.engine.decision.verdict,
                     json.dumps(decision_to_dict(self.engine.decision, messages), ensure_ascii=False))
        return last.event.t if last else 0.0

    def _journal_lost_decisions(self, entry, decisions, messages) -> None:
        """A stop between an event's line and its decisions' lines left them out: write them now."""
        from .journal import read_decisions

        if any(d.get("seq") == entry.seq for _seq, _wall, d in read_decisions(self.journal.directory, entry.seq)):
            return
        for d in decisions:
            self.journal.append_decision(decision_record(d, messages, entry.seq, entry.event))
        log.info("journaled %d decision(s) of event %d that a stop had cut off", len(decisions), entry.seq)

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
