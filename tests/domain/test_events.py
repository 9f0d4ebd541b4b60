"""Events in (CONTRACT.md): every valid form parses, every invalid one is named."""

import json
import math

import pytest

from dealerbox.errors import DealerboxError, EventError
from dealerbox.domain.events import BUTTONS, EVENT_KINDS, ZONES, Event, EventFile, read_events

UID = "04A3C6CAE26180"

VALID = [
    # new_hand
    ({"t": 0.0, "ev": "new_hand", "players": 6}, {"players": 6, "hole_cards": 2}),
    ({"t": 0, "ev": "new_hand", "players": 2}, {"players": 2, "hole_cards": 2}),
    ({"t": 1.5, "ev": "new_hand", "players": 10, "hole_cards": 2}, {"players": 10, "hole_cards": 2}),
    ({"t": 1.5, "ev": "new_hand", "players": 4, "hole_cards": 4}, {"players": 4, "hole_cards": 4}),
    ({"t": 1.5, "ev": "new_hand", "players": 3, "seats": [4, 7, 1]}, {"players": 3, "seats": (4, 7, 1)}),
    # card events, by card and by uid
    ({"t": 0.4, "ev": "shoe", "card": "Ah"}, {"card": "Ah", "deck": None, "uid": None}),
    ({"t": 0.4, "ev": "shoe", "card": "Td", "deck": "B"}, {"card": "Td", "deck": "B"}),
    ({"t": 0.4, "ev": "shoe", "card": "joker"}, {"card": "joker"}),
    ({"t": 0.4, "ev": "shoe", "uid": UID}, {"uid": UID, "card": None}),
    ({"t": 0.4, "ev": "shoe", "uid": "04:a3:c6:ca"}, {"uid": "04A3C6CA"}),
    ({"t": 9.6, "ev": "board_on", "uid": UID.lower()}, {"uid": UID}),
    ({"t": 9.6, "ev": "board_on", "card": "2c"}, {"card": "2c"}),
    ({"t": 9.6, "ev": "board_off", "card": "Ks"}, {"card": "Ks"}),
    ({"t": 9.6, "ev": "zone_on", "card": "Ks", "zone": "burn"}, {"card": "Ks", "zone": "burn"}),
    ({"t": 9.6, "ev": "zone_on", "uid": UID, "zone": "seat10"}, {"uid": UID, "zone": "seat10"}),
    ({"t": 9.6, "ev": "zone_off", "card": "9h", "zone": "muck"}, {"card": "9h", "zone": "muck"}),
    ({"t": 9.6, "ev": "zone_off", "card": "9h", "zone": "seat1"}, {"zone": "seat1"}),
    # buttons
    *[({"t": 9.1, "ev": "button", "name": name}, {"name": name}) for name in sorted(BUTTONS)],
    # readers and time
    ({"t": 3.0, "ev": "reader_fault", "reader": "shoe"}, {"reader": "shoe"}),
    ({"t": 3.0, "ev": "reader_ok", "reader": "board"}, {"reader": "board"}),
    ({"t": 3.25, "ev": "tick"}, {}),
    # who deals (more in tests/domain/test_badges.py)
    ({"t": 3.5, "ev": "dealer", "dealer": "1042"}, {"dealer": "1042"}),
    ({"t": 3.5, "ev": "dealer", "dealer": None}, {"dealer": None}),
    # the registries (more in tests/domain/test_registry_events.py)
    ({"t": 4.0, "ev": "deck_registered", "deck": "R1", "back": "red", "tags": {UID: "Ah"}}, {"tags": {UID: "Ah"}}),
    ({"t": 4.0, "ev": "deck_checked", "deck": "R1", "missing": ["Ks"], "damaged": [], "ok": False}, {"ok": False}),
    ({"t": 4.0, "ev": "badge_registered", "uid": UID, "dealer": "1042"}, {"uid": UID, "dealer": "1042"}),
    ({"t": 4.0, "ev": "registry_applied", "version": 3, "fingerprint": "ab" * 32}, {"version": 3}),
    ({"t": 4.5, "ev": "commissioned", "technician": "jana", "at": "2026-12-02T07:41:05+01:00", "zone": "",
      "version": "1.4.0", "config": "ab" * 32, "ok": True,
      "devices": [{"device": "state", "verdict": "pass", "advice": "", "figures": []}]},
     {"technician": "jana", "version": "1.4.0", "zone": ""}),
]


