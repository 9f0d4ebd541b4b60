"""The ``dealerbox`` command."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

from dealerbox import __version__
from dealerbox.errors import DealerboxError, EventError, UsageError
from dealerbox.resources import demo_session, installed_config, user_state_dir

DEMO_SESSION = demo_session()
_GLYPH_TEXT = {"\x00": "\u2663", "\x01": "\u2666", "\x02": "\u2665", "\x03": "\u2660"}
_LED_TEXT = {"green": "\033[32m", "amber": "\033[33m", "red": "\033[31m"}


def _engine(args):
    from dealerbox.rules.engine import HandEngine
    from dealerbox.rules.profiles import load_profile
    from dealerbox.domain.decks import DeckRegistry

    registry = DeckRegistry.load(args.registry) if getattr(args, "registry", None) else None
    return HandEngine(load_profile(args.profile), registry)


def cmd_replay(args) -> int:
    from dealerbox.rules.engine import decision_to_dict
    from dealerbox.domain.messages import load_messages

    messages = load_messages(args.lang)
    engine = _engine(args)
    out = sys.stdout
    for event in _read_event_file(args.events):
        for d in engine.feed(event):
            out.write(json.dumps(decision_to_dict(d, messages), ensure_ascii=False) + "\n")
    return 0


def _read_event_file(path):
    """Events of a JSON Lines file, streamed; any problem is one :class:`EventError`
    naming the file, the line and the key (see :class:`dealerbox.domain.events.EventFile`)."""
    from dealerbox.domain.events import EventFile

    return iter(EventFile(path))


def glass_text(lines) -> list[str]:
    """LCD lines with the suit glyph slots shown as suit symbols, for a terminal."""
    return ["".join(_GLYPH_TEXT.get(ch, ch) for ch in line) for line in lines]


def draw_glass(lines, led: str | None, label: str, *, color: bool, out=None) -> None:
    """The LCD's lines in a frame, with the LED beside it (*led* is its colour, if lit)."""
    out = out or sys.stdout
    if color and led in _LED_TEXT:
        label = f"{_LED_TEXT[led]}\u25cf\033[0m {label}"
    cols = len(lines[0])
    out.write(f"+{'-' * cols}+  LED: {label}\n")
    for line in glass_text(lines):
        out.write(f"|{line}|\n")
    out.write(f"+{'-' * cols}+\n")
    out.flush()


def show_panel(view, *, color: bool, out=None) -> None:
    """A panel model frame, as the glass and the LEDs would show it."""
    label = view.led.upper() + (" (blinking)" if view.blink else "") + (" *beep*" if view.beep else "")
    draw_glass(view.lines, view.led, label, color=color, out=out)


def cmd_demo(args) -> int:
    """Replay the bundled demo session and show each decision as the panel would."""
    from dealerbox.domain.messages import load_messages
    from dealerbox.service.panel import render

    messages = load_messages(args.lang)
    engine = _engine(args)
    color = sys.stdout.isatty()
    previous = None
    hands = 0
    for event in _read_event_file(args.events or DEMO_SESSION):
        if event.ev == "new_hand":
            hands += 1
            print(f"\n=== hand {hands}: {event.players} players, {event.hole_cards} hole cards ===")
        dealer = engine.dealer
        decisions = engine.feed(event)
        if engine.dealer != dealer:
            print(f"t={event.t:7.2f}  dealer {engine.dealer} signs in" if engine.dealer else
                  f"t={event.t:7.2f}  dealer {dealer} signs out")
        if event.ev == "button" and event.name == "hand_over" and not decisions:
            print(f"t={event.t:7.2f}  hand over; the panel shows {engine.decision.verdict.upper()}")
        for d in decisions:
            print(f"t={d.t:7.2f}  {event.ev} {event.card or event.name or ''}".rstrip())
            show_panel(render(d, messages, previous=previous), color=color)
            if d.steps:
                for i, s in enumerate(d.steps):
                    mark = "->" if i == d.step else "  "
                    print(f"   {mark} {i + 1}. {messages.text(s)}")
            if d.rule:
                print(f"   rule: {d.rule}")
            previous = d
            if args.delay:
                time.sleep(args.delay)
    return 0


def _setup_logging(verbose: bool, quiet: bool = False) -> None:
    import logging

    # journald stamps each line itself; level and logger name are what it needs.
    level = logging.DEBUG if verbose else (logging.WARNING if quiet else logging.INFO)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr, force=True)
    # transitions logs every phase change at INFO: noise in journald.
    logging.getLogger("transitions").setLevel(logging.WARNING)


