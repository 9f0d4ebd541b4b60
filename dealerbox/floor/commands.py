"""What ``dealerbox floor ...`` runs (cli.py only parses and calls these)."""

from __future__ import annotations

import getpass
import logging
import os
import pwd
import sys
import time
from pathlib import Path

from dealerbox.errors import FloorError
from dealerbox.signals import catch_stop_signals, wait_for_stop_signal

log = logging.getLogger(__name__)


def collect(config: Path, *, ready=None) -> int:
    """Run the collector until SIGTERM/SIGINT (the web view is ``floor web``, a process of its own)."""
    # Before the imports and the broker: a stop while the collector starts ends it cleanly.
    stop = catch_stop_signals()
    from dealerbox.floor.collecting.collector import Collector
    from dealerbox.floor.protect.decks import collector_protection
    from dealerbox.floor.operating.settings import load_collector
    from dealerbox.floor.operating.security_log import install as install_security_log
    from dealerbox.floor.store import Store

    install_security_log()  # a hostile table refused: in the journal (docs/floor/security.md)
    settings = load_collector(config)
    settings.identity.check()
    with Store(settings.store) as store:
        collector = Collector(settings.identity, store, limits=settings.limits,
                              bridge_blind_s=settings.bridge_blind_s,
                              protection=collector_protection(settings, store),
                              registry_limits=settings.registry,
                              publish_registry=settings.registry_publish)
        with collector:
            print(f"floor collector: store {store.url}", file=sys.stderr, flush=True)
            wait_for_stop_signal(collector.failed, stop=stop)
    if collector.failed.is_set():
        print(f"floor collector: {collector.failure}", file=sys.stderr, flush=True)
        return 1
    return 0


def _floor_extra(module: str = "web"):
    """``dealerbox.floor.<module>``, or one line saying which extra to install."""
    import importlib
    try:
        return importlib.import_module(f"{__package__}.{module}")
    except ImportError as exc:
        raise FloorError(f"the floor web view needs the 'floor' extra ({exc.name} is missing): "
                         "pip install 'dealerbox[floor]'") from None


def web(config: Path) -> int:
    """Serve the floor view until SIGTERM/SIGINT."""
    serve = _floor_extra().serve  # its settings need the extra too: first, to say so in one line
    from dealerbox.floor.operating.settings import load_web
    settings = load_web(config)
    if settings.tls:
        for what, path in (("cert", settings.cert), ("key", settings.key)):
            _readable(settings.config, f"web.{what}", path)
    setup_logging()
    from dealerbox.floor.operating.security_log import install as install_security_log
    install_security_log()  # sign-ins, clears, user changes: in the journal (docs/floor/security.md)
    store = _shown(settings.store)
    return serve(settings, ready=lambda url: print(f"floor web: store {store}, view {url}",
                                                   file=sys.stderr, flush=True))


#: Libraries whose INFO lines say nothing an operator acts on (alembic's seven at every start).
QUIET_LIBRARIES = ("alembic", "sqlalchemy", "hypercorn.error", "httpx", "paho")


