"""The protection pass's tables in the store (migrations/versions/0007_protect.py creates them).

Like the figures' tables (:mod:`dealerbox.floor.telling.figures`), these are an aggregate the
pass can rebuild from the stored lines, except ``protect_fitted`` (the references and
room rate ``dealerbox floor protect fit`` computed), which is configuration.

- ``protect_progress``: per table, the last line read, the open hand's first line
  (read again next time), who deals there, and its seats (``seats``, JSON; migration 0012):
  the run of seats recovered from the deal and each seat's chart (``window``, the seat-luck
  window last scored before the seats had charts, is no longer written);
- ``protect_decks``: per table and deck, the pairs its last hands left together (JSON), and
  those hands' seqs, draws and where each card lay (``hands``, JSON; migration 0012): what a
  shuffle alert's evidence names;
- ``protect_dealers``: per dealer, the control chart's value (lattice steps), the
  procedure check's open block (JSON), and the chart against the dealer's own baseline
  (``own``, JSON: :class:`~dealerbox.floor.protect.control_chart.OwnBaselineCharts`' row;
  migration 0012);
- ``protect_hands``: one row per closed hand: its deck, the shuffle statistic and
  p-value, whether it had an error, the chart value after it, the seats dealt and the
  seats dealt a strong starting hand (JSON lists), and why its shuffle was not scored
  (``unscored``: ``missing`` or ``stale`` reference; migration 0012); the figures read these;
- ``protect_fitted``: key -> JSON value (``reference/<players>/<hole cards>`` with the model's
  fingerprint, ``room_rate``, ``unscored/<players>/<hole cards>``: the model an unscored game's
  alert was raised for, ``fitting``: the games being fitted in the background);
- ``protect_evidence``: each protection alert's evidence, one row per time it was raised
  (the alert's id, the hand, and what the check saw as JSON: :mod:`~dealerbox.floor.protect.evidence`).
"""

from __future__ import annotations

from sqlalchemy import Column, Index, Integer, MetaData, Table, Text

from dealerbox.floor.store.schema import Float64, Int64

__all__ = ["PROTECT", "protect_progress", "protect_decks", "protect_dealers", "protect_hands",
           "protect_fitted", "protect_evidence"]

PROTECT = MetaData()
protect_progress = Table(
    "protect_progress", PROTECT,
    Column("table_id", Text, primary_key=True),
    Column("seq", Int64, nullable=False),
    Column("resume_seq", Int64),
    Column("dealer", Text),
    Column("window", Int64),
    Column("seats", Text),
)
protect_decks = Table(
    "protect_decks", PROTECT,
    Column("table_id", Text, primary_key=True),
    Column("deck", Text, primary_key=True),
    Column("pairs", Text, nullable=False),
    Column("hands", Text),
)
protect_dealers = Table(
    "protect_dealers", PROTECT,
    Column("dealer", Text, primary_key=True),   # "" for hands nobody was signed in for
    Column("chart", Int64, nullable=False),
    Column("block", Text, nullable=False),
    Column("own", Text),
)
protect_hands = Table(
    "protect_hands", PROTECT,
    Column("table_id", Text, primary_key=True),
    Column("start_seq", Int64, primary_key=True),
    Column("dealer", Text),
    Column("started", Float64),
    Column("players", Integer),
    Column("hole_cards", Integer, nullable=False),
    Column("deck", Text),
    Column("statistic", Integer),
    Column("p_value", Float64),
    Column("error", Integer, nullable=False),
    Column("chart", Float64, nullable=False),
    Column("seats", Text, nullable=False),
    Column("strong", Text, nullable=False),
    Column("unscored", Text),
)
Index("protect_hands_started", protect_hands.c.started)
Index("protect_hands_table_started", protect_hands.c.table_id, protect_hands.c.started)
Index("protect_hands_dealer_started", protect_hands.c.dealer, protect_hands.c.started)
protect_fitted = Table(
    "protect_fitted", PROTECT,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)
protect_evidence = Table(
    "protect_evidence", PROTECT,
    Column("id", Int64, primary_key=True, autoincrement=True),
    Column("alert_id", Int64, nullable=False),
    Column("table_id", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("seq", Int64),
    Column("raised", Float64, nullable=False),
    Column("evidence", Text, nullable=False),
)
Index("protect_evidence_alert", protect_evidence.c.alert_id, protect_evidence.c.id)
