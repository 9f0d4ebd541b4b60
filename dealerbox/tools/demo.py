"""``dealerbox run --demo``: a scripted dealer plays at the simulated table and the box's answers are printed.

The dealer's thread acts the script out move by move (:class:`hardware_sim.script.TableDealer`).
After each move it lets the daemon judge it, and when the box's decision changes what the
dealer must do (a new irregularity, its next step, back to play on) it prints one line
saying what the dealer did (:class:`dealerbox.tools.narrator.DealerNarrator`) and the
glass that answered it, with the irregularity's id beside the LED
(:class:`dealerbox.tools.glass.GlassPrinter`). A clean hand prints its header only.

The script is the demo session (:func:`hardware_sim.demo.demo_script`; with ``--forever``,
new shuffles of it until stopped), or, at a table of ``make floor``'s room (a
:data:`dealerbox.tools.room_table.PART_FILE` beside the config), the table's own hands,
dealers and pace (:class:`dealerbox.tools.room_table.RoomTable`).
"""

from __future__ import annotations

import sys
import threading
import time

from hardware_sim.demo import demo_script
from hardware_sim.script import TableDealer, VirtualClock

from dealerbox.tools.glass import GlassPrinter
from dealerbox.tools.narrator import DealerNarrator
from dealerbox.tools.room_table import RoomPart, RoomTable

__all__ = ["TableDemo"]

#: The demo session's first seed; each pass of ``--forever`` shuffles with the next.
SESSION_SEED = 40
#: Wall seconds the daemon gets to judge a move before the dealer looks up.
SETTLE_S = 2.0


class TableDemo:
    """The scripted dealer of one ``run --demo``, and what it prints.

    Give the daemon :attr:`clock`: the scripted dealer moves event time itself and
    sends the ticks, so the verdicts are the script's at any pace
    (:class:`hardware_sim.script.TableDealer`).
    """

    def __init__(self, *, pace_s: float, forever: bool = False, out=None):
        self.pace_s, self.forever = pace_s, forever
        self.out = out or sys.stdout
        self.clock = VirtualClock()
        self.printer: GlassPrinter | None = None
        self.narrator = DealerNarrator()
        self.hands = 0
        self._stop = threading.Event()
        self._dealer: TableDealer | None = None

    def start(self, table, daemon) -> None:
        """Start dealing at *table*; the daemon is stopped when the script is over."""
        self.printer = GlassPrinter(table, daemon, self.out)
        part = RoomPart.beside(table.config.path)
        threading.Thread(target=self._deal, args=(table, daemon, part), daemon=True).start()

    def finish(self, daemon) -> None:
        """What the demo journaled (once the daemon has stopped)."""
        self.out.write(f"demo over: {daemon.stats.events} events journaled, {daemon.stats.decisions} decisions\n")
        self.out.flush()

    def _deal(self, table, daemon, part) -> None:
        try:
            if part is None:
                self._dealer = TableDealer(table, daemon, self.clock, pace_s=self.pace_s, stop=self._stop)
                self._dealer.wait_ready()
                self._settle(daemon)
                self.printer.show()
                self._play_session(daemon)
            else:
                self._dealer = TableDealer(table, daemon, self.clock, stop=self._stop)
                self._dealer.wait_ready()
                speed = ("a live table's pace" if part.speed == 1 else
                         f"ACCELERATED {part.speed:g} times a live table's pace")
                self.out.write(f"room table {part.table + 1} of {part.tables}: {speed}, "
                               f"about {part.irregular_per_100:g} irregular hands per 100\n")
                self.out.flush()
                RoomTable(part, stop=self._stop).play(lambda e: self._act(daemon, e), lambda: daemon.engine.dealer)
        finally:
            self._stop.set()
            daemon.stop()

    def _play_session(self, daemon) -> None:
        seed = SESSION_SEED
        while not self._stop.is_set():
            for e in demo_script(seed).events:
                if self._stop.is_set():
                    return
                # The dealer who already deals here does not hold the badge again: that would sign them out.
                if e["ev"] == "dealer" and e["dealer"] == daemon.engine.dealer:
                    continue
                self._act(daemon, e)
            if not self.forever:
                return
            seed += 1

    def _act(self, daemon, event: dict) -> None:
        """Act *event* out, then print what it changed for the dealer, with its cause."""
        if event["ev"] == "new_hand":
            self.hands += 1
            self.out.write(f"\n=== demo hand {self.hands}: {event['players']} players ===\n")
            self.out.flush()
        cause = self.narrator.tell(event)
        if event["ev"] == "dealer":
            # Who deals changes nothing the dealer must do, but the log says who took over.
            self.out.write(f"dealer: {cause}\n")
            cause = None
        self._dealer.play([event])
        self._settle(daemon)
        self.printer.show(cause)

    def _settle(self, daemon) -> None:
        """Wait (wall clock) until the engine has taken every event the move caused."""
        deadline = time.monotonic() + SETTLE_S
        while time.monotonic() < deadline and not self._stop.is_set():
            if daemon.queue.empty():
                # The readers' threads put what they saw right after counting it: a moment more.
                time.sleep(0.01)
                if daemon.queue.empty():
                    return
            time.sleep(0.002)
