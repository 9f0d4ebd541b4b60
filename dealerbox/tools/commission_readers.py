"""The card readers' commissioning steps: the mouth sensor, the shoe reader, the board antenna
and the other zones, each measured through the box's own drivers.

Every step polls its reader at the config's ``poll_s`` (as the box's reader threads
do) while the technician's hands act, and keeps each poll with its time
(:class:`ReaderWatch`). From those polls:

- the shoe: every card of the active deck drawn at dealing pace must be read; a tag
  read again after ``shoe_rearm_s`` would be a false duplicate at the table; a tag
  read in a second pass within it, or in less than :data:`MIN_READ_SHARE` of the polls
  of its pass, is *weak* (named, for replacement). With a mouth sensor, the time from
  the beam break to the tag's first read is judged against ``read_window_s``;
- the board: five cards laid, each *on* (the config's presence tracker, its
  ``settle_s`` and ``board_dropout_s``) within :data:`ON_POLLS` polls after its
  settle time, no run of polls missing it as long as the dropout window, none *off*
  while it lies there; all five off once taken away; a card slid
  across must never be *on*;
- the other zones (burn, muck, seats) a card on and off;
- the mouth sensor: its count of the cards drawn against the reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dealerbox.domain import commission_advice as A
from dealerbox.domain import commission_figures as F
from dealerbox.errors import HardwareError, ReaderError
from dealerbox.hw.header import pin_words
from dealerbox.hw.reader import PollSchedule
from dealerbox.tools.commission_bench import Bench, hardware_advice, reader_wiring
from dealerbox.tools.commission_record import DeviceResult, Figure

__all__ = ["ReaderWatch", "check_mouth", "check_shoe", "check_board", "MIN_READ_SHARE", "MOUTH_CARDS",
           "DEAL_PACE_S", "BOARD_CARDS"]

#: A tag read in less than this share of the polls of its pass through the shoe is weak (read late);
#: judged only on a pass of at least :data:`MIN_POLLS` polls (a starved poll loop proves nothing).
MIN_READ_SHARE = 0.5
MIN_POLLS = 4
#: A tag read again after a gap this long, and this many polls that missed it, is a second pass.
PASS_GAP_S = 0.1
PASS_GAP_POLLS = 3
#: Cards the mouth sensor step draws.
MOUTH_CARDS = 10
#: Cards laid on the board: flop, turn and river.
BOARD_CARDS = 5
#: Seconds between two cards at dealing pace (what the emulated dealer keeps; people vary).
DEAL_PACE_S = 0.12
#: A step ends this long after the last read once the hands are done (or people stopped).
QUIET_S = 5.0
#: How long the cards lie on the board: several dropout windows.
LIE_S = 2.0
#: Polls that must read a card lying still.
LYING_READ_SHARE = 0.8
#: A card must be on within this many polls after its settle time (a poll or two may miss it).
ON_POLLS = 3


@dataclass
class _Tag:
    runs: list = field(default_factory=list)    # [first, last, reads, first poll, last poll] of each pass

    def read(self, t: float, poll: int) -> None:
        run = self.runs[-1] if self.runs else None
        if run is not None and (t - run[1] <= PASS_GAP_S or poll - run[4] <= PASS_GAP_POLLS):
            run[1], run[4] = t, poll
            run[2] += 1
        else:
            self.runs.append([t, t, 1, poll, poll])

    def share(self) -> float | None:
        """The share of the polls of its first pass that read it (None: too few polls to judge)."""
        _first, _last, reads, p0, p1 = self.runs[0]
        polls = p1 - p0 + 1
        return reads / polls if polls >= MIN_POLLS else None


class ReaderWatch:
    """Polls one reader at its ``poll_s`` for one zone and keeps what each poll saw.

    :attr:`tags` holds every UID read with its passes; :attr:`fault` the reader's error,
    if it stopped answering (polling stops then); :attr:`polls` the polls made.
    """

    def __init__(self, bench: Bench, zone: str):
        self.bench = bench
        self.zone = zone
        self.name = bench.config.zone_readers()[zone]
        self.reader = bench.reader(self.name)
        self.period = bench.config.readers[self.name].poll_s
        self.schedule = PollSchedule(self.period, bench.clock())
        self.due = bench.clock()
        self.tags: dict[str, _Tag] = {}
        self.polls: list[tuple[float, frozenset]] = []
        self.fault: str | None = None
        self.last_read: float | None = None
        #: Called with ``(t, UIDs seen)`` after each poll (a presence tracker fed as the box feeds one).
        self.listeners: list = []

    def poll(self) -> None:
        """Poll if a slot is due (called often by :meth:`Bench.until`)."""
        now = self.bench.clock()
        if self.fault is not None or now < self.due:
            return
        try:
            seen = self.reader.poll().get(self.zone, frozenset())
        except ReaderError as exc:
            self.fault = str(exc)
            return
        t = self.bench.clock()
        self.due = t + self.schedule.next_wait(t)
        self.polls.append((t, seen))
        for uid in seen:
            self.tags.setdefault(uid, _Tag()).read(t, len(self.polls))
            self.last_read = t
        for listener in self.listeners:
            listener(t, seen)

    def quiet_for(self, seconds: float) -> bool:
        return self.last_read is not None and self.bench.clock() - self.last_read >= seconds

    def run_until(self, done, timeout_s: float) -> bool:
        return self.bench.until(lambda: self.fault is not None or done(), timeout_s, poll=self.poll)


def _open_watch(bench: Bench, zone: str, device: str):
    """A watch on *zone*'s reader, or the failed result when it cannot be opened."""
    name = bench.config.zone_readers().get(zone)
    if name is None:
        return None, DeviceResult.skipped(device, A.NO_ZONE_READER.format(zone=zone))
    try:
        return ReaderWatch(bench, zone), None
    except (ReaderError, HardwareError) as exc:
        return None, DeviceResult(device, "fail",
                                  f"the {name} reader cannot be opened ({hardware_advice(exc)}): check "
                                  f"{reader_wiring(bench.config, name)}",
                                  [Figure.exactly(F.READER_ANSWERS, 0, 1)])


