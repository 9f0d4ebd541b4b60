"""Game protection: the statistics that watch the card record (issue 33).

Pure: plain records in, findings with probabilities out; no I/O, no clock, no
threads, and every random draw from a ``random.Random`` the caller passes in.

- :mod:`~dealerbox.floor.protect.hand` the hand as the checks read it;
- :mod:`~dealerbox.floor.protect.shuffles` the declared shuffle and gathering models;
- :mod:`~dealerbox.floor.protect.simulate` a table dealing hands through those models
  (and through the cheats the bench measures);
- :mod:`~dealerbox.floor.protect.shuffle_check` was the deck really shuffled;
- :mod:`~dealerbox.floor.protect.seat_luck` is one seat fed strong starting hands;
- :mod:`~dealerbox.floor.protect.control_chart` is a dealer's error rate out of line.
"""
