"""Filing what the tables send into the floor's store.

Each ``journal`` batch is checked line by line (the next ``seq``, the hash chain,
a line sent again with other content) and stored; a gap asks the table to send
again from the first missing line, at most every :data:`RESEND_QUIET_S`. A
``status`` of an earlier life of the table is ignored; ``state`` and ``health``
are kept as the table retained them. What needs a person raises an alert.
:class:`~dealerbox.floor.collector.Collector` owns the MQTT side.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

from . import protocol as P
from .store import Store, line_hash

log = logging.getLogger(__name__)

#: A resend request for the same gap is repeated no sooner than this.
RESEND_QUIET_S = 2.0


@dataclass
class Batch:
    """What storing one batch of messages leads to: acks and resend requests per table,
    view events, and which tables changed (``refreshed``: their status or retained rows)."""

    acks: dict[str, int] = field(default_factory=dict)
    resends: dict[str, int] = field(default_factory=dict)
    events: list[dict] = field(default_factory=list)
    changed: set[str] = field(default_factory=set)
    refreshed: set[str] = field(default_factory=set)
    last_seqs: dict[str, int] = field(default_factory=dict)


class Filing:
    """Files batches of table messages into *store*, one transaction a batch.

    It keeps ``duplicates`` (lines sent again, per table) and the resend requests
    it made; it raises the alerts (``chain``, ``tamper``, ``floor``, ``offline``,
    ``clock``) in the store and in the batch's view events.
    """

    def __init__(self, store: Store):
        self.store = store
        self.duplicates: dict[str, int] = {}
        self._asked: dict[str, tuple[int, float]] = {}

    def store_batch(self, batch, now: float) -> Batch:
        """Store every message of *batch* in one transaction; what it leads to."""
        done = Batch()
        with self.store.lock:
            self.store.begin()
            try:
                for topic, payload, _received in batch:
                    self._store_message(topic, payload, now, done)
                self.store.commit()
            except BaseException:
                self.store.rollback()
                raise
        return done

    def _store_message(self, topic: str, payload: bytes, now: float, done: Batch) -> None:
        parsed = P.parse_table_topic(topic)
        if parsed is None:
            return
        table, kind = parsed
        if not P.valid_table_id(table):
            return
        try:
            d = P.decode(payload)
        except P.PayloadError as exc:
            log.warning("floor: %s: %s", topic, exc)
            return
        if kind == "journal":
            seq = self._journal(table, d, now, done.acks, done.resends, done.events)
            if seq is not None:
                done.last_seqs[table] = seq
        elif kind == "status":
            self._status(table, d, now, done.events)
            done.refreshed.add(table)
        elif kind in ("state", "health"):
            self._retained(table, kind, d, now, done.events)
            done.refreshed.add(table)
        done.changed.add(table)

    def _alert(self, events, table, kind, text, seq=None) -> None:
        alert = self.store.raise_alert(table, kind, text, seq)
        log.warning("floor: alert %s %s: %s", table, kind, text)
        events.append({"type": "alert", "alert": alert})

    def _journal(self, table, d, now, acks, resends, events) -> int | None:
        """Store a batch of lines; returns the table's last stored seq."""
        lines = d.get("lines")
        if not isinstance(lines, list):
            return None
        row = self.store.ensure_table(table)
        last_seq, last_hash = row["last_seq"], row["last_hash"]
        start_seq = last_seq
        for line in lines:
            if not isinstance(line, str):
                break
            try:
                rec = json.loads(line)
                seq, prev = rec["seq"], rec["prev"]
            except (ValueError, KeyError, TypeError):
                self._alert(events, table, "chain", f"a line that is not a journal line after seq {last_seq}")
                break
            digest = line_hash(line)
            if seq <= last_seq:
                stored = self.store.stored_line(table, seq)
                self.duplicates[table] = self.duplicates.get(table, 0) + 1
                if stored is not None and stored != line:
                    self._alert(events, table, "tamper",
                                f"seq {seq} was sent again with other content", seq)
                acks[table] = max(acks.get(table, 0), last_seq)
                continue
            if seq != last_seq + 1:
                oldest = d.get("oldest")
                if last_seq == 0 and seq == oldest:
                    self._alert(events, table, "chain",
                                f"the table's journal starts at seq {seq}: earlier lines were "
                                "deleted before the floor received them", seq)
                    self.store.update_table(table, first_seq=seq)
                else:
                    asked = self._asked.get(table)
                    if asked is None or asked[0] != last_seq + 1 or now - asked[1] > RESEND_QUIET_S:
                        resends[table] = last_seq + 1
                        self._asked[table] = (last_seq + 1, now)
                    break
            if last_seq > 0:
                chain_ok = prev == last_hash
            else:  # the first line: seq 1 starts the chain; a later start was alerted above
                chain_ok = seq != 1 or prev == P.GENESIS
            if not chain_ok:
                self._alert(events, table, "chain",
                            f"seq {seq} does not chain to seq {last_seq}: the table's journal "
                            "was changed", seq)
            self.store.add_line(table, seq, line, digest, chain_ok, now)
            self._decision_alert(table, rec, events)
            last_seq, last_hash = seq, digest
        if last_seq != start_seq:
            self.store.update_table(table, last_seq=last_seq, last_hash=last_hash, seen=now)
            acks[table] = last_seq
            self._asked.pop(table, None)
        elif last_seq > 0 and table not in resends:
            acks[table] = max(acks.get(table, 0), last_seq)
        return last_seq

    def _decision_alert(self, table, rec, events) -> None:
        dec = rec.get("decision")
        if isinstance(dec, dict) and dec.get("verdict") == "floor" and dec.get("step") in (0, None):
            what = dec.get("irregularity") or "the dealer called the floor"
            self._alert(events, table, "floor", f"{what}: the floor is needed at the table",
                        rec.get("seq"))

    def _status(self, table, d, now, events) -> None:
        row = self.store.ensure_table(table)
        # Each connection's birth and Last Will carry the same (boot, conn).
        life = (_int(d.get("boot")), _int(d.get("conn")))
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
            self._alert(events, table, "offline", "the table lost its connection to the floor")

    def _retained(self, table, kind, d, now, events) -> None:
        row = self.store.ensure_table(table)
        self.store.update_table(table, **{kind: json.dumps(d)}, seen=now)
        if kind == "health":
            old = json.loads(row["health"]) if row["health"] else {}
            if d.get("clock_ok") is False and old.get("clock_ok", True) is not False:
                self._alert(events, table, "clock", d.get("clock_problem") or "the clock is wrong")


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
