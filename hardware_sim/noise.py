"""A physical noise model of a real table's radio, for the simulated table and the benches.

A clean hand, as CONTRACT.md events (a :class:`hardware_sim.script.HandScript`'s or a
scenario file's), is first acted out as *physics*: each tag lies in an antenna's
field for an interval (:class:`Pass`), the mouth sensor counts each card leaving the
stub, the buttons are pressed. The noise kinds of :data:`KINDS` then disturb that
physics (a tag never read, a burn crossing the board antenna, ...), and
:func:`reader_polls` samples it the way a reader polls: what each poll sees,
with per-poll read failures, the reader's tag limit and clock jitter. What comes out
is what the daemon's reader threads would give the presence layer.

docs/NOISE.md says what each kind is, and where its numbers come from.
"""

from __future__ import annotations

import errno
import heapq
import os
import random
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from dealerbox.domain.events import Event
from dealerbox.domain.decks import simulated_uid, simulation_registry


@dataclass(frozen=True)
class Kind:
    """One noise kind: how often it happens (per *per*) and how long it lasts (seconds)."""

    name: str
    rate: float                    # probability per opportunity (see *per*)
    per: str                       # the opportunity the rate counts
    duration: tuple[float, float]  # (low, high) of a uniform draw, seconds; (0, 0) when it has none
    source: str                    # "measured", "literature" or "assumed" (docs/NOISE.md)
    what: str


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("unread_hole", 0.0035, "hole card", (0, 0), "measured",
         "a hole card slides out and no poll reads its tag"),
    Kind("unread_burn", 0.0035, "burn", (0, 0), "measured",
         "a burn slides out and no poll reads its tag"),
    Kind("unread_board", 0.0035, "board card", (0, 0), "measured",
         "a board card slides out unread at the shoe (the board antenna reads it later)"),
    Kind("dead_board_tag", 0.001, "board card", (0, 0), "assumed",
         "a board card's tag is dead: neither the shoe nor the board antenna ever reads it"),
    Kind("double_read", 0.05, "card drawn", (0.005, 0.04), "assumed",
         "the tag is read again a few ms after it left the field (reflection, a hand)"),
    Kind("linger", 0.001, "hole card or burn", (0.2, 1.2), "assumed",
         "the card stays at the mouth and is read again this long after its draw"),
    Kind("fast_pair", 0.03, "card drawn", (0.002, 0.008), "assumed",
         "the next card follows this close, so both are first read in one poll"),
    Kind("board_dropout", 0.02, "board card and second", (0.05, 0.45), "assumed",
         "a board card is not read for a moment (a hand or chips over the antenna)"),
    Kind("hole_over_board", 0.01, "hole card", (0.03, 0.12), "assumed",
         "a hole card is pitched across the board antenna"),
    Kind("spread_late", 0.3, "flop drawn as three", (0.1, 0.8), "assumed",
         "the spread flop's cards are first read this late, each on its own, in any order"),
    Kind("burn_cross", 0.1, "burn", (0.03, 0.15), "measured",
         "a burn crosses the board antenna on its way to the muck"),
    Kind("fold_sweep", 0.2, "hand with a full board", (0.1, 0.3), "assumed",
         "2-8 folded cards are swept across the board, more tags than the reader's limit"),
    Kind("extra_pitch", 0.5, "card drawn past the deal", (0.03, 0.12), "assumed",
         "an extra card is pitched across the felt, over the board antenna"),
    Kind("clock_jitter", 0.002, "poll", (0.02, 0.08), "assumed",
         "the poll loop stalls this long (scheduler, SD card); every poll also jitters by 0-2 ms"),
    Kind("reader_fault", 0.02, "reader and hand", (0.05, 0.5), "assumed",
         "a reader stops answering for a moment (SPI glitch, ESD), reported and reopened"),
)}

SHOE_READ_P = 0.93     # a poll reads a tag sliding through the shoe's field
BOARD_READ_P = 0.98    # a poll reads a tag lying still on the board
SHOE_DWELL = (0.03, 0.1)  # a card slides through the shoe's field in 30-100 ms
MOUTH_LAG = (-0.005, 0.01)  # the photo-interrupter fires this far from the tag's entry
SWEEP_AFTER_HAND = 0.3     # cards lying on the antennas at hand_over are gathered this late


