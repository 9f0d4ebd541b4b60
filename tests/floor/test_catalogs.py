"""The floor's gettext catalogs (dealerbox/floor/locale): Babel extracts every message the
floor marks (babel.cfg: the Python, the templates and floor.js), and each of cs, sk and de has
every one of them translated, none fuzzy, every placeholder kept; the template catalog is the
extraction as it stands (`make messages` was run). Then: how a checkout reads a .po, the plural
forms by each language's rules, and two readers of two languages in one template at once."""

from __future__ import annotations

import time
from pathlib import Path

import jinja2
import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from dealerbox.domain.messages import load_messages
from dealerbox.floor.telling import catalogs
from dealerbox.floor.telling.clock import FloorClock
from dealerbox.floor.telling.language import Language
from dealerbox.floor.web.language import LanguageChoice

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "dealerbox" / "floor" / "locale"
TRANSLATED = ("cs", "sk", "de")


def extracted() -> dict[object, list[str]]:
    """msgid (a tuple for a plural) → where it is, as `make messages` extracts them."""
    with open(ROOT / "babel.cfg", encoding="utf-8") as cfg:
        method_map, options_map = parse_mapping_cfg(cfg)
    found: dict[object, list[str]] = {}
    for filename, lineno, message, _comments, _context in extract_from_dir(
            str(ROOT), method_map, options_map):
        found.setdefault(message, []).append(f"{filename}:{lineno}")
    return found


@pytest.fixture(scope="module")
def messages():
    found = extracted()
    print(f"\nthe floor's catalogs: {len(found)} messages "
          f"({sum(isinstance(m, tuple) for m in found)} with plural forms), each in {', '.join(TRANSLATED)}")
    return found


def catalog(lang: str):
    with open(LOCALE / lang / "LC_MESSAGES" / "floor.po", "rb") as po:
        return read_po(po, locale=lang, domain="floor")


def key(message_id):
    return tuple(message_id) if isinstance(message_id, (list, tuple)) else message_id


def test_the_floor_marks_its_page_words_for_the_catalogs(messages):
    # The pages this issue told first: the sign-in page, the header, the floor map.
    for msgid in ("Sign in", "wrong user name or password", "Audit trail", "Sign out", "Unplaced tables",
                  "Floor call", "%(kind)s at %(where)s: %(text)s", "live", "%(rate)s hands/h"):
        assert msgid in messages, msgid
    assert ("(%(count)s time, the last %(last)s)", "(%(count)s times, the last %(last)s)") in messages


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_message_is_translated_in_each_language_and_none_is_fuzzy(messages, lang):
    cat = catalog(lang)
    entries = {key(m.id): m for m in cat if m.id}
    missing = [f"{m!r} ({', '.join(messages[m][:2])})" for m in messages if m not in entries]
    assert not missing, f"{lang}: {len(missing)} messages missing (run `make messages`):\n" + "\n".join(missing)
    untranslated = [m for m in messages if not all(entries[m].string if isinstance(entries[m].string, tuple)
                                                   else (entries[m].string,))]
    assert not untranslated, f"{lang}: untranslated: {untranslated}"
    fuzzy = [m for m in messages if entries[m].fuzzy]
    assert not fuzzy, f"{lang}: fuzzy (check and translate, then drop the flag): {fuzzy}"
    # Babel's own checks: the same python-format placeholders as the English, the plural count.
    problems = [(m.id, [str(e) for e in errors]) for m, errors in cat.check()]
    assert not problems, f"{lang}: {problems}"
    nplurals = {"cs": 3, "sk": 3, "de": 2}[lang]
    assert cat.num_plurals == nplurals
    assert all(len(entries[m].string) == nplurals for m in messages if isinstance(m, tuple))


def test_the_template_catalog_is_the_extraction_as_it_stands(messages):
    with open(LOCALE / "floor.pot", "rb") as pot:
        template = {key(m.id) for m in read_po(pot) if m.id}
    assert template == set(messages), f"run `make messages`: {sorted(map(str, template ^ set(messages)))}"


def test_no_irregularity_is_named_in_the_catalogs(messages):
    """The irregularities' and phases' names have one source, the table's message catalogs."""
    english = load_messages("en").names
    named = set(english["irregularities"].values()) | set(english["phases"].values())
    assert not named & {m for m in messages if isinstance(m, str)}


def test_a_checkout_reads_its_po_files_and_says_how_long_that_takes():
    assert not list(LOCALE.rglob("*.mo")), "a compiled catalog in the checkout: the build makes them, .gitignore"
    catalogs.translations.cache_clear()
    started = time.perf_counter()
    for lang in TRANSLATED:
        catalogs.translations(lang)
    took = (time.perf_counter() - started) / len(TRANSLATED)
    print(f"\none .po read and compiled in memory: {took * 1000:.1f} ms (once per language and process)")
    assert catalogs.translations("cs").gettext("Sign out") == "Odhlásit"
    assert catalogs.translations("en").gettext("Sign out") == "Sign out"
    with pytest.raises(ValueError, match="expected one of"):
        catalogs.translations("fr")


@pytest.mark.parametrize("lang, forms", [
    ("cs", ["1 případ", "2 případy", "4 případy", "5 případů", "21 případů"]),
    ("sk", ["1 prípad", "2 prípady", "4 prípady", "5 prípadov", "21 prípadov"]),
    ("de", ["1 Fall", "2 Fälle", "4 Fälle", "5 Fälle", "21 Fälle"]),
    ("en", ["1 time", "2 times", "4 times", "5 times", "21 times"]),
])
def test_plurals_follow_each_languages_rules(lang, forms):
    language = Language(lang, FloorClock("Europe/Prague"))
    told = [language.ngettext("(%(count)s time, the last %(last)s)", "(%(count)s times, the last %(last)s)", n)
            % {"count": n, "last": "x"} for n in (1, 2, 4, 5, 21)]
    assert [t[1:].split(",")[0] for t in told] == forms


@pytest.mark.parametrize("header, expected", [
    ("cs-CZ,cs;q=0.9,en;q=0.8", "cs"), ("de-AT,de;q=0.9", "de"), ("en-GB;q=0.5,sk;q=0.9", "sk"),
    ("fr-FR,fr;q=0.9", "en"), ("", "en"), (None, "en"), ("cs;q=junk,de", "de"), ("*", "en"),
])
def test_the_browsers_accept_language_picks_among_the_four(header, expected):
    assert catalogs.accepted_language(header, "en") == expected


def test_two_readers_in_two_languages_share_one_environment_and_never_each_others_words():
    """The web view's templates read the render's language from its context: rendering for a
    Czech reader in the middle of a German one's render leaves the German one German."""
    class App:  # what LanguageChoice reads of the web view
        class settings:
            language = "en"
        clock = FloorClock("Europe/Prague")

    choice = LanguageChoice(App())
    env = jinja2.Environment(loader=jinja2.DictLoader({
        "outer.html": "{{ _('Sign out') }} {{ inner() }} {{ _('Sign out') }}",
        "one.html": "{% trans %}Sign out{% endtrans %}"}), autoescape=True)
    choice.install(env)
    czech, german = choice.languages.get("cs"), choice.languages.get("de")
    inner = lambda: env.get_template("one.html").render(language=czech)  # noqa: E731
    assert env.get_template("outer.html").render(language=german, inner=inner) == "Abmelden Odhlásit Abmelden"
    assert env.get_template("one.html").render() == "Sign out"  # no language: the room's
