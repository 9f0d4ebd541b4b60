"""``dealerbox commission``: a guided run that checks a table's hardware device by device.

The run works on the table's own config, in a terminal (over SSH), one device at a
time, in the order of :data:`dealerbox.domain.commissioning.DEVICES`: the LCD, the
LEDs and buzzer, the buttons, the mouth sensor, the shoe reader, the board antenna
(and the other zones), the clock and the state directory. Each step says what to do,
measures through the box's own drivers, prints every figure beside its bound, and
ends in pass, fail (with what to check) or skipped (with why). ``--only shoe,board``
runs a part.

A run that ends becomes the table's commissioning record
(:mod:`dealerbox.tools.commission_record`): kept in the state directory and journalled
as ``commissioned``, so it reaches the floor. Ctrl-C stops the run: the devices are
closed, the emulated hands stop, and nothing is recorded.

Refused, in one line: no terminal (unless the answers are scripted for an emulated
run), and a running box (it holds the GPIOs and readers: stop it first).

On a config whose devices are simulated, the same run drives the chip emulators:
an emulated dealer (:mod:`dealerbox.tools.commission_emulation`) draws and lays the
cards and presses the buttons, with the faults of ``--fault`` (:data:`hardware_sim.noise.TABLE_FAULTS`).
"""

from __future__ import annotations

import contextlib
import sys
from datetime import datetime
from typing import Callable

from dealerbox.domain.commissioning import DEVICES
from dealerbox.errors import HardwareError, ReaderError, UsageError
from dealerbox.service.commands import load_table_config, require_rc522_driver
from dealerbox.service.registry_outbox import journal_locked
from dealerbox.service.uplink import kernel_clock_synchronised
from dealerbox.tools.commission_bench import Bench
from dealerbox.tools.commission_lcd import check_lcd
from dealerbox.tools.commission_panel import check_buttons, check_leds
from dealerbox.tools.commission_readers import check_board, check_mouth, check_shoe
from dealerbox.tools.commission_record import (DeviceResult, format_record, journal_record, load_record,
                                               local_zone, make_record, save_record)
from dealerbox.tools.commission_system import check_clock, check_state
from dealerbox.tools.commission_terminal import (ScriptedTechnician, TechnicianHands, TerminalTechnician,
                                                 no_terminal)

__all__ = ["STEPS", "parse_only", "run_steps", "commission_command", "box_running_refusal"]

#: Each device's step.
STEPS: dict[str, Callable[[Bench], DeviceResult]] = {
    "lcd": check_lcd, "leds": check_leds, "buttons": check_buttons, "mouth": check_mouth,
    "shoe": check_shoe, "board": check_board, "clock": check_clock, "state": check_state,
}
#: The devices whose steps ask the technician what they see or hear.
_CONFIRMED = {"lcd": "lcd", "leds": "panel"}


def parse_only(text: str | None) -> tuple[str, ...]:
    """The devices of ``--only a,b`` in the order a run checks them (all of them for None)."""
    if text is None:
        return DEVICES
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in DEVICES]
    if unknown or not names:
        raise UsageError(f"dealerbox commission: --only takes devices among {', '.join(DEVICES)}, "
                         f"not {text!r}")
    return tuple(d for d in DEVICES if d in names)


def box_running_refusal(config) -> str | None:
    """Why the run must not start while the box runs (it holds the GPIOs and the readers), or None."""
    if journal_locked(config.state_dir / "journal"):
        return ("dealerbox commission: the box is running and holds the table's GPIOs and readers: stop it "
                "first (sudo systemctl stop dealerbox), commission, then start it again")
    return None


