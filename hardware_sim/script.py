"""A scripted dealer at the event level: writes CONTRACT.md events for a hand.

Scenario files, the demo session, the property tests and the benchmark are made
with it, so each reads like what the dealer did::

    s = HandScript(seed=1)
    s.new_hand(6).deal().round_done().flop().round_done().turn().round_done().river()
    s.hand_over()

Cards come from a seeded shuffle of deck A; :meth:`draw` can force a card.
:class:`TableDealer` acts such events out at the simulated table, in step with
the daemon's readers, so the box's verdicts never depend on the pace.
"""

from __future__ import annotations

import json
import random
import threading
import time

from dealerbox.domain.cards import DECK_52
from dealerbox.domain.events import Event


class HandScript:
    """Builds a list of event dicts. Every method returns ``self`` for chaining."""

    def __init__(self, seed: int = 0, step_s: float = 0.5, t0: float = 0.0):
        self.rng = random.Random(seed)
        self.step_s = step_s
        self.t = t0
        self.events: list[dict] = []
        self.stub: list[str] = []
        self.players = 0
        self.hole = 2
        self.last: list[str] = []

    # -- low level ------------------------------------------------------------
    def emit(self, ev: str, dt: float | None = None, **fields) -> "HandScript":
        self.t = round(self.t + (self.step_s if dt is None else dt), 3)
        self.events.append({"t": self.t, "ev": ev, **fields})
        return self

    def expect(self, **fields) -> "HandScript":
        """A scenario check on the latest decision (scenario files only)."""
        self.events.append({"expect": fields})
        return self

    def draw(self, card: str | None = None, **extra) -> str:
        """One card leaves the shoe; returns it."""
        if card is None:
            card = self.stub.pop(0)
        elif card in self.stub:
            self.stub.remove(card)
        self.emit("shoe", card=card, **extra)
        self.last = [card]
        return card

    def take(self, card: str | None = None, **extra) -> "HandScript":
        """Like :meth:`draw`, for chaining."""
        self.draw(card, **extra)
        return self

    def put_back(self, card: str, top: bool = True) -> "HandScript":
        """The dealer puts *card* back into the stub (no event: the box cannot see it)."""
        if top:
            self.stub.insert(0, card)
        else:
            self.stub.append(card)
        return self

    def reshuffle_stub(self) -> "HandScript":
        self.rng.shuffle(self.stub)
        return self.button("reshuffled")

    def on(self, card: str, **extra) -> "HandScript":
        return self.emit("board_on", card=card, **extra)

    def off(self, card: str) -> "HandScript":
        return self.emit("board_off", card=card)

    def button(self, name: str) -> "HandScript":
        return self.emit("button", name=name)

    def dealer(self, dealer: str | None) -> "HandScript":
        """A dealer signs in with a badge at the shoe (None: the dealer signs out)."""
        return self.emit("dealer", dealer=dealer)

    def tick(self, dt: float = 0.25) -> "HandScript":
        return self.emit("tick", dt=dt)

    # -- a hand -----------------------------------------------------------------
    def new_hand(self, players: int = 6, hole: int = 2, **extra) -> "HandScript":
        self.players, self.hole = players, hole
        self.stub = list(DECK_52)
        self.rng.shuffle(self.stub)
        fields = {"players": players}
        if hole != 2:
            fields["hole_cards"] = hole
        fields.update(extra)
        return self.emit("new_hand", **fields)

    def deal(self, count: int | None = None) -> "HandScript":
        """Deal hole cards (all of them unless *count* says how many)."""
        for _ in range(self.players * self.hole if count is None else count):
            self.draw()
        return self

    def round_done(self) -> "HandScript":
        return self.button("round_done")

    def street(self, n: int, *, burn: bool = True, spread: bool = False, cards=None) -> list[str]:
        """Burn (unless told not to) and put *n* cards on the board; return the board cards."""
        if burn:
            self.draw()
        if cards is None:
            cards = [self.stub[i] for i in range(n)]
        if spread:
            for c in cards:
                self.draw(c)
            order = list(cards)
            self.rng.shuffle(order)
            for c in order:
                self.on(c)
        else:
            for c in cards:
                self.draw(c)
                self.on(c)
        self.last = list(cards)
        return list(cards)

    def flop(self, **kw) -> "HandScript":
        self.street(3, **kw)
        return self

    def turn(self, **kw) -> "HandScript":
        self.street(1, **kw)
        return self

    def river(self, **kw) -> "HandScript":
        self.street(1, **kw)
        return self

    def hand_over(self) -> "HandScript":
        return self.button("hand_over")

    def full_hand(self, players: int = 6, hole: int = 2, spread: bool = False, **extra) -> "HandScript":
        """A clean hand to the river."""
        self.new_hand(players, hole, **extra).deal().round_done()
        self.flop(spread=spread).round_done().turn().round_done().river().round_done()
        return self.hand_over()

    # -- output -----------------------------------------------------------------
    def jsonl(self, header: dict | None = None) -> str:
        lines = [json.dumps(header)] if header else []
        lines += [json.dumps(e) for e in self.events]
        return "\n".join(lines) + "\n"


