"""The open-steps table as the engine runs it: a property test over every step a hand can show.

RULES.md ("How the box tells cases apart"): no correction stays open silently while the hand moves
on; an action no answer of the open step allows is WRONG_CORRECTION (amber while the hand can be put
right, floor once it cannot). ("Sensing faults"): a sensing fault never explains a step left undone.

Hands are cut at a moment a correction's step is open, and then the dealer does one thing no answer
of that step allows (:data:`ACTIONS`). The hands: generated ones of every irregularity kind the book
can produce (:data:`tests.rules.test_open_steps.KINDS`, a Hypothesis property), and a sweep over every
bundled scenario story and a few more hands (:func:`_extra_stories`), each under both shipped
profiles, with and without a mouth sensor, where every step the story opens meets every action.
Whatever the step, the box must

- never fall silent: the step is answered (its correction finished), still shown, on record, or
  judged (a ruling follows: WRONG_CORRECTION, or the irregularity the action itself is);
- rule WRONG_CORRECTION only amber or floor;
- never blame a sensing fault for a card a reader still sees: no dead-tag question or "not read"
  ruling while the board reader sees every place of the street, and never a DOUBLE_BURN of two burns
  with a ROUND DONE between them;
- never show a correction that moves a card while another correction's step is still open.

The generated steps and actions are counted (:data:`GENERATED`, :data:`PAIRS`); the last test checks
the count covers every step of the table a hand can reach with every action, and prints it."""

import json
import random
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dealerbox.domain.events import Event
from dealerbox.domain.decks import simulation_registry
from dealerbox.rules.engine import HandEngine
from dealerbox.rules.profiles import load_profile
from dealerbox.rules.open_steps import MOVES_A_CARD, STEP_CONTRACTS, must_be_done
from hardware_sim.script import HandScript
from tests.rules.test_open_steps import KINDS, STREETS, _play

#: What the dealer may do that no answer of an open step allows (the issue's list).
ACTIONS = ("next_street", "round_done", "hand_over", "badge", "second_irregularity", "board_card")
#: The actions that move the hand past a step: a later street's card, the round called done, the hand
#: over. After one, a step the dealer must still do is answered, ended as the table says, or ruled on.
MOVES_PAST = frozenset({"next_street", "round_done", "hand_over"})
#: The sensing-fault step that says a card may lie on the board that neither reader saw (a dead tag).
NOT_READ = frozenset({"unread.street_card_there"})
#: Steps of the table no cut of a hand in play can leave open for an action to overtake, and why.
UNREACHABLE = {
    # The stops: the hand is over until NEW HAND; every action is flagged after the stop.
    "halt.misdeal", "halt.misdeal_called", "halt.void", "halt.void_duplicate", "halt.void_foreign",
    "halt.card_after_stop",
    # What the box saw, said first in SEAT_ERROR's stop (a misdeal before the first round, else late).
    "seat.wrong_seat", "seat.not_dealt_in", "seat.wrong_count",
    # Shown with the hand over or between hands (RABBIT_HUNT; the deck check's notices; the record).
    "rabbit.not_allowed", "unread.check_deck", "unread.check_tags", "over.left_open",
    # The notice of a reader that misses reads, shown from the next hand on (READER_DEGRADED's run of
    # unread draws is tests/rules/test_sensing.py's).
    "reader.misses_reads",
    # A house's floor call for an id that has a correction of its own: no shipped profile makes one.
    "floor.house_rule",
    # Why a step is shown again (WRONG_CORRECTION amber): done as it is said, never the step shown.
    "wrong.button_not_the_answer", "wrong.drawn_before_button", "wrong.laid_over",
    # The panel through a grace period: no correction's step, the cards decide when it ends.
    "grace.cards_decide",
    # The engine could not place an event (tests/rules/test_fuzz.py holds that it never happens on the
    # hands it deals), and the stub's end (ten-handed Omaha with corrections: test_engine's own test).
    "floor.cannot_place", "stub.runs_out",
}
#: step key -> how many times it was open when an action came; (step, action) pairs.
GENERATED: Counter = Counter()
PAIRS: set = set()


def _scenario_stories():
    """The bundled scenario files' events (tests/scenarios/): every RULES.md row and the corrected
    hand after it, so that every step of a correction is open at some cut."""
    stories = {}
    for path in sorted(SCENARIOS.glob("*.jsonl")):
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        stories[path.stem] = [e for e in lines[1:] if "ev" in e]
    return stories


