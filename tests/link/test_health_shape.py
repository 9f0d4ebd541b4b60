"""The health fields a table adds for the floor's tables page (issue 41) are checked as
every other: a value of the wrong kind refuses the message, naming the key; null is fine
(a box that cannot tell), and a health without them (an older box) is fine too."""

from __future__ import annotations

import pytest

from dealerbox.link import protocol as P

GOOD = {"version": "0.1.0", "config_fingerprint": "ab" * 32, "profile": "standard", "uptime_s": 12.5,
        "restarts": 3}


def test_the_new_health_fields_pass_when_present_null_or_absent():
    P.check_shape("health", "T01", {"v": 1, **GOOD})
    P.check_shape("health", "T01", {"v": 1, **{k: None for k in GOOD}})
    P.check_shape("health", "T01", {"v": 1, "backlog": 0})


@pytest.mark.parametrize("key, bad", [
    ("version", 1), ("config_fingerprint", ["ab"]), ("profile", {"name": "x"}),
    ("uptime_s", "long"), ("uptime_s", True), ("restarts", -1), ("restarts", 1.5), ("restarts", "2"),
])
def test_a_new_health_field_of_the_wrong_kind_is_refused_naming_it(key, bad):
    with pytest.raises(P.PayloadError, match=f"^{key} = "):
        P.check_shape("health", "T01", {"v": 1, **GOOD, key: bad})
