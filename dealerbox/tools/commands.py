"""The technician's commands; ``dealerbox.cli`` parses and calls them.

``replay`` and ``demo`` (a recorded event file through the engine), ``deck``
and ``badge`` (registering on a reader, real or rehearsed), ``history`` (hands
from the journal), ``sim`` (the simulated shoe's console) and ``commission``
(the table's hardware checked device by device).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

from dealerbox.domain.badges import BadgeRegistry
from dealerbox.domain.cards import JOKER
from dealerbox.domain.decks import DeckRegistry, deck_back_refusal, deck_name_refusal
from dealerbox.domain.events import EventFile
from dealerbox.domain.messages import load_messages
from dealerbox.errors import UsageError
from dealerbox.resources import demo_session, user_state_dir
from dealerbox.rules.engine import HandEngine, decision_to_dict
from dealerbox.rules.profiles import load_profile
from dealerbox.service.registry_outbox import post_registry_event
from dealerbox.service.room_registry import RoomRegistry
from dealerbox.service.panel import render
from dealerbox.tools.glass import show_panel

# What only the commands at a table need (its config, its readers, the simulator,
# Textual) is imported in those commands: replay and demo start quickly.


def _engine(args) -> HandEngine:
    registry = DeckRegistry.load(args.registry) if getattr(args, "registry", None) else None
    return HandEngine(load_profile(args.profile), registry)


def replay(args) -> int:
    """``dealerbox replay``: the decisions of an event file, as JSON Lines on stdout.

    The events are streamed; any problem is one :class:`dealerbox.errors.EventError`
    naming the file, the line and the key (:class:`dealerbox.domain.events.EventFile`).
    """
    messages = load_messages(args.lang)
    engine = _engine(args)
    out = sys.stdout
    for event in EventFile(args.events):
        for d in engine.feed(event):
            out.write(json.dumps(decision_to_dict(d, messages), ensure_ascii=False) + "\n")
    return 0


def demo(args) -> int:
    """``dealerbox demo``: replay the bundled demo session (or *args.events*) and show each
    decision as the panel would."""
    messages = load_messages(args.lang)
    engine = _engine(args)
    color = sys.stdout.isatty()
    previous = None
    hands = 0
    for event in EventFile(args.events or demo_session()):
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


# --------------------------------------------------------------------------
# deck and badge: a reader of the config, real or rehearsed
# --------------------------------------------------------------------------

def _config_reader(args):
    """(config, table or None, reader, reopen) for the deck and badge commands' --reader.

    *reopen* makes a fresh reader after a fault: readers never reconnect by themselves.
    The config is loaded without the device checks: the deck registry may not
    exist yet (``deck register`` creates it), and a missing device node is
    reported by the reader itself when it is opened.
    """
    from dealerbox.hw.buses import RealBuses, buses_for
    from dealerbox.service.commands import load_table_config
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
    table = None
    if f"readers.{args.reader}" in config.simulated_devices:
        # Only a simulated reader loads the simulator.
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


def judged_decks(config, local: DeckRegistry | None) -> DeckRegistry | None:
    """The deck registry the box judges with: *local* (the table's file) and, at a table with
    a floor, the room's registry the box keeps on disk (:mod:`dealerbox.service.room_registry`).

    What the registration commands refuse a tag by and the deck check judges with, so that a
    tag of a deck registered at another table or on the floor is refused with what it is, and
    a deck the floor issued can be checked. None when there is no file and no room registry.
    """
    if not config.floor.enabled:
        return local
    room = RoomRegistry(config.state_dir, local, None)
    return room.decks() if room.floor is not None else local


def judged_badges(config) -> dict[str, str] | None:
    """The room's badges as the box judges them (badge UID -> dealer id, revoked ones mapped to
    :data:`~dealerbox.service.room_registry.REVOKED_BADGE`), at a table with a floor that has
    sent a registry; else None. ``badge register`` refuses another dealer's badge or a revoked one by it."""
    if not config.floor.enabled:
        return None
    room = RoomRegistry(config.state_dir, None, None)
    return room.badges() if room.floor is not None else None


def deck_register(args) -> int:
    """``dealerbox deck register``: pass a new deck over a reader, card by card."""
    from dealerbox.tools.deck_registration import DeckTimeout, deck_registered_fields, register_deck

    _check_deck_argument(args, "register")
    config, table, reader, reopen = _config_reader(args)
    path = args.registry or (None if config.registry_source.startswith("builtin:") else config.registry_source)
    if args.simulated and not args.registry:
        path = str(_rehearsal_registry())
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    if path is None:
        raise UsageError("dealerbox deck register: the config uses the built-in decks; name a --registry file")
    registry = DeckRegistry.load(path) if Path(path).exists() else DeckRegistry()
    # A rehearsal's simulated deck is nobody's business but the rehearsal file's.
    known = registry if args.simulated else judged_decks(config, registry)
    hand = _rehearsal_hand(args, config, table, path)
    try:
        with reader:
            new = register_deck(reader, registry, args.deck, path, back=args.back, replace=args.replace,
                                activate=args.activate, timeout_s=args.timeout, reopen=reopen,
                                on_ask=hand.registering(args.deck) if hand is not None else None, known=known)
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
    if not args.simulated:   # a rehearsal registers nothing for the room
        _tell_the_floor(config, "deck_registered", **deck_registered_fields(new, args.deck))
    return 0


def _check_deck_argument(args, action: str) -> None:
    """Refuse a --deck that is no deck name (and a --back the floor would refuse) before a file
    is read, a reader opened or a card asked for: the rules the floor holds too
    (:func:`~dealerbox.domain.decks.is_deck_name`)."""
    checks = [("--deck", deck_name_refusal(args.deck) if args.deck is not None else None)]
    if action == "register":
        checks.append(("--back", deck_back_refusal(args.back)))
    for option, refusal in checks:
        if refusal is not None:
            raise UsageError(f"dealerbox deck {action}: {option}: {refusal}; nothing was read or written")