class VirtualClock:
    """Event time for a daemon on the simulated table: it moves only when the dealer moves it.

    Pass it as the daemon's ``clock``. With it, what the box sees (every event's
    ``t``, hence every window and grace period) depends on the script alone, never
    on how fast the machine runs the readers' threads.
    """

    def __init__(self, start: float = 0.0):
        self._t = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._t

    def advance(self, dt: float) -> float:
        with self._lock:
            self._t = round(self._t + max(0.0, dt), 6)
            return self._t


class TableDealer:
    """Acts out CONTRACT.md events at a :class:`hardware_sim.table.SimulatedTable` served
    by a running :class:`dealerbox.service.daemon.Daemon`, move by move, at any pace.

    The daemon must run on *clock* (a :class:`VirtualClock`) and send no ticks of
    its own (give it ``input_events=[]``): the dealer moves the clock by the
    script's gaps and sends the ticks, and after each move it waits until the
    readers have observed it (the shoe reader reported the draw, the board reader
    the card landing or leaving) before the next. So the verdicts are the script's,
    whatever the pace and the machine's load. *pace_s* is only how long a human
    watching waits between moves (wall-clock seconds).
    """

    #: Virtual seconds a button is held, and the pause after it (people: 0.1-0.2 s).
    HOLD_S = 0.15
    RELEASE_S = 0.05
    #: A move the readers have not reported after this much virtual time is given up
    #: on (a tag read again within the shoe's rearm window is, rightly, no event).
    GIVE_UP_S = 3.0
    STEP_S = 0.05

    def __init__(self, table, daemon, clock: VirtualClock, *, pace_s: float = 0.0,
                 stop: threading.Event | None = None, timeout_s: float = 10.0):
        self.table, self.daemon, self.clock = table, daemon, clock
        self.pace_s = pace_s
        self.stop = stop or threading.Event()
        self.timeout_s = timeout_s
        self.zone_reader = table.config.zone_readers()
        self.tick_s = table.config.tick_s
        self._next_tick = self.clock() + self.tick_s
        self._script_t: float | None = None
        self._move_start = self.clock()
        self.given_up = 0

    # -- the daemon's side ------------------------------------------------------------
    def _counts(self, key: str) -> dict[str, int]:
        stats = self.daemon.stats.per_reader
        return {name: stats.get(name, {}).get(key, 0) for name in self.table.config.readers}

    def wait_ready(self) -> None:
        """Wait (wall clock) until the daemon has opened every reader and each has polled."""
        deadline = time.monotonic() + self.timeout_s
        while not self.stop.is_set():
            polls = self._counts("polls")
            if all(n in self.daemon.readers and polls[n] > 0 for n in polls):
                return
            if time.monotonic() > deadline:
                raise TimeoutError("the simulated table's readers did not start")
            time.sleep(0.001)

    def wait_polls(self, rounds: int = 2) -> None:
        """Wait (wall clock) until every reader has finished *rounds* more polls."""
        start = self._counts("polls")
        deadline = time.monotonic() + self.timeout_s
        while not self.stop.is_set():
            now = self._counts("polls")
            # A reader that is down (unplugged, reopening) is not waited for.
            if all(now[n] - start[n] >= rounds or n not in self.daemon.readers for n in start):
                return
            if time.monotonic() > deadline:
                raise TimeoutError("the simulated table's readers stopped polling")
            time.sleep(0.001)

    def advance(self, dt: float) -> None:
        """Move event time on by *dt*, sending the ticks that fall on the way."""
        target = round(self.clock() + dt, 6)
        while self._next_tick <= target:
            self.clock.advance(self._next_tick - self.clock())
            self.daemon.queue.put(Event(self.clock(), "tick"))
            self._next_tick = round(self._next_tick + self.tick_s, 6)
        self.clock.advance(target - self.clock())

    def until_reported(self, reader: str, more: int = 1, what: str = "events") -> None:
        """Let event time run in small steps until *reader* has emitted *more* events
        (*what* = ``"badges"``: reported *more* badges held to it)."""
        start = self._counts(what)[reader]
        waited = 0.0
        while not self.stop.is_set():
            self.wait_polls()
            if self._counts(what)[reader] - start >= more:
                return
            if waited >= self.GIVE_UP_S:
                self.given_up += 1
                return
            self.advance(self.STEP_S)
            waited += self.STEP_S

    # -- the dealer's hands -------------------------------------------------------------
    def press(self, name: str) -> None:
        """Press and release a panel button; MISDEAL is a long press of FLOOR."""
        panel = self.table.config.panel
        hold = self.HOLD_S
        if name == "misdeal":
            name, hold = "floor", (panel.floor_hold_s or 0.0) + 0.2
        pin = self.table.pin_factory.pin(panel.pins.buttons[name])
        pin.drive_low()
        self.advance(hold)
        pin.drive_high()
        self.advance(self.RELEASE_S)

    def set_players(self, players: int) -> None:
        for _ in range((players - self.table.players) % 9):
            self.press("players")
        self.table.players = players

    def draw(self, card=None, *, uid=None, deck=None) -> None:
        if getattr(self.table, "mouth", None) is not None:
            self.table.mouth.card_passes()
        self.table.place(card, "shoe", uid=uid, deck=deck)
        self.until_reported(self.zone_reader["shoe"])
        self.table.lift(card, "shoe", uid=uid, deck=deck)
        self.wait_polls()

    def place(self, card=None, zone: str = "board", *, uid=None, deck=None) -> None:
        self.table.place(card, zone, uid=uid, deck=deck)
        self.until_reported(self.zone_reader[zone])

    def lift(self, card=None, zone: str = "board", *, uid=None, deck=None) -> None:
        self.table.lift(card, zone, uid=uid, deck=deck)
        self.until_reported(self.zone_reader[zone])

    def hold_badge(self, dealer: str | None) -> None:
        """*dealer* holds their badge to the shoe; None: the dealer who deals holds theirs again (signs out)."""
        dealer = dealer if dealer is not None else self.daemon.engine.dealer
        if dealer is None:
            return                        # nobody to sign out
        uid = self.table.badge_uid(dealer)
        self.table.place(uid=uid, zone="shoe")
        self.until_reported(self.zone_reader["shoe"], what="badges")
        self.table.lift(uid=uid, zone="shoe")
        self.table.badge_holder = dealer
        self.wait_polls()

    def sweep(self) -> None:
        """Gather every card lying on an antenna (the end of a hand)."""
        for zone, uids in list(self.table.in_field.items()):
            if zone != "shoe":
                for uid in list(uids):
                    self.lift(uid=uid, zone=zone)

    def play(self, events) -> None:
        """Act out *events* (dicts); stops early when :attr:`stop` is set."""
        self.wait_ready()
        for e in events:
            if self.stop.is_set():
                return
            ev = e.get("ev")
            if ev is None:
                continue
            if self._script_t is not None:
                # Keep the script's gap from the start of the previous move; a move
                # that took longer (a card leaving takes the dropout window) delays
                # the next one rather than overlapping it.
                gap = e["t"] - self._script_t
                self.advance(max(0.0, self._move_start + gap - self.clock()))
            self._script_t = e["t"]
            self._move_start = self.clock()
            if ev == "new_hand":
                self.set_players(e["players"])
                self.press("new_hand")
            elif ev == "shoe":
                self.draw(e.get("card"), uid=e.get("uid"), deck=e.get("deck"))
            elif ev in ("board_on", "zone_on"):
                self.place(e.get("card"), e.get("zone", "board"), uid=e.get("uid"), deck=e.get("deck"))
            elif ev in ("board_off", "zone_off"):
                self.lift(e.get("card"), e.get("zone", "board"), uid=e.get("uid"), deck=e.get("deck"))
            elif ev == "button":
                self.press(e["name"])
                if e["name"] == "hand_over":
                    self.sweep()
            elif ev == "dealer":
                self.hold_badge(e["dealer"])
            elif ev == "tick":
                self.advance(e.get("dt", 0.0))
            if self.pace_s:
                self.stop.wait(self.pace_s)
        self.wait_polls()