def _all_sim(config) -> bool:
    return not config.real_devices


def _any_sim(config) -> bool:
    return bool(config.simulated_devices)


class GlassPrinter:
    """Prints the emulated LCD's glass and the LED pins whenever either changes."""

    def __init__(self, table, daemon, out=sys.stdout):
        self.table, self.daemon, self.out = table, daemon, out
        self._last = None

    def frame(self):
        """(glass lines, lit LED colour or None, LED label) read off the emulated devices."""
        lit = [colour for colour, on in self.table.leds().items() if on]
        view = self.daemon.view
        if view is not None and view.blink:
            return tuple(self.table.glass()), "red", "RED (blinking)"
        return tuple(self.table.glass()), (lit[0] if lit else None), (", ".join(c.upper() for c in lit) or "off")

    def poll(self) -> None:
        frame = self.frame()
        if frame == self._last or not frame[0]:
            return
        self._last = frame
        glass, led, label = frame
        draw_glass(glass, led, label, color=self.out.isatty(), out=self.out)


def config_path(given=None) -> Path:
    """The table config a command uses: *given* (``--config``), else
    ``$DEALERBOX_CONFIG``, else ``/etc/dealerbox/table.toml`` when it exists (an
    installed box), else the shipped all-simulated table."""
    from dealerbox.service.config import DEFAULT_CONFIG

    return Path(given) if given else (installed_config() or DEFAULT_CONFIG)


def load_table_config(given=None, *, check_devices: bool = True):
    """Load the config :func:`config_path` names. (A shipped config's state goes where
    :func:`dealerbox.service.config.writable_state_dir` says: never among the shipped files.)"""
    from dealerbox.service.config import load_config

    return load_config(config_path(given), check_devices=check_devices)


def _require_rc522_driver(config, command: str) -> None:
    """Refuse in one line when the config has readers whose driver needs the ``pi``
    extra (the RC522's ``mfrc522``) and it is not installed: the box would otherwise
    run blind. Simulated readers are held to it too, so a demo runs the shipped driver."""
    from dealerbox.service.kinds import missing_drivers

    for kind, module in missing_drivers(config.readers.values()):
        raise UsageError(f"dealerbox {command}: the {kind.upper()} readers of {config.path.name} need the 'pi' extra "
                         f"(the {module} driver): pip install 'dealerbox[pi]'")