def setup_logging(verbose: bool = False) -> None:
    """The floor's log on stderr (journald stamps each line): INFO of dealerbox's own,
    WARNING and up of the libraries in :data:`QUIET_LIBRARIES` unless *verbose*."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    for name in QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(logging.INFO if verbose else logging.WARNING)


def command_line_user() -> str:
    """Who runs this command, for the audit and the witness check: the process's effective
    user, never ``$USER`` or ``$LOGNAME`` (the caller sets those to anything)."""
    return pwd.getpwuid(os.geteuid()).pw_name


def _readable(config: Path, key: str, path: Path) -> None:
    """Refuse in one line a file the floor must read and cannot, naming it and the fix."""
    try:
        with open(path, "rb") as fh:
            fh.read(1)
    except FileNotFoundError:
        raise FloorError(f"{config}: {key} = {str(path)!r}: no such file") from None
    except PermissionError:
        user = command_line_user()
        raise FloorError(f"{config}: {key} = {str(path)!r}: {user} cannot read it (permission denied): give it "
                         f"to the group {user} (chgrp {user} FILE; chmod 0640 FILE) in a folder {user} may enter, "
                         "or run install-floor.sh --web-name NAME, which puts the view's certificate and key in "
                         "/etc/dealerbox/floor/ so") from None
    except IsADirectoryError:
        raise FloorError(f"{config}: {key} = {str(path)!r}: a folder, not a file") from None


def _new_password(name: str) -> str:
    """From a prompt (twice) on a terminal, else the first line of stdin; never argv."""
    if sys.stdin.isatty():
        first = getpass.getpass(f"password for {name}: ")
        if getpass.getpass("again: ") != first:
            raise FloorError("the two passwords differ")
        return first
    line = sys.stdin.readline()
    return line[:-1] if line.endswith("\n") else line


def user(config: Path, action: str, name: str | None = None, role: str | None = None) -> int:
    """``floor user add|remove|passwd|list``: the web view's users, in the store."""
    _floor_extra("operating.accounts")  # argon2-cffi, or one line saying what to install
    from dealerbox.floor.operating.accounts import AccountError, Accounts, check_name, check_role
    from dealerbox.floor.operating.security_log import install as install_security_log
    from dealerbox.floor.operating.settings import load_web
    from dealerbox.floor.store import Store

    settings = load_web(config)
    install_security_log()  # a user added, removed or given a new password: in the journal (docs/floor/security.md)
    by = f"{command_line_user()} (command line)"
    with Store(settings.store) as store:
        accounts = Accounts(store)
        try:
            if action == "list":
                for u in accounts.list():
                    since = time.strftime("%Y-%m-%d %H:%M", time.localtime(u["changed"]))
                    print(f"{u['name']}\t{u['role']}\tpassword set {since}\t{u['sessions']} session(s)")
            elif action == "add":
                check_name(name), check_role(role)
                if store.user(name) is not None:
                    raise AccountError(f"user {name!r} exists already (remove it first, or passwd)")
                accounts.add(name, role, _new_password(name), by=by)
                print(f"added {name} ({role})", file=sys.stderr)
            elif action == "passwd":
                if store.user(name) is None:
                    raise AccountError(f"no user {name!r}")
                accounts.passwd(name, _new_password(name), by=by)
                print(f"new password for {name}; their sessions ended", file=sys.stderr)
            elif action == "remove":
                accounts.remove(name, by=by)
                print(f"removed {name}; their sessions ended", file=sys.stderr)
        except AccountError as exc:
            print(f"dealerbox floor user {action}: {exc}", file=sys.stderr)
            return 2
    return 0


def view(url: str, user_name: str | None = None, cafile: Path | None = None) -> int:
    """The Textual floor view, signed in to the web view."""
    from dealerbox.floor.terminal.view import run_view
    return run_view(url, user_name, cafile)


def verify(store_target: Path | str) -> int:
    """Check every table's stored chain (an SQLite store's path, or a PostgreSQL URL);
    exit 1 if a problem is found."""
    from dealerbox.floor.store import Store

    bad = 0
    with Store(store_target) as store:
        for row in store.tables():
            problems = store.verify(row["table_id"])
            for p in problems:
                print(f"{row['table_id']}: {p}")
            bad += bool(problems)
            if not problems:
                print(f"{row['table_id']}: {row['last_seq']} lines, chain ok")
    return 1 if bad else 0


