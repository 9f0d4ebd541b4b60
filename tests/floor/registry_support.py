"""What the room's registry's tests share: a table's journal lines about decks, badges and
hands, chained as a table writes them, and filing them as the collector does."""

from __future__ import annotations

import datetime as _dt
import json
import time

from dealerbox.domain.decks import simulated_uid
from dealerbox.floor.collecting.filing import Filing
from dealerbox.floor.collecting.message import Message
from dealerbox.link import protocol as P
from dealerbox.link.chain import line_hash

#: The 52 cards and two jokers of a floor deck named *name*, tag UID -> card.
CARDS = [r + s for s in "cdhs" for r in "23456789TJQKA"]


def deck_tags(name: str) -> dict[str, str]:
    tags = {simulated_uid(f"floor:{name}", card): card for card in CARDS}
    tags.update({simulated_uid(f"floor:{name}", "joker", copy): "joker" for copy in (0, 1)})
    return tags


def wall(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class TableJournal:
    """One table's journal lines: events at given times, chained."""

    def __init__(self, table: str):
        self.table = table
        self.lines: list[str] = []
        self._prev = P.GENESIS

    def add(self, at: float, ev: str, /, **fields) -> int:
        seq = len(self.lines) + 1
        line = json.dumps({"seq": seq, "prev": self._prev, "wall": wall(at),
                           "event": {"t": float(seq), "ev": ev, **fields}}, separators=(",", ":"))
        self.lines.append(line)
        self._prev = line_hash(line)
        return seq

    def hand(self, at: float, tags: dict[str, str], *, by_uid: bool = False, deck: str | None = None,
             seconds: float = 60.0) -> int:
        """A hand of two players dealt from *tags* (the first nine cards), over *seconds*."""
        start = self.add(at, "new_hand", players=2, hole_cards=2)
        for i, (uid, card) in enumerate(list(tags.items())[:9]):
            when = at + seconds * (i + 1) / 10
            if by_uid:
                self.add(when, "shoe", uid=uid)
            else:
                self.add(when, "shoe", card=card, **({"deck": deck} if deck else {}))
        self.add(at + seconds, "button", name="hand_over")
        return start


def file_journal(store, journal: TableJournal, start: int = 0) -> None:
    """File *journal*'s lines from index *start* as the collector does."""
    lines = journal.lines[start:]
    if lines:
        payload = P.encode({"table": journal.table, "boot": 1, "oldest": 1, "lines": lines})
        Filing(store).store_batch([Message.on_table_topic(P.journal_topic(journal.table), payload, 0.0)],
                                  time.time())
