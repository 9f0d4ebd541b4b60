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


@pytest.mark.parametrize("text, key, says", [
    ('shuffle = "riffle wash"', "protect.shuffle", "steps of cut, machine, riffle, strip"),
    ("threshold = 2", "protect.threshold", "a probability"),
    ("room_rate = 0.5", "protect.room_rate", '"fitted"'),
    ("players = [1, 9]", "protect.players", "player counts, 2..10"),
    ("shuffel = 'machine'", "protect.shuffel", "one of"),
    ('gathering = {board = "sideways"}', "protect.gathering.board", "in_order"),
    ('strong = ["AA", "KAs"]', "protect.strong", "hold'em classes"),
])
def test_a_bad_value_names_the_file_the_key_and_what_was_expected(tmp_path, text, key, says):
    path = write(tmp_path, f"[protect]\n{text}\n")
    with pytest.raises(ConfigError) as caught:
        load_protect(path)
    message = str(caught.value)
    assert str(path) in message and key in message and says in message
