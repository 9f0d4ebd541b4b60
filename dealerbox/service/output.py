"""Where a decision goes once the engine has made it: the panel, the LCD, the journal and the log."""

from __future__ import annotations

import json
import logging
import threading

from dealerbox.rules.engine import Step, decision_to_dict
from dealerbox.domain.events import Event
from dealerbox.service.panel import PanelView, render, technician_line

log = logging.getLogger("dealerbox")


def decision_record(decision, messages, seq: int, event: Event) -> dict:
    """A decision as the journal and the log hold it (CONTRACT.md), with two added
    fields the contract allows: ``seq``, the journal line of the event that
    caused it, and ``id``, that event's own id if it has one."""
    out = decision_to_dict(decision, messages)
    out["seq"] = seq
    if event.id is not None:
        out["id"] = event.id
    return out


def give_out(on_decision, out: dict) -> None:
    """Hand *out* to the ``on_decision`` callback, if any. A callback that fails (a
    closed stdout) is logged: the decision still goes to the journal after it."""
    if on_decision is None:
        return
    try:
        on_decision(out)
    except Exception as exc:
        log.error("could not give out decision %s: %s", out.get("seq"), exc)


class DecisionOutput:
    """Owns what the box shows and records for each decision.

    The glass: each decision is rendered with the technician's line (storage
    fault, dead readers, the note of a recovered or damaged start), the LEDs
    are lit at once, and the LCD gets the frame on its own thread
    (:meth:`lcd_loop`, latest frame wins) so a slow LCD never delays
    detection. The record: each decision goes to the ``on_decision`` callback
    (``run --decisions`` prints it), to the log, and to the journal's writer
    beside its event: the journal last, so that a decision on record was given
    out, and one a crash kept from the record is given out again on restart
    (:class:`~.recovery.StartupRecovery`).
    """

    def __init__(self, engine, journal, devices, stats, stop: threading.Event, *, on_decision=None):
        self.engine = engine
        self.journal = journal
        self.devices = devices
        self.stats = stats
        self._stop = stop
        self._on_decision = on_decision
        self.lcd_config = None
        self.messages = None
        #: The last :class:`~dealerbox.service.panel.PanelView` shown.
        self.view: PanelView | None = None
        #: What a start found (a recovered hand, a damaged journal), for the first frame.
        self.start_note: str | None = None
        self._last_decision = None
        self._shown_phase = None
        # Who deals, as the glass last said; a change greets the dealer on the technician's line
        # until the next decision or phase, and leaves the LED as it is.
        self._dealer = engine.dealer
        self._greeting: Step | None = None
        self._greeting_phase: str | None = None
        self._greeting_new = False
        self._lcd_frame: PanelView | None = None
        self._lcd_wake = threading.Condition()

    def configure(self, config, messages) -> None:
        """The LCD's size from *config* and the dealer's language: at start and on reload."""
        self.lcd_config = config.lcd
        self.messages = messages

    def publish(self, decisions, seq: int, event: Event) -> None:
        """Show and record the *decisions* the engine made on *event* (journal line *seq*)."""
        self._greeting_new = self._follow_dealer()
        if not decisions and (self._greeting_new or event.ev in ("reader_fault", "reader_ok")
                              or self.engine.phase != self._shown_phase):
            # No new decision, but the glass must follow: a dead reader, or "OK flop" becoming "OK turn".
            self.show(self.engine.decision, refresh=True)
        for d in decisions:
            self.stats.decisions += 1
            self.show(d)
            out = decision_record(d, self.messages, seq, event)
            give_out(self._on_decision, out)
            log.info("decision %s", json.dumps(out, ensure_ascii=False))
            self.journal.submit_record("decision", out)
        self._greeting_new = False

    def _follow_dealer(self) -> bool:
        """True when who deals changed since the glass last said: the greeting to show is set."""
        dealer = self.engine.dealer
        if dealer == self._dealer:
            return False
        if dealer is not None:
            self._greeting = Step("dealer.signed_in", (("dealer", dealer),))
        else:
            self._greeting = Step("dealer.signed_out", (("dealer", self._dealer),))
        log.info("dealer %s", f"{dealer} signed in" if dealer is not None else f"{self._dealer} signed out")
        self._dealer = dealer
        self._greeting_phase = self.engine.phase
        return True

    def say(self, step: Step) -> None:
        """Put *step* on the technician's line as a greeting is (until the next decision or
        phase), the LEDs as they are: a word for the dealer, no alarm."""
        self._greeting, self._greeting_phase, self._greeting_new = step, self.engine.phase, True
        self.show(self.engine.decision, refresh=True)
        self._greeting_new = False

    def show(self, decision, *, initial: bool = False, refresh: bool = False) -> None:
        """Render *decision*, light the LEDs and hand the frame to the LCD's thread.

        *initial*: the first frame after a start or reload (it carries the start's
        note); *refresh*: the same decision again, because the box's state changed.
        """
        lc = self.lcd_config
        if initial:
            self._dealer, self._greeting = self.engine.dealer, None    # a start or reload greets nobody
        elif self._greeting is not None and not self._greeting_new and (
                not refresh or self.engine.phase != self._greeting_phase):
            self._greeting = None                                      # a new decision or phase: it has been read
        view = render(decision, self.messages, cols=lc.cols, rows=lc.rows,
                      previous=None if initial or refresh else self._last_decision, phase=self.engine.phase)
        storage = self.journal.fault is not None
        note = self._technician_note(initial)
        if note:
            view = technician_line(view, note, storage_fault=storage, beep=view.beep and not refresh)
        self._last_decision = decision
        self._shown_phase = self.engine.phase
        self.view = view
        self.devices.show_leds(view)       # LEDs first: they are instant
        with self._lcd_wake:
            self._lcd_frame = view
            self._lcd_wake.notify()

    def _technician_note(self, initial: bool) -> str | None:
        if self.journal.fault is not None:
            # The box judges on, but nothing is on record until the disk is back:
            # the technician must know (the LED turns amber where it was green).
            return f"STORAGE FAULT {self.journal.queued}q"
        if self.engine.faulted_readers:
            # No RULES.md row covers a dead reader, but the dealer must know the box is half blind.
            return "READER DOWN: " + ",".join(sorted(self.engine.faulted_readers))
        if initial:
            return self.start_note
        if self._greeting is not None:
            return self.messages.lcd(self._greeting, self.lcd_config.cols)
        return None

    def lcd_loop(self) -> None:
        """The LCD's thread: write the latest frame until the box stops."""
        while not self._stop.is_set():
            with self._lcd_wake:
                while self._lcd_frame is None and not self._stop.is_set():
                    self._lcd_wake.wait(0.5)
                frame, self._lcd_frame = self._lcd_frame, None
            if frame is None:
                continue
            try:
                self.devices.show_lcd(frame)
            except Exception:
                self.stats.lcd_errors += 1
                log.exception("LCD update failed")

    def wake_lcd(self) -> None:
        """Wake the LCD's thread (to see that the box is stopping)."""
        with self._lcd_wake:
            self._lcd_wake.notify_all()
