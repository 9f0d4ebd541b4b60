"""The room's registry on the wire: topic, builder, checked parse and fingerprint."""

from __future__ import annotations

import json

import pytest

from dealerbox.domain.badges import simulated_badge_uid
from dealerbox.domain.decks import simulated_uid
from dealerbox.errors import DealerboxError
from dealerbox.link import protocol
from dealerbox.link.protocol import (FloorRegistry, RegistryPayloadError, build_registry, check_shape,
                                     parse_registry, registry_fingerprint, registry_topic)

AH, KS = simulated_uid("R1", "Ah"), simulated_uid("R1", "Ks")
BADGE = simulated_badge_uid("5001")
DECKS = {"R1": {"back": "green", "tags": {AH: "Ah", KS: "Ks"}}}


def payload(**change) -> bytes:
    d = json.loads(build_registry(3, DECKS, [KS], {BADGE: "5001"}, []))
    d.update(change)
    return json.dumps(d).encode()


def test_the_topic_is_under_the_floors_part_one_per_table():
    assert registry_topic("T01") == "dealerbox/v1/floor/registry/T01"
    assert registry_topic("T01").startswith(protocol.REGISTRY_WILDCARD[:-1])


def test_a_built_registry_parses_back_to_what_was_given():
    reg = parse_registry(build_registry(3, DECKS, [KS], {BADGE: "5001"}, [simulated_badge_uid("9")]))
    assert isinstance(reg, FloorRegistry)
    assert reg.version == 3
    assert reg.decks == {"R1": ("green", {AH: "Ah", KS: "Ks"})}
    assert reg.retired == {KS}
    assert reg.badges == {BADGE: "5001"}
    assert reg.revoked == {simulated_badge_uid("9")}
    assert reg.summary() == {"version": 3, "fingerprint": reg.fingerprint}


def test_the_fingerprint_depends_on_content_only_not_on_spelling_or_order():
    lower = {"R1": {"back": "green", "tags": {KS.lower(): "Ks", ":".join(AH[i:i + 2] for i in range(0, 14, 2)): "Ah"}}}
    a = registry_fingerprint(DECKS, [KS, AH], {BADGE: "5001"}, [])
    assert a == registry_fingerprint(lower, [AH, KS, AH.lower()], {BADGE.lower(): "5001"}, ())
    assert a != registry_fingerprint(DECKS, [KS], {BADGE: "5001"}, [])
    assert a != registry_fingerprint(DECKS, [KS, AH], {BADGE: "5002"}, [])
    # the version is not content: the same registry republished keeps its fingerprint
    assert parse_registry(build_registry(1, DECKS, [], {}, [])).fingerprint == \
        parse_registry(build_registry(9, DECKS, [], {}, [])).fingerprint


def test_unknown_keys_are_ignored():
    assert parse_registry(payload(note="from a newer floor")).version == 3


@pytest.mark.parametrize("bad, words", [
    (b"not json", "not JSON"),
    (b"[1]", "not a JSON object"),
    (json.dumps({"v": 2}).encode(), "schema version 2"),
])
def test_what_is_not_a_payload_is_refused(bad, words):
    with pytest.raises(RegistryPayloadError, match=words):
        parse_registry(bad)


@pytest.mark.parametrize("change, words", [
    ({"kind": "health"}, "kind"),
    ({"version": -1}, "version"),
    ({"version": True}, "version"),
    ({"fingerprint": "abc"}, "fingerprint"),
    ({"fingerprint": "0" * 64}, "does not match"),
    ({"decks": []}, "decks"),
    ({"decks": {"R1": {"back": 3}}}, "decks.R1.back"),
    ({"decks": {"R1": {"tags": {"XYZ": "Ah"}}}}, "decks.R1.tags"),
    ({"decks": {"R1": {"tags": {AH: "Zz"}}}}, "card code"),
    ({"decks": {"R1": {"tags": {AH: "Ah"}}, "R2": {"tags": {AH: "Ks"}}}}, "card of deck"),
    ({"decks": {"": {}}}, "name"),
    ({"retired": "04"}, "retired"),
    ({"retired": [7]}, "retired"),
    ({"badges": {BADGE: "a name with spaces"}}, "dealer id"),
    ({"badges": {AH: "5001"}}, "card of deck"),
    ({"revoked": [None]}, "revoked"),
])
def test_what_does_not_check_is_refused_naming_the_key(change, words):
    with pytest.raises(RegistryPayloadError, match=words) as caught:
        parse_registry(payload(**change))
    assert isinstance(caught.value, DealerboxError) and isinstance(caught.value, ValueError)


def test_a_missing_key_is_named():
    d = json.loads(payload())
    del d["revoked"]
    with pytest.raises(RegistryPayloadError, match="missing revoked"):
        parse_registry(json.dumps(d).encode())


def test_the_builder_refuses_what_a_table_would_refuse():
    with pytest.raises(RegistryPayloadError, match="version"):
        build_registry(-1, DECKS, [], {}, [])
    with pytest.raises(RegistryPayloadError, match="card code"):
        build_registry(1, {"R1": {"back": "", "tags": {AH: "11"}}}, [], {}, [])


def test_health_says_which_registry_or_null():
    fp = registry_fingerprint(DECKS, [], {}, [])
    check_shape("health", "T01", {"registry": None})
    check_shape("health", "T01", {"registry": {"version": 4, "fingerprint": fp}})
    for bad in ({"version": 4}, {"version": "4", "fingerprint": fp}, "v4", {"version": 4, "fingerprint": "x"}):
        with pytest.raises(protocol.PayloadError, match="registry"):
            check_shape("health", "T01", {"registry": bad})


def _signed(decks) -> bytes:
    """A payload whose fingerprint matches its content, computed here as the floor does, so
    that only the content's own check can refuse it."""
    import hashlib

    body = {"decks": decks, "retired": [], "badges": {}, "revoked": []}
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"),
                                       ensure_ascii=True).encode("ascii")).hexdigest()
    return json.dumps({"v": 1, "kind": "registry", "version": 1, "fingerprint": digest, **body}).encode()


@pytest.mark.parametrize("name", ["R7\n", "R7\u2028", "x" * 65, "R/7"])
def test_a_deck_name_the_journal_refuses_is_refused_on_the_wire_too(name):
    """One rule for a deck name: what an Event refuses (a trailing newline, a line separator,
    too long), the registry refuses, and the floor's builder will not send it."""
    from dealerbox.domain.events import Event
    from dealerbox.errors import EventError

    with pytest.raises(EventError):
        Event.from_dict({"t": 0, "ev": "deck_checked", "deck": name, "missing": [], "damaged": [], "ok": True})
    with pytest.raises(RegistryPayloadError, match="decks: name"):
        parse_registry(_signed({name: {"back": "", "tags": {AH: "Ah"}}}))
    with pytest.raises(RegistryPayloadError, match="decks: name"):
        build_registry(1, {name: {"back": "", "tags": {AH: "Ah"}}}, [], {}, [])
    assert parse_registry(_signed({"R7": {"back": "", "tags": {AH: "Ah"}}})).decks == {"R7": ("", {AH: "Ah"})}


def test_a_fingerprint_with_a_trailing_newline_is_none():
    good = json.loads(payload())["fingerprint"]
    with pytest.raises(RegistryPayloadError, match="fingerprint = "):
        parse_registry(payload(fingerprint=good + "\n"))
    with pytest.raises(protocol.PayloadError, match="registry"):
        check_shape("health", "T01", {"registry": {"version": 3, "fingerprint": good + "\n"}})
    check_shape("health", "T01", {"registry": {"version": 3, "fingerprint": good}})