def _faulted(watch: ReaderWatch, device: str, figures: list) -> DeviceResult:
    return DeviceResult(device, "fail", f"the {watch.name} reader stopped answering ({watch.fault}): check "
                        f"{reader_wiring(watch.bench.config, watch.name)}",
                        figures + [Figure.exactly(F.READER_ANSWERS, 0, 1)])


def _draw_ended(watch: ReaderWatch, expected: int) -> bool:
    bench = watch.bench
    if len(watch.tags) >= expected and watch.quiet_for(1.0):
        return True
    if bench.hands.done and (watch.quiet_for(1.0) or (watch.last_read is None and watch.polls
                                                      and bench.clock() - watch.polls[0][0] > 3.0)):
        return True
    return watch.quiet_for(QUIET_S)


def check_mouth(bench: Bench) -> DeviceResult:
    """Draw :data:`MOUTH_CARDS` cards: the sensor must count each, beside the tags the shoe read."""
    ms = bench.config.mouth_sensor
    if ms.pin is None:
        return DeviceResult.skipped("mouth", A.NO_MOUTH_SENSOR)
    wiring = f"the sensor's output on {pin_words(ms.pin)}, its pull-up, its supply, and dust in the slot"
    say = bench.technician.say
    try:
        sensor = bench.mouth_sensor()
    except HardwareError as exc:
        return DeviceResult("mouth", "fail", f"the mouth sensor cannot be opened ({hardware_advice(exc)}): "
                            f"check {wiring}", [Figure.exactly(F.SENSOR_OPENS, 0, 1)])
    watch, failed = _open_watch(bench, "shoe", "mouth")
    if failed is not None:
        return failed
    deck = list(bench.deck())
    clear = not sensor.blocked
    figures = [Figure.exactly(F.BEAM_CLEAR, 1 if clear else 0, 1)]
    if not clear:
        return DeviceResult("mouth", "fail", f"the beam reads blocked with nothing in the slot (blocked_level "
                            f"{ms.blocked_level!r}?): check {wiring}", figures)
    say(f"The mouth sensor ({pin_words(ms.pin)}). Draw {MOUTH_CARDS} cards through the mouth, one at a time.")
    sensor.take()
    bench.hands.draw(deck[:MOUTH_CARDS], DEAL_PACE_S)
    counts: list[float] = []

    def done() -> bool:
        counts.extend(sensor.take())
        return _draw_ended(watch, MOUTH_CARDS) or (len(counts) >= MOUTH_CARDS and watch.quiet_for(1.0))

    watch.run_until(done, bench.patience_s + QUIET_S * 2)
    counts.extend(sensor.take())
    if watch.fault is not None:
        return _faulted(watch, "mouth", figures)
    figures.append(Figure.exactly(F.CARDS_COUNTED, len(counts), MOUTH_CARDS, "cards"))
    figures.append(Figure.shown(F.TAGS_MEANWHILE, len(watch.tags), "tags"))
    figures.append(Figure.shown(F.CHATTER, sensor.chatter))
    for f in figures[1:]:
        say(f"  {f.line()}")
    advice = []
    if len(counts) != MOUTH_CARDS:
        advice.append(f"the sensor counted {len(counts)} of {MOUTH_CARDS} cards drawn ({len(watch.tags)} tags "
                      f"read): check {wiring}")
    return DeviceResult.judged("mouth", figures, advice)


