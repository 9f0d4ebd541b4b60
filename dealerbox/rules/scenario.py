"""Scenario files: events in, expected decisions, checked by the engine.

A scenario is a JSON Lines file a technician can write or record:

- the first line is a header: ``{"scenario": "...", "profile": "tda-2019",
  "raises": ["EXPOSED_DEAL"]}``. ``raises`` lists the irregularities the run
  must show, in the order they first appear (a correction that shows again
  once a wrong step is put right is not counted twice); ``[]`` means the run
  must raise nothing; ``"mouth_sensor": false`` says the run only holds on a table
  without a mouth sensor (a card leaves the stub with no event at all), which the
  noise benchmark uses; the engine itself goes by ``new_hand``'s ``mouth_sensor``;
- every other line is a CONTRACT.md event, or an expectation
  ``{"expect": {...}}`` checked against the latest decision: any of the
  decision's keys (``verdict``, ``irregularity``, ``step``, ``phase``,
  ``cards``; ``phase`` is where the hand stands now), plus ``step_key`` (the message key of the current step) and
  ``where`` (``{"Ah": "burn"}``: where the box believes a card is).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from dealerbox.rules.engine import HandEngine
from dealerbox.domain.events import Event
from dealerbox.rules.profiles import load_profile


@dataclass
class ScenarioResult:
    """What one scenario file did: the expectations that failed and the ids raised."""

    name: str
    failures: list[str] = field(default_factory=list)
    raised: list[str] = field(default_factory=list)
    decisions: int = 0

    @property
    def ok(self) -> bool:
        """Every expectation held (and the ids raised were the ones the header names)."""
        return not self.failures


def check_expectation(engine: HandEngine, want: dict, line: int) -> list[str]:
    """Compare the engine's latest decision with an ``expect`` line; one message per mismatch."""
    d = engine.decision
    got = {
        "verdict": d.verdict, "irregularity": d.irregularity, "step": d.step, "phase": engine.phase,
        "cards": list(d.cards),
        "step_key": d.steps[d.step].key if d.step < len(d.steps) else None,
    }
    fails = []
    for key, value in want.items():
        if key == "where":
            for card, place in value.items():
                if engine.where.get(card) != place:
                    fails.append(f"line {line}: {card} is at {engine.where.get(card)!r}, expected {place!r}")
        elif key not in got:
            fails.append(f"line {line}: unknown expectation {key!r}")
        elif got[key] != value:
            fails.append(f"line {line}: {key} is {got[key]!r}, expected {value!r}")
    return fails


def run_scenario(path) -> ScenarioResult:
    """Run one scenario file; the result lists every expectation that failed."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    result = ScenarioResult(header.get("scenario", path.stem))
    engine = HandEngine(load_profile(header.get("profile", "tda-2019")))
    for n, text in enumerate(lines[1:], 2):
        if not text.strip():
            continue
        obj = json.loads(text)
        if "expect" in obj:
            result.failures += check_expectation(engine, obj["expect"], n)
            continue
        for d in engine.feed(Event.from_dict(obj)):
            result.decisions += 1
            if d.irregularity is not None and d.irregularity not in result.raised:
                result.raised.append(d.irregularity)
    want = header.get("raises")
    if want is not None and result.raised != want:
        result.failures.append(f"raised {result.raised}, expected {want}")
    return result