@dataclass(slots=True)
class Pass:
    """A tag in a zone's field from *t_on* to *t_off*; *readable* False: never read."""

    zone: str
    uid: str
    t_on: float
    t_off: float
    readable: bool = True
    role: str | None = None    # for a card's own draw: hole, burn, board or extra
    reads: int = 0             # polls that read it (set by reader_polls)


@dataclass
class PhysicalHand:
    """What happened at the table, and the truth the bench scores against."""

    passes: list[Pass] = field(default_factory=list)
    actions: list[Event] = field(default_factory=list)   # new_hand, buttons, ticks, as pressed
    counts: list[float] = field(default_factory=list)    # mouth sensor counts
    faults: list[tuple[str, float, float]] = field(default_factory=list)  # (reader, start, end)
    unread: list[tuple[str, str]] = field(default_factory=list)           # (uid, role) never read at the shoe
    noise: list[str] = field(default_factory=list)                        # kinds that happened
    dead: set[str] = field(default_factory=set)                           # UIDs of dead tags (no reader sees them)
    end: float = 0.0

    def missed(self) -> list[tuple[str, str]]:
        """(uid, role) of every card whose own draw no shoe poll read (after :func:`reader_polls`)."""
        return [(p.uid, p.role) for p in self.passes if p.zone == "shoe" and p.role and not p.reads]


class NoiseModel:
    """The rates of every kind, scaled; ``NoiseModel(scale=0)`` is a perfect radio.

    :param rates: overrides, by kind name.
    :param only: keep these kinds, the others at rate 0.
    """

    def __init__(self, rates: Mapping[str, float] | None = None, *, scale: float = 1.0,
                 only: Iterable[str] | None = None, max_tags: int = 6, poll_s: float = 0.01):
        unknown = set(rates or {}) | set(only or ())
        unknown -= set(KINDS)
        if unknown:
            raise ValueError(f"unknown noise kind {sorted(unknown)[0]!r}; known: {', '.join(KINDS)}")
        self.rates = {name: kind.rate * scale for name, kind in KINDS.items()}
        if only is not None:
            keep = set(only)
            self.rates = {k: (v if k in keep else 0.0) for k, v in self.rates.items()}
        self.rates.update(rates or {})
        self.max_tags = max_tags
        self.poll_s = poll_s

    def happens(self, rng: random.Random, kind: str) -> bool:
        return self.rates[kind] > 0 and rng.random() < self.rates[kind]

    @staticmethod
    def duration(rng: random.Random, kind: str) -> float:
        lo, hi = KINDS[kind].duration
        return rng.uniform(lo, hi)


def scripted_uid(registry, e: dict, copy: int = 0) -> str:
    """The UID a CONTRACT.md event's card has when acted out: its own ``uid``, or the tag *registry* has for
    it (copy *copy* of the card, where the deck has several), or a simulated one."""
    if e.get("uid"):
        return e["uid"].upper()
    deck = e.get("deck") or registry.active
    uids = registry.uids_of(deck, e["card"])
    if not uids:
        return simulated_uid(deck, e["card"], copy)
    return uids[min(copy, len(uids) - 1)]