def _extra_stories():
    """Hands no bundled scenario tells, for the steps they open."""
    stories = {}
    s = HandScript(seed=3)
    s.new_hand(4).deal()
    flop = [s.draw() for _ in range(3)]                  # a flop with no burn, before ROUND DONE
    for card in flop:
        s.on(card)
    for card in flop:
        s.off(card)
    s.button("reshuffled")
    s.stub[:0] = flop
    s.reshuffle_stub()
    s.round_done()
    s.street(3)
    stories["premature_flop_without_a_burn"] = s.events
    s = HandScript(seed=4)
    s.new_hand(3, mouth_sensor=True).deal().round_done().flop().round_done().turn().round_done().river()
    s.emit("shoe", unread=True)                         # a card counted after the river, its tag unread
    s.button("ack")
    stories["unread_card_after_the_river"] = s.events
    for name, card in (("boxed", None), ("joker", "joker")):
        s = HandScript(seed=5)
        s.new_hand(3).deal().round_done()
        s.draw()
        s.draw(card)                                      # met as the flop's first card
        if name == "boxed":
            s.button("boxed")
        s.button("ack")                                   # shown and set with the burns
        s.street(3, burn=False)
        stories[f"{name}_met_on_the_flop_acknowledged"] = s.events
    s = HandScript(seed=7)
    s.new_hand(5).deal().round_done().flop().round_done()
    s.draw()                                            # the turn's burn; the turn card's tag is dead
    s.round_done()                                      # is the card there?
    stories["dead_tag_on_the_turn"] = s.events
    s = HandScript(seed=6)
    s.new_hand(3).deal(2).draw("joker")                 # the third hole card a joker
    s.button("ack")
    s.deal(4)
    stories["joker_in_the_deal_acknowledged"] = s.events
    return stories


SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
STORIES = {**_scenario_stories(), **_extra_stories()}
#: The shipped profiles (firmware_config/rules/).
PROFILES_NAMES = ("tda-2019", "cz-c40")


@st.composite
def cut_hands(draw):
    """A generated hand of one irregularity kind: under either profile, with or without a mouth sensor,
    the dealer answering, ignoring or pressing buttons after the correction is shown."""
    profile = draw(st.sampled_from(sorted(PROFILES_NAMES)))
    mouth = draw(st.booleans())
    kind = draw(st.sampled_from(KINDS))
    street = draw(st.sampled_from(STREETS))
    behaviour = draw(st.sampled_from(("answer", "ignore", "buttons")))
    events, shown_at = _play(draw, kind, street, mouth, behaviour)
    return kind, profile, events, shown_at


def story_runs():
    """Every bundled scenario under both profiles, with its mouth sensor as written and the other way
    round: (name, profile, events)."""
    for name in sorted(STORIES):
        for profile in sorted(PROFILES_NAMES):
            for flip in (False, True):
                events = [dict(e) for e in STORIES[name]]
                for e in events:
                    if flip and e["ev"] == "new_hand":
                        e["mouth_sensor"] = not e.get("mouth_sensor", False)
                yield f"{name}{' (mouth sensor flipped)' if flip else ''}", profile, events


PROFILES = {name: load_profile(name) for name in PROFILES_NAMES}
REGISTRY = simulation_registry()


def _engine(profile):
    return HandEngine(PROFILES[profile], REGISTRY)


def _open_steps(engine):
    """The corrections whose step is open (not a stop, not finished), newest last."""
    return [c for c in engine.corrections if not c.halting and c.current < len(c.todos)]


def _stub_cards(engine):
    return sorted(k for k, p in engine.where.items() if p == "stub" and ":" not in k)


def _action(name, engine, t, rng):
    """The events of *name*, from the engine's state at time *t*."""
    stub = _stub_cards(engine)
    rng.shuffle(stub)
    if name == "next_street":                        # a burn, and a card laid: the next street
        return [{"t": t + 0.5, "ev": "shoe", "card": stub[0]}, {"t": t + 1.0, "ev": "shoe", "card": stub[1]},
                {"t": t + 1.5, "ev": "board_on", "card": stub[1]}]
    if name in ("round_done", "hand_over"):
        return [{"t": t + 0.5, "ev": "button", "name": name}]
    if name == "badge":
        return [{"t": t + 0.5, "ev": "dealer", "dealer": "D4711"}]
    if name == "board_card":                         # one more card drawn and laid
        return [{"t": t + 0.5, "ev": "shoe", "card": stub[0]}, {"t": t + 1.0, "ev": "board_on", "card": stub[0]}]
    out = sorted(k for k, p in engine.where.items() if p not in ("stub", "muck") and ":" not in k)
    second = rng.choice(["foreign", "joker", "again"] if out else ["foreign", "joker"])
    if second == "foreign":                          # a card of another deck
        return [{"t": t + 0.5, "ev": "shoe", "card": stub[0], "deck": "B"}]
    if second == "joker":
        return [{"t": t + 0.5, "ev": "shoe", "card": "joker"}]
    return [{"t": t + 0.5, "ev": "shoe", "card": rng.choice(out)}]   # a card already out, drawn again


