"""The ``dealerbox`` command: the parser, and ``main`` calling the command's function.

The commands' bodies live beside their packages: the box's in
:mod:`dealerbox.service.commands`, the technician's in :mod:`dealerbox.tools.commands`,
the floor's in :mod:`dealerbox.floor.commands`. Each is imported when its command
runs, so a command never loads what only another needs (the simulator, Textual,
the floor's web view).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from dealerbox import __version__
from dealerbox.errors import DealerboxError, EventError, UsageError

BOX_COMMANDS = "dealerbox.service.commands"
TOOL_COMMANDS = "dealerbox.tools.commands"

CONFIG_HELP = ("table config (default: $DEALERBOX_CONFIG, else /etc/dealerbox/table.toml when it "
               "exists, else the shipped all-simulated table)")

EXIT_CODES = """exit status:
  0  done; a check found nothing wrong
  1  a check found something (journal verify, deck check, history on a damaged journal)
  2  bad input or usage: a bad option, file, config, event line or journal directory
"""


def _command(module: str, name: str):
    """The parser's ``func`` for a command: *module*'s function *name*, imported when the command runs."""
    def call(args) -> int:
        return getattr(importlib.import_module(module), name)(args)

    return call


class _VersionAction(argparse.Action):
    """``--version``: the version and where the shipped data was loaded from."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from dealerbox.domain.messages import MESSAGES_DIR
        from dealerbox.rules.profiles import RULES_DIR
        from dealerbox.service.commands import config_path
        from dealerbox.service.config import TABLES_DIR

        print(f"dealerbox {__version__}\n"
              f"profiles: {RULES_DIR}\n"
              f"messages: {MESSAGES_DIR}\n"
              f"tables:   {TABLES_DIR}\n"
              f"config:   {config_path()}")
        parser.exit()


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
    if args.floor_command == "layout":
        return commands.layout(args.config, args.layout_command, getattr(args, "table", None),
                               pit=getattr(args, "pit", None), row=getattr(args, "row", None),
                               col=getattr(args, "col", None))
    if args.floor_command == "deck":
        return commands.deck(args.config, args.deck_command, getattr(args, "name", None),
                             back=getattr(args, "back", None), count=getattr(args, "count", None),
                             source=getattr(args, "source", None), source_deck=getattr(args, "source_deck", None),
                             why=getattr(args, "why", None), witness=getattr(args, "witness", None),
                             hours=getattr(args, "hours", None), hands=getattr(args, "hands", None),
                             day=getattr(args, "day", None), html=getattr(args, "html", None),
                             csv=getattr(args, "csv", None), pdf=getattr(args, "pdf", None),
                             base_url=getattr(args, "base_url", None), table=getattr(args, "table", None),
                             language=getattr(args, "language", None))
    if args.floor_command == "badge":
        return commands.badge(args.config, args.badge_command, getattr(args, "uid", None),
                              getattr(args, "dealer", None), why=getattr(args, "why", None),
                              language=getattr(args, "language", None))
    if args.floor_command == "report":
        return commands.report(args.config, args.start, args.end, html=args.html, csv=args.csv, pdf=args.pdf,
                               base_url=args.base_url, language=args.language)
    if args.floor_command == "migrate":
        return commands.migrate(args.config, args.source, check=args.check)
    if args.floor_command == "bridge":
        return commands.bridge(args.bridge_command, getattr(args, "property", None), side=args.side,
                               tables=getattr(args, "tables", None), group_host=getattr(args, "group_host", None),
                               group_port=getattr(args, "group_port", 8883), broker_host=args.broker_host,
                               broker_port=args.broker_port, pki=args.pki, conf_dir=args.conf_dir)
    if args.floor_command == "broker-check":
        return commands.broker_check(host=args.host, port=args.port, pki=args.pki, cert=args.cert,
                                     blind_restart_s=args.bridge_blind_s, state=args.state,
                                     timeout=args.timeout, conf_dir=args.conf_dir,
                                     result=args.result)
    if args.floor_command == "protect":
        return commands.protect(args.config, args.protect_command, house=args.house, hands=args.hands,
                                seed=args.seed)
    return commands.verify(args.store if "://" in args.store else Path(args.store))