def act_out(events: Iterable[dict], model: NoiseModel, rng: random.Random, *, registry=None,
            t0: float = 0.0) -> PhysicalHand:
    """The physics of CONTRACT.md *events* (dicts, one or more hands) under *model*'s noise.

    Event times are kept (shifted by *t0*); a ``board_on`` lasts until its
    ``board_off`` or the hand's end. Tags at a zone are read by that zone's reader.
    """
    registry = registry or simulation_registry()
    hand = PhysicalHand()
    events = [e for e in events if "ev" in e]
    on_board: dict[str, Pass] = {}
    in_zone: dict[tuple[str, str], Pass] = {}
    # Classify every shoe draw by what it became, from the clean script: a board
    # card is drawn and then lands on the board; cards drawn before the deal's
    # round_done are hole cards (or extra cards past players*hole); the rest burns.
    board_uids = {scripted_uid(registry, e) for e in events if e["ev"] == "board_on"}
    phase_deal, dealt, target = False, 0, 0
    hole_uids: list[str] = []
    last_draw_start = -1.0
    flop_draws: list[Pass] = []

    def finish_hand(t: float) -> None:
        for p in list(on_board.values()) + list(in_zone.values()):
            p.t_off = t + SWEEP_AFTER_HAND
        on_board.clear()
        in_zone.clear()

    for e in events:
        t = e["t"] + t0
        ev = e["ev"]
        if ev == "new_hand":
            finish_hand(t - 1.0)
            phase_deal, dealt = True, 0
            target = e["players"] * e.get("hole_cards", 2)
            hole_uids = []
            flop_draws = []
            for reader in ("shoe", "board"):
                if model.happens(rng, "reader_fault"):
                    start = t + rng.uniform(1.0, 20.0)
                    hand.faults.append((reader, start, start + model.duration(rng, "reader_fault")))
                    hand.noise.append("reader_fault")
            hand.actions.append(Event.from_dict(e | {"t": t}))
        elif ev == "shoe":
            if e.get("unread"):
                hand.counts.append(t)
                continue
            uid = scripted_uid(registry, e)
            start = t
            if last_draw_start >= 0 and t - last_draw_start <= 0.6 and model.happens(rng, "fast_pair"):
                start = last_draw_start + model.duration(rng, "fast_pair")
                hand.noise.append("fast_pair")
            last_draw_start = start
            if uid in board_uids:
                role = "board"
            elif phase_deal and dealt < target:
                role, dealt = "hole", dealt + 1
                hole_uids.append(uid)
            elif phase_deal:
                role = "extra"
            else:
                role = "burn"
            p = Pass("shoe", uid, start, start + rng.uniform(*SHOE_DWELL), role=role)
            hand.passes.append(p)
            hand.counts.append(start + rng.uniform(*MOUTH_LAG))
            if role == "board" and model.happens(rng, "dead_board_tag"):
                # The mouth sensor still counts the card (a `shoe` with `unread`); no antenna reads it.
                p.readable = False
                hand.dead.add(uid)
                hand.unread.append((uid, role))
                hand.noise.append("dead_board_tag")
            elif model.happens(rng, f"unread_{role}" if role in ("hole", "burn", "board") else "unread_hole"):
                p.readable = False
                hand.unread.append((uid, role))
                hand.noise.append(f"unread_{role}")
            if model.happens(rng, "double_read"):
                gap = model.duration(rng, "double_read")
                hand.passes.append(Pass("shoe", uid, p.t_off + gap, p.t_off + gap + 0.01, p.readable))
                hand.noise.append("double_read")
            if role in ("hole", "burn") and model.happens(rng, "linger"):
                at = start + model.duration(rng, "linger")
                hand.passes.append(Pass("shoe", uid, at, at + rng.uniform(0.02, 0.08)))
                hand.noise.append("linger")
            cross = {"hole": "hole_over_board", "burn": "burn_cross", "extra": "extra_pitch"}.get(role)
            if cross and model.happens(rng, cross):
                at = p.t_off + rng.uniform(0.05, 0.2)
                hand.passes.append(Pass("board", uid, at, at + model.duration(rng, cross)))
                hand.noise.append(cross)
            if role == "board":
                flop_draws.append(p)
        elif ev == "board_on":
            uid = scripted_uid(registry, e)
            p = Pass("board", uid, t, float("inf"), readable=uid not in hand.dead)
            # A flop drawn as three and spread: its cards are first read late, apart.
            drawn_together = len(flop_draws) >= 3 and flop_draws[-1].uid != uid and any(
                d.uid == uid for d in flop_draws[-3:])
            if drawn_together and model.happens(rng, "spread_late"):
                p.t_on = t + model.duration(rng, "spread_late")
                hand.noise.append("spread_late")
            on_board[uid] = p
            hand.passes.append(p)
        elif ev == "board_off":
            uid = scripted_uid(registry, e)
            p = on_board.pop(uid, None)
            if p is not None:
                p.t_off = max(t, p.t_on + 0.01)
        elif ev in ("zone_on", "zone_off"):
            uid = scripted_uid(registry, e)
            key = (e["zone"], uid)
            if ev == "zone_on":
                in_zone[key] = Pass(e["zone"], uid, t, float("inf"))
                hand.passes.append(in_zone[key])
            elif key in in_zone:
                in_zone.pop(key).t_off = t
        else:
            if ev == "button" and e["name"] == "round_done":
                phase_deal = False
            if ev == "button" and e["name"] == "hand_over":
                if len(on_board) >= 5 and hole_uids and model.happens(rng, "fold_sweep"):
                    folded = rng.sample(hole_uids, min(len(hole_uids), rng.randint(2, 8)))
                    at = t - rng.uniform(0.5, 1.5)
                    for uid in folded:
                        start = at + rng.uniform(0, 0.05)
                        hand.passes.append(Pass("board", uid, start, start + model.duration(rng, "fold_sweep")))
                    hand.noise.append("fold_sweep")
                hand.actions.append(Event.from_dict(e | {"t": t}))
                finish_hand(t)
                continue
            hand.actions.append(Event.from_dict(e | {"t": t}))
        hand.end = max(hand.end, t)
    # Cards still lying when the events end (a scenario stops at its point) lie on a while.
    finish_hand(hand.end + 2.0)
    hand.end += 2.0 + SWEEP_AFTER_HAND + 1.0
    # A board card dropping out for a moment: per second it lies on the board.
    for p in [p for p in hand.passes if p.zone == "board" and p.t_off - p.t_on > 1.0]:
        seconds = int(p.t_off - p.t_on)
        for _ in range(seconds):
            if model.happens(rng, "board_dropout"):
                start = rng.uniform(p.t_on + 0.2, p.t_off - 0.5)
                end = start + model.duration(rng, "board_dropout")
                tail = Pass("board", p.uid, end, p.t_off, p.readable)
                p.t_off = start
                hand.passes.append(tail)
                hand.noise.append("board_dropout")
                break
    hand.passes.sort(key=lambda p: p.t_on)
    return hand


