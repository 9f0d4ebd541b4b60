"""Game protection's words in the four languages (dealerbox/floor/telling/protect_words.py), as a
surveillance officer reads them: a seat-luck alert's summary for a seat the table recorded and for
one followed round from the deal, its first hand by its number or, not filed yet, its journal
line; a capital at the start of the sentence only, the ordinal as the language writes it, the
counts in the language's plural forms. Worked by hand, the catalogs as shipped."""

from __future__ import annotations

import re

import pytest

from dealerbox.floor import alert_texts as T
from dealerbox.floor.telling.language import Language
from dealerbox.floor.telling.protect_words import ProtectWords

#: A seat followed round from the deal, as the pass names it (SeatKey): dealt 3rd in the hand
#: whose first journal line is 4711, the run's first hand; the figures numbered that hand 12.
FOLLOWED = "the seat dealt 3rd at hand 4711, followed round as the button moved"
NUMBERS = {("T1", 4711): 12}
RECORDED = {"seat": "seat 3", "hands": 12, "strong_hands": [5], "expected": 0.21}
ONE_HAND = {"seat": FOLLOWED, "hands": 1, "strong_hands": [4711, 4730], "expected": 0.04}
FIVE_HANDS = {"seat": FOLLOWED, "hands": 5, "strong_hands": [4711, 4730, 4790], "expected": 0.2}

#: Each language's summaries: the recorded seat (1 strong hand in 12), the followed seat by its
#: first hand's number (2 in 1), and by its journal line (3 in 5).
SUMMARIES = {
    "en": ("Seat 3 was dealt 1 strong starting hand in 12 hands since its chart last stood at 0, where chance "
           "gives about 0.21.",
           "The seat dealt 3rd in hand 12 (followed round as the button moved) was dealt 2 strong starting hands "
           "in 1 hand since its chart last stood at 0, where chance gives about 0.040.",
           "The seat dealt 3rd in the hand at journal line 4711 (followed round as the button moved) was dealt 3 "
           "strong starting hands in 5 hands since its chart last stood at 0, where chance gives about 0.20."),
    "cs": ("Místo 3 dostalo silné startovní karty 1× za 12 her od chvíle, kdy jeho diagram naposledy stál na 0; "
           "náhoda dává asi 0,21.",
           "Místo rozdávané jako 3. ve hře č. 12 (sledované dokola, jak se posouval button) dostalo silné "
           "startovní karty 2× za 1 hru od chvíle, kdy jeho diagram naposledy stál na 0; náhoda dává asi 0,040.",
           "Místo rozdávané jako 3. ve hře od řádku deníku 4711 (sledované dokola, jak se posouval button) "
           "dostalo silné startovní karty 3× za 5 her od chvíle, kdy jeho diagram naposledy stál na 0; náhoda "
           "dává asi 0,20."),
    "sk": ("Miesto 3 dostalo silné štartové karty 1× za 12 rozdaní odvtedy, čo jeho diagram naposledy stál na 0; "
           "náhoda dáva asi 0,21.",
           "Miesto rozdávané ako 3. v rozdaní č. 12 (sledované dookola, ako sa posúval button) dostalo silné "
           "štartové karty 2× za 1 rozdanie odvtedy, čo jeho diagram naposledy stál na 0; náhoda dáva asi 0,040.",
           "Miesto rozdávané ako 3. v rozdaní od riadku denníka 4711 (sledované dookola, ako sa posúval button) "
           "dostalo silné štartové karty 3× za 5 rozdaní odvtedy, čo jeho diagram naposledy stál na 0; náhoda "
           "dáva asi 0,20."),
    "de": ("Platz 3 bekam 1 starke Starthand in 12 Händen, seit seine Regelkarte zuletzt bei 0 stand; der Zufall "
           "ergibt etwa 0,21.",
           "Der in Hand 12 als 3. ausgeteilte Platz (mit dem Button reihum verfolgt) bekam 2 starke Starthände in "
           "1 Hand, seit seine Regelkarte zuletzt bei 0 stand; der Zufall ergibt etwa 0,040.",
           "Der in der Hand ab Journalzeile 4711 als 3. ausgeteilte Platz (mit dem Button reihum verfolgt) bekam "
           "3 starke Starthände in 5 Händen, seit seine Regelkarte zuletzt bei 0 stand; der Zufall ergibt etwa "
           "0,20."),
}
#: The words a German sentence writes with a capital wherever they stand (nouns, the polite "Sie").
GERMAN_CAPITALS = {"Platz", "Hand", "Händen", "Starthand", "Starthände", "Button", "Regelkarte", "Zufall",
                   "Journalzeile"}


