"""What the engine tells the panel: decisions made of steps (CONTRACT.md, "Decisions")."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Step:
    """One instruction to the dealer: a message key and the values that fill it in."""

    key: str
    params: tuple = ()

    def param(self, name, default=None):
        """The value of parameter *name*, or *default*."""
        for k, v in self.params:
            if k == name:
                return v
        return default


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision as CONTRACT.md defines it. ``steps`` are rendered by :mod:`dealerbox.domain.messages`."""

    t: float
    verdict: str
    irregularity: str | None
    cards: tuple[str, ...]
    rule: str
    steps: tuple[Step, ...]
    step: int
    phase: str

    def same_as(self, other: "Decision | None") -> bool:
        """True when *other* shows the panel the same thing (time and phase aside)."""
        return (other is not None and self.verdict == other.verdict and self.irregularity == other.irregularity
                and self.step == other.step and self.cards == other.cards and self.steps == other.steps)


def decision_to_dict(decision: Decision, messages) -> dict:
    """A decision as CONTRACT.md's JSON object, steps in the display language."""
    return {
        "t": decision.t,
        "verdict": decision.verdict,
        "irregularity": decision.irregularity,
        "cards": list(decision.cards),
        "rule": decision.rule,
        "steps": [messages.text(s) for s in decision.steps],
        "step": decision.step,
        "phase": decision.phase,
    }
