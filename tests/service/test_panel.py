"""The panel model: a decision becomes LCD lines, an LED state and a beep."""

import re

import pytest

from dealerbox.domain.cards import SUIT_GLYPH
from dealerbox.rules.engine import Decision, Step
from dealerbox.domain.messages import LANGUAGES, MESSAGES_DIR, load_messages
from dealerbox.service.panel import LED_FOR_VERDICT, PanelView, _wrap, render

GLYPHS = set(SUIT_GLYPH.values())


def language(lang):
    """The catalog of *lang*; skip when its file is not there yet (English must be)."""
    if lang != "en" and not (MESSAGES_DIR / f"{lang}.toml").exists():
        pytest.skip(f"{lang}.toml is not written yet")
    return load_messages(lang)


@pytest.fixture(params=LANGUAGES)
def messages(request):
    return language(request.param)


@pytest.fixture
def en():
    return language("en")


def decision(verdict="ok", irregularity=None, steps=(), step=0, phase="preflop", cards=(), rule="", t=1.0):
    return Decision(t, verdict, irregularity, tuple(cards), rule, tuple(steps), step, phase)


OK = decision(phase="preflop")
CORRECT = decision(
    "correct", "EXPOSED_DEAL",
    steps=(Step("exposed.finish_deal"),
           Step("exposed.replace", (("seat", 3), ("card", "Ah"))),
           Step("exposed.is_burn", (("card", "Ah"),)),
           Step("exposed.flop_no_burn")),
    step=1, phase="deal", cards=("Ah",), rule="000 par.1")
MISDEAL = decision("misdeal", "EXPOSED_TWICE", steps=(Step("halt.misdeal"),), phase="halted",
                   cards=("Ah", "Kd"), rule="002 r35A-1")
VOID = decision("void", "DUPLICATE_CARD", steps=(Step("halt.void_duplicate", (("card", "Qs"),)),),
                phase="halted", cards=("Qs",), rule="001 r4")
FLOOR = decision("floor", "UNKNOWN_TAG",
                 steps=(Step("unknown.call_floor", (("card", "uid:04A3C6CAE26180"),)),
                        Step("unknown.floor_confirms")),
                 phase="deal", cards=("uid:04A3C6CAE26180",), rule="001 r3")
ALL = {"ok": OK, "correct": CORRECT, "misdeal": MISDEAL, "void": VOID, "floor": FLOOR}
LEDS = {"ok": ("green", False), "correct": ("amber", False), "misdeal": ("red", False),
        "void": ("red", False), "floor": ("red", True)}


def assert_glass(view, cols, rows):
    assert isinstance(view, PanelView)
    assert len(view.lines) == rows
    assert view.rows == rows and view.cols == cols
    for line in view.lines:
        assert len(line) == cols, repr(line)
        assert all(ch in GLYPHS or 32 <= ord(ch) < 127 for ch in line), repr(line)


@pytest.mark.parametrize("verdict", list(ALL))
def test_every_verdict_fills_a_20x4_glass(messages, verdict):
    assert_glass(render(ALL[verdict], messages), 20, 4)


@pytest.mark.parametrize("verdict", list(ALL))
def test_every_verdict_fills_a_16x2_glass(messages, verdict):
    assert_glass(render(ALL[verdict], messages, cols=16, rows=2), 16, 2)


@pytest.mark.parametrize("verdict", list(ALL))
def test_led_follows_the_verdict(messages, verdict):
    view = render(ALL[verdict], messages)
    assert (view.led, view.blink) == LEDS[verdict]
    small = render(ALL[verdict], messages, cols=16, rows=2)
    assert (small.led, small.blink) == LEDS[verdict]


def test_led_table_covers_every_verdict():
    assert LED_FOR_VERDICT == LEDS


def test_ok_shows_the_verdict_and_the_phase(messages):
    view = render(OK, messages)
    top = view.lines[0]
    assert top.startswith(messages.verdicts["ok"])
    assert top.rstrip().endswith(messages.phases["preflop"])
    assert view.lines[1].strip() == messages.ok["lcd"]
    assert view.beep is False


def test_ok_in_every_phase_fits(messages):
    for phase in messages.phases:
        for cols, rows in ((20, 4), (16, 2)):
            view = render(decision(phase=phase), messages, cols=cols, rows=rows)
            assert_glass(view, cols, rows)
            assert view.lines[0].rstrip().endswith(messages.phases[phase])


