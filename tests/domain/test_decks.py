"""The deck registry: UID normalisation, the simulation decks, the technician's file."""

import os
import subprocess
import sys
import tomllib

import pytest

import dealerbox.atomic as atomic_module
from dealerbox.domain.cards import DECK_52, JOKER
from dealerbox.errors import ConfigError, DealerboxError, RegistryError
from dealerbox.domain.decks import (
    DeckRegistry,
    Tag,
    normalize_uid,
    simulated_uid,
    simulation_registry,
)

# -- normalize_uid ----------------------------------------------------------

UID4 = "04A3C6CA"
UID7 = "04A3C6CAE26180"
UID10 = "04A3C6CAE26180B1C2D3"


@pytest.mark.parametrize("given, expected", [
    # 4-byte (single size)
    ("04A3C6CA", UID4),
    ("04a3c6ca", UID4),
    ("04:a3:c6:ca", UID4),
    ("04-A3-C6-CA", UID4),
    ("04 A3 C6 CA", UID4),
    (b"\x04\xa3\xc6\xca", UID4),
    (bytearray(b"\x04\xa3\xc6\xca"), UID4),
    ([0x04, 0xA3, 0xC6, 0xCA], UID4),
    ((0x04, 0xA3, 0xC6, 0xCA), UID4),
    # 7-byte (double size, NXP NTAG shape)
    ("04A3C6CAE26180", UID7),
    ("04a3c6cae26180", UID7),
    ("04:A3:C6:CA:E2:61:80", UID7),
    ("04-a3-c6-ca-e2-61-80", UID7),
    (bytes.fromhex("04A3C6CAE26180"), UID7),
    ([0x04, 0xA3, 0xC6, 0xCA, 0xE2, 0x61, 0x80], UID7),
    # 10-byte (triple size)
    ("04A3C6CAE26180B1C2D3", UID10),
    ("04a3c6cae26180b1c2d3", UID10),
    ("04:a3:c6:ca:e2:61:80:b1:c2:d3", UID10),
    (bytes.fromhex(UID10), UID10),
    (list(bytes.fromhex(UID10)), UID10),
])
def test_normalize_uid_accepts_every_form(given, expected):
    assert normalize_uid(given) == expected


def test_normalize_uid_is_idempotent():
    for uid in (UID4, UID7, UID10):
        assert normalize_uid(normalize_uid(uid.lower())) == uid


@pytest.mark.parametrize("bad, why", [
    ("04A3C", "hexadecimal"),                       # odd number of hex digits
    ("04A3C6CAE2618", "hexadecimal"),               # 13 digits
    ("0102030405", "5 bytes"),                      # 5 bytes
    ("0102030405060708", "8 bytes"),                # 8 bytes
    (b"\x01\x02\x03\x04\x05", "5 bytes"),
    ([1, 2, 3, 4, 5, 6, 7, 8], "8 bytes"),
    ("ZZA3C6CA", "hexadecimal"),                    # not hex
    ("04A3C6CG", "hexadecimal"),
    ("0x04A3C6CA", "hexadecimal"),
    ("", "0 bytes"),
    (None, "neither"),
    (1234, "neither"),
    (4.0, "neither"),
    ([256, 1, 2, 3], "list of bytes"),
    ([-1, 1, 2, 3], "list of bytes"),
    (["04", "A3", "C6", "CA"], "list of bytes"),
])
def test_normalize_uid_rejects_malformed(bad, why):
    with pytest.raises(RegistryError, match=why) as err:
        normalize_uid(bad)
    # A caller that only knows builtins still catches it.
    assert isinstance(err.value, ValueError)
    assert isinstance(err.value, DealerboxError)


def test_registry_error_is_a_value_error():
    assert issubclass(RegistryError, ValueError)
    assert issubclass(RegistryError, DealerboxError)
    with pytest.raises(ValueError):
        normalize_uid("not a uid")


# -- the simulation registry ------------------------------------------------

@pytest.fixture
def sim():
    return simulation_registry()


def test_simulation_registry_has_deck_a_active_and_deck_b(sim):
    assert sim.active == "A"
    assert sim.decks == ["A", "B"]
    assert sim.has_deck("A") and sim.has_deck("B") and not sim.has_deck("C")
    assert sim.backs["A"] != sim.backs["B"], "deck B must have another back"
    assert len(sim) == 2 * (52 + 2)