def _engine_options(sp) -> None:
    """The engine's options of ``replay`` and ``demo``."""
    sp.add_argument("--profile", default="tda-2019", help="rule profile name or file (default tda-2019)")
    sp.add_argument("--lang", default="en", choices=["en", "cs", "de", "sk"], help="display language")
    sp.add_argument("--registry", help="deck registry file (default: the built-in simulation registry)")


def _simulated_options(dp, what_the_hand_does: str) -> None:
    """``--simulated`` and ``--pace`` of the deck commands: a rehearsal without hardware."""
    dp.add_argument("--simulated", action="store_true",
                    help="a rehearsal without hardware: the reader is its chip's emulator, whatever the config "
                         f"says, and a simulated hand {what_the_hand_does}")
    dp.add_argument("--pace", type=float, default=0.25,
                    help="with --simulated: seconds the hand takes to reach for the next card (default 0.25)")


def _add_replay_commands(sub) -> None:
    """``replay`` and ``demo``: a recorded event file through the engine."""
    sp = sub.add_parser("replay", help="replay a CONTRACT.md event file; decisions as JSON Lines on stdout")
    sp.add_argument("events", help="the event file (JSON Lines)")
    _engine_options(sp)
    sp.set_defaults(func=_command(TOOL_COMMANDS, "replay"))

    sp = sub.add_parser("demo", help="replay the bundled demo session, shown as the panel would show it")
    sp.add_argument("events", nargs="?", help="another event file to show")
    sp.add_argument("--delay", type=float, default=0.0, help="seconds to pause after each decision")
    _engine_options(sp)
    sp.set_defaults(func=_command(TOOL_COMMANDS, "demo"))


def _add_box_commands(sub) -> None:
    """``run``, ``check-config`` and ``journal verify``: the box and its files."""
    sp = sub.add_parser("run", help="start the box (default config: see --config)")
    sp.add_argument("--config", help=CONFIG_HELP)
    sp.add_argument("--demo", action="store_true", help="a scripted dealer plays at the simulated table")
    sp.add_argument("--forever", action="store_true", help="with --demo: play on until stopped")
    sp.add_argument("--pace", type=float, default=0.25,
                    help="with --demo: seconds between the dealer's actions (a table of make floor's room keeps the room's pace)")
    sp.add_argument("--input", help="feed a CONTRACT.md event file as an extra source (resumes after a restart)")
    sp.add_argument("--input-pace", type=float, default=0.0, help="seconds between --input events")
    sp.add_argument("--decisions", action="store_true", help="print each decision as JSON on stdout")
    sp.add_argument("-v", "--verbose", action="store_true", help="log at debug level")
    sp.set_defaults(func=_command(BOX_COMMANDS, "run"))

    sp = sub.add_parser("check-config", help="validate a table config; prints nothing when it is valid")
    sp.add_argument("config", nargs="?", help=CONFIG_HELP)
    sp.add_argument("--no-devices", action="store_true", help="do not require the device nodes to exist")
    sp.add_argument("--fresh-install", action="store_true",
                    help="the file must be valid; a missing deck registry or device node is listed as left to do")
    sp.add_argument("--deck-reader", action="store_true",
                    help="print the name of the reader decks are registered on (the board's), as the installer asks")
    sp.set_defaults(func=_command(BOX_COMMANDS, "check_config"))

    sp = sub.add_parser("journal", help="journal tools")
    jsub = sp.add_subparsers(dest="journal_command", required=True, metavar="ACTION")
    jp = jsub.add_parser("verify", help="check the hash chain and every event and decision; name the first "
                                        "line that cannot be vouched for (exit 1 when one is found)")
    jp.add_argument("directory", help="the journal directory (state_dir/journal)")
    jp.add_argument("--head", help="SEQ:HASH of the journal's head recorded elsewhere: the end is checked too")
    jp.set_defaults(func=_command(BOX_COMMANDS, "journal_verify"))


