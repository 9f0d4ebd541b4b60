"""Recorded events fed into a live box, resuming where its journal ends."""

from __future__ import annotations

import logging
import time

from ..errors import EventError
from ..rules.events import EventFile

log = logging.getLogger("dealerbox")


class InputFeed:
    """Owns an input of recorded events (a session replayed into a live box, or
    the crash test): where to resume after a restart, and the pace.

    :param events: a list, or an :class:`~dealerbox.rules.events.EventFile`
        read as a stream each time it is iterated (never held whole in memory).
    :param pace_s: seconds to wait after each event.
    :param journal: the box's journal, which says how far a previous run got.
    """

    def __init__(self, events, pace_s: float, journal):
        self.events = events if isinstance(events, (list, EventFile)) else list(events)
        self.pace_s = pace_s
        self.journal = journal

    def run(self, sink, stop) -> None:
        """Hand each event still owed to *sink* until done or *stop* is set."""
        try:
            self._feed(sink, stop)
        except EventError as exc:  # checked at start; changed on disk since
            log.error("input stopped: %s", exc)

    def _feed(self, sink, stop) -> None:
        start = self._resume_index()
        for i, event in enumerate(self.events):
            if i < start:
                continue
            if stop.is_set():
                return
            sink(event)
            if self.pace_s:
                time.sleep(self.pace_s)

    def _resume_index(self) -> int:
        """The index of the first event after the last one the journal holds.

        The input is in order, so everything up to the last journaled id was either
        journaled or (a tick that judged nothing) deliberately left out: none of it
        is owed to the engine again.
        """
        last = None
        for entry in self.journal.entries(skip_damaged=True):
            if entry.event.id is not None:
                last = entry.event
        start = 0
        if last is not None:
            # Ids are line numbers unless the file gives its own: match the event
            # too, or a second input file would lose its first lines. (Two passes
            # over a file read as a stream.)
            for i, event in enumerate(self.events):
                if event.id == last.id and event.to_dict() == last.to_dict():
                    start = i + 1
        return start