@pytest.mark.parametrize("data, fields", VALID, ids=[f"{d['ev']}-{i}" for i, (d, _) in enumerate(VALID)])
def test_valid_events_parse(data, fields):
    e = Event.from_dict(data)
    assert e.ev == data["ev"]
    assert e.t == float(data["t"]) and isinstance(e.t, float)
    for key, value in fields.items():
        assert getattr(e, key) == value, key


def test_every_event_kind_and_zone_has_a_valid_example():
    assert {d["ev"] for d, _ in VALID} == set(EVENT_KINDS)
    for zone in sorted(ZONES):
        assert Event.from_dict({"t": 1, "ev": "zone_on", "card": "Ah", "zone": zone}).zone == zone
    assert ZONES == {"burn", "muck"} | {f"seat{i}" for i in range(1, 11)}
    assert BUTTONS == {"new_hand", "round_done", "exposed", "boxed", "ack", "reshuffled", "premature",
                       "misdeal", "floor", "hand_over"}


@pytest.mark.parametrize("players", range(2, 11))
def test_players_2_to_10_are_valid(players):
    assert Event.from_dict({"t": 0, "ev": "new_hand", "players": players}).players == players


def test_every_card_code_is_valid_on_a_card_event():
    from dealerbox.domain.cards import DECK_52

    for card in DECK_52:
        assert Event.from_dict({"t": 0, "ev": "shoe", "card": card}).card == card


INVALID = [
    # t
    ({"ev": "tick"}, "'t'"),
    ({"t": -0.5, "ev": "tick"}, "'t'"),
    ({"t": math.nan, "ev": "tick"}, "'t'"),
    ({"t": math.inf, "ev": "tick"}, "'t'"),
    ({"t": True, "ev": "tick"}, "'t'"),
    ({"t": False, "ev": "tick"}, "'t'"),
    ({"t": "1.0", "ev": "tick"}, "'t'"),
    ({"t": None, "ev": "tick"}, "'t'"),
    # ev
    ({"t": 1}, "'ev'"),
    ({"t": 1, "ev": "deal"}, "'ev'"),
    ({"t": 1, "ev": "SHOE", "card": "Ah"}, "'ev'"),
    # card / uid
    ({"t": 1, "ev": "shoe", "card": "Ah", "uid": UID}, "exactly one of 'card' or 'uid'"),
    ({"t": 1, "ev": "shoe"}, "exactly one of 'card' or 'uid'"),
    ({"t": 1, "ev": "board_on"}, "exactly one of 'card' or 'uid'"),
    ({"t": 1, "ev": "shoe", "card": "AH"}, "not a card code"),
    ({"t": 1, "ev": "shoe", "card": "1h"}, "not a card code"),
    ({"t": 1, "ev": "shoe", "card": "10h"}, "not a card code"),
    ({"t": 1, "ev": "shoe", "card": "Joker"}, "not a card code"),
    ({"t": 1, "ev": "shoe", "card": 14}, "not a card code"),
    ({"t": 1, "ev": "shoe", "card": "Ah", "deck": ""}, "'deck'"),
    ({"t": 1, "ev": "shoe", "card": "Ah", "deck": 2}, "'deck'"),
    ({"t": 1, "ev": "shoe", "uid": UID, "deck": "A"}, "'deck' goes with 'card'"),
    ({"t": 1, "ev": "shoe", "uid": "04A3C"}, "even number of hex digits"),
    ({"t": 1, "ev": "shoe", "uid": "0102030405"}, "5 bytes"),
    ({"t": 1, "ev": "shoe", "uid": 1234}, "neither"),
    # zones
    ({"t": 1, "ev": "zone_on", "card": "Ah"}, "'zone'"),
    ({"t": 1, "ev": "zone_on", "card": "Ah", "zone": "seat0"}, "'zone'"),
    ({"t": 1, "ev": "zone_on", "card": "Ah", "zone": "seat11"}, "'zone'"),
    ({"t": 1, "ev": "zone_off", "card": "Ah", "zone": "board"}, "'zone'"),
    ({"t": 1, "ev": "zone_off", "card": "Ah", "zone": "Burn"}, "'zone'"),
    # new_hand
    ({"t": 1, "ev": "new_hand"}, "'players'"),
    ({"t": 1, "ev": "new_hand", "players": 1}, "'players'"),
    ({"t": 1, "ev": "new_hand", "players": 11}, "'players'"),
    ({"t": 1, "ev": "new_hand", "players": 0}, "'players'"),
    ({"t": 1, "ev": "new_hand", "players": True}, "'players'"),
    ({"t": 1, "ev": "new_hand", "players": 6.0}, "'players'"),
    ({"t": 1, "ev": "new_hand", "players": "6"}, "'players'"),
    ({"t": 1, "ev": "new_hand", "players": 6, "hole_cards": 3}, "'hole_cards'"),
    ({"t": 1, "ev": "new_hand", "players": 6, "hole_cards": 5}, "'hole_cards'"),
    ({"t": 1, "ev": "new_hand", "players": 6, "hole_cards": "2"}, "'hole_cards'"),
    ({"t": 1, "ev": "new_hand", "players": 6, "hole_cards": None}, "'hole_cards'"),
    # seats extension
    ({"t": 1, "ev": "new_hand", "players": 3, "seats": [1, 2]}, "'seats'"),
    ({"t": 1, "ev": "new_hand", "players": 3, "seats": [1, 2, 2]}, "'seats'"),
    ({"t": 1, "ev": "new_hand", "players": 3, "seats": [1, 2, 11]}, "'seats'"),
    ({"t": 1, "ev": "new_hand", "players": 3, "seats": [0, 1, 2]}, "'seats'"),
    ({"t": 1, "ev": "new_hand", "players": 2, "seats": [True, 2]}, "'seats'"),
    ({"t": 1, "ev": "new_hand", "players": 2, "seats": ["1", "2"]}, "'seats'"),
    ({"t": 1, "ev": "new_hand", "players": 2, "seats": "12"}, "'seats'"),
    # buttons and readers
    ({"t": 1, "ev": "button"}, "'name'"),
    ({"t": 1, "ev": "button", "name": "deal"}, "'name'"),
    ({"t": 1, "ev": "button", "name": "ACK"}, "'name'"),
    ({"t": 1, "ev": "reader_fault"}, "'reader'"),
    ({"t": 1, "ev": "reader_ok", "reader": ""}, "'reader'"),
    ({"t": 1, "ev": "reader_ok", "reader": 3}, "'reader'"),
    # unknown keys
    ({"t": 1, "ev": "tick", "colour": "red"}, "unknown key 'colour'"),
    ({"t": 1, "ev": "shoe", "card": "Ah", "Card": "Kd"}, "unknown key 'Card'"),
    # not an object
    ([1, 2], "JSON object"),
    ("tick", "JSON object"),
    (None, "JSON object"),
]


