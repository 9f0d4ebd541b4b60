"""How well the readers read: the evidence for READER_DEGRADED (RULES.md, sensing faults).

Kept by the engine across hands (the tracker forgets everything at ``new_hand``).
"""

from __future__ import annotations

from collections import deque

#: A reader that faults this many times within :data:`FAULT_WINDOW_S` needs service.
FAULTS_TOO_MANY = 3
FAULT_WINDOW_S = 600.0


class ReaderHealth:
    """Counts unread shoe cards over the recent draws, and each reader's recent faults.

    Each method returns True once when a reader crosses into "needs service";
    it says so again only after the reader has recovered.
    """

    def __init__(self):
        self.draws: deque[bool] = deque()
        self.unread = 0  # how many of self.draws were unread
        self.faults: dict[str, deque[float]] = {}
        self.degraded: set[str] = set()

    def draw(self, unread: bool, max_share: float, recent: int) -> bool:
        """A card left the shoe, read or *unread*; True when the shoe reader just became degraded."""
        self.draws.append(unread)
        self.unread += unread
        while len(self.draws) > recent:
            self.unread -= self.draws.popleft()
        if len(self.draws) < recent:
            return False
        bad = self.unread > max_share * recent
        return self._crossed("shoe", bad)

    def fault(self, reader: str, t: float) -> bool:
        """*reader* faulted at *t*; True when it has now faulted too often."""
        times = self.faults.setdefault(reader, deque())
        times.append(t)
        while times and times[0] < t - FAULT_WINDOW_S:
            times.popleft()
        return self._crossed(f"faults:{reader}", len(times) >= FAULTS_TOO_MANY)

    def _crossed(self, what: str, bad: bool) -> bool:
        if not bad:
            self.degraded.discard(what)
            return False
        if what in self.degraded:
            return False
        self.degraded.add(what)
        return True