def _add_deck_commands(sub) -> None:
    """``deck register`` and ``deck check``."""
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
    _simulated_options(dp, "shows each card asked for; the registry goes to the rehearsal file "
                           "(default: $XDG_STATE_HOME/dealerbox/rehearsal-decks.toml) unless --registry names one")
    dp.set_defaults(func=_command(TOOL_COMMANDS, "deck_register"))
    dp = dsub.add_parser("check", help="pass a deck over a reader; report missing, duplicate, foreign cards")
    dp.add_argument("--reader", required=True, help="the config's reader to read from")
    dp.add_argument("--deck", help="the deck to check (default: the active deck)")
    dp.add_argument("--quiet", type=float, default=3.0, help="seconds without a new card that end the check")
    dp.add_argument("--timeout", type=float, default=60.0,
                    help="seconds to wait for the first card before giving up (default 60)")
    dp.add_argument("--json", action="store_true", help="the report as JSON")
    dp.add_argument("--config", help=CONFIG_HELP)
    dp.add_argument("--registry", help="deck registry file (default: the config's)")
    _simulated_options(dp, "passes each card of the deck once (jokers left out); the registry is --registry, "
                           "else the rehearsal file when there is one, else the config's")
    dp.set_defaults(func=_command(TOOL_COMMANDS, "deck_check"))


def _add_badge_commands(sub) -> None:
    """``badge register``, ``badge list`` and ``badge remove``."""
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
    bp.set_defaults(func=_command(TOOL_COMMANDS, "badge_register"), simulated=False, pace=0.0)
    bp = bsub.add_parser("list", help="the dealers with a badge, and their badges' UIDs")
    bp.add_argument("--json", action="store_true", help="dealer id -> badge UIDs, as JSON")
    bp.add_argument("--config", help=CONFIG_HELP)
    bp.add_argument("--registry", help="badge registry file (default: the config's)")
    bp.set_defaults(func=_command(TOOL_COMMANDS, "badge_list"))
    bp = bsub.add_parser("remove", help="take a dealer's badges out of the registry")
    bp.add_argument("dealer", metavar="ID", help="the dealer's id")
    bp.add_argument("--config", help=CONFIG_HELP)
    bp.add_argument("--registry", help="badge registry file (default: the config's)")
    bp.set_defaults(func=_command(TOOL_COMMANDS, "badge_remove"))


def _add_history_command(sub) -> None:
    """``history``."""
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
    sp.set_defaults(func=_command(TOOL_COMMANDS, "history"))


def _add_commission_command(sub) -> None:
    """``commission``."""
    sp = sub.add_parser("commission", help="check the table's hardware device by device, in a terminal; the "
                                           "record is kept and reaches the floor (docs/TOOLS.md)")
    sp.add_argument("--config", help=CONFIG_HELP)
    sp.add_argument("--only", metavar="DEVICES",
                    help="a part: devices among lcd, leds, buttons, mouth, shoe, board, clock, state (comma-separated)")
    sp.add_argument("--report", action="store_true", help="print the last record and exit")
    sp.add_argument("--answers", choices=["yes", "no"],
                    help="the emulated run only: answer every question so, instead of asking in the terminal")
    sp.add_argument("--fault", action="append", metavar="FAULT",
                    help="the emulators only: a hardware fault to put on the simulated table (repeatable): "
                         "dead_tag, weak_antenna, bouncing_button, wrong_pin, stuck_mouth, silent_lcd, full_state_dir")
    sp.set_defaults(func=_command(TOOL_COMMANDS, "commission"))


def _add_sim_command(sub) -> None:
    """``sim``."""
    sp = sub.add_parser("sim", help="the simulated shoe: a terminal UI to test a table without dealing a game")
    sp.add_argument("--config", help=CONFIG_HELP + "; its shoe reader must be sim")
    sp.add_argument("--state-dir", help="the console's own state folder (default: the config's state_dir/sim)")
    sp.add_argument("--record", help="event file the session is written to (default: the state folder's session-<UTC>.jsonl)")
    sp.add_argument("--scenario", help="a scenario file (tests/scenarios/*.jsonl) to play step by step with the s key")
    sp.add_argument("--real", action="append", metavar="DEVICE",
                    help="drive a real device from the simulated shoe: lcd, panel or a reader's name (repeatable)")
    sp.set_defaults(func=_command(TOOL_COMMANDS, "sim"))


#: Where the floor's config lives on a floor server (systemd/install-floor.sh puts it there).
FLOOR_TOML = Path("/etc/dealerbox/floor.toml")