@pytest.mark.parametrize("data, problem", INVALID, ids=[str(i) for i in range(len(INVALID))])
def test_invalid_events_raise_event_error_naming_the_problem(data, problem):
    with pytest.raises(EventError) as err:
        Event.from_dict(data)
    assert problem in str(err.value)
    assert isinstance(err.value, ValueError) and isinstance(err.value, DealerboxError)
    assert err.value.line is None


def test_the_error_shows_the_bad_value():
    with pytest.raises(EventError, match="11"):
        Event.from_dict({"t": 1, "ev": "new_hand", "players": 11})
    with pytest.raises(EventError, match="'deal'"):
        Event.from_dict({"t": 1, "ev": "button", "name": "deal"})


def test_hole_cards_must_be_a_whole_number():
    with pytest.raises(EventError, match="'hole_cards'"):
        Event.from_dict({"t": 1, "ev": "new_hand", "players": 6, "hole_cards": 4.0})


@pytest.mark.parametrize("data, fields", VALID, ids=[f"{d['ev']}-{i}" for i, (d, _) in enumerate(VALID)])
def test_to_dict_from_dict_round_trip(data, fields):
    e = Event.from_dict(data)
    d = e.to_dict()
    assert Event.from_dict(d) == e
    assert Event.from_json(e.to_json()) == e
    # Only the keys that apply are written (a sign-out's null dealer among them), and what was given is kept.
    assert None not in [v for k, v in d.items() if k != "dealer"]
    assert d["t"] == float(data["t"]) and d["ev"] == data["ev"]
    for key in set(data) - {"t", "uid", "seats"}:
        assert d[key] == data[key], key
    if "seats" in data:
        assert d["seats"] == data["seats"]
    if "uid" in data:
        assert d["uid"] == e.uid
    assert json.loads(e.to_json()) == d


def test_from_json_reports_bad_json():
    with pytest.raises(EventError, match="not JSON"):
        Event.from_json('{"t": 1, "ev": "tick"')
    with pytest.raises(EventError, match="'t'"):
        Event.from_json('{"t": NaN, "ev": "tick"}')
    with pytest.raises(EventError, match="'t'"):
        Event.from_json('{"t": Infinity, "ev": "tick"}')


# -- read_events ------------------------------------------------------------

def lines(*objs):
    return [o if isinstance(o, str) else json.dumps(o) for o in objs]