def report(config: Path, start: str | None, end: str | None, *, html: Path | None = None,
           csv: Path | None = None, pdf: Path | None = None, base_url: str | None = None,
           language: str | None = None) -> int:
    """``floor report``: the shift report of ``[start, end)`` from the store; a summary on
    stdout, and the files asked for, their alerts worded as the floor map words them, in
    *language* (whoever asks; default: the room's ``[web] language``) and, with *base_url*,
    linked to the floor's pages."""
    from dealerbox.floor.telling import figures as F
    from dealerbox.floor.telling import report as R
    from dealerbox.floor.telling.clock import FloorClock
    from dealerbox.floor.operating.settings import load_web
    from dealerbox.floor.store import Store, store_engine
    from dealerbox.floor.telling.floor_words import FloorWords
    from dealerbox.floor.telling.language import Language

    def moment(name: str, text: str) -> float:
        try:
            return F.parse_moment(text)
        except ValueError as exc:
            raise FloorError(f"--{name} {text!r}: {exc}") from None

    stop = moment("to", end) if end else time.time()
    begin = moment("from", start) if start else stop - 12 * 3600
    settings = load_web(config)
    clock = FloorClock(settings.time_zone, settings.shift_starts)
    if begin >= stop:
        raise FloorError(f"--from must be before --to ({R.stamp(begin, clock)} is not before "
                         f"{R.stamp(stop, clock)})")
    engine = store_engine(settings.store)
    try:
        F.Ledger().catch_up(engine)
        with Store(settings.store) as store, engine.connect() as conn:
            shift = R.shift_report(conn, store.alerts_raised(begin, stop), begin, stop)
            names = store.dealer_names()  # the floor server's admin runs this: names shown
    finally:
        engine.dispose()
    room = shift["room"]
    # The summary and the files in the language of whoever asked for them (--language), else the room's.
    reader = Language(language or settings.language, clock)
    forms, _ = reader.forms, reader.gettext
    rate = room["irregularities_per_100_hands"]
    print(_("shift %(start)s to %(end)s: %(tables)s tables, %(dealers)s dealers, %(hands)s hands, "
            "%(rate)s irregularities per 100 hands; alerts: %(open)s open, %(cleared)s cleared") % {
        "start": forms.stamp(begin), "end": forms.stamp(stop), "tables": forms.integer(len(shift["tables"])),
        "dealers": forms.integer(sum(1 for d in shift["dealers"] if d["dealer"] is not None)),
        "hands": forms.integer(room["hands"]), "rate": "–" if rate is None else forms.decimal(rate),
        "open": forms.integer(len(shift["alerts_open"])), "cleared": forms.integer(len(shift["alerts_cleared"]))})
    words = FloorWords(reader).first_headline
    base = base_url.rstrip("/") if base_url else None
    for path, text in ((html, lambda: R.report_html(shift, names, clock, base, words, reader)),
                       (csv, lambda: R.report_csv(shift))):
        if path is not None:
            path.write_text(text(), encoding="utf-8")
            print(_("wrote %(path)s") % {"path": path})
    if pdf is not None:
        pdf.write_bytes(R.report_pdf(shift, names, clock, base, words, reader))
        print(_("wrote %(path)s") % {"path": pdf})
    return 0


def migrate(config: Path, source: Path | None = None, *, check: bool = False) -> int:
    """``floor migrate``: bring the configured store's schema to the newest revision (the
    collector and the web view do it too, as they start); ``--from`` moves an SQLite floor
    store into it; ``--check`` only says where it stands (exit 1 when behind)."""
    from dealerbox.floor.migrations import current, head
    from dealerbox.floor.operating.move import move_store
    from dealerbox.floor.operating.settings import load_web
    from dealerbox.floor.store import Store, store_engine

    settings = load_web(config)
    if check:
        engine = store_engine(settings.store)
        try:
            at, newest = current(engine), head()
        finally:
            engine.dispose()
        print(f"store {_shown(settings.store)}: schema revision {at or 'none'}, the newest is {newest}")
        return 0 if at == newest else 1
    if source is not None and not source.is_file():
        raise FloorError(f"dealerbox floor migrate --from {source}: no such SQLite store")
    with Store(settings.store) as target:
        if source is None:
            print(f"store {target.url}: schema at revision {current(target.engine)} (the newest)")
            return 0
        with Store(source) as origin:
            moved = move_store(origin, target)
    rows = ", ".join(f"{n} {name}" for name, n in moved.rows.items())
    print(f"moved {source} into {target.url}: {rows}; {moved.tables_verified} tables' chains read "
          f"as in the source; the figures filed {moved.lines_filed} lines")
    return 0


def _shown(store) -> str:
    from dealerbox.floor.store import describe_target
    return describe_target(store)


#: A dealer's name as the floor shows it: printable, one line, not too long.
DEALER_NAME_MAX = 80


