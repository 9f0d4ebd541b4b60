"""The sim console's scenario player: a scenario file played at the table one step a key press.

A scenario file (``tests/scenarios/*.jsonl``: a header line, CONTRACT.md
events, ``{"expect": ...}`` lines) is read by :class:`Scenario`.
:class:`ScenarioPlayer` acts each event out at the table with
:meth:`SimulatedTable.play` (through the dealer's hands, so the shoe's re-arm
time and the board's dropout are respected) and checks each expectation
against the live engine once the readers have settled. Events the table cannot
act out (``tick``, ``zone_*``, ``reader_*``; so the seat-antenna scenarios do
not apply) are skipped with a note. Two events are played at least as far
apart as their ``t`` says, and the same tag crosses the shoe again only once
the reader has forgotten it (``presence.shoe_rearm_s``), so grace periods and
duplicates play out as the file means; a slower technician only stretches time.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dealerbox.errors import EventError
from dealerbox.domain.decks import normalize_uid
from dealerbox.rules.scenario import check_expectation
from dealerbox.tools.console.hands import DealerHands, TagChoice

#: The events a simulated table can act out.
_PLAYABLE = ("new_hand", "shoe", "board_on", "board_off", "button")


@dataclass
class Scenario:
    """A scenario file: its header and its lines (line number, object), played in order."""

    path: Path
    header: dict
    items: list
    position: int = 0

    @classmethod
    def load(cls, path) -> "Scenario":
        path = Path(path)
        header: dict = {}
        items = []
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise EventError(f"cannot read {path}: {exc.strerror or exc}") from exc
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise EventError(f"{path}: not JSON", line=n) from exc
            if not isinstance(obj, dict):
                raise EventError(f"{path}: not a JSON object", line=n)
            if "ev" not in obj and "expect" not in obj:
                if items or header:
                    raise EventError(f"{path}: neither an event nor an expectation", line=n)
                header = obj
                continue
            items.append((n, obj))
        return cls(path, header, items)

    @property
    def done(self) -> bool:
        return self.position >= len(self.items)

    def take(self):
        item = self.items[self.position]
        self.position += 1
        return item


class ScenarioPlayer:
    """Plays a :class:`Scenario` at the table, one step per :meth:`step`, and keeps the results.

    :param scenario: the file, or None (a step then says none is loaded).
    :param hands: the dealer's hands at the table (they press the buttons and
        pace the shoe).
    :param note: tells the technician what was played.
    :param settle: waits until the daemon has taken what the readers report.
    :param engine: the live engine, for the expectations.

    :attr:`results` lists ``(line, failures)`` per expectation checked.
    """

    def __init__(self, scenario: Scenario | None, *, hands: DealerHands, note: Callable[[str], None],
                 settle: Callable[[], bool], engine: Callable[[], object]):
        self.scenario = scenario
        self.hands = hands
        self.note = note
        self.settle = settle
        self.engine = engine
        self.results: list[tuple[int, list[str]]] = []
        self._mark: tuple[float, float] | None = None   # (file t, monotonic) of the last event played

    def step(self) -> None:
        """Play the scenario's next event, or check its next expectation."""
        sc = self.scenario
        if sc is None:
            self.note("no scenario loaded (dealerbox sim --scenario FILE)")
            return
        while not sc.done:
            n, obj = sc.take()
            if "expect" in obj:
                self._check_expectation(n, obj["expect"])
                return
            ev = obj.get("ev")
            self._pace(obj)
            if ev in _PLAYABLE:
                self._act_out(n, obj)
                self._mark_played(obj)
                self.note(f"scenario line {n}: {_event_text(obj)}")
                return
            self._mark_played(obj)
            if ev != "tick":
                self.note(f"scenario line {n}: {ev} skipped (the table cannot act it out)")
        self.note("scenario: the end")

    def _act_out(self, n: int, obj: dict) -> None:
        hands, ev = self.hands, obj["ev"]
        config = hands.config
        if ev == "new_hand" and obj.get("hole_cards", 2) != config.panel.hole_cards:
            self.note(f"line {n}: the panel deals {config.panel.hole_cards} hole cards, "
                      f"the scenario {obj['hole_cards']}")
        if ev == "button":
            # MISDEAL may be a long FLOOR press on this panel: do_button knows.
            hands.do_button(obj["name"])
            return
        tag = _tag_of(obj)
        if ev == "shoe":
            hands.cross_shoe(hands.uid(tag), lambda: hands.table.play([obj], pace_s=0.0))
        else:
            hands.table.play([obj], pace_s=0.0)
        hands.remember(ev, tag)
        if ev == "board_off":
            # The board reader reports a card gone only after board_dropout_s:
            # the next event must not overtake it.
            time.sleep(config.presence.board_dropout_s + 0.1)

    def _pace(self, obj: dict) -> None:
        """Leave at least the file's time between two events, so grace periods and
        the readers' presence timing see what the file meant."""
        if self._mark is None or not isinstance(obj.get("t"), (int, float)):
            return
        file_t, played = self._mark
        wait = (obj["t"] - file_t) - (time.monotonic() - played)
        if wait > 0:
            time.sleep(min(wait, 10.0))

    def _mark_played(self, obj: dict) -> None:
        if isinstance(obj.get("t"), (int, float)):
            self._mark = (float(obj["t"]), time.monotonic())

    def _check_expectation(self, n: int, want: dict) -> None:
        self.settle()
        fails = check_expectation(self.engine(), want, n)
        if fails:
            for f in fails:
                self.note(f"scenario expectation differs: {f}")
        else:
            self.note(f"scenario line {n}: expectation met ({', '.join(sorted(want))})")
        self.results.append((n, fails))


def _tag_of(obj: dict) -> TagChoice:
    """The tag a card event names."""
    uid = normalize_uid(obj["uid"]) if obj.get("uid") else None
    label = obj.get("card") or f"uid:{uid}"
    if obj.get("deck"):
        label += f"/{obj['deck']}"
    return TagChoice(label, card=obj.get("card"), deck=obj.get("deck"), uid=uid)


def _event_text(obj: dict) -> str:
    ev = obj["ev"]
    what = obj.get("card") or obj.get("uid") or obj.get("name") or obj.get("players") or ""
    if obj.get("deck"):
        what = f"{what}/{obj['deck']}"
    return f"{ev} {what}".strip()
