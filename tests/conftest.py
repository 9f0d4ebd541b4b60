"""Fixtures shared by the hardware tests."""

import pytest


@pytest.fixture
def pins():
    """A fresh gpiozero MockFactory as the default pin factory, restored afterwards."""
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory

    saved = Device.pin_factory
    Device.pin_factory = MockFactory()
    yield Device.pin_factory
    Device.pin_factory.reset()
    Device.pin_factory = saved