def reader_polls(hand: PhysicalHand, model: NoiseModel, rng: random.Random, reader: str,
                 zones: Iterable[str], *, idle_s: float = 0.5):
    """Yield ``(t, {zone: [uid, ...]})`` polls of *reader* serving *zones*, in time order.

    UIDs of one poll come in the order the tags entered the field (a reader that
    streams its reads). Around each tag's entry and exit the reader polls every
    ``model.poll_s``, with jitter and stalls; while nothing changes it is sampled
    every *idle_s* (the presence layer sees the same thing, at far less cost). A
    poll inside a fault window yields ``(t, None)``: the reader did not answer.
    """
    zones = tuple(zones)
    passes = [p for p in hand.passes if p.zone in zones]
    faults = [(a, b) for r, a, b in hand.faults if r == reader]
    # (start, end, step): poll every poll_s while a tag moves through a field, every
    # 50 ms while settle and dropout windows run, else every idle_s.
    windows = []
    for p in passes:
        if p.t_off - p.t_on < 0.5:          # a tag moving through: every poll, then the windows close
            windows.append((p.t_on - 0.02, p.t_off + 0.02, model.poll_s))
            windows.append((p.t_off, p.t_off + 0.3, 0.1))
            continue
        windows.append((p.t_on - 0.02, p.t_on + 0.03, model.poll_s))
        windows.append((p.t_on, p.t_on + 0.4, 0.02))      # the settle window
        if p.t_off != float("inf"):
            windows.append((p.t_off - 0.02, p.t_off + 0.03, model.poll_s))
            windows.append((p.t_off, p.t_off + 0.8, 0.05))  # the dropout window
    for a, b in faults:
        windows.append((a - 0.02, b + 0.05, model.poll_s))
    windows.sort()
    end = hand.end
    read_p = SHOE_READ_P if "shoe" in zones else BOARD_READ_P
    active: list[Pass] = []
    pending = sorted(passes, key=lambda p: p.t_on)
    i = 0
    w = 0
    t = 0.0
    while t <= end:
        while i < len(pending) and pending[i].t_on <= t:
            active.append(pending[i])
            i += 1
        if active:
            active = [p for p in active if p.t_off > t]
        if faults and any(a <= t <= z for a, z in faults):
            yield t, None
        else:
            seen: dict[str, list[str]] = {z: [] for z in zones}
            for p in active:
                if p.readable and rng.random() < read_p and p.uid not in seen[p.zone]:
                    seen[p.zone].append(p.uid)
                    p.reads += 1
            for z, uids in seen.items():
                if len(uids) > model.max_tags:
                    keep = set(rng.sample(uids, model.max_tags))
                    seen[z] = [u for u in uids if u in keep]
            yield t, seen
        while w < len(windows) and windows[w][1] < t:
            w += 1
        step = idle_s
        nxt = end + 1
        for a, z, st in windows[w:]:
            if a > t:
                nxt = min(nxt, a)
                if a > t + idle_s:
                    break
            elif z >= t:
                step = min(step, st)
        if step == model.poll_s:
            step += rng.uniform(0.0, 0.002)
            if model.happens(rng, "clock_jitter"):
                step += model.duration(rng, "clock_jitter")
        else:
            step = max(model.poll_s, min(step, nxt - t))
        t = round(t + step, 6)