def _floor_config(parser, what: str) -> None:
    """``--config``: the floor.toml a floor command reads, *what* saying which of it."""
    parser.add_argument("--config", type=Path, default=FLOOR_TOML, help=f"{what} (default: %(default)s)")


def _add_floor_commands(sub) -> None:
    """``floor ...``: the collector, the web view, its users, the reports; a table's publisher."""
    sp = sub.add_parser("floor", help="floor reporting over MQTT v5 (docs/floor/README.md)")
    fsub = sp.add_subparsers(dest="floor_command", required=True)
    fp = fsub.add_parser("collect", help="the floor's collector: commit every table's journal")
    _floor_config(fp, "the collector's floor.toml")
    fp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("publish", help="stream a table's journal to the floor (outside the daemon)")
    fp.add_argument("--config", type=Path, required=True, help="the table config with a [floor] section")
    fp.add_argument("--journal", type=Path, required=True, help="the journal directory")
    fp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("web", help="the floor view on the web (sign-in, TLS): reads the collector's store")
    _floor_config(fp, "the floor's floor.toml, its [store] and [web]")
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
        _floor_config(up, "the floor's floor.toml (its [store])")
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
        _floor_config(dp, "the floor's floor.toml (its [store])")
        dp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("layout", help="where the tables stand in the room: the floor map's pits and places")
    lsub = fp.add_subparsers(dest="layout_command", required=True)
    for action, what in (("set", "put a table at a row and column of a pit (or move it)"),
                         ("remove", "take a table's place away: the map shows it with the unplaced tables"),
                         ("list", "every table's place, and the tables with none")):
        lp = lsub.add_parser(action, help=what)
        if action != "list":
            lp.add_argument("table", metavar="TABLE", help="the table's id, as on its certificate (T07)")
        if action == "set":
            lp.add_argument("--pit", required=True, help='the pit\'s name, as the map shows it ("Pit 2")')
            lp.add_argument("--row", type=int, required=True, help="the row in the pit, from 1 (the top)")
            lp.add_argument("--col", type=int, required=True, help="the column in the pit, from 1 (the left)")
        _floor_config(lp, "the floor's floor.toml (its [store])")
        lp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("deck", help="the room's decks, sent to every table: received, registered, retired, "
                                      "destroyed, and their card control log")
    ksub = fp.add_subparsers(dest="deck_command", required=True)
    for action, what in (("list", "every deck: its state, tags, hands dealt, hours in play"),
                         ("receive", "a deck delivered sealed, with the count in the seal"),
                         ("add", "register a deck's tags from a deck registry file (deck register's)"),
                         ("issue", "issue a deck to a table: the deck that table deals (moved from another)"),
                         ("retire", "take a deck out of play: its cards are foreign at every table"),
                         ("destroy", "a retired deck destroyed, with the witness's name"),
                         ("limit", "a deck's own limit of hours in play or hands (neither: the house's)"),
                         ("log", "the card control log of one deck, or of one day")):
        kp = ksub.add_parser(action, help=what)
        if action == "log":
            kp.add_argument("name", metavar="DECK", nargs="?", help="the deck (default: every deck, one day)")
            kp.add_argument("--day", help="the local day, YYYY-MM-DD (default: today)")
            kp.add_argument("--html", type=Path, help="write the log as an HTML file that prints well")
            kp.add_argument("--csv", type=Path, help="write one CSV line per step and per hand (default: to stdout)")
            kp.add_argument("--pdf", type=Path, help="write the log as a PDF")
            kp.add_argument("--base-url", help="the floor's address (https://floor.example): the files link to its pages")
        elif action != "list":
            kp.add_argument("name", metavar="DECK", help="the deck's name, as the tables know it")
        if action == "receive":
            kp.add_argument("--back", required=True, help="the colour of its back")
            kp.add_argument("--count", type=int, required=True, help="what the seal holds (cards, or decks of a box)")
        elif action == "add":
            kp.add_argument("--from", dest="source", type=Path, required=True,
                            help="a deck registry file (TOML, as dealerbox deck register writes it)")
            kp.add_argument("--deck", dest="source_deck", help="the deck's name in that file (default: DECK)")
            kp.add_argument("--back", help="the colour of its back (default: the file's)")
        elif action == "issue":
            kp.add_argument("--table", required=True, help="the table's id, as on its certificate (T02)")
            kp.add_argument("--witness", help="who witnessed the issue (another person; optional)")
        elif action == "retire":
            kp.add_argument("--why", required=True, help="why it leaves play (marked cards suspected, a card damaged)")
        elif action == "destroy":
            kp.add_argument("--witness", required=True, help="who witnessed the destruction (another person)")
        elif action == "limit":
            kp.add_argument("--hours", type=float, help="hours in play")
            kp.add_argument("--hands", type=int, help="hands dealt")
        kp.add_argument("--language", choices=["en", "cs", "de", "sk"],
                        help="what it says, and the log's files, in this language (default: the room's [web] language)")
        _floor_config(kp, "the floor's floor.toml (its [store])")
        kp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("badge", help="the room's badges, sent to every table: a dealer registered once signs in "
                                       "at every table; a revoked badge nowhere")
    gsub = fp.add_subparsers(dest="badge_command", required=True)
    for action, what in (("list", "every badge, its dealer, and whether it signs in"),
                         ("add", "register a dealer's badge for every table"),
                         ("revoke", "a badge that signs in nowhere any more")):
        gp = gsub.add_parser(action, help=what)
        if action != "list":
            gp.add_argument("uid", metavar="UID", help="the badge's tag UID in hex (08A1B2C3)")
        if action == "add":
            gp.add_argument("dealer", metavar="ID", help="the dealer's id: an employee number, never a name")
        elif action == "revoke":
            gp.add_argument("--why", required=True, help="why (the dealer left, the badge was lost)")
        gp.add_argument("--language", choices=["en", "cs", "de", "sk"],
                        help="what it says in this language (default: the room's [web] language)")
        _floor_config(gp, "the floor's floor.toml (its [store])")
        gp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("report", help="the shift report: every table and dealer, the alerts and who cleared them")
    _floor_config(fp, "the floor's floor.toml (its [store])")
    fp.add_argument("--from", dest="start", help="the shift's start: ISO 8601 with an offset, or epoch seconds "
                                                 "(default: 12 hours before --to)")
    fp.add_argument("--to", dest="end", help="the shift's end (default: now)")
    fp.add_argument("--html", type=Path, help="write the report as an HTML file that prints well")
    fp.add_argument("--csv", type=Path, help="write one CSV line per table, per dealer and for the room")
    fp.add_argument("--pdf", type=Path, help="write the report as a PDF")
    fp.add_argument("--base-url", help="the floor's address as its users open it (https://floor.example): "
                                       "the files' tables, dealers and alerts' hands link to its pages")
    fp.add_argument("--language", choices=["en", "cs", "de", "sk"],
                    help="the files' language: whoever asked for them reads it (default: the room's [web] language)")
    fp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("verify", help="check every table's chain in the collector's store")
    fp.add_argument("--store", required=True,
                    help="the collector's store: the SQLite file, or a postgresql:// URL")
    fp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("migrate", help="bring the store's schema up to date; --from: move an SQLite "
                                         "floor store into the (PostgreSQL) store of --config")
    _floor_config(fp, "the floor's floor.toml (its [store])")
    fp.add_argument("--from", dest="source", type=Path,
                    help="an SQLite floor store to copy into the configured store, which must be empty "
                         "(stop the collectors and web views first)")
    fp.add_argument("--check", action="store_true",
                    help="only say which schema revision the store is at and which is the newest "
                         "(exit 1 if it is behind)")
    fp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("protect", help="game protection: the shuffle check's references (docs/floor/surveillance.md)")
    psub = fp.add_subparsers(dest="protect_command", required=True)
    pp = psub.add_parser("fit", help="compute and store the references under the declared [protect] shuffle, "
                                     "or from the house's recorded fair hands (--house FROM TO)")
    _floor_config(pp, "the floor's floor.toml (its [store] and [protect])")
    pp.add_argument("--house", nargs=2, metavar=("FROM", "TO"),
                    help="fit from the hands started in this range (epoch seconds or ISO 8601 with an offset), "
                         "which the house trusts to be fair; also fits the room's error rate")
    pp.add_argument("--hands", type=int, help="hands dealt per game under the model ([protect] reference_hands)")
    pp.add_argument("--seed", type=int, help="the model's random seed (default: fresh)")
    pp.set_defaults(func=cmd_floor)
    _add_bridge_commands(fsub)