def _board_places(engine) -> int:
    """The board places of the streets opened so far (a street counts once its round is done)."""
    opened = {"flop": 3, "turn": 4, "river": 5, "showdown": 5}
    return opened.get(engine.phase, 0)


def cuts_of(profile, events, shown_at) -> list[tuple[int, str]]:
    """(event count, the step open then) for each moment a correction's step is open, from the moment
    it was shown, while the hand is in play."""
    engine = _engine(profile)
    cuts = []
    for i, e in enumerate(events):
        engine.feed(Event.from_dict(e))
        open_now = _open_steps(engine)
        if i + 1 >= shown_at and open_now and engine.phase not in ("over", "halted", "idle"):
            corr = open_now[-1]
            cuts.append((i + 1, corr.todos[corr.current].step.key))
    return cuts


def _left_open(d) -> bool:
    """*d* is the record of a correction left open when its hand ended."""
    return any(s.key == "over.left_open" for s in d.steps)


def _rulings(engine, out) -> list:
    """The decisions of one event that rule something new: a correction the event opened (the panel
    shows the newest correction), or a notice put on record. A correction opened earlier shown again
    (its step advanced, or the newer one finished) rules nothing, nor does a left-open record."""
    new = [c for c in engine.corrections if c.born == engine.seq and c.irregularity is not None]
    found = [d for d in out[:-1] if d.irregularity is not None and not _left_open(d)]
    if out and new and out[-1].irregularity is not None:
        found.append(out[-1])
    return found


#: The deal, then the streets in order: where a card laid or a correction stands in the hand.
_ORDER = {"deal": 0, "preflop": 0, **{name: i + 1 for i, name in enumerate(STREETS)}}


def _later_street(engine, card, level) -> bool:
    """*card*, laid by the action, holds a place of a later street than *level* (a street, or the
    phase the hand was in): the hand moved past what the step stands for."""
    st = engine.hand.street_of(card)
    return st is not None and _ORDER[st.name] > _ORDER.get(level, 0)


def judge_action(kind, profile, events, cut, action) -> list[str]:
    """Play *events* up to *cut*, then *action*: what the box got wrong (none, if it followed RULES.md)."""
    engine = _engine(profile)
    for e in events[:cut]:
        engine.feed(Event.from_dict(e))
    shown = _open_steps(engine)[-1]
    todo = shown.todos[shown.current]
    step = todo.step.key
    must_do = must_be_done(shown)
    GENERATED[step] += 1
    PAIRS.add((step, action))
    seen_on_board = sum(1 for p in engine.where.values() if p == "board")
    before = {(c.irregularity, tuple(t.step for t in c.todos)) for c in engine.corrections}
    places = _board_places(engine)
    level = engine.phase                               # the street being dealt when the action came
    acted = _action(action, engine, events[cut - 1]["t"], random.Random(cut))
    tail = acted + [{"t": acted[-1]["t"] + 4.0, "ev": "tick"}]  # every grace period decides
    played = events[:cut] + acted
    decisions, problems = [], []
    ruled, on_record = [], False
    for e in tail:
        out = engine.feed(Event.from_dict(e))
        decisions += out
        ruled += _rulings(engine, out)
        on_record = on_record or any(_left_open(d) and d.irregularity == shown.irregularity
                                     and d.cards == shown.cards for d in out)
        still_open = shown in engine.corrections and must_be_done(shown)
        for d in out:
            current = {s.key for s in d.steps[d.step:]}
            if still_open and d.irregularity not in (None, shown.irregularity, "WRONG_CORRECTION") \
                    and current & MOVES_A_CARD:
                problems.append(f"moves a card while {step} is open: {d.irregularity} {sorted(current)}")
    answered = all(t.done for t in shown.todos)
    panel = engine.decision
    still_shown = shown in engine.corrections or (panel.irregularity, panel.verdict, panel.cards) == (
        shown.irregularity, shown.verdict, shown.cards)
    ended = action == "hand_over" and shown.irregularity is None    # nothing to put on record
    moved_past = action in ("round_done", "hand_over") or (
        action == "next_street" and _later_street(engine, acted[-1]["card"], shown.street or level))
    waits = action in STEP_CONTRACTS[step].waits and shown in engine.corrections
    if moved_past and must_do and not ((shown.verdict == "floor" or waits) and still_shown):
        # The hand moved past the step: it stays open silently no longer. Its answer, its end as the
        # table writes it (HAND OVER puts it on record), a WRONG_CORRECTION, or the action's own
        # irregularity; the step still shown, or shown again a step further, is none of these. (A
        # floor verdict still shown is the floor's: the LED blinks red, and the box cannot know what
        # the floor rules, RULES.md "Profiles". A step the table says waits through the action is
        # still to be done: its answer comes after it.)
        if not (todo.done or (action == "hand_over" and on_record) or ruled or ended):
            problems.append(f"left open past {action}: {step} still {'shown' if still_shown else 'dropped'}")
    elif shown.verdict != "ok" and not (answered or still_shown or ruled or ended or on_record):
        problems.append(f"silence: {step} dropped")
    for d in decisions:
        if any(s.key == "over.left_open" for s in d.steps):
            continue                                 # the record of a step left open when the hand ended
        if d.irregularity == "WRONG_CORRECTION" and d.verdict not in ("correct", "floor"):
            problems.append(f"WRONG_CORRECTION {d.verdict}")
        if d.irregularity == "UNREAD_CARD" and {s.key for s in d.steps} & NOT_READ and places \
                and seen_on_board >= places and (d.irregularity, d.steps) not in before:
            problems.append("a card the board reader sees called unread")
        if d.irregularity == "DOUBLE_BURN":
            idx = [max((j for j, e in enumerate(played) if e.get("card") == c and e["ev"] == "shoe"), default=None)
                   for c in d.cards]
            if None not in idx and any(_ends_a_street(played, j) for j in range(min(idx), max(idx))):
                problems.append("DOUBLE_BURN of burns of two streets")
    return problems


