"""The emulators are found by the reader kind's name, never by import from the box."""

from __future__ import annotations

import pytest

from dealerbox.errors import DealerboxError
from dealerbox.hw.emulation import EmulatorMissing, find_emulator
from dealerbox.service.kinds import READER_KINDS
from hardware_sim import emulators


@pytest.mark.parametrize("kind", sorted(READER_KINDS))
def test_every_reader_kind_has_its_emulator_registered_under_its_name(kind):
    assert find_emulator(kind) is getattr(emulators, f"emulate_{kind}")


def test_a_kind_without_an_emulator_says_the_simulator_is_not_installed():
    with pytest.raises(EmulatorMissing, match="'telepathy'.*simulator package.*not installed") as caught:
        find_emulator("telepathy")
    assert isinstance(caught.value, DealerboxError)
