"""A hand's story, told from the journal lines its table sent: what surveillance
asks for after a dispute.

:func:`tell` is pure (one hand's lines in, the story out): who dealt, the cards
in the order they left the shoe, the board as it stood, every decision with its
verdict, rule source and steps, and which of those steps the box saw done.
:func:`hand_lines` finds, in the store, the lines of the hand that holds a
given ``seq`` (any alert or decision of it), with SQLAlchemy Core so that it
reads either backend.

What "seen done" means: the box writes a decision whenever the step it waits
for moves (CONTRACT.md), so a step is seen done when a later decision of the
same irregularity waits for a later step, or when the box's verdict moved on
from that irregularity to ``ok`` (the dealer's next action answered it, as
RULES.md lets it). Steps of a correction still open when the hand ended are
not seen done, and HAND OVER's own record of them says so.
"""

from __future__ import annotations

import json

from sqlalchemy import select

from dealerbox.floor.figures import fig_hands, fig_progress, store_lines
from dealerbox.floor.hands import wall_seconds

__all__ = ["tell", "hand_lines", "registry_cards", "HAND_LINES_MAX"]

#: A hand is never longer than this many journal lines; a search for its first
#: or last line stops there (a table that never pressed NEW HAND).
HAND_LINES_MAX = 2000


def hand_lines(conn, table_id: str, seq: int) -> tuple[list[str], str | None] | None:
    """The stored lines of *table_id*'s hand holding *seq*, in order, and its dealer
    when the figures know it; None when no such line is stored."""
    lines = store_lines
    back = conn.execute(select(lines.c.seq, lines.c.line)
                        .where(lines.c.table_id == table_id, lines.c.seq <= seq)
                        .order_by(lines.c.seq.desc()).limit(HAND_LINES_MAX)).all()
    if not back or back[0][0] != seq:
        return None
    first = back[-1][0]
    for s, line in back:
        if _is_new_hand(line):
            first = s
            break
    ahead = conn.execute(select(lines.c.seq, lines.c.line)
                         .where(lines.c.table_id == table_id, lines.c.seq >= first)
                         .order_by(lines.c.seq).limit(HAND_LINES_MAX)).all()
    out = []
    for s, line in ahead:
        if s > first and _is_new_hand(line):
            break
        out.append(line)
    dealer = conn.execute(select(fig_hands.c.dealer)
                          .where(fig_hands.c.table_id == table_id, fig_hands.c.start_seq == first)).first()
    if dealer is None:  # the hand is still open: who dealt at its start, as the figures follow it
        dealer = conn.execute(select(fig_progress.c.dealer)
                              .where(fig_progress.c.table_id == table_id,
                                     fig_progress.c.resume_seq == first)).first()
    return out, (dealer[0] if dealer else None)


def _is_new_hand(line: str) -> bool:
    if '"new_hand"' not in line:
        return False
    record = _record(line)
    return isinstance(record.get("event"), dict) and record["event"].get("ev") == "new_hand"


def _record(line) -> dict:
    try:
        record = json.loads(line) if isinstance(line, (str, bytes)) else line
    except ValueError:
        return {}
    return record if isinstance(record, dict) else {}


def _card_of(event: dict, card_of_uid=None) -> str:
    """The card an event names: its ``card``, else its tag's card where *card_of_uid* knows
    the tag (a deck registry), else ``uid:<hex>``."""
    if event.get("unread"):
        return "(unread)"
    if isinstance(event.get("card"), str):
        return event["card"]
    if isinstance(event.get("uid"), str):
        card = card_of_uid(event["uid"]) if card_of_uid is not None else None
        return card or f"uid:{event['uid']}"
    return "?"


def registry_cards(*registries):
    """A *card_of_uid* for :func:`tell` from deck registries (dealerbox.domain.decks),
    tried in order: a tag of a deck other than ``A`` is shown with its deck."""
    def card_of_uid(uid: str) -> str | None:
        for registry in registries:
            try:
                tag = registry.lookup(uid)
            except ValueError:  # not a UID at all: shown as it came
                return None
            if tag is not None:
                return tag.card if tag.deck == "A" else f"{tag.card} (deck {tag.deck})"
        return None
    return card_of_uid


