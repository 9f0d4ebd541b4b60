"""Hands on the physical table, judged by the cards: is the box ever green over a wrong table?

The judge that tests/rules/test_physical_table.py and bench_rules_green.py share (it drives the
engine and reads the LED, which the simulator in hardware_sim/ may not import).

:func:`run_hands` deals seeded tables of hands (:func:`plan_table`: both profiles, hold'em
and Omaha, 2-10 players, with and without a mouth sensor, the button moving, most hands
ending before the river) through a :class:`~dealerbox.rules.engine.HandEngine`, the
dealer of :mod:`hardware_sim.physical_dealer` reading its panel after every move. It
judges from the physical table alone (RULES.md, "Green is a promise about the cards"):

- ``green_wrong``: at a ROUND DONE where the LED is green, the board is not what the street
  requires (its count, a joker, a card of another deck, two cards of one face, a street
  with no burn of its own but where the procedure names the exception), or a seat does not
  hold its hole cards;
- ``false_alarm``: a hand with no mistake got a decision other than a plain ``ok``;
- ``missed``: a mistake got no decision other than green within its street;
- ``unruled``: a wrong answer to a step got no ruling within its street;
- ``raised``: the engine raised on an event (CONTRACT.md allows no such thing).

Every finding is kept with its hand (events, decisions, the table at the moment) so that
a family's smallest hand can be written out as a scenario.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from dealerbox.domain.cards import JOKER
from dealerbox.domain.events import Event
from dealerbox.rules.engine import HandEngine
from dealerbox.service.panel import LED_FOR_VERDICT
from hardware_sim.physical_dealer import (DEAL_KINDS, KINDS, STREET_KINDS, WAYS_FOR, Dealer, HandPlan)
from hardware_sim.physical_table import STREET_ORDER, PhysicalTable

PROFILES = ("tda-2019", "cz-c40")
#: Hands one table deals before another (other profile, other sensors) takes over.
HANDS_PER_TABLE = 25
#: Share of hands dealt with no mistake.
CLEAN_SHARE = 0.25


@dataclass
class Finding:
    """One thing the box got wrong, with its hand."""

    family: str                  # e.g. "green_wrong missed_burn/card_left"
    plan: HandPlan
    events: list
    decisions: list              # (event index, decision)
    detail: str

    @property
    def size(self) -> int:
        return len(self.events)


@dataclass
class AuditReport:
    """What was dealt and what the box got wrong."""

    hands: int = 0
    clean_hands: int = 0
    hands_by_kind: Counter = field(default_factory=Counter)
    mistakes: Counter = field(default_factory=Counter)
    wrong_answers: Counter = field(default_factory=Counter)
    green_checks: int = 0
    findings: dict = field(default_factory=dict)     # family -> [count, smallest Finding]
    unknown_steps: Counter = field(default_factory=Counter)
    stub_ran_out: int = 0
    seat_misnamed: int = 0
    #: Hands with at least one finding of a check (``green_wrong``...), and hands by response.
    hands_with: Counter = field(default_factory=Counter)
    hands_by_response: Counter = field(default_factory=Counter)
    to_river: int = 0
    omaha: int = 0
    mouth: int = 0
    c40: int = 0
    green_wrong_by_response: Counter = field(default_factory=Counter)

    def judged(self, plan: HandPlan, checks: set) -> None:
        """Count one judged hand and the checks it failed."""
        self.hands_by_response[plan.response] += 1
        self.hands_with.update(checks)
        if "green_wrong" in checks:
            self.green_wrong_by_response[plan.response] += 1

    def add(self, finding: Finding) -> None:
        entry = self.findings.setdefault(finding.family, [0, finding])
        entry[0] += 1
        if finding.size < entry[1].size:
            entry[1] = finding

    def count(self, prefix: str) -> int:
        """Findings whose family starts with *prefix* (``green_wrong``, ``missed``...)."""
        return sum(n for fam, (n, _) in self.findings.items() if fam.startswith(prefix))

    def summary(self) -> str:
        lines = [f"physical table: {self.hands} hands ({self.clean_hands} with no mistake), "
                 f"{self.green_checks} green ROUND DONEs judged by the cards"]
        lines.append(f"  hands that reached the river's betting: {self.to_river}; Omaha: {self.omaha}; "
                     f"with a mouth sensor: {self.mouth}; under cz-c40: {self.c40}")
        lines.append("  hands by planned mistake: " + ", ".join(f"{k} {n}" for k, n in sorted(self.hands_by_kind.items())))
        lines.append("  hands by answer: " + ", ".join(f"{k} {n}" for k, n in sorted(self.hands_by_response.items())))
        lines.append("  mistakes made: " + ", ".join(f"{k} {n}" for k, n in sorted(self.mistakes.items())))
        lines.append("  wrong answers: " + ", ".join(f"{k} {n}" for k, n in sorted(self.wrong_answers.items())))
        for prefix in ("green_wrong", "false_alarm", "missed", "unruled", "raised"):
            lines.append(f"  {prefix}: {self.count(prefix)} findings in {self.hands_with[prefix]} hands")
        for fam, (n, _) in sorted(self.findings.items(), key=lambda kv: -kv[1][0]):
            lines.append(f"    {n:5d}  {fam}")
        if self.unknown_steps:
            lines.append("  steps the dealer had no handler for (it pressed ACK): "
                         + ", ".join(f"{k} {n}" for k, n in sorted(self.unknown_steps.items())))
        if self.seat_misnamed:
            lines.append(f"  SHORT_DEAL named a seat that was not the short one (the dealer dealt the short "
                         f"seat): {self.seat_misnamed}")
        if self.stub_ran_out:
            lines.append(f"  hands whose stub ran out: {self.stub_ran_out}")
        return "\n".join(lines)


def plan_table(rng: random.Random, hands: int) -> list[HandPlan]:
    """One table's run of hands: one profile and one kind of shoe; players come and go, the button moves."""
    profile = rng.choice(PROFILES)
    mouth = rng.random() < 0.5
    plans, button = [], rng.randrange(1, 11)
    for _ in range(hands):
        button = button % 10 + 1
        players = rng.randint(2, 10)
        hole = 4 if rng.random() < 0.3 else 2
        rounds = rng.choices((1, 2, 3, 4), weights=(30, 25, 15, 30))[0]
        kind = None if rng.random() < CLEAN_SHARE else rng.choice(KINDS)
        street = rng.choice(STREET_ORDER)
        if kind == "four_card_flop":
            street = "flop"
        elif kind in ("extra_board_card",):
            street = rng.choice(("turn", "river"))
        elif kind == "sixth_card":
            street = "river"
        if kind in STREET_KINDS:
            rounds = max(rounds, min(4, STREET_ORDER.index(street) + 2))
        elif kind in DEAL_KINDS or kind == "late_misdeal":
            rounds = max(rounds, 2)
        r = rng.random()
        ways = WAYS_FOR.get(kind, ())
        response = "right" if r < 0.4 or kind is None else "ignore" if r < 0.55 or not ways else rng.choice(ways)
        plans.append(HandPlan(profile, players, hole, mouth, rounds, kind, street, response,
                              spread=rng.random() < 0.4, button=button))
    return plans