@pytest.mark.parametrize("deck", ["A", "B"])
def test_each_simulated_deck_is_52_cards_and_two_jokers(sim, deck):
    cards = sim.cards_of(deck)
    assert len(cards) == 54
    faces = [tag.card for tag in cards.values()]
    assert sorted(c for c in faces if c != JOKER) == sorted(DECK_52)
    assert faces.count(JOKER) == 2
    assert all(tag.deck == deck for tag in cards.values())
    for card in DECK_52:
        assert len(sim.uids_of(deck, card)) == 1
    assert len(sim.uids_of(deck, JOKER)) == 2


def test_simulated_uids_are_nxp_shaped_7_byte_uids(sim):
    for deck in sim.decks:
        for uid in sim.cards_of(deck):
            raw = bytes.fromhex(uid)
            assert len(raw) == 7, uid
            assert raw[0] == 0x04, f"{uid}: NXP manufacturer byte expected"
            assert raw[3] != 0x88, f"{uid}: byte 3 is the cascade tag"
            assert normalize_uid(uid) == uid


def test_simulated_uids_are_all_distinct(sim):
    uids = [u for deck in sim.decks for u in sim.cards_of(deck)]
    assert len(uids) == len(set(uids)) == 108


def test_simulation_registry_is_deterministic_across_calls(sim):
    again = simulation_registry()
    for deck in ("A", "B"):
        assert again.cards_of(deck) == sim.cards_of(deck)
    assert again.to_toml() == sim.to_toml()
    assert simulated_uid("A", "Ah") == simulated_uid("A", "Ah")
    assert simulated_uid("A", "Ah") != simulated_uid("B", "Ah")
    assert simulated_uid("A", JOKER, 0) != simulated_uid("A", JOKER, 1)


def test_simulated_uid_is_the_same_in_another_process():
    # Python's hash() is salted per process; the UIDs must not depend on it.
    code = "from dealerbox.domain.decks import simulated_uid; print(simulated_uid('A', 'Ah'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONHASHSEED": "12345"}, check=True)
    assert out.stdout.strip() == simulated_uid("A", "Ah")


def test_simulated_uid_never_puts_the_cascade_tag_at_byte_3():
    # Find inputs whose digest would put 0x88 at byte 3, so the replacement is exercised.
    import hashlib

    hits = []
    for copy in range(5000):
        digest = hashlib.sha256(f"dealerbox-sim:X:Ah:{copy}".encode()).digest()
        if digest[2] == 0x88:
            hits.append(copy)
        if len(hits) == 3:
            break
    assert hits, "no input found that reaches byte 3 == 0x88"
    for copy in hits:
        raw = bytes.fromhex(simulated_uid("X", "Ah", copy))
        assert raw[0] == 0x04 and len(raw) == 7
        assert raw[3] != 0x88


def test_lookup_finds_registered_tags_in_any_form(sim):
    uid = sim.uids_of("A", "Ah")[0]
    assert sim.lookup(uid) == Tag("A", "Ah")
    assert sim.lookup(uid.lower()) == Tag("A", "Ah")
    assert sim.lookup(bytes.fromhex(uid)) == Tag("A", "Ah")
    assert sim.lookup(":".join(uid[i:i + 2] for i in range(0, len(uid), 2))) == Tag("A", "Ah")
    b_uid = sim.uids_of("B", "Ah")[0]
    assert sim.lookup(b_uid) == Tag("B", "Ah")
    assert uid in sim and b_uid in sim


def test_lookup_of_an_unknown_uid_is_none(sim):
    assert sim.lookup("DEADBEEF") is None
    assert sim.lookup("04000000000000") is None
    assert sim.lookup(bytes(10)) is None
    assert "DEADBEEF" not in sim


def test_lookup_of_a_malformed_uid_raises_but_contains_does_not(sim):
    with pytest.raises(RegistryError):
        sim.lookup("04A3C")
    assert "04A3C" not in sim
    assert None not in sim


def test_add_rejects_bad_card_and_duplicate_uid():
    reg = DeckRegistry()
    key = reg.add("04:a3:c6:ca", "A", "Ah")
    assert key == UID4
    assert reg.active == "A"  # the first deck becomes active
    with pytest.raises(RegistryError, match="already registered"):
        reg.add("04A3C6CA", "B", "Kd")
    with pytest.raises(RegistryError, match="card code"):
        reg.add("04A3C6CB", "A", "1h")
    with pytest.raises(RegistryError):
        reg.add("04A3C", "A", "Kd")
    assert len(reg) == 1