def dealer(config: Path, action: str, dealer_id: str | None = None, name: str | None = None) -> int:
    """``floor dealer add|remove|list``: dealers' names, kept on the floor server only."""
    from dealerbox.errors import RegistryError
    from dealerbox.domain.badges import check_dealer_id
    from dealerbox.floor.operating.settings import load_web
    from dealerbox.floor.store import Store

    settings = load_web(config)
    with Store(settings.store) as store:
        if action == "list":
            for ident, shown in store.dealer_names().items():
                print(f"{ident}\t{shown}")
            return 0
        try:
            check_dealer_id(dealer_id)
        except RegistryError as exc:
            raise FloorError(f"dealerbox floor dealer {action}: {exc}") from None
        if action == "add":
            name = (name or "").strip()
            if not name or len(name) > DEALER_NAME_MAX or not name.isprintable():
                raise FloorError(f"dealerbox floor dealer add: a name is 1 to {DEALER_NAME_MAX} printable "
                                 f"characters on one line, not {name!r}")
            store.set_dealer_name(dealer_id, name, time.time())
            print(f"dealer {dealer_id} is {name} on the floor (supervisors and admins see the name)",
                  file=sys.stderr)
        elif not store.remove_dealer_name(dealer_id):
            raise FloorError(f"dealerbox floor dealer remove: no name for dealer {dealer_id}")
        else:
            print(f"dealer {dealer_id} has no name on the floor any more", file=sys.stderr)
    return 0


def protect(config: Path, action: str, *, house: tuple[str, str] | None = None, hands: int | None = None,
            seed: int | None = None) -> int:
    """``floor protect fit``: the shuffle check's references (and, from house hands, the room's
    error rate) computed and kept in the store: under the declared ``[protect]`` model, or
    from the house's recorded fair hands started between *house*'s two moments."""
    import random

    from dealerbox.floor.telling.figures import parse_moment
    from dealerbox.floor.protect.budget import budget_lines
    from dealerbox.floor.protect.fit import fit_house, fit_model
    from dealerbox.floor.protect.floor_pass import room_budget
    from dealerbox.floor.operating.settings import load_protect, load_web
    from dealerbox.floor.store import Store, store_engine

    if action != "fit":
        raise FloorError(f"dealerbox floor protect: no action {action!r} (fit)")
    settings, config = load_web(config), load_protect(config)

    def report(players, hole_cards, reference):
        print(f"{players} players, {hole_cards} hole cards: {reference.n} hands ({reference.source}); "
              f"p-value resolution {reference.resolution:.2g}; the threshold {config.threshold:g} is reached "
              f"from {reference.critical(config.threshold)} kept pairs", flush=True)
    moments = None
    if house is not None:
        moments = []
        for name, text in zip(("--from", "--to"), house):
            try:
                moments.append(parse_moment(text))
            except ValueError as exc:
                raise FloorError(f"dealerbox floor protect fit --house {name}={text}: {exc}") from None
    with Store(settings.store):
        engine = store_engine(settings.store)
        try:
            with engine.begin() as conn:
                if moments is None:
                    fit_model(conn, config, random.Random(seed), hands=hands, report=report)
                else:
                    fitted = fit_house(conn, config, moments[0], moments[1], report=report)
                    print(f"room rate: {fitted['room_rate']:.4g} of {fitted['hands']} hands had an error")
                print("\n".join(budget_lines(room_budget(conn, config))), flush=True)
        finally:
            engine.dispose()
    return 0


def bridge(action: str, property_name: str | None = None, *, side: str = "group",
           tables: list[str] | None = None, group_host: str | None = None, group_port: int = 8883,
           broker_host: str = "127.0.0.1", broker_port: int = 8883, pki: Path | None = None,
           conf_dir: Path | None = None) -> int:
    """``floor bridge add|remove|list``: a property's bridge on the group broker (``--side group``:
    its identity and rights, in the dynamic security plugin's file) or on the property's own
    (``--side property``: its conf.d file). docs/floor/group.md, Bridges."""
    from dealerbox.floor.operating import bridges as B
    pki = pki or B.PKI_DIR
    conf_dir = conf_dir or B.CONF_DIR
    group = B.GroupBroker(broker_host, broker_port, pki)
    if action == "list":
        found = B.granted(group) if side == "group" else B.property_bridges(conf_dir)
        for name, what in found.items():
            print(f"{name}\t{' '.join(what) if side == 'group' else what}")
        if not found:
            print(f"no bridges on the {side} side", file=sys.stderr)
        return 0
    if action == "add" and side == "group":
        acls = B.grant(group, property_name, tables or [])
        print(f"{B.bridge_name(property_name)} may now publish for {', '.join(tables)} on the group broker "
              f"({len(acls)} rights; kept across upgrades)", file=sys.stderr)
    elif action == "add":
        if not group_host:
            raise FloorError("floor bridge add --side property needs --group-host (the group broker's address)")
        path = B.write_property_side(property_name, group_host, group_port, conf_dir=conf_dir, pki=pki)
        print(f"wrote {path}; now restart mosquitto (systemctl restart mosquitto)", file=sys.stderr)
    elif side == "group":
        done = B.revoke(group, property_name)
        print(f"{B.bridge_name(property_name)}: " + ("its rights are gone and its session ended" if done
                                                     else "had no rights on the group broker"), file=sys.stderr)
    else:
        done = B.remove_property_side(property_name, conf_dir=conf_dir)
        print(f"{B.conf_path(property_name, conf_dir)}: " + ("removed; now restart mosquitto" if done
                                                             else "there was none"), file=sys.stderr)
    return 0


