"""The rule book rendered for people: ``docs/RULEBOOK.md``, read beside RULES.md."""

from __future__ import annotations

from dealerbox.rules import engine  # noqa: F401  (loads every outcome into the book)
from dealerbox.rules.book import ANSWERS_OPEN_STEP, ANY, GUARD_DOCS, OUTCOMES, PLAYING, RULE_BOOK
from dealerbox.rules.corrections import ANSWERS, EFFECTS
from dealerbox.rules.open_steps import (AGAIN, ANNOUNCED, MOMENTS, RULINGS, STEP_CONTRACTS, UNSEEN_STEPS,
                                        steps_answered_by)
from dealerbox.rules.procedures import BUILDERS
from dealerbox.rules.profiles import ANY_IRREGULARITY, OWN_PROCEDURES_ONLY, PROCEDURES, load_profile

_HEADER = """\
# The rule book

Generated from `dealerbox/rules/book.py` by `tests/rules/test_book.py`; do not edit by hand
(`DEALERBOX_WRITE_RULEBOOK=1 pytest tests/rules/test_book.py` rewrites it).

For each event (CONTRACT.md) the engine tries the rules below in order. A rule applies
in the phases listed when all its guards hold (`not X` negates a guard; "open step" is the
open-steps table's: the outcome takes the answer of that step, and applies only while it is open); the first that
applies decides, except the ones marked *goes on*, bookkeeping that the later rules rely
on. After every event the open correction's steps are ticked off by what the box
observes (`ack` ticks a step it cannot see). An irregularity's correction is the
procedure the table's profile chooses; the last table lists the choices of the shipped
profiles with their rule sources (ids as in RULES.md, sources as in the seed texts).
"""


def _phases(phases) -> str:
    if tuple(phases) == ANY:
        return "any"
    if tuple(phases) == PLAYING:
        return "in a hand"
    return ", ".join(phases)


def _first_source(sources: str) -> str:
    return sources.split(";")[0].strip()


def _first_line(fn) -> str:
    return (fn.__doc__ or "").strip().split("\n")[0]


def _first_paragraph(fn) -> str:
    return " ".join((fn.__doc__ or "").strip().split("\n\n")[0].split())