# -- the registry file ------------------------------------------------------

def test_save_then_load_round_trips(tmp_path, sim):
    path = tmp_path / "decks.toml"
    sim.save(path)
    loaded = DeckRegistry.load(path)
    assert loaded.active == "A"
    assert loaded.decks == ["A", "B"]
    assert loaded.backs == sim.backs
    for deck in ("A", "B"):
        assert loaded.cards_of(deck) == sim.cards_of(deck)
    assert len(loaded) == len(sim)
    # Saving what was loaded gives the very same file.
    again = tmp_path / "again.toml"
    loaded.save(again)
    assert again.read_text(encoding="utf-8") == path.read_text(encoding="utf-8")


def test_saved_file_is_readable_toml(tmp_path, sim):
    path = tmp_path / "decks.toml"
    sim.save(path)
    text = path.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    assert data["active"] == "A"
    assert set(data["decks"]) == {"A", "B"}
    tags = data["decks"]["A"]["tags"]
    assert tags[sim.uids_of("A", "Ah")[0]] == "Ah"
    assert sorted(tags.values()).count(JOKER) == 2
    # One UID = card pair per line, so a technician can read and edit it.
    assert f'{sim.uids_of("A", "Ah")[0]} = "Ah"' in text


def test_a_hand_written_file_with_mixed_uid_forms_loads(tmp_path):
    path = tmp_path / "decks.toml"
    path.write_text(
        'active = "red"\n'
        '[decks.blue]\nback = "blue"\n[decks.blue.tags]\n"04:a3:c6:ca" = "Ah"\n'
        '[decks.red]\nback = "red"\n[decks.red.tags]\n04A3C6CAE26180 = "joker"\n'
        '"04-A3-C6-CA-E2-61-80-B1-C2-D3" = "2c"\n',
        encoding="utf-8")
    reg = DeckRegistry.load(path)
    assert reg.active == "red"
    assert reg.lookup(UID4) == Tag("blue", "Ah")
    assert reg.lookup(UID7) == Tag("red", JOKER)
    assert reg.lookup(UID10) == Tag("red", "2c")


def test_save_leaves_no_temporary_files(tmp_path, sim):
    path = tmp_path / "decks.toml"
    sim.save(path)
    sim.save(path)  # overwriting too
    assert sorted(p.name for p in tmp_path.iterdir()) == ["decks.toml"]


def test_save_creates_missing_directories(tmp_path, sim):
    path = tmp_path / "etc" / "dealerbox" / "decks.toml"
    sim.save(path)
    assert DeckRegistry.load(path).active == "A"


def test_failed_save_keeps_the_old_file(tmp_path, sim, monkeypatch):
    path = tmp_path / "decks.toml"
    old = DeckRegistry()
    old.add(UID4, "Z", "Ah")
    old.save(path)
    before = path.read_bytes()

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_module.os, "replace", refuse)
    with pytest.raises(OSError, match="No space"):
        sim.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["decks.toml"], "the temporary file was left behind"
    assert DeckRegistry.load(path).lookup(UID4) == Tag("Z", "Ah")