def _event_text(ev: dict, card_of_uid=None) -> str:
    kind = ev.get("ev")
    if kind == "new_hand":
        return f"NEW HAND, {ev.get('players')} players"
    if kind == "shoe":
        return f"out of the shoe: {_card_of(ev, card_of_uid)}"
    if kind in ("board_on", "board_off"):
        return f"{_card_of(ev, card_of_uid)} {'onto' if kind == 'board_on' else 'off'} the board"
    if kind in ("zone_on", "zone_off"):
        return f"{_card_of(ev, card_of_uid)} {'into' if kind == 'zone_on' else 'out of'} {ev.get('zone')}"
    if kind == "button":
        return f"button {str(ev.get('name', '?')).upper().replace('_', ' ')}"
    if kind in ("reader_fault", "reader_ok"):
        return f"reader {ev.get('reader')} {'fault' if kind == 'reader_fault' else 'back'}"
    if kind == "dealer":
        return f"dealer {ev.get('dealer')} signs in" if ev.get("dealer") else "the dealer signs out"
    return str(kind)


def tell(table_id: str, lines, *, dealer: str | None = None, card_of_uid=None) -> dict:
    """The story of one hand from its journal lines (the first a ``new_hand``, or the
    oldest line kept). *dealer*: who dealt, when known from before the hand.
    *card_of_uid* names the cards the table journaled by their tag (:func:`registry_cards`)."""
    story = {"table": table_id, "dealer": dealer, "players": None, "hole_cards": 2,
             "start_seq": None, "end_seq": None, "started": None, "ended": None, "ended_by": "open",
             "shoe": [], "board": [], "decisions": [], "timeline": []}
    board: list[str] = []
    decisions = story["decisions"]
    for line in lines:
        record = _record(line)
        seq = record.get("seq")
        if not isinstance(seq, int) or isinstance(seq, bool):
            continue
        wall = wall_seconds(record.get("wall"))
        if story["start_seq"] is None:
            story["start_seq"], story["started"] = seq, wall
        story["end_seq"], story["ended"] = seq, wall
        event, decision = record.get("event"), record.get("decision")
        if isinstance(event, dict):
            kind = event.get("ev")
            if kind == "new_hand":
                story["players"] = event.get("players")
                story["hole_cards"] = event.get("hole_cards", 2)
            elif kind == "shoe":
                story["shoe"].append({"seq": seq, "t": event.get("t"), "card": _card_of(event, card_of_uid)})
            elif kind == "board_on" and _card_of(event, card_of_uid) not in board:
                board.append(_card_of(event, card_of_uid))
            elif kind == "board_off" and _card_of(event, card_of_uid) in board:
                board.remove(_card_of(event, card_of_uid))
            elif kind == "button" and event.get("name") in ("hand_over", "misdeal"):
                story["ended_by"] = event["name"]
            if kind != "tick":
                story["timeline"].append({"seq": seq, "wall": wall, "what": _event_text(event, card_of_uid)})
        elif isinstance(decision, dict):
            steps = decision.get("steps") if isinstance(decision.get("steps"), list) else []
            step = decision.get("step") if isinstance(decision.get("step"), int) else 0
            entry = {"seq": seq, "wall": wall, "verdict": decision.get("verdict"),
                     "irregularity": decision.get("irregularity"), "cards": decision.get("cards") or [],
                     "rule": decision.get("rule") or "", "steps": [str(s) for s in steps], "step": step,
                     "phase": decision.get("phase")}
            decisions.append(entry)
            if entry["verdict"] in ("misdeal", "void") and story["ended_by"] == "open":
                story["ended_by"] = entry["verdict"]
            what = entry["irregularity"] or "ok"
            story["timeline"].append({"seq": seq, "wall": wall,
                                      "what": f"decision {str(entry['verdict']).upper()} {what}"})
    story["board"] = board
    _mark_seen_done(decisions)
    return story


def _mark_seen_done(decisions: list[dict]) -> None:
    """Add ``done`` (one bool per step) to each decision: see the module's docstring."""
    for i, d in enumerate(decisions):
        reached = d["step"]
        for later in decisions[i + 1:]:
            if later["irregularity"] != d["irregularity"]:
                if later["verdict"] == "ok" and later["irregularity"] is None:
                    reached = len(d["steps"])  # the box moved on: answered
                break
            reached = max(reached, later["step"])
        d["done"] = [k < reached for k in range(len(d["steps"]))]
