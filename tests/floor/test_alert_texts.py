"""The alerts' stored texts (dealerbox/floor/alert_texts.py): written in English from their
facts, read back to the same facts, rows filed before these messages read the same way; and
the floor map's headlines telling those facts in the reader's language (issue 45)."""

from __future__ import annotations

from dealerbox.floor import alert_texts as T
from dealerbox.floor.protect.floor_pass import _chart_text, _procedure_text, _seat_text, _shuffle_text, alert_odds
from dealerbox.floor.protect.seats import SeatKey
from dealerbox.floor.protect.shuffle_check import ShuffleFinding
from dealerbox.floor.telling.floor_words import FloorWords
from dealerbox.floor.telling.language import Language
from dealerbox.floor.telling.protect_words import ProtectWords

NOW = 1_790_000_000.0


def alert(kind: str, text: str, table: str = "T01") -> dict:
    return {"id": 1, "table": table, "kind": kind, "text": text, "seq": None, "raised": NOW, "count": 1}


class Alarm:
    """A seat's alarm as the seat charts give one (the fields _seat_text reads)."""
    seat, strong_hand_ids, hands, expected, value, h, in_control_arl = (
        SeatKey(None, 3), (5, 9, 14), 40, 0.9, 5.12, 4.8, 123456.0)


class Found:
    """A dealer chart's alarm (the fields _chart_text reads)."""
    dealer, hand_id, value, h, k, p0, shift, in_control_arl = "E7", 88, 6.7, 5.8, 0.031, 0.023, 3.0, 48984.0


FINDING = ShuffleFinding("shuffle", "T01", "Red 7", "D1", (42,), 12, 3.1e-06, 1e-05, 0.0001, "machine", "ref")
BLOCK = ShuffleFinding("procedure", "T01", "Red 7", None, (40, 41, 42), 30, 0.00031, 0.0, 0.001, "machine", "")


def test_a_text_is_written_from_its_facts_and_read_back_to_them():
    text = T.NO_CHAIN.write(seq=12, last=10)
    assert text == "seq 12 does not chain to seq 10: kept aside, and the table asked to send it again"
    assert T.read_text("chain", text) == (T.NO_CHAIN, {"seq": "12", "last": "10"})
    # A row the collector filed before these messages (the same words) reads the same.
    old = "the table's journal starts at seq 301: earlier lines were deleted before the floor received them"
    assert T.read_text("chain", old) == (T.STARTS_AT, {"seq": "301"})
    assert T.read_text("protocol", "journal message refused: line 2 of a batch (after seq 9) is not a journal "
                       "line: bad") == (T.REFUSED, {"message": "journal",
                                                    "what": "line 2 of a batch (after seq 9) is not a journal line: bad"})
    # Another kind's message, or a text the table sent itself: none.
    assert T.read_text("tamper", text) == (None, None)
    assert T.read_text("clock", "NTP unreachable for 2 h") == (None, None)


def test_the_pass_texts_keep_their_form_and_their_odds():
    shuffle = _shuffle_text(FINDING)
    assert shuffle == ("shuffle: deck Red 7, hand at seq 42 (dealer D1): 12 pairs kept from the deck's last hands; "
                       "p = 3.1e-06 under the declared shuffle (machine), resolution 1e-05, threshold 0.0001")
    assert alert_odds(shuffle) == (3.1e-06, 1e-05)
    assert T.SHUFFLE.read(shuffle)["deck"] == "Red 7"
    assert T.PROCEDURE.read(_procedure_text(BLOCK))["dealer"] == "none"
    assert T.SEAT_LUCK.read(_seat_text(Alarm, 15))["seqs"] == "5, 9, 14"
    assert T.DEALER_CHART.read(_chart_text(Found))["seq"] == "88"


def test_the_floor_map_tells_the_pass_and_the_collector_in_czech():
    cs = FloorWords("cs")
    told = {kind: cs.alert(alert(kind, text))["headline"] for kind, text in (
        ("shuffle", _shuffle_text(FINDING)), ("procedure", _procedure_text(BLOCK)),
        ("seat_luck", _seat_text(Alarm, 15)), ("dealer_chart", _chart_text(Found)))}
    assert told["shuffle"] == ("Kontrola míchání u T01: balíček Red 7: 12 dvojic zachováno z "
                               "posledních her balíčku, méně než 1 z 100\u00a0000 při deklarovaném míchání")
    assert told["procedure"] == ("Kontrola postupu u T01: žádný krupiér přihlášen, 3 hry v řadě: míchá slaběji, "
                                 "než je deklarováno, zhruba 1 z 3\u00a0200 při deklarovaném míchání")
    assert told["seat_luck"] == ("Kontrola štěstí míst u T01: místo 3: 3 silné startovní karty za 40 her, "
                                 "náhoda dává asi 0,9")
    assert told["dealer_chart"] == "Kontrola krupiéra u T01: krupiér E7 mimo kontrolu"
    assert cs.alert(alert("tamper", T.TAMPERED.write(seq=7)))["headline"] == \
        "Deník pozměněn u T01: řádek 7 přišel znovu s jiným obsahem: odložen stranou"
    assert cs.alert(alert("protocol", T.DROPPED.write(dropped=40)))["headline"] == \
        "Zpráva odmítnuta u T01: posílá rychleji, než sál stihne zapsat: zahozeno 40 jeho zpráv"
    # A text of no known form is shown as filed.
    assert cs.alert(alert("shuffle", "shuffle: something older"))["headline"] == \
        "Kontrola míchání u T01: shuffle: something older"
    # In German, with a recovered seat.
    de = FloorWords("de")
    followed = _seat_text(type("A", (Alarm,), {"seat": SeatKey(17, 2)}), 15)
    assert de.alert(alert("seat_luck", followed))["headline"] == (
        "Platzglück-Prüfung bei T01: der in der Hand ab Journalzeile 17 als 2. ausgeteilte Platz (mit dem Button "
        "reihum verfolgt): 3 starke Starthände in 40 Händen, der Zufall ergibt etwa 0,9")


def test_english_keeps_its_words_and_forms():
    en = ProtectWords(Language("en"))
    assert en.odds(1 / 51873) == "about 1 in 52,000" and en.percent(0.048) == "4.8%" and en.few(1008) == "1008.0"
    assert en.game(7, 2) == "hold'em at 7 players" and en.game(1, 4) == "Omaha at 1 player"
    assert en.seat("the seat dealt 2nd at hand 17, followed round as the button moved") == \
        "the seat dealt 2nd in the hand at journal line 17 (followed round as the button moved)"
    assert en.shuffle("riffle riffle strip cut") == "riffle, riffle, strip, cut"
    assert en.shuffle("machine; gathering: hands loose") == "shuffling machine; gathering: the players' cards gathered loose"
    sk = ProtectWords(Language("sk"))
    assert sk.game(2, 2) == "hold'em pre 2 hráčov" and sk.few(1008) == "1\u00a0008,0" and sk.percent(0.048) == "4,8\u00a0%"
    assert sk.shuffle("machine") == "miešacia mašina"