def poll_stream(hand: PhysicalHand, model: NoiseModel, rng: random.Random) -> list[tuple]:
    """Every reader poll and mouth count of *hand*, in time order:
    ``(t, reader, seen)``; reader ``"mouth"`` is a count (``seen`` None), and a
    reader's ``seen`` None is a poll it did not answer (a fault)."""
    def polls(reader, zones):
        return ((t, 1, reader, seen) for t, seen in reader_polls(hand, model, rng, reader, zones))

    sources = [((c, 0, "mouth", None) for c in sorted(hand.counts)),
               polls("shoe", ("shoe",)), polls("board", ("board",) + _zones_of(hand))]
    return [(t, reader, seen) for t, _, reader, seen in heapq.merge(*sources, key=lambda x: (x[0], x[1]))]


def presence_events(hand: PhysicalHand, stream: list[tuple], make_tracker, *, mouth: bool = False) -> list[Event]:
    """The events the daemon would give the engine: presence of each reader's polls
    (*stream*, from :func:`poll_stream`), reader faults, the mouth sensor's counts
    when *mouth*, and the buttons, merged in time order.

    *make_tracker()* returns a fresh :class:`dealerbox.hw.presence.PresenceTracker`
    (with a mouth window when *mouth*), one per reader as the daemon keeps them.
    """
    trackers = {"shoe": make_tracker(), "board": make_tracker()}
    out: list[Event] = []
    faulted: set[str] = set()
    for t, reader, seen in stream:
        if reader == "mouth":
            if mouth:
                trackers["shoe"].count(t)
            continue
        if seen is None:
            if reader not in faulted:
                faulted.add(reader)
                out.append(Event(t, "reader_fault", reader=reader))
            continue
        if reader in faulted:
            faulted.discard(reader)
            out.append(Event(t, "reader_ok", reader=reader))
        out.extend(trackers[reader].update(t, seen))
    # The table, not the script, says whether a sensor counts the cards (as the daemon does).
    actions = [Event.from_dict({k: v for k, v in e.to_dict().items() if k != "mouth_sensor"}
                               | ({"mouth_sensor": True} if mouth else {}))
               if e.ev == "new_hand" else e for e in hand.actions]
    return sorted(out + actions, key=lambda e: e.t)   # stable: presence before a button at the same t


def _zones_of(hand: PhysicalHand) -> tuple[str, ...]:
    return tuple(sorted({p.zone for p in hand.passes} - {"shoe", "board"}))