def test_read_events_yields_events_in_order():
    src = lines({"t": 0, "ev": "new_hand", "players": 2}, {"t": 0.5, "ev": "shoe", "card": "Ah"},
                {"t": 1.0, "ev": "tick"})
    got = list(read_events(src))
    assert [e.ev for e in got] == ["new_hand", "shoe", "tick"]
    assert [e.t for e in got] == [0.0, 0.5, 1.0]


def test_read_events_allows_equal_times():
    src = lines({"t": 2, "ev": "shoe", "card": "Ah"}, {"t": 2, "ev": "board_on", "card": "Ah"})
    assert len(list(read_events(src))) == 2


def test_read_events_rejects_time_going_back_and_names_the_line():
    src = lines({"t": 0, "ev": "tick"}, {"t": 5, "ev": "tick"}, {"t": 4.9, "ev": "tick"})
    seen = []
    with pytest.raises(EventError) as err:
        for e in read_events(src):
            seen.append(e.t)
    assert err.value.line == 3
    assert str(err.value).startswith("line 3:")
    assert "5" in str(err.value) and "4.9" in str(err.value)
    assert seen == [0.0, 5.0], "events before the bad line are delivered"


def test_read_events_names_the_line_of_an_invalid_event():
    src = lines({"t": 0, "ev": "tick"}, {"t": 1, "ev": "tick"}, {"t": 2, "ev": "new_hand", "players": 11})
    with pytest.raises(EventError) as err:
        list(read_events(src))
    assert err.value.line == 3
    assert "line 3" in str(err.value) and "'players'" in str(err.value)


def test_read_events_names_the_line_of_bad_json():
    src = lines({"t": 0, "ev": "tick"}, "{not json")
    with pytest.raises(EventError, match="line 2: not JSON"):
        list(read_events(src))


def test_blank_lines_are_skipped_but_counted():
    src = ["", json.dumps({"t": 0, "ev": "tick"}), "   ", "\n", json.dumps({"t": 1, "ev": "tick"}),
           "", json.dumps({"t": 0.5, "ev": "tick"})]
    with pytest.raises(EventError) as err:
        list(read_events(src))
    assert err.value.line == 7
    assert [e.t for e in read_events(src[:6])] == [0.0, 1.0]


def test_read_events_works_on_a_file(tmp_path):
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines({"t": 0, "ev": "new_hand", "players": 3}, "",
                                    {"t": 1, "ev": "shoe", "uid": UID})) + "\n", encoding="utf-8")
    with open(path, encoding="utf-8") as fh:
        got = list(read_events(fh))
    assert [e.ev for e in got] == ["new_hand", "shoe"]
    assert got[1].uid == UID


def test_read_events_start_line_offsets_the_numbers():
    with pytest.raises(EventError) as err:
        list(read_events(lines({"t": 1, "ev": "nope"}), start_line=41))
    assert err.value.line == 41


def test_negative_t_on_the_first_line_is_rejected():
    with pytest.raises(EventError) as err:
        list(read_events(lines({"t": -1, "ev": "tick"})))
    assert err.value.line == 1


# -- the seats extension ----------------------------------------------------

def test_seats_are_kept_in_deal_order():
    e = Event.from_dict({"t": 0, "ev": "new_hand", "players": 4, "seats": [3, 5, 9, 1]})
    assert e.seats == (3, 5, 9, 1)
    assert e.to_dict()["seats"] == [3, 5, 9, 1]


def test_seats_without_them_is_none():
    e = Event.from_dict({"t": 0, "ev": "new_hand", "players": 4})
    assert e.seats is None and "seats" not in e.to_dict()


def test_ten_seats_is_the_most():
    e = Event.from_dict({"t": 0, "ev": "new_hand", "players": 10, "seats": list(range(10, 0, -1))})
    assert e.seats == tuple(range(10, 0, -1))


def test_deeply_nested_json_is_an_event_error():
    src = [json.dumps({"t": 0, "ev": "tick"}), "[" * 100000]
    with pytest.raises(EventError) as err:
        list(read_events(src))
    assert err.value.line == 2


# -- the id extension ---------------------------------------------------------

@pytest.mark.parametrize("ident", [0, 17, "mqtt-42", ""])
def test_an_id_is_kept_and_round_trips(ident):
    e = Event.from_dict({"t": 1, "ev": "shoe", "card": "Ah", "id": ident})
    assert e.id == ident
    assert e.to_dict()["id"] == ident
    assert Event.from_dict(e.to_dict()) == e


def test_without_an_id_none_is_written():
    e = Event.from_dict({"t": 1, "ev": "tick"})
    assert e.id is None and "id" not in e.to_dict()


