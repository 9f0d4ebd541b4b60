"""Card readers on a serial port.

:mod:`~dealerbox.hw.serial.base` holds what every one shares (port life cycle,
faults, counters, rate-limited logging); :mod:`~dealerbox.hw.serial.pepper` drives
the Eccel Pepper C1 over its binary protocol, :mod:`~dealerbox.hw.serial.shoe_line`
a shoe with its own microcontroller over the ``DBX1`` line protocol.
"""
