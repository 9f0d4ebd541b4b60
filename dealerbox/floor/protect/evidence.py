"""Why a protection alert fired: the evidence the pass files with it, and that evidence in words.

Pure: records in, plain dicts (JSON-ready) and lines out. The pass
(:mod:`~dealerbox.floor.protect.floor_pass`) files one evidence dict per time an alert is
raised (``protect_evidence``); the Surveillance page, its JSON and its PDF show it through
:func:`evidence_lines`, every hand a link to its story (``/hands/{table}/{seq}``).

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
  ``failed`` (why its fit failed, or null) and ``next`` (why the alert is due and what to do).
"""

from __future__ import annotations

from dealerbox.floor.telling.games import game_words
from dealerbox.floor.telling.protect_terms import MOST_HANDS, story
from dealerbox.floor.protect.hand import DealtHand, pair

__all__ = ["hand_record", "shuffle_evidence", "evidence_lines", "story"]

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


def _places(places) -> str:
    if not places or None in places:
        return "not known"
    return f"{places[0]} and {places[1]}"


def _hands(table: str, rows) -> list[dict]:
    """Links to hands given as seqs (of *table*) or (table, seq) pairs, the last MOST_HANDS."""
    out = []
    for row in list(rows)[-MOST_HANDS:]:
        t, seq = (row[0], row[1]) if isinstance(row, (list, tuple)) else (table, row)
        out.append({"text": f"table {t}, line {seq}", "href": story(t, seq)})
    return out


def evidence_lines(kind: str, table: str, evidence: dict | None) -> dict:
    """*evidence* in words: ``summary`` (one sentence), ``links`` (``text``, ``href``: the hands
    to open), and for a shuffle alert ``pairs`` (rows: the cards, their places here and in the
    earlier hand, where they lay). Missing or odd evidence gives what can be said."""
    out = {"summary": "", "links": [], "pairs": []}
    if not isinstance(evidence, dict):
        return out
    e = evidence
    if kind == "shuffle":
        pairs = e.get("pairs") or []
        earlier = e.get("earlier")
        out["summary"] = (f"{len(pairs)} pair{'s' if len(pairs) != 1 else ''} of cards lay side by side in this "
                          f"hand's draw as the deck's earlier hand"
                          + (f" (line {earlier})" if earlier is not None else "") + " left them.")
        out["pairs"] = [{"cards": " ".join(p.get("cards") or []), "here": _places(p.get("here")),
                         "there": _places(p.get("there")), "was": p.get("was") or "apart"} for p in pairs]
        out["links"] = [{"text": f"this hand's story (table {table}, line {e.get('hand')})",
                         "href": story(table, e.get("hand"))}]
        if earlier is not None:
            out["links"].append({"text": f"the earlier hand's story (table {table}, line {earlier})",
                                 "href": story(table, earlier)})
    elif kind == "procedure":
        hands = e.get("hands") or []
        out["summary"] = (f"Dealer {e.get('dealer') or 'nobody signed in'}'s block of {len(hands)} hands kept "
                          f"{e.get('statistic')} pairs in all; each hand below opens its story.")
        out["links"] = _hands(table, hands)
    elif kind == "seat_luck":
        strong = e.get("strong_hands") or []
        seat = str(e.get("seat"))
        seat = seat[:1].upper() + seat[1:] if seat.startswith(("seat", "the seat")) else f"Seat {seat}"
        since = (f"({e['window']})" if e.get("window") else "since its chart last stood at 0")
        out["summary"] = (f"{seat} was dealt {len(strong)} strong starting hands in {e.get('hands')} hands {since}, "
                          f"where chance gives about {float(e.get('expected') or 0):.1f}.")
        out["links"] = _hands(table, strong)
    elif kind == "dealer_chart":
        errors = e.get("error_hands") or []
        out["summary"] = (f"Dealer {e.get('dealer')}'s chart reached {float(e.get('value') or 0):.1f} (limit "
                          f"{float(e.get('h') or 0):.1f}) after {len(errors)} hand{'s' if len(errors) != 1 else ''} "
                          f"with an error since it last stood at 0.")
        out["links"] = _hands(table, errors)
    elif kind == "protect_reference":
        game = e.get("game") or [None, None]
        words = game_words(*game) if None not in game else "a game"
        found = e.get("found_model") or e.get("found") or "a model nobody recorded"
        why = ("no reference has been fitted for it under the declared model" if e.get("reason") == "missing"
               else f"its reference was fitted from another model ({found})")
        out["summary"] = (f"Hands of {words} are not checked for a shuffle: {why}. The declared model is "
                          f"{e.get('declared_model') or e.get('expected')}. "
                          + (e["next"][:1].upper() + e["next"][1:] + "." if e.get("next")   # what the pass said to do
                             else "It is being fitted in the background; hands are checked once it is stored."
                             if e.get("fitting") else "Run dealerbox floor protect fit."))
        if e.get("hand") is not None:
            out["links"] = [{"text": f"the first hand not checked (table {table}, line {e['hand']})",
                             "href": story(table, e["hand"])}]
    return out