@pytest.mark.parametrize("ident", [True, 1.5, None, [1], {"n": 1}])
def test_a_bad_id_is_named(ident):
    with pytest.raises(EventError, match="'id'"):
        Event.from_dict({"t": 1, "ev": "tick", "id": ident})


@pytest.mark.parametrize("data", [
    {"t": 1, "ev": []},
    {"t": 1, "ev": "button", "name": ["ack"]},
    {"t": 1, "ev": "zone_on", "card": "Ah", "zone": {"seat": 1}},
])
def test_a_list_or_object_where_a_name_belongs_is_an_event_error(data):
    with pytest.raises(EventError):
        Event.from_dict(data)


@pytest.mark.parametrize("data", [
    {"t": 1, "ev": "shoe", "card": ["Ah"]},
    {"t": 1, "ev": "shoe", "uid": ["04", "a3"]},
    {"t": 1, "ev": "new_hand", "players": 2, "hole_cards": [2]},
    {"t": [1], "ev": "tick"},
    {"t": 1, "ev": "reader_ok", "reader": ["shoe"]},
])
def test_lists_elsewhere_are_event_errors(data):
    with pytest.raises(EventError):
        Event.from_dict(data)


@pytest.mark.parametrize("t", [10**400, -10**400, 10**13, 1e29, 1e12 + 1, -0.5, 10**12 + 1],
                         ids=["1e400", "-1e400", "int-1e13", "1e29", "1e12+1", "-0.5", "int-1e12+1"])
def test_t_past_its_limit_says_the_limit(t):
    with pytest.raises(EventError) as err:
        Event.from_dict({"t": t, "ev": "tick"})
    assert err.value.key == "t"
    assert "'t' must be" in str(err.value) and "from 0 to 1e12" in str(err.value)


@pytest.mark.parametrize("t", [0, 1e12, 10**12, 1_700_000_000.25])
def test_t_up_to_its_limit_is_valid(t):
    assert Event.from_dict({"t": t, "ev": "tick"}).t == float(t)


@pytest.mark.parametrize("line, key", [
    ('{"t": 1%s, "ev": "tick"}' % ("0" * 5000), "'t'"),
    ('{"t": -1%s, "ev": "tick"}' % ("0" * 5000), "'t'"),
    ('{"t": 1, "ev": "new_hand", "players": 2%s}' % ("0" * 4300), "'players'"),
    ('{"t": 1, "ev": "new_hand", "players": 2, "hole_cards": 4%s}' % ("0" * 4300), "'hole_cards'"),
    ('{"t": 1, "ev": "tick", "id": 9%s}' % ("9" * 4300), "'id'"),
    ('{"t": 1, "ev": "new_hand", "players": 2, "seats": [1, 2%s]}' % ("0" * 4300), "'seats'"),
], ids=["t", "negative-t", "players", "hole_cards", "id", "seats"])
def test_an_integer_too_long_for_python_names_its_key(line, key):
    # Python refuses to convert an integer of more than 4,300 digits; that is a bad
    # value of one key, not a line that is not JSON.
    with pytest.raises(EventError) as err:
        Event.from_json(line)
    assert key in str(err.value) and "not JSON" not in str(err.value)
    assert "digits" in str(err.value) and len(str(err.value)) < 300


def test_a_too_long_integer_before_deep_nesting_is_still_one_event_error():
    with pytest.raises(EventError, match="nested too deeply"):
        Event.from_json("[1%s, %s" % ("0" * 5000, "[" * 100000))


def test_an_event_file_with_a_too_long_integer_names_the_file_line_and_key(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"t": 0, "ev": "tick"}\n{"t": 1%s, "ev": "tick"}\n' % ("0" * 5000), encoding="utf-8")
    with pytest.raises(EventError) as err:
        list(EventFile(path))
    assert (err.value.file, err.value.line, err.value.key) == (str(path), 2, "t")
    assert str(err.value).startswith(f"{path}: line 2: 't' must be")


@pytest.mark.parametrize("field, value", [("uid", "AB" * 5_000_000), ("card", "x" * 1_000_000),
                                          ("name", "y" * 1_000_000)])
def test_an_error_quotes_a_long_value_cut_short(field, value):
    d = {"t": 0, "ev": "button" if field == "name" else "shoe", field: value}
    with pytest.raises(EventError) as err:
        Event.from_dict(d)
    assert len(str(err.value)) < 300


def test_an_odd_length_uid_is_not_called_not_hexadecimal():
    with pytest.raises(EventError) as err:
        Event.from_dict({"t": 0, "ev": "shoe", "uid": "04A3C6CAE2618"})
    assert "even number of hex digits" in str(err.value) and "not hexadecimal" not in str(err.value)
