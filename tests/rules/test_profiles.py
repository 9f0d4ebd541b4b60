"""Rule profiles: the shipped ones, and a bad profile file named precisely."""

import copy
import tomllib

import pytest
import tomli_w

from dealerbox.errors import ConfigError, DealerboxError
from dealerbox.rules.profiles import (
    IRREGULARITIES,
    PROCEDURES,
    RULES_DIR,
    VERDICTS,
    Profile,
    RuleChoice,
    available_profiles,
    load_profile,
    parse_profile,
)

# Every id of RULES.md with its verdict under tda-2019 (the default), as the
# tables of RULES.md give it.
RULES_MD = {
    "EXPOSED_EARLY": "misdeal",
    # RULES.md "Sensing faults"
    "UNREAD_CARD": "ok",
    "SHORT_DEAL": "correct",
    "READER_DEGRADED": "ok",
    "EXPOSED_DEAL": "correct",
    "EXPOSED_TWICE": "misdeal",
    "BOXED_CARD": "correct",
    "BOXED_TWICE": "misdeal",
    "EXTRA_CARD": "correct",
    "EXTRA_CARDS": "misdeal",
    "JOKER": "correct",
    "SEAT_ERROR": "misdeal",
    "MISSED_BURN": "correct",
    "DOUBLE_BURN": "correct",
    "FOUR_CARD_FLOP": "floor",
    "PREMATURE_FLOP": "correct",
    "PREMATURE_TURN": "correct",
    "PREMATURE_RIVER": "correct",
    "RABBIT_HUNT": "floor",
    "DUPLICATE_CARD": "void",
    "FOREIGN_CARD": "void",
    "UNKNOWN_TAG": "floor",
    "STUB_CONTAMINATION": "floor",
    "BOARD_NOT_FROM_SHOE": "floor",
    "MISSING_CARD": "ok",
    "WRONG_CORRECTION": "correct",
}
DIFFERING = {"FOUR_CARD_FLOP", "PREMATURE_FLOP", "PREMATURE_TURN", "PREMATURE_RIVER"}
SHIPPED = ["cz-c40", "tda-2019"]


@pytest.fixture(scope="module")
def tda():
    return load_profile("tda-2019")


@pytest.fixture(scope="module")
def c40():
    return load_profile("cz-c40")


def test_both_shipped_profiles_are_available():
    assert set(SHIPPED) <= set(available_profiles())
    for name in SHIPPED:
        assert (RULES_DIR / f"{name}.toml").is_file()


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_profiles_load(name):
    p = load_profile(name)
    assert isinstance(p, Profile)
    assert p.name == name
    assert p.board_grace_s == 3.0
    assert p.description
    assert set(p.rules) == set(PROCEDURES)
    for rid, choice in p.rules.items():
        assert isinstance(choice, RuleChoice)
        assert choice.verdict in VERDICTS
        assert choice.procedure in PROCEDURES[rid]
        assert choice.sources.strip()
        assert p[rid] is choice


def test_the_default_profile_is_tda_2019(tda):
    assert load_profile() == tda


def test_a_profile_loads_by_path_too(tda):
    assert load_profile(RULES_DIR / "tda-2019.toml") == tda
    assert load_profile(str(RULES_DIR / "tda-2019.toml")) == tda


@pytest.mark.parametrize("name", SHIPPED)
def test_every_rules_md_id_is_in_the_profile(name):
    p = load_profile(name)
    assert set(RULES_MD) <= set(p.rules)
    assert set(RULES_MD) == set(IRREGULARITIES)


def test_tda_verdicts_are_those_of_rules_md(tda):
    assert {rid: tda[rid].verdict for rid in RULES_MD} == RULES_MD


def test_profiles_differ_exactly_where_rules_md_says(tda, c40):
    differ = {rid for rid in PROCEDURES
              if (tda[rid].verdict, tda[rid].procedure) != (c40[rid].verdict, c40[rid].procedure)}
    assert differ == DIFFERING
    # Where the sources agree, the whole row is the same, sources included.
    for rid in set(PROCEDURES) - DIFFERING:
        assert tda[rid] == c40[rid], rid