@pytest.mark.parametrize("code", list(SUMMARIES))
def test_a_seat_luck_summary_reads_right_for_both_seat_forms(code):
    words = ProtectWords(Language(code))
    told = (words.why("seat_luck", "T1", RECORDED, NUMBERS)["summary"],
            words.why("seat_luck", "T1", ONE_HAND, NUMBERS)["summary"],
            words.why("seat_luck", "T1", FIVE_HANDS)["summary"])
    assert told == SUMMARIES[code]
    for summary in told:
        # A capital at the start of the sentence, and nowhere else but where the language puts one.
        assert summary[0].isupper()
        capitals = [w for w in re.findall(r"\w+", summary[1:]) if w[0].isupper()]
        assert all(w in GERMAN_CAPITALS for w in capitals) if code == "de" else not capitals, capitals
        assert "3rd" not in summary if code != "en" else "3." not in summary
    # The links still go by the journal line; their words by the hand's number where known.
    assert words.why("seat_luck", "T1", ONE_HAND, NUMBERS)["links"][0]["href"] == "/hands/T1/4711"


@pytest.mark.parametrize("code, seat", [("en", "the seat dealt 3rd in hand 12 (followed round as the button moved)"),
                                        ("cs", "místo rozdávané jako 3. ve hře č. 12 (sledované dokola, jak se "
                                               "posouval button)"),
                                        ("sk", "miesto rozdávané ako 3. v rozdaní č. 12 (sledované dookola, ako sa "
                                               "posúval button)"),
                                        ("de", "der in Hand 12 als 3. ausgeteilte Platz (mit dem Button reihum "
                                               "verfolgt)")])
def test_a_seat_inside_a_sentence_keeps_its_small_letter(code, seat):
    words = ProtectWords(Language(code))
    assert words.seat(FOLLOWED, "T1", NUMBERS) == seat
    assert words.seat(FOLLOWED, "T1", NUMBERS, start=True) == seat[0].upper() + seat[1:]
    assert words.seat("seat 3") == {"en": "seat 3", "cs": "místo 3", "sk": "miesto 3", "de": "Platz 3"}[code]
    # The floor map's headline has no number to look up: the journal line, still in small letters.
    text = T.SEAT_LUCK.write(seat=FOLLOWED, strong=9, hands=9, expected="0.2", value="5.10", h="4.80", feed="2",
                             arl="100", seqs="4711")
    assert words.headline("seat_luck", text).startswith(words.seat(FOLLOWED))
    assert "4711" in words.seat(FOLLOWED) and words.seat(FOLLOWED)[0].islower()


@pytest.mark.parametrize("code, place, link", [
    ("en", "table T1, hand 12", "a hand at table T1 (journal line 4730)"),
    ("cs", "stůl T1, hra č. 12", "hra u stolu T1 (řádek deníku 4730)"),
    ("sk", "stôl T1, rozdanie č. 12", "rozdanie pri stole T1 (riadok denníka 4730)"),
    ("de", "Tisch T1, Hand 12", "eine Hand an Tisch T1 (Journalzeile 4730)")])
def test_a_hand_is_named_by_its_number_else_plainly_by_its_journal_line(code, place, link):
    words = ProtectWords(Language(code))
    assert words.place("T1", 4711, NUMBERS) == place
    assert words.hand_link("T1", 4711, NUMBERS) == {"text": place, "href": "/hands/T1/4711"}
    assert words.hand_link("T1", 4730, NUMBERS) == {"text": link, "href": "/hands/T1/4730"}


@pytest.mark.parametrize("code, told", [
    ("en", "riffle, riffle, strip, riffle, cut; gathering: each player's cards gathered together, the board picked "
           "up either way, the gathered cards put on top of or under the undealt cards"),
    ("cs", "riffle, riffle, strip, riffle, cut; sbírání karet: karty každého hráče sebrány pohromadě, board sebrán "
           "v libovolném pořadí, sebrané karty položeny na zbytek balíčku nebo pod něj"),
    ("sk", "riffle, riffle, strip, riffle, cut; zbieranie kariet: karty každého hráča zobrané spolu, board zobraný v "
           "ľubovoľnom poradí, zobrané karty položené na zvyšok balíčka alebo podeň"),
    ("de", "Riffle, Riffle, Strip, Riffle, Cut; Einsammeln: die Karten jedes Spielers zusammen eingesammelt, das Board "
           "in beliebiger Reihenfolge aufgenommen, die eingesammelten Karten auf oder unter den Reststapel gelegt")])
def test_a_declared_model_is_told_in_words_never_as_configured(code, told):
    words = ProtectWords(Language(code))
    model = ("riffle riffle strip riffle cut; gathering: hands kept together, board either, gathered cards either "
             "of the stub")
    assert words.shuffle(model) == told
    assert "_" not in words.shuffle("riffle cut; gathering: hands loose, board in order, gathered cards top of the stub")
    # A model of a form it does not know is quoted as recorded, never passed off as words.
    assert words.shuffle("riffle riffle; memory 3") != "riffle riffle; memory 3"
    assert "riffle riffle; memory 3" in words.shuffle("riffle riffle; memory 3")
