"""ISO/IEC 14443-3 type A, the part of a reader that speaks to the tags.

What a PCD (proximity coupling device, the reader chip) says to PICCs (the tags)
does not depend on the chip: REQA/WUPA, the anticollision loop of each cascade
level, SELECT, HLTA, CRC_A and BCC. :class:`Iso14443Protocol` holds it, over one
primitive, :meth:`~Iso14443Protocol.transceive`, that a chip driver provides
(:class:`dealerbox.hw.rc522.FixedMFRC522` for the MFRC522).
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass

REQA, WUPA, HLTA, CASCADE_TAG = 0x26, 0x52, 0x50, 0x88
SEL = (0x93, 0x95, 0x97)
SAK_CASCADE = 0x04
#: The error flags a :class:`Frame` carries. They are the MFRC522's ErrorReg bits, so its
#: driver hands the register over as read; another chip's driver maps its own onto them.
ERR_PROTOCOL, ERR_PARITY, ERR_CRC, ERR_COLL, ERR_BUFFER_OVFL = 0x01, 0x02, 0x04, 0x08, 0x10


def crc_a(data) -> bytes:
    """ISO/IEC 14443-3 CRC_A, low byte first.

    Computed here rather than with the chip's CalcCRC: one CalcCRC round trip costs
    about eight SPI transfers per frame, this costs none.
    """
    crc = 0x6363
    for byte in data:
        byte ^= crc & 0xFF
        byte = (byte ^ (byte << 4)) & 0xFF
        crc = (crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)
    return bytes((crc & 0xFF, crc >> 8))


def _bcc(part) -> int:
    value = 0
    for b in part:
        value ^= b
    return value


def uid_blocks(uid: bytes) -> list[bytes]:
    """The UID blocks (4 bytes + BCC) a tag with *uid* answers at each cascade level."""
    uid = bytes(uid)
    parts = {4: [uid], 7: [bytes([CASCADE_TAG]) + uid[:3], uid[3:]],
             10: [bytes([CASCADE_TAG]) + uid[:3], bytes([CASCADE_TAG]) + uid[3:6], uid[6:]]}.get(len(uid))
    if parts is None:
        raise ValueError(f"a UID has 4, 7 or 10 bytes, not {len(uid)}")
    return [p + bytes([_bcc(p)]) for p in parts]


@dataclass(frozen=True, slots=True)
class Frame:
    """What one Transceive got back."""

    timed_out: bool
    data: bytes = b""
    bits: int = 0              # valid bits in the FIFO, RxAlign offset included
    errors: int = 0            # the ERR_* flags
    coll_pos: int | None = None  # 1-based FIFO bit position of the first collision


class Iso14443Protocol:
    """REQA/WUPA, anticollision, the multi-tag tree walk, SELECT, HLTA, tag checks and discovery.

    A subclass must provide :meth:`transceive` (send a frame, return a :class:`Frame`)
    and a ``counters`` :class:`~collections.Counter`, and call ``__init__`` of this
    class; it may override :meth:`_note`, which counts a protocol problem (here: the
    counter only). Tags whose UID blocks fail their check are kept in
    ``_bad_blocks`` and steered away from, so one broken tag cannot hide the others.
    """

    counters: Counter

    def __init__(self):
        self._bad_blocks: deque[bytes] = deque(maxlen=16)
        self._turn = 0             # which shared branch the next search of unknown tags takes

    def transceive(self, data, *, tx_last_bits: int = 0, rx_align: int = 0,
                   answer_bits: int | None = None) -> Frame:
        """Send *data* to the tags in the field and return what came back."""
        raise NotImplementedError

    def _note(self, counter: str, fmt: str, *args) -> None:
        self.counters[counter] += 1

    def request(self, *, wake: bool, expect_answer: bool = False) -> bytes | None:
        """REQA (IDLE tags) or WUPA (IDLE and HALT tags): the ATQA, or None if no tag answered.

        Several tags answering garble the ATQA; that still means "tags present".
        """
        frame = self.transceive([WUPA if wake else REQA], tx_last_bits=7,
                                answer_bits=16 if expect_answer else None)
        if frame.timed_out:
            return None
        if frame.bits != 16 and not frame.errors & ERR_COLL:
            self._note("bad_atqa", "ATQA of %d bits", frame.bits)
        return frame.data

    def resolve_level(self, level: int, *, avoid=(), budget: int = 48) -> bytes | None:
        """The UID block (4 bytes + BCC) of one READY tag at cascade *level*, or None.

        Anticollision frames with the bits known so far; at a collision the branch
        is chosen (bit 1, unless only the other branch avoids every block in
        *avoid*) and the frame repeated. Tags not matching stay READY and silent
        (ISO 14443-3 6.4.3). A block failing its BCC is counted and dropped.
        """
        sel = SEL[level - 1]
        known_bits, known = 0, bytearray(5)
        for _ in range(budget):
            full = known_bits // 8
            answer = self._anticollision_frame(sel, level, known, known_bits)
            if answer is None:
                return None
            frame, merged = answer
            if frame.errors & ERR_COLL:
                position = full * 8 + frame.coll_pos if frame.coll_pos else 0
                if not known_bits < position <= 40:
                    self._note("protocol_errors", "collision at bit %d with %d bits known", position, known_bits)
                    return None
                bit = position - 1
                for i in range(bit, 40):
                    merged[i // 8] &= ~(1 << (i % 8)) & 0xFF
                choice = self._branch(merged, bit, avoid)
                if choice:
                    merged[bit // 8] |= 1 << (bit % 8)
                known, known_bits = merged, position
                self.counters["collisions"] += 1
                continue
            if frame.errors & (ERR_PROTOCOL | ERR_PARITY | ERR_BUFFER_OVFL) or full * 8 + frame.bits != 40:
                self._note("protocol_errors", "anticollision answer of %d bits, errors 0x%02X",
                           full * 8 + frame.bits, frame.errors)
                return None
            block = bytes(merged)
            if _bcc(block[:4]) != block[4]:
                self._note("bcc_errors", "UID part %s fails its BCC; tag ignored", block.hex().upper())
                self._bad_blocks.append(block)
                return None
            return block
        self._note("protocol_errors", "anticollision at level %d did not converge", level)
        return None

    def _anticollision_frame(self, sel: int, level: int, known, known_bits: int):
        """Send one anticollision frame with the first *known_bits* of the UID block.

        Returns ``(frame, merged)``, *merged* being the known bits with the answer's
        after them, or None when no tag answered (counted as ``lost``)."""
        full, rem = divmod(known_bits, 8)
        frame_bytes = bytes([sel, ((2 + full) << 4) | rem]) + bytes(known[:full + (1 if rem else 0)])
        frame = self.transceive(frame_bytes, tx_last_bits=rem, rx_align=rem, answer_bits=40 - known_bits)
        if frame.timed_out:
            self._note("lost", "no answer to anticollision at level %d, %d bits known", level, known_bits,
                       warn=False)
            return None
        merged = bytearray(known)
        for i, byte in enumerate(frame.data[:5 - full]):
            keep = ((1 << rem) - 1) if i == 0 else 0
            merged[full + i] = (known[full + i] & keep) | (byte & ~keep & 0xFF)
        return frame, merged

    def walk_level(self, level: int, *, limit: int = 32, budget: int | None = None) -> list[bytes]:
        """Every UID block (4 bytes + BCC) answering anticollision at cascade *level*.

        A depth-first walk of the bit tree that SELECTs nothing: at a collision both
        branches are taken, bit 1 first, by repeating the anticollision frame with
        the known bits. Tags not matching stay READY and silent (ISO 14443-3 6.4.3),
        so one wake-up serves the whole walk. Blocks failing their BCC are counted
        and left out. Stops after *limit* blocks or *budget* frames.
        """
        sel = SEL[level - 1]
        budget = budget if budget is not None else 2 * limit + 4
        found: list[bytes] = []
        stack = [(0, bytes(5))]
        while stack and budget > 0 and len(found) < limit:
            budget -= 1
            known_bits, known = stack.pop()
            full = known_bits // 8
            answer = self._anticollision_frame(sel, level, known, known_bits)
            if answer is None:
                continue
            frame, merged = answer
            if frame.errors & ERR_COLL:
                position = full * 8 + frame.coll_pos if frame.coll_pos else 0
                if not known_bits < position <= 40:
                    self._note("protocol_errors", "collision at bit %d with %d bits known", position, known_bits)
                    continue
                bit = position - 1
                for i in range(bit, 40):
                    merged[i // 8] &= ~(1 << (i % 8)) & 0xFF
                zero = bytes(merged)
                merged[bit // 8] |= 1 << (bit % 8)
                stack.append((position, zero))
                stack.append((position, bytes(merged)))
                self.counters["collisions"] += 1
                continue
            if frame.errors & (ERR_PROTOCOL | ERR_PARITY | ERR_BUFFER_OVFL) or full * 8 + frame.bits != 40:
                self._note("protocol_errors", "anticollision answer of %d bits, errors 0x%02X",
                           full * 8 + frame.bits, frame.errors)
                continue
            block = bytes(merged)
            if _bcc(block[:4]) != block[4]:
                self._note("bcc_errors", "UID part %s fails its BCC; tag ignored", block.hex().upper())
                continue
            found.append(block)
        return found

    @staticmethod
    def _branch(prefix: bytearray, bit: int, avoid) -> int:
        """Which value of *bit* to follow: 1, unless only 0 leads away from every block in *avoid*."""
        def leads_to_avoided(value: int) -> bool:
            for block in avoid:
                if all((block[i // 8] >> (i % 8) & 1) == (prefix[i // 8] >> (i % 8) & 1) for i in range(bit)) \
                        and (block[bit // 8] >> (bit % 8) & 1) == value:
                    return True
            return False
        if avoid and leads_to_avoided(1) and not leads_to_avoided(0):
            return 0
        return 1

    def select(self, level: int, block: bytes, *, quiet: bool = False) -> int | None:
        """SELECT one UID block at *level*: the SAK, or None (no answer, error, bad CRC).

        *quiet*: silence is an expected outcome (a card checked for presence).
        """
        frame_bytes = bytes([SEL[level - 1], 0x70]) + bytes(block)
        frame = self.transceive(frame_bytes + crc_a(frame_bytes), answer_bits=24)
        if frame.timed_out:
            if not quiet:
                # A card sliding out of the field between its anticollision answer and
                # its SELECT: normal at a shoe, so counted, never a warning.
                self._note("lost", "tag %s did not answer SELECT", bytes(block).hex().upper(), warn=False)
            return None
        if frame.errors & ~ERR_CRC or frame.bits != 24:
            self._note("protocol_errors", "SAK of %d bits, errors 0x%02X", frame.bits, frame.errors)
            return None
        if crc_a(frame.data[:1]) != frame.data[1:3]:
            self._note("crc_errors", "SAK of %s fails its CRC_A; tag ignored", bytes(block).hex().upper())
            self._bad_blocks.append(bytes(block))
            return None
        return frame.data[0]

    def halt(self) -> None:
        """HLTA: the selected tag goes to HALT, tags still READY fall back to IDLE/HALT.

        Success is silence (ISO 14443-3); an answer is counted.
        """
        frame = self.transceive(bytes([HLTA, 0x00]) + crc_a([HLTA, 0x00]))
        if not frame.timed_out:
            self._note("halt_answered", "a tag answered HLTA")

    # -- presence ------------------------------------------------------------------------
    def _select_all(self, blocks: list[bytes], *, quiet: bool) -> bool:
        for level, block in enumerate(blocks, 1):
            sak = self.select(level, block, quiet=quiet)
            if sak is None:
                return False
            if bool(sak & SAK_CASCADE) != (level < len(blocks)):
                self._note("protocol_errors", "SAK 0x%02X for %s at level %d", sak, block.hex().upper(), level)
                return False
        return True

    def check_tag(self, uid: bytes, *, tries: int = 2) -> bool | None:
        """Is the tag with *uid* (HALT, IDLE, or READY*/ACTIVE* from the last frame) in the field?

        WUPA, then SELECT of its UID at each cascade level: only that tag answers the
        last SELECT, and every other tag woken falls back to HALT on a SELECT that is
        not its own. *tries* - 1 retries, each after an HLTA puts a half-selected tag
        back to HALT.
        Returns True, False, or None when no tag at all answered WUPA (the field holds
        no tag that is IDLE or HALTed).
        """
        blocks = uid_blocks(uid)
        anyone = False
        for attempt in range(tries):
            if attempt:
                self.counters["retries"] += 1
                if anyone:
                    self.halt()
            if self.request(wake=True, expect_answer=True) is None:
                continue
            anyone = True
            if self._select_all(blocks, quiet=True):
                return True
        return False if anyone else None

    def discover(self, *, wake: bool = False, avoid=()) -> bytes | None:
        """One search: the complete UID of one tag, SELECTed and then HALTed; or None.

        REQA (*wake* False) reaches only tags in IDLE, i.e. new in the field: one
        anticollision round resolves one of them. WUPA (*wake* True) also reaches
        HALTed tags, the known ones among them: each level is walked whole (nothing
        is SELECTed while walking) and a block no UID in *avoid* has is SELECTed;
        when every block is shared with known UIDs that go on to a further level,
        one of them (in turn, search after search) is SELECTed and the next level
        walked. A WUPA search that finds nothing new ends with HLTA, so no tag is
        left READY.
        """
        if self.request(wake=wake) is None:
            return None
        known = [uid_blocks(u) for u in avoid] if wake else []
        path: list[bytes] = []
        for level in (1, 2, 3):
            if wake:
                block = self._unknown_block(level, known)
            else:
                block = self.resolve_level(level, avoid=list(self._bad_blocks))
            sak = self.select(level, block) if block is not None else None
            if sak is None:
                if wake:
                    self.halt()
                return None
            path.append(block)
            known = [k for k in known if len(k) > level and k[level - 1] == block]
            if not sak & SAK_CASCADE:
                break
            if level == 3 or block[0] != CASCADE_TAG:
                self._note("protocol_errors", "cascade SAK for %s at level %d", block.hex().upper(), level)
                if wake:
                    self.halt()
                return None
        self.halt()
        return b"".join(b[1:4] for b in path[:-1]) + path[-1][:4]

    def _unknown_block(self, level: int, known: list[list[bytes]]) -> bytes | None:
        """Walk *level* whole; a block of a tag not in *known* (UID blocks along the path so far)."""
        blocks = [b for b in self.walk_level(level) if b not in self._bad_blocks]
        deeper = []
        for block in blocks:
            sharing = [k for k in known if k[level - 1] == block]
            if not sharing:
                return block
            if any(len(k) > level for k in sharing):
                deeper.append(block)     # an unknown tag may share this part of its UID
        if not deeper:
            return None
        self._turn += 1
        return deeper[self._turn % len(deeper)]