def render_markdown(profiles=("tda-2019", "cz-c40")) -> str:
    """The rule book, its guards, outcomes and procedures, and the profiles' choices, as Markdown."""
    loaded = [load_profile(p) for p in profiles]
    out = [_HEADER]
    trigger = None
    for rule in RULE_BOOK:
        if rule.trigger != trigger:
            trigger = rule.trigger
            head = f"| phases | guards | outcome | may raise (RULES.md id, first source in {loaded[0].name}) |"
            out += ["", f"## `{trigger}`", "", head, "| --- | --- | --- | --- |"]
        gate = " or ".join(f"`{k}`" for k in sorted(steps_answered_by(rule.outcome))) or "none"
        guards = ", ".join(f"open step {gate}" if g == ANSWERS_OPEN_STEP else f"`{g}`" for g in rule.guards) or "-"
        what = f"`{rule.outcome}`" + (" (goes on)" if rule.goes_on else "")
        raises = ", ".join(f"`{r}` ({_first_source(loaded[0][r].sources)})" for r in rule.raises) or "-"
        out.append(f"| {_phases(rule.phases)} | {guards} | {what} | {raises} |")
    used_guards = sorted({g.removeprefix("not ") for r in RULE_BOOK for g in r.guards} - {ANSWERS_OPEN_STEP})
    out += ["", "## Guards", "", "| guard | holds when |", "| --- | --- |"]
    out += [f"| `{g}` | {GUARD_DOCS[g]} |" for g in used_guards]
    used = sorted({r.outcome for r in RULE_BOOK})
    out += ["", "## Outcomes", "", "| outcome | what it does |", "| --- | --- |"]
    out += [f"| `{o}` | {_first_line(OUTCOMES[o])} |" for o in used]
    out += ["", "## Procedures", "", "| procedure | what the dealer is told |", "| --- | --- |"]
    out += [f"| `{name}` | {_first_line(BUILDERS[name])} |" for name in sorted(BUILDERS)]
    out += ["", "## Open steps: their answers, wrong corrections and ends", "",
            "RULES.md: a correction never stays open silently while the hand moves past it. After every event",
            "the engine judges each open step from this table (`dealerbox/rules/open_steps.py`): first its",
            "answers, in any order of the buttons; then its wrong corrections: an action none allows is",
            "`WRONG_CORRECTION` at once (the rows above), and past the moments listed the step can no longer",
            "be done, so the engine rules as the column \"past it\" says; then its end. A step that moves a card",
            "(\"moves\") is never shown while another step the dealer must still do is open: the event that",
            "would open it overtook that step, and the engine rules `WRONG_CORRECTION`, floor, instead. A step",
            "the hand going on answers (\"follows\") lets an irregularity met on the way be judged as its own.",
            "A button named \"answered by\" ticks the step done as ACK does; an action the step \"waits",
            "through\" leaves it shown, still to be done (its answer comes after it), and never overtakes it.",
            "\"Seen by\" names what the box observes to count the step done (a step it sees holds back ACK",
            "from ticking the steps after it), \"pressed\" the panel button that is its own answer, and",
            "\"then\" what the step does to the tracking once done. \"Ended by\" names the reader or the button",
            "whose report ends each step: a step that moves a card the board reader sees names the board state",
            "that ends it (RULES.md: done only when the card has left the board), and a button answers only the",
            "step that names it, at that step. Only the steps no reader can see are ticked by ACK, or count done",
            "once a later step is seen done; they are:", "",
            ", ".join(f"`{k}`" for k in sorted(UNSEEN_STEPS)) + ".", "",
            "A step still to be done is shown again, `WRONG_CORRECTION` amber, at its \"again at\" moments",
            "(it ends when the step is done; it never counts for a later step):", ""]
    out += [f"- `{m}`: {what}" for m, what in AGAIN.items()]
    out += ["", "What the box observes:", ""]
    used_answers = sorted({c.seen_by for c in STEP_CONTRACTS.values()} - {None})
    out += [f"- `{a}`: {_first_paragraph(ANSWERS[a])}" for a in used_answers]
    out += ["", "What a step does once done:", ""]
    used_effects = sorted({c.then for c in STEP_CONTRACTS.values()} - {None})
    out += [f"- `{e}`: {_first_paragraph(EFFECTS[e])}" for e in used_effects]
    out += ["", "What the rule book's outcomes announce an event to be (a step names those it rules wrong, as",
            "\"wrong at\" with the put-right case, and those that show it rested on a reading the cards have",
            "since explained otherwise, as \"superseded at\": its correction leaves the panel with no ruling):", ""]
    out += [f"- `{m}`: {what}" for m, what in ANNOUNCED.items()]
    out += ["", "The moments:", ""]
    out += [f"- `{m}`: {what}" for m, what in MOMENTS.items()]
    out += ["", "The rulings:", ""]
    out += [f"- `{r}`: {what}" for r, what in RULINGS.items()]
    out += ["", "| step | answers | wrong correction | ends | ended by; the board state that ends it | past it | "
                "the table's data: seen by, pressed, then, wrong at, again at, superseded at, answered in the book, "
                "moves, follows, buttons, waits |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for key in sorted(STEP_CONTRACTS):
        c = STEP_CONTRACTS[key]
        past = ", ".join(f"`{m}`: {r}" for m, r in c.past) or "-"
        flags = [f"seen by `{c.seen_by}`"] if c.seen_by else []
        flags += [f"pressed {c.pressed.upper()}"] if c.pressed else []
        flags += [f"then `{c.then}`"] if c.then else []
        flags += [f"wrong at `{m}`: {case}" for m, case in c.wrong_at]
        flags += [f"again at {', '.join(f'`{m}`' for m in c.again_at)}"] if c.again_at else []
        flags += [f"superseded at `{m}`" for m in c.superseded_at]
        flags += [f"answered in the book by {', '.join(f'`{o}`' for o in c.answered_in_book)}"] * bool(
            c.answered_in_book)
        flags += [f for f, on in (("moves", c.moves), ("follows", c.follows)) if on]
        flags += [f"answered by {', '.join(b.upper().replace('_', ' ') for b in c.buttons)}"] if c.buttons else []
        flags += [f"waits through {', '.join(a.upper().replace('_', ' ') for a in c.waits)}"] if c.waits else []
        flags = ", ".join(flags) or "-"
        ended = c.ended_by + (f"; {c.board_state}" if c.board_state else "")
        out.append(f"| `{key}` | {c.answers} | {c.wrong} | {c.ends} | {ended} | {past} | {flags} |")
    anyone = ", ".join(f"`{p}`" for p in ANY_IRREGULARITY)
    own_only = ", ".join(f"`{rid}`" for rid in PROCEDURES if rid in OWN_PROCEDURES_ONLY)
    head = " | ".join(f"{p.name}: verdict, procedure" for p in loaded)
    out += ["", "## Irregularities and the profiles' choices", "",
            f"A profile may choose, for each id, one of its own procedures or, as a house rule, {anyone}:",
            "every irregularity of a hand may be ruled a misdeal, a void hand or a floor call, with the steps",
            "that procedure has where it is native. The sensing faults and the deck check's finding",
            f"({own_only}) keep their own: they never stop a hand or call the floor.", "",
            f"| RULES.md id | {head} | its own procedures | sources ({loaded[0].name}) |",
            "| --- | " + "--- | " * len(loaded) + "--- | --- |"]
    for rid in PROCEDURES:
        cells = " | ".join(f"{p[rid].verdict}, `{p[rid].procedure}`" for p in loaded)
        own = ", ".join(f"`{p}`" for p in PROCEDURES[rid])
        out.append(f"| `{rid}` | {cells} | {own} | {loaded[0][rid].sources} |")
    return "\n".join(out) + "\n"
