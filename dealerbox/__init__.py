"""dealerbox: the controller of an RFID-instrumented poker table."""

__version__ = "0.1.0"
