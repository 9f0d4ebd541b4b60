"""Filing what the tables send into the floor's store.

Each ``journal`` batch is checked line by line (the next ``seq``, the hash chain,
a line sent again with other content) and stored; a gap asks the table to send
again from the first missing line, at most every :data:`RESEND_QUIET_S`. A
``status`` of an earlier life of the table is ignored; ``state`` and ``health``
are kept as the table retained them. What needs a person raises an alert.
:class:`~dealerbox.floor.collecting.collector.Collector` owns the MQTT side.

Each table is filed on its own: every message is filed within a savepoint of
the batch's transaction, so a message the floor cannot use (not JSON, a ``seq``
that is not a number, ...) is undone and refused for its table alone, with a
``protocol`` alert, while every other message of the batch is committed.

A line that breaks a table's chain never becomes its record: it is kept aside
(:meth:`~dealerbox.floor.store.Store.quarantine`) with a ``chain`` alert, and the
table is asked to send that ``seq`` again; the genuine line is stored when it
comes.

Several collectors share a table's messages, so its next message often reaches one
collector while the message before it waits in another's queue. Lines that come
ahead of a gap are kept in the store (:meth:`~dealerbox.floor.store.Store.keep_early`),
neither the record nor acknowledged; the filing that fills the gap chains them and
files them in its own transaction, as TCP reassembles segments. Only a gap that
stays open for :data:`GAP_WAIT_S` is asked for again: no message is sent twice,
waited on or filed twice because it came out of order.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

from sqlalchemy.exc import OperationalError

from dealerbox.floor import alert_texts as T
from dealerbox.floor.collecting.message import Message
from dealerbox.floor.store import Store, TableBusy
from dealerbox.link import protocol as P
from dealerbox.link.chain import line_hash

log = logging.getLogger(__name__)
#: The floor's security events (dealerbox/floor/operating/security_log.py sends this logger's
#: records to the journal; the filing, a part below it, logs there by the logger's name).
security = logging.getLogger("dealerbox.floor.security")

#: A resend request for the same gap is repeated no sooner than this.
RESEND_QUIET_S = 2.0
#: Lines kept ahead of a gap wait this long for the missing lines before the table is
#: asked to send them again. With several collectors the missing lines are most often in
#: another collector's queue, filed a moment later; asking for them sooner makes the
#: table send them twice and, under load, every table's gaps are asked for, the tables
#: send their lines again and again, and the queues grow (seen in the group bench with
#: one second). Lines that are lost are asked for sooner by what lost them: a dying
#: collector's Last Will, a collector's full queue (below), a table's reconnect.
GAP_WAIT_S = 5.0
#: An alert folded into an open one of the same table and kind is shown to the
#: view and logged again no sooner than this (it is counted every time).
ALERT_QUIET_S = 10.0


def _tell_refused(done: Batch) -> None:
    """A ``table_refused`` security event for each ``protocol`` alert the batch committed and
    showed (a folded one at most every :data:`ALERT_QUIET_S`, as the view hears of it)."""
    for event in done.events:
        a = event.get("alert") if event.get("type") == "alert" else None
        if a is not None and a["kind"] == "protocol":
            security.warning("floor: refused from table %s: %s", a["table"], a["last_text"],
                             extra={"security": {"event": "table_refused", "table": a["table"], "alert": a["id"],
                                                 "count": a["count"], "reason": a["last_text"]}})


class _FiledCarefully(Exception):
    """A message failed after it began to write: file the batch again, message by message."""


@dataclass
class Batch:
    """What storing one batch of messages leads to: acks and resend requests per table,
    view events, and which tables changed (``refreshed``: their status or retained rows).
    ``alerts`` is True when an alert was raised or folded."""

    acks: dict[str, int] = field(default_factory=dict)
    resends: dict[str, int] = field(default_factory=dict)
    events: list[dict] = field(default_factory=list)
    changed: set[str] = field(default_factory=set)
    refreshed: set[str] = field(default_factory=set)
    last_seqs: dict[str, int] = field(default_factory=dict)
    alerts: bool = False
    #: Messages to file in a later batch: another collector held their table (PostgreSQL).
    deferred: list[Message] = field(default_factory=list)

    def merge(self, other: "Batch") -> None:
        """Take in what one message led to (messages of a batch come in order)."""
        for table, seq in other.acks.items():
            self.acks[table] = max(self.acks.get(table, 0), seq)
            # A gap that a later message of the batch filled needs no resend: asked
            # for below the table's new ack, it would move the table's cursor back.
            if self.resends.get(table, seq + 1) <= seq:
                del self.resends[table]
        for table, seq in other.resends.items():
            if seq > self.acks.get(table, 0):
                self.resends[table] = seq
        self.events.extend(other.events)
        self.changed |= other.changed
        self.refreshed |= other.refreshed
        self.last_seqs.update(other.last_seqs)
        self.alerts = self.alerts or other.alerts


class Filing:
    """Files batches of table messages into *store*, one transaction a batch.

    It keeps ``duplicates`` (lines sent again, per table), ``refused`` (messages
    refused, per table) and the resend requests it made; it raises the alerts
    (``chain``, ``tamper``, ``protocol``, ``floor``, ``offline``, ``clock``) in the
    store and in the batch's view events.
    """

    def __init__(self, store: Store):
        self.store = store
        self.duplicates: dict[str, int] = {}
        self.refused: dict[str, int] = {}
        self._asked: dict[str, tuple[int, float]] = {}
        # (table, kind) -> when its alert was last shown and logged
        self._shown: dict[tuple[str, str], float] = {}

    def store_batch(self, batch: list[Message], now: float, *,
                    dropped: dict[str, int] | None = None) -> Batch:
        """Store every message of *batch* in one transaction; what it leads to. A table
        another collector is filing at this moment (PostgreSQL) is left for later: its
        messages come back in ``deferred``. A retained message delivered again on subscribe
        that the store holds already is not filed again (see :meth:`_filed_already`).

        *dropped* counts, per table, the messages the collector could not even
        queue (a table sending faster than the floor files): a ``protocol`` alert.

        The messages are filed table by table (in the order of the tables' ids, each
        table's own in the order they came): collectors sharing a PostgreSQL store lock
        the tables' rows in one order, so none waits on another in a circle.
        """
        by_table: dict[str, list[Message]] = {}
        filed = self._filed_already(batch)
        for message in batch:
            if id(message) not in filed:
                by_table.setdefault(message.table, []).append(message)
        dropped = dropped or {}
        if not by_table and not dropped:
            # Only retained messages filed already: no transaction (four round trips) for
            # nothing, as a collector that subscribes gets a thousand of them in small batches.
            return Batch()
        with self.store.lock:
            before = self._state()
            try:
                done = self._store_tables(by_table, dropped, now, careful=False)
            except _FiledCarefully:
                # A message failed after it began to write: the whole batch again, each message
                # in a savepoint of its own, so that one is refused alone.
                self._set_state(before)
                done = self._store_tables(by_table, dropped, now, careful=True)
        _tell_refused(done)
        return done

    def _filed_already(self, batch: list[Message]) -> set[int]:
        """The ids of *batch*'s retained ``status``, ``state`` and ``health`` messages
        delivered again on subscribe whose payload is the one the store holds: a collector
        that starts gets every table's, and filing them (a row lock and a write each) cost
        a collector started under a thousand dealing tables seconds of backlog while
        another collector had filed each when it came (the group bench). One that differs
        is filed: a table's Last Will that came while no collector ran, for one."""
        retained = [m for m in batch if m.retained and m.payload and m.kind in P.RETAINED_KINDS]
        if not retained:
            return set()
        rows = self.store.table_rows({m.table for m in retained})
        filed = set()
        for message in retained:
            stored = (rows.get(message.table) or {}).get(message.kind)
            if stored is None:
                continue
            try:
                if json.dumps(P.decode(message.payload)) == stored:
                    filed.add(id(message))
            except P.PayloadError:
                pass  # refused when filed, as any
        return filed

    def _store_tables(self, by_table: dict[str, list[Message]], dropped: dict[str, int], now: float, *,
                      careful: bool) -> Batch:
        done = Batch()
        self.store.begin()
        try:
            # Every table's row locked at once; those another collector holds wait for a later batch.
            busy = self.store.hold_tables([t for t in by_table if t])
            for table in sorted(set(by_table) | set(dropped)):
                items = by_table.get(table, [])
                if table in busy:
                    done.deferred.extend(items)
                    items = []
                for i, message in enumerate(items):
                    try:
                        self._file(message, now, done, careful)
                    except TableBusy:
                        done.deferred.extend(items[i:])
                        break
                if dropped.get(table):
                    # What was dropped is sent again, from what is filed (looked up before the
                    # alert, whose count gives a table never heard of before its row).
                    last = done.last_seqs.get(table)
                    if last is None:
                        row = self.store.table(table)
                        last = row["last_seq"] if row is not None else None
                    self._alert(done, table, "protocol", T.DROPPED.write(dropped=dropped[table]), now=now)
                    if last is not None:
                        self._ask_again(table, last + 1, now, done)
            try:
                self.store.flush()
            except OperationalError:
                raise
            except Exception as exc:
                if careful:
                    raise
                # A message's writes the database refused, found as they were sent together.
                raise _FiledCarefully() from exc
            self.store.commit()
        except BaseException:
            self.store.rollback()
            raise
        return done

    def _state(self) -> tuple[dict, ...]:
        return tuple(dict(d) for d in (self.duplicates, self.refused, self._asked, self._shown))

    def _set_state(self, state: tuple[dict, ...]) -> None:
        for mine, kept in zip((self.duplicates, self.refused, self._asked, self._shown), state):
            mine.clear()
            mine.update(kept)

    def _file(self, message: Message, now: float, done: Batch, careful: bool) -> None:
        """File one message; refused alone if it is unusable.

        A message that is not what its topic says is refused before anything is written.
        One that fails while it is being written undoes its own writes when *careful* (it
        is in a savepoint of its own); else it raises :class:`_FiledCarefully`, and the
        batch is filed again carefully. Savepoints cost two round trips per message on
        PostgreSQL, and almost no message needs one."""
        table, kind, topic, payload = message.table, message.kind, message.topic, message.payload
        if not P.valid_table_id(table):
            return
        if kind not in P.KINDS:
            log.debug("floor: %s: ignoring a topic of a kind it does not know", topic)
            return
        if not payload:
            # A retained message being deleted: nothing to file.
            log.debug("floor: %s: an empty message (a retained message cleared)", topic)
            return
        try:
            d = P.decode(payload)
            P.check_shape(kind, table, d)
        except Exception as exc:
            self._refuse(done, table, kind, topic, exc, now)
            return
        mine = Batch()
        saved = (self.duplicates.get(table), self._asked.get(table))
        if careful:
            self.store.savepoint()
        try:
            self._store_message(table, kind, d, now, mine, message.received, fresh=not message.retained)
            if careful:
                self.store.release()
        except OperationalError:
            raise  # the store itself failed (disk full, I/O, the server gone): not this table's doing
        except TableBusy:
            if careful:
                self.store.undo()
            self._restore(table, saved)
            raise
        except Exception as exc:
            if not careful:
                raise _FiledCarefully() from exc
            self.store.undo()
            self._restore(table, saved)
            self._refuse(done, table, kind, topic, exc, now)
            return
        done.merge(mine)

    def _refuse(self, done: Batch, table: str, kind: str, topic: str, exc: Exception, now: float) -> None:
        what = str(exc) if isinstance(exc, P.PayloadError) else "a message the floor cannot file"
        if not isinstance(exc, P.PayloadError):
            log.error("floor: %s: a message the floor cannot file", topic, exc_info=exc)
        self.refused[table] = self.refused.get(table, 0) + 1
        self._alert(done, table, "protocol", T.REFUSED.write(message=kind, what=what), now=now)

    def _restore(self, table: str, saved) -> None:
        for store, value in zip((self.duplicates, self._asked), saved):
            if value is None:
                store.pop(table, None)
            else:
                store[table] = value

    def _store_message(self, table: str, kind: str, d: dict, now: float, done: Batch,
                       received: float | None = None, *, fresh: bool = False) -> None:
        if kind == "journal":
            seq = self._journal(table, d, now, done, received)
            if seq is not None:
                done.last_seqs[table] = seq
        elif kind == "status":
            self._status(table, d, now, done)
            done.refreshed.add(table)
        else:
            self._retained(table, kind, d, now, done)
            if kind == "health" and fresh and received is not None:
                self._clock_offset(table, d, received)
            done.refreshed.add(table)
        done.changed.add(table)

    def _alert(self, done: Batch, table, kind, text, seq=None, *, now: float) -> None:
        """Raise (or fold) an alert; the view and the log hear of a folded one at most
        every :data:`ALERT_QUIET_S`, the store counts it every time (a ``protocol`` one is a
        refusal, counted on the table's row too: what the metrics read)."""
        if kind == "protocol":
            self.store.count_rejected(table, "protocol")
        alert = self.store.raise_alert(table, kind, text, seq, now)
        done.alerts = True
        key = (table, kind)
        if alert["count"] > 1 and now - self._shown.get(key, float("-inf")) < ALERT_QUIET_S:
            return
        self._shown[key] = now
        if alert["count"] > 1:
            log.warning("floor: alert %s %s (%d times): %s", table, kind, alert["count"], text)
        else:
            log.warning("floor: alert %s %s: %s", table, kind, text)
        done.events = [e for e in done.events
                       if not (e["type"] == "alert" and e["alert"]["id"] == alert["id"])]
        done.events.append({"type": "alert", "alert": alert})

    def _ask_again(self, table: str, seq: int, now: float, done: Batch) -> None:
        """Ask *table* to send again from *seq*, at most every :data:`RESEND_QUIET_S` for one seq."""
        asked = self._asked.get(table)
        if asked is None or asked[0] != seq or now - asked[1] > RESEND_QUIET_S:
            done.resends[table] = seq
            self._asked[table] = (seq, now)

    def _journal(self, table, d, now, done: Batch, received: float | None = None) -> int | None:
        """Store a batch of lines; returns the table's last stored seq. Lines after a gap
        are kept for the filing that fills it (:meth:`_keep_early`, :meth:`_file_early`)."""
        lines = d.get("lines")
        if not isinstance(lines, list):
            return None
        row = self.store.ensure_table(table)
        last_seq, last_hash = row["last_seq"], row["last_hash"]
        start_seq = last_seq
        problem = None
        # This message's new lines, written in one statement after the loop.
        new_lines: dict[int, tuple] = {}
        # This message's lines from a gap on: (seq, line, hash), consecutive.
        early: list[tuple[int, str, str]] = []
        # The hashes of stored lines this message sends again, fetched a range at a time.
        stored_hashes: dict[int, str] = {}
        fetched = range(0)
        for index, line in enumerate(lines):
            try:
                seq, prev, rec = P.journal_line(line)
            except P.PayloadError as exc:
                problem = f"line {index + 1} of a batch (after seq {last_seq}) is not a journal line: {exc}"
                break
            digest = line_hash(line)
            if early:
                if seq != early[-1][0] + 1:
                    break  # not the next one either: the table sends it again with the gap
                early.append((seq, line, digest))
                continue
            if seq <= last_seq:
                if seq in new_lines:
                    stored = new_lines[seq][3]
                else:
                    if seq not in fetched:
                        # At most the rest of this message, and only what is stored before it.
                        fetched = range(seq, min(start_seq, seq + len(lines) - index - 1) + 1)
                        stored_hashes = self.store.stored_hashes(table, fetched.start, fetched.stop - 1)
                    stored = stored_hashes.get(seq)
                self.duplicates[table] = self.duplicates.get(table, 0) + 1
                if stored is not None and stored != digest:
                    self._tampered(table, seq, line, digest, now, done)
                done.acks[table] = max(done.acks.get(table, 0), last_seq)
                continue
            if seq != last_seq + 1:
                if last_seq == 0 and seq == d.get("oldest"):
                    # Retention deleted the table's first lines before the floor had
                    # them: nothing to chain to, so its journal starts here.
                    self._alert(done, table, "chain", T.STARTS_AT.write(seq=seq), seq, now=now)
                    self.store.update_table(table, first_seq=seq)
                else:
                    early.append((seq, line, digest))
                    continue
            if not self._chains(table, seq, prev, line, digest, last_seq, last_hash, now, done):
                break
            new_lines[seq] = (table, seq, line, digest, True, now)
            self._decision_alert(table, rec, done, now)
            last_seq, last_hash = seq, digest
        waiting_since = row["early_at"]
        if early:
            self._keep_early(table, early, now, done, received, kept_before=waiting_since is not None)
            if waiting_since is None:
                self.store.update_table(table, early_at=now)
        gap_open = bool(early) or waiting_since is not None
        if gap_open and last_seq != start_seq:
            last_seq, last_hash, gap_open = self._file_early(table, last_seq, last_hash, new_lines, now, done)
        if early and gap_open and waiting_since is not None and now - waiting_since >= GAP_WAIT_S:
            self._ask_again(table, last_seq + 1, now, done)
        if new_lines:
            self.store.add_lines(list(new_lines.values()))
        if last_seq != start_seq:
            self.store.update_table(table, last_seq=last_seq, last_hash=last_hash, seen=now)
            done.acks[table] = last_seq
            if self._asked.get(table, (None,))[0] != last_seq + 1:
                self._asked.pop(table, None)
        elif last_seq > 0 and table not in done.resends and not early:
            done.acks[table] = max(done.acks.get(table, 0), last_seq)
        if problem is not None:
            self.refused[table] = self.refused.get(table, 0) + 1
            self._alert(done, table, "protocol", T.REFUSED.write(message="journal", what=problem), now=now)
        return last_seq

    def _chains(self, table, seq, prev, line, digest, last_seq, last_hash, now, done: Batch) -> bool:
        """Whether line *seq* chains to the table's line before it; one that does not is
        kept aside (never the record) with a ``chain`` alert, and asked for again."""
        if last_seq > 0:
            chain_ok = prev == last_hash
        else:  # the first line: seq 1 starts the chain; a later start was alerted above
            chain_ok = seq != 1 or prev == P.GENESIS
        if chain_ok:
            return True
        # The genuine line for this seq is stored when the table sends it again.
        self.store.count_rejected(table, "chain")
        if self.store.quarantine(table, seq, line, digest, "chain", now):
            self._alert(done, table, "chain", T.NO_CHAIN.write(seq=seq, last=last_seq), seq, now=now)
        self._ask_again(table, seq, now, done)
        return False

    def _tampered(self, table, seq, line, digest, now, done: Batch) -> None:
        self.store.count_rejected(table, "chain")
        if self.store.quarantine(table, seq, line, digest, "tamper", now):
            self._alert(done, table, "tamper", T.TAMPERED.write(seq=seq), seq, now=now)

    def _keep_early(self, table, early, now, done: Batch, received, *, kept_before: bool) -> None:
        """Keep *early* (lines after a gap) in the store for the filing that fills the gap;
        a seq kept before with other content is kept aside (``tamper``)."""
        before = self.store.keep_early(table, early, now if received is None else received,
                                       kept_before=kept_before)
        for seq, line, digest in early:
            if before.get(seq, digest) != digest:
                self._tampered(table, seq, line, digest, now, done)

    def _file_early(self, table, last_seq, last_hash, new_lines, now,
                    done: Batch) -> tuple[int, str, bool]:
        """File the lines kept ahead of the gap this filing closed, in order and chained;
        returns the table's new last seq and hash, and whether lines are still kept (a
        gap still separates them: they wait for its lines from now on)."""
        kept = self.store.take_early(table)
        done_upto = last_seq
        for seq, line, digest in kept:
            if seq <= last_seq:
                # Sent again in order since it was kept: the same line, or a forgery.
                if seq in new_lines and new_lines[seq][3] != digest:
                    self._tampered(table, seq, line, digest, now, done)
                continue
            if seq != last_seq + 1:
                break
            _seq, prev, rec = P.journal_line(line)  # it was a journal line when kept
            done_upto = seq
            if not self._chains(table, seq, prev, line, digest, last_seq, last_hash, now, done):
                break
            new_lines[seq] = (table, seq, line, digest, True, now)
            self._decision_alert(table, rec, done, now)
            last_seq, last_hash = seq, digest
        done_upto = max(done_upto, last_seq)
        left = [row for row in kept if row[0] > done_upto]
        if left:  # a gap still separates them: kept again, waiting from now on
            self.store.keep_early(table, left, now, kept_before=False)
        self.store.update_table(table, early_at=now if left else None)
        return last_seq, last_hash, bool(left)

    def open_gaps(self, now: float) -> dict[str, int]:
        """Resend requests for the tables whose lines have waited ahead of a gap for
        :data:`GAP_WAIT_S` without a message of theirs coming to ask (the collector calls
        this between batches)."""
        done = Batch()
        for table, last_seq in self.store.open_gaps(now - GAP_WAIT_S):
            self._ask_again(table, last_seq + 1, now, done)
        return done.resends

    def _decision_alert(self, table, rec, done: Batch, now: float) -> None:
        dec = rec.get("decision")
        if isinstance(dec, dict) and dec.get("verdict") == "floor" and dec.get("step") in (0, None):
            what = dec.get("irregularity")
            what = what if isinstance(what, str) and what else T.DEALER_CALLED
            self._alert(done, table, "floor", T.FLOOR_NEEDED.write(what=what), rec["seq"], now=now)

    def _status(self, table, d, now, done: Batch) -> None:
        row = self.store.ensure_table(table)
        # Each connection's birth and Last Will carry the same (boot, conn).
        life = (d.get("boot", 0), d.get("conn", 0))
        current = (row["boot"], row["conn"])
        if life < current:
            log.info("floor: %s: ignoring a status of an earlier life %s (now %s)",
                     table, life, current)
            return
        online = bool(d.get("online"))
        was_online = bool(row["online"])
        self.store.update_table(table, boot=life[0], conn=life[1], online=int(online),
                                status=json.dumps(d), seen=now)
        if was_online and not online and d.get("why") == "lost":
            self._alert(done, table, "offline", T.OFFLINE.write(), now=now)

    def _clock_offset(self, table, d, received: float) -> None:
        """Note how far the table's wall clock is from the floor's, from a health message
        that came live (a retained copy's ``wall`` is as old as the copy)."""
        wall = d.get("wall")
        if isinstance(wall, (int, float)) and not isinstance(wall, bool) and abs(wall) < 1e11:
            self.store.update_table(table, clock_offset=round(wall - received, 3), clock_offset_at=received)

    def _retained(self, table, kind, d, now, done: Batch) -> None:
        row = self.store.ensure_table(table)
        self.store.update_table(table, **{kind: json.dumps(d)}, seen=now)
        if kind == "health":
            old = json.loads(row["health"]) if row["health"] else {}
            if d.get("clock_ok") is False and old.get("clock_ok", True) is not False:
                # The table's own words for what is wrong, else the floor's (told in the reader's language).
                self._alert(done, table, "clock", d.get("clock_problem") or T.CLOCK.write(), now=now)
