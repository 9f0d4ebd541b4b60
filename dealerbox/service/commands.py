"""The table's commands that run beside its packages; ``dealerbox.cli`` parses and calls them.

``run`` (the box), ``check-config``, ``journal verify`` and ``floor publish``;
and the table config every command of the box and of the technician's tools
reads (:func:`config_path`, :func:`load_table_config`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from pathlib import Path

from dealerbox.errors import UsageError
from dealerbox.resources import data_dir, installed_config
from dealerbox.service.config import DEFAULT_CONFIG, check_config as check_config_file, load_config
from dealerbox.service.daemon import Daemon, read_input_events
from dealerbox.service.journal import verify
from dealerbox.service.kinds import missing_drivers
from dealerbox.service.uplink import Publisher, load_table_floor
from dealerbox.signals import wait_for_stop_signal


def config_path(given=None) -> Path:
    """The table config a command uses: *given* (``--config``), else
    ``$DEALERBOX_CONFIG``, else ``/etc/dealerbox/table.toml`` when it exists (an
    installed box), else the shipped all-simulated table.

    A *given* name that is no file here but a bare name of a shipped table
    (``pi4-rc522.toml``, or ``pi4-rc522``) is that shipped table: a rehearsal on a
    laptop names the file it will install without a checkout at hand."""
    if not given:
        return installed_config() or DEFAULT_CONFIG
    path = Path(given)
    if not path.exists() and path.name == str(given):
        shipped = data_dir("tables") / (path.name if path.suffix == ".toml" else f"{path.name}.toml")
        if shipped.is_file():
            return shipped
    return path


def load_table_config(given=None, *, check_devices: bool = True):
    """Load the config :func:`config_path` names. (A shipped config's state goes where
    :func:`dealerbox.service.config.writable_state_dir` says: never among the shipped files.)"""
    return load_config(config_path(given), check_devices=check_devices)


def setup_logging(verbose: bool, quiet: bool = False) -> None:
    """Log to stderr for journald: DEBUG with *verbose*, WARNING with *quiet*, else INFO."""
    # journald stamps each line itself; level and logger name are what it needs.
    level = logging.DEBUG if verbose else (logging.WARNING if quiet else logging.INFO)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr, force=True)
    # transitions logs every phase change at INFO: noise in journald.
    logging.getLogger("transitions").setLevel(logging.WARNING)


def require_rc522_driver(config, command: str) -> None:
    """Refuse in one line when the config has readers whose driver needs the ``pi``
    extra (the RC522's ``mfrc522``) and it is not installed: the box would otherwise
    run blind. Simulated readers are held to it too, so a demo runs the shipped driver."""
    for kind, module in missing_drivers(config.readers.values()):
        raise UsageError(f"dealerbox {command}: the {kind.upper()} readers of {config.path.name} need the 'pi' extra "
                         f"(the {module} driver): pip install 'dealerbox[pi]'")


def run(args) -> int:
    """``dealerbox run``: start the box. With --demo, a scripted dealer plays at the simulated table."""
    setup_logging(args.verbose, quiet=args.demo)
    config = load_table_config(args.config)
    if args.demo and config.real_devices:
        raise UsageError("dealerbox run --demo needs a config whose devices are all simulated")
    require_rc522_driver(config, "run")
    input_events = None
    if args.input:
        input_events = read_input_events(args.input)
        # One streaming pass first: a bad line stops the start with one clear
        # line, not the running box half-way through the file.
        for _event in input_events:
            pass
    table = None
    if config.simulated_devices:
        # Only a table with simulated devices loads the simulator.
        from hardware_sim.table import SimulatedTable

        table = SimulatedTable(config)
    demo = None
    if args.demo:
        from dealerbox.tools.demo import TableDemo

        demo = TableDemo(pace_s=args.pace, forever=args.forever)
        input_events = []
    with table if table is not None else contextlib.nullcontext():
        daemon = Daemon(config, table=table, input_events=input_events, input_pace_s=args.input_pace,
                        on_decision=_print_decision if args.decisions else None,
                        **({"clock": demo.clock} if demo is not None else {}))
        daemon.start()
        if demo is not None:
            demo.start(table, daemon)
        code = daemon.run()
        if demo is not None:
            demo.finish(daemon)
        return code


def _print_decision(d: dict) -> None:
    # One write per line: print() writes the newline separately, and a kill or
    # another thread could land between the two.
    sys.stdout.write(json.dumps(d, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def check_config(args) -> int:
    """``dealerbox check-config``: every error of the file, one a line; nothing at all when it is valid.

    With ``--fresh-install`` (what the installer runs) the file must be valid,
    but what only a finished setup provides, the deck registry and the device
    nodes that appear after the pending reboot, is listed as left to do and
    does not fail the check.
    """
    path = config_path(args.config)
    errors = check_config_file(path, check_devices=not (args.no_devices or args.fresh_install or args.deck_reader))
    for err in errors:
        print(err, file=sys.stderr)
    if errors:
        return 2
    if args.deck_reader:
        print(load_config(path, check_devices=False).deck_reader)
        return 0
    if args.fresh_install:
        pending = check_config_file(path, check_devices=True)
        if not pending:
            return 0
        print(f"{path} is valid; not there yet:")
        for err in pending:
            print(f"- {err}")
        registry = [err for err in pending if getattr(err, "key", "") == "table.registry"]
        if len(registry) < len(pending):
            print("to do: reboot, so the boot config's SPI/I2C/UART settings make the device nodes")
        if registry:
            reader = load_config(path, check_devices=False).deck_reader
            print(f"to do: register the first deck: dealerbox deck register --reader {reader} --deck A")
    return 0


def journal_verify(args) -> int:
    """``dealerbox journal verify``: the operator's whole check, the chain and every event
    and decision against CONTRACT.md."""
    head = None
    if args.head:
        try:
            seq, digest = args.head.split(":", 1)
            head = (int(seq), digest)
        except ValueError:
            print(f"dealerbox journal verify: --head must be SEQ:HASH, not {args.head[:80]!r}", file=sys.stderr)
            return 2
    report = verify(args.directory, expected_head=head)
    if report.problems:
        first = report.problems[0]
        print(f"first line that cannot be vouched for: {first.file}:{first.line} ({first.kind})")
    for problem in report.problems:
        print(problem)
    for rec in report.damage:
        body = rec.body or {}
        print(f"note: {rec.file}:{rec.line}: the box found {body.get('count', '?')} damaged line(s) on "
              f"{body.get('found', '?')} and quarantined them (journal_damage, seq {rec.seq})")
    if report.torn:
        print(f"note: a torn last line was cut off: {report.torn}")
    if not report.ok:
        return 1
    print(f"journal ok: {report.lines} lines in {len(report.files)} file(s)")
    return 0


def publish(config: Path, journal: Path) -> int:
    """Run a table's publisher on its own, outside the daemon, until SIGTERM/SIGINT."""
    settings = load_table_floor(config)
    if not settings.enabled:
        print(f"dealerbox floor publish: {config}: [floor] enabled is not true; nothing to do",
              file=sys.stderr)
        return 2
    settings.identity.check()
    with Publisher(settings, journal):
        print(f"floor publisher: table {settings.table}, journal {journal}", file=sys.stderr, flush=True)
        wait_for_stop_signal()
    return 0
