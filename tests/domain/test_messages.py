"""Message catalogs: complete in every language, and every LCD form fits the glass."""

import re

import pytest

from dealerbox.rules.engine import Step
from dealerbox.errors import ConfigError
from dealerbox.domain.messages import LANGUAGES, MESSAGES_DIR, load_messages
from dealerbox.service.panel import _wrap
from dealerbox.rules.profiles import IRREGULARITIES

# The longest values a placeholder can take: on the LCD a card is 2 characters,
# a joker 3 ("JKR"). Only the unknown-tag steps name a raw tag ("?" + 6 hex digits).
WORST = {
    "card": "joker",
    "got": "joker",
    "cards": ("Ah", "Kd", "Qs", "Jc"),
    "seat": 10,
    "street": "river",
    "streets": ("turn", "river"),
    "dealer": "E123456789",     # the longest dealer id (CONTRACT.md, the dealer event)
}
RULES_SOURCES = (MESSAGES_DIR.parent.parent / "dealerbox" / "rules").glob("*.py")
ENGINE_KEYS = {key for path in RULES_SOURCES for key in re.findall(r'Step\(\s*"([a-z_0-9.]+)"', path.read_text())}


def worst_step(key, text):
    names = set(re.findall(r"{(\w+)}", text))
    values = dict(WORST, card="uid:04A3C6CAE26180") if key.startswith("unknown.") else WORST
    return Step(key, tuple((n, values[n]) for n in sorted(names)))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_catalog_loads_with_every_key(lang):
    m = load_messages(lang)
    for key in ENGINE_KEYS | {"halt.misdeal", "halt.void"}:
        assert key in m.steps, f"{lang}: step {key} missing"
    for rid in IRREGULARITIES:
        assert rid in m.titles


@pytest.mark.parametrize("lang", LANGUAGES)
def test_lcd_forms_fit_and_are_ascii(lang):
    m = load_messages(lang)
    for key, forms in m.steps.items():
        step = worst_step(key, forms["text"] + forms["lcd"] + forms["lcd16"])
        lcd = m.lcd(step, 20)
        assert all(ord(ch) < 128 for ch in lcd), f"{lang} {key}: the LCD has no glyphs for {lcd!r}"
        assert "{" not in lcd and "{" not in m.text(step)
        words = lcd.split()
        assert max(len(w) for w in words) <= 20
        assert len(_wrap(lcd, 20, 99)) <= 3, f"{lang} {key}: {lcd!r} needs more than 3 lines of 20"
        short = m.lcd(step, 16)
        assert len(short) <= 16, f"{lang} {key}: lcd16 {short!r} is longer than 16"
    for rid, title in m.titles.items():
        assert len(title) <= 15 and title.isascii(), f"{lang} title {rid}: {title!r}"
    for v in list(m.verdicts.values()) + list(m.phases.values()):
        assert v.isascii() and len(v) <= 15


def test_a_missing_key_names_the_file_and_key(tmp_path, monkeypatch):
    import dealerbox.domain.messages as mm

    text = (MESSAGES_DIR / "en.toml").read_text()
    (tmp_path / "en.toml").write_text(text)
    (tmp_path / "de.toml").write_text(text.replace('[steps."reshuffle.now"]', '[steps."reshuffle.typo"]'))
    monkeypatch.setattr(mm, "MESSAGES_DIR", tmp_path)
    mm.load_messages.cache_clear()
    try:
        with pytest.raises(ConfigError) as err:
            mm.load_messages("de")
        assert "de.toml" in str(err.value) and "reshuffle" in str(err.value)
    finally:
        mm.load_messages.cache_clear()


def test_unknown_language_is_a_config_error():
    with pytest.raises(ConfigError, match="one of"):
        load_messages("fr")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_floors_words_name_every_irregularity_and_phase(lang):
    m = load_messages(lang)
    assert set(m.names["irregularities"]) == set(m.titles) and set(m.names["phases"]) == set(m.phases)
    for rid in IRREGULARITIES:
        name = m.irregularity_name(rid, "correct")
        assert name and "_" not in name and name != m.titles[rid], f"{lang} {rid}: {name!r}"
    assert m.irregularity_name(None, "misdeal") == m.names["irregularities"]["MANUAL_MISDEAL"]
    assert m.irregularity_name(None, "floor") == m.names["irregularities"]["FLOOR_CALLED"]
    assert m.irregularity_name("NOT_AN_ID") == "NOT_AN_ID" and m.phase_name("nope") == "nope"
    assert m.phase_name(None) == ""


def test_the_floors_words_are_written_with_their_languages_letters():
    assert load_messages("en").irregularity_name("FOUR_CARD_FLOP") == "four-card flop"
    assert load_messages("cs").irregularity_name("FOUR_CARD_FLOP") == "flop o čtyřech kartách"
    assert load_messages("de").irregularity_name("PREMATURE_FLOP") == "Flop zu früh gegeben"
    assert load_messages("sk").irregularity_name("JOKER") == "žolík v hre"
    assert load_messages("cs").phase_name("idle") == "čeká na hru"


def test_a_language_without_a_word_for_an_irregularity_names_the_file_and_key(tmp_path, monkeypatch):
    import dealerbox.domain.messages as mm

    text = (MESSAGES_DIR / "en.toml").read_text()
    (tmp_path / "en.toml").write_text(text.replace('JOKER = "joker in play"\n', ""))
    monkeypatch.setattr(mm, "MESSAGES_DIR", tmp_path)
    mm.load_messages.cache_clear()
    try:
        with pytest.raises(ConfigError) as err:
            mm.load_messages("en")
        assert "en.toml" in str(err.value) and "names.irregularities" in str(err.value)
    finally:
        mm.load_messages.cache_clear()