def test_the_step_counter_is_on_line_1(messages):
    view = render(CORRECT, messages)
    assert view.lines[0].endswith(" 2/4")
    assert view.lines[0].startswith(messages.titles["EXPOSED_DEAL"][:16])
    small = render(CORRECT, messages, cols=16, rows=2)
    assert small.lines[0].endswith(" 2/4")


def test_the_counter_follows_the_step(en):
    for i in range(4):
        d = decision("correct", "EXPOSED_DEAL", steps=CORRECT.steps, step=i, phase="deal", cards=("Ah",))
        assert render(d, en).lines[0].endswith(f" {i + 1}/4")
    assert render(MISDEAL, en).lines[0].endswith(" 1/1")


def test_the_current_step_is_shown_in_full(messages):
    view = render(CORRECT, messages)
    body = " ".join(line.strip() for line in view.lines[1:]).split()
    assert body == messages.lcd(CORRECT.steps[1], 20).split(), "the step was cut"


def test_cards_are_shown_with_suit_glyphs(en):
    view = render(CORRECT, en)
    body = "".join(view.lines[1:])
    assert "A" + SUIT_GLYPH["h"] in body
    assert "3" in body  # the seat
    void = "".join(render(VOID, en).lines[1:])
    assert "Q" + SUIT_GLYPH["s"] in void
    assert "".join(render(VOID, en, cols=16, rows=2).lines[1:]).count(SUIT_GLYPH["s"]) == 1


@pytest.mark.parametrize("card, glyph", sorted(SUIT_GLYPH.items()))
def test_each_suit_has_its_glyph(en, card, glyph):
    d = decision("correct", "EXTRA_CARD", steps=(Step("extra.stop", (("card", "T" + card),)),), cards=("T" + card,))
    view = render(d, en)
    assert ("T" + glyph) in "".join(view.lines)
    assert glyph in "".join(render(d, en, cols=16, rows=2).lines)


def test_glyphs_are_the_cgram_slots():
    assert SUIT_GLYPH == {"c": "\x00", "d": "\x01", "h": "\x02", "s": "\x03"}


def test_unknown_tags_show_a_short_uid(en):
    from dealerbox.domain.cards import lcd_card

    assert lcd_card("uid:04A3C6CAE26180") == "?04A3C6"
    d = decision("correct", "EXTRA_CARD", steps=(Step("extra.stop", (("card", "uid:04A3C6CAE26180"),)),))
    assert "?04A3C6" in "".join(render(d, en).lines[1:])
    assert_glass(render(FLOOR, en), 20, 4)


def test_titles_name_the_irregularity(messages):
    for verdict in ("correct", "misdeal", "void", "floor"):
        d = ALL[verdict]
        assert render(d, messages).lines[0].startswith(messages.titles[d.irregularity][:16])


def test_manual_misdeal_and_floor_call_have_titles(messages):
    manual = decision("misdeal", None, steps=(Step("halt.misdeal_called"),), phase="halted", rule="002 r35C")
    view = render(manual, messages)
    assert view.lines[0].startswith(messages.titles["MANUAL_MISDEAL"])
    assert (view.led, view.blink, view.beep) == ("red", False, False)
    called = decision("floor", None, steps=(Step("floor.called"),), phase="flop")
    view = render(called, messages)
    assert view.lines[0].startswith(messages.titles["FLOOR_CALLED"])
    assert (view.led, view.blink) == ("red", True)


def test_every_step_renders_on_both_glasses(messages):
    # Every message key with plausible values: the frame always has the right shape.
    values = {"card": "Td", "got": "joker", "cards": ("Ah", "Kd", "Qs"), "seat": 10,
              "street": "river", "streets": ("turn", "river"), "dealer": "E123456789"}
    for key, forms in messages.steps.items():
        names = sorted(set(re.findall(r"{(\w+)}", forms["text"] + forms["lcd"] + forms["lcd16"])))
        step = Step(key, tuple((n, values[n]) for n in names))
        d = decision("correct", "WRONG_CORRECTION", steps=(step, step, step), step=2, phase="river")
        assert_glass(render(d, messages), 20, 4)
        assert_glass(render(d, messages, cols=16, rows=2), 16, 2)
        assert render(d, messages).lines[0].endswith(" 3/3")


def test_a_finished_correction_shows_the_title_only(en):
    d = decision("correct", "EXTRA_CARD", steps=(Step("extra.stop", (("card", "Ah"),)),), step=1)
    view = render(d, en)
    assert view.lines[0].rstrip() == en.titles["EXTRA_CARD"]
    assert view.lines[1:] == (" " * 20,) * 3


