"""Event sources beside the devices: recorded events fed into a live box, resuming
where its journal ends, and the dealers' badges held to the shoe."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from dealerbox.errors import EventError
from dealerbox.rules.book import NOT_PLAYING
from dealerbox.domain.events import Event, EventFile

log = logging.getLogger("dealerbox")


class InputFeed:
    """Owns an input of recorded events (a session replayed into a live box, or
    the crash test): where to resume after a restart, and the pace.

    :param events: a list, or an :class:`~dealerbox.domain.events.EventFile`
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


@dataclass(frozen=True, slots=True)
class RegistryOffer:
    """A room registry the floor sent (a :class:`~dealerbox.service.room_registry.Received`),
    queued for the engine loop, which applies it between hands."""

    received: object


#: :attr:`DealerSignIn.waiting` when no badge held during the hand waits for its end.
NOBODY_WAITS = object()


@dataclass(frozen=True, slots=True)
class BadgeRead:
    """A dealer's badge held to the shoe reader at event time *t*: queued for the engine
    loop, which turns it into a ``dealer`` event (:class:`DealerSignIn`)."""

    t: float
    dealer: str


class DealerSignIn:
    """Turns badges held to the shoe into ``dealer`` events (CONTRACT.md), in the engine loop.

    Between hands a badge signs its dealer in, or out when that dealer deals
    already. During a hand the badge is judged against the dealer of that hand
    and kept (the last one held wins) until the hand is over: then, and only if
    it changes who deals, the ``dealer`` event is made, so the journal holds
    ``dealer`` events between hands only and every hand belongs to the dealer
    who began it. A badge held during a hand is kept in memory only: a restart
    before the hand ends forgets it (the dealer holds it again). A NEW HAND pressed
    with no HAND OVER ends the hand too: the ``dealer`` event goes before it.

    :param engine: the box's :class:`~dealerbox.rules.engine.HandEngine` (read only).
    """

    def __init__(self, engine):
        self.engine = engine
        #: The dealer a badge held during the hand asks for (None: sign out), or :data:`NOBODY_WAITS`.
        self.waiting = NOBODY_WAITS

    def read(self, badge: BadgeRead) -> list[Event]:
        """The ``dealer`` event *badge* makes now: none during a hand."""
        engine = self.engine
        # Held by the dealer who deals: a sign-out. During a hand that is the hand's dealer, so a
        # badge held twice during one hand asks for the same thing twice, never flips back.
        dealer = None if badge.dealer == engine.dealer else badge.dealer
        if engine.phase not in NOT_PLAYING:
            self.waiting = dealer
            log.info("badge of dealer %s held during the hand: takes effect when the hand is over", badge.dealer)
            return []
        self.waiting = NOBODY_WAITS
        return [Event(badge.t, "dealer", dealer=dealer)]

    def due(self, t: float, *, new_hand: bool = False) -> list[Event]:
        """The ``dealer`` event a badge held during the hand makes once the hand is over (at *t*),
        or, with *new_hand*, before a new hand that ends it without HAND OVER."""
        if self.waiting is NOBODY_WAITS or (self.engine.phase not in NOT_PLAYING and not new_hand):
            return []
        dealer, self.waiting = self.waiting, NOBODY_WAITS
        if dealer == self.engine.dealer:
            return []
        return [Event(t, "dealer", dealer=dealer)]
