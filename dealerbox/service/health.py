"""What the box says about itself: its counters, ``STATUS=``, the watchdog and the floor's health."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field

import dealerbox


@dataclass
class DaemonStats:
    """What the daemon counts; ``STATUS=`` and the tests read it."""

    events: int = 0
    decisions: int = 0
    recovered_events: int = 0
    reader_faults: int = 0
    reader_restarts: int = 0
    lcd_errors: int = 0
    journal_errors: int = 0
    #: Storage faults (runs of failed journal writes) since start.
    storage_faults: int = 0
    #: Why the journal cannot be written now, or None.
    storage_fault: str | None = None
    #: Events lost because the journal's queue overflowed during a fault.
    journal_lost_events: int = 0
    #: Journal lines held in memory, waiting for the disk.
    journal_queued: int = 0
    #: Damaged journal lines found (and quarantined) at start.
    journal_damage: int = 0
    reloads: int = 0
    reloads_refused: int = 0
    per_reader: dict = field(default_factory=dict)

    def take_storage(self, journal) -> None:
        """Copy the journal's storage figures, which its writer thread changes."""
        self.storage_fault = journal.fault
        self.storage_faults = journal.faults
        self.journal_lost_events = journal.lost_events
        self.journal_queued = journal.queued


class BoxHealth:
    """Owns what the box reports about its own state: the counters
    (:class:`DaemonStats`), the ``STATUS=`` line systemd shows, petting
    systemd's watchdog (from the engine loop, so a hung loop stops it), and
    the ``health`` the floor's publisher reports for the readers and the box.
    """

    def __init__(self, engine, journal, notifier, clock=time.monotonic):
        self.stats = DaemonStats()
        self.engine = engine
        self.journal = journal
        self.notifier = notifier
        self._clock = clock
        self._last_watchdog = 0.0
        self._ran: tuple | None = None

    def status(self) -> str:
        """The ``STATUS=`` text: phase, verdict, events, and any storage trouble."""
        d = self.engine.decision
        text = (f"{self.engine.phase}, {d.verdict}" + (f" {d.irregularity}" if d.irregularity else "")
                + f"; {self.stats.events} events")
        if self.journal.fault is not None:
            text += f"; STORAGE FAULT ({self.journal.fault}), {self.journal.queued} lines held"
        if self.journal.lost_events:
            text += f"; {self.journal.lost_events} events lost from the journal"
        if self.stats.journal_damage:
            text += f"; journal damage found at start ({self.stats.journal_damage} lines)"
        return text

    def pet_watchdog(self) -> None:
        """``WATCHDOG=1`` and a fresh ``STATUS=``, at most once a second (or the watchdog's interval)."""
        now = self._clock()
        interval = self.notifier.watchdog_interval
        if interval and now - self._last_watchdog >= min(interval, 1.0):
            self._last_watchdog = now
            self.notifier.watchdog()
            self.report_status()

    def report_status(self) -> None:
        """Send a fresh ``STATUS=`` to systemd."""
        self.notifier.status(self.status())

    def readers(self, names) -> dict:
        """Readers *names* as the floor's ``health`` shows them: seconds since each
        one's last good poll (None before the first) and whether the engine has it
        as faulted."""
        now = time.monotonic()
        faulted = set(self.engine.faulted_readers)
        out = {}
        for name in names:
            counts = self.stats.per_reader.get(name, {})
            last = counts.get("last_ok")
            out[name] = {"last_seen_s": None if last is None else round(now - last, 2),
                         "faulted": name in faulted, **reader_errors(counts)}
        return out

    def box(self, config=None) -> dict:
        """What the box itself reports beside the readers: the journal's storage fault, and
        with the table's *config* what the box runs (:func:`running`)."""
        s = self.stats
        return {"storage_fault": s.storage_fault, "storage_faults": s.storage_faults,
                "journal_queued": s.journal_queued, "journal_lost_events": s.journal_lost_events,
                **({} if config is None else self._running(config))}

    def _running(self, config) -> dict:
        # Read once per config the box runs with (a reload brings a new one): the file on
        # disk may have been edited since, and the floor must see what the box judges with.
        if self._ran is None or self._ran[0] is not config:
            self._ran = (config, running(config))
        return self._ran[1]


def reader_errors(counts: dict) -> dict:
    """One reader's counts since the box started (``polls``, ``faults``, ``restarts``) and its
    ``error_rate``: the share of its tries that failed (a fault or a crash), None before the first."""
    polls, faults, restarts = (int(counts.get(k, 0)) for k in ("polls", "faults", "restarts"))
    tries = polls + faults + restarts
    return {"polls": polls, "faults": faults, "restarts": restarts,
            "error_rate": round((faults + restarts) / tries, 4) if tries else None}


def config_fingerprint(path) -> str | None:
    """The SHA-256 (hex) of the config file's bytes as the box read them, None when unreadable:
    two tables with the same file show the same fingerprint on the floor's tables page."""
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except (OSError, TypeError):
        return None


def running(config) -> dict:
    """What the box runs, for the floor: the software's version, its config file's
    fingerprint and the rule profile's name."""
    profile = getattr(config, "profile", None)
    return {"version": dealerbox.__version__,
            "config_fingerprint": config_fingerprint(getattr(config, "path", None)),
            "profile": getattr(profile, "name", None)}
