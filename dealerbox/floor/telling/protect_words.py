"""Game protection's alerts in the reader's words: what each alert is, how unlikely what it saw
was, why it fired (its evidence), and the short line the floor map's headline gives it.

The protection pass files each alert with its facts (:mod:`~dealerbox.floor.protect.evidence`:
the kept pairs, the strong hands, the error hands) and an English text for the technician
(:mod:`dealerbox.floor.alert_texts`). The Surveillance page, its PDF and its JSON tell the
facts here, in the reader's :class:`~.language.Language`; the floor map, which has only the
alert's text, tells the facts read back from it (:meth:`ProtectWords.headline`). English keeps
the words and the number forms the page had before (``1,008.0``, ``4.8%``); the other
languages write numbers in their own forms (``1 008,0``, ``4,8 %``).
"""

from __future__ import annotations

import re

from dealerbox.floor import alert_texts as T
from dealerbox.floor.telling.games import GAMES_WORDS
from dealerbox.floor.telling.protect_terms import BASIS_WORDS, MOST_HANDS, few_digits, story
from dealerbox.floor.telling.language import Language
from dealerbox.floor.marks import N_

__all__ = ["ProtectWords", "ALERT_TITLES", "STATUS_WORDS"]

#: What each protection alert is, in a pit boss's words.
ALERT_TITLES = {
    "shuffle": N_("A deck dealt as if not shuffled"),
    "procedure": N_("A dealer shuffling less than the house declares"),
    "seat_luck": N_("A seat dealt improbably many strong starting hands"),
    "dealer_chart": N_("A dealer's error rate out of line with the room's"),
    "protect_reference": N_("A game whose hands are not checked for a shuffle"),
}
#: A game's reference status in words.
STATUS_WORDS = {"current": N_("fitted from the declared model"), "stale": N_("fitted from another model: not used"),
                "missing": N_("none yet")}
#: Where a kept pair lay after the earlier hand, as the evidence says it (``seat 3``).
_WHERE = {"the board": N_("the board"), "the burns": N_("the burns")}
#: A declared shuffle's steps (``[protect] shuffle``, :data:`~dealerbox.floor.protect.shuffles.STEPS`)
#: as the card room names them: riffle, strip and cut keep their English names, as the rooms say them.
_STEP_WORDS = {"machine": N_("shuffling machine"), "riffle": N_("riffle"), "strip": N_("strip"), "cut": N_("cut")}
#: Why a game's hands go unchecked, as a ``protect_reference`` alert's text says it.
_REFERENCE_WHY = {w: w for w in (N_("no reference for the declared model"),
                                 N_("the reference was fitted from another model"))}
#: How the gathered cards went back, in a declared model's words (:class:`~dealerbox.floor.protect.shuffles.Gathering`).
_GATHERING_WORDS = {
    "hands kept together": N_("each player's cards gathered together"),
    "hands loose": N_("the players' cards gathered loose"),
    "board in order": N_("the board picked up in the order it was laid"),
    "board reversed": N_("the board picked up in reverse"),
    "board either": N_("the board picked up either way"),
    "gathered cards top of the stub": N_("the gathered cards put on top of the undealt cards"),
    "gathered cards bottom of the stub": N_("the gathered cards put under the undealt cards"),
    "gathered cards either of the stub": N_("the gathered cards put on top of or under the undealt cards"),
}
_SEAT = re.compile(r"^(?:seat )?(\d+)$")
#: A seat followed from the deal (:class:`~dealerbox.floor.protect.seats.SeatKey`): its deal
#: position in the run's first hand, and that hand's journal line.
_FOLLOWED = re.compile(r"^the seat dealt (\d+)\w* at hand (\d+), followed round as the button moved$")
#: What a ``protect_reference`` alert's ``next`` said was due (the pass's plain words, and the
#: forms filed before them, which named a setting and a command): the key of its words below.
_NEXT_FORMS = (
    ("nobody", re.compile(r"^(?:this floor does not fit references by itself|nothing fits it in the background)")),
    ("failed", re.compile(r"^fitting it in the background failed \((?P<why>.*)\)(?:: [^()]*)?$", re.S)),
    ("waited", re.compile(r"^still not stored (?P<waited>[0-9.]+) minutes after the first hand left unchecked "
                          r"\((?:the floor waits|\[protect\] reference_wait_minutes =) (?P<bound>[0-9.e+-]+)"
                          r"(?: minutes)?\)")),
)


