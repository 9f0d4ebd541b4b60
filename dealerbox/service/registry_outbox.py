"""How the technician's commands put a registration in the table's journal, box running or not.

``dealerbox deck register``, ``deck check`` and ``badge register`` change the table's
own registries; the floor must learn of it (CONTRACT.md, "The registries"), and the
journal is the table's outbox to the floor. Only one process writes a journal (its
lock), and the box may be running. So a command writes its event as one small file in
``<state dir>/registry-outbox/`` (atomically: :func:`dealerbox.atomic.save_atomic`),
then:

- the box not running (the journal's lock is free): the command appends the waiting
  events to the journal itself, through the journal's own writer, and removes their
  files (:func:`deliver_now`);
- the box running: the box takes each waiting file within a second (and at its start),
  journals the event through its engine loop, waits until the line is on disk, and
  only then removes the file (:class:`OutboxCourier`).

Either way an event is removed only once it is in the journal, so a crash loses none
(it may at worst be journalled twice, which the floor takes as the same registration).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from dealerbox.atomic import save_atomic
from dealerbox.domain.events import REGISTRY_EVENTS, Event
from dealerbox.errors import EventError, JournalError
from dealerbox.service.journal import LOCK_NAME
from dealerbox.service.uplink import CURSOR_NAME

log = logging.getLogger("dealerbox")

OUTBOX_NAME = "registry-outbox"
#: How often the running box looks in the outbox.
COURIER_PERIOD_S = 1.0


class RegistryOutbox:
    """The folder of registry events waiting for the journal, in *state_dir*."""

    def __init__(self, state_dir):
        self.directory = Path(state_dir) / OUTBOX_NAME

    def put(self, ev: str, **fields) -> Path:
        """Keep one registry event (*ev* and its fields, CONTRACT.md) until it is journalled.

        It is checked now (:class:`~dealerbox.errors.EventError` for one that is not an event
        of the registries), so a bad one never waits in the outbox.
        """
        if ev not in REGISTRY_EVENTS:
            raise EventError(f"'ev' must be one of {sorted(REGISTRY_EVENTS)}, not {ev!r}")
        Event.from_dict({"t": 0.0, "ev": ev, **fields})
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o750)
        # Named by the wall clock, so that the files sort in the order they were written.
        path = self.directory / f"{time.time_ns():020d}-{os.getpid()}-{ev}.json"
        save_atomic(path, json.dumps({"ev": ev, **fields}, sort_keys=True) + "\n")
        return path

    def waiting(self) -> list[tuple[Path, dict]]:
        """The waiting events, oldest first, as ``(file, fields without t)``. A file that is not
        one (edited by hand, half a disk) is logged and moved aside as ``*.bad``."""
        try:
            names = sorted(p for p in self.directory.iterdir() if p.suffix == ".json")
        except FileNotFoundError:
            return []
        out = []
        for path in names:
            try:
                fields = json.loads(path.read_text(encoding="utf-8"))
                Event.from_dict({**fields, "t": 0.0})
            except FileNotFoundError:
                continue                                   # taken by the other side meanwhile
            except (OSError, ValueError, TypeError, EventError) as exc:
                log.error("registry outbox: %s is not a registry event (%s); moved aside as .bad", path, exc)
                try:
                    path.rename(path.with_suffix(".bad"))
                except OSError:
                    pass
                continue
            out.append((path, fields))
        return out


def deliver_now(outbox: RegistryOutbox, journal_dir, open_journal: Callable[[], object]) -> int | None:
    """Append every waiting event to the journal when no box holds it; the number appended, or
    None when the box runs (the journal is locked: the box takes them itself).

    :param journal_dir: the table's journal directory (its lock says whether the box runs).
    :param open_journal: opens that journal for writing.
    """
    waiting = outbox.waiting()
    if not waiting:
        return 0
    if journal_locked(journal_dir):
        return None
    journal = open_journal()
    done = 0
    with journal:
        t = last_event_t(journal)
        for path, fields in waiting:
            journal.append(Event.from_dict({**fields, "t": t}))   # fsync-ed before it returns
            path.unlink(missing_ok=True)
            done += 1
    return done


def journal_locked(journal_dir) -> bool:
    """True while a process (the box) holds the journal in *journal_dir* for writing."""
    try:
        fd = os.open(Path(journal_dir) / LOCK_NAME, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)          # closing lets go of a lock taken here
    return False


def post_registry_event(config, ev: str, /, **fields) -> str:
    """Put a registry event of the technician's commands on its way to the journal of the table
    of *config* (a :class:`~dealerbox.service.config.TableConfig`); what happened, in a sentence."""
    outbox = RegistryOutbox(config.state_dir)
    outbox.put(ev, **fields)
    journal_dir = config.state_dir / "journal"
    try:
        done = deliver_now(outbox, journal_dir, lambda: config.journal.open(
            journal_dir, keep_from_seq=floor_keep_from_seq(config.state_dir)))
    except (OSError, JournalError) as exc:
        # Not lost: the box takes it from the outbox when it (next) runs.
        return (f"{ev} waits in {outbox.directory} (the journal cannot be written now: {exc}); the box "
                "takes it into its journal when it runs")
    if done is None:
        return f"{ev} handed to the running box: it journals it within a second, and the floor learns of it"
    return f"{ev} written to the table's journal ({done} line(s)): the floor learns of it when the box reports"


def last_event_t(journal) -> float:
    """The ``t`` of the journal's last event (0.0 for none): a line added between two runs of the
    box takes the time the box stopped at, so ``t`` never goes back in the journal."""
    seq, _hash = journal.head
    t = 0.0
    for entry in journal.entries(max(1, seq - 256), skip_damaged=True):
        t = entry.event.t
    return t


def floor_keep_from_seq(state_dir) -> Callable[[], int]:
    """The journal's retention while a command holds it: keep every line the floor has not
    acknowledged (the uplink's cursor), as the box does."""
    path = Path(state_dir) / "journal" / CURSOR_NAME

    def keep() -> int:
        try:
            acked = json.loads(path.read_text()).get("acked", 0)
        except (OSError, ValueError, AttributeError):
            return 1
        return acked + 1 if isinstance(acked, int) and acked >= 0 else 1
    return keep


@dataclass
class Delivery:
    """One waiting event handed to the engine loop; the loop sets :attr:`seq` and :attr:`done`."""

    event: Event
    seq: int | None = None
    done: threading.Event = field(default_factory=threading.Event)


class OutboxCourier:
    """The running box's side: takes the outbox's events into its journal (see the module docstring).

    :param outbox: the table's :class:`RegistryOutbox`.
    :param put: queues a :class:`Delivery` for the engine loop.
    :param now: the box's event time.
    :param journal: the box's journal (to wait until a line is on disk).
    """

    def __init__(self, outbox: RegistryOutbox, put: Callable[[Delivery], None], now: Callable[[], float],
                 journal, *, period_s: float = COURIER_PERIOD_S):
        self.outbox, self.put, self.now, self.journal, self.period_s = outbox, put, now, journal, period_s

    def run(self, stop: threading.Event) -> None:
        """Look in the outbox every *period_s* until *stop* is set."""
        while True:
            try:
                self.deliver(stop)
            except Exception:   # the courier must live on: the files wait for the next turn
                log.exception("registry outbox: could not take the waiting events")
            if stop.wait(self.period_s):
                return

    def deliver(self, stop: threading.Event) -> int:
        """Journal every waiting event, removing each file once its line is on disk."""
        done = 0
        for path, fields in self.outbox.waiting():
            item = Delivery(Event.from_dict({**fields, "t": self.now()}))
            self.put(item)
            while not item.done.wait(0.2):
                if stop.is_set():
                    return done
            if item.seq is None or not self.journal.wait_written(item.seq, timeout=10.0):
                return done        # the disk fails: the file waits, the journal says why
            path.unlink(missing_ok=True)
            log.info("registry outbox: %s journalled as line %d", item.event.ev, item.seq)
            done += 1
        return done