def _is_green(decision) -> bool:
    return LED_FOR_VERDICT[decision.verdict][0] == "green"


class _Hand:
    """One hand's run: the engine fed by the table, the decisions kept, ROUND DONE judged."""

    def __init__(self, engine: HandEngine, plan: HandPlan, seed: int, t0: float, report: AuditReport):
        self.engine, self.plan, self.report = engine, plan, report
        self.table = PhysicalTable(seed=seed, listener=self.feed, t=t0)
        self.dealer = Dealer(self.table, lambda: engine.decision, plan, random.Random(seed + 1))
        self.decisions: list = []
        self.greens: list = []                   # (event index, faults) at each green ROUND DONE
        self.raised: str | None = None

    def feed(self, e: dict) -> None:
        if self.raised is not None:
            return
        i = len(self.table.events) - 1
        try:
            out = self.engine.feed(Event.from_dict(e))
        except Exception as exc:  # noqa: BLE001 - the finding is the exception itself
            self.raised = f"{type(exc).__name__}: {exc}"
            self.raised_at = i
            return
        self.decisions += [(i, d) for d in out]
        if e["ev"] == "button" and e["name"] == "round_done":
            self._judge_green(i)

    def _judge_green(self, i: int) -> None:
        log = self.dealer.log
        if not _is_green(self.engine.decision):
            return
        if log.floor_owned_from is not None and i >= log.floor_owned_from:
            return
        self.report.green_checks += 1
        faults = self.table.board_faults(self.dealer.rounds_over, frozenset(log.exempt))
        if self.plan.response == "right" and not log.unknown_steps:
            # A seat's cards no reader sees: they are the box's doing only when the dealer did all it said.
            faults += self.seat_faults()
        if self.engine.has_deadline:
            faults.append("green while a grace period runs")
        if faults:
            self.greens.append((i, faults, self.table.describe()))

    def seat_faults(self) -> list[str]:
        t, hole = self.table, self.plan.hole
        faults = []
        for pos, seat in enumerate(self.dealer.order, 1):
            cards = t.seats.get(seat, [])
            if len(cards) != hole:
                faults.append(f"seat {pos} holds {len(cards)} cards, not {hole}")
            if any(c.is_joker for c in cards):
                faults.append(f"seat {pos} holds a joker")
            if any(c.is_foreign for c in cards):
                faults.append(f"seat {pos} holds a card of another deck")
        faces = [c.face for s in t.seats.values() for c in s] + [c.face for c in t.board]
        dups = sorted({f for f in faces if faces.count(f) > 1 and f != JOKER})
        if dups:
            faults.append("two cards of one face in play: " + ", ".join(dups))
        return faults


