"""Game protection: the statistics that watch the card record (issue 33).

The statistics are pure: plain records in, findings with probabilities out; no I/O,
no clock, no threads, and every random draw from a ``random.Random`` the caller passes in.

- :mod:`~dealerbox.floor.protect.hand` the hand as the checks read it;
- :mod:`~dealerbox.floor.protect.shuffles` the declared shuffle and gathering models;
- :mod:`~dealerbox.floor.protect.simulate` a table dealing hands through those models
  (and through the cheats the bench measures);
- :mod:`~dealerbox.floor.protect.shuffle_check` was the deck really shuffled;
- :mod:`~dealerbox.floor.protect.seat_luck` is one seat fed strong starting hands;
- :mod:`~dealerbox.floor.protect.control_chart` is a dealer's error rate out of line;
- :mod:`~dealerbox.floor.protect.references` the shuffle check's references fitted cheaply, and
  the fingerprint of the model they were dealt from;
- :mod:`~dealerbox.floor.protect.seats` physical seats, recorded or recovered from the deal.

Those statistics are pure. On the floor's side, with the store:

- :mod:`~dealerbox.floor.protect.journal_hands` stored journal lines read into hands
  (the figures' hand follower, plus the cards), pure;
- :mod:`~dealerbox.floor.protect.config` what ``[protect]`` declares;
- :mod:`~dealerbox.floor.protect.tables` the pass's tables (migrations 0007 and 0012);
- :mod:`~dealerbox.floor.protect.floor_pass` the pass the figures' ledger runs: hands
  through the checks, alerts filed with their evidence, state and per-hand results kept
  in the store;
- :mod:`~dealerbox.floor.protect.evidence` why an alert fired (the kept pairs and both hands,
  the strong hands, the error hands), and in words with links, pure;
- :mod:`~dealerbox.floor.protect.fitted` the references kept with their model's fingerprint
  (current, stale or missing per game) and the room's rate;
- :mod:`~dealerbox.floor.protect.autofit` missing or stale references fitted in the background;
- :mod:`~dealerbox.floor.protect.budget` the false alerts a fair room should expect, per check, pure;
- :mod:`~dealerbox.floor.protect.figures` what a page shows (shuffle quality, seat luck,
  a dealer's chart, the hands left unchecked);
- :mod:`~dealerbox.floor.protect.fit` ``dealerbox floor protect fit``;
- :mod:`~bench.sim_journal` simulated hands written as journal lines
  (the bench and the tests).
"""
