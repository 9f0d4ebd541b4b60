"""The deck check: a whole deck passed over a reader, judged against the registry.

Pure, like the engine: UIDs in, a report out. ``dealerbox deck check`` feeds it
from a reader. The findings are RULES.md rows seen outside a hand:
``MISSING_CARD`` (information only: 001 r9), ``FOREIGN_CARD`` found only in the
stub (play on, change the deck: 001 r3), ``DUPLICATE_CARD`` (two tags for one
card, or one tag twice: a clone), ``UNKNOWN_TAG`` and jokers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dealerbox.domain.cards import DECK_52, JOKER
from dealerbox.domain.decisions import Decision, Step
from dealerbox.errors import RegistryError
from dealerbox.rules.profiles import Profile, load_profile
from dealerbox.domain.decks import DeckRegistry, normalize_uid


@dataclass
class DeckReport:
    """What a deck check found. ``fit_for_play`` is the verdict for the deck."""

    deck: str
    seen: int = 0
    cards: dict[str, list[str]] = field(default_factory=dict)   # card -> UIDs seen
    missing: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)          # cards seen under two tags, or a tag seen twice
    foreign: list[tuple[str, str]] = field(default_factory=list)  # (deck, card)
    jokers: list[str] = field(default_factory=list)               # UIDs
    unknown: list[str] = field(default_factory=list)              # UIDs (malformed ones as given)
    decisions: list[Decision] = field(default_factory=list)

    @property
    def fit_for_play(self) -> bool:
        """Nothing missing, doubled, foreign or unknown."""
        return not (self.missing or self.duplicates or self.foreign or self.unknown)

    def to_dict(self) -> dict:
        """The report as a JSON object."""
        return {
            "deck": self.deck, "seen": self.seen, "fit_for_play": self.fit_for_play,
            "missing": self.missing, "duplicates": self.duplicates,
            "foreign": [{"deck": d, "card": c} for d, c in self.foreign],
            "jokers": self.jokers, "unknown": self.unknown,
        }


def check_deck(uids, registry: DeckRegistry, deck: str | None = None,
               profile: Profile | None = None) -> DeckReport:
    """Judge the tags read from one pass of a deck (in any order; repeats count)."""
    deck = deck or registry.active
    profile = profile or load_profile()
    report = DeckReport(deck)
    seen_uids: set[str] = set()
    for raw in uids:
        report.seen += 1
        try:
            uid = normalize_uid(raw)
        except RegistryError:
            report.unknown.append(str(raw))
            continue
        if uid in seen_uids:
            tag = registry.lookup(uid)
            card = tag.card if tag else f"uid:{uid}"
            if card not in report.duplicates:
                report.duplicates.append(card)
            continue
        seen_uids.add(uid)
        tag = registry.lookup(uid)
        if tag is None:
            report.unknown.append(uid)
        elif tag.deck != deck:
            report.foreign.append((tag.deck, tag.card))
        elif tag.card == JOKER:
            report.jokers.append(uid)
        else:
            report.cards.setdefault(tag.card, []).append(uid)
    for card, tags in report.cards.items():
        if len(tags) > 1 and card not in report.duplicates:
            report.duplicates.append(card)
    report.missing = [c for c in DECK_52 if c not in report.cards]

    def add(rid, cards, key, verdict=None):
        report.decisions.append(Decision(0.0, verdict or profile[rid].verdict, rid, tuple(cards),
                                         profile[rid].sources, (Step(key),), 0, "deck_check"))
    if report.missing:
        add("MISSING_CARD", report.missing, "deck.missing")
    if report.duplicates:
        add("DUPLICATE_CARD", report.duplicates, "deck.duplicate", verdict="floor")
    if report.foreign:
        add("FOREIGN_CARD", [c for _, c in report.foreign], "deck.foreign_in_stub", verdict="ok")
    if report.unknown:
        add("UNKNOWN_TAG", [f"uid:{u}" for u in report.unknown], "deck.unknown")
    return report