def broker_check(*, host: str, port: int, pki: Path, cert: str, timeout: float,
                 blind_restart_s: float = 0.0, state: Path | None = None,
                 conf_dir: Path | None = None, result: Path | None = None) -> int:
    """``floor broker-check``: exit 0 when a fresh TLS client got its CONNACK within *timeout*
    seconds and none of this broker's own bridges (``floor bridge add --side property``'s
    files in *conf_dir*) has been down longer than *blind_restart_s* (0: bridges not
    watched); 1, and one line saying why, when not (dealerbox-broker-check.service restarts
    mosquitto then). With *result*, the result is kept there for the floor view's metrics."""
    from dealerbox.floor.operating.bridges import CONF_DIR, property_bridges
    from dealerbox.floor.operating.broker_check import check_broker
    from dealerbox.link.client import Identity
    identity = Identity(host, port, pki / "ca.crt", pki / f"{cert}.crt", pki / f"{cert}.key")
    identity.check()
    own = property_bridges(conf_dir or CONF_DIR) if blind_restart_s > 0 else {}
    health = check_broker(identity, timeout=timeout, blind_restart_s=blind_restart_s, state=state,
                          now=time.time(), bridges=own, result=result)
    print(f"broker-check: {health.line}", file=sys.stderr)
    return 0 if health.ok else 1


def layout(config: Path, action: str, table_id: str | None = None, *, pit: str | None = None,
           row: int | None = None, col: int | None = None) -> int:
    """``floor layout set|remove|list``: where each table stands in the room, as the floor map
    draws it (a pit, a row and a column in it); kept on the floor server only."""
    from dealerbox.floor.operating.settings import load_web
    from dealerbox.floor.store import Store
    from dealerbox.link import protocol as P

    settings = load_web(config)
    with Store(settings.store) as store:
        if action == "list":
            places = store.table_places()
            for ident, p in places.items():
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(p["changed"]))
                print(f"{ident}\t{p['pit']}\trow {p['row']}\tcolumn {p['col']}\t(set by {p['changed_by']} {when})")
            unplaced = sorted(t["table_id"] for t in store.tables() if t["table_id"] not in places)
            if unplaced:
                print(f"unplaced: {' '.join(unplaced)}")
            return 0
        if not P.valid_table_id(table_id or ""):
            raise FloorError(f"dealerbox floor layout {action}: {table_id!r} is no table id "
                             "(1 to 64 letters, digits, '.', '-' or '_')")
        if action == "set":
            try:
                place = store.place_table(table_id, pit, row, col, command_line_user())
            except ValueError as exc:
                raise FloorError(f"dealerbox floor layout set: {exc}") from None
            print(f"{table_id} stands in {place['pit']}, row {place['row']}, column {place['col']}",
                  file=sys.stderr)
        elif not store.unplace_table(table_id):
            raise FloorError(f"dealerbox floor layout remove: {table_id} has no place")
        else:
            print(f"{table_id} has no place any more: the floor map shows it with the unplaced tables",
                  file=sys.stderr)
    return 0