def _window_end(events: list, begins: int, presses: int = 1) -> int:
    """The index after the *presses*-th ROUND DONE at or after *begins* (the end of its street), or the end."""
    seen = 0
    for i in range(max(0, begins), len(events)):
        e = events[i]
        if e["ev"] == "button" and e["name"] in ("round_done", "hand_over"):
            seen += 1
            if seen >= presses or e["name"] == "hand_over":
                return i + 1
        if e["ev"] == "new_hand" and i > begins:
            return i
    return len(events)


def _trigger(events: list, kind: str) -> int | None:
    """Where a card slipped into the stub first shows (None: it never came out this hand)."""
    seen = set()
    for i, e in enumerate(events):
        if e["ev"] != "shoe":
            continue
        card, deck = e.get("card"), e.get("deck")
        if kind.startswith("joker") and card == JOKER:
            return i
        if kind == "foreign" and deck is not None:
            return i
        if kind == "duplicate":
            if card in seen:
                return i
            seen.add(card)
    return None


def _judge(h: _Hand, report: AuditReport) -> None:
    plan, events = h.plan, h.table.events
    fam_tail = f"{plan.kind or 'clean'}/{plan.response}"
    failed: set = set()

    def add(family: str, detail: str) -> None:
        failed.add(family)
        report.add(Finding(f"{family} {fam_tail}", plan, list(events), list(h.decisions), detail))

    _checks(h, report, add)
    report.judged(plan, failed)