def _tell_the_floor(config, ev: str, **fields) -> None:
    """Put a registration in the table's journal, box running or not (docs/TOOLS.md)."""
    print(f"dealerbox: {post_registry_event(config, ev, **fields)}", file=sys.stderr)


def deck_check(args) -> int:
    """``dealerbox deck check``: pass a deck over a reader; report missing, duplicate, foreign cards."""
    from dealerbox.tools.deck_registration import (check_deck_with_reader, deck_checked_fields, exit_status,
                                                   format_report)

    _check_deck_argument(args, "check")
    config, table, reader, reopen = _config_reader(args)
    source = args.registry
    if args.simulated and not source and _rehearsal_registry().exists():
        source = str(_rehearsal_registry())
    # A file named (or the rehearsal's) is judged alone; the table's own with the room's registry.
    registry = DeckRegistry.load(source) if source else judged_decks(config, config.registry)
    hand = _rehearsal_hand(args, config, table, source or config.registry_source)
    try:
        with reader:
            if registry is None or not registry.decks:
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
    if not args.simulated:
        _tell_the_floor(config, "deck_checked", **deck_checked_fields(report))
    return exit_status(report)


def _badge_file(args, config, action: str) -> str:
    """The badge registry file a ``badge`` command reads and writes: --registry, else the config's."""
    if args.registry:
        return args.registry
    if config.badge_source.startswith("builtin:"):
        raise UsageError(f"dealerbox badge {action}: the config uses the built-in badges; name a --registry file")
    return config.badge_source


def badge_register(args) -> int:
    """``dealerbox badge register``: read a dealer's badge on the shoe reader."""
    from dealerbox.service.commands import load_table_config
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
            new = register_badge(reader, badges, args.dealer, path, decks=judged_decks(config, config.registry),
                                 room=judged_badges(config),
                                 replace=args.replace, timeout_s=args.timeout, zones=zones, reopen=reopen)
        for uid in sorted(set(new.badges_of(args.dealer)) - set(badges.badges_of(args.dealer))):
            _tell_the_floor(config, "badge_registered", uid=uid, dealer=args.dealer)
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


def badge_list(args) -> int:
    """``dealerbox badge list``: the dealers with a badge, and their badges' UIDs."""
    from dealerbox.service.commands import load_table_config
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


def badge_remove(args) -> int:
    """``dealerbox badge remove``: take a dealer's badges out of the registry."""
    from dealerbox.service.commands import load_table_config
    from dealerbox.tools.badge_registration import remove_badges

    config = load_table_config(args.config, check_devices=False)
    path = _badge_file(args, config, "remove")
    badges = BadgeRegistry.load(path) if Path(path).exists() else BadgeRegistry()
    gone = remove_badges(badges, args.dealer, path)
    print(f"dealer {args.dealer}: badge {', '.join(gone)} removed from {path}; it signs nobody in any more")
    return 0


def history(args) -> int:
    """``dealerbox history``: hands from the journal, its hash chain checked first."""
    from dealerbox.service.commands import load_table_config
    from dealerbox.tools.history import run_history

    config = load_table_config(args.config, check_devices=False)
    journal = args.journal or config.state_dir / "journal"
    registry = DeckRegistry.load(args.registry) if args.registry else config.registry
    return run_history(journal, profile=args.profile or config.profile, registry=registry,
                       lang=args.lang or config.language, hand=args.hand, since=args.since,
                       as_json=args.json)


def sim(args) -> int:
    """``dealerbox sim``: the simulated shoe, a terminal UI that deals at the simulated table."""
    try:
        # Textual is an extra (tui).
        from dealerbox.tools.console.app import no_terminal, run_console
    except ImportError as exc:
        raise UsageError(f"dealerbox sim needs Textual: pip install 'dealerbox[tui]' ({exc})") from exc
    refusal = no_terminal()
    if refusal:   # before anything is loaded or opened
        print(refusal, file=sys.stderr)
        return 2
    from dealerbox.service.commands import load_table_config, require_rc522_driver

    config = load_table_config(args.config)
    require_rc522_driver(config, "sim")
    return run_console(config=config, record=args.record, scenario=args.scenario, real=args.real,
                       state_dir=args.state_dir)


def commission(args) -> int:
    """``dealerbox commission``: the table's hardware checked device by device (docs/TOOLS.md)."""
    from dealerbox.tools.commission import commission_command

    return commission_command(args, emulated_bench=emulated_commission_bench)


def emulated_commission_bench(config, technician, faults, clock_synchronised, stack):
    """The commissioning bench of a config with simulated devices: its simulated table, with the
    faults named (:data:`hardware_sim.noise.TABLE_FAULTS`), and an emulated dealer's hands."""
    from hardware_sim.noise import TableFaults
    from hardware_sim.table import SimulatedTable
    from dealerbox.tools.commission_bench import Bench, StateDisk
    from dealerbox.tools.commission_emulation import EmulatedHands

    try:
        table_faults = TableFaults(faults)
        table = stack.enter_context(SimulatedTable(config))
        table_faults.apply(table)
    except ValueError as exc:
        raise UsageError(f"dealerbox commission: --fault: {exc}") from exc
    technician.say(f"the simulated devices ({', '.join(config.simulated_devices)}) are their chip emulators; "
                   "an emulated dealer draws, lays and presses" + (f"; faults: {', '.join(faults)}" if faults
                                                                      else ""))
    return Bench(config, technician, EmulatedHands(table, table_faults), clock_synchronised, table=table,
                 disk=table_faults.disk() or StateDisk())