def deck(config: Path, action: str, name: str | None = None, *, back: str | None = None,
         count: int | None = None, source: Path | None = None, source_deck: str | None = None,
         why: str | None = None, witness: str | None = None, hours: float | None = None,
         hands: int | None = None, day: str | None = None, html: Path | None = None, csv: Path | None = None,
         pdf: Path | None = None, base_url: str | None = None, table: str | None = None,
         language: str | None = None) -> int:
    """``floor deck list|receive|add|issue|retire|destroy|limit|log``: the room's decks, kept on the
    floor and sent to every table (docs/floor/registry.md); every change is
    audited with the login name of who ran it. What it says, and the log's files, are in
    *language* (``--language``), else the room's (``[web] language``)."""
    from dealerbox.floor.operating.settings import load_web
    from dealerbox.floor.store import Store
    from dealerbox.floor.store.registry import RegistryRefused
    from dealerbox.floor.telling.clock import FloorClock
    from dealerbox.floor.telling.language import Language

    settings = load_web(config)
    told = Language(language or settings.language, FloorClock(settings.time_zone, settings.shift_starts))
    try:
        with Store(settings.store) as store:
            return _deck(store, told, action, name, back=back, count=count, source=source,
                         source_deck=source_deck, why=why, witness=witness, hours=hours, hands=hands, day=day,
                         html=html, csv=csv, pdf=pdf, base_url=base_url, table=table)
    except RegistryRefused as exc:
        raise FloorError(f"dealerbox floor deck {action}: {exc.told(told.gettext)}") from None


def _deck_list(store, language) -> None:
    """``floor deck list``: a line per deck, its columns apart by tabs, in *language*."""
    from dealerbox.floor.telling import card_log as L

    _, integer = language.gettext, language.forms.integer
    issued = {deck: table for table, deck in store.issued_decks().items() if deck is not None}
    for d in store.decks():
        used = _("last at %(table)s") % {"table": d["last_table"]} if d["last_table"] else _("never dealt")
        where = "\t" + _("issued to %(table)s") % {"table": issued[d["name"]]} if d["name"] in issued else ""
        # English keeps the state's own word (in_play), as scripts reading the list know it.
        columns = (d["name"], _(L.STATE_WORDS[d["state"]]) if language.code != "en" else d["state"],
                   _("back %(back)s") % {"back": d["back"] or "-"},
                   language.ngettext("%(count)s tag", "%(count)s tags", d["tags"]) % {"count": integer(d["tags"])},
                   language.ngettext("%(count)s hand", "%(count)s hands", d["hands"]) % {"count": integer(d["hands"])},
                   _("%(hours)s h in play") % {"hours": L.hours_words(d["play_s"], language)}, used)
        print("\t".join(columns) + where)


def _deck(store, language, action: str, name, *, back, count, source, source_deck, why, witness, hours, hands,
          day, html, csv, pdf, base_url, table=None) -> int:
    who = command_line_user()
    _, limit = language.gettext, ""
    if action == "list":
        _deck_list(store, language)
        return 0
    if action == "log":
        return _card_log(store, language, name, day, html=html, csv=csv, pdf=pdf, base_url=base_url)
    if action == "receive":
        store.receive_deck(name, back or "", count, who)
        said = _("deck %(deck)s received sealed (%(count)s); register its tags with: dealerbox floor deck add")
    elif action == "add":
        from dealerbox.domain.decks import DeckRegistry
        local = DeckRegistry.load(source)
        wanted = source_deck or name
        if not local.has_deck(wanted):
            raise FloorError("dealerbox floor deck add: " + _("%(file)s has no deck %(deck)s (it has %(decks)s); "
                                                              "--deck names it") % {
                "file": source, "deck": repr(wanted), "decks": ", ".join(local.decks) or _("none")})
        tags = {uid: tag.card for uid, tag in local.cards_of(wanted).items()}
        added = store.register_deck(name, back if back is not None else local.backs.get(wanted, ""), tags, who)
        name, count = added["name"], len(tags)
        said = language.ngettext("deck %(deck)s: %(count)s tag registered, sent to every table within seconds",
                                 "deck %(deck)s: %(count)s tags registered, sent to every table within seconds",
                                 count)
    elif action == "issue":
        table = store.issue_deck(name, table, who, witness)["issued_to"]
        said = _("deck %(deck)s issued to %(table)s: that table deals it from its next hand, "
                 "within seconds of its registry")
    elif action == "retire":
        store.retire_deck(name, who, why)
        said = _("deck %(deck)s retired: its cards are foreign at every table from the next registry")
    elif action == "destroy":
        store.destroy_deck(name, who, witness)
        said = _("deck %(deck)s destroyed by %(who)s, witnessed by %(witness)s")
    elif action == "limit":
        from dealerbox.floor.telling.card_log import limit_words
        store.set_deck_limit(name, hours, hands, who)
        limit = limit_words(hours, hands, language)
        said = (_("deck %(deck)s: its own limit, %(limit)s") if limit
                else _("deck %(deck)s: the house's limit ([registry] of floor.toml)"))
    else:
        return 0
    print(said % {"deck": name, "count": language.forms.integer(count) if isinstance(count, int) else count,
                  "table": table, "who": who, "witness": witness, "limit": limit},
          file=sys.stderr)
    return 0