def _checks(h: _Hand, report: AuditReport, add) -> None:
    plan, log, events = h.plan, h.dealer.log, h.table.events

    if h.raised is not None:
        add("raised", f"at event {h.raised_at}: {h.raised}")
        return
    for i, faults, table in h.greens:
        add("green_wrong", f"green at ROUND DONE (event {i}): {'; '.join(faults)}; {table}")
    if plan.kind is None:
        bad = [(i, d) for i, d in h.decisions if d.verdict != "ok" or d.irregularity is not None]
        if bad:
            i, d = bad[0]
            add("false_alarm", f"event {i}: {d.verdict} {d.irregularity} {[s.key for s in d.steps]}")
        return
    for act in log.mistakes:
        begins = act.begins
        if begins < 0:
            begins = _trigger(events, act.what)
            if begins is None:
                continue                           # the slipped card never came out
        report.mistakes[act.what] += 1
        end = _window_end(events, begins)
        seen = [d for i, d in h.decisions if begins <= i < end]
        river_record = act.what == "double_burn" and act.street == "river"
        if not any(d.verdict != "ok" or (river_record and d.irregularity == "DOUBLE_BURN") for d in seen):
            add("missed", f"{act.what} on the {act.street} at event {begins}: no decision but green up to "
                          f"event {end}")
    for act in log.wrong:
        report.wrong_answers[act.what] += 1
        if not act.demand:
            continue
        before = [d for i, d in h.decisions if i < act.begins]
        if before and (before[-1].verdict != "correct" or before[-1].irregularity == "WRONG_CORRECTION"):
            continue                               # the floor is called already, or a wrong answer is shown
        shown = before[-1].irregularity if before else None
        end = _window_end(events, act.begins, act.presses)
        seen = [d for i, d in h.decisions if act.begins <= i < end]
        if not any(d.verdict != "ok" and (d.irregularity == "WRONG_CORRECTION" or d.irregularity != shown
                                          or d.verdict in ("floor", "misdeal", "void")) for d in seen):
            add("unruled", f"{act.what} at event {act.begins} (on the {act.street}, panel showing {shown}): "
                           f"no ruling up to event {end}")


def run_hands(hands: int, seed: int = 46) -> AuditReport:
    """Deal *hands* hands on seeded tables and judge every one; the report holds the findings."""
    rng = random.Random(seed)
    report = AuditReport()
    dealt = 0
    while dealt < hands:
        plans = plan_table(rng, min(HANDS_PER_TABLE, hands - dealt))
        engine = HandEngine(plans[0].profile)
        t = 0.0
        for plan in plans:
            h = _Hand(engine, plan, rng.randrange(1 << 30), t, report)
            h.dealer.play()
            t = h.table.t + 5.0
            report.hands += 1
            report.clean_hands += plan.kind is None
            report.hands_by_kind[plan.kind or "clean"] += 1
            report.to_river += h.dealer.rounds_over >= 4
            report.omaha += plan.hole == 4
            report.mouth += plan.mouth
            report.c40 += plan.profile == "cz-c40"
            report.unknown_steps.update(h.dealer.log.unknown_steps)
            report.stub_ran_out += h.dealer.log.stub_ran_out
            report.seat_misnamed += h.dealer.log.seat_misnamed
            if not h.dealer.log.stub_ran_out:
                _judge(h, report)
            if h.raised is not None:
                engine = HandEngine(plan.profile)     # a table whose engine raised is restarted
            dealt += 1
    return report


def describe_finding(f: Finding) -> str:
    """A finding's hand as a readable event list with the decisions, for a scenario test."""
    p = f.plan
    lines = [f"- family `{f.family}`: {p.profile}, {p.players} players, "
             f"{'Omaha' if p.hole == 4 else 'hold em'}, mouth sensor {'yes' if p.mouth else 'no'}",
             f"  {f.detail}", "", "```"]
    by_event: dict = {}
    for i, d in f.decisions:
        by_event.setdefault(i, []).append(d)
    for i, e in enumerate(f.events):
        if e["ev"] == "tick":
            if by_event.get(i):
                lines.append(f"{i:3d} t={e['t']} tick")
            else:
                continue
        else:
            rest = {k: v for k, v in e.items() if k not in ("t", "ev")}
            lines.append(f"{i:3d} t={e['t']} {e['ev']} {rest}")
        for d in by_event.get(i, []):
            step = d.steps[d.step].key if d.step < len(d.steps) else "-"
            lines.append(f"      -> {d.verdict} {d.irregularity} {list(d.cards)} step {d.step}/{len(d.steps)} "
                         f"{step} ({d.phase})")
    lines.append("```")
    return "\n".join(lines)


__all__ = ["AuditReport", "Finding", "describe_finding", "plan_table", "run_hands"]
