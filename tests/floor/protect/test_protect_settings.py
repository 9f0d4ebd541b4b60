"""``[protect]`` of floor.toml: the declared model read, every bad value named."""

import pytest

from dealerbox.errors import ConfigError
from dealerbox.floor.protect.config import ProtectConfig
from dealerbox.floor.operating.settings import load_protect


def write(tmp_path, text):
    path = tmp_path / "floor.toml"
    path.write_text(text)
    return path


def test_no_section_is_the_defaults_and_a_house_shuffle_is_read(tmp_path):
    assert load_protect(write(tmp_path, "")) == ProtectConfig()
    config = load_protect(write(tmp_path, '[protect]\nshuffle = "riffle riffle strip riffle cut"\n'
                                          'window_hours = 6\nroom_rate = "fitted"\nplayers = [9]\n'
                                          'strong = ["AA", "KK", "QQ", "JJ", "TT", "AKs", "AKo"]\n'
                                          '[protect.gathering]\nboard = "reversed"\nplace = "top"\n'))
    assert str(config.shuffle) == "riffle riffle strip riffle cut" and config.window_s == 6 * 3600
    assert config.room_rate is None and config.players == (9,)
    assert config.holdem_strong == frozenset({"AA", "KK", "QQ", "JJ", "TT", "AKs", "AKo"})
    assert (config.gathering.board, config.gathering.place, config.gathering.hands_together) == ("reversed", "top", True)


def test_every_game_is_kept_by_default_and_the_room_for_the_budget_is_read(tmp_path):
    d = ProtectConfig()
    # Hold'em and Omaha at every count from 2 to 10: 18 references, fitted in the background.
    assert len(d.games()) == 18 and (2, 2) in d.games() and (10, 4) in d.games() and d.auto_fit
    config = load_protect(write(tmp_path, "[protect]\nauto_fit = false\nhands_per_hour = 25\nhours_per_week = 84\n"
                                          "tables = 6\n"))
    assert (config.auto_fit, config.hands_per_hour, config.hours_per_week, config.tables) == (False, 25.0, 84.0, 6)
    # A reference being fitted is a status for a quarter of an hour, then surveillance's alert.
    assert d.reference_wait_minutes == 15.0
    assert load_protect(write(tmp_path, "[protect]\nreference_wait_minutes = 40\n")).reference_wait_minutes == 40.0
    seats = load_protect(write(tmp_path, "[protect]\nseat_feed_every = 10\nseat_alarms_per_year = 0.5\n"))
    assert (seats.seat_feed_every, seats.seat_alarms_per_year) == (10.0, 0.5)
    # The fingerprint is the model's: a change of shuffle or gathering changes it, the same model does not.
    hand = load_protect(write(tmp_path, '[protect]\nshuffle = "riffle riffle cut"\n'))
    on_top = load_protect(write(tmp_path, '[protect]\nshuffle = "riffle riffle cut"\n'
                                          '[protect.gathering]\nplace = "top"\n'))
    assert hand.fingerprint(6, 2) == load_protect(write(tmp_path, '[protect]\nshuffle = "riffle riffle cut"\n'
                                                                  'tables = 3\n')).fingerprint(6, 2)
    assert len({d.fingerprint(6, 2), hand.fingerprint(6, 2), on_top.fingerprint(6, 2), hand.fingerprint(6, 4)}) == 4


@pytest.mark.parametrize("text, key, says", [
    ('shuffle = "riffle wash"', "protect.shuffle", "steps of cut, machine, riffle, strip"),
    ("threshold = 2", "protect.threshold", "a probability"),
    ("room_rate = 0.5", "protect.room_rate", '"fitted"'),
    ("players = [1, 9]", "protect.players", "player counts, 2..10"),
    ("shuffel = 'machine'", "protect.shuffel", "one of"),
    ('gathering = {board = "sideways"}', "protect.gathering.board", "in_order"),
    ('strong = ["AA", "KAs"]', "protect.strong", "hold'em classes"),
    ('auto_fit = "yes"', "protect.auto_fit", "true or false"),
    ("reference_wait_minutes = -1", "protect.reference_wait_minutes", "minutes, 0..1440"),
    ("hands_per_hour = 0", "protect.hands_per_hour", "hands an hour at one table"),
    ("hours_per_week = 200", "protect.hours_per_week", "hours a week the tables deal"),
    ("seat_feed_every = 1", "protect.seat_feed_every", "a seat fed a strong hand once in so many"),
    ("seat_alarms_per_year = 0", "protect.seat_alarms_per_year", "false alarms a year"),
    ("room_spread = 0.5", "protect.room_spread", "the spread of the dealers' own error rates"),
])
def test_a_bad_value_names_the_file_the_key_and_what_was_expected(tmp_path, text, key, says):
    path = write(tmp_path, f"[protect]\n{text}\n")
    with pytest.raises(ConfigError) as caught:
        load_protect(path)
    message = str(caught.value)
    assert str(path) in message and key in message and says in message