def cmd_run(args) -> int:
    """Start the box. With --demo, a scripted dealer plays at the simulated table."""
    import threading

    from dealerbox.service.daemon import Daemon, read_input_events

    _setup_logging(args.verbose, quiet=args.demo)
    config = load_table_config(args.config)
    if args.demo and not _all_sim(config):
        raise UsageError("dealerbox run --demo needs a config whose devices are all simulated")
    _require_rc522_driver(config, "run")
    input_events = None
    if args.input:
        input_events = read_input_events(args.input)
        # One streaming pass first: a bad line stops the start with one clear
        # line, not the running box half-way through the file.
        for _event in input_events:
            pass
    table = None
    if _any_sim(config):
        from hardware_sim.table import SimulatedTable

        table = SimulatedTable(config)
    clock = None
    if args.demo:
        # The scripted dealer moves event time itself and sends the ticks, so the
        # verdicts are the script's at any --pace (hardware_sim.script.TableDealer).
        from hardware_sim.script import VirtualClock

        clock = VirtualClock()
        input_events = []
    with table if table is not None else _nothing():
        daemon = Daemon(config, table=table, input_events=input_events, input_pace_s=args.input_pace,
                        on_decision=_print_decision if args.decisions else None,
                        **({"clock": clock} if clock is not None else {}))
        daemon.start()
        if args.demo:
            printer = GlassPrinter(table, daemon)
            stop = threading.Event()

            def show():
                while not stop.is_set():
                    printer.poll()
                    stop.wait(0.05)

            def deal():
                from hardware_sim.demo import play_demo

                def announce(hand, e):
                    print(f"\n=== demo hand {hand}: {e['players']} players ===", flush=True)

                try:
                    play_demo(table, daemon, clock, pace_s=args.pace, stop=stop, forever=args.forever,
                              on_new_hand=announce)
                    time.sleep(0.2)
                finally:
                    stop.set()
                    daemon.stop()

            threading.Thread(target=show, daemon=True).start()
            threading.Thread(target=deal, daemon=True).start()
        code = daemon.run()
        if args.demo:
            printer.poll()
            print(f"demo over: {daemon.stats.events} events journaled, {daemon.stats.decisions} decisions")
        return code


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _print_decision(d: dict) -> None:
    # One write per line: print() writes the newline separately, and a kill or
    # another thread could land between the two.
    sys.stdout.write(json.dumps(d, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def cmd_check_config(args) -> int:
    """Every error of the file, one a line; nothing at all when it is valid.

    With ``--fresh-install`` (what the installer runs) the file must be valid,
    but what only a finished setup provides, the deck registry and the device
    nodes that appear after the pending reboot, is listed as left to do and
    does not fail the check.
    """
    from dealerbox.service.config import check_config, load_config

    path = config_path(args.config)
    errors = check_config(path, check_devices=not (args.no_devices or args.fresh_install or args.deck_reader))
    for err in errors:
        print(err, file=sys.stderr)
    if errors:
        return 2
    if args.deck_reader:
        print(load_config(path, check_devices=False).deck_reader)
        return 0
    if args.fresh_install:
        pending = check_config(path, check_devices=True)
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


def cmd_journal_verify(args) -> int:
    """The operator's whole check: the chain, and every event and decision against CONTRACT.md."""
    from dealerbox.service.journal import verify

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


def _config_reader(args):
    """(config, table or None, reader, reopen) for the deck commands' --reader.

    *reopen* makes a fresh reader after a fault: readers never reconnect by themselves.
    The config is loaded without the device checks: the deck registry may not
    exist yet (``deck register`` creates it), and a missing device node is
    reported by the reader itself when it is opened.
    """
    from dealerbox.service.daemon import make_reader

    if args.simulated and not args.pace >= 0:
        raise UsageError(f"dealerbox deck: --pace is seconds between two cards, 0 or more, not {args.pace:g}")
    config = load_table_config(args.config, check_devices=False)
    if args.reader not in config.readers:
        raise UsageError(f"dealerbox deck: no reader {args.reader!r} in {config.path} "
                         f"(readers: {', '.join(config.readers)})")
    if args.simulated:
        # A rehearsal: this reader, whatever the file says, is its chip's emulator.
        rc = dataclasses.replace(config.readers[args.reader], backend="sim")
        config = dataclasses.replace(config, readers={**config.readers, args.reader: rc})
    from dealerbox.hw.buses import RealBuses, buses_for

    table = None
    if f"readers.{args.reader}" in config.simulated_devices:
        from hardware_sim.table import SimulatedTable

        table = SimulatedTable(config).__enter__()
    buses = buses_for(config, config.readers[args.reader].backend, key=f"readers.{args.reader}.backend",
                      sim_buses=table.buses if table is not None else None,
                      real_buses=RealBuses(config.gpio_factory))
    return config, table, make_reader(config, args.reader, buses=buses), _Reopener(config, args.reader, buses)


class _Reopener:
    """Makes a fresh reader after a fault (readers never reconnect by themselves); closes them all at the end."""

    def __init__(self, config, name: str, buses):
        self.config, self.name, self.buses = config, name, buses
        self.made: list = []

    def __call__(self):
        from dealerbox.service.daemon import make_reader

        reader = make_reader(self.config, self.name, buses=self.buses)
        self.made.append(reader)
        return reader

    def close(self) -> None:
        for reader in self.made:
            reader.close()


def _rehearsal_registry() -> Path:
    """Where ``deck register --simulated`` writes when no --registry is named: never the table's own registry."""
    return user_state_dir() / "rehearsal-decks.toml"


def _rehearsal_hand(args, config, table, registry_path):
    """The simulated hand of a ``--simulated`` deck command, or None; says what the rehearsal is."""
    if not args.simulated:
        return None
    from dealerbox.tools.deck_registration import RehearsalHand

    zone = config.readers[args.reader].zones[0]
    print(f"rehearsal: reader {args.reader!r} is its chip's emulator, and a simulated hand lays the cards "
          f"on its {zone} antenna; the registry is {registry_path}")
    return RehearsalHand(table, zone, pace_s=args.pace)


def cmd_deck_register(args) -> int:
    from dealerbox.tools.deck_registration import DeckTimeout, register_deck
    from dealerbox.domain.decks import DeckRegistry

    config, table, reader, reopen = _config_reader(args)
    path = args.registry or (None if config.registry_source.startswith("builtin:") else config.registry_source)
    if args.simulated and not args.registry:
        path = str(_rehearsal_registry())
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    if path is None:
        raise UsageError("dealerbox deck register: the config uses the built-in decks; name a --registry file")
    registry = DeckRegistry.load(path) if Path(path).exists() else DeckRegistry()
    hand = _rehearsal_hand(args, config, table, path)
    try:
        with reader:
            register_deck(reader, registry, args.deck, path, back=args.back, replace=args.replace,
                          activate=args.activate, timeout_s=args.timeout, reopen=reopen,
                          on_ask=hand.registering(args.deck) if hand is not None else None)
    except KeyboardInterrupt:
        return 130
    except DeckTimeout as exc:
        print(f"dealerbox deck register: {exc}", file=sys.stderr)
        return 1
    finally:
        if hand is not None:
            hand.close()
        reopen.close()
        if table is not None:
            table.close()
    return 0


def cmd_deck_check(args) -> int:
    from dealerbox.tools.deck_registration import check_deck_with_reader, exit_status, format_report
    from dealerbox.domain.cards import JOKER
    from dealerbox.domain.decks import DeckRegistry

    config, table, reader, reopen = _config_reader(args)
    source = args.registry
    if args.simulated and not source and _rehearsal_registry().exists():
        source = str(_rehearsal_registry())
    registry = DeckRegistry.load(source) if source else config.registry
    hand = _rehearsal_hand(args, config, table, source or config.registry_source)
    try:
        with reader:
            if registry is None:
                raise UsageError(f"dealerbox deck check: no deck registry at {config.registry_source}; register a "
                                 f"deck first: dealerbox deck register --reader {args.reader} --deck NAME")
            sleep = time.sleep
            if hand is not None:
                deck = args.deck or registry.active
                tags = [uid for uid, tag in registry.cards_of(deck).items()
                        if tag.card != JOKER] if registry.has_deck(deck or "") else []
                sleep = hand.passing(tags)
            report = check_deck_with_reader(reader, registry, args.deck, quiet_s=args.quiet,
                                            start_timeout_s=args.timeout, profile=config.profile, reopen=reopen,
                                            sleep=sleep)
    except KeyboardInterrupt:
        return 130
    finally:
        if hand is not None:
            hand.close()
        reopen.close()
        if table is not None:
            table.close()
    print(json.dumps(report.to_dict(), indent=2) if args.json else format_report(report, registry))
    return exit_status(report)


def _badge_file(args, config, action: str) -> str:
    """The badge registry file a ``badge`` command reads and writes: --registry, else the config's."""
    if args.registry:
        return args.registry
    if config.badge_source.startswith("builtin:"):
        raise UsageError(f"dealerbox badge {action}: the config uses the built-in badges; name a --registry file")
    return config.badge_source


def cmd_badge_register(args) -> int:
    from dealerbox.domain.badges import BadgeRegistry
    from dealerbox.tools.badge_registration import BadgeTimeout, register_badge

    config = load_table_config(args.config, check_devices=False)
    args.reader = args.reader or config.zone_readers().get("shoe")
    if args.reader not in config.readers:
        raise UsageError(f"dealerbox badge register: no reader {args.reader!r} in {config.path} "
                         f"(readers: {', '.join(config.readers)})")
    config, table, reader, reopen = _config_reader(args)
    try:
        path = _badge_file(args, config, "register")
        badges = BadgeRegistry.load(path) if Path(path).exists() else BadgeRegistry()
        zones = ("shoe",) if "shoe" in config.readers[args.reader].zones else None
        with reader:
            register_badge(reader, badges, args.dealer, path, decks=config.registry, replace=args.replace,
                           timeout_s=args.timeout, zones=zones, reopen=reopen)
    except KeyboardInterrupt:
        return 130
    except BadgeTimeout as exc:
        print(f"dealerbox badge register: {exc}", file=sys.stderr)
        return 1
    finally:
        reopen.close()
        if table is not None:
            table.close()
    return 0


def cmd_badge_list(args) -> int:
    from dealerbox.domain.badges import BadgeRegistry
    from dealerbox.tools.badge_registration import format_badges

    config = load_table_config(args.config, check_devices=False)
    if args.registry:
        badges, source = BadgeRegistry.load(args.registry), args.registry
    else:
        badges, source = config.badge_registry, config.badge_source
    if args.json:
        print(json.dumps({d: badges.badges_of(d) for d in badges.dealers}, indent=2))
    else:
        print(format_badges(badges, source))
    return 0


def cmd_badge_remove(args) -> int:
    from dealerbox.domain.badges import BadgeRegistry
    from dealerbox.tools.badge_registration import remove_badges

    config = load_table_config(args.config, check_devices=False)
    path = _badge_file(args, config, "remove")
    badges = BadgeRegistry.load(path) if Path(path).exists() else BadgeRegistry()
    gone = remove_badges(badges, args.dealer, path)
    print(f"dealer {args.dealer}: badge {', '.join(gone)} removed from {path}; it signs nobody in any more")
    return 0


def cmd_history(args) -> int:
    from dealerbox.tools.history import run_history
    from dealerbox.domain.decks import DeckRegistry

    config = load_table_config(args.config, check_devices=False)
    journal = args.journal or config.state_dir / "journal"
    registry = DeckRegistry.load(args.registry) if args.registry else config.registry
    return run_history(journal, profile=args.profile or config.profile, registry=registry,
                       lang=args.lang or config.language, hand=args.hand, since=args.since,
                       as_json=args.json)


def cmd_sim(args) -> int:
    """The simulated shoe: a terminal UI that deals at the simulated table."""
    try:
        from dealerbox.tools.console.app import no_terminal, run_console
    except ImportError as exc:
        raise UsageError(f"dealerbox sim needs Textual: pip install 'dealerbox[tui]' ({exc})") from exc
    refusal = no_terminal()
    if refusal:   # before anything is loaded or opened
        print(refusal, file=sys.stderr)
        return 2
    config = load_table_config(args.config)
    _require_rc522_driver(config, "sim")
    return run_console(config=config, record=args.record, scenario=args.scenario, real=args.real,
                       state_dir=args.state_dir)


class _VersionAction(argparse.Action):
    """``--version``: the version and where the shipped data was loaded from."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from dealerbox.domain.messages import MESSAGES_DIR
        from dealerbox.rules.profiles import RULES_DIR
        from dealerbox.service.config import TABLES_DIR

        print(f"dealerbox {__version__}\n"
              f"profiles: {RULES_DIR}\n"
              f"messages: {MESSAGES_DIR}\n"
              f"tables:   {TABLES_DIR}\n"
              f"config:   {config_path()}")
        parser.exit()


CONFIG_HELP = ("table config (default: $DEALERBOX_CONFIG, else /etc/dealerbox/table.toml when it "
               "exists, else the shipped all-simulated table)")


def cmd_floor(args) -> int:
    """Floor reporting: the collector, the view, a standalone publisher."""
    from dealerbox.floor import commands
    from dealerbox.service import commands as service_commands
    if args.floor_command == "collect":
        return commands.collect(args.config)
    if args.floor_command == "publish":
        return service_commands.publish(args.config, args.journal)
    if args.floor_command == "view":
        return commands.view(args.url, args.user, args.ca)
    if args.floor_command == "web":
        return commands.web(args.config)
    if args.floor_command == "user":
        return commands.user(args.config, args.user_command, getattr(args, "name", None),
                             getattr(args, "role", None))
    if args.floor_command == "dealer":
        return commands.dealer(args.config, args.dealer_command, getattr(args, "dealer", None),
                               getattr(args, "name", None))
    if args.floor_command == "report":
        return commands.report(args.config, args.start, args.end, html=args.html, csv=args.csv, pdf=args.pdf)
    if args.floor_command == "migrate":
        return commands.migrate(args.config, args.source, check=args.check)
    return commands.verify(args.store if "://" in args.store else Path(args.store))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dealerbox", description="The controller of an RFID poker table.",
                                epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_VersionAction,
                   help="print the version and where profiles, messages and table configs are loaded from")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def engine_opts(sp):
        sp.add_argument("--profile", default="tda-2019", help="rule profile name or file (default tda-2019)")
        sp.add_argument("--lang", default="en", choices=["en", "cs", "de", "sk"], help="display language")
        sp.add_argument("--registry", help="deck registry file (default: the built-in simulation registry)")

    sp = sub.add_parser("replay", help="replay a CONTRACT.md event file; decisions as JSON Lines on stdout")
    sp.add_argument("events", help="the event file (JSON Lines)")
    engine_opts(sp)
    sp.set_defaults(func=cmd_replay)

    sp = sub.add_parser("demo", help="replay the bundled demo session, shown as the panel would show it")
    sp.add_argument("events", nargs="?", help="another event file to show")
    sp.add_argument("--delay", type=float, default=0.0, help="seconds to pause after each decision")
    engine_opts(sp)
    sp.set_defaults(func=cmd_demo)

    sp = sub.add_parser("run", help="start the box (default config: see --config)")
    sp.add_argument("--config", help=CONFIG_HELP)
    sp.add_argument("--demo", action="store_true", help="a scripted dealer plays at the simulated table")
    sp.add_argument("--forever", action="store_true", help="with --demo: play on until stopped")
    sp.add_argument("--pace", type=float, default=0.25, help="with --demo: seconds between the dealer's actions")
    sp.add_argument("--input", help="feed a CONTRACT.md event file as an extra source (resumes after a restart)")
    sp.add_argument("--input-pace", type=float, default=0.0, help="seconds between --input events")
    sp.add_argument("--decisions", action="store_true", help="print each decision as JSON on stdout")
    sp.add_argument("-v", "--verbose", action="store_true", help="log at debug level")
    sp.set_defaults(func=cmd_run)

    sp = sub.add_parser("check-config", help="validate a table config; prints nothing when it is valid")
    sp.add_argument("config", nargs="?", help=CONFIG_HELP)
    sp.add_argument("--no-devices", action="store_true", help="do not require the device nodes to exist")
    sp.add_argument("--fresh-install", action="store_true",
                    help="the file must be valid; a missing deck registry or device node is listed as left to do")
    sp.add_argument("--deck-reader", action="store_true",
                    help="print the name of the reader decks are registered on (the board's), as the installer asks")
    sp.set_defaults(func=cmd_check_config)

    sp = sub.add_parser("journal", help="journal tools")
    jsub = sp.add_subparsers(dest="journal_command", required=True, metavar="ACTION")
    jp = jsub.add_parser("verify", help="check the hash chain and every event and decision; name the first "
                                        "line that cannot be vouched for (exit 1 when one is found)")
    jp.add_argument("directory", help="the journal directory (state_dir/journal)")
    jp.add_argument("--head", help="SEQ:HASH of the journal's head recorded elsewhere: the end is checked too")
    jp.set_defaults(func=cmd_journal_verify)

    def simulated_opts(dp, what_the_hand_does: str):
        dp.add_argument("--simulated", action="store_true",
                        help="a rehearsal without hardware: the reader is its chip's emulator, whatever the config "
                             f"says, and a simulated hand {what_the_hand_does}")
        dp.add_argument("--pace", type=float, default=0.25,
                        help="with --simulated: seconds the hand takes to reach for the next card (default 0.25)")

    sp = sub.add_parser("deck", help="register or check a deck on a reader")
    dsub = sp.add_subparsers(dest="deck_command", required=True, metavar="ACTION")
    dp = dsub.add_parser("register", help="pass a new deck over a reader, card by card")
    dp.add_argument("--reader", required=True, help="the config's reader to read from")
    dp.add_argument("--deck", required=True, help="the new deck's name")
    dp.add_argument("--back", default="", help="the deck's back (colour), for people")
    dp.add_argument("--replace", action="store_true", help="register a deck that exists again")
    dp.add_argument("--activate", action="store_true", help="make it the table's active deck")
    dp.add_argument("--config", help=CONFIG_HELP)
    dp.add_argument("--registry", help="registry file to write, created if missing (default: the config's)")
    dp.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for each card")
    simulated_opts(dp, "shows each card asked for; the registry goes to the rehearsal file "
                       "(default: $XDG_STATE_HOME/dealerbox/rehearsal-decks.toml) unless --registry names one")
    dp.set_defaults(func=cmd_deck_register)
    dp = dsub.add_parser("check", help="pass a deck over a reader; report missing, duplicate, foreign cards")
    dp.add_argument("--reader", required=True, help="the config's reader to read from")
    dp.add_argument("--deck", help="the deck to check (default: the active deck)")
    dp.add_argument("--quiet", type=float, default=3.0, help="seconds without a new card that end the check")
    dp.add_argument("--timeout", type=float, default=60.0,
                    help="seconds to wait for the first card before giving up (default 60)")
    dp.add_argument("--json", action="store_true", help="the report as JSON")
    dp.add_argument("--config", help=CONFIG_HELP)
    dp.add_argument("--registry", help="deck registry file (default: the config's)")
    simulated_opts(dp, "passes each card of the deck once (jokers left out); the registry is --registry, else "
                       "the rehearsal file when there is one, else the config's")
    dp.set_defaults(func=cmd_deck_check)

    sp = sub.add_parser("badge", help="register, list or remove the dealers' badges (held to the shoe to sign in)")
    bsub = sp.add_subparsers(dest="badge_command", required=True, metavar="ACTION")
    bp = bsub.add_parser("register", help="read a dealer's badge on the shoe reader")
    bp.add_argument("dealer", metavar="ID", help="the dealer's id: an employee number, never a name")
    bp.add_argument("--reader", help="the config's reader to read from (default: the one serving the shoe)")
    bp.add_argument("--replace", action="store_true", help="this badge instead of the dealer's old ones")
    bp.add_argument("--config", help=CONFIG_HELP)
    bp.add_argument("--registry", help="badge registry file to write, created if missing (default: the config's)")
    bp.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for the badge")
    # The shoe reader as the file has it: a badge is not rehearsed with a simulated hand.
    bp.set_defaults(func=cmd_badge_register, simulated=False, pace=0.0)
    bp = bsub.add_parser("list", help="the dealers with a badge, and their badges' UIDs")
    bp.add_argument("--json", action="store_true", help="dealer id -> badge UIDs, as JSON")
    bp.add_argument("--config", help=CONFIG_HELP)
    bp.add_argument("--registry", help="badge registry file (default: the config's)")
    bp.set_defaults(func=cmd_badge_list)
    bp = bsub.add_parser("remove", help="take a dealer's badges out of the registry")
    bp.add_argument("dealer", metavar="ID", help="the dealer's id")
    bp.add_argument("--config", help=CONFIG_HELP)
    bp.add_argument("--registry", help="badge registry file (default: the config's)")
    bp.set_defaults(func=cmd_badge_remove)

    sp = sub.add_parser("history", help="hands from the journal (its hash chain checked first)")
    which = sp.add_mutually_exclusive_group()
    which.add_argument("--hand", type=int, help="only hand N (1 = the oldest the journal keeps)")
    which.add_argument("--since", help="hands started since DATE (ISO date or datetime, UTC)")
    sp.add_argument("--json", action="store_true", help="the stable JSON form (history_version 1)")
    sp.add_argument("--journal", help="journal directory (default: the config's state_dir/journal)")
    sp.add_argument("--config", help=CONFIG_HELP)
    sp.add_argument("--profile", help="rule profile name or file (default: the config's)")
    sp.add_argument("--registry", help="deck registry file (default: the config's)")
    sp.add_argument("--lang", choices=["en", "cs", "de", "sk"], help="display language (default: the config's)")
    sp.set_defaults(func=cmd_history)

    sp = sub.add_parser("sim", help="the simulated shoe: a terminal UI to test a table without dealing a game")
    sp.add_argument("--config", help=CONFIG_HELP + "; its shoe reader must be sim")
    sp.add_argument("--state-dir", help="the console's own state folder (default: the config's state_dir/sim)")
    sp.add_argument("--record", help="event file the session is written to (default: the state folder's session-<UTC>.jsonl)")
    sp.add_argument("--scenario", help="a scenario file (tests/scenarios/*.jsonl) to play step by step with the s key")
    sp.add_argument("--real", action="append", metavar="DEVICE",
                    help="drive a real device from the simulated shoe: lcd, panel or a reader's name (repeatable)")
    sp.set_defaults(func=cmd_sim)

    sp = sub.add_parser("floor", help="floor reporting over MQTT v5 (docs/FLOOR.md)")
    fsub = sp.add_subparsers(dest="floor_command", required=True)
    fp = fsub.add_parser("collect", help="the floor's collector: commit every table's journal")
    fp.add_argument("--config", type=Path, default=Path("/etc/dealerbox/floor.toml"),
                    help="the collector's floor.toml (default: %(default)s)")
    fp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("publish", help="stream a table's journal to the floor (outside the daemon)")
    fp.add_argument("--config", type=Path, required=True, help="the table config with a [floor] section")
    fp.add_argument("--journal", type=Path, required=True, help="the journal directory")
    fp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("web", help="the floor view on the web (sign-in, TLS): reads the collector's store")
    fp.add_argument("--config", type=Path, default=Path("/etc/dealerbox/floor.toml"),
                    help="the floor's floor.toml, its [store] and [web] (default: %(default)s)")
    fp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("user", help="the web view's users: add, remove, passwd, list")
    usub = fp.add_subparsers(dest="user_command", required=True, metavar="ACTION")
    for action, text in (("add", "a new user; the password is asked for, or read from stdin"),
                         ("passwd", "a new password (asked for, or read from stdin); their sessions end"),
                         ("remove", "remove a user; their sessions end"), ("list", "every user and role")):
        up = usub.add_parser(action, help=text)
        if action != "list":
            up.add_argument("name", help="the user name")
        if action == "add":
            up.add_argument("--role", required=True, choices=["viewer", "supervisor", "admin"],
                            help="viewer: sees the floor; supervisor: also clears alerts; admin: also manages users")
        up.add_argument("--config", type=Path, default=Path("/etc/dealerbox/floor.toml"),
                        help="the floor's floor.toml (its [store]) (default: %(default)s)")
        up.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("view", help="the floor view in the terminal, signed in to the web view")
    fp.add_argument("--url", default="http://127.0.0.1:8080/", help="the web view (default: %(default)s)")
    fp.add_argument("--user", help="the user to sign in as (default: $DEALERBOX_FLOOR_USER, else your login "
                                   "name); the password comes from $DEALERBOX_FLOOR_PASSWORD or a prompt")
    fp.add_argument("--ca", type=Path, help="the casino CA certificate that signed the web view's "
                                            "(default: the system's trusted certificates)")
    fp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("dealer", help="dealers' names on the floor (tables know ids only)")
    dsub = fp.add_subparsers(dest="dealer_command", required=True)
    for action, what in (("add", "name a dealer (or rename)"), ("remove", "forget a dealer's name"),
                         ("list", "every dealer the floor has a name for")):
        dp = dsub.add_parser(action, help=what)
        if action != "list":
            dp.add_argument("dealer", metavar="ID", help="the dealer's id, as on the badge registry")
        if action == "add":
            dp.add_argument("name", help="the name supervisors and admins see")
        dp.add_argument("--config", type=Path, default=Path("/etc/dealerbox/floor.toml"),
                        help="the floor's floor.toml (its [store]) (default: %(default)s)")
        dp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("report", help="the shift report: every table and dealer, the alerts and who cleared them")
    fp.add_argument("--config", type=Path, default=Path("/etc/dealerbox/floor.toml"),
                    help="the floor's floor.toml (its [store]) (default: %(default)s)")
    fp.add_argument("--from", dest="start", help="the shift's start: ISO 8601 with an offset, or epoch seconds "
                                                 "(default: 12 hours before --to)")
    fp.add_argument("--to", dest="end", help="the shift's end (default: now)")
    fp.add_argument("--html", type=Path, help="write the report as an HTML file that prints well")
    fp.add_argument("--csv", type=Path, help="write one CSV line per table, per dealer and for the room")
    fp.add_argument("--pdf", type=Path, help="write the report as a PDF")
    fp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("verify", help="check every table's chain in the collector's store")
    fp.add_argument("--store", required=True,
                    help="the collector's store: the SQLite file, or a postgresql:// URL")
    fp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("migrate", help="bring the store's schema up to date; --from: move an SQLite "
                                         "floor store into the (PostgreSQL) store of --config")
    fp.add_argument("--config", type=Path, default=Path("/etc/dealerbox/floor.toml"),
                    help="the floor's floor.toml (its [store]) (default: %(default)s)")
    fp.add_argument("--from", dest="source", type=Path,
                    help="an SQLite floor store to copy into the configured store, which must be empty "
                         "(stop the collectors and web views first)")
    fp.add_argument("--check", action="store_true",
                    help="only say which schema revision the store is at and which is the newest "
                         "(exit 1 if it is behind)")
    fp.set_defaults(func=cmd_floor)
    return p


EXIT_CODES = """exit status:
  0  done; a check found nothing wrong
  1  a check found something (journal verify, deck check, history on a damaged journal)
  2  bad input or usage: a bad option, file, config, event line or journal directory
"""


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except EventError as exc:
        sys.stdout.flush()
        where = "" if exc.file else f"{getattr(args, 'events', None) or getattr(args, 'input', None) or ''}: "
        print(f"dealerbox {args.command}: {where}{exc}", file=sys.stderr)
        return 2
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    except DealerboxError as exc:
        print(f"dealerbox: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader (head, less) went away: not an error of ours.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