def _two_figures(x: float) -> int:
    """*x* rounded to two significant figures (odds read better as 52,000 than 51,873)."""
    digits = len(str(int(x))) - 2
    return int(round(x, -digits)) if digits > 0 else round(x)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def upper_first(text: str) -> str:
    """*text* with its first letter a capital."""
    return text[:1].upper() + text[1:]


def _float(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


class ProtectWords:
    """Protection's words in *language*."""

    def __init__(self, language: Language):
        self.language = language
        self.english = language.code == "en"
        self._ = language.gettext
        self.ngettext = language.ngettext

    # -- numbers, as the page had them in English, in the language's forms otherwise

    def decimal(self, x: float | None, digits: int = 1) -> str:
        """``12.5`` (en, no grouping) or ``12,5`` (cs); empty for none."""
        if x is None:
            return ""
        return f"{x:.{digits}f}" if self.english else self.language.forms.decimal(x, digits)

    def integer(self, n: float | None) -> str:
        """``100,800`` (en) or ``100 800`` (cs); empty for none."""
        return "" if n is None else self.language.forms.integer(round(n))

    def percent(self, share: float | None) -> str:
        """``4.8%`` (en) or ``4,8 %`` (cs); empty for none."""
        if share is None:
            return ""
        return f"{100 * share:.1f}%" if self.english else self.language.forms.percent(share, 1)

    def general(self, x: float) -> str:
        """A configured figure as written (``%g``): ``0.0001``, ``1``; ``0,0001`` in cs."""
        text = f"{x:g}"
        if self.english or "e" in text:
            return text
        digits = len(text.partition(".")[2])
        return self.language.forms.decimal(x, digits)

    def few(self, x: float) -> str:
        """An expected count, small ones in two figures (:func:`~dealerbox.floor.protect.budget.few`)."""
        return "0" if x <= 0 else self.decimal(x, few_digits(x))

    def odds(self, p: float | None, resolution: float | None = None, *, short: bool = False) -> str:
        """A probability as a pit boss reads it: ``about 1 in 52,000``, ``4.8%``; at the
        reference's resolution, ``fewer than 1 in 100,001 (the most the reference can tell)``
        (a Monte Carlo p-value cannot go lower; *short*: without the bracket)."""
        _ = self._
        if p is None:
            return ""
        if resolution is not None and p <= resolution * (1 + 1e-9):
            n = self.integer(round(1 / resolution))
            return (_("fewer than 1 in %(n)s") if short else
                    _("fewer than 1 in %(n)s (the most the reference can tell)")) % {"n": n}
        if p <= 0:
            return _("never, under the declared model")
        if p < 1e-9:
            return _("less than 1 in a billion")
        if p < 0.01:
            return _("about 1 in %(n)s") % {"n": self.integer(_two_figures(1 / p))}
        return self.percent(p)

    # -- the things alerts name

    def title(self, kind: str) -> str:
        """What an alert of *kind* is: ``A deck dealt as if not shuffled``."""
        return self._(ALERT_TITLES[kind]) if kind in ALERT_TITLES else kind

    def status(self, state: str) -> str:
        """A game's reference status: ``none yet``."""
        return self._(STATUS_WORDS[state]) if state in STATUS_WORDS else state

    def game(self, players: int, hole_cards: int) -> str:
        """``hold'em at 7 players`` (:func:`~dealerbox.floor.protect.config.game_words`)."""
        name = (self._(GAMES_WORDS[hole_cards]) if hole_cards in GAMES_WORDS
                else self.ngettext("%(n)s hole card", "%(n)s hole cards", hole_cards) % {"n": hole_cards})
        return self.ngettext("%(game)s at %(players)s player", "%(game)s at %(players)s players", players) % {
            "game": name, "players": players}

    def shuffle(self, declared: str | None) -> str:
        """A declared shuffle (``riffle riffle strip riffle cut``, ``machine``) or a reference's
        model (its steps, ``; gathering: ...``, :attr:`~dealerbox.floor.protect.shuffle_check.ShuffleCheck.model`;
        ``house hands under ...``) in this language; a model of a form it does not know, quoted
        as it was recorded; empty for none."""
        _ = self._
        model = (declared or "").strip()
        if not model:
            return ""
        if model.startswith("house hands under "):
            inner = self.shuffle(model[len("house hands under "):])
            return _("the house's own hands, shuffled as declared then: %(model)s") % {"model": inner}
        steps, _sep, gathering = model.partition("; gathering: ")
        named = steps.split()
        parts = [part.strip() for part in gathering.split(",")] if gathering else []
        if not named or any(step not in _STEP_WORDS for step in named) or any(
                part not in _GATHERING_WORDS for part in parts):
            return _("a model recorded as “%(model)s”") % {"model": model}
        told = ", ".join(self._(_STEP_WORDS[step]) for step in named)
        if not parts:
            return told
        return _("%(steps)s; gathering: %(gathering)s") % {
            "steps": told, "gathering": ", ".join(self._(_GATHERING_WORDS[part]) for part in parts)}

    def ordinal(self, n: int) -> str:
        """A place in order as the language writes it in figures: ``3rd`` (en), ``3.`` (cs, sk, de)."""
        return _ordinal(n) if self.english else f"{n}."

    def seat(self, seat: str, table: str | None = None, numbers: dict | None = None, *, start: bool = False) -> str:
        """A seat as the evidence names it (``seat 3``, or a seat followed from the deal: the
        hand its run began with told by its number at *table* where *numbers* knows it); *start*:
        as a sentence begins with it (``Seat 3``)."""
        _ = self._
        m = _SEAT.match(seat)
        if m:
            return (_("Seat %(seat)s") if start else _("seat %(seat)s")) % {"seat": m.group(1)}
        m = _FOLLOWED.match(seat)
        if m:
            run = int(m.group(2))
            number = (numbers or {}).get((table, run))
            facts = {"position": self.ordinal(int(m.group(1))), "number": number, "seq": run}
            if number is not None:
                return (_("The seat dealt %(position)s in hand %(number)s (followed round as the button moved)")
                        if start else
                        _("the seat dealt %(position)s in hand %(number)s (followed round as the button moved)")
                        ) % facts
            return (_("The seat dealt %(position)s in the hand at journal line %(seq)s (followed round as the "
                      "button moved)") if start else
                    _("the seat dealt %(position)s in the hand at journal line %(seq)s (followed round as the "
                      "button moved)")) % facts
        return upper_first(seat) if start else seat

    def where(self, was: str | None) -> str:
        """Where a kept pair lay after the earlier hand: ``seat 3``, ``the board``, ``apart``."""
        if not was:
            return self._("apart")
        if was in _WHERE:
            return self._(_WHERE[was])
        return self.seat(was)

    def places(self, places) -> str:
        if not places or None in places:
            return self._("not known")
        return self._("%(first)s and %(second)s") % {"first": places[0], "second": places[1]}

    # -- the hands an alert names: by their number at the table, as a supervisor knows them

    def place(self, table: str, seq, numbers: dict | None = None) -> str:
        """Where a hand was: ``table T01, hand 312`` (its number among the table's hands, as its
        story names it), or ``table T01, the hand at journal line 4711`` where *numbers*
        (``(table, seq)`` -> number: :func:`~dealerbox.floor.telling.figures.hand_numbers`)
        does not know it (the figures have not filed it yet)."""
        number = (numbers or {}).get((table, seq))
        if number is not None:
            return self._("table %(table)s, hand %(number)s") % {"table": table, "number": number}
        return self._("table %(table)s, the hand at journal line %(seq)s") % {"table": table, "seq": seq}

    def hand_link(self, table: str, seq, numbers: dict | None = None) -> dict:
        """A link to a hand's story (``/hands/{table}/{seq}``), worded ``table T01, hand 312``, or
        ``a hand at table T01 (journal line 4711)`` where its number is not known."""
        number = (numbers or {}).get((table, seq))
        text = (self._("table %(table)s, hand %(number)s") % {"table": table, "number": number}
                if number is not None else
                self._("a hand at table %(table)s (journal line %(seq)s)") % {"table": table, "seq": seq})
        return {"text": text, "href": story(table, seq)}

    def _hands(self, table: str, rows, numbers: dict | None) -> list[dict]:
        """Links to hands given as seqs (of *table*) or (table, seq) pairs, the last MOST_HANDS."""
        return [self.hand_link(t, seq, numbers) for t, seq in _pairs(table, rows)]

    @staticmethod
    def named_hands(kind: str, table: str, evidence: dict | None) -> set:
        """The hands :meth:`why` names for *evidence*, as ``(table, seq)``: what a page looks up
        the numbers of, all of its alerts' at once."""
        if not isinstance(evidence, dict):
            return set()
        e = evidence
        if kind == "shuffle":
            return {(table, seq) for seq in (e.get("hand"), e.get("earlier")) if seq is not None}
        if kind == "procedure":
            return set(_pairs(table, e.get("hands") or []))
        if kind == "seat_luck":
            m = _FOLLOWED.match(str(e.get("seat")))
            return set(_pairs(table, e.get("strong_hands") or [])) | ({(table, int(m.group(2)))} if m else set())
        if kind == "dealer_chart":
            return set(_pairs(table, e.get("error_hands") or []))
        if kind == "protect_reference":
            return {(table, e["hand"])} if e.get("hand") is not None else set()
        return set()

    # -- why an alert fired

    def why(self, kind: str, table: str, evidence: dict | None, numbers: dict | None = None) -> dict:
        """*evidence* in words, in this language: ``summary``, ``links`` (``text``, ``href``) and
        for a shuffle alert ``pairs``; every hand by its number at its table where *numbers*
        (``(table, seq)`` -> number, for :meth:`named_hands`) knows it."""
        _, ngettext = self._, self.ngettext
        out = {"summary": "", "links": [], "pairs": []}
        if not isinstance(evidence, dict):
            return out
        e = evidence
        if kind == "shuffle":
            pairs = e.get("pairs") or []
            earlier = e.get("earlier")
            if earlier is not None:
                number = (numbers or {}).get((table, earlier))
                facts = {"n": len(pairs), "earlier": _("hand %(number)s") % {"number": number} if number is not None
                         else _("journal line %(seq)s") % {"seq": earlier}}
                out["summary"] = ngettext("%(n)s pair of cards lay side by side in this hand's draw as the deck's "
                                          "earlier hand (%(earlier)s) left it.",
                                          "%(n)s pairs of cards lay side by side in this hand's draw as the deck's "
                                          "earlier hand (%(earlier)s) left them.", len(pairs)) % facts
            else:
                out["summary"] = ngettext("%(n)s pair of cards lay side by side in this hand's draw as the deck's "
                                          "earlier hand left it.",
                                          "%(n)s pairs of cards lay side by side in this hand's draw as the deck's "
                                          "earlier hand left them.", len(pairs)) % {"n": len(pairs)}
            out["pairs"] = [{"cards": " ".join(p.get("cards") or []), "here": self.places(p.get("here")),
                             "there": self.places(p.get("there")), "was": self.where(p.get("was"))} for p in pairs]
            out["links"] = [{"text": _("this hand's story (%(hand)s)") % {
                "hand": self.place(table, e.get("hand"), numbers)}, "href": story(table, e.get("hand"))}]
            if earlier is not None:
                out["links"].append({"text": _("the earlier hand's story (%(hand)s)") % {
                    "hand": self.place(table, earlier, numbers)}, "href": story(table, earlier)})
        elif kind == "procedure":
            hands = e.get("hands") or []
            facts = {"dealer": e.get("dealer"), "n": len(hands), "pairs": e.get("statistic")}
            out["summary"] = (ngettext("Dealer %(dealer)s's block of %(n)s hands kept %(pairs)s pair in all; each "
                                       "hand below opens its story.",
                                       "Dealer %(dealer)s's block of %(n)s hands kept %(pairs)s pairs in all; each "
                                       "hand below opens its story.", _count(e.get("statistic")))
                              if e.get("dealer") else
                              ngettext("A block of %(n)s hands dealt with no dealer signed in kept %(pairs)s pair in "
                                       "all; each hand below opens its story.",
                                       "A block of %(n)s hands dealt with no dealer signed in kept %(pairs)s pairs "
                                       "in all; each hand below opens its story.", _count(e.get("statistic")))) % facts
            out["links"] = self._hands(table, hands, numbers)
        elif kind == "seat_luck":
            strong = e.get("strong_hands") or []
            hands = _count(e.get("hands"))
            facts = {"seat": self.seat(str(e.get("seat")), table, numbers, start=True), "n": len(strong),
                     "in_hands": ngettext("in %(hands)s hand", "in %(hands)s hands", hands) % {"hands": hands},
                     # A small expectation in two figures: "about 0.040", never "about 0.0".
                     "expected": self.few(float(e.get("expected") or 0)), "window": e.get("window")}
            out["summary"] = (ngettext("%(seat)s was dealt %(n)s strong starting hand %(in_hands)s (%(window)s), "
                                       "where chance gives about %(expected)s.",
                                       "%(seat)s was dealt %(n)s strong starting hands %(in_hands)s (%(window)s), "
                                       "where chance gives about %(expected)s.", len(strong))
                              if e.get("window") else
                              ngettext("%(seat)s was dealt %(n)s strong starting hand %(in_hands)s since its chart "
                                       "last stood at 0, where chance gives about %(expected)s.",
                                       "%(seat)s was dealt %(n)s strong starting hands %(in_hands)s since its chart "
                                       "last stood at 0, where chance gives about %(expected)s.", len(strong))) % facts
            out["links"] = self._hands(table, strong, numbers)
        elif kind == "dealer_chart":
            errors = e.get("error_hands") or []
            out["summary"] = ngettext("Dealer %(dealer)s's chart reached %(value)s (limit %(h)s) after %(n)s hand with an "
                                "error since it last stood at 0.",
                                "Dealer %(dealer)s's chart reached %(value)s (limit %(h)s) after %(n)s hands with "
                                "an error since it last stood at 0.", len(errors)) % {
                "dealer": e.get("dealer"), "value": self.decimal(float(e.get("value") or 0)),
                "h": self.decimal(float(e.get("h") or 0)), "n": len(errors)}
            out["links"] = self._hands(table, errors, numbers)
        elif kind == "protect_reference":
            out["summary"] = self._reference_summary(e)
            if e.get("hand") is not None:
                out["links"] = [{"text": _("the first hand not checked (%(hand)s)") % {
                    "hand": self.place(table, e["hand"], numbers)}, "href": story(table, e["hand"])}]
        return out

    def _reference_summary(self, e: dict) -> str:
        _ = self._
        game = e.get("game") or [None, None]
        words = self.game(*game) if None not in game and len(game) == 2 else _("a game")
        # The found model in words; a fingerprint alone (an older alert's) says nothing to a reader.
        found = self.shuffle(e.get("found_model")) or _("a model nobody recorded")
        why = (_("no reference has been fitted for it under the declared model") if e.get("reason") == "missing"
               else _("its reference was fitted from another model (%(model)s)") % {"model": found})
        declared = self.shuffle(e.get("declared_model")) or _("not recorded")
        return " ".join([
            _("Hands of %(game)s are not checked for a shuffle: %(why)s.") % {"game": words, "why": why},
            _("The declared model: %(model)s.") % {"model": declared},
            self.next_step(e) if e.get("next") or e.get("due") else
            _("It is being fitted in the background; hands are checked once it is stored.") if e.get("fitting")
            else _("Ask the floor's IT to fit it.")])

    def next_step(self, evidence) -> str:
        """Why a ``protect_reference`` alert was due and what to do, as a sentence in this
        language: from *evidence*'s ``due`` (:meth:`Protection._reference_alert`), else read from
        its ``next`` (also a bare ``next`` string), in the pass's plain words or the forms filed
        before them, which named a setting and a command: a surveillance officer acts through the
        floor's IT, whose steps are in docs/floor/surveillance.md. A form it does not know, as it
        was said."""
        _ = self._
        e = evidence if isinstance(evidence, dict) else {"next": evidence}
        due, facts = e.get("due"), {}
        said = str(e.get("next") or "")
        if due is None:
            for key, pattern in _NEXT_FORMS:
                m = pattern.match(said)
                if m:
                    due, facts = key, m.groupdict()
                    break
        if due == "nobody":
            return _("This floor does not fit references by itself: ask the floor's IT to fit it.")
        if due == "failed":
            return _("Fitting it in the background failed: ask the floor's IT to fit it (the error message for IT: "
                     "%(why)s).") % {"why": e.get("failed") or facts.get("why") or _("not recorded")}
        if due == "waited":
            waited = _float(e.get("waited_minutes", facts.get("waited")))
            bound = _float(e.get("wait_minutes", facts.get("bound")))
            if waited is not None and bound is not None:
                return _("Still not stored %(waited)s minutes after the first hand was left unchecked, where the "
                         "floor waits %(bound)s: ask the floor's IT why.") % {
                    "waited": self.decimal(waited), "bound": self.general(bound)}
        return upper_first(said) + "." if said else ""

    # -- the floor map's line

    def headline(self, kind: str, text: str | None) -> str | None:
        """The short line an alert's headline gives a protection alert, told from the facts of
        its stored *text* (:mod:`dealerbox.floor.alert_texts`); None for a text of another form."""
        _, ngettext = self._, self.ngettext
        message, f = T.read_text(kind, text)
        if message is None:
            return None
        if message is T.SHUFFLE:
            pairs = _count(f["pairs"])
            # No journal line: the alert links its hand's story, which names the hand.
            return ngettext("deck %(deck)s: %(pairs)s pair kept from the deck's last hands, "
                            "%(odds)s under the declared shuffle",
                            "deck %(deck)s: %(pairs)s pairs kept from the deck's last hands, "
                            "%(odds)s under the declared shuffle", pairs) % {
                "deck": f["deck"], "pairs": f["pairs"],
                "odds": self.odds(_float(f["p"]), _float(f["resolution"]), short=True)}
        if message is T.PROCEDURE:
            who = _("no dealer signed in") if f["dealer"] == "none" else _("dealer %(dealer)s") % {"dealer": f["dealer"]}
            return ngettext("%(who)s, %(hands)s hand in a row: shuffling weaker than declared, "
                            "%(odds)s under the declared shuffle",
                            "%(who)s, %(hands)s hands in a row: shuffling weaker than declared, "
                            "%(odds)s under the declared shuffle", _count(f["hands"])) % {
                "who": who, "hands": f["hands"], "odds": self.odds(_float(f["p"]))}
        if message is T.SEAT_LUCK:
            expected = _float(f["expected"])
            return ngettext("%(seat)s: %(strong)s strong starting hand in %(hands)s hands, where chance gives about "
                            "%(expected)s",
                            "%(seat)s: %(strong)s strong starting hands in %(hands)s hands, where chance gives about "
                            "%(expected)s", _count(f["strong"])) % {
                "seat": self.seat(f["seat"]), "strong": f["strong"], "hands": f["hands"],
                "expected": self.decimal(expected) if expected is not None else f["expected"]}
        if message is T.DEALER_CHART:
            return _("dealer %(dealer)s out of control") % {"dealer": f["dealer"]}
        if message is T.REFERENCE:
            why = _REFERENCE_WHY.get(f["why"])
            return _("hands of %(game)s are not checked for a shuffle: %(why)s") % {
                "game": self._game_of(f["game"]), "why": _(why) if why else f["why"]}
        return None

    def _game_of(self, words: str) -> str:
        m = re.match(r"^(?P<game>.+) at (?P<players>\d+) players$", words)
        if m:
            hole = {name: cards for cards, name in GAMES_WORDS.items()}.get(m.group("game"))
            if hole is not None:
                return self.game(int(m.group("players")), hole)
        return words

    # -- the alarm budget

    def basis(self, row: dict) -> str:
        """What a budget row's figure is worked out from (its ``facts``), in this language."""
        facts = row.get("facts")
        if not isinstance(facts, dict) or row.get("check") not in BASIS_WORDS:
            return row.get("basis", "")
        return self._(BASIS_WORDS[row["check"]]) % {
            name: self.integer(value) if name == "arl" else self.general(value) for name, value in facts.items()}


def _pairs(table: str, rows) -> list[tuple]:
    """Hands given as seqs (of *table*) or (table, seq) pairs, as ``(table, seq)``: the last MOST_HANDS."""
    return [(row[0], row[1]) if isinstance(row, (list, tuple)) else (table, row) for row in list(rows)[-MOST_HANDS:]]


def _count(value) -> int:
    """A count as a plural's *n* (a fact read back from a text is a string)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