def test_the_differing_procedures(tda, c40):
    assert tda["FOUR_CARD_FLOP"].procedure == "scramble_pick_burn"
    assert tda["FOUR_CARD_FLOP"].verdict == "floor"
    assert c40["FOUR_CARD_FLOP"].procedure == "redeal_street"
    for rid in ("PREMATURE_FLOP", "PREMATURE_TURN", "PREMATURE_RIVER"):
        assert c40[rid].procedure == "skipped_player_decides"
        assert tda[rid].procedure != "skipped_player_decides"


def test_sources_cite_the_seed_files(tda, c40):
    for p in (tda, c40):
        for rid, choice in p.rules.items():
            if rid == "READER_DEGRADED":  # a technician's notice: no card-room rule speaks of radios
                assert "RULES.md sensing faults" in choice.sources
                continue
            assert any(f"00{i} " in choice.sources for i in range(5)), (p.name, rid, choice.sources)
    assert "002 r39" in tda["FOUR_CARD_FLOP"].sources
    assert "004 misdeal 9" in c40["FOUR_CARD_FLOP"].sources


def test_config_error_is_a_value_error_and_a_dealerbox_error():
    assert issubclass(ConfigError, ValueError)
    assert issubclass(ConfigError, DealerboxError)
    err = ConfigError("x.toml", "rules.JOKER.verdict", "one of ok", "maybe")
    assert isinstance(err, ValueError) and isinstance(err, DealerboxError)
    assert str(err) == "x.toml: rules.JOKER.verdict = 'maybe': expected one of ok"
    missing = ConfigError("x.toml", "name", "a string", None, found=False)
    assert str(missing) == "x.toml: name is missing: expected a string"


# -- bad profile files ------------------------------------------------------

@pytest.fixture(scope="module")
def base():
    return tomllib.loads((RULES_DIR / "tda-2019.toml").read_text(encoding="utf-8"))


def write(tmp_path, data):
    path = tmp_path / "house.toml"
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    return path


def test_a_copy_of_a_shipped_profile_loads(tmp_path, base, tda):
    path = write(tmp_path, base)
    p = load_profile(path)
    assert p.rules == tda.rules
    assert p.path == str(path)


def test_procedure_may_be_left_out(tmp_path, base):
    data = copy.deepcopy(base)
    del data["rules"]["JOKER"]["procedure"]
    assert load_profile(write(tmp_path, data))["JOKER"].procedure == PROCEDURES["JOKER"][0]


def mutate(base, change):
    data = copy.deepcopy(base)
    change(data)
    return data


def _set(path, value):
    def change(data):
        node = data
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
    return change


def _del(path):
    def change(data):
        node = data
        for k in path[:-1]:
            node = node[k]
        del node[path[-1]]
    return change


BAD = [
    # (change, key named, words of what was expected)
    (_set(["rules", "SHUFFLE_ERROR"], {"verdict": "floor", "procedure": "call_floor", "sources": "x"}),
     "rules.SHUFFLE_ERROR", "irregularity id"),
    (_set(["rules", "FOUR_CARD_FLOP", "procedure"], "shuffle_everything"),
     "rules.FOUR_CARD_FLOP.procedure", "scramble_pick_burn"),
    # Another id's own procedure is no choice (misdeal, void and call_floor are everyone's).
    (_set(["rules", "JOKER", "procedure"], "return_as_first_burn"),
     "rules.JOKER.procedure", "['show_and_replace', 'misdeal', 'void', 'call_floor']"),
    (_set(["rules", "UNREAD_CARD", "procedure"], "misdeal"),
     "rules.UNREAD_CARD.procedure", "['inform']"),
    (_set(["rules", "EXPOSED_EARLY", "verdict"], "correct"),
     "rules.EXPOSED_EARLY.verdict", "for procedure 'misdeal'"),
    (_set(["rules", "FOUR_CARD_FLOP", "verdict"], "misdeal"),
     "rules.FOUR_CARD_FLOP.verdict", "for procedure 'scramble_pick_burn'"),
    (_set(["rules", "DUPLICATE_CARD", "verdict"], "floor"),
     "rules.DUPLICATE_CARD.verdict", "for procedure 'void'"),
    (_set(["rules", "JOKER", "verdict"], "maybe"),
     "rules.JOKER.verdict", "one of"),
    (_del(["rules", "JOKER", "verdict"]),
     "rules.JOKER.verdict", "one of"),
    (_del(["rules", "RABBIT_HUNT"]),
     "rules.RABBIT_HUNT", "every irregularity"),
    (_del(["rules", "LATE_ERROR"]),
     "rules.LATE_ERROR", "every irregularity"),
    (_del(["rules", "MISSED_BURN", "sources"]),
     "rules.MISSED_BURN.sources", "rule sources"),
    (_set(["rules", "MISSED_BURN", "sources"], "   "),
     "rules.MISSED_BURN.sources", "rule sources"),
    (_set(["rules", "MISSED_BURN", "sources"], 13),
     "rules.MISSED_BURN.sources", "rule sources"),
    (_set(["rules", "MISSED_BURN", "note"], "hello"),
     "rules.MISSED_BURN.note", "only verdict, procedure and sources"),
    (_set(["rules", "MISSED_BURN"], "correct"),
     "rules.MISSED_BURN", "a table"),
    (_set(["board_grace_s"], 0.1), "board_grace_s", "between 0.5 and 30"),
    (_set(["board_grace_s"], 31), "board_grace_s", "between 0.5 and 30"),
    (_set(["board_grace_s"], -3.0), "board_grace_s", "between 0.5 and 30"),
    (_set(["board_grace_s"], "3"), "board_grace_s", "between 0.5 and 30"),
    (_set(["board_grace_s"], True), "board_grace_s", "between 0.5 and 30"),
    (_set(["grace"], 3.0), "grace", "board_grace_s"),
    (_set(["Rules"], {}), "Rules", "[rules.ID]"),
    (_del(["name"]), "name", "name"),
    (_set(["name"], ""), "name", "name"),
    (_del(["rules"]), "rules", "[rules.ID]"),
    (_set(["rules"], "all"), "rules", "[rules.ID]"),
]


