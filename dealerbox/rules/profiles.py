"""Rule profiles: for each irregularity of RULES.md, the verdict and the procedure.

A card room chooses the house rules it plays by with a TOML file under
``firmware_config/rules/``. The engine only knows procedures by name; a profile
picks one of the procedures the id allows (:func:`procedures_for`: its own, and
the misdeal, void and floor call every irregularity of a hand may take), so a typo
or an impossible choice is rejected at load time with the file, the key and what
was expected.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dealerbox.errors import ConfigError
from dealerbox.resources import data_dir
from dealerbox.tomlfile import read_toml

RULES_DIR = data_dir("rules")

VERDICTS = ("ok", "correct", "misdeal", "void", "floor")
_HALTING = {"misdeal", "void"}
_GUIDED = {"ok", "correct", "floor"}

#: Every RULES.md id and the procedures the engine implements for it. The first
#: is the one both shipped profiles use unless RULES.md says the sources differ.
PROCEDURES: dict[str, tuple[str, ...]] = {
    "EXPOSED_EARLY": ("misdeal",),
    "EXPOSED_DEAL": ("exposed_card_is_first_burn",),
    "EXPOSED_TWICE": ("misdeal",),
    "BOXED_CARD": ("show_and_replace",),
    "BOXED_TWICE": ("misdeal",),
    "EXTRA_CARD": ("return_as_first_burn",),
    "EXTRA_CARDS": ("misdeal",),
    "JOKER": ("show_and_replace",),
    "SEAT_ERROR": ("misdeal",),
    "MISSED_BURN": ("open_burn_next_card_replaces",),
    "DOUBLE_BURN": ("return_second_burn",),
    "FOUR_CARD_FLOP": ("scramble_pick_burn", "redeal_street"),
    "PREMATURE_FLOP": ("new_flop_no_burn", "skipped_player_decides"),
    "PREMATURE_TURN": ("set_aside_then_reshuffle_for_river", "skipped_player_decides"),
    "PREMATURE_RIVER": ("new_river_no_burn", "skipped_player_decides"),
    "RABBIT_HUNT": ("call_floor",),
    "DUPLICATE_CARD": ("void",),
    "FOREIGN_CARD": ("void",),
    "UNKNOWN_TAG": ("floor_confirms",),
    "STUB_CONTAMINATION": ("call_floor",),
    "BOARD_NOT_FROM_SHOE": ("call_floor",),
    "MISSING_CARD": ("inform",),
    "WRONG_CORRECTION": ("put_right",),
    "LATE_ERROR": ("call_floor",),
    # Sensing faults (RULES.md): not rule irregularities, but the box must say what it did.
    "UNREAD_CARD": ("inform",),
    "SHORT_DEAL": ("count_hole_cards",),
    "READER_DEGRADED": ("inform",),
}
IRREGULARITIES = tuple(k for k in PROCEDURES if k != "LATE_ERROR")
_HALT_PROCEDURES = {"misdeal", "void"}

#: Procedures any irregularity of a hand may take besides its own: houses rule any exposed
#: card a misdeal, or any irregularity a floor call. Each keeps the steps it has where it is
#: native (``misdeal``: EXPOSED_EARLY and the other misdeal rows; ``void``: DUPLICATE_CARD,
#: FOREIGN_CARD; ``call_floor``: STUB_CONTAMINATION, BOARD_NOT_FROM_SHOE, RABBIT_HUNT).
ANY_IRREGULARITY: tuple[str, ...] = ("misdeal", "void", "call_floor")
#: The ids that take only their own procedures. The sensing faults are no dealing errors:
#: RULES.md forbids them to stop the hand or call the floor. MISSING_CARD is found by a deck
#: check between hands, where there is no hand to stop.
OWN_PROCEDURES_ONLY = frozenset({"UNREAD_CARD", "SHORT_DEAL", "READER_DEGRADED", "MISSING_CARD"})


def procedures_for(rid: str) -> tuple[str, ...]:
    """The procedures a profile may choose for *rid*: its own (the first is the default), then
    those of :data:`ANY_IRREGULARITY` it does not have already."""
    own = PROCEDURES[rid]
    if rid in OWN_PROCEDURES_ONLY:
        return own
    return own + tuple(p for p in ANY_IRREGULARITY if p not in own)


@dataclass(frozen=True, slots=True)
class RuleChoice:
    """One row of a profile."""

    verdict: str
    procedure: str
    sources: str


@dataclass(frozen=True)
class Profile:
    """A loaded rule profile. ``rules`` has an entry for every id of :data:`PROCEDURES`."""

    name: str
    rules: dict[str, RuleChoice]
    board_grace_s: float = 3.0
    description: str = ""
    #: READER_DEGRADED: the share of unread cards, over the last ``reader_recent_draws``
    #: cards out of the shoe, above which the shoe reader needs service.
    reader_max_unread_share: float = 0.05
    reader_recent_draws: int = 200
    path: str = field(default="", compare=False)

    def __getitem__(self, irregularity: str) -> RuleChoice:
        return self.rules[irregularity]


def available_profiles() -> list[str]:
    """The names of the shipped profiles."""
    return sorted(p.stem for p in RULES_DIR.glob("*.toml"))


def load_profile(name_or_path="tda-2019") -> Profile:
    """Load a shipped profile by name (``tda-2019``) or any profile file by path."""
    path = Path(name_or_path)
    if path.suffix != ".toml":
        path = RULES_DIR / f"{name_or_path}.toml"
        if not path.exists():
            raise ConfigError(path, "profile", f"one of {available_profiles()}", str(name_or_path))
    return parse_profile(read_toml(path, "rule profile"), path)


def parse_profile(data: dict, path) -> Profile:
    """Validate a decoded profile; every error names *path* and the key."""
    extra = set(data) - {"name", "description", "board_grace_s", "reader_max_unread_share", "reader_recent_draws",
                         "rules"}
    if extra:
        key = sorted(extra)[0]
        raise ConfigError(path, key, "one of name, description, board_grace_s, reader_max_unread_share, "
                          "reader_recent_draws, [rules.ID]", data[key])
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(path, "name", "the profile's name as a string", name, found="name" in data)
    grace = data.get("board_grace_s", 3.0)
    if isinstance(grace, bool) or not isinstance(grace, (int, float)) or not 0.5 <= grace <= 30:
        raise ConfigError(path, "board_grace_s", "seconds between 0.5 and 30", grace)
    share = data.get("reader_max_unread_share", 0.05)
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
        raise ConfigError(path, "reader_max_unread_share", "a share between 0 and 1 (0.05 = 5 %)", share)
    recent = data.get("reader_recent_draws", 200)
    if type(recent) is not int or not 10 <= recent <= 10_000:
        raise ConfigError(path, "reader_recent_draws", "a whole number of draws between 10 and 10000", recent)
    rules_in = data.get("rules")
    if not isinstance(rules_in, dict):
        raise ConfigError(path, "rules", "a [rules.ID] table for every irregularity", rules_in, found="rules" in data)
    rules: dict[str, RuleChoice] = {}
    for rid, body in rules_in.items():
        key = f"rules.{rid}"
        if rid not in PROCEDURES:
            raise ConfigError(path, key, f"an irregularity id of RULES.md ({', '.join(PROCEDURES)})", rid)
        if not isinstance(body, dict):
            raise ConfigError(path, key, "a table with verdict, procedure and sources", body)
        extra = set(body) - {"verdict", "procedure", "sources"}
        if extra:
            k = sorted(extra)[0]
            raise ConfigError(path, f"{key}.{k}", "only verdict, procedure and sources", body[k])
        procedure = body.get("procedure", PROCEDURES[rid][0])
        if not isinstance(procedure, str) or procedure not in procedures_for(rid):
            raise ConfigError(path, f"{key}.procedure", f"one of {list(procedures_for(rid))}", procedure)
        verdict = body.get("verdict")
        allowed = _HALTING if procedure in _HALT_PROCEDURES else _GUIDED
        if not isinstance(verdict, str) or verdict not in allowed:
            raise ConfigError(path, f"{key}.verdict", f"one of {sorted(allowed)} for procedure {procedure!r}",
                              verdict, found="verdict" in body)
        sources = body.get("sources")
        if not isinstance(sources, str) or not sources.strip():
            raise ConfigError(path, f"{key}.sources", "the rule sources as RULES.md cites them", sources,
                              found="sources" in body)
        rules[rid] = RuleChoice(verdict, procedure, sources)
    missing = [rid for rid in PROCEDURES if rid not in rules]
    if missing:
        raise ConfigError(path, f"rules.{missing[0]}", "a verdict and procedure for every irregularity", None, found=False)
    return Profile(name=name, rules=rules, board_grace_s=float(grace),
                   description=str(data.get("description", "")), reader_max_unread_share=float(share),
                   reader_recent_draws=recent, path=str(path))