class TableNoise:
    """One noise kind, acted out at a live :class:`hardware_sim.table.SimulatedTable` (the
    ``sim`` console's noise key), so a technician sees what the box shows for it.

    *draw_card()* returns the next card to come out of the shoe (or None when the
    stub is empty); *last_uid()* the UID of the card drawn last (or None);
    *dealt_uids()*, optional, the UIDs dealt this hand. Durations
    are drawn from :data:`KINDS`. Wall-clock sleeps: run it on the dealer's thread.
    """

    def __init__(self, table, *, draw_card, last_uid, dealt_uids=None, mouth=None,
                 rng: random.Random | None = None, sleep=None):
        self.table = table
        self.draw_card = draw_card
        self.last_uid = last_uid
        self.dealt_uids = dealt_uids  # UIDs of cards dealt this hand (folded cards to sweep)
        self.mouth = mouth           # a hardware_sim.mouth.PhotoInterrupterEmulator, if the table has one
        self.rng = rng or random.Random()
        self.sleep = sleep or time.sleep

    def _d(self, kind: str) -> float:
        return NoiseModel.duration(self.rng, kind)

    def _uid(self, card: str) -> str:
        return self.table.uid_of(card)

    def _slide(self, uids: list[str], dwell: float = 0.06, *, count: bool = True) -> None:
        for uid in uids:
            if self.mouth is not None and count:
                self.mouth.card_passes()
            self.table.place(zone="shoe", uid=uid)
        self.sleep(dwell)
        for uid in uids:
            self.table.lift(zone="shoe", uid=uid)

    def _cross(self, uids: list[str], seconds: float) -> None:
        for uid in uids:
            self.table.place(zone="board", uid=uid)
        self.sleep(seconds)
        for uid in uids:
            self.table.lift(zone="board", uid=uid)

    def inject(self, kind: str) -> str:
        """Act out *kind* once; return what was done, for the console's log."""
        if kind not in KINDS:
            raise ValueError(f"unknown noise kind {kind!r}; known: {', '.join(KINDS)}")
        last = self.last_uid()
        if kind.startswith("unread_") or kind in ("fast_pair", "extra_pitch", "dead_board_tag"):
            card = self.draw_card()
            if card is None:
                return f"{kind}: the stub is empty"
            if kind == "dead_board_tag":
                # Counted at the mouth, never read: the dealer lays it on the board, where no poll sees it.
                if self.mouth is not None:
                    self.mouth.card_passes()
                return f"dead_board_tag: {card} left the shoe and lies on the board, its tag dead"
            if kind.startswith("unread_"):
                # The card leaves the stub (the mouth sensor counts it); no poll reads its tag.
                if self.mouth is not None:
                    self.mouth.card_passes()
                return f"{kind}: {card} left the shoe unread"
            if kind == "fast_pair":
                second = self.draw_card()
                self._slide([self._uid(card)] + ([self._uid(second)] if second else []))
                return f"fast_pair: {card} and {second} drawn within ms"
            self._slide([self._uid(card)])
            self._cross([self._uid(card)], self._d("extra_pitch"))
            return f"extra_pitch: {card} drawn and pitched across the board"
        if kind == "reader_fault":
            reader = self.table.config.zone_readers().get("shoe")
            self.table.unplug(reader)
            self.sleep(self._d(kind))
            self.table.replug(reader)
            return f"reader_fault: the {reader} reader was gone for a moment"
        if kind == "clock_jitter":
            return "clock_jitter: the live box runs on the real clock; the benchmark models its stalls"
        on_board = sorted(self.table.in_field.get("board", ()))
        if kind == "board_dropout":
            if not on_board:
                return "board_dropout: no card on the board"
            uid = self.rng.choice(on_board)
            self.table.lift(zone="board", uid=uid)
            self.sleep(self._d(kind))
            self.table.place(zone="board", uid=uid)
            return f"board_dropout: {uid} unread for a moment"
        if kind == "fold_sweep":
            dealt = [u for u in (self.dealt_uids() if self.dealt_uids else [last]) if u and u not in on_board]
            if not dealt:
                return "fold_sweep: no dealt card to fold"
            folded = self.rng.sample(dealt, min(len(dealt), self.rng.randint(2, 8)))
            self._cross(folded, self._d(kind))
            return f"fold_sweep: {len(folded)} folded cards swept across the board"
        if kind == "spread_late":
            return "spread_late: deal the flop as three with 'c' and place the cards with 'p', slowly"
        if last is None:
            return f"{kind}: draw a card first"
        if kind == "double_read":
            self.sleep(self._d(kind))
            self._slide([last], 0.01, count=False)
            return f"double_read: {last} read again ms later"
        if kind == "linger":
            self._slide([last], 0.05, count=False)
            return f"linger: {last} read again at the mouth"
        # hole_over_board, burn_cross: the card drawn last crosses the board antenna.
        self._cross([last], self._d(kind))
        return f"{kind}: {last} crossed the board antenna"


# -- the hardware's faults: what a commissioning run must find ------------------------------

