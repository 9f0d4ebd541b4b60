"""Issue 46: green is a promise about the cards on the table, tested against a physical table.

Hands are dealt on a model of the table (:mod:`hardware_sim.physical_table`: the stub in order,
the seats, the burns, the board as its antenna sees it, perfect reads at the shoe's mouth) by a
dealer (:mod:`hardware_sim.physical_dealer`) who makes every mistake RULES.md names and then puts
it right as the box's step says, puts it right wrongly, or ignores it and deals on. The engine is
fed the table's events and its panel is what the dealer reads. Judged from the cards alone
(:mod:`bench.physical_audit`), never from the engine's own model:

- at each ROUND DONE where the LED is green, the board holds exactly what the street requires (its
  count, no joker, no card of another deck, no two cards of one face, each street after a burn of
  its own or the exception the procedure names), no grace period is running, and, where the dealer
  did all the box said, every seat holds its hole cards;
- a hand with no mistake gets no decision but a plain ok;
- every mistake gets a decision other than green within its street;
- every wrong answer to a step the box can see gets a ruling within its street;
- the engine never raises.

The hands and mistakes dealt per kind are printed (``pytest -s``) and put in the test report.
"""

from bench.physical_audit import describe_finding, run_hands
from hardware_sim.physical_dealer import KINDS

HANDS = 4000
SEED = 46


def test_green_is_never_wrong_on_a_physical_table(record_property):
    report = run_hands(HANDS, seed=SEED)
    summary = report.summary()
    print("\n" + summary)
    record_property("physical_table", summary)
    # The run dealt what it claims: every kind of mistake, clean hands, green ROUND DONEs judged.
    assert report.hands == HANDS and report.clean_hands > HANDS // 10
    assert set(KINDS) <= set(report.mistakes), set(KINDS) - set(report.mistakes)
    assert report.green_checks > HANDS
    assert not report.unknown_steps, report.unknown_steps
    worst = sorted(report.findings.items(), key=lambda kv: -kv[1][0])
    details = "\n\n".join(f"{n} hands: " + describe_finding(f) for _, (n, f) in worst[:3])
    assert not report.findings, f"{summary}\n\nthe smallest hand of the largest families:\n{details}"