@pytest.mark.parametrize("change, key, expected", BAD, ids=[f"{k}-{i}" for i, (_, k, _) in enumerate(BAD)])
def test_bad_profile_names_file_key_and_expectation(tmp_path, base, change, key, expected):
    path = write(tmp_path, mutate(base, change))
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    exc = err.value
    assert exc.file == str(path)
    assert exc.key == key
    assert expected in exc.expected
    message = str(exc)
    assert str(path) in message and key in message and expected in message
    assert isinstance(exc, ValueError) and isinstance(exc, DealerboxError)


def test_a_missing_row_says_it_is_missing(tmp_path, base):
    path = write(tmp_path, mutate(base, _del(["rules", "RABBIT_HUNT"])))
    with pytest.raises(ConfigError, match="rules.RABBIT_HUNT is missing"):
        load_profile(path)


def test_an_unknown_id_lists_the_known_ones(tmp_path, base):
    change = _set(["rules", "SHUFFLE_ERROR"], {"verdict": "floor", "procedure": "call_floor", "sources": "x"})
    with pytest.raises(ConfigError) as err:
        load_profile(write(tmp_path, mutate(base, change)))
    for rid in RULES_MD:
        assert rid in err.value.expected


def test_bad_toml_is_a_config_error(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text('name = "x"\n[rules.JOKER\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="valid TOML") as err:
        load_profile(path)
    assert str(path) in str(err.value)


def test_an_unknown_profile_name_lists_the_shipped_ones():
    with pytest.raises(ConfigError) as err:
        load_profile("tda-2020")
    assert err.value.key == "profile"
    assert "tda-2019" in str(err.value) and "cz-c40" in str(err.value)


def test_a_missing_profile_file_is_a_config_error(tmp_path):
    path = tmp_path / "gone.toml"
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert str(path) in str(err.value)


def test_parse_profile_accepts_a_custom_grace(base):
    data = copy.deepcopy(base)
    data["board_grace_s"] = 5
    p = parse_profile(data, "mem.toml")
    assert p.board_grace_s == 5.0 and isinstance(p.board_grace_s, float)


def test_a_verdict_that_is_an_array_is_a_config_error(tmp_path, base):
    path = write(tmp_path, mutate(base, _set(["rules", "JOKER", "verdict"], ["correct"])))
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert err.value.key == "rules.JOKER.verdict"


def test_a_procedure_that_is_an_array_is_a_config_error(tmp_path, base):
    path = write(tmp_path, mutate(base, _set(["rules", "JOKER", "procedure"], ["show_and_replace"])))
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert err.value.key == "rules.JOKER.procedure"
