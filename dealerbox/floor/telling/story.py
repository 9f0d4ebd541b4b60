"""A hand's story, told from the journal lines its table sent: what surveillance
asks for after a dispute.

:func:`tell` is pure (one hand's lines in, the story out): who dealt, each seat's
hole cards, the burns and the board street by street as laid, the cards in the
order they left the shoe, one entry per irregularity with each step of its
correction and when it was seen done, and every decision and event as journaled.
:func:`hand_lines` finds, in the store, the lines of the hand that holds a
given ``seq`` (any alert or decision of it), and :func:`hand_place` the hand's
number at its table and the hands before and after it, with SQLAlchemy Core so
that both read either backend.

Cards are written as the decisions' steps write them (``T♦``,
:func:`~dealerbox.domain.messages.text_card`); a card the box never read (a
mouth-sensor ``shoe`` with ``unread``) keeps its place as ``unread``, never a face.

Reading the journal, choices a pit boss can check against it:

- **Seats.** The first ``players`` x ``hole_cards`` cards out of the shoe are the
  deal, one card per seat in turn, in the ``seats`` order ``new_hand`` gives
  (else seats 1..n in deal order, as the decisions' steps number them); a
  ``zone_on`` into ``seatN`` puts a card at that seat instead. Cards drawn before
  the first ROUND DONE beyond those (a replacement) are listed apart.
- **The board as laid.** Cards in the order they landed on the board. A card
  taken off while the hand went on (a later card was laid after it) was taken
  off; a card gathered once the hand was over (after HAND OVER or a misdeal), or
  with no card laid after it, was the dealer clearing the board, and the board
  keeps it. Flop, turn and river are the board's cards 1-3, 4 and 5.
- **Burns.** A card out of the shoe after the deal that never reached the board
  or a seat, told with the street whose first card was drawn next.
- **Irregularities.** One per episode, as the floor's figures count them
  (:class:`~dealerbox.floor.telling.hands.HandFollower`): the decisions in a row with the
  same irregularity (or, for a manual misdeal or floor call, the same verdict).
  Each step says which event of the table moved the box on (the decision's own
  ``seq``): ``by``.
- **Seen done.** The box writes a decision whenever the step it waits for moves
  (CONTRACT.md), so step *k* is seen done at the first later decision of the
  same episode that waits for a later step, or when the box's verdict moved on
  to ``ok`` (the dealer's next action answered it, as RULES.md lets it). Steps
  still open when another irregularity or the end of the hand came are not seen
  done, and HAND OVER's own record of them says so: it is the entry's ``record``.
  An irregularity told with verdict ``ok`` (play on: a tag not read) asks for no
  correction, so its steps are neither seen done nor not (``done`` None).
  Other records the box kept after HAND OVER (a tag to check) are ``after_hand``:
  the figures' hand ends at HAND OVER, so they count no irregularity there.
"""

from __future__ import annotations

import json
import re

from sqlalchemy import func, select

from dealerbox.domain.messages import text_card
from dealerbox.floor.telling.catalogs import N_, SOURCE_LANGUAGE, translations
from dealerbox.floor.telling.deck_names import registry_decks
from dealerbox.floor.telling.figures import fig_hands, fig_progress, store_lines
from dealerbox.floor.telling.hands import wall_seconds

__all__ = ["tell", "hand_lines", "hand_place", "registry_cards", "shown_card", "HAND_LINES_MAX", "UNREAD",
           "STREETS", "VERDICT_WORDS"]

#: A hand is never longer than this many journal lines; a search for its first
#: or last line stops there (a table that never pressed NEW HAND).
HAND_LINES_MAX = 2000
#: How a card the box never read is written: its place, never a face.
UNREAD = "unread"
#: The board's streets: name and how many of the board's cards each holds.
STREETS = ((N_("flop"), 3), (N_("turn"), 1), (N_("river"), 1))
#: Where burns and cards beyond the board's five go: a street's name too, as the page shows it.
AFTER_THE_BOARD, BEYOND_THE_RIVER = N_("after the board"), N_("beyond the river")
#: A decision's verdict as the story writes it (in capitals, as the box's own record).
VERDICT_WORDS = {"ok": N_("OK"), "correct": N_("CORRECT"), "misdeal": N_("MISDEAL"), "void": N_("VOID"),
                 "floor": N_("FLOOR")}
