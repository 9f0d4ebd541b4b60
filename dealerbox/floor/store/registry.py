"""The room's registry (issue 40): every deck and badge of the room, registered once on the
floor and published to every table, and each deck's life from delivery to destruction.

A deck's states, in order (docs/floor/registry.md, "A deck's life"):

- ``received``: delivered sealed, with the count of decks in the seal's box or of cards;
- ``registered``: its tags known (UID -> card), by the floor's admin or a technician at a
  table (the table's ``deck_registered``, filed by the registry pass);
- ``in_play``: its first hand was dealt at a table; each hand it dealt is kept
  (``reg_hands``), so where and how long it was used is read from the record;
- ``retired``: taken out of play, by whom and why: its tags are foreign at every table
  (the tables are still sent its cards, so that each names a retired card as one);
- ``destroyed``: by whom, and witnessed by whom (never the same person).

A live deck is *issued* to a table (``issue_deck``: by whom, witnessed by whom): that table's
registry names it as the deck it plays (``active``), and issuing it to another table moves
it. Issues are steps of the log; the deck a table plays is read from them (the table's last
issue, if its deck was not moved on or retired since).

Every step is a row of ``reg_steps``, the card control log. A tag belongs to one deck,
first registration wins: a second deck naming it is refused with what the tag is
already. Badges likewise: a UID is one dealer's badge, never a card; a revoked badge
signs in nowhere. Every change of what the tables are sent moves the registry's
version (``meta`` key ``registry_version``) in the same transaction, so the collector
publishes each version once it is committed (:mod:`dealerbox.floor.collecting.registry_pass`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from sqlalchemy import Text, cast, func, insert, select, update

from dealerbox.domain.badges import check_dealer_id
from dealerbox.domain.cards import is_card
from dealerbox.domain.decks import normalize_uid
from dealerbox.domain.decks import MAX_DECK_BACK, MAX_DECK_NAME, deck_back_refusal, deck_name_refusal
from dealerbox.errors import FloorError, RegistryError, shown
from dealerbox.floor.store.commissioning import COMMISSIONED
from dealerbox.floor.store.connection import Connection
from dealerbox.floor.store.schema import (Int64, audit_table, meta_table, reg_badges_table, reg_decks_table,
                                          reg_hands_table, reg_progress_table, reg_steps_table,
                                          reg_tags_table, storable, tables_table)
from dealerbox.link import protocol as P

__all__ = ["RoomRegistry", "RegistryRefused", "DECK_STATES", "LIVE_STATES", "VERSION_KEY",
           "ALERT_KIND_CONFLICT", "ALERT_KIND_LIMIT", "check_deck_name", "check_person", "PERSON_MAX",
           "DeckLimits"]

#: A deck's states, in the order of its life.
DECK_STATES = ("received", "registered", "in_play", "retired", "destroyed")
#: States whose tags the tables are sent as genuine cards.
LIVE_STATES = ("registered", "in_play")
#: The ``meta`` counter that moves with every change the tables are sent.
VERSION_KEY = "registry_version"
#: Alert kinds: a registration refused (a tag or badge already someone else's), a deck past its limit.
ALERT_KIND_CONFLICT = "registry_conflict"
ALERT_KIND_LIMIT = "deck_limit"
#: A person's name as the log keeps it (who received, retired, destroyed, witnessed).
PERSON_MAX = 80
#: A reason or a note, at most this long.
WHY_MAX = 300
#: A pause between two hands of a deck at one table longer than this is not time in play
#: (as the figures' dealing time: dealerbox/floor/telling/figures.py BREAK_S).
PLAY_BREAK_S = 300.0


def N_(message: str) -> str:
    """Marks *message* for the floor's catalogs (Babel's default keyword), translated where it
    is shown (:meth:`RegistryRefused.told`). The store's own: a collector alone runs this
    module without Babel, so it cannot import :func:`dealerbox.floor.telling.catalogs.N_`."""
    return message


#: A deck's states in a refusal's words (the card control log's own: telling/card_log.py STATE_WORDS).
_STATE_WORDS = {"received": N_("received, sealed"), "registered": N_("registered"), "in_play": N_("in play"),
                "retired": N_("retired"), "destroyed": N_("destroyed")}


class RegistryRefused(FloorError, ValueError):
    """A change of the room's registry that cannot be: the text says what is there already
    or what was expected.

    *message* is the English (a catalog's message, its placeholders filled from *said*);
    :meth:`told` says it in a reader's language. The *said* values named in *words* are
    words of the catalog too (``what``: "the witness"), translated with it."""

    def __init__(self, message: str, *, words: tuple[str, ...] = (), **said):
        self.message, self.said, self.words = message, said, words
        super().__init__(message % said if said else message)

    def told(self, gettext) -> str:
        """The refusal in the language of *gettext* (a :class:`Language`'s)."""
        said = {k: gettext(v) if k in self.words else v for k, v in self.said.items()}
        return gettext(self.message) % said if said else gettext(self.message)


@dataclass(frozen=True)
class DeckLimits:
    """The house's limit of a deck's use (``[registry]`` of floor.toml): hours in play, hands;
    None: no limit of that kind. A deck's own limit (``floor deck limit``) comes first."""

    hours: float | None = None
    hands: int | None = None


def check_deck_name(name) -> str:
    """*name* stripped if it is a deck's name (:func:`~dealerbox.domain.decks.is_deck_name`:
    the one rule of the tables' tools, their events and the wire), else :class:`RegistryRefused`
    saying the rule once (:func:`~dealerbox.domain.decks.deck_name_refusal`)."""
    text = name.strip() if isinstance(name, str) else name
    if deck_name_refusal(text) is not None:
        # The rule's one source is the domain's; told here as a catalog's message, so that a
        # reader gets it in their language (its English is the domain's sentence, word for word).
        raise RegistryRefused(N_("a deck name is 1 to %(most)s printable characters, no '/', not %(given)s"),
                              most=MAX_DECK_NAME, given=shown(text))
    return text


def _deck_or_none(name) -> str | None:
    """*name* as a deck's name if it is one, else None: what a table says is kept only if it can be."""
    try:
        return check_deck_name(name)
    except RegistryRefused:
        return None


def _uid_or_none(uid) -> str | None:
    try:
        return normalize_uid(uid)
    except RegistryError:
        return None


def check_person(what: str, name) -> str:
    """*name* stripped if it names a person (1 to :data:`PERSON_MAX` printable characters)."""
    text = name.strip() if isinstance(name, str) else ""
    if not text or len(text) > PERSON_MAX or not text.isprintable():
        raise RegistryRefused(N_("%(what)s is 1 to %(most)s printable characters naming a person, not %(given)s"),
                              words=("what",), what=what, most=PERSON_MAX, given=repr(name))
    return text


def _check_witness(witness, who: str, deed: str) -> str:
    """*witness* checked as a person other than *who*, who does *deed* ("issue of a deck")."""
    witness = check_person(N_("the witness"), witness)
    if witness.casefold() == who.casefold():
        raise RegistryRefused(N_("%(who)s cannot witness their own %(deed)s: name another person"), words=("deed",),
                              who=who, deed=deed)
    return witness


def _why(what: str, text) -> str:
    text = text.strip() if isinstance(text, str) else ""
    if not text or len(text) > WHY_MAX or "\x00" in text:
        raise RegistryRefused(N_("%(what)s is 1 to %(most)s characters, not %(given)s"), words=("what",), what=what,
                              most=WHY_MAX, given=repr(text))
    return text


def _uid(uid) -> str:
    try:
        return normalize_uid(uid)
    except RegistryError:
        # The domain's rule (dealerbox/domain/decks.py), told as a catalog's message so that a
        # reader gets it in their language, with what was given.
        raise RegistryRefused(N_("a tag UID is 4, 7 or 10 bytes in hexadecimal, such as 04A3C6CAE26180, not "
                                 "%(given)s"), given=shown(uid)) from None


def _dealer(dealer) -> str:
    try:
        return check_dealer_id(dealer)
    except RegistryError:
        # The domain's sentence (dealerbox/domain/badges.py) word for word, as a catalog's message.
        raise RegistryRefused(N_("a dealer id is 1 to 10 letters, digits, '-' or '_' (an employee number), "
                                 "not %(given)s"), given=shown(dealer)) from None


class RoomRegistry(Connection):
    """The room's decks and badges, their lives and the card control log. Its alerts go through
    :meth:`~dealerbox.floor.store.alerts.AlertsAndAudit.raise_alert`, a part of the same
    :class:`~dealerbox.floor.store.Store`, inside the registry's own transaction."""

    # -- the version the tables are sent

    def _moved(self) -> None:
        stmt = self._insert(meta_table).values(key=VERSION_KEY, value="1").on_conflict_do_update(
            index_elements=[meta_table.c.key], set_={"value": cast(cast(meta_table.c.value, Int64) + 1, Text)})
        self._execute(stmt)

    def registry_version(self) -> int:
        """The registry's revision: 0 before its first change."""
        with self._unit(write=False):
            value = self._execute(select(meta_table.c.value).where(meta_table.c.key == VERSION_KEY)).scalar()
        return int(value) if value is not None else 0

    def registry_revision(self) -> tuple[int, int]:
        """``(version, decks)``: the registry's version and how many decks it holds, read at once;
        it changes whenever a deck's name or tags do (a deck received moves no version)."""
        d = reg_decks_table.c
        version = select(meta_table.c.value).where(meta_table.c.key == VERSION_KEY).scalar_subquery()
        with self._unit(write=False):
            value, decks = self._execute(select(version, select(func.count(d.name)).scalar_subquery())).one()
        return int(value) if value is not None else 0, int(decks)

    def registry_content(self) -> dict:
        """What every table is sent (the wire's ``decks``, ``retired``, ``badges``, ``revoked``)
        with the ``version`` it is, read in one transaction; and ``active``: table -> the deck
        issued to it (None: the one issued there was moved on or retired) for every table
        ever issued one. A retired or destroyed deck is in ``decks`` with its tags, and its
        tags are in ``retired``: every table names a retired card (``FOREIGN_CARD``)."""
        d, t, b = reg_decks_table.c, reg_tags_table.c, reg_badges_table.c
        with self._unit(write=False):
            # One snapshot: the version and the content it is (a command may commit between two reads).
            own = not self._in_transaction
            if own:
                self._sql("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" if self.backend == "postgresql"
                          else "BEGIN")
            try:
                version = self._execute(select(meta_table.c.value).where(meta_table.c.key == VERSION_KEY)).scalar()
                states = dict(self._execute(select(d.name, d.state)).all())
                decks = {name: {"back": back, "tags": {}} for name, back in self._execute(
                    select(d.name, d.back).where(d.state.in_(LIVE_STATES)))}
                retired: list[str] = []
                for uid, deck, card, back in self._execute(
                        select(t.uid, t.deck, t.card, d.back).join(reg_decks_table, d.name == t.deck)):
                    decks.setdefault(deck, {"back": back, "tags": {}})["tags"][uid] = card
                    if states[deck] not in LIVE_STATES:
                        retired.append(uid)
                active = self._issued(states)
                badges, revoked = {}, []
                for uid, dealer, revoked_at in self._execute(select(b.uid, b.dealer, b.revoked_at)):
                    if revoked_at is None:
                        badges[uid] = dealer
                    else:
                        revoked.append(uid)
            finally:
                if own:
                    self._sql("COMMIT")
        return {"version": int(version) if version is not None else 0, "decks": decks,
                "retired": sorted(retired), "badges": badges, "revoked": sorted(revoked), "active": active}

    def registry_payload(self, table: str | None = None, content: dict | None = None) -> tuple[int, str, bytes]:
        """``(version, fingerprint, payload)``: the registry as the collector publishes it to
        *table* (:func:`dealerbox.link.protocol.build_registry`), naming the deck issued to it;
        of *content* (:meth:`registry_content`) when given, else read now. Without *table*:
        the room's, naming no table's deck."""
        c = self.registry_content() if content is None else content
        active = c["active"].get(table, P.UNSAID) if table is not None else P.UNSAID
        fingerprint = P.registry_fingerprint(c["decks"], c["retired"], c["badges"], c["revoked"], active)
        return c["version"], fingerprint, P.build_registry(c["version"], c["decks"], c["retired"],
                                                           c["badges"], c["revoked"], active)

    def _issued(self, states: dict[str, str]) -> dict[str, str | None]:
        """Table -> the deck issued to it, None when that deck moved on or left play since
        (*states*: deck -> state); tables never issued a deck are not in it."""
        s = reg_steps_table.c
        last_of_table: dict[str, str] = {}
        last_of_deck: dict[str, str] = {}
        for deck, table in self._execute(select(s.deck, s.table_id).where(s.step == "issued").order_by(s.id)):
            last_of_table[table], last_of_deck[deck] = deck, table
        return {table: deck if last_of_deck[deck] == table and states.get(deck) in LIVE_STATES else None
                for table, deck in last_of_table.items()}

    def issued_decks(self) -> dict[str, str | None]:
        """Table -> the deck it plays as the floor issued it (None: its deck moved on or was retired)."""
        d = reg_decks_table.c
        with self._unit(write=False):
            return self._issued(dict(self._execute(select(d.name, d.state)).all()))

    # -- steps and the audit trail

    def _step(self, step: str, now: float, *, deck: str | None = None, badge: str | None = None,
              table: str | None = None, seq: int | None = None, person: str | None = None,
              witness: str | None = None, detail: dict | None = None) -> bool:
        """One row of the card control log; False when the journal line (*table*, *seq*) filed it already."""
        values = dict(at=now, deck=deck, badge=badge, step=step, table_id=table, seq=seq,
                      person=storable(person) if person is not None else None, witness=witness,
                      detail=storable(json.dumps(detail, sort_keys=True)) if detail is not None else None)
        if seq is None:
            self._execute(insert(reg_steps_table).values(**values))
            return True
        # RETURNING, not rowcount: psycopg gives -1 for an INSERT ... ON CONFLICT DO NOTHING here.
        return self._execute(self._insert(reg_steps_table).values(**values).on_conflict_do_nothing()
                             .returning(reg_steps_table.c.id)).first() is not None

    def _audit(self, who: str, action: str, detail: str, now: float) -> None:
        self._execute(insert(audit_table).values(at=now, who=who, action=action, alert_id=None,
                                                 detail=storable(detail)))

    def _deck_row(self, name: str, *, lock: bool = False) -> dict | None:
        stmt = select(reg_decks_table).where(reg_decks_table.c.name == name)
        if lock and self.backend == "postgresql":
            stmt = stmt.with_for_update()
        rows = self._rows(stmt)
        return rows[0] if rows else None

    # -- decks

    def receive_deck(self, name: str, back: str, count: int, who: str, now: float | None = None) -> dict:
        """A deck delivered sealed: *count* is what the seal holds (cards, or decks of a box).
        Refused for a name the registry has already."""
        name, who = check_deck_name(name), check_person(N_("who received it"), who)
        back = _why(N_("a back's colour"), back)
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 10_000:
            raise RegistryRefused(N_("a sealed count is a whole number from 1 to 10000, not %(given)s"), given=repr(count))
        now = time.time() if now is None else now
        with self._unit():
            held = self._deck_row(name)
            if held is not None:
                raise RegistryRefused(N_("deck %(deck)s is in the registry already (%(state)s)"), words=("state",),
                                      deck=name, state=_STATE_WORDS[held["state"]])
            self._execute(insert(reg_decks_table).values(name=name, back=back, state="received", sealed_count=count,
                                                         received_at=now, received_by=who, changed=now))
            self._step("received", now, deck=name, person=who, detail={"sealed_count": count, "back": back})
            self._audit(who, "deck_receive", f"deck {name} received sealed ({count}), back {back}", now)
        return self.deck(name)

    def register_deck(self, name: str, back: str, tags: dict, who: str | None, *, table: str | None = None,
                      seq: int | None = None, now: float | None = None) -> dict:
        """Register deck *name*'s tags (*tags*: UID -> card). A deck received before takes them;
        the same deck registered again with the same tags changes nothing; a tag that is a card
        of another deck, or a badge, is refused with what it is (first registration wins).
        *who*: the admin, or None for a table's technician (*table*, its journal line *seq*)."""
        now = time.time() if now is None else now
        with self._unit():
            return self._register_deck(name, back, tags, who, table, seq, now)

    def _register_deck(self, name, back, tags, who, table, seq, now) -> dict:
        name = check_deck_name(name)
        back = back.strip() if isinstance(back, str) else ""
        if deck_back_refusal(back) is not None:
            raise RegistryRefused(N_("a back's colour is at most %(most)s printable characters, not %(given)s"),
                                  most=MAX_DECK_BACK, given=shown(back))
        if not isinstance(tags, dict) or not tags:
            raise RegistryRefused(N_("deck %(deck)s: expected its tags, UID -> card, not %(given)s"), deck=name,
                                  given=repr(tags))
        wanted: dict[str, str] = {}
        for raw, card in tags.items():
            uid = _uid(raw)
            if not isinstance(card, str) or not is_card(card):
                raise RegistryRefused(N_("deck %(deck)s: tag %(uid)s = %(card)s: expected a card code (Ah, Td, joker)"),
                                      deck=name, uid=uid, card=repr(card))
            if uid in wanted:
                raise RegistryRefused(N_("deck %(deck)s: tag %(uid)s is listed twice"), deck=name, uid=uid)
            wanted[uid] = card
        t, b = reg_tags_table.c, reg_badges_table.c
        held = {uid: (deck, card) for uid, deck, card in self._execute(
            select(t.uid, t.deck, t.card).where(t.uid.in_(list(wanted))))}
        for uid, (deck, card) in sorted(held.items()):
            if deck != name:
                raise RegistryRefused(N_("tag %(uid)s is already registered as %(card)s of deck %(deck)s"), uid=uid,
                                      card=card, deck=deck)
        badge = self._execute(select(b.uid, b.dealer).where(b.uid.in_(list(wanted)))).first()
        if badge is not None:
            raise RegistryRefused(N_("tag %(uid)s is dealer %(dealer)s's badge, not a card"), uid=badge[0], dealer=badge[1])
        row = self._deck_row(name, lock=True)
        by = who if who is not None else f"a technician at {table}"
        if row is not None and row["state"] in ("retired", "destroyed"):
            raise RegistryRefused(N_("deck %(deck)s is %(state)s: a retired deck is never registered again"),
                                  words=("state",), deck=name, state=_STATE_WORDS[row["state"]])
        if row is not None and row["state"] in LIVE_STATES:
            mine = dict(self._execute(select(t.uid, t.card).where(t.deck == name)).all())
            if mine == wanted:
                return row   # registered already, as it is: nothing changes
            raise RegistryRefused(N_("deck %(deck)s is registered already with %(count)s other tags (by %(who)s): "
                                     "first registration wins"), deck=name, count=len(mine), who=row["registered_by"])
        if row is None:
            self._execute(insert(reg_decks_table).values(name=name, back=back, state="registered",
                                                         registered_at=now, registered_by=by,
                                                         registered_table=table, changed=now))
        else:  # received: its tags now
            self._execute(update(reg_decks_table).where(reg_decks_table.c.name == name).values(
                back=back or row["back"], state="registered", registered_at=now, registered_by=by,
                registered_table=table, changed=now))
        self._execute(insert(reg_tags_table).values([{"uid": u, "deck": name, "card": c}
                                                      for u, c in sorted(wanted.items())]))
        self._step("registered", now, deck=name, table=table, seq=seq, person=by,
                   detail={"tags": len(wanted), "back": back})
        if who is not None:
            self._audit(who, "deck_register", f"deck {name} registered, {len(wanted)} tags", now)
        self._moved()
        return self._deck_row(name)

    def retire_deck(self, name: str, who: str, why: str, now: float | None = None) -> dict:
        """Take deck *name* out of play: its tags are foreign at every table from the next version."""
        name, who, why = check_deck_name(name), check_person(N_("who retires it"), who), _why(N_("why it is retired"), why)
        now = time.time() if now is None else now
        with self._unit():
            row = self._deck_row(name, lock=True)
            if row is None:
                raise RegistryRefused(N_("no deck %(deck)s in the registry"), deck=name)
            if row["state"] in ("retired", "destroyed"):
                raise RegistryRefused(N_("deck %(deck)s is %(state)s already"), words=("state",), deck=name,
                                      state=_STATE_WORDS[row["state"]])
            self._execute(update(reg_decks_table).where(reg_decks_table.c.name == name).values(
                state="retired", retired_at=now, retired_by=who, retired_why=why, changed=now))
            self._step("retired", now, deck=name, person=who, detail={"why": why})
            self._audit(who, "deck_retire", f"deck {name} retired: {why}", now)
            self._moved()
        return self.deck(name)

    def issue_deck(self, name: str, table: str, who: str, witness: str | None = None,
                   now: float | None = None) -> dict:
        """Deck *name* issued to *table* by *who* (witnessed by *witness*, another person, if
        named): *table* judges with it from its next hand between hands, and a table it was
        issued to before loses it (its cards are foreign there from then). Refused for a deck
        that is not registered or in play (received, retired, destroyed) and for one issued
        there already."""
        name, who = check_deck_name(name), check_person(N_("who issues it"), who)
        table = table.strip() if isinstance(table, str) else ""
        if not P.valid_table_id(table):
            raise RegistryRefused(N_("a table's id is 1 to 64 letters, digits, '.', '_' or '-' (T07), not %(given)s"),
                                  given=repr(table))
        if witness is not None and not (witness.strip() if isinstance(witness, str) else witness):
            witness = None
        if witness is not None:
            witness = _check_witness(witness, who, N_("issue of a deck"))
        now = time.time() if now is None else now
        with self._unit():
            row = self._deck_row(name, lock=True)
            if row is None:
                raise RegistryRefused(N_("no deck %(deck)s in the registry"), deck=name)
            if row["state"] == "received":
                raise RegistryRefused(N_("deck %(deck)s is received, sealed: register its tags before it is issued"),
                                      deck=name)
            if row["state"] not in LIVE_STATES:
                raise RegistryRefused(N_("deck %(deck)s is %(state)s: a deck out of play is never issued"),
                                      words=("state",), deck=name, state=_STATE_WORDS[row["state"]])
            held = self._issued({name: row["state"]})
            before = next((t for t, deck in held.items() if deck == name), None)
            if before == table:
                raise RegistryRefused(N_("deck %(deck)s is issued to %(table)s already"), deck=name, table=table)
            self._step("issued", now, deck=name, table=table, person=who, witness=witness, detail={"from": before})
            moved = f", moved from {before}" if before else ""
            self._audit(who, "deck_issue", f"deck {name} issued to {table}{moved}"
                        + (f", witnessed by {witness}" if witness else ""), now)
            self._moved()
        return self.deck(name)

    def destroy_deck(self, name: str, who: str, witness: str, now: float | None = None) -> dict:
        """Deck *name*, retired, destroyed by *who* and witnessed by *witness* (another person)."""
        name = check_deck_name(name)
        who = check_person(N_("who destroys it"), who)
        witness = _check_witness(witness, who, N_("destruction of a deck"))
        now = time.time() if now is None else now
        with self._unit():
            row = self._deck_row(name, lock=True)
            if row is None:
                raise RegistryRefused(N_("no deck %(deck)s in the registry"), deck=name)
            if row["state"] == "destroyed":
                raise RegistryRefused(N_("deck %(deck)s was destroyed already"), deck=name)
            if row["state"] != "retired":
                raise RegistryRefused(N_("deck %(deck)s is %(state)s: retire it first"), words=("state",), deck=name,
                                      state=_STATE_WORDS[row["state"]])
            self._execute(update(reg_decks_table).where(reg_decks_table.c.name == name).values(
                state="destroyed", destroyed_at=now, destroyed_by=who, destroyed_witness=witness, changed=now))
            self._step("destroyed", now, deck=name, person=who, witness=witness)
            self._audit(who, "deck_destroy", f"deck {name} destroyed, witnessed by {witness}", now)
        return self.deck(name)

    def set_deck_limit(self, name: str, hours: float | None, hands: int | None, who: str,
                       now: float | None = None) -> dict:
        """Deck *name*'s own limit (None and None: the house's again)."""
        name, who = check_deck_name(name), check_person(N_("who sets it"), who)
        if hours is not None and (not isinstance(hours, (int, float)) or isinstance(hours, bool)
                                  or not 0 < hours <= 100_000):
            raise RegistryRefused(N_("hours in play is a number above 0, not %(given)s"), given=repr(hours))
        if hands is not None and (not isinstance(hands, int) or isinstance(hands, bool) or not 0 < hands <= 10**9):
            raise RegistryRefused(N_("hands is a whole number above 0, not %(given)s"), given=repr(hands))
        now = time.time() if now is None else now
        with self._unit():
            if self._deck_row(name, lock=True) is None:
                raise RegistryRefused(N_("no deck %(deck)s in the registry"), deck=name)
            self._execute(update(reg_decks_table).where(reg_decks_table.c.name == name).values(
                limit_hours=float(hours) if hours is not None else None, limit_hands=hands, changed=now,
                # A new limit is watched afresh: a deck given more passes it again one day, and says so.
                limit_alerted=None))
            said = (f"{hours:g} hours in play" if hours is not None else "") + \
                   (" or " if hours is not None and hands is not None else "") + \
                   (f"{hands} hands" if hands is not None else "")
            self._step("limit_set", now, deck=name, person=who, detail={"hours": hours, "hands": hands})
            self._audit(who, "deck_limit", f"deck {name}: limit {said or 'the house limit'}", now)
        return self.deck(name)

    # -- badges

    def register_badge(self, uid: str, dealer: str, who: str | None, *, table: str | None = None,
                       seq: int | None = None, now: float | None = None) -> dict:
        """Badge *uid* signs *dealer* in at every table. The same badge of the same dealer again
        changes nothing; a badge of another dealer, a revoked one or a card's tag is refused."""
        now = time.time() if now is None else now
        with self._unit():
            return self._register_badge(uid, dealer, who, table, seq, now)

    def _register_badge(self, uid, dealer, who, table, seq, now) -> dict:
        uid = _uid(uid)
        _dealer(dealer)
        b, t = reg_badges_table.c, reg_tags_table.c
        card = self._execute(select(t.deck, t.card).where(t.uid == uid)).first()
        if card is not None:
            raise RegistryRefused(N_("tag %(uid)s is already registered as %(card)s of deck %(deck)s"), uid=uid,
                                  card=card[1], deck=card[0])
        row = self._rows(select(reg_badges_table).where(b.uid == uid))
        if row:
            old = row[0]
            if old["revoked_at"] is not None:
                raise RegistryRefused(N_("badge %(uid)s was revoked by %(who)s: a revoked badge is never registered "
                                         "again"), uid=uid, who=old["revoked_by"])
            if old["dealer"] != dealer:
                raise RegistryRefused(N_("badge %(uid)s is registered to dealer %(dealer)s already"), uid=uid,
                                      dealer=old["dealer"])
            return old
        by = who if who is not None else f"a technician at {table}"
        self._execute(insert(reg_badges_table).values(uid=uid, dealer=dealer, registered_at=now, registered_by=by,
                                                      registered_table=table))
        self._step("badge_registered", now, badge=uid, table=table, seq=seq, person=by, detail={"dealer": dealer})
        if who is not None:
            self._audit(who, "badge_register", f"badge {uid} registered to dealer {dealer}", now)
        self._moved()
        return self._rows(select(reg_badges_table).where(b.uid == uid))[0]

    def revoke_badge(self, uid: str, who: str, why: str, now: float | None = None) -> dict:
        """Badge *uid* signs in nowhere from the next version."""
        uid, who, why = _uid(uid), check_person(N_("who revokes it"), who), _why(N_("why it is revoked"), why)
        now = time.time() if now is None else now
        b = reg_badges_table.c
        with self._unit():
            row = self._rows(select(reg_badges_table).where(b.uid == uid))
            if not row:
                raise RegistryRefused(N_("no badge %(uid)s in the registry"), uid=uid)
            if row[0]["revoked_at"] is not None:
                raise RegistryRefused(N_("badge %(uid)s was revoked already"), uid=uid)
            self._execute(update(reg_badges_table).where(b.uid == uid).values(
                revoked_at=now, revoked_by=who, revoked_why=why))
            self._step("badge_revoked", now, badge=uid, person=who, detail={"dealer": row[0]["dealer"], "why": why})
            self._audit(who, "badge_revoke", f"badge {uid} of dealer {row[0]['dealer']} revoked: {why}", now)
            self._moved()
            return self._rows(select(reg_badges_table).where(b.uid == uid))[0]

    # -- reading

    def decks(self) -> list[dict]:
        """Every deck, by name, with ``tags`` (how many)."""
        d, t = reg_decks_table.c, reg_tags_table.c
        count = select(func.count()).select_from(reg_tags_table).where(t.deck == d.name).scalar_subquery()
        with self._unit(write=False):
            return self._rows(select(reg_decks_table, count.label("tags")).order_by(d.name))

    def deck(self, name: str) -> dict | None:
        """Deck *name* with its ``tags`` (UID -> card), or None."""
        with self._unit(write=False):
            row = self._deck_row(name)
            if row is None:
                return None
            t = reg_tags_table.c
            row["tags"] = dict(self._execute(select(t.uid, t.card).where(t.deck == name).order_by(t.uid)).all())
            row["issued_to"] = next((table for table, deck in self._issued({name: row["state"]}).items()
                                     if deck == name), None)
        return row

    def deck_of_tags(self) -> dict[str, tuple[str, str]]:
        """Every registered tag: UID -> ``(card, deck)``."""
        t = reg_tags_table.c
        with self._unit(write=False):
            return {uid: (card, deck) for uid, deck, card in self._execute(select(t.uid, t.deck, t.card))}

    def deck_tables(self, name: str) -> list[dict]:
        """Where deck *name* was used: per table, its first and last hand and how many."""
        h = reg_hands_table.c
        with self._unit(write=False):
            return self._rows(select(h.table_id.label("table"), func.min(h.started).label("first"),
                                     func.max(func.coalesce(h.ended, h.started)).label("last"),
                                     func.count().label("hands"))
                              .where(h.deck == name).group_by(h.table_id).order_by(func.min(h.started)))

    def deck_hands(self, name: str | None = None, start: float | None = None, end: float | None = None, *,
                   limit: int | None = None, offset: int = 0) -> list[dict]:
        """The hands dealt with deck *name* (every deck: None), oldest first, optionally started in
        ``[start, end)``; at most *limit* of them (None: all) after the first *offset* (a page of a
        day's log reads its page through the index on ``started``, not the day's every hand)."""
        h = reg_hands_table.c
        stmt = select(h.table_id.label("table"), h.start_seq, h.deck, h.started, h.ended, h.dealer)
        if name is not None:
            stmt = stmt.where(h.deck == name)
        if start is not None:
            stmt = stmt.where(h.started >= start)
        if end is not None:
            stmt = stmt.where(h.started < end)
        stmt = stmt.order_by(h.started, h.table_id, h.start_seq)
        if limit is not None:
            stmt = stmt.limit(limit).offset(offset)
        elif offset:
            stmt = stmt.offset(offset)
        with self._unit(write=False):
            return self._rows(stmt)

    def day_deck_tables(self, start: float, end: float) -> list[dict]:
        """The hands started in ``[start, end)`` per deck and table: ``deck``, ``table``, ``first``
        (the first hand's start), ``last`` (the last one's end, or start when it has none) and
        ``hands``, by deck then first hand: summed in SQL, so a day's log costs its decks, not
        its hands."""
        h = reg_hands_table.c
        first = func.min(h.started)
        with self._unit(write=False):
            return self._rows(select(h.deck, h.table_id.label("table"), first.label("first"),
                                     func.max(func.coalesce(h.ended, h.started)).label("last"),
                                     func.count().label("hands"))
                              .where(h.started >= start, h.started < end)
                              .group_by(h.deck, h.table_id).order_by(h.deck, first))

    def badges(self) -> list[dict]:
        """Every badge, by dealer then UID."""
        b = reg_badges_table.c
        with self._unit(write=False):
            return self._rows(select(reg_badges_table).order_by(b.dealer, b.uid))

    def registry_steps(self, *, deck: str | None = None, start: float | None = None,
                       end: float | None = None) -> list[dict]:
        """The card control log's steps, oldest first: of one deck, and/or in ``[start, end)``."""
        s = reg_steps_table.c
        stmt = select(reg_steps_table)
        if deck is not None:
            stmt = stmt.where(s.deck == deck)
        if start is not None:
            stmt = stmt.where(s.at >= start)
        if end is not None:
            stmt = stmt.where(s.at < end)
        with self._unit(write=False):
            rows = self._rows(stmt.order_by(s.at, s.id))
        for row in rows:
            row["detail"] = json.loads(row["detail"]) if row["detail"] else {}
        return rows

    # -- the registry pass (dealerbox/floor/collecting/registry_pass.py)

    def known_tables(self) -> list[str]:
        """Every table the floor has heard of, by id (each is sent the registry)."""
        with self._unit(write=False):
            return list(self._execute(select(tables_table.c.table_id).order_by(tables_table.c.table_id)).scalars())

    def registry_behind(self) -> list[tuple[str, int | None, int | None]]:
        """``(table, seq read, resume seq)`` of each table with lines the pass has not read."""
        t, p = tables_table.c, reg_progress_table.c
        with self._unit(write=False):
            return [tuple(r) for r in self._execute(
                select(t.table_id, p.seq, p.resume_seq)
                .select_from(tables_table.outerjoin(reg_progress_table, p.table_id == t.table_id))
                .where(t.last_seq > func.coalesce(p.seq, 0)).order_by(t.table_id))]

    def file_registry_part(self, table: str, old_seq: int | None, new_seq: int, resume_seq: int | None,
                           notes: list[dict], hands: list[dict], limits: DeckLimits) -> list[dict] | None:
        """File what the pass read of *table*'s lines after *old_seq* up to *new_seq*, in one
        transaction that first moves the table's progress from *old_seq* (None: never read):
        the registry's events and the tables' commissioning records (*notes*: ``kind``, ``seq``,
        ``at``, ``event``) and the hands each deck dealt (*hands*: ``start_seq``, ``deck``,
        ``started``, ``ended``, ``dealer``).
        Returns the alerts raised, or None when another caller moved the progress first."""
        p = reg_progress_table.c
        alerts: list[dict] = []
        with self._unit():
            if old_seq is None:
                moved = int(self._execute(self._insert(reg_progress_table).values(
                    table_id=table, seq=new_seq, resume_seq=resume_seq).on_conflict_do_nothing()
                    .returning(p.table_id)).first() is not None)
            else:
                moved = self._execute(update(reg_progress_table).where(p.table_id == table, p.seq == old_seq)
                                      .values(seq=new_seq, resume_seq=resume_seq)).rowcount
            if moved != 1:
                return None
            for note in notes:
                if note["kind"] == COMMISSIONED:   # the tables' commissioning records (store/commissioning.py)
                    alert = self._file_commissioning(table, note["seq"], note["event"], note["at"],
                                                     fresh=old_seq is None or note["seq"] > old_seq)
                else:
                    alert = self._table_note(table, note)
                if alert is not None:
                    alerts.append(alert)
            for hand in hands:
                alert = self._hand(table, hand, limits)
                if alert is not None:
                    alerts.append(alert)
        return alerts

    def _table_note(self, table: str, note: dict) -> dict | None:
        kind, seq, at, event = note["kind"], note["seq"], note["at"], note["event"]
        try:
            if kind == "deck_registered":
                self._savepoint_try(lambda: self._register_deck(event.get("deck"), event.get("back", ""),
                                                                event.get("tags"), None, table, seq, at))
            elif kind == "badge_registered":
                self._savepoint_try(lambda: self._register_badge(event.get("uid"), event.get("dealer"),
                                                                 None, table, seq, at))
            elif kind == "deck_checked":
                # Any string may come: one that is no deck's name (a NUL, a lone surrogate) is kept
                # only in the step's detail (JSON, ASCII), never as a deck (PostgreSQL refuses it).
                raw = event.get("deck")
                deck = _deck_or_none(raw)
                detail = {"missing": _strings(event.get("missing")), "damaged": _strings(event.get("damaged")),
                          "ok": event.get("ok") is True}
                if deck is None and isinstance(raw, str) and raw.strip():
                    detail["named"] = raw[:80]
                self._step("checked", at, deck=deck, table=table, seq=seq, person=f"a technician at {table}",
                           detail=detail)
            elif kind == "registry_applied":
                self._step("applied", at, table=table, seq=seq,
                           detail={"version": event.get("version"), "fingerprint": str(event.get("fingerprint"))[:64]})
        except RegistryRefused as exc:
            what = event.get("deck") if kind == "deck_registered" else event.get("uid")
            # The refused name goes in the log's deck or badge column only if it is one (checked).
            if not self._step("refused", at, deck=_deck_or_none(what) if kind == "deck_registered" else None,
                              badge=_uid_or_none(what) if kind == "badge_registered" else None,
                              table=table, seq=seq, person=f"a technician at {table}",
                              detail={"kind": kind, "why": str(exc)}):
                return None  # filed (and alerted) already
            label = "deck" if kind == "deck_registered" else "badge"
            return self.raise_alert(table, ALERT_KIND_CONFLICT,
                                    f"{table} registered {label} {storable(what)[:64]} and the floor refused it: "
                                    f"{exc}", seq, at)
        return None

    def _savepoint_try(self, change) -> None:
        """Run *change* in a savepoint of the open transaction: a refusal undoes it alone."""
        self._sql("SAVEPOINT registry_note")
        try:
            change()
        except BaseException:
            self._sql("ROLLBACK TO SAVEPOINT registry_note")
            self._sql("RELEASE SAVEPOINT registry_note")
            raise
        self._sql("RELEASE SAVEPOINT registry_note")

    def _hand(self, table: str, hand: dict, limits: DeckLimits) -> dict | None:
        name = hand["deck"]
        h = reg_hands_table.c
        row = self._deck_row(name, lock=True)
        if row is None:
            return None   # a deck the pass learnt from a registration the floor refused
        new = self._execute(self._insert(reg_hands_table).values(
            table_id=table, start_seq=hand["start_seq"], deck=name, started=hand["started"], ended=hand["ended"],
            dealer=hand["dealer"]).on_conflict_do_nothing(index_elements=[h.table_id, h.start_seq])
            .returning(h.table_id)).first() is not None
        if not new:
            return None   # filed already (a hand read again from its start)
        started, ended = hand["started"], hand["ended"]
        seconds = max(0.0, ended - started) if started is not None and ended is not None else 0.0
        if (row["last_table"] == table and row["last_ended"] is not None and started is not None
                and 0 <= started - row["last_ended"] <= PLAY_BREAK_S):
            seconds += started - row["last_ended"]
        values = {"hands": row["hands"] + 1, "play_s": row["play_s"] + seconds, "last_table": table,
                  "last_ended": ended if ended is not None else started}
        at = started if started is not None else time.time()
        if row["state"] in ("received", "registered"):
            values.update(state="in_play", first_play_at=at, first_play_table=table)
            self._step("in_play", at, deck=name, table=table, seq=hand["start_seq"],
                       person=hand["dealer"] and f"dealer {hand['dealer']}", detail={"first_hand": hand["start_seq"]})
        self._execute(update(reg_decks_table).where(reg_decks_table.c.name == name).values(**values))
        if row["limit_alerted"] is not None or row["state"] in ("retired", "destroyed"):
            return None
        hours = row["limit_hours"] if row["limit_hours"] is not None else limits.hours
        most = row["limit_hands"] if row["limit_hands"] is not None else limits.hands
        past = []
        if most is not None and values["hands"] > most:
            past.append(f"{values['hands']} hands (limit {most})")
        if hours is not None and values["play_s"] > hours * 3600:
            past.append(f"{values['play_s'] / 3600:.1f} hours in play (limit {hours:g})")
        if not past:
            return None
        now = ended if ended is not None else at
        self._execute(update(reg_decks_table).where(reg_decks_table.c.name == name).values(limit_alerted=now))
        self._step("limit", now, deck=name, table=table, seq=hand["start_seq"], detail={"past": past})
        return self.raise_alert(table, ALERT_KIND_LIMIT,
                                f"Deck {name} is past the house limit: {' and '.join(past)}. Retire it.",
                                hand["start_seq"], now)


def _strings(value) -> list[str]:
    return [str(v)[:32] for v in value[:60]] if isinstance(value, list) else []
