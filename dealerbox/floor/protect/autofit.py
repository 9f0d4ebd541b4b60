"""References fitted in the background, so that no game waits for someone to remember a command.

The collector's protection pass (:class:`~dealerbox.floor.protect.floor_pass.Protection`)
asks for every configured game whose reference is missing or stale (``[protect] auto_fit``,
on by default): on the floor's first start, and after a change of the declared model. A
daemon thread of its own, at the lowest CPU priority, deals the references
(:func:`~dealerbox.floor.protect.fit.fit_game`: pure CPU, no store), one game at a time;
the pass stores each finished one at its next catch-up, on its own connection and in its
own transaction, so filing never waits and no second thread writes to the store. Hands dealt before a game's reference is stored are
not scored (the pass says so: an alert and a notice on the Surveillance page).

A game is asked for once per model in a process: a fit that failed is logged, kept in
:attr:`BackgroundFit.failed` (the pass alerts surveillance at once and the Surveillance page
says why) and tried again only after a restart (or by ``dealerbox floor protect fit``).
"""

from __future__ import annotations

import logging
import os
import queue
import random
import threading

from dealerbox.floor.protect.config import ProtectConfig
from dealerbox.floor.protect.fit import fit_game

__all__ = ["BackgroundFit", "FIT_JOIN_S"]

log = logging.getLogger(__name__)

#: How long a closing collector waits for the game being fitted: one game of
#: ``reference_hands`` takes about a second of CPU, so this leaves room for a busy machine
#: at the lowest priority without holding a shutdown for ever.
FIT_JOIN_S = 10.0
#: The characters of a failed fit's error kept in :attr:`BackgroundFit.failed`.
WHY_MAX = 80


class BackgroundFit:
    """Fits the games it is asked for in a thread; :meth:`take` hands over what is done.

    *fit* (``fit_game``'s signature) and *seed* are for the tests and the bench."""

    def __init__(self, config: ProtectConfig, *, fit=fit_game, seed: int | None = None):
        self.config = config
        self._fit = fit
        self._rng = random.Random(seed)
        self._done: queue.SimpleQueue = queue.SimpleQueue()
        self._asked: set = set()
        self._thread: threading.Thread | None = None
        self._pending: set = set()   # asked for, and not yet handed over by take()
        self._failed: dict = {}      # game -> why its fit failed, in words
        self._lock = threading.Lock()
        self._stop = threading.Event()

    @property
    def busy(self) -> bool:
        """Whether a fit is under way."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def fitting(self) -> list:
        """The games asked for whose reference :meth:`take` has not handed over yet (being fitted,
        or done and waiting to be stored), in order."""
        with self._lock:
            return sorted(self._pending, key=lambda g: (g[1], g[0]))

    @property
    def failed(self) -> dict:
        """The games whose fit failed in this process: (players, hole cards) -> why, in words."""
        with self._lock:
            return dict(self._failed)

    def ask(self, games) -> list:
        """Fit *games* (those not asked for under the declared model before) unless a fit is under
        way or the fitter is stopped; returns the games now being fitted."""
        if self.busy or self._stop.is_set():
            return []
        todo = [g for g in games if (g, self.config.fingerprint(*g)) not in self._asked]
        if not todo:
            return []
        self._asked.update((g, self.config.fingerprint(*g)) for g in todo)
        with self._lock:
            self._pending.update(todo)
        self._thread = threading.Thread(target=self._run, args=(todo,), name="floor-protect-fit", daemon=True)
        self._thread.start()
        log.info("protect: fitting the references of %d games in the background", len(todo))
        return todo

    def _run(self, games) -> None:
        try:   # the lowest CPU priority for this thread alone (Linux): filing and pages come first
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except (AttributeError, OSError):
            pass
        for players, hole_cards in games:
            if self._stop.is_set():
                return
            try:
                reference = self._fit(self.config, players, hole_cards, self._rng)
            except Exception as exc:  # noqa: BLE001: a failed fit leaves the game unscored, said on the page
                log.exception("protect: the reference for %s players, %s hole cards could not be fitted",
                              players, hole_cards)
                with self._lock:
                    self._pending.discard((players, hole_cards))
                    # Said in an alert's text (300 characters in all) and on the page: kept short.
                    self._failed[(players, hole_cards)] = (str(exc) or type(exc).__name__)[:WHY_MAX]
                continue
            self._done.put(((players, hole_cards), self.config.fingerprint(players, hole_cards), reference))

    def take(self) -> list:
        """The fits finished since the last call: ``((players, hole cards), fingerprint, reference)``."""
        out = []
        while True:
            try:
                out.append(self._done.get_nowait())
            except queue.Empty:
                break
        with self._lock:
            self._pending.difference_update(game for game, _fp, _reference in out)
        return out

    def join(self, timeout: float | None = None) -> None:
        """Wait for the fit under way."""
        if self._thread is not None:
            self._thread.join(timeout)

    def stop(self) -> None:
        """Stop after the game being fitted, and fit nothing more."""
        self._stop.set()

    def close(self, timeout: float = FIT_JOIN_S) -> None:
        """Stop, and wait up to *timeout* seconds for the game being fitted to finish (the
        collector's close: no fit thread outlives it)."""
        self.stop()
        self.join(timeout)