#: The faults of a table's hardware (not of its dealing), each of which ``dealerbox commission``
#: must find in exactly the step of its device, with that device's advice (docs/TOOLS.md, "commission").
TABLE_FAULTS = {
    "dead_tag": "one card's tag never answers (by default the active deck's Qs): the shoe never reads it",
    "weak_antenna": "the shoe antenna misses most reads: its RC522 drops 95 % of the wake-ups",
    "bouncing_button": "a button's contact (ACK by default) chatters for 60 ms at each press and release",
    "wrong_pin": "a button's wire (ACK's by default) is on another button's pin (BOXED's)",
    "stuck_mouth": "the mouth sensor's output is stuck at its blocked level",
    "silent_lcd": "the LCD's backpack does not answer on I2C (unplugged, or another address)",
    "full_state_dir": "the state directory's disk is full: a write fails with ENOSPC",
}


class StuckPhotoInterrupter:
    """A mouth sensor whose output stays at its blocked level whatever passes (dirt, a dead LED)."""

    def __init__(self, sensor):
        self.pin = sensor.pin
        self.blocked_level = sensor.blocked_level
        sensor._block()

    def card_passes(self, chatter: int = 0) -> None:
        """Nothing changes on the line."""


class FullDisk:
    """The state directory's disk with no room left: the commissioning's ``state`` step measures
    this in place of the real one (the methods of its ``StateDisk``)."""

    free = 12 * 1024

    def free_bytes(self, path) -> int:
        return self.free

    def fsync_seconds(self, path, size: int = 4096) -> float:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


@dataclass
class TableFaults:
    """Some :data:`TABLE_FAULTS`, put on a :class:`hardware_sim.table.SimulatedTable` by :meth:`apply`
    (the chips' faults) and acted out by the emulated dealer's hands (:meth:`is_dead`, :meth:`press`).

    *dead_card* is the card whose tag is dead, *button* the bouncing or miswired button,
    *wired_to* the button whose pin the miswired one is on.
    """

    names: frozenset = frozenset()
    dead_card: str = "Qs"
    button: str = "ack"
    wired_to: str = "boxed"
    chatter_s: float = 0.06
    weak_dropout: float = 0.95

    def __post_init__(self):
        self.names = frozenset(self.names)
        unknown = sorted(self.names - TABLE_FAULTS.keys())
        if unknown:
            raise ValueError(f"unknown table fault {unknown[0]!r}; the faults: {', '.join(TABLE_FAULTS)}")

    def apply(self, table) -> None:
        """Put the chips' faults on *table*: the weak antenna, the silent LCD, the stuck sensor."""
        config = table.config
        if "weak_antenna" in self.names:
            reader = config.zone_readers()["shoe"]
            chip = table.chips.get(reader)
            if chip is None:
                raise ValueError("weak_antenna needs an emulated RC522 serving the shoe")
            chip.dropout = self.weak_dropout
        if "silent_lcd" in self.names:
            if table.i2c is None:
                raise ValueError("silent_lcd needs the LCD on the emulated I2C bus")
            table.i2c.devices.clear()
        if "stuck_mouth" in self.names:
            if table.mouth is None:
                raise ValueError("stuck_mouth needs an emulated mouth sensor ([mouth_sensor] backend = \"sim\")")
            table.mouth = StuckPhotoInterrupter(table.mouth)

    def is_dead(self, table, uid: str) -> bool:
        """The tag *uid* never answers."""
        if "dead_tag" not in self.names:
            return False
        tag = table.config.registry.lookup(uid) if table.config.registry is not None else None
        return tag is not None and tag.card == self.dead_card

    def press(self, table, button: str, hold_s: float) -> None:
        """Press *button* as its wiring and its contact have it."""
        pin = None
        if "wrong_pin" in self.names and button == self.button:
            pin = table.config.panel.pins.buttons[self.wired_to]
        chatter = self.chatter_s if "bouncing_button" in self.names and button == self.button else 0.0
        table.press(button, hold_s, pin=pin, chatter_s=chatter)

    def disk(self):
        """The state directory's disk as the faults have it: a :class:`FullDisk`, or None (the real one)."""
        return FullDisk() if "full_state_dir" in self.names else None