def _add_bridge_commands(fsub) -> None:
    """``floor bridge add|remove|list`` and ``floor broker-check`` (docs/floor/group.md, Bridges)."""
    fp = fsub.add_parser("bridge", help="a property's bridge to the group broker, on either side (docs/floor/group.md)")
    bsub = fp.add_subparsers(dest="bridge_command", required=True)
    for action, what in (("add", "give a property's bridge its rights (group side) or write it (property side)"),
                         ("remove", "take a property's bridge away (its rights, or its conf.d file)"),
                         ("list", "the bridges of this side")):
        bp = bsub.add_parser(action, help=what)
        if action != "list":
            bp.add_argument("property", help="the property's name (its bridge's CN is bridge-NAME)")
        bp.add_argument("--side", choices=["group", "property"], default="group",
                        help="group: the group broker's dynamic security (default); property: a conf.d file")
        if action == "add":
            bp.add_argument("--tables", nargs="+", metavar="TABLE", help="the property's tables (group side)")
            bp.add_argument("--group-host", help="the group broker's address (property side)")
            bp.add_argument("--group-port", type=int, default=8883, help="its port (default: %(default)s)")
        bp.add_argument("--broker-host", default="127.0.0.1", help="this group broker (default: %(default)s)")
        bp.add_argument("--broker-port", type=int, default=8883, help="its port (default: %(default)s)")
        bp.add_argument("--pki", type=Path, default=Path("/etc/mosquitto/dealerbox"),
                        help="the CA and floor-admin's (group) or the bridge's (property) certificate "
                             "(default: %(default)s)")
        bp.add_argument("--conf-dir", type=Path, default=Path("/etc/mosquitto/conf.d"),
                        help="mosquitto's conf.d (property side) (default: %(default)s)")
        bp.set_defaults(func=cmd_floor)
    fp = fsub.add_parser("broker-check", help="exit 1 unless this broker answers a TLS client's CONNECT in time "
                                              "(dealerbox-broker-check.timer)")
    fp.add_argument("--host", default="127.0.0.1", help="the broker (default: %(default)s)")
    fp.add_argument("--port", type=int, default=8883, help="its port (default: %(default)s)")
    fp.add_argument("--pki", type=Path, default=Path("/etc/mosquitto/dealerbox"),
                    help="where ca.crt and the client's certificate are (default: %(default)s)")
    fp.add_argument("--cert", default="floor-admin", help="the client certificate's name (default: %(default)s)")
    fp.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for the CONNACK (default: %(default)s)")
    fp.add_argument("--bridge-blind-s", type=float, default=0.0,
                    help="fail when a bridge of this broker has been down longer than this: a 2.0.11 bridge "
                         "can stop retrying (default: %(default)s, bridges not watched)")
    fp.add_argument("--state", type=Path, default=None,
                    help="where to keep when each bridge went down (needed with --bridge-blind-s)")
    fp.add_argument("--conf-dir", type=Path, default=Path("/etc/mosquitto/conf.d"),
                    help="mosquitto's conf.d, whose dealerbox-bridge-*.conf name this broker's own bridges, "
                         "the only ones watched (default: %(default)s)")
    fp.add_argument("--result", type=Path, default=None,
                    help="keep the result in this file, which the floor view's /metrics reads "
                         "(docs/floor/metrics.md)")
    fp.set_defaults(func=cmd_floor)


def build_parser() -> argparse.ArgumentParser:
    """The ``dealerbox`` command line: one subcommand each, ``func`` the function it calls."""
    p = argparse.ArgumentParser(prog="dealerbox", description="The controller of an RFID poker table.",
                                epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_VersionAction,
                   help="print the version and where profiles, messages and table configs are loaded from")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_replay_commands(sub)
    _add_box_commands(sub)
    _add_deck_commands(sub)
    _add_badge_commands(sub)
    _add_history_command(sub)
    _add_sim_command(sub)
    _add_commission_command(sub)
    _add_floor_commands(sub)
    return p


def main(argv=None) -> int:
    """Run ``dealerbox`` with *argv* (default: the process's arguments); return the exit status."""
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