#: The table's zones other than seats (CONTRACT.md: ``burn``, ``muck``, ``seat1`` .. ``seat10``).
ZONE_WORDS = {"burn": N_("the burn cards"), "muck": N_("the muck")}
_DECK_TAIL = re.compile(r"^(\S+)( \(deck \w+\))$")
_SEAT_ZONE = re.compile(r"^seat(10|[1-9])$")


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


def hand_place(conn, table_id: str, start_seq: int) -> dict:
    """Where the hand starting at line *start_seq* stands among *table_id*'s hands the
    floor holds, as the figures follow them (``fig_hands``, and the hand in play):
    ``number`` (1 for the oldest; None when the line opens no hand the figures know),
    ``prev`` and ``next`` (the first lines of the hands before and after it, or None)."""
    hands = fig_hands
    closed = conn.execute(select(hands.c.number)
                          .where(hands.c.table_id == table_id, hands.c.start_seq == start_seq)).first()
    open_at, filed = conn.execute(select(fig_progress.c.resume_seq, fig_progress.c.hands)
                                  .where(fig_progress.c.table_id == table_id)).first() or (None, None)
    # The ledger numbered the hand as it filed it (the hand in play comes after those filed):
    # no count of the table's hands before it, which a year of play makes long.
    number = closed[0] if closed is not None else (filed or 0) + 1 if open_at == start_seq else None
    prev = conn.execute(select(func.max(hands.c.start_seq))
                        .where(hands.c.table_id == table_id, hands.c.start_seq < start_seq)).scalar()
    nxt = conn.execute(select(func.min(hands.c.start_seq))
                       .where(hands.c.table_id == table_id, hands.c.start_seq > start_seq)).scalar()
    if nxt is None and open_at is not None and open_at > start_seq:
        nxt = open_at
    return {"number": number, "prev": prev, "next": nxt}


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
    the tag (a deck registry), else ``uid:<hex>``; :data:`UNREAD` for a card never read."""
    if event.get("unread"):
        return UNREAD
    if isinstance(event.get("card"), str):
        card = event["card"]
        deck = event.get("deck")
        return f"{card} (deck {deck})" if isinstance(deck, str) and deck not in ("", "A") else card
    if isinstance(event.get("uid"), str):
        card = card_of_uid(event["uid"]) if card_of_uid is not None else None
        return card or f"uid:{event['uid']}"
    return "?"


def shown_card(code) -> str:
    """A card as people read it, the decisions' notation: ``Td`` -> ``T♦``, ``Qs (deck B)``
    -> ``Q♠ (deck B)``; ``joker``, ``uid:<hex>`` and :data:`UNREAD` as they are."""
    code = str(code)
    tail = _DECK_TAIL.match(code)
    if tail:
        return text_card(tail.group(1)) + tail.group(2)
    return text_card(code)


def _card(code: str, seq: int | None = None) -> dict:
    """One card as the story shows it: its code, its text and whether it was read."""
    return {"code": code, "text": shown_card(code), "unread": code == UNREAD, "seq": seq}


def registry_cards(*registries):
    """A *card_of_uid* for :func:`tell` from deck registries (dealerbox.domain.decks),
    tried in order: a tag of a deck other than ``A`` is shown with its deck."""
    named = registry_decks(*registries)

    def card_of_uid(uid: str) -> str | None:
        tag = named(uid)
        if tag is None:   # unknown, or not a UID at all: shown as it came
            return None
        card, deck = tag
        return card if deck == "A" else f"{card} (deck {deck})"
    return card_of_uid


def _zone_words(zone, _) -> str:
    seat = _SEAT_ZONE.match(str(zone))
    if seat:
        return _("seat %(number)s") % {"number": seat.group(1)}
    return _(ZONE_WORDS[zone]) if zone in ZONE_WORDS else str(zone)


def _event_text(ev: dict, card_of_uid, _, ngettext) -> str:
    """One event of the table in words (*_* and *ngettext*: the reader's language's)."""
    kind = ev.get("ev")
    card = shown_card(_card_of(ev, card_of_uid)) if kind in ("shoe", "board_on", "board_off", "zone_on",
                                                              "zone_off") else ""
    if card == UNREAD:
        card = _("unread")
    if kind == "new_hand":
        players = ev.get("players")
        if isinstance(players, int) and not isinstance(players, bool):
            return ngettext("NEW HAND, %(num)d player", "NEW HAND, %(num)d players", players) % {"num": players}
        return _("NEW HAND, players not recorded")
    if kind == "shoe":
        return _("out of the shoe: %(card)s") % {"card": card}
    if kind == "board_on":
        return _("%(card)s onto the board") % {"card": card}
    if kind == "board_off":
        return _("%(card)s off the board") % {"card": card}
    if kind == "zone_on":
        return _("%(card)s into %(zone)s") % {"card": card, "zone": _zone_words(ev.get("zone"), _)}
    if kind == "zone_off":
        return _("%(card)s out of %(zone)s") % {"card": card, "zone": _zone_words(ev.get("zone"), _)}
    if kind == "button":
        # The panel's buttons are labelled in English on every table: their names stay so.
        return _("button %(name)s") % {"name": str(ev.get("name", "?")).upper().replace("_", " ")}
    if kind == "reader_fault":
        return _("reader %(reader)s fault") % {"reader": ev.get("reader")}
    if kind == "reader_ok":
        return _("reader %(reader)s back") % {"reader": ev.get("reader")}
    if kind == "dealer":
        return (_("dealer %(badge)s signs in") % {"badge": ev.get("dealer")} if ev.get("dealer")
                else _("the dealer signs out"))
    return str(kind)


def tell(table_id: str, lines, *, dealer: str | None = None, card_of_uid=None, language=None) -> dict:
    """The story of one hand from its journal lines (the first a ``new_hand``, or the
    oldest line kept). *dealer*: who dealt, when known from before the hand.
    *card_of_uid* names the cards the table journaled by their tag (:func:`registry_cards`).
    *language* (a :class:`~dealerbox.floor.telling.language.Language`) words the timeline for
    its reader; without one, in the messages as written (English)."""
    # Without a reader's language: the messages as written (the source language's catalog).
    told = language if language is not None else translations(SOURCE_LANGUAGE)
    _, ngettext = told.gettext, told.ngettext
    story = {"table": table_id, "dealer": dealer, "players": None, "hole_cards": 2, "seat_order": None,
             "start_seq": None, "end_seq": None, "started": None, "ended": None, "ended_by": "open",
             "shoe": [], "board": [], "decisions": [], "timeline": [], "round_done": None}
    decisions = story["decisions"]
    laid: list[dict] = []          # board cards in the order they first landed
    moves: list[tuple] = []        # (seq, wall, kind, code, over): every board_on/board_off
    zones: dict[str, str] = {}     # card code -> the last zone it went into
    over = False                   # the hand is over: a board_off now is the board being cleared
    closed = None                  # the HAND OVER line: the figures' hand ends there
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
            code = _card_of(event, card_of_uid)
            if kind == "new_hand":
                story["players"] = event.get("players")
                story["hole_cards"] = event.get("hole_cards", 2)
                seats = event.get("seats")
                if isinstance(seats, list) and all(isinstance(s, int) for s in seats):
                    story["seat_order"] = seats
            elif kind == "shoe":
                story["shoe"].append({**_card(code, seq), "t": event.get("t"), "card": code})
            elif kind in ("board_on", "board_off"):
                moves.append((seq, wall, kind, code, over))
                if kind == "board_on" and code not in [c["code"] for c in laid]:
                    laid.append(_card(code, seq))
            elif kind == "zone_on" and isinstance(event.get("zone"), str):
                zones[code] = event["zone"]
            elif kind == "button" and str(event.get("name")).upper() == "ROUND_DONE" and story["round_done"] is None:
                story["round_done"] = seq
            elif kind == "button" and event.get("name") in ("hand_over", "misdeal"):
                story["ended_by"] = event["name"]
                over = True
                if event["name"] == "hand_over" and closed is None:
                    closed = seq
            if kind != "tick":
                what = _event_text(event, card_of_uid, _, ngettext)
                if kind == "board_off" and over:
                    what = _("%(what)s (the board gathered after the hand)") % {"what": what}
                story["timeline"].append({"seq": seq, "wall": wall, "what": what})
        elif isinstance(decision, dict):
            steps = decision.get("steps") if isinstance(decision.get("steps"), list) else []
            step = decision.get("step") if isinstance(decision.get("step"), int) else 0
            cards = decision.get("cards") if isinstance(decision.get("cards"), list) else []
            cause = decision.get("seq") if isinstance(decision.get("seq"), int) else None
            entry = {"seq": seq, "wall": wall, "cause": cause, "verdict": decision.get("verdict"),
                     "irregularity": decision.get("irregularity"), "cards": cards,
                     "rule": decision.get("rule") or "", "steps": [str(s) for s in steps], "step": step,
                     "phase": decision.get("phase")}
            decisions.append(entry)
            if entry["verdict"] in ("misdeal", "void"):
                if story["ended_by"] == "open":
                    story["ended_by"] = entry["verdict"]
                over = True
            verdict = entry["verdict"]
            verdict = _(VERDICT_WORDS[verdict]) if verdict in VERDICT_WORDS else str(verdict).upper()
            what = (_("decision %(verdict)s %(what)s") % {"verdict": verdict, "what": entry["irregularity"]}
                    if entry["irregularity"] else _("decision %(verdict)s") % {"verdict": verdict})
            story["timeline"].append({"seq": seq, "wall": wall, "what": what})
    taken_off = _taken_off(moves)
    board = [c for c in laid if c["code"] not in taken_off]
    story["board"] = [c["code"] for c in board]
    story["board_text"] = [c["text"] for c in board]
    story["board_cards"] = board
    story["taken_off"] = [c for c in laid if c["code"] in taken_off]
    story["board_moves"] = [{"seq": s, "wall": w, "what": _board_move(k, shown_card(c), c not in taken_off, _)}
                            for s, w, k, c, _o in moves]
    _mark_seen_done(decisions)
    story["seats"], story["extra_deal"], deal = _seats(story, zones)
    after_deal = [c for c in story["shoe"][deal:] if c not in story["extra_deal"]]
    story["streets"] = _streets(after_deal, board, story["taken_off"], zones)
    story["irregularities"], story["after_hand"] = _episodes(decisions, closed)
    said = {e["seq"]: e["what"] for e in story["timeline"]}
    for entry in story["irregularities"]:
        for step in entry["steps"]:
            step["by"] = said.get(step["cause"]) if step["cause"] is not None else None
    return story


def _board_move(kind: str, card: str, kept: bool, _) -> str:
    if kind == "board_on":
        return _("%(card)s onto the board") % {"card": card}
    if kept:
        return _("%(card)s off the board (clearing it)") % {"card": card}
    return _("%(card)s off the board") % {"card": card}


def _taken_off(moves: list[tuple]) -> set[str]:
    """The cards taken off the board while the hand went on: off before the hand was over,
    never back on, and some card laid after them (see the module's docstring)."""
    off: dict[str, int] = {}
    for i, (_seq, _wall, kind, code, over) in enumerate(moves):
        if kind == "board_on":
            off.pop(code, None)
        elif not over:
            off[code] = i
    return {code for code, i in off.items()
            if any(kind == "board_on" for _s, _w, kind, _c, _o in moves[i + 1:])}


def _seats(story: dict, zones: dict[str, str]) -> tuple[list[dict], list[dict], int]:
    """Each seat with its hole cards, the cards drawn before the first ROUND DONE beyond
    them (never a board card), and how many shoe cards the deal took."""
    players = story["players"] if isinstance(story["players"], int) and 0 < story["players"] <= 10 else 0
    hole = story["hole_cards"] if story["hole_cards"] in (2, 4) else 2
    order = story["seat_order"] if story["seat_order"] and len(story["seat_order"]) == players else None
    # Without the table's seats, numbered in deal order: as the decisions' steps number them.
    numbers = [int(s) for s in order or range(1, players + 1)]
    seats: dict[int, list] = {number: [] for number in numbers}
    deal = min(len(story["shoe"]), players * hole)
    for i, card in enumerate(story["shoe"][:deal]):
        zone = _SEAT_ZONE.match(zones.get(card["code"], ""))
        number = int(zone.group(1)) if zone and card["code"] != UNREAD else numbers[i % players]
        seats.setdefault(number, []).append(card)
    for card in story["shoe"][deal:]:  # a seat reader saw a later card go to a seat
        zone = _SEAT_ZONE.match(zones.get(card["code"], ""))
        if zone and card["code"] != UNREAD:
            seats.setdefault(int(zone.group(1)), []).append(card)
    extra = [c for c in story["shoe"][deal:] if c["code"] not in story["board"]
             and not _SEAT_ZONE.match(zones.get(c["code"], "")) and _before_board(c, story)]
    # ``seat`` for machines (the JSON), ``number`` for the page to word in its reader's language.
    return [{"seat": f"seat {n}", "number": n, "cards": cards} for n, cards in seats.items()], extra, deal


def _before_board(card: dict, story: dict) -> bool:
    """A card drawn before the first ROUND DONE: the deal, not a burn."""
    done = story["round_done"]
    return done is not None and card["seq"] < done


def _streets(after_deal: list[dict], board: list[dict], taken_off: list[dict], zones: dict) -> list[dict]:
    """Flop, turn and river: each with its burns and its cards as laid (module docstring)."""
    on_board = {c["code"]: i for i, c in enumerate(board)}
    off = {c["code"] for c in taken_off}
    bounds, start = [], 0
    for name, count in STREETS:
        bounds.append((name, start, start + count))
        start += count
    streets = [{"street": name, "burns": [], "cards": board[lo:hi], "taken_off": []} for name, lo, hi in bounds]
    if len(board) > start:
        streets.append({"street": BEYOND_THE_RIVER, "burns": [], "cards": board[start:], "taken_off": []})

    def street_of(index: int) -> int:
        return next((k for k, (_n, lo, hi) in enumerate(bounds) if lo <= index < hi), len(streets) - 1)

    pending: list[dict] = []
    for card in after_deal:
        if card["code"] in on_board:
            k = street_of(on_board[card["code"]])
            streets[k]["burns"].extend(c for c in pending if c not in streets[k]["burns"])
            pending = []
        elif card["code"] in off:
            pending_street = streets[street_of(len([c for c in board if c["seq"] < card["seq"]]))]
            pending_street["taken_off"].append(card)
        elif not _SEAT_ZONE.match(zones.get(card["code"], "")):
            pending.append(card)
    if pending:  # drawn after the last board card: burns with no card after them
        streets.append({"street": AFTER_THE_BOARD, "burns": pending, "cards": [], "taken_off": []})
    for card in taken_off:  # laid but never seen leave the shoe
        if not any(card["code"] == c["code"] for s in streets for c in s["taken_off"]):
            streets[0]["taken_off"].append(card)
    return streets


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


def _episode_key(d: dict):
    if d["irregularity"] is None and d["verdict"] == "ok":
        return None
    name = d["irregularity"] if isinstance(d["irregularity"], str) else None
    return name, d["verdict"] if name is None else ""


def _episodes(decisions: list[dict], closed: int | None) -> tuple[list[dict], list[dict]]:
    """One entry per irregularity (module docstring), each step with when it was seen done;
    and the records the box kept after HAND OVER (line *closed*). Such a record of an
    irregularity already told (its steps still open when the hand ended) is that
    entry's ``record``; one of another (a tag to check after the hand) is told apart."""
    during = [d for d in decisions if closed is None or d["seq"] < closed]
    out = _runs(during)
    after: list[dict] = []
    for d in decisions[len(during):]:
        if _episode_key(d) is None:
            continue
        told = next((e for e in reversed(out) if e["irregularity"] == d["irregularity"]), None)
        if told is not None and told["record"] is None:
            told["record"] = {"seq": d["seq"], "wall": d["wall"], "text": d["steps"][0] if d["steps"] else ""}
        else:
            after.append({**_episode([d], None), "record": None})
    return out, after


def _runs(decisions: list[dict]) -> list[dict]:
    out: list[dict] = []
    run: list[dict] = []
    for d in decisions + [None]:
        key = _episode_key(d) if d is not None else None
        if run and (d is None or key != _episode_key(run[0])):
            out.append(_episode(run, d))
            run = []
        if key is not None:
            run.append(d)
    return out


def _episode(run: list[dict], after: dict | None) -> dict:
    """One irregularity from its decisions *run*; *after*: the decision that followed it."""
    last = run[-1]
    answered = after is not None and _episode_key(after) is None
    told_only = all(d["verdict"] == "ok" for d in run)  # play on: the box waited for nothing
    steps = []
    for k, text in enumerate(last["steps"]):
        seen = next((d for d in run if d["step"] > k), None)
        if seen is None and answered:
            seen = after
        if told_only:
            seen = None
        steps.append({"text": text, "done": None if told_only else seen is not None,
                      "seq": seen["seq"] if seen else None,
                      "wall": seen["wall"] if seen else None, "cause": seen["cause"] if seen else None})
    return {"irregularity": last["irregularity"] or f"({last['verdict']})", "verdict": last["verdict"],
            "verdicts": list(dict.fromkeys(str(d["verdict"]) for d in run)),
            "cards": [shown_card(c) for c in last["cards"]], "codes": [str(c) for c in last["cards"]], "rule": last["rule"], "phase": run[0]["phase"],
            "seq": run[0]["seq"], "wall": run[0]["wall"], "lines": [d["seq"] for d in run], "steps": steps,
            "answered": answered, "record": None}