def _card_log(store, language, name: str | None, day: str | None, *, html, csv, pdf, base_url) -> int:
    """The card control log of deck *name*, or of local *day* (default today), in *language*:
    to files, else CSV on stdout."""
    from dealerbox.floor.telling import card_log as L

    _ = language.gettext
    clock = language.clock
    if name:
        found = L.deck_log(store, name)
        if found is None:
            raise FloorError("dealerbox floor deck log: " + _("no deck %(deck)s in the registry") % {"deck": repr(name)})
    else:
        try:
            when = L.log_day(day) if day else clock.at(time.time()).date()
        except ValueError:
            raise FloorError("dealerbox floor deck log: " + _("--day %(given)s: expected a day from %(first)s to "
                                                              "%(last)s, YYYY-MM-DD") % {
                "given": repr(day), "first": L.FIRST_DAY.isoformat(), "last": L.LAST_DAY.isoformat()}) from None
        found = L.day_log(store, clock, when)
    names = store.dealer_names()
    if html:
        html.write_text(L.log_html(found, language, names, base_url), encoding="utf-8")
    if csv:
        csv.write_text(L.log_csv(found, language, base_url or ""), encoding="utf-8")
    if pdf:
        pdf.write_bytes(L.log_pdf(found, language, names, base_url))
    if not (html or csv or pdf):
        sys.stdout.write(L.log_csv(found, language, base_url or ""))
    return 0


def badge(config: Path, action: str, uid: str | None = None, dealer_id: str | None = None, *,
          why: str | None = None, language: str | None = None) -> int:
    """``floor badge list|add|revoke``: the room's badges, kept on the floor and sent to every
    table; a revoked badge signs in nowhere. Every change is audited with the login name. What
    it says is in *language* (``--language``), else the room's (``[web] language``)."""
    from dealerbox.floor.operating.settings import load_web
    from dealerbox.floor.store import Store
    from dealerbox.floor.store.registry import RegistryRefused
    from dealerbox.floor.telling.clock import FloorClock
    from dealerbox.floor.telling.language import Language

    settings = load_web(config)
    told = Language(language or settings.language, FloorClock(settings.time_zone, settings.shift_starts))
    who = command_line_user()
    try:
        with Store(settings.store) as store:
            _badge(store, told, action, uid, dealer_id, why, who)
    except RegistryRefused as exc:
        raise FloorError(f"dealerbox floor badge {action}: {exc.told(told.gettext)}") from None
    return 0


def _badge(store, language, action: str, uid, dealer_id, why, who: str) -> int:
    _ = language.gettext
    if action == "list":
        names = store.dealer_names()
        for b in store.badges():
            state = (_("revoked by %(who)s: %(why)s") % {"who": b["revoked_by"], "why": b["revoked_why"]}
                     if b["revoked_at"] else _("signs in"))
            shown = f" {names[b['dealer']]}" if b["dealer"] in names else ""
            print(f"{b['uid']}\t" + _("dealer %(dealer)s") % {"dealer": b["dealer"]} + f"{shown}\t{state}")
        return 0
    if action == "add":
        added = store.register_badge(uid, dealer_id, who)
        print(_("badge %(badge)s signs dealer %(dealer)s in at every table within seconds")
              % {"badge": added["uid"], "dealer": dealer_id}, file=sys.stderr)
    else:
        store.revoke_badge(uid, who, why)
        print(_("badge %(badge)s revoked: it signs in nowhere from the next registry") % {"badge": uid},
              file=sys.stderr)
    return 0
    if action == "add":
        added = store.register_badge(uid, dealer_id, who)
        print(f"badge {added['uid']} signs dealer {dealer_id} in at every table within seconds", file=sys.stderr)
    else:
        store.revoke_badge(uid, who, why)
        print(f"badge {uid} revoked: it signs in nowhere from the next registry", file=sys.stderr)
    return 0