def run_steps(bench: Bench, devices=DEVICES) -> list[DeviceResult]:
    """Run the steps of *devices* in order; each step's result, as the technician was told it."""
    say = bench.technician.say
    results = []
    for n, device in enumerate(devices, 1):
        say("")
        say(f"== {n}/{len(devices)}: {device} ==")
        try:
            result = STEPS[device](bench)
        except (HardwareError, ReaderError) as exc:
            # A device that fails in a way its step did not foresee still fails only its step.
            result = DeviceResult(device, "fail", f"{exc}: check its wiring (docs/WIRING.md)")
        results.append(result)
        say(f"-> {device}: {result.verdict.upper()}" + (f": {result.advice}" if result.advice else ""))
    say("")
    say("Summary:")
    for r in results:
        say(f"  {r.device:<8} {r.verdict.upper()}" + (f"  {r.advice}" if r.advice else ""))
    return results


def _print_report(config) -> int:
    record = load_record(config.state_dir)
    if record is None:
        print(f"dealerbox commission: no commissioning recorded for this table yet "
              f"({config.state_dir / 'commissioned.json'})", file=sys.stderr)
        return 1
    print(format_record(record))
    return 0


def commission_command(args, *, emulated_bench=None, clock_synchronised=kernel_clock_synchronised,
                       technician=None) -> int:
    """``dealerbox commission``: see the module docstring. Exit 0 when no device failed, 1 when
    one did (or no record exists, with ``--report``), 2 for a refusal, 130 for Ctrl-C.

    *emulated_bench* ``(config, technician, faults, clock_synchronised, exit_stack) -> Bench``
    makes the bench of a config with simulated devices (the simulated table and the emulated
    hands: :func:`dealerbox.tools.commands.commission` hands it in, so that only such a
    config loads the simulator). *technician*, by default as ``--answers`` says: who is asked."""
    config = load_table_config(args.config, check_devices=False)
    if args.report:
        return _print_report(config)
    devices = parse_only(args.only)
    faults = tuple(args.fault or ())
    if args.answers is not None or faults:
        real = set(config.real_devices)
        confirmed_real = [key for d, key in _CONFIRMED.items() if d in devices and key in real]
        if args.answers is not None and confirmed_real:
            raise UsageError(f"dealerbox commission: --answers is for the emulated run only, and "
                             f"{', '.join(confirmed_real)} of {config.path.name} is real: a person confirms it")
        if faults and real:
            raise UsageError(f"dealerbox commission: --fault is for the emulators only; {config.path.name} has "
                             f"real devices ({', '.join(sorted(real))})")
    if args.answers is None:
        refusal = no_terminal()
        if refusal:
            print(refusal, file=sys.stderr)
            return 2
    refusal = box_running_refusal(config)
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    require_rc522_driver(config, "commission")
    if technician is None:
        technician = (TerminalTechnician() if args.answers is None
                      else ScriptedTechnician(args.answers == "yes"))
    technician.say(f"dealerbox commission: table {config.name!r}, {config.path}")
    technician.say(f"devices: {', '.join(devices)}; Ctrl-C stops the run and records nothing")
    with contextlib.ExitStack() as stack:
        if config.simulated_devices:
            if emulated_bench is None:
                raise UsageError("dealerbox commission: this config has simulated devices and no simulated "
                                 "table was started for them")
            bench = emulated_bench(config, technician, faults, clock_synchronised, stack)
        else:
            bench = Bench(config, technician, TechnicianHands(), clock_synchronised)
        stack.callback(bench.close)
        try:
            results = run_steps(bench, devices)
        except (KeyboardInterrupt, EOFError):
            bench.close()
            print("\ndealerbox commission: stopped; the devices are closed and nothing is recorded", file=sys.stderr)
            return 130
    return _record(config, results, technician)


def _record(config, results, technician) -> int:
    record = make_record(results, config_path=config.path, ended=datetime.now().astimezone(), zone=local_zone())
    ok = record["ok"]
    try:
        path = save_record(config.state_dir, record)
    except OSError as exc:
        technician.say(f"the record cannot be kept in {config.state_dir} ({exc.strerror or exc}); the verdicts "
                       "above stand, but nothing is recorded")
        return 1
    technician.say(f"record kept in {path}")
    technician.say(journal_record(config, record))
    technician.say(f"result: {'PASS' if ok else 'FAIL'} (dealerbox commission --report prints it again)")
    return 0 if ok else 1
