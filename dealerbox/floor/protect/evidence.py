"""Why a protection alert fired: the evidence the pass files with it.

Pure: records in, plain dicts (JSON-ready) out. The pass
(:mod:`~dealerbox.floor.protect.floor_pass`) files one evidence dict per time an alert is
raised (``protect_evidence``); the Surveillance page, its JSON and its PDF tell it in their
reader's language, in one way only (:meth:`~dealerbox.floor.telling.protect_words.ProtectWords.why`),
every hand a link to its story (``/hands/{table}/{seq}``) named by its number at its table.

The shapes, by the alert's kind:

- ``shuffle``: ``hand`` (this hand's seq), ``deck``, ``statistic``, ``earlier`` (the seq of the
  deck's earlier hand whose pairs were kept most), ``pairs``: each kept pair's ``cards``, its
  places in this hand's draw (``here``, from 1), its places in the earlier hand's draw
  (``there``) and where it lay there (``was``: ``seat 3``, ``the board``, ``the burns``);
- ``procedure``: ``dealer``, ``statistic`` (pairs kept in all) and ``hands`` (table, seq);
- ``seat_luck``: ``seat`` (in words: ``seat 3``, or a seat recovered from the deal), ``hands``
  since its chart last stood at 0, ``expected``, ``value``, ``h`` and ``strong_hands`` (seqs);
- ``dealer_chart``: ``dealer``, ``hand``, ``value``, ``h`` and ``error_hands`` (table, seq): the
  hands with an error since the chart last stood at 0;
- ``protect_reference``: ``game`` (players, hole cards), ``reason`` (``missing``: no reference
  for the game; ``stale``: one fitted from another model), ``expected`` and ``found``
  fingerprints and the models in words (``declared_model``, ``found_model``), ``hand`` (the
  first hand left unscored) and ``since`` (when), ``fitting`` (being fitted in the background),
  ``failed`` (why its fit failed, or null), ``due`` (why the alert is due: ``nobody`` fits it,
  its fit ``failed``, or it ``waited`` ``waited_minutes`` of ``wait_minutes``; older alerts have
  none) and ``next`` (the same and what to do, in plain English: older alerts' named a setting
  and a command).
"""

from __future__ import annotations

from dealerbox.floor.protect.hand import DealtHand, pair

__all__ = ["hand_record", "shuffle_evidence"]

def hand_record(hand: DealtHand) -> dict:
    """What a later hand's shuffle evidence needs of *hand*: its seq, its draw, and where each
    named card lay when the hand was over (a seat's hole cards, the board, the burns)."""
    where: dict[str, str] = {}
    for seat, cards in zip(hand.seat_numbers(), hand.holes()):
        for card in cards:
            where[card] = f"seat {seat}"
    for card in hand.laid_board():
        where[card] = "the board"
    for card in hand.burns():
        where[card] = "the burns"
    return {"seq": hand.hand_id, "draw": list(hand.draw), "where": where}


def shuffle_evidence(hand: DealtHand, history: list, records: list) -> dict:
    """The kept pairs of *hand* against the earlier hand of its deck that left the most of them
    side by side: *history* the earlier hands' pairs (oldest first, as the check keeps them),
    *records* their :func:`hand_record` (aligned with *history* where known; older floors kept
    only the pairs, and then the earlier hand's places are not known)."""
    draw = hand.draw
    best, best_kept = None, []
    for i, together in enumerate(history):
        kept = [(place, a, b) for place, (a, b) in enumerate(zip(draw, draw[1:])) if pair(a, b) in together]
        if best is None or len(kept) > len(best_kept):
            best, best_kept = i, kept
    record = None
    if best is not None and len(records) == len(history):
        record = records[best]
    pairs = []
    for place, a, b in best_kept:
        row = {"cards": [a, b], "here": [place + 1, place + 2], "there": None, "was": None}
        if record is not None:
            there = record["draw"]
            row["there"] = [there.index(a) + 1 if a in there else None, there.index(b) + 1 if b in there else None]
            was_a, was_b = record["where"].get(a), record["where"].get(b)
            row["was"] = was_a if was_a == was_b else None
        pairs.append(row)
    return {"hand": hand.hand_id, "deck": hand.deck, "statistic": len(best_kept),
            "earlier": record["seq"] if record is not None else None, "pairs": pairs}