# -- beep -----------------------------------------------------------------

def test_beep_on_the_first_frame_of_an_irregularity(en):
    assert render(CORRECT, en).beep is True
    assert render(CORRECT, en, previous=OK).beep is True


def test_no_beep_while_the_same_irregularity_moves_on(en):
    step_later = decision("correct", "EXPOSED_DEAL", steps=CORRECT.steps, step=2, phase="deal", cards=("Ah",))
    assert render(step_later, en, previous=CORRECT).beep is False
    assert render(CORRECT, en, previous=CORRECT).beep is False


def test_beep_when_another_irregularity_follows(en):
    assert render(MISDEAL, en, previous=CORRECT).beep is True
    assert render(FLOOR, en, previous=VOID).beep is True


def test_never_a_beep_without_an_irregularity(en):
    assert render(OK, en).beep is False
    assert render(OK, en, previous=CORRECT).beep is False
    manual = decision("misdeal", None, steps=(Step("halt.misdeal_called"),), phase="halted")
    assert render(manual, en, previous=OK).beep is False


def test_render_is_pure(en):
    first = render(CORRECT, en, previous=OK)
    assert render(CORRECT, en, previous=OK) == first
    assert render(CORRECT, en) == render(CORRECT, en)


# -- _wrap ------------------------------------------------------------------

def test_wrap_fills_lines_word_by_word():
    assert _wrap("Put the card back on top of the stub", 20, 3) == ["Put the card back on", "top of the stub"]


def test_wrap_cuts_at_the_row_limit():
    assert _wrap("one two three four five six", 9, 2) == ["one two", "three"]


def test_wrap_splits_a_word_longer_than_the_glass():
    assert _wrap("ab 0123456789ABCDEFGHIJ xy", 10, 4) == ["ab", "0123456789", "ABCDEFGHIJ", "xy"]


def test_wrap_of_nothing_is_no_lines():
    assert _wrap("", 20, 3) == []
    assert _wrap("   ", 20, 3) == []


def test_wrap_never_exceeds_the_width():
    text = "Shuffle the stub only, never the burns, the board or the muck, then press RESHUFFLED"
    for cols in (8, 16, 20):
        assert all(len(line) <= cols for line in _wrap(text, cols, 99))
    for cols in (16, 20):
        # No word is longer than these glasses, so no word is split or lost.
        assert " ".join(_wrap(text, cols, 99)).split() == text.split()


def test_an_ok_frame_shows_where_the_hand_stands_now(en):
    # Decisions are written only on a change, so an ok decision's phase may be stale.
    stale = decision(phase="preflop")
    view = render(stale, en, phase="river")
    assert view.lines[0].rstrip().endswith(en.phases["river"])
    assert render(stale, en).lines[0].rstrip().endswith(en.phases["preflop"])
    # A correction shows its step counter whatever the phase.
    assert render(CORRECT, en, phase="river").lines[0].endswith(" 2/4")


def test_every_irregularity_has_a_title_that_fits(messages):
    from dealerbox.rules.profiles import IRREGULARITIES, load_profile

    tda = load_profile("tda-2019")
    for rid in IRREGULARITIES:
        d = decision(tda[rid].verdict, rid, steps=(Step("floor.decides"), Step("floor.decides")), step=1)
        view = render(d, messages)
        assert_glass(view, 20, 4)
        assert view.lines[0] == messages.titles[rid].ljust(16) + " 2/2"
        small = render(d, messages, cols=16, rows=2)
        assert small.lines[0] == messages.titles[rid][:12].ljust(12) + " 2/2"


def test_the_technician_line_says_storage_fault_and_turns_green_amber():
    from dealerbox.service.panel import PanelView, technician_line

    ok = PanelView(("OK".ljust(20), "".ljust(20), "".ljust(20), "".ljust(20)), "green")
    shown = technician_line(ok, "STORAGE FAULT 12q", storage_fault=True)
    assert shown.lines[-1] == "STORAGE FAULT 12q".ljust(20) and shown.led == "amber"
    assert shown.lines[:3] == ok.lines[:3]
    # A correction's colour stays: the dealer's step comes first.
    red = PanelView(ok.lines, "red", blink=True, beep=True)
    shown = technician_line(red, "STORAGE FAULT 0q and more text", storage_fault=True, beep=False)
    assert (shown.led, shown.blink, shown.beep) == ("red", True, False) and len(shown.lines[-1]) == 20
    # Any other note leaves the LED alone.
    assert technician_line(ok, "READER DOWN: shoe").led == "green"