def _ends_a_street(played: list[dict], j: int) -> bool:
    """``played[j]`` is a ROUND DONE that ends a street: not a repeat of the one before it with no card
    laid on the board between them (ROUND DONE again while a short deal's count waits is the same press,
    RULES.md; open_steps.WAITS), so burns drawn on either side of a repeat may be one street's."""
    if played[j].get("name") != "round_done":
        return False
    for e in reversed(played[:j]):
        if e["ev"] == "board_on":
            return True
        if e.get("name") == "round_done":
            return False
    return True


@settings(max_examples=500, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cut_hands(), st.data())
def test_an_action_no_answer_allows_is_judged_never_silent_never_a_sensing_fault(hand, data):
    kind, profile, events, shown_at = hand
    cuts = cuts_of(profile, events, shown_at)
    if not cuts:
        return
    # A step at a time, so that the steps seldom open get their share.
    steps = sorted({step for _, step in cuts})
    step = data.draw(st.sampled_from(steps), label="step")
    cut = data.draw(st.sampled_from([c for c, s in cuts if s == step]), label="cut")
    action = data.draw(st.sampled_from(ACTIONS), label="action")
    problems = judge_action(kind, profile, events, cut, action)
    assert not problems, (kind, profile, action, problems, events[:cut][-4:])


_SWEEP: list = []


def sweep() -> list:
    """The sweep, once per process: in every hand story, under both profiles and both mouth sensor
    settings, each step the hand opens meets an action no answer allows; a step met for the first
    time meets all of them, later ones the next in turn. Returns what the box got wrong."""
    if _SWEEP:
        return _SWEEP[0]
    failures = []
    turn = 0
    met = set()
    for name, profile, events in story_runs():
        firsts = {}
        for cut, step in cuts_of(profile, events, 0):
            firsts.setdefault(step, cut)
        for step, cut in firsts.items():
            new = [a for a in ACTIONS if (step, a) not in met]
            for action in new or [ACTIONS[turn % len(ACTIONS)]]:
                turn += 1
                met.add((step, action))
                for problem in judge_action(name, profile, events, cut, action):
                    failures.append((name, profile, step, action, problem))
    _SWEEP.append(failures)
    return failures


def test_every_step_of_every_scenario_overtaken_by_every_action():
    failures = sweep()
    assert not failures, failures[:10]


def test_the_property_covered_every_step_a_hand_can_reach_and_every_action(record_property):
    """Every step of the table but the unreachable ones was open when an action came, and met every
    action (the sweep's count, with the property's when it ran in the same process)."""
    sweep()
    covered = set(GENERATED)
    reachable = set(STEP_CONTRACTS) - UNREACHABLE
    actions = Counter(a for _, a in PAIRS)
    summary = (f"open-steps property: {len(covered)} step kinds of {len(STEP_CONTRACTS)} in the table "
               f"({len(reachable)} reachable), {sum(GENERATED.values())} actions generated, "
               f"{len(PAIRS)} (step, action) pairs; per action: {dict(sorted(actions.items()))}")
    print("\n" + summary)                              # shown with -s; in the junit report as a property
    record_property("open_steps_generated", summary)
    assert covered <= set(STEP_CONTRACTS), covered - set(STEP_CONTRACTS)
    assert reachable <= covered, sorted(reachable - covered)
    missing = sorted((step, a) for step in reachable for a in ACTIONS if (step, a) not in PAIRS)
    assert not missing, missing