def test_failed_write_keeps_the_old_file(tmp_path, sim, monkeypatch):
    path = tmp_path / "decks.toml"
    sim.save(path)
    before = path.read_bytes()

    def broken_fsync(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(atomic_module.os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        DeckRegistry(active="A").save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["decks.toml"]


def test_a_first_save_gives_mode_0640(tmp_path, sim):
    path = tmp_path / "decks.toml"
    sim.save(path)
    assert path.stat().st_mode & 0o777 == 0o640


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_rewrite_by_root_keeps_the_registrys_mode_and_owner(tmp_path, sim):
    # A technician registers decks as root; the box, its own user, must still read the file.
    path = tmp_path / "decks.toml"
    sim.save(path)
    path.chmod(0o604)
    os.chown(path, 4242, 4343)
    DeckRegistry(active="A").save(path)
    st = path.stat()
    assert (st.st_mode & 0o777, st.st_uid, st.st_gid) == (0o604, 4242, 4343)
    assert DeckRegistry.load(path).active == "A"


GOOD_DECK = '[decks.A]\nback = "blue"\n[decks.A.tags]\n04A3C6CAE26180 = "Ah"\n'


@pytest.mark.parametrize("text, key", [
    ('active = "A"\n[decks.A\nback = "blue"\n', "(syntax)"),
    ('active = "A"\ncolour = "blue"\n' + GOOD_DECK, "colour"),
    ('active = "A"\n' + GOOD_DECK + '04A3C = "Kd"\n', "decks.A.tags.04A3C"),
    ('active = "A"\n' + GOOD_DECK + '0102030405 = "Kd"\n', "decks.A.tags.0102030405"),
    ('active = "A"\n' + GOOD_DECK + 'ZZA3C6CA = "Kd"\n', "decks.A.tags.ZZA3C6CA"),
    ('active = "A"\n' + GOOD_DECK + '04A3C6CB = "1x"\n', "decks.A.tags.04A3C6CB"),
    ('active = "A"\n' + GOOD_DECK + '"04:a3:c6:ca:e2:61:80" = "Kd"\n', "decks.A.tags.04:a3:c6:ca:e2:61:80"),
    ('active = "C"\n' + GOOD_DECK, "active"),
    ('active = "A"\n', "decks"),
    ('active = "A"\n[decks.A]\nback = "blue"\nlogo = "x"\n', "decks.A.logo"),
    ('active = "A"\n[decks.A]\nback = 3\n', "decks.A.back"),
])
def test_load_errors_name_the_file_and_the_key(tmp_path, text, key):
    path = tmp_path / "bad-decks.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        DeckRegistry.load(path)
    exc = err.value
    assert exc.key == key
    assert exc.file == str(path)
    message = str(exc)
    assert str(path) in message and key in message and "expected" in message
    assert isinstance(exc, ValueError) and isinstance(exc, DealerboxError)


def test_load_of_a_missing_file_is_a_config_error(tmp_path):
    path = tmp_path / "nowhere.toml"
    with pytest.raises(ConfigError) as err:
        DeckRegistry.load(path)
    assert str(path) in str(err.value)


def test_bad_toml_error_says_toml_was_expected(tmp_path):
    path = tmp_path / "decks.toml"
    path.write_text("active = \n", encoding="utf-8")
    with pytest.raises(ConfigError, match="valid TOML") as err:
        DeckRegistry.load(path)
    assert "decks.toml" in str(err.value)


def test_active_naming_a_missing_deck_lists_the_decks(tmp_path):
    path = tmp_path / "decks.toml"
    path.write_text('active = "B"\n' + GOOD_DECK, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        DeckRegistry.load(path)
    assert err.value.value == "B"
    assert "['A']" in str(err.value)


def test_round_trip_keeps_4_and_10_byte_uids_and_jokers(tmp_path):
    reg = DeckRegistry(active="house")
    reg.add(UID4, "house", "Ah")
    reg.add(UID10, "house", JOKER)
    reg.add(UID7, "house", JOKER)
    reg.add("04010203", "guest", "2c")
    reg.backs["house"] = "green"
    path = tmp_path / "decks.toml"
    reg.save(path)
    loaded = DeckRegistry.load(path)
    assert loaded.active == "house"
    assert loaded.backs == {"house": "green", "guest": ""}
    assert loaded.lookup(UID4) == Tag("house", "Ah")
    assert loaded.lookup(UID10) == Tag("house", JOKER)
    assert sorted(loaded.uids_of("house", JOKER)) == sorted([UID7, UID10])
    assert loaded.lookup("04010203") == Tag("guest", "2c")


def test_whatever_save_writes_load_reads(tmp_path):
    reg = DeckRegistry(active="A")
    reg.add("04A3C6CA", "B", "Ah")
    path = tmp_path / "decks.toml"
    reg.save(path)
    loaded = DeckRegistry.load(path)
    assert loaded.lookup("04A3C6CA") == Tag("B", "Ah")


def test_a_card_that_is_an_array_is_a_config_error(tmp_path):
    path = tmp_path / "decks.toml"
    path.write_text('[decks.A.tags]\n04A3C6CA = ["Ah"]\n', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        DeckRegistry.load(path)
    assert err.value.key == "decks.A.tags.04A3C6CA"
