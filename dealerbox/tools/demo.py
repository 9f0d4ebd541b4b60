"""``dealerbox run --demo``: a scripted dealer plays at the simulated table while the glass is printed.

Two threads beside the daemon's: the dealer (:func:`hardware_sim.demo.play_demo`),
which stops the daemon when the script is over, and the printer of the emulated
glass (:class:`dealerbox.tools.glass.GlassPrinter`).
"""

from __future__ import annotations

import threading
import time

from hardware_sim.demo import play_demo
from hardware_sim.script import VirtualClock

from dealerbox.tools.glass import GlassPrinter


class TableDemo:
    """The scripted dealer and the glass printer of one ``run --demo``.

    Give the daemon :attr:`clock`: the scripted dealer moves event time itself and
    sends the ticks, so the verdicts are the script's at any pace
    (:class:`hardware_sim.script.TableDealer`).
    """

    def __init__(self, *, pace_s: float, forever: bool = False):
        self.pace_s, self.forever = pace_s, forever
        self.clock = VirtualClock()
        self.printer: GlassPrinter | None = None
        self._stop = threading.Event()

    def start(self, table, daemon) -> None:
        """Start dealing at *table* and printing its glass; the daemon is stopped when the script is over."""
        self.printer = GlassPrinter(table, daemon)
        threading.Thread(target=self._show, daemon=True).start()
        threading.Thread(target=self._deal, args=(table, daemon), daemon=True).start()

    def finish(self, daemon) -> None:
        """The last frame, and what the demo journaled (once the daemon has stopped)."""
        self.printer.poll()
        print(f"demo over: {daemon.stats.events} events journaled, {daemon.stats.decisions} decisions")

    def _show(self) -> None:
        while not self._stop.is_set():
            self.printer.poll()
            self._stop.wait(0.05)

    def _deal(self, table, daemon) -> None:
        try:
            play_demo(table, daemon, self.clock, pace_s=self.pace_s, stop=self._stop, forever=self.forever,
                      on_new_hand=_announce)
            # Time for the printer to show the script's last frame before the daemon stops.
            time.sleep(0.2)
        finally:
            self._stop.set()
            daemon.stop()


def _announce(hand: int, event: dict) -> None:
    print(f"\n=== demo hand {hand}: {event['players']} players ===", flush=True)