def check_shoe(bench: Bench) -> DeviceResult:
    """The whole active deck drawn through the mouth at dealing pace: every card read, none weak."""
    deck = bench.deck()
    if not deck:
        return DeviceResult.skipped("shoe", A.NO_DECK)
    watch, failed = _open_watch(bench, "shoe", "shoe")
    if failed is not None:
        return failed
    config, say = bench.config, bench.technician.say
    rearm = config.presence.shoe_rearm_s
    ms = config.mouth_sensor
    sensor = None
    if ms.pin is not None:
        try:
            sensor = bench.mouth_sensor()
        except HardwareError:
            sensor = None      # the mouth step says why
    say(f"The shoe reader ({watch.name}). Draw the whole deck ({len(deck)} cards) through the mouth, one card "
        "at a time, at dealing pace.")
    if sensor is not None:
        sensor.take()
    bench.hands.draw(list(deck), DEAL_PACE_S)
    counts: list[float] = []

    def done() -> bool:
        if sensor is not None:
            counts.extend(sensor.take())
        return _draw_ended(watch, len(deck))

    watch.run_until(done, bench.patience_s + len(deck) * 2.0)
    if watch.fault is not None:
        return _faulted(watch, "shoe", [])
    read = {uid: tag for uid, tag in watch.tags.items() if uid in deck}
    unknown = sorted(set(watch.tags) - set(deck))
    missed = [deck[uid] for uid in deck if uid not in read]
    late_again = [deck[uid] for uid, tag in read.items()
                  if any(b[0] - a[1] > rearm for a, b in zip(tag.runs, tag.runs[1:]))]
    twice = [deck[uid] for uid, tag in read.items() if len(tag.runs) > 1 and deck[uid] not in late_again]
    shares = {uid: tag.share() for uid, tag in read.items()}
    few = [deck[uid] for uid, share in shares.items() if share is not None and share < MIN_READ_SHARE]
    judged = [share for share in shares.values() if share is not None]
    figures = [Figure.exactly(F.CARDS_READ, len(read), len(deck), "cards"),
               Figure.exactly(F.MISSED_READS, len(missed), 0, "cards"),
               Figure.exactly(F.REREAD_AFTER, len(late_again), 0, "cards"),
               Figure.shown(F.REREAD_WITHIN, len(twice), "cards"),
               Figure.at_least(F.READ_SHARE,
                               round(min(judged) * 100, 1), MIN_READ_SHARE * 100, "%") if judged else
               Figure(F.READ_SHARE, None, "%", F.SHORT_PASSES.format(polls=MIN_POLLS), True)]
    slow = []
    # A sensor that did not count the deck (the mouth step says why) times nothing here.
    if sensor is not None and abs(len(counts) - len(deck)) > max(2, len(deck) // 10):
        figures.append(Figure(F.FIRST_READ, None, "ms",
                              F.SENSOR_MISCOUNTED.format(counted=len(counts), cards=len(deck)), True))
    elif sensor is not None:
        # Each card's first read against the beam break just before it, counted in the polls that
        # missed it between the two (at the config's poll period): a starved poll loop adds none.
        period = config.readers[watch.name].poll_s
        poll_times = [t for t, _seen in watch.polls]
        lag_ms = {}
        for uid, tag in read.items():
            first = tag.runs[0][0]
            breaks = [c for c in counts if c <= first + 0.02]
            if breaks:
                missed_polls = sum(1 for t in poll_times if breaks[-1] <= t < first)
                lag_ms[uid] = missed_polls * period * 1000
        worst = round(max(lag_ms.values()), 1) if lag_ms else None
        figures.append(Figure.at_most(F.FIRST_READ, worst, ms.read_window_s * 1000, "ms"))
        slow = [deck[uid] for uid, lag in lag_ms.items() if lag > ms.read_window_s * 1000]
    else:
        figures.append(Figure(F.FIRST_READ, None, "ms", F.NEEDS_MOUTH, True))
    weak = sorted(set(twice) | set(few) | set(slow), key=list(deck.values()).index)
    figures.append(Figure.exactly(F.WEAK_TAGS, len(weak), 0, "cards"))
    figures.append(Figure.exactly(F.FOREIGN_TAGS, len(unknown), 0, "tags"))
    for f in figures:
        say(f"  {f.line()}")
    advice = []
    antenna = (f"the shoe antenna: check {reader_wiring(config, watch.name)}, and its distance from the mouth "
               "(a card must slide within 1 cm of it)")
    if len(missed) > 3 or (len(read) and len(few) > len(read) // 4):
        advice.append(f"{len(missed)} cards unread" + (f" and {len(few)} read late" if few else "")
                      + f": {antenna}")
    elif missed:
        advice.append(A.NOT_READ.format(cards=", ".join(missed)))
    if weak and not (len(missed) > 3):
        advice.append(A.WEAK_TAGS.format(cards=", ".join(weak)))
    if late_again:
        advice.append(A.READ_AGAIN.format(seconds=f"{rearm:g}", cards=", ".join(late_again)))
    if unknown:
        advice.append(f"{len(unknown)} tag(s) not of the active deck were read: another deck's card in the shoe")
    return DeviceResult.judged("shoe", figures, advice)


def _polls_to_on(watch: ReaderWatch, uid: str, on: float, settle: float) -> int:
    """The polls after the card's settle time up to the one that made it *on* (1: at once)."""
    first = watch.tags[uid].runs[0][0]
    return sum(1 for t, _seen in watch.polls if first + settle <= t <= on)


def _longest_miss(watch: ReaderWatch, uid: str, since: float) -> int:
    """The longest run of polls since *since* that did not see *uid* while it lay there."""
    longest = run = 0
    for t, seen in watch.polls:
        if t < since:
            continue
        if uid in seen:
            run = 0
        else:
            run += 1
            longest = max(longest, run)
    return longest


def _idle_for(bench: Bench, seconds: float):
    """A test that is true once the (emulated) hands have been done for *seconds*; never for a person's."""
    since: list[float] = []

    def idle() -> bool:
        if not bench.hands.done:
            since.clear()
            return False
        if not since:
            since.append(bench.clock())
        return bench.clock() - since[0] >= seconds
    return idle


def _tracked(watch: ReaderWatch) -> tuple[dict[str, float], dict[str, float]]:
    """The config's presence tracker fed with the watch's polls as they come: when each UID went
    on and off, as the box would have said it (the readers give UIDs as the tracker keeps them)."""
    config = watch.bench.config
    tracker = config.presence.tracker(max_tags=getattr(config.readers[watch.name].options, "max_tags", None))
    ons: dict[str, float] = {}
    offs: dict[str, float] = {}

    def feed(t: float, seen: frozenset) -> None:
        for e in tracker.update(t, {watch.zone: seen}):
            if e.ev in ("board_on", "zone_on"):
                ons[e.uid] = e.t
            elif e.ev in ("board_off", "zone_off"):
                offs[e.uid] = e.t
    watch.listeners.append(feed)
    return ons, offs


def check_board(bench: Bench) -> DeviceResult:
    """Five cards laid and taken off, one slid across; then each other zone the config has."""
    deck = list(bench.deck())
    if len(deck) < BOARD_CARDS:
        return DeviceResult.skipped("board", A.NO_DECK)
    watch, failed = _open_watch(bench, "board", "board")
    if failed is not None:
        return failed
    config, say, hands = bench.config, bench.technician.say, bench.hands
    settle, dropout = config.presence.settle_s, config.presence.board_dropout_s
    # Not the mouth step's cards, nor the one slid across (the first).
    cards = deck[MOUTH_CARDS:MOUTH_CARDS + BOARD_CARDS]
    ons, offs = _tracked(watch)
    say(f"The board antenna ({watch.name}). Lay {BOARD_CARDS} cards on the board, one in each position "
        "(flop, turn, river), and leave them.")
    hands.lay(cards, "board")
    hands_idle = _idle_for(bench, 2 * settle + 1.0)
    watch.run_until(lambda: len(ons) >= BOARD_CARDS or watch.quiet_for(QUIET_S) or hands_idle(),
                    bench.patience_s + QUIET_S)
    laid = [uid for uid in ons]
    lie_start = bench.clock()
    watch.run_until(lambda: bench.clock() - lie_start >= LIE_S, LIE_S + 1)
    if watch.fault is not None:
        return _faulted(watch, "board", [])
    lie_end = bench.clock()
    period = config.readers[watch.name].poll_s
    on_lag = [ons[uid] - watch.tags[uid].runs[0][0] for uid in laid if uid in watch.tags]
    # Judged in polls, not seconds: a poll loop the machine starved delays every card alike.
    late = [uid for uid in laid if _polls_to_on(watch, uid, ons[uid], settle) > ON_POLLS]
    lying = [seen for t, seen in watch.polls if lie_start <= t <= lie_end]
    shares = [sum(1 for seen in lying if uid in seen) / len(lying) for uid in laid] if lying else []
    missing_run = max((_longest_miss(watch, uid, ons[uid]) for uid in laid), default=0)
    lost = [uid for uid in laid if uid in offs]
    figures = [Figure.exactly(F.CARDS_ON, len(laid), BOARD_CARDS, "cards"),
               Figure.shown(F.FIRST_READ_TO_ON, round(max(on_lag) * 1000, 1) if on_lag else None, "ms"),
               Figure.exactly(F.CARDS_ON_LATE.format(polls=ON_POLLS), len(late), 0, "cards"),
               Figure.at_least(F.LYING_READ,
                               round(min(shares) * 100, 1) if shares else None, LYING_READ_SHARE * 100, "%"),
               Figure.at_most(F.LONGEST_MISS, round(missing_run * period * 1000, 1),
                              dropout * 1000, "ms"),
               Figure.exactly(F.CARDS_LOST, len(lost), 0, "cards")]
    for f in figures:
        say(f"  {f.line()}")
    say("Take the cards off the board.")
    hands.lift(cards, "board")
    watch.run_until(lambda: all(uid in offs for uid in laid), dropout + QUIET_S + bench.patience_s)
    figures.append(Figure.exactly(F.CARDS_OFF, sum(1 for uid in laid if uid in offs),
                                  len(laid) or BOARD_CARDS, "cards"))
    say(f"  {figures[-1].line()}")
    say("Slide one card across the board antenna, without stopping.")
    slid = deck[0]
    ons_before = set(ons)
    start_polls = len(watch.polls)
    hands.slide(slid, "board")
    seen_at = []

    def slid_over() -> bool:
        seen_at[:] = [t for t, seen in watch.polls[start_polls:] if seen]
        return bool(seen_at) and watch.quiet_for(settle + dropout + 0.3)

    watch.run_until(slid_over, bench.patience_s + 2)
    if watch.fault is not None:
        return _faulted(watch, "board", figures)
    figures.append(Figure.at_least(F.SLID_READ, len(seen_at), 1, "polls"))
    figures.append(Figure.exactly(F.SLID_COUNTED, len(set(ons) - ons_before), 0, "cards"))
    for f in figures[-2:]:
        say(f"  {f.line()}")
    figures += _other_zones(bench, deck)
    advice = []
    names = bench.deck()
    lying_ok, off, slid_read, slid_counted = all(f.ok for f in figures[:6]), figures[6], figures[7], figures[8]
    if not lying_ok:
        weak = [names.get(uid, uid) for uid, share in zip(laid, shares) if share < LYING_READ_SHARE]
        unseen = [names[uid] for uid in cards if uid not in ons]
        advice.append("the board antenna misses cards lying on it"
                      + (f" ({', '.join(unseen)} never on)" if unseen else "")
                      + (f" ({', '.join(weak)} read in too few polls)" if weak else "")
                      + f": check its distance under the felt (cards must lie within 2 cm of it, every "
                      f"position over it) and {reader_wiring(config, watch.name)}")
    if not off.ok:
        advice.append(A.BOARD_READS_TAKEN)
    if not slid_read.ok:
        advice.append(A.SLID_NEVER_READ)
    if not slid_counted.ok:
        advice.append(A.SETTLE_TOO_SHORT.format(seconds=f"{settle:g}"))
    bad_zones = [f.name.split(":")[0] for f in figures[9:] if not f.ok]
    if bad_zones:
        advice.append(f"the zone(s) {', '.join(sorted(set(bad_zones)))}: check their antennas and "
                      + "; ".join(reader_wiring(config, config.zone_readers()[z.split()[0]])
                                  for z in sorted(set(bad_zones))))
    return DeviceResult.judged("board", figures, advice)


def _other_zones(bench: Bench, deck: list[str]) -> list[Figure]:
    """A card laid on each zone other than the shoe and the board, and taken off."""
    figures = []
    for zone, name in bench.config.zone_readers().items():
        if zone in ("shoe", "board"):
            continue
        watch = ReaderWatch(bench, zone)
        ons, offs = _tracked(watch)
        uid = deck[1]
        bench.technician.say(f"Lay a card on the {zone} antenna ({name}), and leave it.")
        bench.hands.lay([uid], zone)
        watch.run_until(lambda: uid in ons or bool(ons), bench.patience_s)
        bench.technician.say(f"Take it off the {zone} antenna.")
        bench.hands.lift([uid], zone)
        on = next(iter(ons), None)
        watch.run_until(lambda: on is not None and on in offs, bench.config.presence.zone_dropout_s + QUIET_S)
        figures.append(Figure.exactly(F.ZONE_ON.format(zone=zone), 1 if ons else 0, 1, "cards"))
        figures.append(Figure.exactly(F.ZONE_OFF.format(zone=zone), 1 if on in offs else 0, 1, "cards"))
        for f in figures[-2:]:
            bench.technician.say(f"  {f.line()}")
    return figures
